"""How many ripgrep processes may run at once, and how much memory each may take (deviation
D23, both profiles; docs/GUARANTEES.md).

One ripgrep process can take hundreds of MB for a short regex (``(\\w{50}){40}`` compiles to
~250 MB), and an MCP server runs the calls of many sessions at once. So:

* **Memory per process.** Every run gets ``RG_MEMORY_FLAGS``: ripgrep's own bounds on the
  compiled regex and its DFA cache. A pattern over them fails with ripgrep's error
  (``rg: compiled regex exceeds size limit of 33554432``) instead of taking the memory.
* **Processes at once.** ``SearchSlots`` (``core.slots.OwnerSlots``): at most ``total`` searches run at once, at most
  ``per_owner`` of them for one owner (an MCP session, a stateless token, a CLI session);
  the rest wait in arrival order, within their call's time budget. An owner with
  ``waiting_per_owner`` calls already waiting is refused at once (``errors.busy``).

Pure anyio; no ripgrep here.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Hashable
from typing import Final

from ..core.slots import OwnerSlots
from . import errors

__all__ = ("RG_MEMORY_FLAGS", "SearchSlots")

RG_MEMORY_FLAGS: Final = ("--regex-size-limit=32M", "--dfa-size-limit=32M")
"""ripgrep's bounds on a compiled regex and on its lazy DFA (defaults: 100 MB and 1000 MB)"""


class SearchSlots(OwnerSlots):
    """Places for running searches, in all and per owner (``core.slots.OwnerSlots``).

    :param total: searches running at once, all owners together
    :param per_owner: searches of one owner running at once
    :param waiting_per_owner: searches of one owner that may wait for a place
    :raises ValueError: for a count below 1
    """

    def __init__(self, *, total: int = 4, per_owner: int = 2, waiting_per_owner: int = 8) -> None:
        if min(total, per_owner, waiting_per_owner) < 1:
            raise ValueError("search slots: every count must be at least 1")
        super().__init__(total=total, per_owner=per_owner, waiting_per_owner=waiting_per_owner)

    @contextlib.asynccontextmanager
    async def hold(self, owner: Hashable, tool: str) -> AsyncIterator[None]:  # type: ignore[override]
        """Hold a place for one search of ``owner`` (waiting for one, in arrival order).

        :raises SearchError: ``SEARCH_FAILED`` (``errors.busy``) when ``owner`` already has
            ``per_owner`` searches running and ``waiting_per_owner`` waiting
        """
        busy = lambda: errors.busy(tool, self.per_owner, self.waiting_per_owner or 0)  # noqa: E731
        async with super().hold(owner, refuse=busy):
            yield
