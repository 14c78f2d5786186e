"""The HTTP MCP server against a hostile local user and a greedy client (issue 12, items 1, 2).

* **Only its agents get in (12.1).** ``dsh-fs mcp --http`` as users start it: every request
  without one of its bearer tokens — no header, another scheme, a token cut short, extended,
  with one character changed, any other string — is answered ``401`` whatever it asks
  (opening a session, a call on a live session, its event stream, ending it, a stateless
  2026-07-28 call), reads nothing and changes nothing; an agent's session refuses every other
  token (``404``). The token is compared with every token in full (no early exit).
* **Nobody is locked out, nothing grows without bound (12.2).** One token holds at most 8
  sessions and the server 64, whatever a client sends: the next one gets ``503`` saying so,
  other tokens are unaffected. Sessions never used after the handshake expire soon, idle
  ones later, and with them their observations; a session's requests in flight are bounded;
  so are an owner's observations (the oldest is forgotten: a blind overwrite of it still
  fails). The timeouts are shortened for the test (``SessionLimits``), in-process.
"""

from __future__ import annotations

import dataclasses
import gc
import hmac
import os
import weakref
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

pytest.importorskip("mcp")

import httpx2  # noqa: E402  (after the importorskip)

import dsh_fs  # noqa: E402
from dsh_fs.mcp import BearerTokens, ServeOptions, SessionLimits, build_context  # noqa: E402
from httpkit import INITIALIZE, Endpoint, http_server, raw_post, serve_in_process, tool_call  # noqa: E402
from robustkit import snapshot  # noqa: E402

pytestmark = pytest.mark.timeout(180)

SECRET = "the serving user's private notes\n"

@pytest.fixture(scope="module")
def served(tmp_path_factory: Any) -> Iterator[tuple[str, Endpoint]]:
    """``dsh-fs mcp --http 127.0.0.1:0 --tokens 2`` on a directory with a private file."""
    root = os.path.realpath(tmp_path_factory.mktemp("served"))
    with open(os.path.join(root, "secret.txt"), "w", encoding="utf-8") as handle:
        handle.write(SECRET)
    with http_server(root, "--tokens", "2") as endpoint:
        yield root, endpoint


async def _open_session(http: httpx2.AsyncClient, endpoint: Endpoint, agent: int = 0) -> str:
    status, headers, answer = await raw_post(http, endpoint.url, INITIALIZE, endpoint.headers(agent))
    assert status == 200, answer
    session_id = headers["mcp-session-id"]
    session = {"mcp-session-id": session_id, **endpoint.headers(agent)}
    await raw_post(http, endpoint.url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    return session_id


def _forgeries(token: str) -> list[dict[str, str]]:
    flipped = token[:10] + ("A" if token[10] != "A" else "B") + token[11:]
    values = [
        None, "", "Bearer", f"Basic {token}", token, f"Bearer {token[:-1]}", f"Bearer {token}x",
        f"Bearer {flipped}", f"Bearer  {token}", f"Bearer {token.upper()}", "Bearer dshfs_", f"Token {token}",
    ]
    return [{} if value is None else {"authorization": value} for value in values]


def test_no_request_without_a_token_of_this_server_reaches_the_tools_or_the_files(
    served: tuple[str, Endpoint],
) -> None:
    root, endpoint = served
    token = endpoint.tokens[0]

    async def main() -> None:
        async with httpx2.AsyncClient(timeout=30) as http:
            session_id = await _open_session(http, endpoint)
            own = {"mcp-session-id": session_id, **endpoint.headers()}
            before = snapshot(root)
            attempts: list[tuple[str, Any, dict[str, str]]] = [
                ("POST", INITIALIZE, {}),
                ("POST", tool_call("read", {"file_path": "secret.txt"}), {"mcp-session-id": session_id}),
                ("POST", tool_call("write", {"file_path": "planted.txt", "content": "x"}), {"mcp-session-id": session_id}),
                ("GET", None, {"mcp-session-id": session_id}),
                ("DELETE", None, {"mcp-session-id": session_id}),
                ("POST", tool_call("read", {"file_path": "secret.txt"}, modern=True), {"mcp-protocol-version": "2026-07-28"}),
                ("POST", tool_call("write", {"file_path": "planted.txt", "content": "x"}, modern=True),
                 {"mcp-protocol-version": "2026-07-28"}),
            ]
            for method, body, extra in attempts:
                for forged in _forgeries(token):
                    with anyio.fail_after(60):
                        status, headers, answer = await raw_post(
                            http, endpoint.url, body, {**extra, **forged}, method=method
                        )
                    assert status == 401, (method, body, forged, status, answer)
                    assert headers["www-authenticate"].startswith('Bearer error="invalid_token"')
                    assert "private notes" not in str(answer)
            # the other agent's valid token does not open this agent's session
            other = {"mcp-session-id": session_id, **endpoint.headers(1)}
            for method, body in (("POST", tool_call("read", {"file_path": "secret.txt"})), ("DELETE", None)):
                status, _, answer = await raw_post(http, endpoint.url, body, other, method=method)
                assert status == 404 and "private notes" not in str(answer)
            assert snapshot(root) == before
            # and the agent's own session still works
            status, _, answer = await raw_post(http, endpoint.url, tool_call("read", {"file_path": "secret.txt"}), own)
            assert status == 200 and "private notes" in answer["result"]["content"][0]["text"]
            status, _, _ = await raw_post(http, endpoint.url, None, own, method="DELETE")
            assert status == 200

    anyio.run(main)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(value=st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0xFF, exclude_characters="\x7f"),
                     max_size=80))
