"""In-process per-target mutation locks (REFERENCE-SPEC §2.9) for the S3 provider.

One FIFO ``anyio.Lock`` per target key, dropped when idle, so one process's mutations of a
target serialize without a wasted conditional request. Across processes and machines the
service's conditional writes decide (``If-Match`` / ``If-None-Match``); there is no lock file.
(The same shape as ``fs_local.locks.TargetLocks``; kept here so providers do not import each
other.)
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import anyio

__all__ = ("TargetLocks",)


class TargetLocks:
    """In-process FIFO locks per target key; an entry exists only while someone holds or waits."""

    def __init__(self) -> None:
        self._entries: dict[str, tuple[anyio.Lock, int]] = {}

    def __len__(self) -> int:
        """Number of keys currently held or awaited (0 when idle)."""
        return len(self._entries)

    @contextlib.asynccontextmanager
    async def hold(self, key: str) -> AsyncIterator[None]:
        """Hold the lock of ``key``; waiters are served in arrival order."""
        lock, users = self._entries.get(key, (None, 0))
        if lock is None:
            lock = anyio.Lock()
        self._entries[key] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._entries[key]
            if users <= 1:
                del self._entries[key]
            else:
                self._entries[key] = (lock, users - 1)
