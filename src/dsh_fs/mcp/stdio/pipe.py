"""stdin and stdout of the stdio server as lines, read and written without blocking the event loop.

Standard library and anyio only (no SDK). One :class:`LineReader` reads stdin from its first
byte, one :class:`LineWriter` writes every line to stdout.

* **Before the event loop** (``LineReader.first_line``, ``LineWriter.write_blocking``): the
  first line is read, and a plain ``initialize`` answered, with blocking calls that wait out
  ``EAGAIN`` (a client may have set ``O_NONBLOCK`` on a pipe it shares with us): importing
  asyncio and starting a loop would cost the answer 20–40 ms (DEVIATIONS M2).
* **On the loop**, a pipe or a socket (Linux) is read and written on the event loop thread with
  ``preadv2``/``pwritev2`` and ``RWF_NOWAIT``: a call moves what it can at once and fails with
  ``EAGAIN`` instead of blocking, without changing the descriptor's flags (the open file
  description may be shared with the client or a shell). stdin stays registered with the loop
  (``loop.add_reader``) while lines are asked for; while nobody asks (the in-flight cap reached,
  the SDK not taking the last message) it reads nothing and unregisters, so a client that stops
  reading its answers is held back. A line the pipe does not take whole is finished in a thread
  of its own, before any other line. Where ``RWF_NOWAIT`` is refused (a regular file, a
  terminal, another OS) or the stream has no descriptor of its own, a thread of its own reads
  or writes (tool calls holding every default worker thread cannot stall the wire).
* **A line over the limit** (:class:`Oversized`): its first :data:`KEPT_PREFIX` bytes are kept
  (to find its ``id``), the rest is dropped as it arrives, so memory stays bounded.
"""

from __future__ import annotations

import asyncio
import errno
import io
import os
import threading
import select
import stat
import time
from typing import IO, Final

import anyio
import anyio.to_thread

__all__ = ("KEPT_PREFIX", "LineReader", "LineWriter", "Oversized", "Unblocking", "read_into", "write_all")

READ_SIZE: Final = 65536
"""bytes asked for by one read of stdin"""

KEPT_PREFIX: Final = 65536
"""bytes of a line over the limit kept to answer it (its ``id`` is looked for there)"""

_REFUSED: Final = frozenset({errno.EOPNOTSUPP, errno.EINVAL, errno.ESPIPE, errno.ENOSYS})
"""``RWF_NOWAIT`` is not for this descriptor (a regular file, a terminal, an old kernel)"""


def _nowait_supported() -> bool:
    return hasattr(os, "RWF_NOWAIT") and hasattr(os, "pwritev") and hasattr(os, "preadv")


# -- blocking reads and writes that wait out EAGAIN -------------------------------------------------------


def write_all(fd: int, data: bytes | memoryview) -> None:
    """Write all of ``data`` to ``fd``, waiting for room whenever it is full.

    :raises OSError: the write failed (``BrokenPipeError``: the reader has gone)
    """
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view):]
        except BlockingIOError:
            _wait_for(fd, getattr(select, "POLLOUT", 4))


def read_into(fd: int, chunk: bytearray) -> int:
    """One read into ``chunk``: how many bytes, 0 at the end of input; waits for bytes when
    ``fd`` is non-blocking and empty.

    :raises OSError: the read failed
    """
    while True:
        try:
            return os.readv(fd, [chunk])
        except BlockingIOError:
            _wait_for(fd, getattr(select, "POLLIN", 1))


def _wait_for(fd: int, event: int) -> None:
    if hasattr(select, "poll"):
        poller = select.poll()
        poller.register(fd, event)
        poller.poll()
    else:  # no poll (Windows): a short sleep between tries
        time.sleep(0.01)


# -- reading -------------------------------------------------------------------------------------------


class Oversized(bytes):
    """A line longer than the reader's limit: the first :data:`KEPT_PREFIX` bytes of it."""