def test_any_other_authorization_value_is_refused(served: tuple[str, Endpoint], value: str) -> None:
    assume(value == value.strip(" "))  # what HTTP can carry: no surrounding whitespace
    _, endpoint = served
    valid = {f"bearer {token}" for token in endpoint.tokens}

    async def main() -> int:
        async with httpx2.AsyncClient(timeout=30) as http:
            status, _, _ = await raw_post(http, endpoint.url, INITIALIZE, {"authorization": value.encode("latin-1")})
            return status

    status = anyio.run(main)
    assert status == (200 if value.lower() in valid or value in {f"Bearer {t}" for t in endpoint.tokens} else 401)


def test_a_token_is_compared_with_every_token_in_full(monkeypatch: pytest.MonkeyPatch) -> None:
    """No early exit: the work (and so the time) does not depend on which token matched, or
    how much of a wrong one did."""
    seen: list[tuple[bytes, bytes]] = []
    real = hmac.compare_digest

    def recording(a: bytes, b: bytes) -> bool:
        seen.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", recording)
    tokens = [f"dshfs_{'x' * 30}{i:02d}" for i in range(5)]
    verifier = BearerTokens(tokens)
    for presented, principal in ((tokens[0], "agent-1"), (tokens[4], "agent-5"), ("dshfs_wrong", None)):
        seen.clear()
        found = anyio.run(verifier.verify_token, presented)
        assert (found.client_id if found else None) == principal
        assert [b for _, b in seen] == [t.encode() for t in tokens]


# -- 12.2: sessions ---------------------------------------------------------------------------


def test_one_token_cannot_lock_out_the_others(served: tuple[str, Endpoint]) -> None:
    _, endpoint = served

    async def main() -> None:
        async with httpx2.AsyncClient(timeout=30) as http:
            opened = []
            for _ in range(30):  # a client that opens sessions and never ends them
                status, headers, answer = await raw_post(http, endpoint.url, INITIALIZE, endpoint.headers(0))
                if status != 200:
                    assert status == 503
                    assert answer["error"]["message"] == (
                        "too many open MCP sessions for this token (8): end one (HTTP DELETE) or wait for an"
                        " unused one to expire"
                    )
                    continue
                opened.append(headers["mcp-session-id"])
            assert len(opened) == 8
            # another agent is not affected
            status, headers, _ = await raw_post(http, endpoint.url, INITIALIZE, endpoint.headers(1))
            assert status == 200
            # ending one frees a place
            for session_id in opened:
                status, _, _ = await raw_post(
                    http, endpoint.url, None, {"mcp-session-id": session_id, **endpoint.headers(0)}, method="DELETE"
                )
                assert status == 200
            status, _, _ = await raw_post(http, endpoint.url, INITIALIZE, endpoint.headers(0))
            assert status == 200

    anyio.run(main)


def test_the_server_as_a_whole_holds_at_most_64_sessions(tmp_path: Any) -> None:
    root = os.path.realpath(tmp_path)

    async def main(endpoint: Endpoint) -> None:
        async with httpx2.AsyncClient(timeout=30) as http:
            for agent in range(8):
                for _ in range(8):
                    status, _, _ = await raw_post(http, endpoint.url, INITIALIZE, endpoint.headers(agent))
                    assert status == 200
            status, _, answer = await raw_post(http, endpoint.url, INITIALIZE, endpoint.headers(8))
            assert status == 503
            assert answer["error"]["message"].startswith("too many open MCP sessions (64)")

    with http_server(root, "--tokens", "9") as endpoint:
        anyio.run(main, endpoint)


SHORT = SessionLimits(per_principal=3, total=5, in_flight=3, unused_timeout=0.4, idle_timeout=1.5)
"""small bounds; the expiry test runs them on a clock of its own (``Clock``), so how busy the
machine is never decides whether a session has expired"""


