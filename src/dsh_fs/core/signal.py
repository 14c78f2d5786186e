"""A cancellation token checked cooperatively at syscall boundaries (REFERENCE-SPEC §2.12).

It is thread-safe: the blocking I/O of providers runs in worker threads and checks it there.
"""

from __future__ import annotations

import threading

import anyio

__all__ = ("AbortSignal", "wait_aborted")


class AbortSignal:
    """An abort flag that can be raised once and read from any thread.

    A primitive that receives a signal checks ``aborted`` at its checkpoints and raises
    ``FsError(FS_ABORTED)``; nothing is ever interrupted half way through a rename.
    """

    __slots__ = ("_event", "reason")

    def __init__(self) -> None:
        self._event = threading.Event()
        self.reason: str | None = None

    @classmethod
    def aborted_signal(cls, reason: str | None = None) -> "AbortSignal":
        """A signal that is already aborted (handy for tests and for refusing work)."""
        signal = cls()
        signal.abort(reason)
        return signal

    def abort(self, reason: str | None = None) -> None:
        """Raise the flag (idempotent)."""
        if not self._event.is_set():
            self.reason = reason
            self._event.set()

    @property
    def aborted(self) -> bool:
        """``True`` once ``abort()`` was called."""
        return self._event.is_set()

    def __repr__(self) -> str:
        return f"AbortSignal(aborted={self.aborted})"


async def wait_aborted(signal: AbortSignal, *, poll: float = 0.01) -> None:
    """Return once ``signal`` is aborted (checked every ``poll`` seconds).

    The flag can be raised from any thread, so an awaiting task polls it; run this in a task
    that cancels the work it guards (e.g. a subprocess wait) when it returns.
    """
    while not signal.aborted:
        await anyio.sleep(poll)
