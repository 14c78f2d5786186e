"""stdin's and stdout's lines (``mcp/stdio/pipe.py``): a pipe or socket read and written on the
event loop thread with ``RWF_NOWAIT``, everything else in a thread of its own; the first line
read blocking before the loop; a line over the limit kept to its first bytes."""

from __future__ import annotations

import asyncio
import io
import json
import os
import socket
import threading
import time
from contextlib import suppress
from typing import Any

import anyio
import mcp.types as types
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp.shared.message import SessionMessage

from dsh_fs.mcp.server import PARSE_ON_LOOP_MAX
from dsh_fs.mcp.stdio import pipe
from mcpkit import serve_sdk_standin


def _no_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    async def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a worker thread was used")

    monkeypatch.setattr(pipe.anyio.to_thread, "run_sync", refuse)


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
        wire = pipe.LineWriter(stdout)
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
            wire = pipe.LineWriter(stdout)
            for line in lines:
                await wire.write(line)

    anyio.run(main)
    drainer.join(10)
    assert bytes(got) == b"".join(lines)


def test_a_regular_file_is_written_through_the_thread(tmp_path: Any) -> None:
    path = tmp_path / "out.jsonl"
    with open(path, "wb") as stdout:
        wire = pipe.LineWriter(stdout)
        anyio.run(wire.write, b"one\n")
        anyio.run(wire.write, b"two\n")
        assert wire._nowait_fd is None  # RWF_NOWAIT refused once, then never tried again
    assert path.read_bytes() == b"one\ntwo\n"


def test_a_stream_without_a_descriptor_is_written_through_the_thread() -> None:
    out = io.BytesIO()
    wire = pipe.LineWriter(out)
    anyio.run(wire.write, b"line\n")
    assert out.getvalue() == b"line\n"


def test_a_broken_pipe_is_reported() -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)
    with os.fdopen(write_end, "wb") as stdout:
        wire = pipe.LineWriter(stdout)
        with pytest.raises(BrokenPipeError):
            anyio.run(wire.write, b"line\n")


LIMIT = 1 << 20


def test_only_a_pipe_or_a_socket_nothing_can_hide_in_is_read_on_the_loop(tmp_path: Any) -> None:
    path = tmp_path / "in.jsonl"
    path.write_bytes(b"{}\n")
    read_end, write_end = os.pipe()
    left, right = socket.socketpair()

    async def registered(stream: Any, fresh: bool = False) -> bool:
        reader = pipe.LineReader(stream, fresh=fresh, limit=LIMIT)
        reader._start()
        return reader._registered

    try:
        with open(path, "rb", buffering=0) as regular:
            assert not asyncio.run(registered(regular))  # epoll cannot wait for a regular file
        assert not asyncio.run(registered(io.BytesIO(b"{}\n")))
        buffered = os.fdopen(os.dup(read_end), "rb")
        assert not asyncio.run(registered(buffered))  # bytes might wait in its buffer
        assert asyncio.run(registered(buffered, fresh=True))  # opened by the server
        buffered.close()
        raw = os.fdopen(os.dup(read_end), "rb", buffering=0)
        assert asyncio.run(registered(raw))
        raw.close()
        sock = left.makefile("rb", buffering=0)
        assert asyncio.run(registered(sock))
        sock.close()
    finally:
        os.close(read_end)
        os.close(write_end)
        left.close()
        right.close()


async def _all_lines(reader: pipe.LineReader) -> list[bytes]:
    lines = []
    while line := await reader.readline():
        lines.append(line)
    assert await reader.readline() == b""  # the end stays the end
    return lines


def _read_all(kind: str, fd: int, first: bytes = b"", limit: int = LIMIT) -> list[bytes]:
    """Every line of ``fd`` (after ``first``, written to it first) through a ``LineReader``
    registered with the loop (``registered``) or read in a thread (``thread``)."""

    async def main() -> list[bytes]:
        with os.fdopen(os.dup(fd), "rb", buffering=0) as stream:
            reader = pipe.LineReader(stream, fresh=True, limit=limit)
            reader._start()
            if kind == "thread":
                reader._registered = False
            else:
                assert reader._registered
            try:
                return await _all_lines(reader)
            finally:
                reader.close()

    return asyncio.run(main())


READERS = ["registered", "thread"]


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
        with os.fdopen(write_end, "wb", buffering=0) as sink:
            for chunk in [preread, *chunks]:
                sink.write(chunk)

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    try:
        got = _read_all(kind, read_end)
    finally:
        feeder.join(10)
        os.close(read_end)
    expected = io.BytesIO(preread + b"".join(chunks)).readlines()
    assert got == expected


@pytest.mark.parametrize("kind", READERS)
def test_a_line_longer_than_one_read_is_one_line(kind: str) -> None:
    read_end, write_end = os.pipe()
    big = b"y" * (3 * pipe.READ_SIZE + 7) + b"\n"
    feeder = threading.Thread(target=lambda: os.write(write_end, big + b"tail") and os.close(write_end), daemon=True)
    feeder.start()
    try:
        got = _read_all(kind, read_end)
    finally:
        feeder.join(10)
        os.close(read_end)
    assert got == [big, b"tail"]


