"""``str_replace`` helpers the faces need beyond ``edit``'s literal matching
(docs/design/EDITING-FACES-DESIGN.md §3.4). Pure.

The default profile runs ``str_replace`` as ``edit`` with a unique match (``fs.literal_edit``,
D1/D2). The reference's ``str_replace_editor`` matches ``old_str`` verbatim against the raw text
(CRLF not normalized) and names the lines of every occurrence when there are several.
"""

from __future__ import annotations

__all__ = ("occurrence_lines", "occurrences", "replace_once")


def occurrences(text: str, needle: str) -> list[int]:
    """Offsets of the non-overlapping occurrences of ``needle``, left to right (``needle`` non-empty)."""
    found: list[int] = []
    at = text.find(needle)
    while at >= 0:
        found.append(at)
        at = text.find(needle, at + len(needle))
    return found


def occurrence_lines(text: str, offsets: list[int]) -> list[int]:
    """The 1-based line of each offset (ascending offsets)."""
    lines: list[int] = []
    line, cursor = 1, 0
    for offset in offsets:
        line += text.count("\n", cursor, offset)
        cursor = offset
        lines.append(line)
    return lines


def replace_once(text: str, offset: int, old: str, new: str) -> str:
    """``text`` with the occurrence of ``old`` at ``offset`` replaced by ``new`` (the reference's
    raw replacement)."""
    return text[:offset] + new + text[offset + len(old) :]
