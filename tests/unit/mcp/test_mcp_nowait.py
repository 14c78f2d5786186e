"""The stdio wire without thread hops (``mcp/nowait.py``): lines of a pipe read and written on
the event loop thread with ``RWF_NOWAIT``; everything else in a thread, as before."""

from __future__ import annotations

import asyncio
import io
import json
import os
import socket
import threading
from contextlib import suppress
from typing import Any

import anyio
import mcp.types as types
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp.shared.message import SessionMessage

from dsh_fs.mcp import nowait
from dsh_fs.mcp.stdio import PARSE_INLINE_MAX, stdio_transport


def _no_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    async def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a worker thread was used")

    monkeypatch.setattr(nowait.anyio.to_thread, "run_sync", refuse)


def _drain(fd: int, into: bytearray) -> threading.Thread:
    def run() -> None:
        with os.fdopen(fd, "rb", buffering=0) as pipe:
            while chunk := pipe.read(65536):
                into.extend(chunk)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_a_line_the_pipe_has_room_for_goes_out_without_a_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    _no_threads(monkeypatch)
    read_end, write_end = os.pipe()
    with os.fdopen(write_end, "wb") as stdout:
        wire = nowait.Wire(stdout)
        anyio.run(wire.write, b'{"jsonrpc":"2.0","id":1,"result":{}}\n')
        anyio.run(wire.write, b"x" * 20000 + b"\n")
    with os.fdopen(read_end, "rb") as wire_out:
        assert wire_out.read() == b'{"jsonrpc":"2.0","id":1,"result":{}}\n' + b"x" * 20000 + b"\n"


def test_a_line_bigger_than_the_pipe_reaches_it_whole_and_in_order() -> None:
    read_end, write_end = os.pipe()
    got = bytearray()
    lines = [(b"%d:" % i) + bytes([97 + i]) * (300_000 if i % 2 else 10) + b"\n" for i in range(6)]
    drainer = _drain(read_end, got)

    async def main() -> None:
        with os.fdopen(write_end, "wb") as stdout:
            wire = nowait.Wire(stdout)
            for line in lines:
                await wire.write(line)

    anyio.run(main)
    drainer.join(10)
    assert bytes(got) == b"".join(lines)


def test_a_regular_file_is_written_through_the_thread(tmp_path: Any) -> None:
    path = tmp_path / "out.jsonl"
    with open(path, "wb") as stdout:
        wire = nowait.Wire(stdout)
        anyio.run(wire.write, b"one\n")
        anyio.run(wire.write, b"two\n")
        assert wire._fd is None  # RWF_NOWAIT refused once, then never tried again
    assert path.read_bytes() == b"one\ntwo\n"


def test_a_stream_without_a_descriptor_is_written_through_the_thread() -> None:
    out = io.BytesIO()
    wire = nowait.Wire(out)
    anyio.run(wire.write, b"line\n")
    assert out.getvalue() == b"line\n"


def test_a_broken_pipe_is_reported() -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)
    with os.fdopen(write_end, "wb") as stdout:
        wire = nowait.Wire(stdout)
        with pytest.raises(BrokenPipeError):
            anyio.run(wire.write, b"line\n")


def test_lines_of_takes_only_pipes_and_sockets_nothing_can_hide_in(tmp_path: Any) -> None:
    path = tmp_path / "in.jsonl"
    path.write_bytes(b"{}\n")
    read_end, write_end = os.pipe()
    left, right = socket.socketpair()
    try:
        with open(path, "rb", buffering=0) as regular:
            assert nowait.lines_of(regular) is None  # epoll cannot wait for a regular file
        assert nowait.lines_of(io.BytesIO(b"{}\n")) is None
        buffered = os.fdopen(os.dup(read_end), "rb")
        assert nowait.lines_of(buffered) is None  # bytes might wait in its buffer
        assert isinstance(nowait.lines_of(buffered, fresh=True), nowait.LineReader)  # opened by the transport
        buffered.close()
        raw = os.fdopen(os.dup(read_end), "rb", buffering=0)
        assert isinstance(nowait.lines_of(raw), nowait.LineReader)
        raw.close()
        sock = left.makefile("rb", buffering=0)
        assert isinstance(nowait.lines_of(sock), nowait.LineReader)
        sock.close()
    finally:
        os.close(read_end)
        os.close(write_end)
        left.close()
        right.close()


