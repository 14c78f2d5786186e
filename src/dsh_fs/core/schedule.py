"""Arrival-order scheduling of tool calls (REFERENCE-SPEC §5.5 ``executionMode``).

One ``CallScheduler`` orders the calls of one stream of calls: the tool calls of one
assistant message (``ToolRegistry.execute_batch``), or the calls one MCP connection sends
without waiting for earlier answers (``dsh_fs.mcp``). The rule is the registry's:

* a concurrency-safe call (``read``) starts once every *exclusive* call that arrived
  before it has finished; it overlaps other concurrency-safe calls;
* an exclusive call (``write``, ``edit``, an unknown tool, invalid arguments) starts once
  every call that arrived before it has finished, and every later call waits for it.

So ``read A, read B, edit A, read C`` runs ``{A, B}``, then the edit, then ``C``: an edit
sent right after a read always sees the read's observation. Arrival order is the order of
``admit`` calls, which must therefore happen synchronously, in the order the calls came in,
before anything awaits.

A call cancelled while it waits gives up its place: later calls wait only for the calls
still ahead of them. Only unfinished calls are held, so a scheduler used for a whole
connection stays as small as the number of calls in flight.

Pure: anyio events only, no I/O, no tool knowledge (the caller says which calls are safe).
"""

from __future__ import annotations

import weakref
from types import TracebackType

import anyio

__all__ = ("CallScheduler", "CallSchedulers", "Turn")


class Turn:
    """One admitted call's place in its scheduler: ``async with turn:`` waits until the call
    may start and holds the place until the block exits (however it exits)."""

    __slots__ = ("_ready", "_scheduler", "parallel")

    def __init__(self, scheduler: CallScheduler, parallel: bool) -> None:
        self._scheduler = scheduler
        self._ready = anyio.Event()
        self.parallel = parallel
        """``True``: a concurrency-safe call"""

    async def __aenter__(self) -> Turn:
        if self._ready.is_set():  # may start now: no checkpoint (an event loop iteration less)
            return self
        try:
            await self._ready.wait()
        except BaseException:  # cancelled while waiting: give the place up
            self._scheduler._leave(self)
            raise
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._scheduler._leave(self)

    def leave(self) -> None:
        """Give the place up without having run (idempotent; ``async with`` does it itself)."""
        self._scheduler._leave(self)


class CallScheduler:
    """Admits calls in arrival order and lets each start as §5.5 allows (see the module)."""

    __slots__ = ("_released", "_turns")

    def __init__(self) -> None:
        self._turns: list[Turn] = []
        """unfinished turns (waiting or running), in arrival order"""
        self._released = 0
        """how many turns at the head may run (all concurrency-safe, or one exclusive)"""

    def __len__(self) -> int:
        """The number of admitted calls that have not finished."""
        return len(self._turns)

    def admit(self, *, parallel: bool) -> Turn:
        """Queue one call behind every call admitted before it (synchronous: call it when
        the call arrives, before any ``await``).

        :param parallel: ``True`` for a concurrency-safe call (``ToolRegistry.is_parallel``)
        :return: the call's turn; run the call inside ``async with turn:``
        """
        turn = Turn(self, parallel)
        self._turns.append(turn)
        self._wake()
        return turn

    def _leave(self, turn: Turn) -> None:
        try:
            index = self._turns.index(turn)
        except ValueError:  # already left
            return
        del self._turns[index]
        if index < self._released:
            self._released -= 1
        self._wake()

    def _wake(self) -> None:
        """Release what may run now: the leading concurrency-safe calls, or the first call
        when it is exclusive (amortized: only turns not yet released are looked at)."""
        turns, index = self._turns, self._released
        if index and not turns[0].parallel:
            return  # an exclusive call runs alone
        while index < len(turns):
            turn = turns[index]
            if not turn.parallel and index > 0:
                break
            turn._ready.set()
            index += 1
            if not turn.parallel:
                break
        self._released = index


class CallSchedulers:
    """One ``CallScheduler`` per owner (any weakly referenceable key: an MCP connection's
    observation ``Session``), made on first use and held as long as its owner. One instance is
    shared by every route a connection's calls take (``dsh_fs.mcp``: the SDK's middleware and
    the stdio server's own dispatcher), so they are ordered together."""

    __slots__ = ("_schedulers",)

    def __init__(self) -> None:
        self._schedulers: weakref.WeakKeyDictionary[object, CallScheduler] = weakref.WeakKeyDictionary()

    def of(self, owner: object) -> CallScheduler:
        """``owner``'s scheduler (made now if it has none)."""
        scheduler = self._schedulers.get(owner)
        if scheduler is None:
            scheduler = self._schedulers[owner] = CallScheduler()
        return scheduler