class LineReader:
    """stdin's lines: a line ends at ``\\n`` (kept); the last one may have none; ``b""`` is the
    end of input; a line over ``limit`` bytes is an :class:`Oversized`. Event loop thread only,
    apart from :meth:`first_line`.

    :param source: stdin (a binary stream)
    :param fresh: nothing was read through ``source`` before (the server opened it): its
        descriptor may be read directly (an unbuffered stream qualifies without it)
    :param limit: the longest line kept, in bytes (its line end aside)
    """

    def __init__(self, source: IO[bytes], *, fresh: bool, limit: int) -> None:
        self._source = source
        self._limit = limit
        self._buffer = bytearray()
        self._scanned = 0  # no "\n" in self._buffer[:self._scanned]
        self._cut: bytes | None = None  # the kept prefix of a line over the limit, while dropping its rest
        self._eof = False
        self._chunk = bytearray(READ_SIZE)
        self._fd = _descriptor(source) if fresh or isinstance(source, io.RawIOBase) else None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._registered = False  # read by the loop's reader callback (``RWF_NOWAIT``)
        self._waiter: asyncio.Future[None] | None = None
        self._listening = False
        self._error: OSError | None = None
        self._closed = False
        self._threads = anyio.CapacityLimiter(1)

    def first_line(self) -> bytes | None:
        """Block until the first line has arrived and return it, left unread (the next
        :meth:`readline` returns it); ``None`` at the end of input, past the limit, on a read
        error (the bytes read so far stay; the loop meets the error again) or without a
        descriptor to read."""
        if self._fd is None:
            return None
        while (end := self._buffer.find(b"\n")) < 0:
            if len(self._buffer) > self._limit:
                return None
            try:
                count = read_into(self._fd, self._chunk)
            except OSError:
                return None
            if not count:
                return None
            self._buffer += memoryview(self._chunk)[:count]
        return bytes(self._buffer[: end + 1])

    def skip(self, count: int) -> None:
        """Drop the first ``count`` bytes read (the first line, served before the loop)."""
        del self._buffer[:count]
        self._scanned = 0

    def has_line(self) -> bool:
        """A whole line is read and not taken yet (``readline`` would return it at once)."""
        return self._cut is None and self._buffer.find(b"\n") >= 0

    async def readline(self) -> bytes:
        """The next line (``b""`` at the end of input).

        :raises OSError: stdin cannot be read
        """
        while True:
            end = self._buffer.find(b"\n", self._scanned)
            if end >= 0:
                line = bytes(self._buffer[: end + 1])
                del self._buffer[: end + 1]
                self._scanned = 0
                cut, self._cut = self._cut, None
                if cut is not None:
                    return Oversized(cut)
                if end > self._limit:
                    return Oversized(line[:KEPT_PREFIX])
                return line
            if self._cut is not None:
                self._buffer.clear()
            elif len(self._buffer) > self._limit:
                self._cut = bytes(self._buffer[:KEPT_PREFIX])
                self._buffer.clear()
            self._scanned = len(self._buffer)
            if self._eof or not await self._fill():
                self._eof = True
                line = bytes(self._buffer)
                self._buffer.clear()
                self._scanned = 0
                cut, self._cut = self._cut, None
                return Oversized(cut) if cut is not None else line

    def close(self) -> None:
        """Stop reading (unregister); ``readline`` then ends the input."""
        self._closed = True
        self._pause()
        self._wake()

    async def _fill(self) -> bool:
        """Append what stdin has (waiting until it has something); ``False`` at the end."""
        if self._loop is None:
            self._start()
        while self._registered:
            if self._error is not None:
                error, self._error = self._error, None
                raise error
            if len(self._buffer) > self._scanned:  # appended since readline last looked
                return True
            if self._eof or self._closed:
                return False
            waiter = self._waiter = self._loop.create_future()  # type: ignore[union-attr]
            self._listen()
            try:
                await waiter
            finally:
                self._waiter = None
        if self._closed:
            return False
        if self._fd is not None:
            count = await anyio.to_thread.run_sync(read_into, self._fd, self._chunk, abandon_on_cancel=True,
                                                   limiter=self._threads)
            if not count:
                return False
            self._buffer += memoryview(self._chunk)[:count]
            return True
        data = await anyio.to_thread.run_sync(_read_some, self._source, abandon_on_cancel=True, limiter=self._threads)
        if not data:
            return False
        self._buffer += data
        return True

    def _start(self) -> None:
        """Choose how to read: registered with the loop for a pipe or a socket where
        ``RWF_NOWAIT`` is available, else in a thread."""
        self._loop = asyncio.get_running_loop()
        if self._fd is None or not _nowait_supported() or not isinstance(self._loop, asyncio.SelectorEventLoop):
            return
        try:
            mode = os.fstat(self._fd).st_mode
        except OSError:
            return
        self._registered = stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)

    def _listen(self) -> None:
        if not self._listening and not self._closed:
            self._loop.add_reader(self._fd, self._readable)  # type: ignore[union-attr,arg-type]
            self._listening = True

    def _pause(self) -> None:
        if self._listening:
            self._loop.remove_reader(self._fd)  # type: ignore[union-attr,arg-type]
            self._listening = False

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _readable(self) -> None:
        """The loop's callback: one read of what stdin has, to wake ``readline``; while nobody
        waits, pause instead, reading nothing (the bytes stay in the pipe)."""
        waiter = self._waiter
        if waiter is None or waiter.done():
            self._pause()
            return
        try:
            count = os.preadv(self._fd, [self._chunk], -1, os.RWF_NOWAIT)  # type: ignore[arg-type]
        except BlockingIOError:
            return
        except OSError as exc:
            self._pause()
            if exc.errno in _REFUSED:
                self._registered = False  # read in a thread from now on
            else:
                self._error = exc
            self._wake()
            return
        if count == 0:
            self._eof = True
            self._pause()
        else:
            self._buffer += memoryview(self._chunk)[:count]
        self._wake()


