"""``glob``/``grep`` through the real ``dsh-fs mcp`` server (tracker issue 10, item 7): the
five tools are listed (``--tools`` serves a subset, and the prompt then names only those),
results equal the in-process registry's, paths outside ``--root`` are refused, and a capped
result is paged with ``read`` although the spill file lives outside the served root.

Not covered here: what the tools print in detail (tests/integration/tool_fs_search/test_search_tools.py).
"""

from __future__ import annotations

import os
from typing import Any

import pytest

import dsh_fs
from mcp_support import RawStdio, row
from dsh_fs.tool_fs.list_tool import LIST_PROMPT
from spectext import FULL_TOOL_GUIDANCE

pytestmark = pytest.mark.timeout(120)


def _tree(root: str) -> None:
    for i in range(6):
        with open(os.path.join(root, f"f{i}.py"), "w", encoding="utf-8") as handle:
            handle.write(f"needle {i}\n")
        os.utime(os.path.join(root, f"f{i}.py"), (1_700_000_000 + i, 1_700_000_000 + i))
    os.symlink("/etc", os.path.join(root, "etc-link"))


def _call(server: RawStdio, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return row(server.request("tools/call", {"name": name, "arguments": arguments})["result"])


def test_search_over_mcp(tmp_path: Any) -> None:
    root = os.path.realpath(str(tmp_path))
    _tree(root)
    expected = dsh_fs.create_context(cwd=root)
    with RawStdio(root) as server:
        initialized = server.initialize()["result"]
        listed = [t["name"] for t in server.request("tools/list")["result"]["tools"]]
        glob = _call(server, "glob", {"pattern": "*.py"})
        grep = _call(server, "grep", {"pattern": "needle [0-2]"})
        outside = _call(server, "grep", {"pattern": "root", "path": "etc-link"})
        escape = _call(server, "glob", {"pattern": "*", "path": ".."})
    assert listed == ["edit", "glob", "grep", "list", "read", "write"]
    assert initialized["instructions"] == expected.system_prompt.render(only="tool:") == (
        LIST_PROMPT + "\n\n" + FULL_TOOL_GUIDANCE)
    assert glob["text"] == "\n".join(f"f{i}.py" for i in reversed(range(6)))
    assert grep["text"] == "Found 3 matches\n\nf0.py\nLine 1: needle 0\n\nf1.py\nLine 1: needle 1\n\nf2.py\nLine 1: needle 2"
    for refused in (outside, escape):
        assert refused["is_error"] and refused["code"] == "FS_PERMISSION_DENIED", refused


def test_tools_option_serves_a_subset(tmp_path: Any) -> None:
    root = os.path.realpath(str(tmp_path))
    with RawStdio(root, "--tools", "read, grep") as server:
        initialized = server.initialize()["result"]
        listed = [t["name"] for t in server.request("tools/list")["result"]["tools"]]
        refused = _call(server, "write", {"file_path": "x.txt", "content": "x"})
    assert listed == ["grep", "read"]
    prompt = initialized["instructions"]
    assert "Use the read tool" in prompt and "Use the grep tool" in prompt
    assert "write tool" not in prompt and "glob tool" not in prompt and "edit tool" not in prompt
    assert refused["code"] == "UNKNOWN_TOOL" and not os.path.exists(os.path.join(root, "x.txt"))


def test_a_capped_result_is_paged_inside_the_served_root(tmp_path: Any) -> None:
    root = os.path.realpath(str(tmp_path / "served"))
    os.mkdir(root)
    for i in range(300):
        with open(os.path.join(root, f"f{i:03}.txt"), "w", encoding="utf-8") as handle:
            handle.write("needle\n")
    with RawStdio(root) as server:
        server.initialize()
        capped = _call(server, "grep", {"pattern": "needle"})
        locator = capped["text"].split("stored at: ")[1].split(". Use read")[0]
        paged = _call(server, "read", {"file_path": locator, "offset": 900, "limit": 2})
        within = _call(server, "grep", {"pattern": "f299", "path": locator})
    assert capped["text"].startswith("Found 250 of 300 matches\n\nf000.txt\nLine 1: needle")
    assert not locator.startswith(root)
    assert not paged["is_error"] and "900: f299.txt\n901: Line 1: needle" in paged["text"]
    assert within["text"] == f"Found 1 match\n\n{locator}\nLine 900: f299.txt"
