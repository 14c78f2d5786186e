"""``view`` rendering of the text-editor faces (docs/design/EDITING-FACES-DESIGN.md §3.2). Pure.

* ``select_range`` — validate ``view_range`` against a line count (the reference's checks and
  texts) and turn it into a 1-based ``(first, last)``.
* ``render_numbered`` — Anthropic's format, ``N: text`` per line (the documented example), cut
  at ``max_characters`` on a line boundary with the ``<response clipped>`` note.
* ``render_reference_file`` — the reference's ``str_replace_editor`` view: a header, then
  ``%6d`` numbers, two spaces and the line, clipped at ``maxOutputChars`` UTF-16 units.
* ``render_listing`` / ``listed`` — the two-level directory listing both faces show;
  ``ClippedRows`` keeps, while the rows arrive, only those a clipped listing can show.

Callers supply the lines (the I/O lives in the faces); line splitting differs by face: the
Anthropic face numbers lines as ``read`` does (a final line break ends the last line), the
reference numbers ``text.split("\\n")`` (a final line break leaves an empty last line).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence
from typing import Any, Generic, TypeVar

from ..core.jsonvalue import js_number_str
from ..tool_common.shown import shown_name
from .texts import (
    LISTING_HEADER,
    REF_FILE_HEADER,
    TRUNCATED_MESSAGE,
    VIEW_RANGE_FIRST,
    VIEW_RANGE_ORDER,
    VIEW_RANGE_SECOND,
    VIEW_RANGE_SHAPE,
)

__all__ = (
    "ClippedRows",
    "HIDDEN_NAMES",
    "LISTING_DEPTH",
    "LISTING_MAX_CHARS",
    "ViewRangeError",
    "clip_units",
    "listed",
    "render_listing",
    "render_numbered",
    "render_reference_file",
    "requested_range",
    "select_range",
)

LISTING_DEPTH = 2
"""directories are listed this many levels deep"""
LISTING_MAX_CHARS = 16_000
"""E18: a directory view of the Anthropic face without ``max_characters`` is clipped here (the
length Anthropic's own editor clips every output at, and the reference's ``maxOutputChars``)"""
HIDDEN_NAMES = frozenset({"node_modules", "__pycache__"})
"""dependency and cache folders left out of listings (besides dot-names)"""


class ViewRangeError(ValueError):
    """A ``view_range`` that does not fit the file; ``str()`` is the model-facing text."""


def _js_list(values: Sequence[Any]) -> str:
    return "[" + ", ".join(js_number_str(v) for v in values) + "]"


def _is_integer(value: Any) -> bool:
    """JavaScript's ``Number.isInteger``: ``2`` and ``2.0`` (JSON cannot tell them apart)."""
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


def select_range(view_range: Sequence[Any] | None, count: int) -> tuple[int, int]:
    """The 1-based inclusive lines ``view_range`` selects in a file of ``count`` lines.

    :param view_range: ``None`` (all lines) or ``[first, last]``, ``last`` ``-1`` = to the end;
        integers as JSON has them (``2.0`` is 2), shown in errors as JavaScript prints them
    :return: ``(first, last)``; ``(1, count)`` without a range
    :raises ViewRangeError: with the reference's texts, checked in the reference's order
    """
    if view_range is None:
        return 1, count
    if len(view_range) != 2 or not all(_is_integer(v) for v in view_range):
        raise ViewRangeError(VIEW_RANGE_SHAPE)
    first, last = view_range
    shown, first_shown, last_shown = _js_list(view_range), js_number_str(first), js_number_str(last)
    if first < 1 or first > count:
        raise ViewRangeError(VIEW_RANGE_FIRST.format(range=shown, first=first_shown, count=count))
    if last > count:
        raise ViewRangeError(VIEW_RANGE_SECOND.format(range=shown, second=last_shown, count=count))
    if last != -1 and last < first:
        raise ViewRangeError(VIEW_RANGE_ORDER.format(range=shown, first=first_shown, second=last_shown))
    return int(first), count if last == -1 else int(last)


def requested_range(view_range: Sequence[Any] | None) -> tuple[int, int | None]:
    """The lines to gather before the file's line count is known: ``(first, last)`` of a
    well-formed ``view_range`` (``last=None`` for ``-1`` or a negative end, which
    ``select_range`` refuses later), else ``(1, None)`` (every line; ``select_range`` decides)."""
    if view_range is None or len(view_range) != 2 or not all(_is_integer(v) for v in view_range):
        return 1, None
    first, last = int(view_range[0]), int(view_range[1])
    return max(first, 1), (last if last >= first else None)


def render_numbered(lines: Iterable[str], first: int, max_characters: int | None = None) -> str:
    """Anthropic's view of a file: ``<n>: <line>`` per line, joined by ``"\\n"``.

    With ``max_characters``, the output keeps as many whole lines as fit in that many
    characters (at least part of the first line, cut on a character boundary), then a line with
    the ``<response clipped>`` note.

    :param lines: the selected lines, without line breaks
    :param first: the number of the first of them (1-based)
    """
    rows: list[str] = []
    size = -1  # joined length so far (no separator before the first row)
    for number, line in enumerate(lines, first):
        row = f"{number}: {line}"
        if max_characters is not None and size + 1 + len(row) > max_characters:
            if not rows:
                rows.append(row[:max_characters])
            return "\n".join(rows) + "\n" + TRUNCATED_MESSAGE
        rows.append(row)
        size += 1 + len(row)
    return "\n".join(rows)


