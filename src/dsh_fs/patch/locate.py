"""Where a hunk goes: anchors, tolerance tiers, ambiguity (docs/design/EDITING-FACES-DESIGN.md §2.3). Pure.

A file is seen as the lines of its LF-normalized text split at ``"\\n"`` (so a final line
break shows as a last empty line, as in the SDK's ``apply_diff``). A hunk's expected lines
(context and removed lines) are searched from the cursor — the end of the previous hunk, or
the line after the hunk's ``@@`` anchors — with decreasing strictness, and the first tier that
matches anywhere decides:

1. ``exact``: the lines are equal;
2. ``trailing``: equal once trailing whitespace is removed;
3. ``surrounding``: equal once leading and trailing whitespace is removed;
4. ``punctuation``: equal once stripped and typographic dashes, quotes and odd spaces are
   turned into their ASCII forms.

These are the tiers of Codex's ``seek_sequence`` (the SDK's ``apply_diff`` uses the first three).
Unlike both, a hunk without a textual ``@@`` anchor whose tier matches at more than one place is
an error (``ambiguous``), never a guess; a hunk with one takes the nearest match after its
anchors, which is what the format says an anchor is for ("use multiple ``@@`` statements to jump
to the right context"). ``*** End of File`` pins a hunk to the end of the file. If nothing matches and the hunk
ends with empty context lines, the search is repeated without them (Codex retries without one
final empty line, which stands for the file's last line break).
"""

from __future__ import annotations

import bisect
from itertools import compress, count, islice
from operator import eq
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from . import messages as msg
from .model import Chunk, Dialect, DiffOp

__all__ = ("Haystack", "Located", "TIERS", "Tier", "locate_chunk")

Tier = Literal["exact", "trailing", "surrounding", "punctuation"]
TIERS: tuple[Tier, ...] = ("exact", "trailing", "surrounding", "punctuation")

