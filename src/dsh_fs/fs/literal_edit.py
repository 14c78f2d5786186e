"""Literal replacement on decoded file text (REFERENCE-SPEC §2.11 steps 5–7; DEVIATIONS D2).

Pure: no I/O. Matching is the reference's in both modes: CRLF→LF on the file text and on
both strings, then exact, case-sensitive, non-overlapping left-to-right occurrences.

* ``keep_bytes=False`` (reference): the whole file is rewritten in its detected dominant
  line-ending style.
* ``keep_bytes=True`` (default profile, D2): each match maps back to its raw span and only
  those spans change; line breaks inside ``new_string`` take the file's dominant style.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from .text import detect, dominant_style, normalize, restore

__all__ = ("EditFailure", "EditPlan", "plan_edit", "raw_span", "splice")


class EditFailure(Exception):
    """The literal edit cannot apply.

    :param kind: ``empty`` (old_string empty after normalization), ``not_found`` or ``ambiguous``
    :param count: occurrences found (for ``ambiguous``)
    :param content: the LF-normalized file text that was searched
    :param needle: the LF-normalized old_string
    """

    def __init__(self, kind: Literal["empty", "not_found", "ambiguous"], count: int, content: str, needle: str) -> None:
        super().__init__(kind)
        self.kind = kind
        self.count = count
        self.content = content
        self.needle = needle


@dataclass(frozen=True, slots=True)
class EditPlan:
    """What to write and the diff basis."""

    text: str
    """the new file text (without BOM) to encode and write"""
    before: str
    """the old text, LF-normalized"""
    after: str
    """the new text, LF-normalized"""


def raw_span(raw: str, raw_pos: int, length: int) -> int:
    """The raw index reached by advancing ``length`` LF-normalized characters from ``raw_pos``.

    A CRLF pair counts as one normalized character and is never split; ``raw_pos`` must not
    point between the two characters of a pair.
    """
    crlf = 0
    while True:
        seen = raw.count("\r\n", raw_pos, raw_pos + length + crlf)
        if seen == crlf:
            break
        crlf = seen
    end = raw_pos + length + crlf
    if 0 < end < len(raw) and raw[end - 1] == "\r" and raw[end] == "\n":
        end += 1  # the segment ended inside a pair: its last character is that pair's LF
    return end


def _find_all(content: str, needle: str, limit: int | None) -> list[int]:
    starts: list[int] = []
    pos = content.find(needle)
    while pos >= 0:
        starts.append(pos)
        if limit is not None and len(starts) >= limit:
            break
        pos = content.find(needle, pos + len(needle))
    return starts


def plan_edit(raw: str, old_string: str, new_string: str, replace_all: bool, *, keep_bytes: bool) -> EditPlan:
    """Apply a literal edit to ``raw`` (the decoded file text, BOM already stripped).

    :param raw: current file text, line endings as on disk
    :param keep_bytes: ``True`` → change only the matched spans (D2); ``False`` → reference
    :raises EditFailure: ``empty``, ``not_found`` or ``ambiguous`` (count included)
    """
    content = normalize(raw)
    old = normalize(old_string)
    if old == "":
        raise EditFailure("empty", 0, content, old)
    new = normalize(new_string)
    count = content.count(old)
    if count == 0:
        raise EditFailure("not_found", 0, content, old)
    if count > 1 and not replace_all:
        raise EditFailure("ambiguous", count, content, old)
    if not keep_bytes:
        edited = content.replace(old, new)
        return EditPlan(text=restore(edited, detect(raw)), before=content, after=edited)
    if "\r\n" not in raw:
        text = raw.replace(old, new)
        return EditPlan(text=text, before=content, after=text)
    text = splice(raw, [(start, start + len(old), new) for start in _find_all(content, old, None)])
    return EditPlan(text=text, before=content, after=normalize(text))


def splice(raw: str, spans: Iterable[tuple[int, int, str]]) -> str:
    """Replace spans given in LF-normalized coordinates of ``raw``; nothing else changes (D2).

    :param raw: the text with its line endings as on disk (BOM already stripped)
    :param spans: ``(start, end, replacement)`` in ascending order, not overlapping (they may
        touch); ``start``/``end`` index ``normalize(raw)``; ``replacement`` is LF-normalized and
        its line breaks are written in ``raw``'s dominant style
    :return: the new raw text; each span maps back to its raw extent, a CRLF pair is never split
    """
    # ``replacement`` is already LF-normalized: re-normalizing (as ``restore`` does) would eat a
    # lone CR that precedes a line break ("\r\r\n" must stay a CR plus a line break)
    crlf = dominant_style(raw) == "CRLF"
    pieces: list[str] = []
    raw_cursor = 0
    norm_cursor = 0
    for start, end, replacement in spans:
        raw_start = raw_span(raw, raw_cursor, start - norm_cursor)
        raw_end = raw_span(raw, raw_start, end - start)
        pieces.append(raw[raw_cursor:raw_start])
        pieces.append(replacement.replace("\n", "\r\n") if crlf else replacement)
        raw_cursor, norm_cursor = raw_end, end
    pieces.append(raw[raw_cursor:])
    return "".join(pieces)
