"""A client that starts a server per tool call, without ``--session``: the refused edit's text
stays the tool's, and the operator gets one hint on stderr (``mcp/percall.py``)."""

from __future__ import annotations

import os
from typing import Any

import pytest

from dsh_fs.mcp.percall import PER_CALL_HINT
from mcp_support import RawStdio

pytestmark = pytest.mark.timeout(300)


def _call(server: RawStdio, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    server.initialize()
    return server.request("tools/call", {"name": tool, "arguments": arguments})["result"]


@pytest.mark.parametrize("lean", ["1", "0"])
def test_an_edit_in_a_fresh_process_is_refused_with_a_hint_on_stderr(tmp_path: Any, lean: str,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DSH_FS_MCP_LEAN", lean)  # (both paths: the lean one and the SDK's)
    ws = str(tmp_path)
    with open(os.path.join(ws, "notes.txt"), "w") as handle:
        handle.write("alpha\n")
    with RawStdio(ws) as first:
        assert not _call(first, "read", {"file_path": "notes.txt"}).get("isError")
        assert PER_CALL_HINT not in first.stderr()
    with RawStdio(ws) as second:
        refused = _call(second, "edit", {"file_path": "notes.txt", "old_string": "alpha", "new_string": "beta"})
        assert refused["isError"] is True
        assert refused["content"][0]["text"].startswith("Error: edit requires reading")  # the tool's text
        retried = second.request("tools/call", {"name": "edit", "arguments": {
            "file_path": "notes.txt", "old_string": "alpha", "new_string": "beta"}})["result"]
        assert retried["isError"] is True
        assert second.stderr().count(PER_CALL_HINT) == 1  # once per process
    with RawStdio(ws) as third:  # a refusal after a call this process answered: no hint
        assert not _call(third, "glob", {"pattern": "*.txt"}).get("isError")
        assert third.request("tools/call", {"name": "edit", "arguments": {
            "file_path": "notes.txt", "old_string": "alpha", "new_string": "beta"}})["result"]["isError"] is True
        assert PER_CALL_HINT not in third.stderr()


def test_with_a_session_there_is_no_refusal_and_no_hint(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DSH_FS_STATE_DIR", str(tmp_path / "state"))
    ws = str(tmp_path / "ws")
    os.makedirs(ws)
    with open(os.path.join(ws, "notes.txt"), "w") as handle:
        handle.write("alpha\n")
    with RawStdio(ws, "--session", "agent") as first:
        assert not _call(first, "read", {"file_path": "notes.txt"}).get("isError")
    with RawStdio(ws, "--session", "agent") as second:
        assert not _call(second, "edit", {"file_path": "notes.txt", "old_string": "alpha", "new_string": "beta"}).get(
            "isError")
        assert PER_CALL_HINT not in second.stderr()
    with open(os.path.join(ws, "notes.txt")) as handle:
        assert handle.read() == "beta\n"