def _echo(stdin: Any, stdout: Any, *, hold_default_threads: bool = False) -> list[Any]:
    """Serve an echo server behind the SDK route until the end of input; the messages it saw.
    ``hold_default_threads``: every default worker thread is busy (a stuck tool call) meanwhile."""
    seen: list[Any] = []
    release = threading.Event()

    async def echo(read_stream: Any, write_stream: Any) -> None:
        if hold_default_threads:
            anyio.to_thread.current_default_thread_limiter().total_tokens = 1
        async with anyio.create_task_group() as tg:
            if hold_default_threads:
                tg.start_soon(lambda: anyio.to_thread.run_sync(release.wait, abandon_on_cancel=True))
            async with write_stream:
                async for item in read_stream:
                    assert isinstance(item, SessionMessage)
                    seen.append(item.message)
                    if isinstance(item.message, types.JSONRPCRequest):
                        size = len(json.dumps(item.message.params))
                        await write_stream.send(SessionMessage(
                            types.JSONRPCResponse(jsonrpc="2.0", id=item.message.id, result={"size": size})
                        ))
            release.set()

    serve_sdk_standin(echo, stdin, stdout)
    return seen


@pytest.mark.parametrize("hold_default_threads", [False, True])
def test_the_transport_serves_an_unbuffered_pipe_on_the_event_loop_thread(
    monkeypatch: pytest.MonkeyPatch, hold_default_threads: bool
) -> None:
    """No reading or writing in a thread: every request answered in order, garbage answered,
    a line too long to parse on the event loop thread parsed in a thread of its own (even
    while tool calls hold every default worker thread) and still in order."""
    started: list[str] = []
    real_start = threading.Thread.start

    def start(thread: threading.Thread) -> None:
        started.append(thread.name)
        real_start(thread)

    monkeypatch.setattr(threading.Thread, "start", start)
    blocking: list[str] = []
    for name in ("read_into", "_read_some", "_write"):
        monkeypatch.setattr(pipe, name, lambda *args, name=name: blocking.append(name))
    long_text = "z" * (PARSE_ON_LOOP_MAX + 10)
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
    assert blocking == []  # stdin and stdout served on the loop thread
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

    monkeypatch.setattr(pipe.os, "preadv", refuse)
    read_end, write_end = os.pipe()
    os.write(write_end, b"zero\none\ntwo\n")
    os.close(write_end)
    try:
        got = _read_all(kind, read_end)
    finally:
        os.close(read_end)
    assert got == [b"zero\n", b"one\n", b"two\n"]
    assert len(tried) == (1 if kind == "registered" else 0)  # refused once, then never tried again


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


def _registered_reader(fd: int, first: bytes = b"") -> pipe.LineReader:
    reader = pipe.LineReader(os.fdopen(fd, "rb", buffering=0, closefd=False), fresh=True, limit=LIMIT)
    reader._buffer += first
    reader._start()
    assert reader._registered
    return reader


def test_a_reader_stays_registered_while_lines_come_one_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """one ``add_reader`` for a whole conversation (not a register and an unregister per wait),
    and no read on the loop thread but the callback's"""
    read_end, write_end = os.pipe()

    async def main() -> None:
        loop = asyncio.get_running_loop()
        counted = _Counting(loop, monkeypatch)
        inbox = _registered_reader(read_end)
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


def test_a_reader_reads_nothing_while_nobody_asks_for_a_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """backpressure: between ``readline`` calls the callback pauses instead of reading, so what
    the client writes meanwhile stays in the pipe (and its writes block once the pipe is full)"""
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)

    async def main() -> None:
        loop = asyncio.get_running_loop()
        counted = _Counting(loop, monkeypatch)
        inbox = _registered_reader(read_end)
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


def test_a_closed_reader_ends_its_input() -> None:
    read_end, write_end = os.pipe()

    async def main() -> None:
        loop = asyncio.get_running_loop()
        inbox = _registered_reader(read_end, b"kept\npart")
        assert await inbox.readline() == b"kept\n"
        loop.call_later(0.01, inbox.close)
        assert await inbox.readline() == b"part"  # closed while waiting: the end of input
        assert await inbox.readline() == b""

    try:
        asyncio.run(main())
    finally:
        os.close(read_end)
        os.close(write_end)


def test_a_reader_reports_a_read_error_to_readline(monkeypatch: pytest.MonkeyPatch) -> None:
    import errno

    read_end, write_end = os.pipe()

    def broken(fd: int, buffers: Any, offset: int, flags: int = 0) -> int:
        raise OSError(errno.EIO, "I/O error")

    async def main() -> None:
        inbox = _registered_reader(read_end)
        monkeypatch.setattr(pipe.os, "preadv", broken)
        os.write(write_end, b"line\n")
        with pytest.raises(OSError, match="I/O error"):
            await inbox.readline()
        inbox.close()

    try:
        asyncio.run(main())
    finally:
        os.close(read_end)
        os.close(write_end)


