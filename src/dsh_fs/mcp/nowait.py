"""The stdio wire without thread hops: reads and writes that never block the event loop.

``stdio.py`` reads stdin in a thread of its own and writes stdout through one, so a blocked
pipe never stalls the event loop. Each hop costs a round trip several thread wake-ups and
hand-offs of the interpreter lock, which on a busy machine are most of a small call's time
(bench/README.md, "the MCP stdio round trip"). On Linux a pipe or a socket takes
``preadv2``/``pwritev2`` with ``RWF_NOWAIT``: the call moves what it can at once and fails
with ``EAGAIN`` instead of blocking, without changing the descriptor's flags (the open file
description may be shared with the client or a shell; ``O_NONBLOCK`` would change it for them).

* ``Wire.write``: a line goes out from the event loop thread as far as the pipe has room; the
  rest (and everything where ``RWF_NOWAIT`` is refused: a regular file, a terminal, another
  OS) is written in a thread of its own, as before, straight to the descriptor: waiting for
  room there even when the client made it non-blocking (``O_NONBLOCK``).
* ``LineReader``: lines of a pipe or socket read on the event loop thread, waiting for the
  descriptor to be readable between reads (``anyio.wait_readable``: an ``epoll_ctl`` to register
  and one to unregister per wait). ``lines_of`` returns ``None`` for anything else (a regular
  file, a terminal, a stream without a descriptor): the transport then reads in its thread, as
  before. Where ``RWF_NOWAIT`` is refused it reads in a thread too, waiting out ``EAGAIN`` on a
  descriptor the client made non-blocking.
* ``Inbox`` (on asyncio, what ``lines_of`` gives there): the same lines, read by a reader that
  stays registered with the loop (``loop.add_reader``): its callback reads what the descriptor
  has into the buffer and wakes ``readline``; while nobody waits for a line (the transport holds
  ``IN_FLIGHT_MAX`` unanswered requests, or the server has not taken the last message), the
  callback reads nothing and pauses (``remove_reader``) until ``readline`` asks again, so a
  client that stops reading its answers is held back as before (bench/README.md, "The MCP
  stdio round trip, fourth pass").
"""

from __future__ import annotations

import asyncio
import errno
import io
import os
import stat
from typing import IO, Final

import anyio
import anyio.to_thread

from .fdio import read_into, write_all

__all__ = ("Inbox", "LineReader", "Wire", "lines_of")

_REFUSED: Final = frozenset({errno.EOPNOTSUPP, errno.EINVAL, errno.ESPIPE, errno.ENOSYS})
"""``RWF_NOWAIT`` is not for this descriptor (a regular file, a terminal, an old kernel)"""

READ_SIZE: Final = 65536
"""bytes asked for by one read of stdin"""


def _supported() -> bool:
    return hasattr(os, "RWF_NOWAIT") and hasattr(os, "pwritev") and hasattr(os, "preadv")


class Wire:
    """stdout as the transport's writers use it (one line at a time): a line cut in two by a
    full pipe still reaches the wire whole, before any other line."""

    def __init__(self, stdout: IO[bytes]) -> None:
        self._stdout = stdout
        self._limiter = anyio.CapacityLimiter(1)  # never waits for threads busy with tool calls
        self._thread_fd = _fileno(stdout)  # what the thread writes to (``None``: through ``stdout``)
        self._fd = self._thread_fd if _supported() else None  # written with RWF_NOWAIT
        self._tail: anyio.Event | None = None  # set while the rest of a line is written in the thread

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
                await anyio.to_thread.run_sync(_write, self._stdout, self._thread_fd, rest,
                                               abandon_on_cancel=True, limiter=self._limiter)
            finally:
                self._tail = None
                tail.set()

    def _write_now(self, data: bytes) -> int:
        """How many bytes of ``data`` went out without blocking (0 when none could)."""
        if self._fd is None:
            return 0
        try:
            return os.pwritev(self._fd, [data], -1, os.RWF_NOWAIT)
        except BlockingIOError:
            return 0
        except OSError as exc:
            if exc.errno not in _REFUSED:
                raise
            self._fd = None  # for good: every line goes through the thread
            return 0


def _fileno(stdout: IO[bytes]) -> int | None:
    """The descriptor behind ``stdout``, or ``None``. The stream's buffer is flushed first;
    afterwards every byte goes to the descriptor, so none ever waits in the buffer while
    another goes past it."""
    try:
        fd = stdout.fileno()
        stdout.flush()
    except (AttributeError, OSError, ValueError):
        return None
    return fd


def _write(stdout: IO[bytes], fd: int | None, data: bytes | memoryview) -> None:
    """Write ``data`` whole (in a worker thread): to ``fd`` when given, waiting for room
    whenever it is full, even when the client made it non-blocking (``O_NONBLOCK`` on a
    descriptor it shares with us: a write then fails with ``EAGAIN`` instead of waiting, and
    the buffered stream would give the line up as a broken stdout); else through ``stdout``.

    :raises OSError: stdout is broken (``EPIPE`` once the client has gone)
    """
    if fd is None:
        stdout.write(data)
        stdout.flush()
        return
    write_all(fd, data)