async def _all_lines(reader: nowait.LineReader) -> list[bytes]:
    lines = []
    while line := await reader.readline():
        lines.append(line)
    assert await reader.readline() == b""  # the end stays the end
    return lines


def _read_all(kind: str, fd: int, preread: bytes = b"") -> list[bytes]:
    """Every line of ``fd`` through a ``LineReader`` or an ``Inbox`` (made on the running loop)."""
    if kind == "line_reader":
        return anyio.run(_all_lines, nowait.LineReader(fd, preread))

    async def main() -> list[bytes]:
        with os.fdopen(os.dup(fd), "rb", buffering=0) as stream:
            inbox = nowait.lines_of(stream, preread)
            assert isinstance(inbox, nowait.Inbox)
            try:
                return await _all_lines(inbox)
            finally:
                inbox.close()

    return asyncio.run(main())


READERS = ["line_reader", "inbox"]


@settings(max_examples=60, deadline=None)
@given(
    kind=st.sampled_from(READERS),
    preread=st.binary(max_size=40).map(lambda b: b.replace(b"\x00", b"\n")),
    chunks=st.lists(st.binary(max_size=200).map(lambda b: b.replace(b"\x00", b"\n")), max_size=12),
)
def test_the_lines_are_those_of_readline_however_the_bytes_arrive(kind: str, preread: bytes,
                                                                   chunks: list[bytes]) -> None:
    read_end, write_end = os.pipe()

    def feed() -> None:
        with os.fdopen(write_end, "wb", buffering=0) as pipe:
            for chunk in chunks:
                pipe.write(chunk)

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    try:
        got = _read_all(kind, read_end, preread)
    finally:
        feeder.join(10)
        os.close(read_end)
    expected = io.BytesIO(preread + b"".join(chunks)).readlines()
    assert got == expected


@pytest.mark.parametrize("kind", READERS)
def test_a_line_longer_than_one_read_is_one_line(kind: str) -> None:
    read_end, write_end = os.pipe()
    big = b"y" * (3 * nowait.READ_SIZE + 7) + b"\n"
    feeder = threading.Thread(target=lambda: os.write(write_end, big + b"tail") and os.close(write_end), daemon=True)
    feeder.start()
    try:
        got = _read_all(kind, read_end)
    finally:
        feeder.join(10)
        os.close(read_end)
    assert got == [big, b"tail"]


def _echo(stdin: Any, stdout: Any, *, hold_default_threads: bool = False) -> list[Any]:
    """Serve an echo server on our transport until the end of input; the messages it saw.
    ``hold_default_threads``: every default worker thread is busy (a stuck tool call) meanwhile."""
    seen: list[Any] = []
    release = threading.Event()

    async def serve() -> None:
        if hold_default_threads:
            anyio.to_thread.current_default_thread_limiter().total_tokens = 1
        async with anyio.create_task_group() as tg:
            if hold_default_threads:
                tg.start_soon(lambda: anyio.to_thread.run_sync(release.wait, abandon_on_cancel=True))
            await echo()
            release.set()

    async def echo() -> None:
        with anyio.fail_after(20):
            async with stdio_transport(stdin, stdout) as (read_stream, write_stream):
                async with write_stream:
                    async for item in read_stream:
                        assert isinstance(item, SessionMessage)
                        seen.append(item.message)
                        if isinstance(item.message, types.JSONRPCRequest):
                            size = len(json.dumps(item.message.params))
                            await write_stream.send(SessionMessage(
                                types.JSONRPCResponse(jsonrpc="2.0", id=item.message.id, result={"size": size})
                            ))

    anyio.run(serve)
    return seen


