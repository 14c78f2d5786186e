"""Every tool and every error kind through the real ``dsh-fs mcp`` server, over stdio (in
the handshake era and in the 2026-07-28 era, where every request carries its own envelope
but the process is still one owner) and over streamable HTTP: the results (text, isError,
error code/name, diff meta) must equal what the in-process registry returns for the same
calls on an identical workspace, and the files must end up identical. The expected error codes are pinned too, so a server that
turned every call into the same error would not pass. Also: the served root contains every
path (``FS_PERMISSION_DENIED`` outside it).

Not covered here: the wire shape of listings (``test_mcp_wire.py``), concurrency and
cancellation (``test_mcp_concurrency.py``), HTTP session handling (``test_mcp_http.py``).
"""

from __future__ import annotations

import json
import os
from typing import Any

import anyio
import pytest

from dsh_fs.cli.replay import replay_scenario
from mcp_support import RawStdio, row, run_scenario_over_mcp

FILES: dict[str, Any] = {
    "a.txt": "alpha\nbeta\n",
    "b.txt": "untouched\n",
    "dup.txt": "x = 1\nx = 1\n",
    "near.txt": "def f():\n\treturn 1\n",
    "bin.dat": {"base64": "AAECAw=="},
    "latin1.txt": {"base64": "Y2Fm6Qo="},
    "sub": {"dir": True},
}

# (call or external step, expected code; None = success)
STEPS: list[tuple[dict[str, Any], str | None]] = [
    ({"tool": "read", "args": {"file_path": "a.txt"}}, None),
    ({"tool": "read", "args": {"file_path": "a.txt", "offset": 2, "limit": 1}}, None),
    ({"tool": "write", "args": {"file_path": "new/deep.txt", "content": "created\n"}}, None),
    ({"tool": "write", "args": {"file_path": "a.txt", "content": "alpha\nBETA\n"}}, None),
    ({"tool": "edit", "args": {"file_path": "a.txt", "old_string": "BETA", "new_string": "gamma"}}, None),
    ({"tool": "edit", "args": {"file_path": "a.txt", "old_string": "a", "new_string": "A", "replace_all": True}}, None),
    # not observed: overwrite / edit an existing file never read
    ({"tool": "write", "args": {"file_path": "b.txt", "content": "clobber\n"}}, "FS_NOT_OBSERVED"),
    ({"tool": "edit", "args": {"file_path": "b.txt", "old_string": "un", "new_string": ""}}, "FS_NOT_OBSERVED"),
    # stale: changed by another process after this session's read
    ({"tool": "read", "args": {"file_path": "b.txt"}}, None),
    ({"external_write": {"path": "b.txt", "content": "changed elsewhere\n"}}, None),
    ({"tool": "edit", "args": {"file_path": "b.txt", "old_string": "changed", "new_string": "mine"}}, "FS_STALE_VERSION"),
    # (D30: that refusal showed the whole change, which counts as seen; so change it again)
    ({"external_write": {"path": "b.txt", "content": "changed again\n"}}, None),
    ({"tool": "write", "args": {"file_path": "b.txt", "content": "mine\n"}}, "FS_STALE_VERSION"),
    # not found, not text, not a regular file
    ({"tool": "read", "args": {"file_path": "missing.txt"}}, "FS_NOT_FOUND"),
    ({"tool": "edit", "args": {"file_path": "missing.txt", "old_string": "a", "new_string": "b"}}, "FS_NOT_FOUND"),
    ({"tool": "read", "args": {"file_path": "bin.dat"}}, "FS_NOT_TEXT"),
    ({"tool": "read", "args": {"file_path": "latin1.txt"}}, "FS_NOT_TEXT"),
    ({"tool": "read", "args": {"file_path": "sub"}}, "FS_NOT_REGULAR_FILE"),
    # ambiguous, and not found with a hint (D5, default profile)
    ({"tool": "read", "args": {"file_path": "dup.txt"}}, None),
    ({"tool": "edit", "args": {"file_path": "dup.txt", "old_string": "x = 1", "new_string": "x = 2"}}, "FS_AMBIGUOUS_EDIT"),
    ({"tool": "read", "args": {"file_path": "near.txt"}}, None),
    ({"tool": "edit", "args": {"file_path": "near.txt", "old_string": "    return 1", "new_string": "    return 2"}}, "FS_EDIT_NOT_FOUND"),
    # invalid arguments (schema and values) and an unknown tool
    ({"tool": "read", "args": {"file_path": 42}}, "INVALID_ARGS"),
    ({"tool": "read", "args": "a.txt"}, "INVALID_ARGS"),
    ({"tool": "write", "args": {"file_path": "a.txt"}}, "INVALID_ARGS"),
    ({"tool": "edit", "args": {"file_path": "a.txt", "old_string": "AlphA", "new_string": "alpha", "extra": 1}}, None),
    ({"tool": "write", "args": {"file_path": " ", "content": "x"}}, "NO_CODE"),
    ({"tool": "find", "args": {"pattern": "*"}}, "UNKNOWN_TOOL"),
]