class LineReader:
    """``readline`` over bytes already read (``preread``), then over the pipe or socket
    ``fd``, on the event loop thread. A line ends at ``\\n`` (kept); the last one at the end
    of input may have none; ``b""`` is the end of input."""

    def __init__(self, fd: int, preread: bytes = b"") -> None:
        self._fd = fd
        self._buffer = bytearray(preread)
        self._scanned = 0  # no "\n" in self._buffer[:self._scanned]
        self._eof = False
        self._chunk = bytearray(READ_SIZE)  # reused by every read (its bytes are copied out)
        self._nowait = True  # False once the descriptor refused RWF_NOWAIT: read in a thread

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
                return line
            self._scanned = len(self._buffer)
            if self._eof or not await self._fill():
                self._eof = True
                line = bytes(self._buffer)
                self._buffer.clear()
                self._scanned = 0
                return line

    async def _fill(self) -> bool:
        """Append what the descriptor has (waiting until it has something); ``False`` at the end."""
        chunk = self._chunk
        while self._nowait:
            try:
                count = os.preadv(self._fd, [chunk], -1, os.RWF_NOWAIT)
            except BlockingIOError:
                await anyio.wait_readable(self._fd)
                continue
            except OSError as exc:
                if exc.errno not in _REFUSED:
                    raise
                self._nowait = False
                break
            return self._took(count)
        return self._took(await anyio.to_thread.run_sync(read_into, self._fd, chunk, abandon_on_cancel=True))

    def _took(self, count: int) -> bool:
        if count == 0:
            return False
        self._buffer += memoryview(self._chunk)[:count]
        return True


class Inbox(LineReader):
    """A ``LineReader`` whose descriptor stays registered with the asyncio ``loop`` (module
    docstring): one ``loop.add_reader`` for as long as ``readline`` keeps asking, instead of a
    register and an unregister per wait. Event loop thread only; ``close`` when done."""

    def __init__(self, fd: int, loop: asyncio.AbstractEventLoop, preread: bytes = b"") -> None:
        super().__init__(fd, preread)
        self._loop = loop
        self._waiter: asyncio.Future[None] | None = None
        self._listening = False
        self._ended = False  # the callback read the end of input
        self._error: OSError | None = None  # what the callback's read raised, for readline
        self._closed = False

    async def _fill(self) -> bool:
        """Wait for the callback to append bytes; ``False`` at the end of input.

        :raises OSError: the descriptor could not be read
        """
        while self._nowait:
            if self._error is not None:
                error, self._error = self._error, None
                raise error
            if len(self._buffer) > self._scanned:  # appended since readline last looked
                return True
            if self._ended or self._closed:
                return False
            waiter = self._waiter = self._loop.create_future()
            self._listen()
            try:
                await waiter
            finally:
                self._waiter = None
        return await super()._fill()  # RWF_NOWAIT refused: read in a thread

    def close(self) -> None:
        """Stop reading (unregister); ``readline`` then ends the input."""
        self._closed = True
        self._pause()
        self._wake()

    def _listen(self) -> None:
        if not self._listening and not self._closed:
            self._loop.add_reader(self._fd, self._readable)
            self._listening = True

    def _pause(self) -> None:
        if self._listening:
            self._loop.remove_reader(self._fd)
            self._listening = False

    def _wake(self) -> bool:
        waiter = self._waiter
        if waiter is None or waiter.done():
            return False
        waiter.set_result(None)
        return True

    def _readable(self) -> None:
        """The loop's callback: one read of what the descriptor has, to wake ``readline``;
        while nobody waits, pause instead, reading nothing (the bytes stay in the pipe, and a
        client that writes more is held back)."""
        waiter = self._waiter
        if waiter is None or waiter.done():
            self._pause()
            return
        try:
            count = os.preadv(self._fd, [self._chunk], -1, os.RWF_NOWAIT)
        except BlockingIOError:
            return
        except OSError as exc:
            self._pause()
            if exc.errno in _REFUSED:
                self._nowait = False
            else:
                self._error = exc
            self._wake()
            return
        if count == 0:
            self._ended = True
            self._pause()
        else:
            self._buffer += memoryview(self._chunk)[:count]
        self._wake()


def lines_of(stream: IO[bytes], preread: bytes = b"", *, fresh: bool = False) -> LineReader | None:
    """A ``LineReader`` for ``stream`` when it is a pipe or a socket, no byte can be waiting in
    its buffer, and ``RWF_NOWAIT`` is available; ``None`` otherwise (read it in a thread). On
    an asyncio loop that takes readers (``loop.add_reader``), an ``Inbox``.

    :param preread: bytes read from the stream before (served first)
    :param fresh: nothing was ever read through ``stream`` (the transport opened it); an
        unbuffered stream (``io.RawIOBase``) qualifies without it
    """
    if not _supported() or not (fresh or isinstance(stream, io.RawIOBase)):
        return None
    try:
        fd = stream.fileno()
        mode = os.fstat(fd).st_mode
    except (AttributeError, OSError, ValueError):
        return None
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
        return None
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # another event loop (trio)
        return LineReader(fd, preread)
    if not isinstance(loop, asyncio.SelectorEventLoop):  # (uvloop and the like: no promise made)
        return LineReader(fd, preread)
    return Inbox(fd, loop, preread)
