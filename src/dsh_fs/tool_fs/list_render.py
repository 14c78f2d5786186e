"""Pure directory-listing presentation for the ``list`` tool: order the direct children, count
the complete composition, and render one bounded page so that no file name can forge the
result envelope. No I/O, no kernel imports.

Follows the reference's ``packages/fs/tool-fs/src/list-render.ts`` (toninfo/deepseek-harness
at commit 99a6be8e0208f061c22366f331e97e561ab9ef76, the newest version before the tool was
withdrawn there): directories first, then files, then other children, each group by name; a
footer with the complete count and composition, and the next offset while more remain.

Deviations (docs/DEVIATIONS.md), each a ``ToolSwitches`` field the caller passes:

* A6 (both profiles): names compare by code point, not by the locale's collation.
* L2: a regular file shows its size (`` (12 bytes)``) when the provider knows it.
* L3: a quoted name never carries a raw C1 control character or DEL (JSON leaves them raw),
  and a name holding a line or paragraph separator or a format character (bidirectional
  overrides and isolates, zero-width characters, U+2060, U+FEFF: ``tool_common.shown.is_hidden``) is
  quoted with them escaped, so ``report\u202egnp.exe`` cannot read as ``reportexe.png``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, TypeVar

from ..tool_common.shown import is_hidden, needs_quoting, unicode_escape

__all__ = (
    "Child",
    "LIST_MAX_ENTRIES",
    "ListCounts",
    "ListPage",
    "ListedEntry",
    "PageSelector",
    "count_entries",
    "format_list_output",
    "order_entries",
    "page_of",
    "render_name",
)

LIST_MAX_ENTRIES = 200
"""default of ``list_max_entries`` (the reference's ``listMaxEntries``): entries on one page"""

EntryType = Literal["file", "directory", "other"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ListedEntry:
    """One direct child as the listing shows it."""

    name: str
    """basename inside the listed directory"""
    type: EntryType
    """``other``: anything but a regular file or a directory (FIFO, socket, device, a broken
    symlink, a symlink leading out of the workspace)"""
    size: int | None = None
    """bytes of a regular file, when the provider reported it (shown under L2)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class ListCounts:
    """Composition of the complete listing (every page carries it)."""

    directories: int = 0
    files: int = 0
    other: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class ListPage:
    """One bounded ``list`` result."""

    path: str
    """display path of the listed directory"""
    offset: int
    """1-based index of the first entry shown"""
    entries: tuple[ListedEntry, ...]
    """this page, in display order"""
    total_entries: int
    """direct children in the complete listing"""
    counts: ListCounts
    """composition of the complete listing, not only of this page"""

    def as_dict(self) -> dict[str, object]:
        """The reference's canonical value (``{path, offset, entries: [{name, type}],
        totalEntries, counts}``), for ``meta``."""
        return {
            "path": self.path,
            "offset": self.offset,
            "entries": [{"name": e.name, "type": e.type} for e in self.entries],
            "totalEntries": self.total_entries,
            "counts": {"directories": self.counts.directories, "files": self.counts.files, "other": self.counts.other},
        }


_RANK = {"directory": 0, "file": 1, "other": 2}
_SUFFIX = {"directory": "/", "file": "", "other": "@"}


class Child(Protocol):
    """What the ordering, counting and paging read of a child: a ``ListedEntry``, or a
    provider's ``DirEntry`` as ``list_dir`` returned it (only the page's are converted)."""

    @property
    def name(self) -> str: ...
    @property
    def type(self) -> EntryType: ...
    @property
    def size(self) -> int | None: ...


E = TypeVar("E", bound=Child)


def order_entries(entries: Iterable[E]) -> list[E]:
    """Directories, then files, then other children; each group by name in code-point order
    (DEVIATIONS A6: the reference compares with ``localeCompare``). Returns a new list."""
    return sorted(entries, key=lambda e: (_RANK[e.type], e.name))


def count_entries(entries: Iterable[Child]) -> ListCounts:
    """The directory/file/other composition of ``entries`` (the complete listing)."""
    counts = {"directory": 0, "file": 0, "other": 0}
    for entry in entries:
        counts[entry.type] += 1
    return ListCounts(directories=counts["directory"], files=counts["file"], other=counts["other"])


def _count(n: int, singular: str, plural: str) -> str:
    return f"{n} {singular if n == 1 else plural}"


def _breakdown(counts: ListCounts) -> str:
    parts = [_count(counts.directories, "directory", "directories"), _count(counts.files, "file", "files")]
    if counts.other > 0:
        parts.append(f"{counts.other} other")
    return ", ".join(parts)


# The reference's NEEDS_QUOTING, /[\p{Cc}\\]|^"|@$|<\//u: a control character (one entry split
# across lines), a backslash (must round-trip), a leading quote (looks like the quoted form), a
# trailing @ (reads as the non-regular marker), </ (closes the envelope).
_NEEDS_QUOTING = re.compile(r'[\x00-\x1f\x7f-\x9f\\]|^"|@$|</')
_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _js_stringify(value: str) -> str:
    """``JSON.stringify`` of a string: like ``json.dumps(ensure_ascii=False)`` (which escapes
    control characters below U+0020 with JavaScript's short forms), DEL and C1 left raw."""
    return json.dumps(value, ensure_ascii=False)


def render_name(value: str, *, escape_hidden: bool) -> str:
    """One untrusted name: verbatim when it cannot disturb the format (every ordinary name),
    else a JSON string with ``</`` written ``<\\/``.

    A lone surrogate (a name that is not valid UTF-8, kept by ``surrogateescape``) is shown as
    U+FFFD, as JavaScript's ``readdir`` decodes it.

    :param escape_hidden: DEVIATIONS L3: a name with a hidden character (``tool_common.shown.is_hidden``:
        a control, a line or paragraph separator, a format character) is quoted, and inside
        the quotes each such character is an escape (``\\u007f``, ``\\u202e``; JSON's own
        escapes for C0); off: the reference's rule, DEL, C1 and the rest left raw
    """
    value = _LONE_SURROGATE.sub("\ufffd", value)
    if not (_NEEDS_QUOTING.search(value) or (escape_hidden and needs_quoting(value))):
        return value
    quoted = _js_stringify(value).replace("</", "<\\/")
    if escape_hidden:
        quoted = "".join(unicode_escape(ch) if is_hidden(ch) else ch for ch in quoted)
    return quoted


def _size(entry: ListedEntry) -> str:
    if entry.type != "file" or entry.size is None:
        return ""
    return f" ({_count(entry.size, 'byte', 'bytes')})"


def format_list_output(page: ListPage, *, sizes: bool = False, escape_hidden: bool = False) -> str:
    """The model-facing envelope of one page (the reference's ``formatListOutput``).

    An entry is its name (verbatim or quoted, :func:`render_name`) and ``/`` for a directory or
    ``@`` for another child; a regular file has no marker. The footer: ``(Empty directory)``;
    ``(Showing entries <a>-<b> of <n>: <breakdown>.[ Use offset=<b+1> to continue.])`` for a
    partial view; else ``(<n> entries: <breakdown>)``.

    :param sizes: DEVIATIONS L2: a file's size after its name
    :param escape_hidden: DEVIATIONS L3 (see :func:`render_name`)
    """
    count = len(page.entries)
    end = 0 if count == 0 else page.offset + count - 1
    if page.total_entries == 0:
        footer = "(Empty directory)"
    elif page.offset > 1 or count < page.total_entries:
        footer = f"(Showing entries {page.offset}-{end} of {page.total_entries}: {_breakdown(page.counts)}."
        footer += f" Use offset={end + 1} to continue.)" if end < page.total_entries else ")"
    else:
        footer = f"({_count(page.total_entries, 'entry', 'entries')}: {_breakdown(page.counts)})"
    if count:
        lines = [
            render_name(e.name, escape_hidden=escape_hidden) + _SUFFIX[e.type] + (_size(e) if sizes else "")
            for e in page.entries
        ]
        body = "\n".join(lines) + "\n\n" + footer
    else:
        body = footer
    return f"<path>{render_name(page.path, escape_hidden=escape_hidden)}</path>\n<type>directory</type>\n<content>\n{body}\n</content>"


def page_of(path: str, ordered: Sequence[Child], offset: int, max_entries: int) -> ListPage:
    """The page of ``ordered`` (display order) from the 1-based ``offset``, ``max_entries`` long;
    its entries as ``ListedEntry`` (name, type, size), the counts of all of ``ordered``."""
    return ListPage(
        path=path,
        offset=offset,
        entries=tuple(ListedEntry(name=e.name, type=e.type, size=e.size)
                      for e in ordered[offset - 1 : offset - 1 + max_entries]),
        total_entries=len(ordered),
        counts=count_entries(ordered),
    )


class PageSelector:
    """One page of a listing whose children arrive in batches, in any order (a provider's
    ``iter_dir``), without holding the whole directory: the counts of every child, and only
    the ``offset - 1 + max_entries`` first children in display order (``order_entries``'s)
    as compact ``(rank, name, type, size)`` rows — at most twice that many, plus one batch,
    whatever the directory's size (a bounded selection: sorted and cut when it doubles).

    :param offset: the page's 1-based first entry
    :param max_entries: entries on a page
    """

    __slots__ = ("_counts", "_keep", "_kept", "max_entries", "offset")

    def __init__(self, offset: int, max_entries: int) -> None:
        self.offset, self.max_entries = offset, max_entries
        self._keep = offset - 1 + max_entries
        self._kept: list[tuple[int, str, EntryType, int | None]] = []
        self._counts = {"directory": 0, "file": 0, "other": 0}

    def add(self, children: Iterable[Child]) -> None:
        """Count ``children`` and keep those that may still fall on or before the page."""
        kept, counts = self._kept, self._counts
        for child in children:
            counts[child.type] += 1
            kept.append((_RANK[child.type], child.name, child.type, child.size))
        if len(kept) > 2 * self._keep:
            kept.sort()
            del kept[self._keep :]

    @property
    def total(self) -> int:
        """Children counted so far."""
        return sum(self._counts.values())

    def page(self, path: str) -> ListPage:
        """The page (``page_of``'s, for every child added) of the directory shown as ``path``."""
        self._kept.sort()
        rows = self._kept[self.offset - 1 : self._keep]
        counts = self._counts
        return ListPage(
            path=path,
            offset=self.offset,
            entries=tuple(ListedEntry(name=name, type=kind, size=size) for _rank, name, kind, size in rows),
            total_entries=self.total,
            counts=ListCounts(directories=counts["directory"], files=counts["file"], other=counts["other"]),
        )
