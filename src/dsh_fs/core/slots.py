"""Places for heavy calls, in all and per owner: how many run at once (deviations D23 for
searches, L5 for directory listings).

``OwnerSlots.hold(owner)`` waits, in arrival order, until fewer than ``total`` calls of every
owner and fewer than ``per_owner`` calls of ``owner`` hold a place, then holds one while the
call runs. An owner is whatever names one client's calls (an MCP session, a stateless token, a
``--session``; ``None`` for calls without a session). With ``waiting_per_owner`` set, an owner
that already has ``per_owner`` calls running and that many waiting is refused at once (the
caller's ``refuse`` gives the error); without it, calls wait as long as it takes (a waiting
call holds nothing but its task).

Pure anyio: no I/O, no tool knowledge.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import AsyncIterator, Callable, Hashable

import anyio

__all__ = ("OwnerSlots",)


class OwnerSlots:
    """Places for running calls, in all and per owner.

    :param total: calls running at once, all owners together
    :param per_owner: calls of one owner running at once
    :param waiting_per_owner: calls of one owner that may wait for a place (``None``: any number)
    :raises ValueError: for a count below 1
    """

    def __init__(self, *, total: int, per_owner: int, waiting_per_owner: int | None = None) -> None:
        if min(total, per_owner, waiting_per_owner or 1) < 1:
            raise ValueError("slots: every count must be at least 1")
        self.total, self.per_owner, self.waiting_per_owner = total, per_owner, waiting_per_owner
        self._all = anyio.Semaphore(total)
        self._owners: dict[Hashable, anyio.Semaphore] = {}
        self._users: Counter[Hashable] = Counter()
        """calls of each owner holding or waiting for a place"""
        self.running = 0
        """calls holding a place now"""

    @contextlib.asynccontextmanager
    async def hold(self, owner: Hashable, *,
                   refuse: Callable[[], BaseException] | None = None) -> AsyncIterator[None]:
        """Hold a place for one call of ``owner`` (waiting for one, in arrival order).

        :param refuse: the exception for a call over ``waiting_per_owner`` (called with no
            argument; ``None``: a ``RuntimeError``)
        :raises BaseException: ``refuse()`` when ``owner`` already has ``per_owner`` calls
            running and ``waiting_per_owner`` waiting
        """
        cap = self.waiting_per_owner
        if cap is not None and self._users[owner] >= self.per_owner + cap:
            raise refuse() if refuse is not None else RuntimeError("slots: too many calls waiting")
        mine = self._owners.get(owner)
        if mine is None:
            mine = self._owners[owner] = anyio.Semaphore(self.per_owner)
        self._users[owner] += 1
        try:
            async with mine, self._all:
                self.running += 1
                try:
                    yield
                finally:
                    self.running -= 1
        finally:
            self._users[owner] -= 1
            if self._users[owner] == 0:
                del self._users[owner]
                del self._owners[owner]
