"""A cancellation token checked cooperatively at syscall boundaries (REFERENCE-SPEC §2.12),
and the two ways work runs under one.

It is thread-safe: the blocking I/O of providers runs in worker threads and checks it there.

* ``run_under_signal(work, signal=…, timeout=…)`` — run ``work`` until it ends, the signal is
  aborted, or the time budget is spent (either cancels it), and say which in an ``Outcome``
  (what ``work`` raised is collected outside the task group: no exception group). The search
  tools' time budget and the local provider's lock waits use it.
* ``run_abortable(work)`` — the inverse: ``work(signal)`` runs shielded, and the caller's
  cancellation aborts its signal, then waits for it to return (the MCP server's calls).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

import anyio

__all__ = ("AbortSignal", "Outcome", "run_abortable", "run_under_signal", "wait_aborted")

T = TypeVar("T")


class AbortSignal:
    """An abort flag that can be raised once and read from any thread.

    A primitive that receives a signal checks ``aborted`` at its checkpoints and raises
    ``FsError(FS_ABORTED)``; nothing is ever interrupted half way through a rename.
    """

    __slots__ = ("_aborted", "reason")

    def __init__(self) -> None:
        self._aborted = False  # one attribute store, read by any thread (no lock: nobody waits on it)
        self.reason: str | None = None

    @classmethod
    def aborted_signal(cls, reason: str | None = None) -> "AbortSignal":
        """A signal that is already aborted (handy for tests and for refusing work)."""
        signal = cls()
        signal.abort(reason)
        return signal

    def abort(self, reason: str | None = None) -> None:
        """Raise the flag (idempotent)."""
        if not self._aborted:
            self.reason = reason
            self._aborted = True

    @property
    def aborted(self) -> bool:
        """``True`` once ``abort()`` was called."""
        return self._aborted

    def __repr__(self) -> str:
        return f"AbortSignal(aborted={self.aborted})"


async def wait_aborted(signal: AbortSignal, *, poll: float = 0.01) -> None:
    """Return once ``signal`` is aborted (checked every ``poll`` seconds).

    The flag can be raised from any thread, so an awaiting task polls it; run this in a task
    that cancels the work it guards (e.g. a subprocess wait) when it returns.
    """
    while not signal.aborted:
        await anyio.sleep(poll)


@dataclass(slots=True)
class Outcome(Generic[T]):
    """How work run by ``run_under_signal`` ended: it returned (``value``), raised
    (``error``), its time budget ran out (``timed_out``), or its signal was aborted
    (``aborted``: none of the others)."""

    value: T | None = None
    """what the work returned (when ``returned``)"""
    returned: bool = False
    error: Exception | None = None
    """what the work raised"""
    timed_out: bool = False

    @property
    def aborted(self) -> bool:
        """The signal was aborted before the work ended (it was cancelled)."""
        return not self.returned and self.error is None and not self.timed_out


async def _collect(work: Callable[[], Awaitable[T]], outcome: Outcome[T]) -> None:
    try:
        outcome.value = await work()
        outcome.returned = True
    except Exception as exc:  # kept for the caller, raised outside any task group
        outcome.error = exc


async def run_under_signal(
    work: Callable[[], Awaitable[T]],
    *,
    signal: AbortSignal | None = None,
    timeout: float | None = None,
    poll: float = 0.01,
) -> Outcome[T]:
    """Run ``work()`` until it returns or raises; an abort of ``signal`` (checked every
    ``poll`` seconds) or ``timeout`` seconds elapsing cancel it first. A signal already
    aborted runs nothing.

    :param work: the coroutine function to run; it must let cancellation through
    :param timeout: the time budget in seconds (``None``: none)
    :return: the ``Outcome`` — never raises what ``work`` raised (it is ``Outcome.error``)
    :raises BaseException: the caller's own cancellation, which propagates as usual
    """
    outcome: Outcome[T] = Outcome()
    if signal is not None and signal.aborted:
        return outcome
    with anyio.move_on_after(math.inf if timeout is None else timeout) as budget:
        async with anyio.create_task_group() as tg:
            if signal is not None:

                async def watch() -> None:
                    await wait_aborted(signal, poll=poll)
                    tg.cancel_scope.cancel()

                tg.start_soon(watch)
            await _collect(work, outcome)
            tg.cancel_scope.cancel()  # done: stop watching the signal
    outcome.timed_out = budget.cancelled_caught
    return outcome


async def run_abortable(work: Callable[[AbortSignal], Awaitable[T]], *, reason: str | None = None) -> T:
    """Run ``work(signal)`` shielded; if the caller is cancelled meanwhile, abort ``signal``
    (with ``reason``) at once, wait for ``work`` to return, then let the cancellation propagate.

    On asyncio the work is a task of its own outside every cancel scope, awaited through
    ``asyncio.shield`` (about 110 interpreter calls, the event loop's included; an anyio task
    group costs about 290, a fifth of an MCP stdio call's Python work); on other backends,
    a shielded task in a task group.

    :param work: the call; it must honour the signal (the registry and providers do)
    :return: what ``work`` returned
    :raises Exception: whatever ``work`` raised
    """
    signal = AbortSignal()
    if _on_asyncio():
        return await _abortable_task(work(signal), signal, reason)
    done = anyio.Event()
    outcome: Outcome[T] = Outcome()

    async def worker() -> None:
        with anyio.CancelScope(shield=True):
            try:
                await _collect(lambda: work(signal), outcome)
            finally:
                done.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(worker)
        try:
            await done.wait()
        except anyio.get_cancelled_exc_class():
            signal.abort(reason)
            raise
    if outcome.error is not None:
        raise outcome.error
    return outcome.value  # type: ignore[return-value]


def _on_asyncio() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # another event loop (trio)
        return False
    return True


async def _abortable_task(call: Awaitable[T], signal: AbortSignal, reason: str | None) -> T:
    """``run_abortable`` on asyncio: ``call`` runs as a task no cancel scope encloses."""
    task = asyncio.ensure_future(call)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        signal.abort(reason)
        with anyio.CancelScope(shield=True):
            await asyncio.wait([task])
        if not task.cancelled():
            task.exception()  # retrieved: what the call raised after the cancellation is not reported
        raise
