"""``dsh_fs.mcp.http.serve_http`` in this process, spoken to over real sockets (loopback TCP
and Unix sockets): what a ``dsh-fs mcp --http`` subprocess shows only slowly, here in seconds.

* **Listening.** A free port for each server when none is named; a non-loopback host refused
  before anything is bound; a port held in ``TIME_WAIT`` by the last server can be bound again;
  a failed bind leaves no descriptor open; SIGTERM ends ``serve_http`` normally, with the
  previous signal handlers back and the socket closed.
* **Unix socket.** Its directory is created private (``0700``) and must stay so (a symlink or
  a group-accessible directory is refused); the socket is ``0600``; a stale socket is replaced,
  a live one or another file is not; the socket is removed on exit unless another took its
  place. No DNS-rebinding check there (no browser reaches it); over TCP a foreign ``Host`` is
  refused.
* **Sessions.** An unknown session id is the SDK's ``404 Session not found``; an expired
  session is ended in the SDK too (its place counts again); a token removed from the token file
  ends its sessions; stateless requests of a token are bounded in flight and give their place
  back; without auth a stateless request is ``-32022`` naming the handshake versions.

Not covered here: the same through a ``dsh-fs mcp`` process (``tests/e2e/mcp/test_mcp_http.py``),
attacks on the token and the limits (``tests/robustness/mcp/test_http_*.py``).
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import socket
import stat
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS

import dsh_fs
from dsh_fs.mcp import SessionLimits, mint_tokens, parse_listen, serve_http
from dsh_fs.mcp.http.auth import write_token_file
from dsh_fs.mcp.http.app import _bind_tcp, _bind_unix, check_private_dir
from httpkit import INITIALIZE, raw_post, tool_call

pytestmark = pytest.mark.timeout(120)

MODERN = "2026-07-28"


def _modern(tool: str) -> dict[str, str]:
    return {"mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": tool}


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _sockets() -> set[str]:
    """The sockets this process holds open (``socket:[inode]``)."""
    held = set()
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            target = os.readlink(f"/proc/self/fd/{fd}")
            if target.startswith("socket:"):
                held.add(target)
    return held


class Serving:
    """``serve_http`` running as a task: its announced URL and whether it has returned."""

    def __init__(self) -> None:
        self.urls: list[str] = []
        self.done = anyio.Event()


async def _stop(servers: list[Serving]) -> None:
    """SIGTERM this process once per running server (each signal reaches the server whose
    handler is on top), waiting for one to return each time."""
    for _ in servers:
        running = sum(not s.done.is_set() for s in servers)
        if running == 0:
            return
        os.kill(os.getpid(), signal.SIGTERM)
        with anyio.fail_after(60):
            while sum(not s.done.is_set() for s in servers) == running:
                await anyio.sleep(0.02)


@contextlib.asynccontextmanager
async def serving(root: str, count: int = 1, **options: Any) -> AsyncIterator[list[Serving]]:
    """Run ``count`` servers of ``root`` (``serve_http(**options)``) until the block ends,
    then stop them with SIGTERM; yields once every one has announced its URL."""
    ctx = dsh_fs.create_context(cwd=root)
    servers = [Serving() for _ in range(count)]

    async def run(server: Serving) -> None:
        try:
            await serve_http(ctx, root=root, announce=server.urls.append, **options)
        finally:
            server.done.set()

    async with anyio.create_task_group() as tg:
        for server in servers:
            tg.start_soon(run, server)
        with anyio.fail_after(60):
            while not all(s.urls for s in servers):
                assert not any(s.done.is_set() for s in servers), "serve_http returned before announcing"
                await anyio.sleep(0.01)
        try:
            yield servers
        finally:
            with anyio.CancelScope(shield=True):
                await _stop(servers)


async def _open(http: httpx2.AsyncClient, url: str, headers: dict[str, str]) -> dict[str, str]:
    status, answer_headers, answer = await raw_post(http, url, INITIALIZE, headers)
    assert status == 200, answer
    session = {"mcp-session-id": answer_headers["mcp-session-id"], **headers}
    await raw_post(http, url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    return session


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


# -- listening on TCP ---------------------------------------------------------------------------


def test_parse_listen_takes_the_highest_port_and_only_whole_brackets() -> None:
    assert parse_listen("127.0.0.1:65535") == ("127.0.0.1", 65535)
    for text in ("x::1]:80", "[::1:80"):  # a bracket on one side only is no IPv6 literal
        with pytest.raises(ValueError, match="only loopback addresses"):
            parse_listen(text)


def test_servers_without_a_port_each_get_a_free_one_and_sigterm_ends_them(tmp_path: Any) -> None:
    root = os.path.realpath(tmp_path)
    with open(os.path.join(root, "a.txt"), "w", encoding="utf-8") as handle:
        handle.write("alpha\n")
    (token,) = mint_tokens(1)
    previous = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)

    async def main() -> None:
        async with serving(root, 2, tokens=[token]) as servers:
            urls = [s.urls[0] for s in servers]
            assert len(set(urls)) == 2 and all(u.startswith("http://127.0.0.1:") and u.endswith("/mcp") for u in urls)
            async with httpx2.AsyncClient(timeout=30) as http:
                for url in urls:
                    status, _, _ = await raw_post(http, url, INITIALIZE)
                    assert status == 401  # the token is asked for
                    session = await _open(http, url, _bearer(token))
                    status, _, answer = await raw_post(http, url, tool_call("read", {"file_path": "a.txt"}), session)
                    assert status == 200 and "alpha" in answer["result"]["content"][0]["text"], answer
                    status, _, _ = await raw_post(http, url, INITIALIZE, {"host": "evil.example", **_bearer(token)})
                    assert status == 421  # DNS-rebinding protection over TCP
        assert all(s.done.is_set() for s in servers)
        async with httpx2.AsyncClient(timeout=60) as http:
            for url in urls:
                with pytest.raises(httpx2.ConnectError):  # the listening socket is closed
                    await http.get(url)
        # a server started later in this process still streams its answers (SSE)
        async with serving(root, tokens=[token]) as (again,), httpx2.AsyncClient(timeout=30) as http:
            session = await _open(http, again.urls[0], _bearer(token))
            status, _, answer = await raw_post(http, again.urls[0], tool_call("read", {"file_path": "a.txt"}), session)
            assert status == 200 and "alpha" in answer["result"]["content"][0]["text"], answer

    before = _fds()
    anyio.run(main)
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == previous
    assert _fds() <= before


def test_a_server_whose_startup_fails_announces_nothing_and_closes_its_socket(
        tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """``announce`` is called once connections are accepted: a server whose lifespan fails
    to start (the SDK's session manager, here) never announces its URL, and its socket is
    closed (uvicorn ends the startup failure with ``SystemExit(3)``)."""
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    @contextlib.asynccontextmanager
    async def broken(self: Any) -> AsyncIterator[None]:
        raise RuntimeError("the session manager cannot start")
        yield

    monkeypatch.setattr(StreamableHTTPSessionManager, "run", broken)
    ctx = dsh_fs.create_context(cwd=str(tmp_path))
    announced: list[str] = []
    before = _sockets()
    with pytest.raises(BaseException) as info:
        anyio.run(lambda: serve_http(ctx, root=str(tmp_path), tokens=None, announce=announced.append))
    assert info.group_contains(SystemExit) if isinstance(info.value, BaseExceptionGroup) else info.type is SystemExit
    assert announced == []
    assert _sockets() <= before  # the listening socket is closed


def test_a_non_loopback_host_is_refused_before_binding(tmp_path: Any) -> None:
    ctx = dsh_fs.create_context(cwd=str(tmp_path))
    before = _fds()
    with pytest.raises(ValueError, match="only loopback addresses"):
        anyio.run(lambda: serve_http(ctx, root=str(tmp_path), tokens=None, host="0.0.0.0", port=0))
    assert _fds() == before


def test_a_port_left_in_time_wait_can_be_bound_again() -> None:
    first = _bind_tcp("127.0.0.1", 0)
    port = first.getsockname()[1]
    assert first.getblocking() is False
    client = socket.create_connection(("127.0.0.1", port))
    first.setblocking(True)
    accepted, _ = first.accept()
    accepted.close()  # the server side closes first: its end of the connection waits in TIME_WAIT
    client.recv(1)
    client.close()
    first.close()
    again = _bind_tcp("127.0.0.1", port)
    try:
        assert again.getsockname()[1] == port
    finally:
        again.close()


def test_a_failed_bind_leaves_no_socket_open() -> None:
    held = _bind_tcp("127.0.0.1", 0)
    try:
        before = _fds()
        with pytest.raises(OSError) as info:
            _bind_tcp("127.0.0.1", held.getsockname()[1])  # another socket listens there
        assert info.value.errno == errno.EADDRINUSE
        assert _fds() == before
    finally:
        held.close()


# -- listening on a Unix socket -----------------------------------------------------------------


def test_a_unix_socket_in_a_private_directory_created_for_it(tmp_path: Any, short_tmp: str) -> None:
    root = os.path.realpath(tmp_path / "root")
    os.mkdir(root)
    path = os.path.join(short_tmp, "private", "mcp.sock")  # (a socket path fits 108 bytes)
    (token,) = mint_tokens(1)

    async def main() -> None:
        async with serving(root, tokens=[token], unix_socket=path) as (server,):
            assert server.urls == ["http://localhost/mcp"]
            assert stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode) == 0o700
            info = os.lstat(path)
            assert stat.S_ISSOCK(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o600
            transport = httpx2.AsyncHTTPTransport(uds=path)
            async with httpx2.AsyncClient(transport=transport, timeout=30) as http:
                # no DNS-rebinding check on a Unix socket: any Host is served
                session = await _open(http, "http://evil.example/mcp", _bearer(token))
                status, _, answer = await raw_post(http, "http://evil.example/mcp", tool_call("list", {"path": "."}),
                                                   session)
                assert status == 200 and answer["result"]["isError"] is False, answer
        assert not os.path.lexists(path)  # removed on exit

    anyio.run(main)


def test_a_stale_socket_is_replaced_and_a_live_one_or_a_file_is_not(short_tmp: str) -> None:
    directory = Path(short_tmp) / "run"  # (a socket path fits 108 bytes)
    check_private_dir(str(directory))
    path = str(directory / "mcp.sock")
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(path)
    stale.close()  # the file stays, nobody listens
    live = _bind_unix(path)
    try:
        assert stat.S_ISSOCK(os.lstat(path).st_mode)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            probe.connect(path)  # it listens
        with pytest.raises(OSError) as info:
            _bind_unix(path)
        assert info.value.errno == errno.EADDRINUSE and "another server is listening" in str(info.value)
        assert stat.S_ISSOCK(os.lstat(path).st_mode)
    finally:
        live.close()
        os.unlink(path)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("keep me\n")
    with pytest.raises(ValueError, match="exists and is not a socket"):
        _bind_unix(path)
    with open(path, encoding="utf-8") as handle:
        assert handle.read() == "keep me\n"


def test_a_socket_that_took_the_place_of_ours_is_left_alone_on_exit(tmp_path: Any, short_tmp: str) -> None:
    root = os.path.realpath(tmp_path)
    directory = Path(short_tmp) / "run"  # (a socket path fits 108 bytes)
    path = str(directory / "mcp.sock")

    async def main() -> None:
        async with serving(root, tokens=None, unix_socket=path):
            os.unlink(path)
            other = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            other.bind(path)
            other.close()
            kept = os.lstat(path).st_ino
        assert os.lstat(path).st_ino == kept

    anyio.run(main)


@pytest.mark.parametrize("kind", ["symlink", "group", "file"])
def test_an_unsafe_socket_directory_is_refused(tmp_path: Any, kind: str) -> None:
    real = tmp_path / "real"
    os.mkdir(real, 0o700)
    target = tmp_path / "dir"
    if kind == "symlink":
        os.symlink(real, target)
        message = "is not a directory"
    elif kind == "group":
        os.mkdir(target)
        os.chmod(target, 0o750)
        message = "accessible by other users"
    else:
        target.write_text("x")
        message = "is not a directory"
    with pytest.raises(ValueError, match=message):
        check_private_dir(str(target))
    with pytest.raises(ValueError, match=message):
        _bind_unix(str(target / "mcp.sock")) if kind != "file" else _bind_unix(str(target) + "/mcp.sock")
    assert not os.path.lexists(real / "mcp.sock")


# -- sessions -----------------------------------------------------------------------------------


def test_an_unknown_session_is_the_sdks_not_found(tmp_path: Any) -> None:
    root = os.path.realpath(tmp_path)
    (token,) = mint_tokens(1)

    async def main() -> None:
        async with serving(root, tokens=[token]) as (server,), httpx2.AsyncClient(timeout=30) as http:
            url = server.urls[0]
            for method, body in (("POST", tool_call("read", {"file_path": "a"})), ("GET", None), ("DELETE", None)):
                status, headers, answer = await raw_post(http, url, body, {"mcp-session-id": "nope", **_bearer(token)},
                                                         method=method)
                assert (status, answer) == (404, {"jsonrpc": "2.0", "id": None,
                                                  "error": {"code": -32600, "message": "Session not found"}})
                assert headers["content-type"] == "application/json"

    anyio.run(main)


def test_an_expired_session_is_ended_in_the_sdk_too(tmp_path: Any) -> None:
    """With room for one session, a new one opens once the unused one expired: the SDK's own
    table (``max_sessions``) let it go as well as ours."""
    root = os.path.realpath(tmp_path)
    (token,) = mint_tokens(1)
    limits = SessionLimits(per_principal=1, total=1, unused_timeout=0.3, idle_timeout=60)

    async def main() -> None:
        async with serving(root, tokens=[token], limits=limits) as (server,), httpx2.AsyncClient(timeout=30) as http:
            url = server.urls[0]
            first = await _open(http, url, _bearer(token))
            with anyio.fail_after(60):
                while True:
                    status, _, answer = await raw_post(http, url, INITIALIZE, _bearer(token))
                    if status == 200:
                        break
                    assert status == 503, answer  # until the first one expires
                    await anyio.sleep(0.1)
            status, _, _ = await raw_post(http, url, tool_call("read", {"file_path": "a"}), first)
            assert status == 404

    anyio.run(main)


def test_any_request_after_the_handshake_makes_a_session_used(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A session whose client only listed the tools is used (it stays past the unused
    timeout); one that only finished its handshake (``notifications/initialized``) is not.
    The session table runs on a clock the test moves (a busy machine never expires the listing
    session before it lists)."""
    from dsh_fs.mcp.http import app as http_app
    from dsh_fs.mcp.http.sessions import HttpSessions

    root = os.path.realpath(tmp_path)
    (token,) = mint_tokens(1)
    limits = SessionLimits(unused_timeout=0.3, idle_timeout=60)
    listing = {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}
    now, tables = [1000.0], []

    def table(cwd: str, *, limits: SessionLimits) -> HttpSessions:
        tables.append(HttpSessions(cwd, limits=limits, clock=lambda: now[0]))
        return tables[-1]

    monkeypatch.setattr(http_app, "HttpSessions", table)

    async def main() -> None:
        async with serving(root, tokens=[token], limits=limits) as (server,), httpx2.AsyncClient(timeout=30) as http:
            url = server.urls[0]
            lists = await _open(http, url, _bearer(token))
            idle = await _open(http, url, _bearer(token))
            status, _, answer = await raw_post(http, url, listing, lists)
            assert status == 200 and answer["result"]["tools"], answer
            now[0] += 1.5  # five times the unused timeout
            (sessions,) = tables
            with anyio.fail_after(60):
                while idle["mcp-session-id"] in sessions:  # ended at the next sweep
                    await anyio.sleep(0.05)
            status, _, _ = await raw_post(http, url, listing, idle)
            assert status == 404
            status, _, answer = await raw_post(http, url, listing, lists)
            assert status == 200 and answer["result"]["tools"], answer

    anyio.run(main)


def test_a_token_removed_from_the_file_ends_its_sessions(tmp_path: Any) -> None:
    root = os.path.realpath(tmp_path / "root")
    os.mkdir(root)
    private = tmp_path / "private"
    os.mkdir(private, 0o700)
    token_file = str(private / "tokens")
    kept, removed = mint_tokens(2)
    write_token_file(token_file, [kept, removed])
    limits = SessionLimits(per_principal=2, total=2)

    async def main() -> None:
        async with serving(root, tokens=[kept, removed], token_file=token_file, limits=limits) as (server,), \
                httpx2.AsyncClient(timeout=30) as http:
            url = server.urls[0]
            stays = await _open(http, url, _bearer(kept))
            goes = await _open(http, url, _bearer(removed))
            status, _, _ = await raw_post(http, url, INITIALIZE, _bearer(kept))
            assert status == 503  # the two places are taken
            os.unlink(token_file)
            write_token_file(token_file, [kept])  # seen by the watcher's next look (every second)
            with anyio.fail_after(60):
                while True:
                    try:
                        if (await raw_post(http, url, tool_call("read", {"file_path": "a"}), goes))[0] == 401:
                            break
                    except httpx2.RemoteProtocolError:
                        pass  # a call in flight as the session is ended has its stream cut: ask again
                    await anyio.sleep(0.05)
            status, _, _ = await raw_post(http, url, tool_call("read", {"file_path": "a"}), stays)
            assert status == 200
            # the revoked session was ended in the SDK too: its place is free again
            with anyio.fail_after(60):
                while True:
                    status, _, answer = await raw_post(http, url, INITIALIZE, _bearer(kept))
                    if status == 200:
                        break
                    assert status == 503, answer
                    await anyio.sleep(0.05)

    anyio.run(main)


def test_stateless_requests_of_a_token_are_bounded_in_flight_and_give_their_place_back(tmp_path: Any) -> None:
    root = os.path.realpath(tmp_path)
    with open(os.path.join(root, "a.txt"), "w", encoding="utf-8") as handle:
        handle.write("alpha\n")
    (token,) = mint_tokens(1)
    limits = SessionLimits(in_flight=1)

    async def main() -> None:
        async with serving(root, tokens=[token], limits=limits) as (server,), httpx2.AsyncClient(timeout=30) as http:
            url = server.urls[0]
            for _ in range(3):  # one at a time: each gives its place back
                status, _, answer = await raw_post(http, url, tool_call("read", {"file_path": "a.txt"}, modern=True),
                                                   {**_modern("read"), **_bearer(token)})
                assert status == 200 and "alpha" in answer["result"]["content"][0]["text"], answer

    anyio.run(main)


def test_without_auth_a_stateless_request_is_refused_naming_the_handshake(tmp_path: Any) -> None:
    root = os.path.realpath(tmp_path)
    with open(os.path.join(root, "a.txt"), "w", encoding="utf-8") as handle:
        handle.write("alpha\n")

    async def main() -> None:
        async with serving(root, tokens=None) as (server,), httpx2.AsyncClient(timeout=30) as http:
            url = server.urls[0]
            status, _, answer = await raw_post(http, url, tool_call("read", {"file_path": "a.txt"}, modern=True),
                                               _modern("read"))
            error = answer["error"]
            assert error["code"] == -32022, answer
            assert error["message"].startswith("dsh-fs mcp without authentication serves only the initialize handshake")
            assert error["data"] == {"supported": list(HANDSHAKE_PROTOCOL_VERSIONS), "requested": MODERN}
            session = await _open(http, url, {})
            status, _, answer = await raw_post(http, url, tool_call("read", {"file_path": "a.txt"}), session)
            assert status == 200 and "alpha" in answer["result"]["content"][0]["text"], answer

    anyio.run(main)


# -- connections --------------------------------------------------------------------------------


async def _exchange(stream: Any, head: bytes) -> bytes:
    """Send one request head (no body) and read its whole answer (a ``content-length`` body)."""
    await stream.send(head)
    data = b""
    with anyio.fail_after(60):
        while b"\r\n\r\n" not in data:
            data += await stream.receive()
        head_part, _, body = data.partition(b"\r\n\r\n")
        length = next(int(line.split(b":")[1]) for line in head_part.split(b"\r\n") if line.lower().startswith(b"content-length:"))
        while len(body) < length:
            body += await stream.receive()
    return head_part


async def _closed_by_server(stream: Any) -> bool:
    with anyio.fail_after(60):
        try:
            return await stream.receive() == b""
        except (anyio.EndOfStream, anyio.BrokenResourceError, ConnectionResetError):
            return True


@pytest.mark.parametrize("auth", [True, False])
def test_a_connection_is_proven_by_a_token_or_without_auth_by_any_request_head(tmp_path: Any, auth: bool) -> None:
    """With room for one unproven connection (``total=2, reserved=1``): a connection that was
    answered ``404`` without a token stays unproven and is the one closed when another arrives;
    without auth the same request proves it, so it stays open."""
    from dsh_fs.mcp.http.connections import ConnectionLimits

    root = os.path.realpath(tmp_path)
    tokens = mint_tokens(1) if auth else None
    limits = ConnectionLimits(total=2, reserved=1)

    async def main() -> None:
        async with serving(root, tokens=tokens, connections=limits) as (server,):
            port = int(server.urls[0].rsplit(":", 1)[1].split("/")[0])
            head = f"GET /elsewhere HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode()
            first = await anyio.connect_tcp("127.0.0.1", port)
            assert (await _exchange(first, head)).startswith(b"HTTP/1.1 404")
            second = await anyio.connect_tcp("127.0.0.1", port)
            try:
                if auth:
                    assert await _closed_by_server(first)  # unproven: the oldest gives way
                else:
                    assert (await _exchange(first, head)).startswith(b"HTTP/1.1 404")  # proven: still served
            finally:
                await first.aclose()
                await second.aclose()

    anyio.run(main)
