"""In-process per-target mutation locks every provider shares (REFERENCE-SPEC §2.9).

One FIFO ``anyio.Lock`` per target key, dropped when idle (the reference's tests assert the
map is empty after every outcome). Across processes each provider adds its own mechanism:
the local provider an OS advisory lock (A4), the S3 provider the service's conditional writes.
No I/O here.
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
            lock = anyio.Lock(fast_acquire=True)  # a free lock costs no trip through the event loop
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