def _descriptor(stream: IO[bytes]) -> int | None:
    try:
        return stream.fileno()
    except (AttributeError, OSError, ValueError):
        return None


def _read_some(stream: IO[bytes]) -> bytes:
    """Some bytes of a stream without a descriptor of its own (in a worker thread)."""
    read1 = getattr(stream, "read1", None)
    return read1(READ_SIZE) if read1 is not None else stream.readline()


# -- writing -------------------------------------------------------------------------------------------


class LineWriter:
    """stdout as the server writes it, one line at a time: a line cut in two by a full pipe
    still reaches the wire whole, before any other line.

    :param sink: stdout (a binary stream; its buffer is flushed now, and every byte goes to its
        descriptor from then on, so none waits in the buffer while another goes past it)
    """

    def __init__(self, sink: IO[bytes]) -> None:
        self._sink = sink
        self._fd = _flushed_descriptor(sink)  # what the thread writes to (``None``: through ``sink``)
        self._nowait_fd = self._fd if _nowait_supported() else None  # written with RWF_NOWAIT
        self._threads = anyio.CapacityLimiter(1)
        self._tail: anyio.Event | None = None  # set while the rest of a line is written in the thread

    def write_blocking(self, data: bytes) -> None:
        """Write ``data`` whole, blocking (before the event loop runs).

        :raises OSError: stdout is broken
        """
        _write(self._sink, self._fd, data)

    async def write(self, data: bytes) -> None:
        """Write ``data`` whole: what fits at once from this thread, the rest in a thread.
        Several tasks may write: a line waits for the rest of another one to be written.

        :raises OSError: stdout is broken (``EPIPE`` once the client has gone)
        """
        while self._tail is not None:
            await self._tail.wait()
        done = self._write_now(data)
        if done < len(data):
            rest = memoryview(data)[done:]
            tail = self._tail = anyio.Event()
            try:
                await anyio.to_thread.run_sync(_write, self._sink, self._fd, rest, abandon_on_cancel=True,
                                               limiter=self._threads)
            finally:
                self._tail = None
                tail.set()

    def _write_now(self, data: bytes) -> int:
        """How many bytes of ``data`` went out without blocking (0 when none could)."""
        if self._nowait_fd is None:
            return 0
        try:
            return os.pwritev(self._nowait_fd, [data], -1, os.RWF_NOWAIT)
        except BlockingIOError:
            return 0
        except OSError as exc:
            if exc.errno not in _REFUSED:
                raise
            self._nowait_fd = None  # for good: every line goes through the thread
            return 0


def _flushed_descriptor(stream: IO[bytes]) -> int | None:
    try:
        fd = stream.fileno()
        stream.flush()
    except (AttributeError, OSError, ValueError):
        return None
    return fd


def _write(stream: IO[bytes], fd: int | None, data: bytes | memoryview) -> None:
    """Write ``data`` whole (blocking): to ``fd`` when given, waiting for room even when the
    client made it non-blocking (a buffered stream would give the line up as a broken stdout);
    else through ``stream``.

    :raises OSError: stdout is broken (``EPIPE`` once the client has gone)
    """
    if fd is None:
        stream.write(data)
        stream.flush()
        return
    write_all(fd, data)


# -- log lines that never wait -------------------------------------------------------------------


class Unblocking(io.TextIOBase):
    """A text stream over descriptor ``fd`` (stderr) whose writes never wait for room: what a full
    pipe does not take at once is dropped and counted, and the count is said (``dsh-fs mcp: N
    bytes of log output dropped``) before the next write that fits. Where ``RWF_NOWAIT`` is
    refused (a terminal, a regular file) writes block as usual. Any thread may write."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._nowait = _nowait_supported()
        self._dropped = 0
        self._lock = threading.Lock()

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:
        return "utf-8"

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        try:
            return os.isatty(self._fd)
        except OSError:
            return False

    def write(self, text: str) -> int:
        data = text.encode("utf-8", "backslashreplace")
        with self._lock:
            if self._dropped:
                note = f"dsh-fs mcp: {self._dropped} bytes of log output dropped (stderr was full)\n".encode()
                if self._put(note) < len(note):
                    self._dropped += len(data)
                    return len(text)
                self._dropped = 0
            self._dropped += len(data) - self._put(data)
        return len(text)

    def _put(self, data: bytes) -> int:
        """Bytes of ``data`` written now (a broken descriptor counts as all: nobody reads it)."""
        if self._nowait:
            try:
                return os.pwritev(self._fd, [data], -1, os.RWF_NOWAIT)
            except BlockingIOError:
                return 0
            except OSError as exc:
                if exc.errno not in _REFUSED:
                    return len(data)
                self._nowait = False
        try:
            write_all(self._fd, data)
        except OSError:
            pass
        return len(data)
