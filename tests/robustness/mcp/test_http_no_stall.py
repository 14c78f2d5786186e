"""One HTTP client must never stall, starve or impersonate the others (``dsh-fs mcp --http``).

Each test is an attack run against a real ``dsh-fs mcp --http`` process over loopback, while
another token's call must still answer promptly; the server's peak memory (``VmHWM``) is
read from ``/proc`` where the attack is about memory.

* **Session binding on every path.** Token B carrying token A's ``Mcp-Session-Id`` on a
  stateless 2026-07-28 request is answered ``404``, as on the handshake path: B cannot
  edit a file only A read.
* **No work before authentication.** A 30 MB body without a token is answered ``401``
  from its headers (the body is never held); an authenticated body over the limit gets
  ``413``, from its ``Content-Length`` or as it streams; another token's reads are answered
  while the attackers still hold their bodies half sent, and the server stays under
  ``MEMORY_BOUND``.
* **Idle connections** (``test_idle_connections_*``): connections that never send a
  complete request cannot take the capacity authenticated clients need (a read is answered
  while all of them are still open), and are closed after the header timeout.

"Not stalled" is judged by order, never by a wall-clock budget: the other client's answer
must arrive while the attack is still holding what it holds, so a server that served it only
after the attack ended (or timed out) fails the test however busy the machine is.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

import httpx2  # noqa: E402  (after the importorskip)

from httpkit import INITIALIZE, Endpoint, HttpServer, raw_post, tool_call  # noqa: E402
from robustkit import snapshot  # noqa: E402

pytestmark = pytest.mark.timeout(120)

MEMORY_BOUND = 200 * 1024 * 1024
"""peak resident bytes the server may reach during an attack (it idles near 70 MB)"""
SECRET = "the serving user's private notes\n"


def _modern(tool: str) -> dict[str, str]:
    """The routing headers of a stateless 2026-07-28 ``tools/call`` of ``tool``."""
    return {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": tool}



class Served:
    """A running ``dsh-fs mcp --http --tokens 2`` process: endpoint, pid, root."""

    def __init__(self, server: HttpServer, endpoint: Endpoint, root: str) -> None:
        self.server, self.endpoint, self.root = server, endpoint, root
        self.port = int(endpoint.url.rsplit(":", 1)[1].split("/", 1)[0])

    def peak_memory(self) -> int:
        """The server's peak resident set (``VmHWM``) in bytes."""
        with open(f"/proc/{self.server.proc.pid}/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
        raise AssertionError("no VmHWM")

    def connect(self) -> socket.socket:
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=60)
        return sock

    def head(self, *, length: int | None, token: str | None, chunked: bool = False) -> bytes:
        lines = [
            "POST /mcp HTTP/1.1",
            f"Host: 127.0.0.1:{self.port}",
            "Content-Type: application/json",
            "Accept: application/json, text/event-stream",
        ]
        if length is not None:
            lines.append(f"Content-Length: {length}")
        if chunked:
            lines.append("Transfer-Encoding: chunked")
        if token is not None:
            lines.append(f"Authorization: Bearer {token}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("ascii")


@pytest.fixture
def served(tmp_path: Any) -> Iterator[Served]:
    root = os.path.realpath(tmp_path)
    with open(os.path.join(root, "secret.txt"), "w", encoding="utf-8") as handle:
        handle.write(SECRET)
    server = HttpServer(root, "--tokens", "2")
    try:
        while (endpoint := server.endpoint()) is None:
            time.sleep(0.02)
        yield Served(server, endpoint, root)
    finally:
        server.stop()


async def _open_session(http: httpx2.AsyncClient, endpoint: Endpoint, agent: int) -> dict[str, str]:
    status, headers, answer = await raw_post(http, endpoint.url, INITIALIZE, endpoint.headers(agent))
    assert status == 200, answer
    session = {"mcp-session-id": headers["mcp-session-id"], **endpoint.headers(agent)}
    await raw_post(http, endpoint.url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    return session


async def _read(http: httpx2.AsyncClient, endpoint: Endpoint, agent: int = 1) -> None:
    """One stateless ``read`` of ``secret.txt`` by ``agent``; it must succeed."""
    status, _, answer = await raw_post(
        http, endpoint.url, tool_call("read", {"file_path": "secret.txt"}, modern=True),
        {**_modern("read"), **endpoint.headers(agent)},
    )
    assert status == 200 and "private notes" in answer["result"]["content"][0]["text"], answer


# -- session binding -----------------------------------------------------------------------------


def test_a_token_cannot_use_another_tokens_session_on_the_stateless_path(served: Served) -> None:
    endpoint = served.endpoint

    async def main() -> None:
        async with httpx2.AsyncClient(timeout=30) as http:
            own = await _open_session(http, endpoint, 0)
            status, _, answer = await raw_post(http, endpoint.url, tool_call("read", {"file_path": "secret.txt"}), own)
            assert status == 200 and answer["result"]["isError"] is False
            before = snapshot(served.root)
            stolen = {"mcp-session-id": own["mcp-session-id"], **endpoint.headers(1)}
            edit = tool_call("edit", {"file_path": "secret.txt", "old_string": "private", "new_string": "stolen"},
                         modern=True)
            read = tool_call("read", {"file_path": "secret.txt"}, modern=True)
            for method, body, tool in (("POST", edit, "edit"), ("POST", read, "read"), ("GET", None, "read"),
                                       ("DELETE", None, "read")):
                status, _, answer = await raw_post(http, endpoint.url, body, {**stolen, **_modern(tool)}, method=method)
                assert status == 404, (method, status, answer)
                assert answer["error"]["message"] == "Session not found"
            assert snapshot(served.root) == before
            # the owner's session is intact, also on the stateless path
            status, _, answer = await raw_post(http, endpoint.url, edit, {**own, **_modern("edit")})
            assert status == 200 and answer["result"]["isError"] is False, answer

    anyio.run(main)


# -- no work before authentication ---------------------------------------------------------------


def _stream(sock: socket.socket, total: int, *, chunked: bool = False,
            hold: threading.Event | None = None) -> None:
    """Send ``total`` bytes of body (JSON-ish digits) as fast as the server takes them;
    stops quietly when the server closes. With ``hold``, the first piece is sent, then the
    rest waits until ``hold`` is set (the body stays half sent meanwhile)."""
    piece = b"1" * (256 * 1024)
    sent = 0
    try:
        while sent < total:
            if hold is not None and sent == len(piece):
                hold.wait(60)
            if chunked:
                sock.sendall(b"%x\r\n" % len(piece) + piece + b"\r\n")
            else:
                sock.sendall(piece)
            sent += len(piece)
    except OSError:
        pass


def _status(sock: socket.socket) -> int:
    """The status code of the first response on ``sock``."""
    data = b""
    while b"\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            raise AssertionError(f"closed without an answer: {data!r}")
        data += chunk
    return int(data.split(b" ", 2)[1])


def test_a_huge_body_without_a_token_costs_nothing_and_stalls_no_one(served: Served) -> None:
    endpoint = served.endpoint
    size = 30 * 1024 * 1024
    attackers = [served.connect() for _ in range(3)]
    statuses: list[int] = []

    released = threading.Event()

    def attack(sock: socket.socket) -> None:
        sock.sendall(served.head(length=size, token=None))
        _stream(sock, size, hold=released)

    def answer(sock: socket.socket) -> None:
        statuses.append(_status(sock))

    threads = [threading.Thread(target=attack, args=(sock,)) for sock in attackers]
    threads += [threading.Thread(target=answer, args=(sock,)) for sock in attackers]

    async def main() -> None:
        async with httpx2.AsyncClient(timeout=30) as http:
            await _read(http, endpoint)  # warm
            for thread in threads:
                thread.start()
            for _ in range(5):  # answered while every attacker holds its body half sent
                await _read(http, endpoint)
            assert not released.is_set()

    try:
        anyio.run(main)
        released.set()
        for thread in threads:
            thread.join(60)
    finally:
        for sock in attackers:
            sock.close()
    assert statuses == [401, 401, 401]
    assert served.peak_memory() < MEMORY_BOUND


@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "streamed"])
def test_an_authenticated_body_over_the_limit_is_refused_without_being_held(served: Served, declared: bool) -> None:
    endpoint = served.endpoint
    size = 30 * 1024 * 1024
    sock = served.connect()
    try:
        if declared:
            sock.sendall(served.head(length=size, token=endpoint.tokens[0]))
            assert _status(sock) == 413  # from the header alone: nothing sent yet
        else:
            sock.sendall(served.head(length=None, token=endpoint.tokens[0], chunked=True))
            sender = threading.Thread(target=_stream, args=(sock, size), kwargs={"chunked": True})
            sender.start()
            assert _status(sock) == 413
            sender.join(60)
    finally:
        sock.close()

    async def main() -> None:
        async with httpx2.AsyncClient(timeout=30) as http:
            await _read(http, endpoint)

    anyio.run(main)
    assert served.peak_memory() < MEMORY_BOUND