# -- before the loop; the limit ---------------------------------------------------------------------


def test_the_first_line_is_read_blocking_and_left_for_readline() -> None:
    read_end, write_end = os.pipe()
    os.set_blocking(read_end, False)  # the client made it non-blocking: EAGAIN is waited out
    feeder = threading.Thread(target=lambda: (os.write(write_end, b'{"a":'), time.sleep(0.05),
                                              os.write(write_end, b'1}\n{"b":2}\n')), daemon=True)
    feeder.start()
    with os.fdopen(read_end, "rb", buffering=0) as stream:
        reader = pipe.LineReader(stream, fresh=True, limit=LIMIT)
        assert reader.first_line() == b'{"a":1}\n'
        feeder.join(10)
        os.close(write_end)
        assert asyncio.run(_all_lines(reader)) == [b'{"a":1}\n', b'{"b":2}\n']


def test_a_first_line_that_never_ends_is_left_to_the_loop() -> None:
    read_end, write_end = os.pipe()
    os.write(write_end, b"no end")
    os.close(write_end)
    with os.fdopen(read_end, "rb", buffering=0) as stream:
        reader = pipe.LineReader(stream, fresh=True, limit=LIMIT)
        assert reader.first_line() is None
        assert asyncio.run(_all_lines(reader)) == [b"no end"]
    assert pipe.LineReader(io.BytesIO(b"x\n"), fresh=False, limit=LIMIT).first_line() is None  # no descriptor


def test_a_read_error_after_part_of_the_first_line_keeps_the_part() -> None:
    """stdin a terminal whose other end closes mid-line (``EIO``): the part read stays for the loop."""
    import pty

    master, slave = pty.openpty()
    os.write(slave, b'{"jsonrpc":')
    time.sleep(0.1)
    os.close(slave)
    try:
        reader = pipe.LineReader(os.fdopen(master, "rb", buffering=0, closefd=False), fresh=True, limit=LIMIT)
        assert reader.first_line() is None
        assert bytes(reader._buffer).startswith(b'{"jsonrpc":')
    finally:
        os.close(master)


@pytest.mark.parametrize("kind", READERS)
def test_a_line_over_the_limit_is_kept_to_its_first_bytes_and_the_next_line_read_whole(kind: str) -> None:
    limit = 3 * pipe.READ_SIZE
    read_end, write_end = os.pipe()
    long = b'{"id":7,' + b"y" * (limit + 5 * pipe.READ_SIZE) + b"}\n"
    data = long + b"next\n" + b"z" * (limit + 1) + b"\n" + b"tail"
    feeder = threading.Thread(target=lambda: os.write(write_end, data) and os.close(write_end), daemon=True)
    feeder.start()
    try:
        got = _read_all(kind, read_end, limit=limit)
    finally:
        feeder.join(10)
        os.close(read_end)
    assert [type(line) for line in got] == [pipe.Oversized, bytes, pipe.Oversized, bytes]
    assert got[0] == long[: pipe.KEPT_PREFIX] and got[1:] == [b"next\n", b"z" * pipe.KEPT_PREFIX, b"tail"]


def test_a_line_over_the_limit_at_the_end_of_input_is_one_too() -> None:
    read_end, write_end = os.pipe()
    feeder = threading.Thread(target=lambda: os.write(write_end, b"x" * 200_000) and os.close(write_end), daemon=True)
    feeder.start()
    try:
        got = _read_all("registered", read_end, limit=100_000)
    finally:
        feeder.join(10)
        os.close(read_end)
    assert got == [b"x" * pipe.KEPT_PREFIX] and isinstance(got[0], pipe.Oversized)


def test_log_output_never_waits_for_a_full_pipe_and_says_what_it_dropped() -> None:
    read_end, write_end = os.pipe()
    try:
        stream = pipe.Unblocking(write_end)
        for _ in range(3000):  # ~180 KB into a 64 KiB pipe nobody reads: no write waits
            stream.write("x" * 59 + "\n")
        kept = os.read(read_end, 1 << 20)
        dropped = 3000 * 60 - len(kept)
        assert dropped > 0 and kept.startswith(b"x" * 59 + b"\n")
        stream.write("after\n")
        note = f"dsh-fs mcp: {dropped} bytes of log output dropped (stderr was full)\nafter\n"
        assert os.read(read_end, 1 << 20) == note.encode()
    finally:
        os.close(read_end)
        os.close(write_end)


def test_log_output_to_a_regular_file_is_written_whole(tmp_path: Any) -> None:
    with open(tmp_path / "log", "wb", buffering=0) as log:
        stream = pipe.Unblocking(log.fileno())
        stream.write("é line\n")
        stream.flush()
    assert (tmp_path / "log").read_bytes() == "é line\n".encode()
