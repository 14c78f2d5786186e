"""The MCP package's pure parts, without a server process: listen-address parsing, the HTTP
session table (limits, expiry, owners), the wire dicts for listings and results, the session
gate (registering, refusing, forgetting on ``DELETE``), and that neither ``import dsh_fs`` nor the ``dsh-fs`` command line imports the SDK
before ``dsh-fs mcp`` runs.

End-to-end behaviour (a real server process and the SDK client) is in ``tests/e2e/mcp/``.
"""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import weakref
from typing import Any

import anyio
import pytest

import dsh_fs
from dsh_fs.core.tools import ErrorInfo, ToolResult, text_block
from dsh_fs.mcp import HttpSessions, SessionLimits, call_result, parse_listen, tool_entries
from dsh_fs.mcp.http.app import _SessionGate
from dsh_fs.mcp.http.sessions import Refused


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


def test_http_sessions_bound_sessions_per_token_and_in_total() -> None:
    sessions = HttpSessions("/ws", limits=SessionLimits(per_principal=2, total=3), clock=Clock())
    sessions.reserve("agent-1")
    sessions.opened("s1", "agent-1")
    sessions.reserve("agent-1")  # a second place, not yet a session: counted too
    with pytest.raises(Refused, match=r"too many open MCP sessions for this token \(2\)"):
        sessions.reserve("agent-1")
    sessions.unreserve("agent-1")  # the opening request failed
    sessions.reserve("agent-1")
    sessions.opened("s2", "agent-1")
    sessions.reserve("agent-2")
    sessions.opened("s3", "agent-2")
    with pytest.raises(Refused, match=r"too many open MCP sessions \(3\)"):
        sessions.reserve("agent-3")
    sessions.drop("s1")
    sessions.drop("s1")  # idempotent
    sessions.reserve("agent-1")  # room again, for this token and in total
    assert len(sessions) == 2 and "s1" not in sessions


def test_http_sessions_without_auth_only_the_total_applies() -> None:
    sessions = HttpSessions("/ws", limits=SessionLimits(per_principal=1, total=3), clock=Clock())
    for index in range(3):
        sessions.reserve(None)
        sessions.opened(f"s{index}", None)
    with pytest.raises(Refused):
        sessions.reserve(None)


def test_http_sessions_expire_unused_soon_and_idle_later() -> None:
    clock = Clock()
    sessions = HttpSessions("/ws", limits=SessionLimits(unused_timeout=10, idle_timeout=100), clock=clock)
    for session_id in ("unused", "listed", "streaming", "calling"):
        sessions.reserve("agent-1")
        sessions.opened(session_id, "agent-1")
    sessions.used("listed")
    assert sessions.begin("streaming", "agent-1")  # an open GET stream: in flight all along
    sessions.owner("calling", "agent-1")  # a tool call makes it used too
    clock.now += 11
    assert sessions.expired() == [("unused", "agent-1"), ("streaming", "agent-1")]  # GET or not
    sessions.drop("unused")
    sessions.drop("streaming")
    assert sessions.begin("listed", "agent-1")
    clock.now += 95
    assert sessions.expired() == [("calling", "agent-1")]  # idle 106 s; "listed" is in flight
    sessions.drop("calling")
    sessions.end("listed")
    clock.now += 100
    assert sessions.expired() == []  # idle for exactly 100 s: not yet
    clock.now += 1
    assert sessions.expired() == [("listed", "agent-1")]


def test_http_sessions_count_requests_in_flight_only_for_the_principal_that_opened_them() -> None:
    sessions = HttpSessions("/ws", limits=SessionLimits(in_flight=2), clock=Clock())
    sessions.reserve("agent-1")
    sessions.opened("s1", "agent-1")
    assert sessions.begin("s1", "agent-2") is False  # the SDK answers it 404
    assert sessions.begin("unknown", "agent-1") is False
    assert sessions.begin("s1", "agent-1") and sessions.begin("s1", "agent-1")
    with pytest.raises(Refused, match=r"too many requests in flight on this MCP session \(2\)"):
        sessions.begin("s1", "agent-1")
    sessions.end("s1")
    assert sessions.begin("s1", "agent-1")
    sessions.begin_stateless("agent-1")
    sessions.begin_stateless("agent-1")
    with pytest.raises(Refused, match=r"too many requests in flight for this token \(2\)"):
        sessions.begin_stateless("agent-1")
    sessions.end_stateless("agent-1")
    sessions.begin_stateless("agent-1")


