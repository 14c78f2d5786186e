"""One token cannot lock the others out of HTTP (``mcp.http.connections``).

The attack: a valid token opens request after request with complete headers and a body that
never arrives; each connection was proven (it showed a token) and kept its place with no
deadline, so 256 of them held every place (every other token got ``503``), and revoking the
token did not close them. Now one token may hold ``per_token`` proven connections (the next
request gets ``503`` and is closed), a request body must arrive within ``body_timeout`` of its
head, and a token the token file drops has its connections closed at once.
"""

from __future__ import annotations

import os
import select
import signal
import socket
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

import httpx2  # noqa: E402

import dsh_fs  # noqa: E402
from dsh_fs.mcp.http.connections import ConnectionLimits  # noqa: E402
from httpkit import INITIALIZE, HttpServer, raw_post, serve_in_process  # noqa: E402

pytestmark = pytest.mark.timeout(180)


def _headers_without_body(port: int, token: str) -> bytes:
    return (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n"
            "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
            "Content-Length: 1000\r\n\r\n{").encode("ascii")


def _status_or_closed(sock: socket.socket, within: float) -> int | None:
    """The status of what the server sends on ``sock`` within ``within`` s (``0``: it closed
    the connection without a word); ``None``: nothing came."""
    sock.settimeout(within)
    try:
        data = sock.recv(65536)
    except TimeoutError:
        return None
    except ConnectionResetError:
        return 0
    return int(data.split(b" ", 2)[1]) if data else 0


def _answers(socks: list[socket.socket], answering: int) -> list[int | None]:
    """``_status_or_closed`` of each of ``socks``, once ``answering`` of them have answered (a
    wait bounded by a 60 s guard, not a budget: however slow the server, the refusals are
    awaited); the others are then given 0.5 s more, so a late extra answer is still seen."""
    answers: dict[socket.socket, int | None] = {}
    deadline = time.monotonic() + 60
    while len(answers) < answering and time.monotonic() < deadline:
        ready, _, _ = select.select([s for s in socks if s not in answers], [], [], 0.05)
        for sock in ready:
            answers[sock] = _status_or_closed(sock, 60)
    return [answers[sock] if sock in answers else _status_or_closed(sock, 0.5) for sock in socks]


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1].split("/", 1)[0])


def test_a_token_holds_only_its_share_and_a_body_must_arrive(tmp_path: Any) -> None:
    root = os.path.realpath(tmp_path)
    limits = ConnectionLimits(total=20, reserved=8, per_token=4, header_timeout=60, keep_alive=60, body_timeout=60)

    async def main() -> None:
        async with serve_in_process(dsh_fs.create_context(cwd=root), root, connections=limits) as served:
            endpoint = served.endpoint
            greedy, other = endpoint.tokens
            port = _port(endpoint.url)

            holding, other_in = threading.Event(), threading.Event()

            def attack() -> list[int | None]:
                held: list[socket.socket] = []
                try:
                    held = [socket.create_connection(("127.0.0.1", port), timeout=60) for _ in range(limits.total)]
                    for sock in held:
                        sock.sendall(_headers_without_body(port, greedy))
                    answers = _answers(held, limits.total - limits.per_token)
                    holding.set()
                    other_in.wait(60)  # a guard only: the share is held until the other agent got in
                    return answers
                finally:
                    holding.set()
                    for sock in held:
                        sock.close()

            async with httpx2.AsyncClient(timeout=30) as http:
                async with anyio.create_task_group() as tg:
                    answers: list[int | None] = []

                    async def run() -> None:
                        answers.extend(await anyio.to_thread.run_sync(attack))

                    tg.start_soon(run)
                    await anyio.to_thread.run_sync(holding.wait, 60)  # the greedy one holds its share (a guard)
                    try:
                        status, _, _ = await raw_post(http, endpoint.url, INITIALIZE,
                                                      {"authorization": f"Bearer {other}"})
                    finally:
                        other_in.set()
                    assert status == 200  # the other agent gets in while the greedy one holds its share
                assert answers.count(None) == limits.per_token  # its share: waiting for bodies
                assert all(answer in (503, 0) for answer in answers if answer is not None)  # the rest refused

    anyio.run(main)


def test_a_body_that_never_arrives_loses_its_place(tmp_path: Any) -> None:
    root = os.path.realpath(tmp_path)
    limits = ConnectionLimits(total=20, reserved=8, per_token=4, header_timeout=60, keep_alive=60, body_timeout=0.5)

    async def main() -> None:
        async with serve_in_process(dsh_fs.create_context(cwd=root), root, connections=limits) as served:
            endpoint = served.endpoint
            port = _port(endpoint.url)

            def run() -> None:
                stalled = [socket.create_connection(("127.0.0.1", port), timeout=60) for _ in range(4)]
                try:
                    for sock in stalled:
                        sock.sendall(_headers_without_body(port, endpoint.tokens[0]))
                    assert all(_status_or_closed(sock, 60) is not None for sock in stalled)  # closed, not kept (60 s: a guard)
                    again = socket.create_connection(("127.0.0.1", port), timeout=60)
                    stalled.append(again)
                    body = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
                    again.sendall(_headers_without_body(port, endpoint.tokens[0]).replace(b"Content-Length: 1000",
                                  f"Content-Length: {len(body)}".encode()).removesuffix(b"{") + body)
                    assert _status_or_closed(again, 60) not in (None, 0, 503)  # the token has its places back
                finally:
                    for sock in stalled:
                        sock.close()

            await anyio.to_thread.run_sync(run)

    anyio.run(main)


def test_a_revoked_tokens_connections_are_closed(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    token_file = private / "tokens"
    server = HttpServer(str(root), "--token-file", str(token_file), "--tokens", "2")
    try:
        while (endpoint := server.endpoint()) is None:
            time.sleep(0.02)
        keep, revoked = endpoint.tokens
        port = _port(endpoint.url)
        held = [socket.create_connection(("127.0.0.1", port), timeout=60) for _ in range(3)]
        kept = socket.create_connection(("127.0.0.1", port), timeout=60)
        try:
            for sock in held:
                sock.sendall(_headers_without_body(port, revoked))
            kept.sendall(_headers_without_body(port, keep))
            assert all(_status_or_closed(sock, 0.3) is None for sock in (*held, kept))  # all held, waiting
            token_file.write_text(f"{keep}\n")
            server.proc.send_signal(signal.SIGHUP)
            assert all(_status_or_closed(sock, 60) == 0 for sock in held)  # closed without a word (60 s: a guard)
            assert _status_or_closed(kept, 0.3) is None  # the kept token's request still waits for its body
        finally:
            for sock in (*held, kept):
                sock.close()
    finally:
        server.stop()


def test_the_default_share_leaves_room_for_another_token() -> None:
    limits = ConnectionLimits()
    assert limits.per_token < limits.reserved and limits.body_timeout > 0
