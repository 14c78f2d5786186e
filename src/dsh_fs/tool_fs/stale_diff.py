"""What changed since the owner last saw a file, as the end of a stale refusal (DEVIATIONS D30).
Pure: no I/O.

``changes_block(seen, now, display)`` is a standard unified diff (``difflib.unified_diff``,
three lines of context) from the text the owner last saw to the text there now, after one
header line (``HEADER``), capped at ``MAX_LINES`` diff lines and ``MAX_BYTES`` UTF-8 bytes; a
cut diff ends with ``cut_note`` and is not the whole story (the caller must not count it as
seen). Lines are compared without their line breaks (a read shows none).
"""

from __future__ import annotations

import difflib
from typing import NamedTuple

__all__ = ("Changes", "HEADER", "MAX_BYTES", "MAX_LINES", "changes_block", "cut_note", "lines_of")

HEADER = "What changed since you last saw it (unified diff: - as you saw it, + as it is now):"
"""DEVIATIONS D30: the line before the diff (dsh-fs's own wording)"""
MAX_LINES = 100
"""diff lines shown at most (headers and hunk lines)"""
MAX_BYTES = 8 * 1024
"""UTF-8 bytes of diff shown at most"""


def cut_note(lines: int) -> str:
    """The last line of a cut diff (D30)."""
    return f"(diff cut after {lines} lines; read the file to see the rest)"


class Changes(NamedTuple):
    """A refusal's changes block: ``text`` (header, diff, maybe ``cut_note``) and whether the
    diff is whole (``whole``: the owner who saw the old text now knows the new one)."""

    text: str
    whole: bool


def lines_of(text: str) -> list[str]:
    """``text`` as lines without their breaks (``\\n``; a ``\\r`` before it is dropped), no
    empty last line for a final break: the lines a ``read`` shows."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def changes_block(seen: str, now: str, display: str, *, max_lines: int = MAX_LINES,
                  max_bytes: int = MAX_BYTES) -> Changes | None:
    """The block appended to a stale refusal: ``HEADER``, then the unified diff of ``seen``
    (the text the owner saw) to ``now`` (the text there now) labelled ``<display> (as you saw
    it)`` / ``<display> (now)``, cut at ``max_lines`` lines or ``max_bytes`` bytes with
    ``cut_note``. ``None`` when the lines are the same (a change of line breaks, BOM or
    encoding only: nothing a diff of lines shows).
    """
    old, new = lines_of(seen), lines_of(now)
    if old == new:
        return None
    shown: list[str] = []
    size = 0
    for line in difflib.unified_diff(old, new, f"{display} (as you saw it)", f"{display} (now)", lineterm=""):
        cost = len(line.encode("utf-8", "surrogatepass")) + 1
        if len(shown) >= max_lines or size + cost > max_bytes:
            return Changes("\n".join([HEADER, *shown, cut_note(len(shown))]), False)
        shown.append(line)
        size += cost
    return Changes("\n".join([HEADER, *shown]), True)