def test_http_sessions_owners_one_per_session_and_one_per_stateless_principal() -> None:
    sessions = HttpSessions("/ws", limits=SessionLimits(), clock=Clock())
    sessions.reserve("agent-1")
    sessions.opened("s1", "agent-1")
    first = sessions.owner("s1", "agent-1")
    assert sessions.owner("s1", "agent-1") is first and first.cwd == "/ws" and first.id == "s1"
    with pytest.raises(KeyError):
        sessions.owner("s2", "agent-1")
    with pytest.raises(KeyError):  # another principal's session
        sessions.owner("s1", "agent-2")
    agent = sessions.stateless_owner("agent-1")
    assert sessions.stateless_owner("agent-1") is agent and agent is not first
    assert sessions.stateless_owner("agent-2") is not agent
    owner = weakref.ref(first)
    del first
    sessions.drop("s1")
    gc.collect()
    assert owner() is None  # nothing else holds the owner: its observations go with it


def test_session_limits_are_checked() -> None:
    for bad in ({"per_principal": 0}, {"total": 0}, {"in_flight": 0}, {"unused_timeout": 0}, {"idle_timeout": -1}):
        with pytest.raises(ValueError):
            SessionLimits(**bad)


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


async def _through_gate(sessions: HttpSessions, method: str, headers: list[tuple[bytes, bytes]],
                        status: int, answer_headers: list[tuple[bytes, bytes]] = []) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": status, "headers": answer_headers})
        await send({"type": "http.response.body", "body": b""})

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async def receive() -> dict[str, Any]:  # a body that is no JSON-RPC request
        return {"type": "http.request", "body": b"", "more_body": False}

    scope = {"type": "http", "method": method, "headers": headers}
    await _SessionGate(app, sessions)(scope, receive, send)
    return sent


@pytest.mark.parametrize(("method", "status", "dropped"), [("DELETE", 200, True), ("DELETE", 299, True), ("DELETE", 300, False),
                                                       ("DELETE", 404, False), ("POST", 200, False)])
def test_a_successful_delete_forgets_the_session(method: str, status: int, dropped: bool) -> None:
    sessions = HttpSessions("/ws", limits=SessionLimits())
    sessions.reserve(None)
    sessions.opened("abc", None)
    sent = anyio.run(_through_gate, sessions, method, [(b"mcp-session-id", b"abc")], status)
    assert [m["type"] for m in sent] == ["http.response.start", "http.response.body"]
    assert ("abc" not in sessions) is dropped


def test_the_gate_registers_an_opened_session_and_refuses_over_the_limit() -> None:
    sessions = HttpSessions("/ws", limits=SessionLimits(total=1))
    anyio.run(_through_gate, sessions, "POST", [], 400)  # refused by the SDK: nothing opened
    assert len(sessions) == 0
    anyio.run(_through_gate, sessions, "POST", [], 200, [(b"mcp-session-id", b"new")])
    assert "new" in sessions
    sent = anyio.run(_through_gate, sessions, "POST", [], 200, [(b"mcp-session-id", b"other")])
    assert sent[0]["status"] == 503 and "other" not in sessions
    assert json.loads(sent[1]["body"]) == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32603, "message": "too many open MCP sessions (1): end one (HTTP DELETE) or wait for an"
                  " unused one to expire"},
    }


