"""Blocking reads and writes of stdin/stdout descriptors that wait out ``EAGAIN``: a client
may have set ``O_NONBLOCK`` on a pipe it shares with us, and a full or empty one then fails
at once instead of waiting (``early.py`` before the event loop, ``nowait.py``'s worker
threads, ``prelude.py``'s writes). Only the standard library: the early phase imports it
before anything else."""

from __future__ import annotations

import os
import select
import time

__all__ = ("read_into", "wait_readable", "wait_writable", "write_all")


def write_all(fd: int, data: bytes | memoryview) -> None:
    """Write all of ``data`` to ``fd``, waiting for room whenever it is full (never a part
    given up).

    :raises OSError: the write failed (``BrokenPipeError``: the reader has gone)
    """
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view):]
        except BlockingIOError:
            wait_writable(fd)


def read_into(fd: int, chunk: bytearray) -> int:
    """One read into ``chunk``: how many bytes, 0 at the end of input; waits for bytes when
    ``fd`` is non-blocking and empty.

    :raises OSError: the read failed
    """
    while True:
        try:
            return os.readv(fd, [chunk])
        except BlockingIOError:
            wait_readable(fd)


def wait_readable(fd: int) -> None:
    """Block until ``fd`` has bytes or has ended (or failed: the next read says so)."""
    _wait_for(fd, getattr(select, "POLLIN", 1))


def wait_writable(fd: int) -> None:
    """Block until ``fd`` has room (or is broken: the next write says so)."""
    _wait_for(fd, getattr(select, "POLLOUT", 4))


def _wait_for(fd: int, event: int) -> None:
    if hasattr(select, "poll"):
        poller = select.poll()
        poller.register(fd, event)
        poller.poll()
    else:  # no poll (Windows): a short sleep between tries
        time.sleep(0.01)
