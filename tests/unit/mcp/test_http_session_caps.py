"""The HTTP session caps (``mcp/sessions.py`` through the session gate of ``mcp/http.py``):
a session still in its handshake holds its place, so concurrent handshakes can never open
more sessions than the caps allow, per token or in total."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from dsh_fs.mcp import HttpSessions, SessionLimits
from dsh_fs.mcp.http.app import _SessionGate
from dsh_fs.mcp.http.sessions import Refused


class _SlowHandshakes:
    """An SDK endpoint stand-in: each POST answers a new session id once ``release`` is set
    (or fails with 500 when ``fail`` is)."""

    def __init__(self) -> None:
        self.release = anyio.Event()
        self.arrived = 0
        self.fail = False

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        self.arrived += 1
        number = self.arrived
        await self.release.wait()
        if self.fail:
            await send({"type": "http.response.start", "status": 500, "headers": []})
        else:
            await send({"type": "http.response.start", "status": 200,
                        "headers": [(b"mcp-session-id", f"s{number}".encode())]})
        await send({"type": "http.response.body", "body": b""})


def _scope(principal: str | None) -> dict[str, Any]:
    scope: dict[str, Any] = {"type": "http", "method": "POST", "headers": []}
    if principal is not None:
        from mcp.server.auth.middleware.auth_context import AuthenticatedUser
        from mcp.server.auth.provider import AccessToken

        scope["user"] = AuthenticatedUser(AccessToken(token="", client_id=principal, scopes=[]))
    return scope


async def _handshakes(sessions: HttpSessions, principals: list[str | None], *, fail: bool = False) -> list[int]:
    """Start every handshake, let them all reach the endpoint (or be refused), then answer them."""
    app = _SlowHandshakes()
    app.fail = fail
    gate = _SessionGate(app, sessions)
    statuses: list[int] = []

    async def one(principal: str | None) -> None:
        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                statuses.append(message["status"])

        await gate(_scope(principal), None, send)

    async with anyio.create_task_group() as tg:
        for principal in principals:
            tg.start_soon(one, principal)
        with anyio.fail_after(60):
            while app.arrived + statuses.count(503) < len(principals):
                await anyio.sleep(0.01)
        app.release.set()
    return sorted(statuses)


def test_concurrent_handshakes_cannot_overshoot_the_total() -> None:
    sessions = HttpSessions("/ws", limits=SessionLimits(total=3))
    statuses = anyio.run(_handshakes, sessions, [None] * 5)
    assert statuses == [200, 200, 200, 503, 503] and len(sessions) == 3


def test_concurrent_handshakes_cannot_overshoot_a_tokens_cap() -> None:
    sessions = HttpSessions("/ws", limits=SessionLimits(per_principal=2, total=10))
    statuses = anyio.run(_handshakes, sessions, ["agent-1"] * 4 + ["agent-2"])
    assert statuses == [200, 200, 200, 503, 503] and len(sessions) == 3


def test_failed_handshakes_give_their_places_back() -> None:
    sessions = HttpSessions("/ws", limits=SessionLimits(per_principal=2, total=2))
    assert anyio.run(lambda: _handshakes(sessions, ["agent-1"] * 3, fail=True)) == [500, 500, 503]
    assert len(sessions) == 0
    assert anyio.run(_handshakes, sessions, ["agent-1", "agent-1"]) == [200, 200]


def test_places_in_a_handshake_count_against_the_total_of_every_token() -> None:
    sessions = HttpSessions("/ws", limits=SessionLimits(per_principal=5, total=3))
    sessions.reserve("agent-1")
    sessions.reserve("agent-2")
    sessions.reserve("agent-2")
    with pytest.raises(Refused, match=r"^too many open MCP sessions \(3\): end one \(HTTP DELETE\) or wait for an "
                                      r"unused one to expire$"):
        sessions.reserve("agent-3")
    sessions.opened("s1", "agent-2")
    with pytest.raises(Refused):
        sessions.reserve("agent-3")  # still three: one open, two in their handshake
    sessions.unreserve("agent-1")
    sessions.reserve("agent-3")


def test_a_tokens_cap_counts_its_handshakes_and_its_open_sessions_only() -> None:
    sessions = HttpSessions("/ws", limits=SessionLimits(per_principal=2, total=10))
    sessions.reserve("agent-1")
    sessions.opened("s1", "agent-1")
    sessions.reserve("agent-1")
    with pytest.raises(Refused, match=r"^too many open MCP sessions for this token \(2\): end one \(HTTP DELETE\) or"
                                      r" wait for an unused one to expire$"):
        sessions.reserve("agent-1")
    sessions.reserve("agent-2")  # other tokens are not affected
    sessions.reserve("agent-2")
    sessions.unreserve("agent-1")
    sessions.reserve("agent-1")


def test_a_session_id_answered_twice_is_one_session() -> None:
    sessions = HttpSessions("/ws", limits=SessionLimits(per_principal=2, total=10))
    for _ in range(2):
        sessions.reserve("agent-1")
        sessions.opened("s1", "agent-1")
    assert len(sessions) == 1
    sessions.reserve("agent-1")  # the token holds one session, not two
    sessions.opened("s2", "agent-1")
    sessions.drop("s1")
    sessions.drop("s2")
    sessions.reserve("agent-1")
    sessions.reserve("agent-1")


def test_the_default_limits_and_their_checks() -> None:
    limits = SessionLimits()
    assert (limits.per_principal, limits.total, limits.in_flight, limits.unused_timeout, limits.idle_timeout) == (
        8, 64, 64, 60.0, 1800.0)
    SessionLimits(per_principal=1, total=1, in_flight=1, unused_timeout=0.5, idle_timeout=0.001)  # the smallest
    for name in ("per_principal", "total", "in_flight"):
        with pytest.raises(ValueError, match=f"^{name} must be at least 1$"):
            SessionLimits(**{name: 0})
    for name in ("unused_timeout", "idle_timeout"):
        for bad in (0, -1.0, float("nan")):
            with pytest.raises(ValueError, match=f"^{name} must be a positive number of seconds$"):
                SessionLimits(**{name: bad})
    with pytest.raises(TypeError):
        SessionLimits(8)  # type: ignore[misc]  # keyword-only
    with pytest.raises(AttributeError):
        limits.total = 1  # type: ignore[misc]  # frozen


def test_each_ended_request_frees_exactly_one_place() -> None:
    sessions = HttpSessions("/ws", limits=SessionLimits(in_flight=3))
    sessions.reserve("agent-1")
    sessions.opened("s1", "agent-1")
    for _ in range(3):
        assert sessions.begin("s1", "agent-1")
    sessions.end("s1")
    assert sessions.begin("s1", "agent-1")
    with pytest.raises(Refused):
        sessions.begin("s1", "agent-1")
    for _ in range(3):
        sessions.begin_stateless("agent-1")
    sessions.end_stateless("agent-1")
    sessions.begin_stateless("agent-1")
    with pytest.raises(Refused):
        sessions.begin_stateless("agent-1")
    sessions.begin_stateless("agent-2")  # counted per principal


def test_ending_one_of_two_sessions_keeps_the_other_counted() -> None:
    sessions = HttpSessions("/ws", limits=SessionLimits(per_principal=2, total=10))
    for sid in ("s1", "s2"):
        sessions.reserve("agent-1")
        sessions.opened(sid, "agent-1")
    sessions.drop("s1")
    sessions.reserve("agent-1")
    with pytest.raises(Refused):
        sessions.reserve("agent-1")  # s2 and the new place
    sessions.unreserve("agent-1")
    sessions.reserve("agent-1")
    sessions.reserve("agent-2")
    sessions.reserve("agent-2")
    sessions.unreserve("agent-2")  # one of agent-2's two places given back: one still held
    sessions.reserve("agent-2")
    with pytest.raises(Refused):
        sessions.reserve("agent-2")


def test_a_handshake_that_opened_its_session_gives_back_no_other_place() -> None:
    """Two handshakes of one token in flight, room for two sessions: the first one answered
    turns its own place into its session and leaves the second's place held, so a third
    handshake meanwhile is refused."""
    sessions = HttpSessions("/ws", limits=SessionLimits(per_principal=5, total=2))
    gates = [anyio.Event(), anyio.Event()]
    arrived: list[int] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        number = len(arrived)
        arrived.append(number)
        if number < 2:
            await gates[number].wait()
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"mcp-session-id", f"s{number}".encode())]})
        await send({"type": "http.response.body", "body": b""})

    gate = _SessionGate(app, sessions)
    statuses: list[int] = []

    async def one() -> None:
        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                statuses.append(message["status"])

        await gate(_scope("agent-1"), None, send)

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(one)
            tg.start_soon(one)
            with anyio.fail_after(60):
                while len(arrived) < 2:
                    await anyio.sleep(0.01)
            gates[0].set()
            with anyio.fail_after(60):
                while not statuses:
                    await anyio.sleep(0.01)
            await one()  # one open, one in its handshake: no place left
            assert statuses == [200, 503]
            gates[1].set()

    anyio.run(main)
    assert sorted(statuses) == [200, 200, 503] and len(sessions) == 2
