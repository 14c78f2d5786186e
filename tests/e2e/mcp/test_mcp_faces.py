"""The editing faces through the real ``dsh-fs mcp`` server (issue 11, "Every surface"):
``--tools`` serves ``apply_patch`` and the text editors only when named, with their schemas and
annotations; a ``read`` (or ``view``) in the MCP session authorizes the patch; a refused patch
changes nothing; paths outside ``--root`` are refused by every face.

Not covered here: the faces' rules (tests/integration/tool_patch/test_apply_patch.py, test_text_editor.py).
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from mcp_support import RawStdio, row

pytestmark = pytest.mark.timeout(120)

PATCH = "*** Begin Patch\n*** Update File: a.txt\n@@\n-alpha\n+ALPHA\n*** Add File: sub/b.txt\n+bee\n*** End Patch\n"


def _call(server: RawStdio, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return row(server.request("tools/call", {"name": name, "arguments": arguments})["result"])


def test_the_faces_are_served_only_when_named(tmp_path: Any) -> None:
    # DEVIATIONS E12
    root = os.path.realpath(str(tmp_path))
    with RawStdio(root) as server:
        server.initialize()
        default = [t["name"] for t in server.request("tools/list")["result"]["tools"]]
    assert "apply_patch" not in default and "str_replace_based_edit_tool" not in default
    with RawStdio(root, "--tools", "read,apply_patch,str_replace_based_edit_tool,str_replace_editor") as server:
        server.initialize()
        tools = {t["name"]: t for t in server.request("tools/list")["result"]["tools"]}
    assert sorted(tools) == ["apply_patch", "read", "str_replace_based_edit_tool", "str_replace_editor"]
    assert tools["apply_patch"]["inputSchema"]["required"] == ["input"]
    assert tools["apply_patch"]["annotations"]["destructiveHint"] is True
    assert tools["str_replace_editor"]["inputSchema"]["properties"]["insert_line"]["type"] == "integer"


def test_apply_patch_and_the_editor_over_mcp(tmp_path: Any) -> None:
    root = os.path.realpath(str(tmp_path))
    with open(os.path.join(root, "a.txt"), "w", encoding="utf-8") as handle:
        handle.write("alpha\n")
    with RawStdio(root, "--tools", "read,apply_patch,str_replace_based_edit_tool") as server:
        server.initialize()
        refused = _call(server, "apply_patch", {"input": PATCH})
        unchanged = sorted(os.listdir(root))
        _call(server, "read", {"file_path": "a.txt"})
        applied = _call(server, "apply_patch", {"input": PATCH})
        viewed = _call(server, "str_replace_based_edit_tool", {"command": "view", "path": "sub/b.txt"})
        replaced = _call(server, "str_replace_based_edit_tool",
                         {"command": "str_replace", "path": "sub/b.txt", "old_str": "bee", "new_str": "BEE"})
        outside = _call(server, "apply_patch", {"input": "*** Begin Patch\n*** Add File: ../x.txt\n+x\n*** End Patch\n"})
    assert refused["is_error"] and refused["code"] == "FS_NOT_OBSERVED" and unchanged == ["a.txt"]
    assert applied["text"] == f"Success. Updated the following files:\nA {root}/sub/b.txt\nM {root}/a.txt\n"
    assert applied["meta"]["diffs"][0]["newText"] == "ALPHA"
    assert viewed["text"] == "1: bee"
    assert replaced["text"] == "Successfully replaced text at exactly one location."
    assert outside["is_error"] and outside["code"] == "FS_PERMISSION_DENIED"
    with open(os.path.join(root, "sub", "b.txt"), "rb") as handle:
        assert handle.read() == b"BEE\n"
    assert not os.path.exists(os.path.join(os.path.dirname(root), "x.txt"))


@pytest.mark.parametrize(("tools", "warned"), [("edit", "edit"), ("write,apply_patch", "write, apply_patch"),
                                               ("read,edit", None), ("str_replace_based_edit_tool,apply_patch", None)])
def test_a_server_that_cannot_change_existing_files_says_so(tmp_path: Any, tools: str, warned: str | None) -> None:
    """Under the policy, a changed file must have been read: serving write/edit/apply_patch
    without read (or an editor's view) warns once on stderr that no existing file can be
    changed; --no-policy does not."""
    import subprocess

    from httpkit import server_argv

    root = os.path.realpath(str(tmp_path))
    for flags in ((), ("--no-policy",)):
        done = subprocess.run(server_argv(root, "--tools", tools, *flags), stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        warning = (f"dsh-fs mcp: warning: {warned} served without read: under the observation policy no"
                   " existing file can be changed (add read to --tools, or use --no-policy)")
        assert (warning in done.stderr) == (warned is not None and not flags), done.stderr