@pytest.mark.parametrize("hold_default_threads", [False, True])
def test_the_transport_serves_an_unbuffered_pipe_on_the_event_loop_thread(
    monkeypatch: pytest.MonkeyPatch, hold_default_threads: bool
) -> None:
    """No stdin thread, no writer thread: every request answered in order, garbage answered,
    a line too long to parse on the event loop thread parsed in a thread of its own (even
    while tool calls hold every default worker thread) and still in order."""
    started: list[str] = []
    real_start = threading.Thread.start

    def start(thread: threading.Thread) -> None:
        started.append(thread.name)
        real_start(thread)

    monkeypatch.setattr(threading.Thread, "start", start)
    long_text = "z" * (PARSE_INLINE_MAX + 10)
    lines = [
        '{"jsonrpc":"2.0","id":1,"method":"ping","params":{}}',
        "garbage",
        '{"jsonrpc":"2.0","id":2,"method":"ping","params":{"t":"' + long_text + '"}}',
        '{"jsonrpc":"2.0","id":3,"method":"ping","params":{}}',
    ]
    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    got = bytearray()
    drainer = _drain(out_read, got)
    feeder = threading.Thread(
        target=lambda: os.write(in_write, "".join(line + "\n" for line in lines).encode()) and os.close(in_write),
        daemon=True,
    )
    real_start(feeder)
    with os.fdopen(in_read, "rb", buffering=0) as stdin, os.fdopen(out_write, "wb") as stdout:
        seen = _echo(stdin, stdout, hold_default_threads=hold_default_threads)
    feeder.join(10)
    drainer.join(10)
    assert "dsh-fs mcp stdin" not in started
    replies = [json.loads(line) for line in got.decode().splitlines()]
    results = [r for r in replies if "result" in r]
    assert [r["id"] for r in results] == [1, 2, 3]
    assert results[1]["result"] == {"size": len(json.dumps({"t": long_text}))}
    assert [(r["id"], r["error"]["code"]) for r in replies if "error" in r] == [(None, types.PARSE_ERROR)]
    assert [m.id for m in seen] == [1, 2, 3]


def test_a_buffered_stdin_handed_in_is_still_read_by_the_thread() -> None:
    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    os.write(in_write, b'{"jsonrpc":"2.0","id":7,"method":"ping","params":{}}\n')
    os.close(in_write)
    got = bytearray()
    drainer = _drain(out_read, got)
    with os.fdopen(in_read, "rb") as stdin, os.fdopen(out_write, "wb") as stdout:
        stdin.peek(1)  # a byte waits in its buffer: only its own readline may read on
        seen = _echo(stdin, stdout)
    drainer.join(10)
    assert [m.id for m in seen] == [7]
    assert json.loads(got.decode())["id"] == 7


