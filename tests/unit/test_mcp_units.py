"""The MCP package's pure parts, without a server process: listen-address parsing, the
per-session owner registry, the wire dicts for listings and results, forgetting an owner on
``DELETE``, and that neither ``import dsh_fs`` nor the ``dsh-fs`` command line imports the SDK
before ``dsh-fs mcp`` runs.

End-to-end behaviour (a real server process and the SDK client) is in ``tests/e2e/test_mcp_*.py``.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import anyio
import pytest

import dsh_fs
from dsh_fs.core.tools import ErrorInfo, ToolResult, text_block
from dsh_fs.mcp import SessionOwners, call_result, parse_listen, tool_entries
from dsh_fs.mcp.http import _ForgetOnDelete


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("127.0.0.1:8765", ("127.0.0.1", 8765)),
        ("127.0.0.2:0", ("127.0.0.2", 0)),
        ("localhost:9000", ("127.0.0.1", 9000)),
        ("LOCALHOST:1", ("127.0.0.1", 1)),
        ("[::1]:8000", ("::1", 8000)),
        ("::1:8000", ("::1", 8000)),
    ],
)
def test_parse_listen_accepts_loopback(text: str, expected: tuple[str, int]) -> None:
    assert parse_listen(text) == expected


@pytest.mark.parametrize(
    "text",
    ["0.0.0.0:80", "[::]:80", "10.0.0.1:80", "example.com:80", "127.0.0.1", "127.0.0.1:", ":80", "127.0.0.1:65536",
     "127.0.0.1:-1", "127.0.0.1:http", ""],
)
def test_parse_listen_refuses_everything_else(text: str) -> None:
    with pytest.raises(ValueError):
        parse_listen(text)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_session_owners_one_session_per_id_until_dropped_or_idle() -> None:
    clock = Clock()
    owners = SessionOwners("/ws", idle_timeout=60, clock=clock)
    first = owners.get("s1")
    assert owners.get("s1") is first
    assert first.cwd == "/ws" and first.id == "s1"
    second = owners.get("s2")
    assert second is not first
    owners.drop("s2")
    assert "s2" not in owners and owners.get("s2") is not second

    clock.now += 50
    owners.touch("s1")  # used: stays
    clock.now += 50
    owners.prune()
    assert "s1" in owners and "s2" not in owners  # s2 was last used 100 s ago
    clock.now += 61
    assert owners.get("s3") is not None  # any lookup prunes
    assert "s1" not in owners and len(owners) == 1
    owners.touch("unknown")  # ignored
    assert "unknown" not in owners


def test_tool_entries_keep_the_parameters_object_itself() -> None:
    schemas = dsh_fs.create_context().tools.schemas()
    entries = tool_entries(schemas)
    for entry, schema in zip(entries, schemas):
        assert entry["inputSchema"] is schema["parameters"]
        assert entry["name"] == schema["name"] and entry["description"] == schema["description"]
    extra = tool_entries([{"name": "other", "description": "d", "parameters": {"type": "object"}}])
    assert extra == [{"name": "other", "description": "d", "inputSchema": {"type": "object"}}]


def test_call_result_puts_only_our_blocks_in_content() -> None:
    ok = ToolResult(content=[text_block("done")], meta={"diffs": [{"path": "a", "oldText": "", "newText": "x"}]})
    assert call_result(ok) == {
        "content": [{"type": "text", "text": "done"}],
        "isError": False,
        "_meta": {"dsh_fs": {"diffs": [{"path": "a", "oldText": "", "newText": "x"}]}},
    }
    failed = ToolResult(content=[text_block("Error: no")], is_error=True, error=ErrorInfo("FsError", "FS_NOT_FOUND"))
    assert call_result(failed) == {
        "content": [{"type": "text", "text": "Error: no"}],
        "isError": True,
        "_meta": {"dsh_fs": {"error": {"name": "FsError", "code": "FS_NOT_FOUND"}}},
    }
    plain = ToolResult.failure(ValueError("plain"))
    assert call_result(plain) == {"content": [{"type": "text", "text": "Error: plain"}], "isError": True}


@pytest.mark.parametrize(("method", "status", "dropped"), [("DELETE", 200, True), ("DELETE", 404, False), ("POST", 200, False)])
def test_a_successful_delete_forgets_the_sessions_owner(method: str, status: int, dropped: bool) -> None:
    owners = SessionOwners("/ws", idle_timeout=60)
    owners.get("abc")
    sent: list[dict[str, Any]] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": status, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": method, "headers": [(b"mcp-session-id", b"abc")]}
    anyio.run(_ForgetOnDelete(app, owners), scope, None, send)
    assert [m["type"] for m in sent] == ["http.response.start", "http.response.body"]
    assert ("abc" not in owners) is dropped


def test_neither_the_library_nor_the_command_line_imports_the_sdk() -> None:
    code = (
        "import sys, dsh_fs, dsh_fs.cli.main\n"
        "from click.testing import CliRunner\n"
        "CliRunner().invoke(dsh_fs.cli.main.main, ['--help'])\n"
        "print(sorted(m for m in sys.modules if m == 'mcp' or m.startswith(('mcp.', 'dsh_fs.mcp', 'uvicorn'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"
