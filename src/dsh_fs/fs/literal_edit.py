"""Literal replacement on decoded file text (REFERENCE-SPEC §2.11 steps 5–7; DEVIATIONS D2,
D15, D16).

Pure: no I/O. Matching is the reference's in both modes: CRLF→LF on the file text and on
both strings, then exact, case-sensitive, non-overlapping left-to-right occurrences.

* ``keep_bytes=False`` (reference): the whole file is rewritten in its detected dominant
  line-ending style.
* ``keep_bytes=True`` (default profile, D2): each match maps back to its raw span and only
  those spans change; line breaks inside ``new_string`` take the file's dominant style.
* ``overlapping=True`` (default profile, D15): the one-match rule counts every occurrence,
  overlapping ones included — ``"aa"`` in ``"aaa"`` is ambiguous (2 matches), not one
  replacement of the first two characters. ``replace_all`` is unchanged: it replaces the
  non-overlapping occurrences, left to right (``"aaaaa"`` → ``"bba"``), as ``str.replace``,
  ``sed s///g`` and the reference do.
* ``max_bytes`` (both profiles, D16): the size of the edited file is computed from the match
  count before anything is built; a bigger one fails ``too_large`` instead of exhausting memory.

Cost: linear in the text (``occurrences``); a file with CRLF pairs and many matches is
rebuilt in batches, so the per-match bookkeeping never outgrows the result.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Literal

from .occurrences import borders, count_overlapping
from .text import detect, dominant_style, normalize, restore, utf8_size

__all__ = ("EditFailure", "EditPlan", "edited_size", "plan_edit", "raw_span", "splice")

_BATCH = 4096
"""spans whose pieces are joined at once when a CRLF text is rebuilt"""


class EditFailure(Exception):
    """The literal edit cannot apply.

    :param kind: ``empty`` (old_string empty after normalization), ``not_found``,
        ``ambiguous`` or ``too_large`` (D16)
    :param count: occurrences found (for ``ambiguous``)
    :param content: the LF-normalized file text that was searched
    :param needle: the LF-normalized old_string
    :param overlapping: ``ambiguous`` only because occurrences overlap (D15): the count
        includes them
    :param size: for ``too_large``, the bytes the edited text would take (BOM not included)
    :param replacement: the LF-normalized new_string
    """

    def __init__(self, kind: Literal["empty", "not_found", "ambiguous", "too_large"], count: int, content: str,
                 needle: str, *, overlapping: bool = False, size: int = 0, replacement: str = "") -> None:
        super().__init__(kind)
        self.kind = kind
        self.count = count
        self.content = content
        self.needle = needle
        self.overlapping = overlapping
        self.size = size
        self.replacement = replacement


@dataclass(frozen=True, slots=True)
class EditPlan:
    """What to write and the diff basis."""

    text: str
    """the new file text (without BOM) to encode and write"""
    before: str
    """the old text, LF-normalized"""
    after: str
    """the new text, LF-normalized"""
    changed: tuple[int, int] | None = None
    """``(start, end)`` of the one match in ``before`` (``after`` keeps what is around it), as a
    hint for the diff; ``None`` for several replacements"""


def raw_span(raw: str, raw_pos: int, length: int) -> int:
    """The raw index reached by advancing ``length`` LF-normalized characters from ``raw_pos``.

    A CRLF pair counts as one normalized character and is never split; ``raw_pos`` must not
    point between the two characters of a pair. Cost: linear in the span (each character is
    counted once).
    """
    end = raw_pos + length
    pairs = raw.count("\r\n", raw_pos, end)
    while pairs:  # each pair makes the span one raw character longer: look at the new ones
        reach = end + pairs
        pairs = raw.count("\r\n", max(end - 1, raw_pos), reach)
        end = reach
    if 0 < end < len(raw) and raw[end - 1] == "\r" and raw[end] == "\n":
        end += 1  # the segment ended inside a pair: its last character is that pair's LF
    return end


def _matches(content: str, needle: str) -> Iterator[int]:
    """Start offsets of the non-overlapping left-to-right occurrences of ``needle``."""
    pos = content.find(needle)
    while pos >= 0:
        yield pos
        pos = content.find(needle, pos + len(needle))


def _raw_needle(raw: str, old: str) -> str | None:
    """The text ``old`` (normalized) takes in ``raw`` wherever it occurs there, when that is one
    string: ``old`` itself if it holds no line break and does not end with a CR (it can then
    neither cross nor split a CRLF pair), or ``old`` with CRLF breaks in a file whose every
    CR and LF are paired. ``None``: the matches must be mapped back one by one."""
    if old.endswith("\r"):
        return None
    if "\n" not in old:
        return old
    pairs = raw.count("\r\n")
    if raw.count("\r") == pairs == raw.count("\n"):
        return old.replace("\n", "\r\n")
    return None


def _one_match_count(content: str, old: str, count: int, first: int = -1) -> int:
    """D15: occurrences of ``old`` overlaps included, given ``count`` non-overlapping ones
    (``first``: where the first one starts, when the caller knows it)."""
    if count == 0 or not borders(old):
        return count
    if count == 1:  # every other occurrence starts inside the one the scan found
        if first < 0:
            first = content.find(old)
        return 1 + count_overlapping(content, old, first + 1, first + 2 * len(old) - 1)
    return count_overlapping(content, old)


def _count_from(content: str, old: str, replace_all: bool) -> tuple[int, int]:
    """``content.count(old)`` and where its first occurrence starts (-1: none; not looked for
    with ``replace_all``). Without ``replace_all`` an edit succeeds only with one match: two
    ``find`` s tell zero, one (and where) or more in one pass, and only more is counted."""
    if replace_all:
        return content.count(old), -1
    first = content.find(old)
    if first < 0:
        return 0, -1
    if content.find(old, first + len(old)) < 0:
        return 1, first
    return content.count(old), first


def edited_size(raw: str, raw_bytes: int, old: str, new: str, count: int, *, keep_bytes: bool,
                limit: int | None = None) -> int:
    """UTF-8 bytes of the text ``plan_edit`` would build for ``count`` replacements of the
    normalized ``old`` by the normalized ``new`` in ``raw`` (BOM not included), computed
    without building it (D16).

    :param raw_bytes: UTF-8 bytes of ``raw``
    :param limit: the size only matters above it: a bound that is within it is returned as
        is (an ``old`` with line breaks in a CRLF file otherwise costs a walk over the
        matches, to take off the carriage returns inside them)

    Exact, except in the reference profile where a lone CR meets a line break at the edge of
    a replacement: its rewrite (``restore``) then merges or keeps apart a pair this count does
    not foresee (at most two bytes a match).
    """
    grow = utf8_size(new) - utf8_size(old)
    pairs = raw.count("\r\n") if "\r" in raw else 0  # ``in``: one memchr
    if not keep_bytes:
        size = raw_bytes - pairs + count * grow
        if detect(raw) == "CRLF":  # restore: CRLF → LF once more, then every LF → CRLF
            merged = raw.count("\r\r\n") + count * (new.count("\r\n") - old.count("\r\n"))
            size += raw.count("\n") + count * (new.count("\n") - old.count("\n")) - merged
        return size
    if not pairs:
        return raw_bytes + count * grow
    if dominant_style(raw) == "CRLF":
        grow += new.count("\n")
    size = raw_bytes + count * grow
    needle = _raw_needle(raw, old)
    if needle is not None:
        return size - count * (len(needle) - len(old))
    if limit is None or size > limit:  # a matched span is longer than old by the pairs inside it
        content = normalize(raw)
        raw_cursor = norm_cursor = 0
        for start in _matches(content, old):
            raw_start = raw_span(raw, raw_cursor, start - norm_cursor)
            raw_end = raw_span(raw, raw_start, len(old))
            size -= raw_end - raw_start - len(old)
            raw_cursor, norm_cursor = raw_end, start + len(old)
    return size


def plan_edit(raw: str, old_string: str, new_string: str, replace_all: bool, *, keep_bytes: bool,
              overlapping: bool = False, max_bytes: int | None = None, raw_bytes: int | None = None) -> EditPlan:
    """Apply a literal edit to ``raw`` (the decoded file text, BOM already stripped).

    :param raw: current file text, line endings as on disk
    :param keep_bytes: ``True`` → change only the matched spans (D2); ``False`` → reference
    :param overlapping: ``True`` → without ``replace_all``, overlapping occurrences count
        toward the one-match rule (D15)
    :param max_bytes: fail ``too_large`` when the edited text would take more UTF-8 bytes (D16)
    :param raw_bytes: UTF-8 bytes of ``raw`` (measured when not given)
    :raises EditFailure: ``empty``, ``not_found``, ``ambiguous`` (count included) or ``too_large``
    """
    content = normalize(raw)
    old = normalize(old_string)
    if old == "":
        raise EditFailure("empty", 0, content, old)
    new = normalize(new_string)
    count, first = _count_from(content, old, replace_all)
    if count == 0:
        raise EditFailure("not_found", 0, content, old, replacement=new)
    if not replace_all:
        found = _one_match_count(content, old, count, first) if overlapping else count
        if found > 1:
            raise EditFailure("ambiguous", found, content, old, overlapping=found > count)
    if max_bytes is not None:
        size = edited_size(raw, utf8_size(raw) if raw_bytes is None else raw_bytes, old, new, count,
                           keep_bytes=keep_bytes, limit=max_bytes)
        if size > max_bytes:
            raise EditFailure("too_large", count, content, old, size=size)
    changed = (first, first + len(old)) if count == 1 and first >= 0 else None  # a hint for the diff
    if not keep_bytes:
        edited = _replaced(content, old, new, count, first)
        return EditPlan(text=restore(edited, detect(raw)), before=content, after=edited, changed=changed)
    if content is raw:  # no CR at all (``normalize`` returned its argument): raw is its own normalized text
        text = _replaced(raw, old, new, count, first)
        return EditPlan(text=text, before=content, after=text, changed=changed)
    if "\r\n" not in raw:
        text = raw.replace(old, new)
        return EditPlan(text=text, before=content, after=text)
    needle = _raw_needle(raw, old)
    if needle is not None:  # one string in raw: str.replace, with the breaks in raw's style
        text = raw.replace(needle, new.replace("\n", "\r\n") if dominant_style(raw) == "CRLF" else new)
    else:
        text = splice(raw, ((start, start + len(old), new) for start in _matches(content, old)))
    return EditPlan(text=text, before=content, after=normalize(text))


def _replaced(text: str, old: str, new: str, count: int, first: int) -> str:
    """``text.replace(old, new)``, given ``text.count(old)`` and, when known, where the first
    occurrence starts: the one match (the one-match rule's case) is sliced out, no scan."""
    if count == 1 and first >= 0:
        return text[:first] + new + text[first + len(old):]
    return text.replace(old, new)


def splice(raw: str, spans: Iterable[tuple[int, int, str]]) -> str:
    """Replace spans given in LF-normalized coordinates of ``raw``; nothing else changes (D2).

    :param raw: the text with its line endings as on disk (BOM already stripped)
    :param spans: ``(start, end, replacement)`` in ascending order, not overlapping (they may
        touch); ``start``/``end`` index ``normalize(raw)``; ``replacement`` is LF-normalized and
        its line breaks are written in ``raw``'s dominant style
    :return: the new raw text; each span maps back to its raw extent, a CRLF pair is never
        split. Cost: linear in ``raw`` and the replacements, however many spans.
    """
    if "\r" not in raw:  # no CR: ``raw`` is its own normalized text, LF-dominant
        joined: list[str] = []
        cuts: list[str] = []
        cursor = 0
        for start, end, replacement in spans:
            cuts.append(raw[cursor:start])
            cuts.append(replacement)
            cursor = end
            if len(cuts) >= 2 * _BATCH:
                joined.append("".join(cuts))
                cuts.clear()
        cuts.append(raw[cursor:])
        joined.append("".join(cuts))
        return "".join(joined)
    # ``replacement`` is already LF-normalized: re-normalizing (as ``restore`` does) would eat a
    # lone CR that precedes a line break ("\r\r\n" must stay a CR plus a line break)
    crlf = dominant_style(raw) == "CRLF"
    parts: list[str] = []
    pieces: list[str] = []
    raw_cursor = 0
    norm_cursor = 0
    for start, end, replacement in spans:
        raw_start = raw_span(raw, raw_cursor, start - norm_cursor)
        raw_end = raw_span(raw, raw_start, end - start)
        pieces.append(raw[raw_cursor:raw_start])
        pieces.append(replacement.replace("\n", "\r\n") if crlf else replacement)
        raw_cursor, norm_cursor = raw_end, end
        if len(pieces) >= 2 * _BATCH:
            parts.append("".join(pieces))
            pieces.clear()
    pieces.append(raw[raw_cursor:])
    parts.append("".join(pieces))
    return "".join(parts)