def clip_units(text: str, max_units: int) -> str:
    """The reference's ``maybeTruncate``: ``text`` if it is at most ``max_units`` UTF-16 units
    long, else its first ``max_units`` units plus the ``<response clipped>`` note. A surrogate
    pair is never split (the cut moves before it; DEVIATIONS A1/A7)."""
    units = 0
    for index, char in enumerate(text):
        width = 2 if ord(char) > 0xFFFF else 1
        if units + width > max_units:
            return text[:index] + TRUNCATED_MESSAGE
        units += width
    return text


def render_reference_file(
    display_path: str, lines: Sequence[str], first: int, last: int, ranged: bool, max_units: int, total: int
) -> str:
    """The reference's file view (``formatFileView``).

    :param lines: the selected lines ``first..last`` (1-based, inclusive)
    :param ranged: a ``view_range`` was given (the header then names it)
    :param total: the file's line count (``len(text.split("\\n"))``)
    :param last: the range's second element as given (``-1`` stays ``-1`` in the header)
    """
    header = REF_FILE_HEADER.format(path=display_path, count=total)
    if ranged:
        header += f" with view_range=[{first}, {last}]"
    numbered = "\n".join(f"{number:>6}  {line}" for number, line in enumerate(lines, first))
    return clip_units(f"{header}:\n{numbered}\n", max_units)


def listed(name: str) -> bool:
    """Whether a directory entry appears in a listing (not hidden, not a dependency/cache dir)."""
    return not name.startswith(".") and name not in HIDDEN_NAMES


def render_listing(
    display_path: str, rows: Iterable[tuple[str, str]], max_units: int | None, *, utf16_order: bool = False,
    cut: bool = False,
) -> str:
    """The directory view: a header, then ``<d|f|?>\\t<display path>`` rows sorted by path, each
    path as ``tool_common.shown.shown_name`` prints it (D22: a path with a control, separator or format
    character as a JSON string literal, so no name can forge or hide a row).

    :param rows: ``(kind, display_path)`` of the entries to show (the directory itself is added);
        kind is ``d`` (directory), ``f`` (file) or ``?`` (other)
    :param max_units: clip the rows (not the header) at this many UTF-16 units (reference)
    :param utf16_order: sort by UTF-16 code units as the reference's JavaScript ``<`` does;
        otherwise by code point
    :param cut: rows past the clip were left out of ``rows`` already (``ClippedRows``): the
        clip's note is shown even when the rest fits exactly
    """
    entries = [("d", display_path), *rows]
    if utf16_order:
        entries.sort(key=lambda row: row[1].encode("utf-16-be"))
    else:
        entries.sort(key=lambda row: row[1])
    listing = "".join(f"{kind}\t{shown_name(path)}\n" for kind, path in entries)
    if max_units is not None:
        clipped = clip_units(listing, max_units)
        listing = clipped + TRUNCATED_MESSAGE if cut and clipped == listing else clipped
    return f"{LISTING_HEADER.format(path=display_path)}\n{listing}\n"


T = TypeVar("T")


class _Row(Generic[T]):
    """A kept row; ordered backwards, so ``heapq`` keeps the *last* row first."""

    __slots__ = ("key", "kind", "path", "payload")

    def __init__(self, key: Any, kind: str, path: str, payload: T | None) -> None:
        self.key, self.kind, self.path, self.payload = key, kind, path, payload

    def __lt__(self, other: "_Row[T]") -> bool:
        return bool(self.key > other.key)


class ClippedRows(Generic[T]):
    """The rows of a directory listing (``render_listing``'s), arriving in any order, of which
    only those that can still be shown are kept: with ``max_units`` set, a row that sorts after
    rows already filling ``max_units`` characters starts past the clip and is dropped, so at
    most ``max_units`` characters of rows (plus one) are held, whatever the tree's size (L5).
    Without ``max_units`` every row is kept (the listing is shown whole).

    :param display_path: the listed directory (its own ``d`` row is the first)
    :param max_units: the clip of ``render_listing`` (``None``: none)
    :param utf16_order: ``render_listing``'s order
    """

    def __init__(self, display_path: str, max_units: int | None, *, utf16_order: bool = False) -> None:
        self.display_path, self.max_units, self.utf16_order = display_path, max_units, utf16_order
        self._rows: list[_Row[T]] = []
        self._keys: set[Any] = set()
        self._chars = 0
        self._cut = False
        self.add("d", display_path)

    def _key(self, path: str) -> Any:
        return path.encode("utf-16-be", "surrogatepass") if self.utf16_order else path

    def add(self, kind: str, path: str, payload: T | None = None) -> None:
        """Add the row ``<kind>\t<path>``; ``payload`` rides with it (``kept`` gives it back)."""
        row = _Row(self._key(path), kind, path, payload)
        heapq.heappush(self._rows, row)
        self._keys.add(row.key)
        self._chars += len(path) + 3
        if self.max_units is None:
            return
        while len(self._rows) > 1:  # the last row starts after all the others: past the clip?
            last = self._rows[0]
            width = len(last.path) + 3  # code points, never more than UTF-16 units: drops only what is hidden
            if self._chars - width < self.max_units:
                break
            heapq.heappop(self._rows)
            self._cut = True
            self._keys.discard(last.key)
            self._chars -= width

    def kept(self, path: str) -> bool:
        """Whether the row of ``path`` is still kept (a directory worth descending into)."""
        return self._key(path) in self._keys

    def payloads(self) -> list[tuple[str, T]]:
        """``(path, payload)`` of the kept rows that carry one, in listing order."""
        return sorted(((row.path, row.payload) for row in self._rows if row.payload is not None),
                      key=lambda item: self._key(item[0]))

    def render(self) -> str:
        """``render_listing`` of the kept rows."""
        rows = [(row.kind, row.path) for row in self._rows if row.path != self.display_path or row.kind != "d"]
        return render_listing(self.display_path, rows, self.max_units, utf16_order=self.utf16_order, cut=self._cut)
