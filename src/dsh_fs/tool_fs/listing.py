"""What a directory listing holds while it runs (deviation L5): the places listings run in, and
the bounded scan through the seam's ``iter_dir``.

A listing stats every child of a directory, and holding every entry of a big one costs memory
whatever page is shown (bench/RESULTS.md, the ``list`` row: 64 MiB for 100k entries), so
``list`` and the editors' directory ``view`` read the children in batches (``scan``), keep
only what they can still show (``list_render.PageSelector``, ``tool_editor.view.ClippedRows``),
and run under one context's ``listing_slots``: at most ``LISTINGS_AT_ONCE`` at once, at most
``LISTINGS_PER_OWNER`` of one owner (an MCP session, a stateless token, a ``--session``), the
rest waiting in arrival order (``core.slots.OwnerSlots``, as D23 places searches). A waiting
listing holds nothing but its task; none is refused.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

from ..core.slots import OwnerSlots

if TYPE_CHECKING:
    from ..core.context import Context
    from ..core.signal import AbortSignal
    from ..core.session import ToolExecution
    from ..fs.filesystem import FileSystem
    from ..fs.types import DirEntry, Target

__all__ = ("LISTINGS_AT_ONCE", "LISTINGS_PER_OWNER", "held", "listing_slots", "scan")

LISTINGS_AT_ONCE = 4
"""listings running at once in one context, every owner together"""
LISTINGS_PER_OWNER = 2
"""listings of one owner running at once"""

_SLOTS: "WeakKeyDictionary[Context, OwnerSlots]" = WeakKeyDictionary()


def listing_slots(ctx: "Context") -> OwnerSlots:
    """The listing places of ``ctx`` (one per context, made on first use, shared by every tool
    and face that lists)."""
    slots = _SLOTS.get(ctx)
    if slots is None:
        slots = _SLOTS[ctx] = OwnerSlots(total=LISTINGS_AT_ONCE, per_owner=LISTINGS_PER_OWNER)
    return slots


@contextlib.asynccontextmanager
async def held(ctx: "Context", execution: "ToolExecution") -> AsyncIterator[None]:
    """Hold one of ``ctx``'s listing places for the call ``execution`` (its session's owner)."""
    owner = execution.session.id if execution.session is not None else None
    async with listing_slots(ctx).hold(owner):
        yield


async def scan(fs: "FileSystem", target: "Target", take: Callable[[list["DirEntry"]], bool | None], *,
               signal: "AbortSignal | None") -> None:
    """Feed the children of the directory ``target`` to ``take``, one ``iter_dir`` batch at a
    time; ``take`` returning ``True`` stops the scan (the provider's hold is released).

    :raises FsError: as ``FileSystem.list_dir``
    """
    batches = fs.iter_dir(target, signal=signal)
    try:
        async for batch in batches:
            if take(batch):
                return
    finally:
        close = getattr(batches, "aclose", None)
        if close is not None:
            await close()