@pytest.mark.parametrize("kind", READERS)
def test_a_pipe_refusing_nowait_reads_is_read_in_a_thread(monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    import errno

    tried: list[int] = []

    def refuse(fd: int, buffers: Any, offset: int, flags: int = 0) -> int:
        tried.append(fd)
        raise OSError(errno.EOPNOTSUPP, "not for this descriptor")

    monkeypatch.setattr(nowait.os, "preadv", refuse)
    read_end, write_end = os.pipe()
    os.write(write_end, b"one\ntwo\n")
    os.close(write_end)
    try:
        got = _read_all(kind, read_end, b"zero\n")
    finally:
        os.close(read_end)
    assert got == [b"zero\n", b"one\n", b"two\n"]
    assert len(tried) == 1  # refused once, then never tried again


@pytest.mark.parametrize("kind", READERS)
def test_a_socket_is_read_line_by_line(kind: str) -> None:
    left, right = socket.socketpair()
    right.sendall(b'{"a":1}\n{"b":')
    right.sendall(b"2}\n")
    right.close()
    try:
        got = _read_all(kind, left.fileno())
    finally:
        left.close()
    assert got == [b'{"a":1}\n', b'{"b":2}\n']


class _Counting:
    """Counts the ``add_reader``/``remove_reader`` calls of the running loop for one descriptor."""

    def __init__(self, loop: asyncio.AbstractEventLoop, monkeypatch: pytest.MonkeyPatch) -> None:
        self.added = 0
        self.removed = 0
        add, remove = loop.add_reader, loop.remove_reader

        def counted_add(fd: int, callback: Any, *args: Any) -> None:
            self.added += 1
            add(fd, callback, *args)

        def counted_remove(fd: int) -> bool:
            self.removed += 1
            return remove(fd)

        monkeypatch.setattr(loop, "add_reader", counted_add)
        monkeypatch.setattr(loop, "remove_reader", counted_remove)


def test_an_inbox_stays_registered_while_lines_come_one_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """one ``add_reader`` for a whole conversation (``LineReader``: a register and an
    unregister per wait), and no read on the loop thread but the callback's"""
    read_end, write_end = os.pipe()

    async def main() -> None:
        loop = asyncio.get_running_loop()
        counted = _Counting(loop, monkeypatch)
        inbox = nowait.Inbox(read_end, loop)
        for number in range(30):
            loop.call_later(0.002, os.write, write_end, b"%d\n" % number)
            assert await inbox.readline() == b"%d\n" % number
        os.close(write_end)
        assert await inbox.readline() == b""
        inbox.close()
        assert counted.added == 1 and counted.removed == 1

    try:
        asyncio.run(main())
    finally:
        os.close(read_end)


def test_an_inbox_reads_nothing_while_nobody_asks_for_a_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """backpressure: between ``readline`` calls the callback pauses instead of reading, so what
    the client writes meanwhile stays in the pipe (and its writes block once the pipe is full)"""
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)

    async def main() -> None:
        loop = asyncio.get_running_loop()
        counted = _Counting(loop, monkeypatch)
        inbox = nowait.Inbox(read_end, loop)
        os.write(write_end, b"first\n")
        assert await inbox.readline() == b"first\n"
        written = 0
        with suppress(BlockingIOError):
            while True:  # fill the pipe; nobody asks for a line meanwhile
                written += os.write(write_end, b"x" * 4095 + b"\n")
                await asyncio.sleep(0)
        await asyncio.sleep(0.05)
        assert len(inbox._buffer) == 0  # nothing was read: it is all in the pipe
        assert counted.removed == 1  # paused once
        got = 0
        while got < written:
            got += len(await inbox.readline())
        assert got == written
        inbox.close()

    try:
        asyncio.run(main())
    finally:
        os.close(read_end)
        os.close(write_end)


def test_a_closed_inbox_ends_its_input() -> None:
    read_end, write_end = os.pipe()

    async def main() -> None:
        loop = asyncio.get_running_loop()
        inbox = nowait.Inbox(read_end, loop, b"kept\npart")
        assert await inbox.readline() == b"kept\n"
        loop.call_later(0.01, inbox.close)
        assert await inbox.readline() == b"part"  # closed while waiting: the end of input
        assert await inbox.readline() == b""

    try:
        asyncio.run(main())
    finally:
        os.close(read_end)
        os.close(write_end)


def test_an_inbox_reports_a_read_error_to_readline(monkeypatch: pytest.MonkeyPatch) -> None:
    import errno

    read_end, write_end = os.pipe()

    def broken(fd: int, buffers: Any, offset: int, flags: int = 0) -> int:
        raise OSError(errno.EIO, "I/O error")

    async def main() -> None:
        inbox = nowait.Inbox(read_end, asyncio.get_running_loop())
        monkeypatch.setattr(nowait.os, "preadv", broken)
        os.write(write_end, b"line\n")
        with pytest.raises(OSError, match="I/O error"):
            await inbox.readline()
        inbox.close()

    try:
        asyncio.run(main())
    finally:
        os.close(read_end)
        os.close(write_end)
