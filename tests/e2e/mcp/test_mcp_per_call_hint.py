"""A client that starts a server per tool call, without ``--session``: the refused edit's text
stays the tool's, and the operator gets one hint on stderr naming where ``--session`` is
explained (``mcp/stdio/per_call_hint.py``), on both routes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dsh_fs.mcp.stdio.per_call_hint import PER_CALL_HINT
from mcpkit import INITIALIZED, Server, call, initialize

pytestmark = pytest.mark.timeout(300)


class _Client:
    """One per-call client's server: ``initialize``, then calls one at a time."""

    def __init__(self, root: Path, *args: str, sdk_only: bool = False) -> None:
        self.server = Server(root, *args, sdk_only=sdk_only)
        self.server.send(initialize(0) + INITIALIZED)
        assert b'"protocolVersion"' in self.server.line()
        self._id = 0

    def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self._id += 1
        self.server.send(call(self._id, tool, arguments))
        answer = json.loads(self.server.line())
        assert answer["id"] == self._id, answer
        return answer["result"]  # type: ignore[no-any-return]

    def stderr(self) -> str:
        return self.server.finish()[1]


def test_the_hint_names_where_session_is_explained() -> None:
    assert "--session NAME" in PER_CALL_HINT and "docs/MCP.md" in PER_CALL_HINT


@pytest.mark.parametrize("sdk_only", [False, True], ids=["ours", "sdk"])
def test_an_edit_in_a_fresh_process_is_refused_with_a_hint_on_stderr(tmp_path: Path, sdk_only: bool) -> None:
    (tmp_path / "notes.txt").write_text("alpha\n")
    edit = {"file_path": "notes.txt", "old_string": "alpha", "new_string": "beta"}
    first = _Client(tmp_path, sdk_only=sdk_only)
    assert not first.call("read", {"file_path": "notes.txt"}).get("isError")
    assert PER_CALL_HINT not in first.stderr()
    second = _Client(tmp_path, sdk_only=sdk_only)
    refused = second.call("edit", edit)
    assert refused["isError"] is True
    assert refused["content"][0]["text"].startswith("Error: edit requires reading")  # the tool's text
    assert second.call("edit", edit)["isError"] is True
    assert second.stderr().count(PER_CALL_HINT) == 1  # once per process
    third = _Client(tmp_path, sdk_only=sdk_only)  # a refusal after a call this process answered: no hint
    assert not third.call("glob", {"pattern": "*.txt"}).get("isError")
    assert third.call("edit", edit)["isError"] is True
    assert PER_CALL_HINT not in third.stderr()


def test_with_a_session_there_is_no_refusal_and_no_hint(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("alpha\n")
    env = {"DSH_FS_STATE_DIR": str(tmp_path / "state")}
    first = Server(ws, "--session", "agent", env=env)
    first.send(initialize(0) + INITIALIZED + call(1, "read", {"file_path": "notes.txt"}))
    first.line()
    assert b'"isError":false' in first.line()
    first.finish()
    second = Server(ws, "--session", "agent", env=env)
    second.send(initialize(0) + INITIALIZED
                + call(1, "edit", {"file_path": "notes.txt", "old_string": "alpha", "new_string": "beta"}))
    second.line()
    assert b'"isError":false' in second.line()
    assert PER_CALL_HINT not in second.finish()[1]
    assert (ws / "notes.txt").read_text() == "beta\n"
