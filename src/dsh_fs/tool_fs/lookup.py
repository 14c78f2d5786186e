"""The ``read`` tool's look for a lookalike of a path that is not there (DEVIATIONS D19).

Seam calls only (``resolve``, ``iter_dir``), after the read found nothing: the parent
directory is listed and its names compared with the missing one (``name_hints.lookalike``);
when the parent is missing too, its own parent is tried for it, up to ``_MAX_LEVELS`` up.

Bounded: at most ``_MAX_LEVELS`` listings, each stopped after ``2 * _MAX_ENTRIES`` of its
own abort checkpoints (one or two per entry, by provider: 1000 to 2000 entries) or once
``2 * _MAX_ENTRIES`` entries arrived (a provider that reads in batches, ``iter_dir``, stops
there); a longer directory gives no hint rather than a slow one. Never a stat, so the read's
stat budget (REFERENCE-SPEC §4.11) is kept. Any failure means no hint.
"""

from __future__ import annotations

import posixpath

from ..core.signal import AbortSignal
from ..fs.errors import FsError, FsErrorCode
from ..fs.filesystem import FileSystem
from ..fs.types import DirEntry, Target
from .hints.chars import escape
from .listing import scan
from .name_hints import lookalike

__all__ = ("lookalike_hint",)

_MAX_LEVELS = 4
_MAX_ENTRIES = 1000


class _Checkpoints(AbortSignal):
    """An abort signal that reads as aborted once checked more than ``limit`` times (or when
    ``outer``, the call's own signal, is): it bounds a primitive by its checkpoints."""

    __slots__ = ("_left", "_outer")

    def __init__(self, limit: int, outer: AbortSignal | None) -> None:
        super().__init__()
        self._left = limit
        self._outer = outer

    @property
    def aborted(self) -> bool:
        self._left -= 1
        return self._left < 0 or (self._outer is not None and self._outer.aborted) or super().aborted


async def _entries(fs: FileSystem, directory: Target, signal: AbortSignal | None) -> list[DirEntry] | None:
    """The children of ``directory``, or ``None`` past ``2 * _MAX_ENTRIES`` of them."""
    entries: list[DirEntry] = []

    def take(batch: list[DirEntry]) -> bool:
        entries.extend(batch)
        return len(entries) > 2 * _MAX_ENTRIES

    await scan(fs, directory, take, signal=_Checkpoints(2 * _MAX_ENTRIES + 8, signal))
    return entries if len(entries) <= 2 * _MAX_ENTRIES else None


async def lookalike_hint(fs: FileSystem, display: str, *, signal: AbortSignal | None) -> str | None:
    """``Hint: "<path>" exists: <what differs>.`` for a missing ``display`` path whose name (or
    a missing parent's name) differs from an existing one only by lookalike characters, else
    ``None``. Never raises an ``FsError``."""
    path = display
    for _ in range(_MAX_LEVELS):
        parent, name = posixpath.split(path)
        if not name or parent == path:
            return None
        try:
            directory = await fs.resolve(parent, signal=signal)
            entries = await _entries(fs, directory, signal)
        except FsError as err:
            if err.code == FsErrorCode.NOT_FOUND:  # the parent is missing too: look one level up
                path = parent
                continue
            return None
        if entries is None:
            return None
        found = lookalike(name, (entry.name for entry in entries))
        if found is None:
            return None
        existing, what = found
        shown = next(e.target.display_path for e in entries if e.name == existing)
        return escape(f'Hint: "{shown}" exists: {what}.')
    return None