def test_neither_the_library_nor_the_command_line_imports_the_sdk() -> None:
    code = (
        "import sys, dsh_fs, dsh_fs.cli.main\n"
        "from click.testing import CliRunner\n"
        "CliRunner().invoke(dsh_fs.cli.main.main, ['--help'])\n"
        "print(sorted(m for m in sys.modules if m == 'mcp' or m.startswith(('mcp.', 'dsh_fs.mcp', 'uvicorn'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"


def test_bearer_tokens_replace_keeps_names_and_revokes_removed_tokens() -> None:
    from dsh_fs.mcp import BearerTokens

    verifier = BearerTokens(["token-one-0000000001", "token-two-0000000002", "token-three-00000003"])
    assert verifier.replace(["token-three-00000003", "token-four-0000000004", "token-one-0000000001"]) == ["agent-2"]
    assert verifier.principal("token-one-0000000001") == "agent-1"
    assert verifier.principal("token-three-00000003") == "agent-3"
    assert verifier.principal("token-four-0000000004") == "agent-4"  # a new name, never agent-2 again
    assert verifier.principal("token-two-0000000002") is None
    with pytest.raises(ValueError):
        verifier.replace([])
    assert verifier.principal("token-one-0000000001") == "agent-1"  # a refused list changes nothing


def test_http_sessions_revoke_names_the_principals_sessions_and_forgets_their_stateless_owner() -> None:
    sessions = HttpSessions("/ws", limits=SessionLimits(), clock=Clock())
    for session_id, principal in (("s1", "agent-1"), ("s2", "agent-2"), ("s3", "agent-2")):
        sessions.reserve(principal)
        sessions.opened(session_id, principal)
    stateless = sessions.stateless_owner("agent-2")
    assert sessions.revoke(["agent-2"]) == [("s2", "agent-2"), ("s3", "agent-2")]
    assert sessions.stateless_owner("agent-2") is not stateless


def test_the_gate_opens_a_session_only_for_a_success_naming_one() -> None:
    """A handshake answered with an error (even one naming a session) or a success naming none
    opens nothing and gives its place back."""
    sessions = HttpSessions("/ws", limits=SessionLimits(total=1))
    for status, answer_headers in ((400, [(b"mcp-session-id", b"bad")]), (399, []), (200, [])):
        anyio.run(_through_gate, sessions, "POST", [], status, answer_headers)
        assert len(sessions) == 0
    anyio.run(_through_gate, sessions, "POST", [], 399, [(b"mcp-session-id", b"ok")])
    assert "ok" in sessions and len(sessions) == 1


def test_the_gate_passes_other_methods_and_lifespan_through_untouched() -> None:
    sessions = HttpSessions("/ws", limits=SessionLimits(total=1))
    sessions.reserve(None)
    sessions.opened("full", None)  # no place left: a POST would be refused
    sent = anyio.run(_through_gate, sessions, "GET", [], 405)
    assert sent[0]["status"] == 405  # not a handshake: the SDK answers
    seen: list[str] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        seen.append(scope["type"])

    anyio.run(_SessionGate(app, sessions), {"type": "lifespan"}, None, None)
    assert seen == ["lifespan"]


def test_the_gate_bounds_a_tokens_stateless_requests_in_flight() -> None:
    """A 2026-07-28 request (its version header, no session) counts in flight for its
    principal while it runs: over ``in_flight`` it is ``503``; each one ended gives its place back."""
    from mcp.server.auth.middleware.auth_context import AuthenticatedUser
    from mcp.server.auth.provider import AccessToken

    sessions = HttpSessions("/ws", limits=SessionLimits(in_flight=1))
    release = anyio.Event()
    arrived: list[str] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        arrived.append(scope["method"])
        await release.wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    gate = _SessionGate(app, sessions)
    user = AuthenticatedUser(AccessToken(token="", client_id="agent-1", scopes=[]))
    scope = {"type": "http", "method": "POST", "headers": [(b"mcp-protocol-version", b"2026-07-28")], "user": user}
    statuses: list[int] = []

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            statuses.append(message["status"])

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(gate, scope, None, send)
            with anyio.fail_after(60):
                while not arrived:
                    await anyio.sleep(0.01)
            await gate(scope, None, send)  # the first is still running
            assert statuses == [503]
            release.set()
        for _ in range(2):
            await gate(scope, None, send)

    anyio.run(main)
    assert statuses == [503, 200, 200, 200] and len(arrived) == 3