def _scenario() -> dict[str, Any]:
    return {"profile": "default", "files": FILES, "calls": [step for step, _ in STEPS]}


def _expected_codes() -> list[str | None]:
    return [code for step, code in STEPS if "tool" in step]


@pytest.fixture(scope="module")
def in_process() -> dict[str, Any]:
    return json.loads(json.dumps(anyio.run(replay_scenario, _scenario())))


@pytest.mark.timeout(120)
@pytest.mark.parametrize("transport", ["stdio", "http", "stdio-2026"])
def test_every_tool_and_error_kind_matches_the_registry(transport: str, tmp_path: Any, in_process: dict[str, Any]) -> None:
    previous = os.umask(0o022)
    try:
        over_mcp = anyio.run(lambda: run_scenario_over_mcp(_scenario(), os.path.realpath(tmp_path), transport=transport))
    finally:
        os.umask(previous)
    over_mcp = json.loads(json.dumps(over_mcp))

    codes = [r["code"] for r in over_mcp["results"]]
    wanted = [None if c == "NO_CODE" else c for c in _expected_codes()]
    assert codes == wanted
    for result, code in zip(over_mcp["results"], _expected_codes()):
        assert result["is_error"] is (code is not None), result
        assert result["text"].startswith("Error: ") is (code is not None), result

    assert len(over_mcp["results"]) == len(in_process["results"])
    for index, (got, want) in enumerate(zip(over_mcp["results"], in_process["results"])):
        assert got == want, f"call {index + 1}"
    assert over_mcp["files"] == in_process["files"]
    assert over_mcp["dirs"] == in_process["dirs"]

    # D5 (default profile): the near-match hint is part of what the model sees
    hinted = over_mcp["results"][codes.index("FS_EDIT_NOT_FOUND")]["text"]
    first, _, hint = hinted.partition("\n")
    assert first == 'Error: old_string was not found in "<ws>/near.txt"'
    assert hint.startswith("Hint: line 2 ")



@pytest.mark.timeout(60)
def test_paths_outside_the_served_root_are_refused(tmp_path: Any) -> None:
    """``--root`` is a containment root too: nothing outside it is read or written."""
    base = os.path.realpath(tmp_path)
    root = os.path.join(base, "served")
    os.mkdir(root)
    outside = os.path.join(base, "outside.txt")
    with open(outside, "w", encoding="utf-8") as handle:
        handle.write("secret\n")
    calls = [
        ("read", {"file_path": "../outside.txt"}),
        ("read", {"file_path": outside}),
        ("write", {"file_path": "../planted.txt", "content": "x"}),
        ("write", {"file_path": outside, "content": "overwritten"}),
    ]
    with RawStdio(root) as server:
        server.initialize()
        results = [row(server.request("tools/call", {"name": n, "arguments": a})["result"]) for n, a in calls]
    for result in results:
        assert result["is_error"] is True and result["code"] == "FS_PERMISSION_DENIED", result
        assert "secret" not in result["text"]
    assert sorted(os.listdir(base)) == ["outside.txt", "served"]
    with open(outside, encoding="utf-8") as handle:
        assert handle.read() == "secret\n"