_PUNCTUATION = str.maketrans(
    {
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
        **dict.fromkeys("\u2018\u2019\u201a\u201b", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f", '"'),
        **dict.fromkeys("\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000", " "),
    }
)


def _punctuation(text: str) -> str:
    return text.strip().translate(_PUNCTUATION)


_FOLD: dict[Tier, Callable[[str], str]] = {
    "exact": lambda text: text,
    "trailing": str.rstrip,
    "surrounding": str.strip,
    "punctuation": _punctuation,
}


_NOWHERE: list[int] = []

WORK_BUDGET = 4_000_000
"""candidate places one file's hunks may compare in all (a bound on one call's work: hunks that
apply in order along a file visit each place about once, so only a hostile patch gets near it)"""


class _OverBudget(Exception):
    """The file's hunks compared more than ``WORK_BUDGET`` candidate places."""


class _Index:
    """One tier's folded lines and where each line occurs. The first and last place of every
    line are two dictionaries built at C speed; the full ascending list of places of a line
    that occurs more than once is made when first asked for (one C-speed comparison pass from
    its first place to its last), so a file's index costs no Python step per line."""

    __slots__ = ("_first", "_last", "_more", "lines")

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        count = len(lines)
        self._last = dict(zip(lines, range(count)))
        self._first = dict(zip(reversed(lines), range(count - 1, -1, -1)))
        self._more: dict[str, list[int]] = {}

    def rarest(self, wanted: list[str]) -> tuple[int, list[int]]:
        """``(k, places of wanted[k])`` for the first ``k`` whose line has the fewest places
        (``_NOWHERE`` when a line of ``wanted`` occurs nowhere): a line that occurs once is
        found without a Python step per line of ``wanted``."""
        first = self._first
        if not all(map(first.__contains__, wanted)):
            return 0, _NOWHERE
        once = next(compress(count(), map(eq, map(first.__getitem__, wanted), map(self._last.__getitem__, wanted))),
                    None)
        if once is not None:
            return once, [first[wanted[once]]]
        line = min(dict.fromkeys(wanted), key=lambda each: len(self.positions(each)))
        return wanted.index(line), self.positions(line)

    def positions(self, line: str) -> list[int]:
        """The places of ``line``, ascending (``_NOWHERE`` when it occurs nowhere; not to be
        changed by the caller)."""
        first = self._first.get(line)
        if first is None:
            return _NOWHERE
        last = self._last[line]
        if first == last:
            return [first]
        found = self._more.get(line)
        if found is None:  # one C-speed pass over the lines from its first place to its last
            span = range(first, last + 1)
            found = self._more[line] = list(compress(span, map(line.__eq__, islice(self.lines, first, last + 1))))
        return found


class Haystack:
    """The lines of one file, with a lazily built index per tier (line → positions)."""

    def __init__(self, lines: Sequence[str], *, budget: int = WORK_BUDGET) -> None:
        self.lines = lines
        self.budget = budget
        """candidate places left to compare (``locate_chunk`` fails past it)"""
        self._index: dict[Tier, _Index] = {}
        last = len(lines) - 1
        self.content_end = last if lines[last] == "" else last + 1
        """index just past the last line that has content or a line break (before the empty
        last line that a final line break leaves)"""

    def _view(self, tier: Tier) -> _Index:
        view = self._index.get(tier)
        if view is None:
            fold = _FOLD[tier]
            lines = self.lines if tier == "exact" and isinstance(self.lines, list) else [fold(line) for line in self.lines]
            view = self._index[tier] = _Index(lines)
        return view

    def matches(self, pattern: Sequence[str], tier: Tier, lo: int, hi: int, limit: int | None = None) -> list[int]:
        """The starts ``i`` with ``lo <= i <= hi`` where ``pattern`` matches under ``tier``, in
        order; with ``limit``, only the first ``limit`` of them.

        Candidates are the places of the pattern's rarest line (the work follows how often
        that line occurs, not how often a blank or common first line does), visited from ``lo``
        without copying the index: a search that stops at its first match costs the candidates
        before it, so hunks applied in order along a file cost about the file once."""
        view = self._view(tier)
        folded = view.lines
        fold = _FOLD[tier]
        wanted = [fold(line) for line in pattern]
        offset, positions = view.rarest(wanted)
        found: list[int] = []
        size = len(wanted)
        for k in range(bisect.bisect_left(positions, lo + offset), bisect.bisect_right(positions, hi + offset)):
            self.budget -= 1
            if self.budget < 0:
                raise _OverBudget
            start = positions[k] - offset
            if folded[start : start + size] == wanted:
                found.append(start)
                if limit is not None and len(found) >= limit:
                    break
        return found

    def first(self, line: str, lo: int) -> int | None:
        """The first position ``>= lo`` of ``line`` in the first tier that has one."""
        for tier in TIERS:
            positions = self._view(tier).positions(_FOLD[tier](line))
            at = bisect.bisect_left(positions, lo)
            if at < len(positions):
                return positions[at]
        return None


@dataclass(frozen=True, slots=True)
class Located:
    """Where a hunk applies."""

    start: int
    """0-based index of the first file line the hunk's expected lines cover (or where its
    added lines go, for a hunk without expected lines)"""
    lines: tuple[tuple[DiffOp, str], ...]
    """the hunk's diff lines (without the empty context lines dropped by the retry)"""
    floating: bool = False
    """a Codex hunk with neither expected lines nor an anchor: appended at the end of the
    file, it leaves the search cursor where it was (EDITING-FACES-DESIGN §2.3)"""

    @property
    def span(self) -> int:
        """how many file lines the hunk covers"""
        return sum(1 for op, _ in self.lines if op != "+")


def _trim_empty_context(lines: tuple[tuple[DiffOp, str], ...]) -> tuple[tuple[DiffOp, str], ...]:
    """``lines`` without their trailing blank or whitespace-only context lines (a blank line
    a model left between two hunks parses as one)."""
    end = len(lines)
    while end and lines[end - 1][0] == " " and not lines[end - 1][1].strip():
        end -= 1
    return lines[:end]


def locate_chunk(hay: Haystack, chunk: Chunk, cursor: int, *, dialect: Dialect, path: str) -> Located:
    """Find where ``chunk`` applies, at or after ``cursor``.

    :param cursor: 0-based line where the search starts (past the previous hunk)
    :param dialect: where a hunk with no expected line and no textual anchor goes: Codex appends
        it at the end of the file, V4A inserts it at the cursor
    :param path: the file's name for error messages
    :raises PatchError: ``not_found`` (anchor or expected lines, or ``too_much_work`` past the
        haystack's budget), ``ambiguous``
    """
    try:
        return _locate(hay, chunk, cursor, dialect=dialect, path=path)
    except _OverBudget:
        raise msg.too_much_work(path, WORK_BUDGET, chunk.line) from None


def _locate(hay: Haystack, chunk: Chunk, cursor: int, *, dialect: Dialect, path: str) -> Located:
    for k, anchor in enumerate(a for a in chunk.anchors if a):
        found = hay.first(anchor, cursor)
        if found is not None:
            cursor = found + 1
        elif k == 0 and hay.first(anchor, 0) is not None:
            pass  # an anchor above the cursor already holds (SDK: stacked hunks reuse a parent anchor)
        else:
            raise msg.anchor_not_found(anchor, path, chunk.line)
    lines = chunk.lines
    anchored = any(chunk.anchors)
    if all(op == "+" for op, _ in lines):
        if chunk.end_of_file or (dialect == "codex" and not anchored):
            return Located(max(cursor, hay.content_end), lines, floating=True)
        return Located(cursor, lines)
    for attempt in dict.fromkeys((lines, _trim_empty_context(lines))):
        pattern = [text for op, text in attempt if op != "+"]
        if not pattern:
            break
        start = _search(hay, pattern, cursor, chunk.end_of_file, anchored, path, chunk.line)
        if start is not None:
            return Located(start, attempt)
    raise msg.lines_not_found(chunk.old_lines, path, chunk.line)


def _search(
    hay: Haystack, pattern: list[str], cursor: int, end_of_file: bool, anchored: bool, path: str, line: int
) -> int | None:
    size = len(pattern)
    total = len(hay.lines)
    if end_of_file:
        ends = [p for p in dict.fromkeys((hay.content_end - size, total - size)) if p >= max(cursor, 0)]
        for tier in TIERS:
            for p in ends:
                if hay.matches(pattern, tier, p, p):
                    return p
        return None
    for tier in TIERS:
        found = hay.matches(pattern, tier, cursor, total - size, limit=1 if anchored else 2)
        if len(found) == 1 or (found and anchored):
            return found[0]  # an anchor points at the nearest match after it
        if found:  # refused: list every place (this call's only full scan)
            raise msg.ambiguous(pattern, path, [i + 1 for i in hay.matches(pattern, tier, cursor, total - size)], line)
    return None
