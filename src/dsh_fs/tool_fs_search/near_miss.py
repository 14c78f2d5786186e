"""A ``glob`` that found nothing for a literal name: ``read``'s lookalike hint (DEVIATIONS S7).

``glob 'ROADMAP.md'`` answers ``No files found`` when ``roadmap.md`` exists; ``read`` of the
same name already says ``Hint: "<path>" exists: <what differs>.`` (D19). Here the same hint
(``tool_fs.lookup.lookalike_hint``: case, Unicode normalization, no-break spaces, a similar
name) is looked for when the pattern's path is literal — ``ROADMAP.md``, ``docs/ROADMAP.md`` —
or its only wildcard is a leading ``**/``. Seam calls only (``resolve``, ``list_dir``), bounded
as ``lookalike_hint`` is; any failure means no hint.
"""

from __future__ import annotations

import posixpath

from ..core.signal import AbortSignal
from ..fs.filesystem import FileSystem
from ..tool_fs.lookup import lookalike_hint

__all__ = ("literal_part", "near_miss_hint")

_GLOB_CHARS = frozenset("*?[]{}\\!")


def literal_part(pattern: str) -> str | None:
    """The literal relative path ``pattern`` names (``**/`` prefixes dropped), or ``None`` when
    any other part of it is a wildcard, or it is absolute or climbs (``..``). Pure.

    >>> literal_part("**/ROADMAP.md"), literal_part("docs/*.md")
    ('ROADMAP.md', None)
    """
    while pattern.startswith("**/"):
        pattern = pattern[3:]
    if not pattern or pattern.startswith("/") or any(c in _GLOB_CHARS for c in pattern):
        return None
    parts = [p for p in pattern.split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        return None
    return "/".join(parts)


async def near_miss_hint(fs: FileSystem, base: str, pattern: str, *, signal: AbortSignal | None) -> str | None:
    """``Hint: "<path>" exists: <what differs>.`` for a literal ``pattern`` below the display
    directory ``base`` (the searched directory), else ``None``. Never raises an ``FsError``."""
    literal = literal_part(pattern)
    if literal is None:
        return None
    return await lookalike_hint(fs, posixpath.join(base, literal), signal=signal)