class Clock:
    """The session table's clock, moved only by the test."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _expiring(sessions: Any) -> set[str]:
    return {session_id for session_id, _ in sessions.expired()}


def test_unused_and_idle_sessions_expire_with_their_observations(tmp_path: Any) -> None:
    root = os.path.realpath(tmp_path)
    with open(os.path.join(root, "a.txt"), "w", encoding="utf-8") as handle:
        handle.write("a\n")

    async def main() -> None:
        ctx = dsh_fs.create_context(cwd=root)
        async with serve_in_process(ctx, root, limits=SHORT) as served, httpx2.AsyncClient(timeout=30) as http:
            endpoint, sessions = served.endpoint, served.sessions
            clock = sessions._clock = Clock()
            unused = [await _open_session(http, endpoint) for _ in range(3)]
            status, _, _ = await raw_post(http, endpoint.url, INITIALIZE, endpoint.headers())
            assert status == 503  # the token's three places are taken
            assert _expiring(sessions) == set()
            clock.now += 0.5  # past the unused timeout
            assert _expiring(sessions) == set(unused)
            with anyio.fail_after(60):
                while len(sessions):  # closed at the next sweep
                    await anyio.sleep(0.05)
            for session_id in unused:  # the SDK forgot them too
                status, _, _ = await raw_post(
                    http, endpoint.url, tool_call("read", {"file_path": "a.txt"}), {"mcp-session-id": session_id, **endpoint.headers()}
                )
                assert status == 404

            used = await _open_session(http, endpoint)
            headers = {"mcp-session-id": used, **endpoint.headers()}
            status, _, answer = await raw_post(http, endpoint.url, tool_call("read", {"file_path": "a.txt"}), headers)
            assert status == 200 and answer["result"]["isError"] is False
            owner = weakref.ref(sessions.owner(used, "agent-1"))
            clock.now += 0.8  # past the unused timeout: a used session stays
            assert used in sessions and _expiring(sessions) == set()
            clock.now += 0.8  # 1.6 s without a request: idle
            assert _expiring(sessions) == {used}
            with anyio.fail_after(60):
                while used in sessions:  # closed at the next sweep
                    await anyio.sleep(0.05)
            gc.collect()
            assert owner() is None  # its observations went with it
            status, _, _ = await raw_post(http, endpoint.url, tool_call("read", {"file_path": "a.txt"}), headers)
            assert status == 404

    anyio.run(main)


def test_requests_in_flight_per_session_are_bounded(tmp_path: Any) -> None:
    root = os.path.realpath(tmp_path)

    class Stuck(dsh_fs.fs_local.LocalFileSystem):
        def __init__(self, **config: Any) -> None:
            super().__init__(**config)
            self.gate = anyio.Event()
            self.waiting = 0

        async def resolve(self, path: str, **kwargs: Any) -> Any:
            if path == "stuck.txt":
                self.waiting += 1
                await self.gate.wait()
            return await super().resolve(path, **kwargs)

    async def main() -> None:
        fs = Stuck(cwd=root)
        ctx = dsh_fs.create_context(cwd=root, provider=fs)
        # the SHORT bounds without expiry (a session must not expire meanwhile on a busy machine)
        limits = dataclasses.replace(SHORT, unused_timeout=600.0, idle_timeout=600.0)
        async with serve_in_process(ctx, root, limits=limits) as served, httpx2.AsyncClient(timeout=30) as http:
            endpoint = served.endpoint
            session_id = await _open_session(http, endpoint)
            headers = {"mcp-session-id": session_id, **endpoint.headers()}
            async with anyio.create_task_group() as tg:
                for index in range(3):
                    tg.start_soon(raw_post, http, endpoint.url, tool_call("read", {"file_path": "stuck.txt"}, id_=10 + index),
                                  headers)
                with anyio.fail_after(60):
                    while fs.waiting < 3:
                        await anyio.sleep(0.02)
                status, _, answer = await raw_post(http, endpoint.url, tool_call("read", {"file_path": "x"}), headers)
                assert status == 503
                assert answer["error"]["message"] == "too many requests in flight on this MCP session (3)"
                fs.gate.set()
            status, _, answer = await raw_post(http, endpoint.url, tool_call("read", {"file_path": "x"}), headers)
            assert status == 200  # room again

    anyio.run(main)


def test_an_owners_observations_are_bounded_and_a_forgotten_file_still_needs_a_read(tmp_path: Any) -> None:
    root = os.path.realpath(tmp_path)
    for index in range(4):
        with open(os.path.join(root, f"f{index}.txt"), "w", encoding="utf-8") as handle:
            handle.write(f"file {index}\n")

    async def main() -> None:
        ctx = build_context(ServeOptions(root=root, observations_per_owner=3))
        async with serve_in_process(ctx, root) as served, httpx2.AsyncClient(timeout=30) as http:
            endpoint = served.endpoint
            headers = {"mcp-session-id": await _open_session(http, endpoint), **endpoint.headers()}

            async def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
                status, _, answer = await raw_post(http, endpoint.url, tool_call(name, arguments), headers)
                assert status == 200
                return answer["result"]

            for index in range(4):
                assert (await call("read", {"file_path": f"f{index}.txt"}))["isError"] is False
            forgotten = await call("write", {"file_path": "f0.txt", "content": "blind\n"})
            assert forgotten["isError"] is True
            assert forgotten["_meta"]["dsh_fs"]["error"]["code"] == "FS_NOT_OBSERVED"
            kept = await call("edit", {"file_path": "f3.txt", "old_string": "file 3", "new_string": "edited"})
            assert kept["isError"] is False

    anyio.run(main)
    with open(os.path.join(root, "f0.txt"), encoding="utf-8") as handle:
        assert handle.read() == "file 0\n"