# -- idle connections ----------------------------------------------------------------------------


def _response(sock: socket.socket) -> int:
    """Read one whole response (it must have a ``content-length``); its status code."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise AssertionError(f"closed mid-response: {data!r}")
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    length = next(int(line.split(b":", 1)[1]) for line in lines if line.lower().startswith(b"content-length:"))
    while len(rest) < length:
        chunk = sock.recv(65536)
        assert chunk, "closed mid-body"
        rest += chunk
    return int(lines[0].split(b" ", 2)[1])


def _closed_by_server(sock: socket.socket, within: float) -> bool:
    """Whether the server closes ``sock`` (without answering anything) within ``within`` s."""
    sock.settimeout(within)
    try:
        return sock.recv(65536) == b""
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True


HALF_A_HEADER = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: appl"


def test_idle_connections_cannot_lock_out_a_token(tmp_path: Any) -> None:
    """The default limits but a header timeout far beyond any wait of this test (in process, as
    the server command has no flag for it): the read is answered while the idle connections
    still hold their places, however slow the machine; a server that served it only once its
    header timeout had closed them would not answer it at all."""
    import dsh_fs
    from dsh_fs.mcp.http.connections import ConnectionLimits
    from httpkit import serve_in_process

    root = os.path.realpath(tmp_path)
    with open(os.path.join(root, "secret.txt"), "w", encoding="utf-8") as handle:
        handle.write(SECRET)
    limits = ConnectionLimits(header_timeout=3600)

    async def main() -> None:
        async with serve_in_process(dsh_fs.create_context(cwd=root), root, connections=limits) as served:
            port = int(served.endpoint.url.rsplit(":", 1)[1].split("/", 1)[0])

            def connect() -> list[socket.socket]:
                socks = [socket.create_connection(("127.0.0.1", port), timeout=30) for _ in range(300)]
                for sock in socks[::3]:
                    sock.sendall(HALF_A_HEADER)
                return socks

            idle = await anyio.to_thread.run_sync(connect)
            try:
                async with httpx2.AsyncClient(timeout=120) as http:
                    await _read(http, served.endpoint)
                # the places past the unreserved share were taken back; the others still held
                open_ = 0
                for sock in idle:
                    sock.setblocking(False)
                    try:
                        open_ += sock.recv(1) != b""
                    except BlockingIOError:
                        open_ += 1
                    except OSError:
                        pass
                assert open_ > 0, "the read was served only after the idle connections were closed"
            finally:
                for sock in idle:
                    sock.close()

    anyio.run(main)


def test_idle_connections_are_closed_after_the_header_timeout(tmp_path: Any) -> None:
    import dsh_fs
    from dsh_fs.mcp.http.connections import ConnectionLimits
    from httpkit import serve_in_process

    root = os.path.realpath(tmp_path)
    limits = ConnectionLimits(total=40, reserved=10, header_timeout=2.0, keep_alive=30)

    async def main() -> None:
        async with serve_in_process(dsh_fs.create_context(cwd=root), root, connections=limits) as served:
            port = int(served.endpoint.url.rsplit(":", 1)[1].split("/", 1)[0])
            token = served.endpoint.tokens[0]

            def run() -> None:
                request = (f"DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n"
                           "\r\n").encode("ascii")
                silent = [socket.create_connection(("127.0.0.1", port)) for _ in range(5)]
                slow = [socket.create_connection(("127.0.0.1", port)) for _ in range(5)]
                # its request head right after connecting: well within the header timeout
                answered = socket.create_connection(("127.0.0.1", port))
                answered.sendall(request)
                try:
                    for sock in slow:
                        sock.sendall(HALF_A_HEADER)
                    answered.settimeout(60)
                    _response(answered)  # then it idles: its next request head has the deadline too
                    for sock in (*silent, *slow, answered):
                        assert _closed_by_server(sock, 60.0)  # waits for the close; 60 s is a hang guard
                finally:
                    for sock in (*silent, *slow, answered):
                        sock.close()

            await anyio.to_thread.run_sync(run)

    anyio.run(main)


def test_a_share_of_the_connections_is_kept_for_authenticated_ones(tmp_path: Any) -> None:
    import dsh_fs
    from dsh_fs.mcp.http.connections import ConnectionLimits
    from httpkit import serve_in_process

    root = os.path.realpath(tmp_path)
    limits = ConnectionLimits(total=30, reserved=10, header_timeout=60, keep_alive=60)

    async def main() -> None:
        async with serve_in_process(dsh_fs.create_context(cwd=root), root, connections=limits) as served:
            port = int(served.endpoint.url.rsplit(":", 1)[1].split("/", 1)[0])
            token = served.endpoint.tokens[0]
            request = (f"DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n"
                       "\r\n").encode("ascii")

            def run() -> None:
                proven = [socket.create_connection(("127.0.0.1", port), timeout=60) for _ in range(15)]
                idle: list[socket.socket] = []
                try:
                    statuses = set()
                    for sock in proven:
                        sock.sendall(request)
                        statuses.add(_response(sock))
                    idle = [socket.create_connection(("127.0.0.1", port), timeout=60) for _ in range(100)]
                    for sock in proven:  # every authenticated connection kept its place
                        sock.sendall(request)
                        assert _response(sock) in statuses
                    # The server closes the idle connections past its unreserved places as it
                    # accepts them; wait for that (bounded by the guard, not by a budget).
                    still_open = len(idle)
                    for _ in range(1200):
                        still_open = sum(not _closed_by_server(sock, 0.001) for sock in idle)
                        if still_open <= limits.total - limits.reserved:
                            break
                        time.sleep(0.05)
                    assert still_open <= limits.total - limits.reserved
                    late = socket.create_connection(("127.0.0.1", port), timeout=60)
                    idle.append(late)
                    late.sendall(request)  # a newcomer with a token still gets in
                    assert _response(late) in statuses
                finally:
                    for sock in (*proven, *idle):
                        sock.close()

            await anyio.to_thread.run_sync(run)

    anyio.run(main)
