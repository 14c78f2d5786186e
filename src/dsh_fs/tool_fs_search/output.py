"""Parsing ripgrep's output and rendering what the model sees (REFERENCE-SPEC §6.1–§6.3). Pure.

Collectors take results one at a time, keep the first page (the caps) and count the rest, so
memory stays bounded however much ripgrep finds; the complete formatted result goes to a
``sink`` (a spill writer) piece by piece, in exactly the shape the model would have seen.
"""

from __future__ import annotations

import base64
import json
import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol
from json.decoder import scanstring  # type: ignore[attr-defined]

from ..core.jsonvalue import js_number_str
from .errors import malformed

__all__ = (
    "GlobPage",
    "GrepMatch",
    "GrepPage",
    "NOT_UTF8_LINE",
    "binary_note",
    "escape_controls",
    "format_grep_groups",
    "glob_text",
    "grep_text",
    "parse_match",
    "preview_line",
    "to_workdir_relative",
)

NOT_UTF8_LINE = "(line is not valid UTF-8)"

class Sink(Protocol):
    """Where a page sends the complete formatted result: called with the formatted piece of
    one result (``count`` 1), or the pieces of ``count`` results joined (``GlobPage.extend``)."""

    def __call__(self, piece: str, count: int = 1, /) -> None: ...


def to_workdir_relative(path: str, workdir: str) -> str:
    """§6.3 display paths: an absolute path inside ``workdir`` becomes relative (``.`` for
    ``workdir`` itself); relative paths and paths outside (``/w/../up.ts`` too) pass through."""
    if not path.startswith("/"):
        return path
    rel = posixpath.relpath(path, workdir)
    if rel == ".":
        return "."
    if rel == ".." or rel.startswith("../"):
        return path
    return rel


def _trim_partial_utf8(data: bytes) -> bytes:
    """``data`` without a trailing incomplete UTF-8 sequence."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte & 0xC0 == 0x80:
            continue  # a continuation byte: look further back for its lead
        if byte < 0x80:
            return data
        need = 2 if byte >= 0xC0 and byte < 0xE0 else 3 if byte < 0xF0 else 4
        return data if back >= need else data[:-back]
    return data


def preview_line(line: str, max_bytes: int) -> str:
    """At most ``max_bytes`` UTF-8 bytes of ``line``, cut at a code point boundary, with
    `` (line truncated)`` when something was cut (§6.2)."""
    if len(line) * 4 <= max_bytes:
        return line
    data = line.encode("utf-8", "surrogatepass")
    if len(data) <= max_bytes:
        return line
    return _trim_partial_utf8(data[:max_bytes]).decode("utf-8", "replace") + " (line truncated)"


_CONTROLS = re.compile("[\x00-\x08\x0a-\x1f\x7f]")


def escape_controls(line: str) -> str:
    """DEVIATIONS S14: ``line`` with every C0 control but tab, and DEL, written as a JSON escape
    (``\\u0000`` for NUL, as ``tool_common.shown`` writes names), so no raw control byte reaches the model.
    Applied to an already cut preview: the result is at most 6× its length."""
    if line.isprintable() or not _CONTROLS.search(line):
        return line
    return _CONTROLS.sub(lambda m: f"\\u{ord(m.group()):04x}", line)


def binary_note(paths: list[str]) -> str:
    """DEVIATIONS S14: the line below a ``grep`` result whose shown lines held NUL bytes, naming
    those files (as shown, first-seen order): ``(<path> contains NUL bytes, shown as \\u0000: it
    may be a binary file, searched here as text.)`` (several: ``<a>, <b> contain … they may be
    binary files …``)."""
    names = ", ".join(paths)
    if len(paths) == 1:
        return f"({names} contains NUL bytes, shown as \\u0000: it may be a binary file, searched here as text.)"
    return f"({names} contain NUL bytes, shown as \\u0000: they may be binary files, searched here as text.)"


def first_submatch(record: bytes) -> tuple[int, int] | None:
    """``(start, end)`` UTF-8 byte offsets of the first submatch in a ``rg --json`` match
    record's line, or ``None`` when the record has none (DEVIATIONS S11; decoded whole, so
    only asked for the rare line too long to preview)."""
    try:
        parsed = json.loads(record.decode("utf-8", "surrogateescape"))
        first = parsed["data"]["submatches"][0]
        start, end = first["start"], first["end"]
    except (ValueError, KeyError, IndexError, TypeError):
        return None
    if not (isinstance(start, int) and isinstance(end, int)) or not 0 <= start <= end:
        return None
    return start, end


def window_line(line: str, start: int, end: int, max_bytes: int) -> str | None:
    """DEVIATIONS S11: at most ``max_bytes`` UTF-8 bytes of ``line`` around a match at bytes
    ``start``–``end``, when the reference's preview (the first ``max_bytes``) would not show
    the whole match: ``... <window> ... (line truncated: characters <a>-<b> of <n> shown; the
    match starts at column <c>)``, cut at code point boundaries. ``None``: the usual preview
    shows the match (or the offsets do not fit the line)."""
    data = line.encode("utf-8", "surrogatepass")
    if end <= max_bytes or end > len(data) or len(data) <= max_bytes:
        return None
    left = max(0, min(start - max_bytes // 4, len(data) - max_bytes))
    piece = data[left : left + max_bytes]
    while piece and (piece[0] & 0xC0) == 0x80:  # a continuation byte: start at the next code point
        piece = piece[1:]
        left += 1
    piece = _trim_partial_utf8(piece)
    before = len(data[:left].decode("utf-8", "replace"))
    shown = piece.decode("utf-8", "replace")
    column = len(data[:start].decode("utf-8", "replace")) + 1
    total = len(line)
    head = "... " if left > 0 else ""
    tail = " ..." if left + len(piece) < len(data) else ""
    return (f"{head}{shown}{tail} (line truncated: characters {before + 1}-{before + len(shown)} of {total} "
            f"shown; the match starts at column {column})")


@dataclass(frozen=True, slots=True)
class GrepMatch:
    """One matching line: the file as ripgrep printed it, the 1-based line number, the text."""

    path: str
    line_number: int | float
    line: str


_FAST_HEAD = '{"type":"match","data":{"path":{"text":"'
_FAST_LINES = '},"lines":{"text":"'
_FAST_NUMBER = re.compile(r'},"line_number":([0-9]{1,15}),"absolute_offset":')
_DECODER = json.JSONDecoder()


def _fast_match(record: bytes) -> GrepMatch | None:
    """A match record in ripgrep's own layout (``type``, ``data.path.text``, ``data.lines.text``,
    ``data.line_number``, then the rest), read without decoding the rest (a line's
    ``submatches`` can be far bigger than the line); ``None`` for anything else."""
    try:
        text = record.decode("utf-8")
        if not text.startswith(_FAST_HEAD):
            return None
        path, end = scanstring(text, len(_FAST_HEAD))
        if not text.startswith(_FAST_LINES, end):
            return None
        line, end = scanstring(text, end + len(_FAST_LINES))
        number = _FAST_NUMBER.match(text, end)
    except (UnicodeDecodeError, ValueError):
        return None
    if number is None:
        return None
    if line.endswith("\r\n"):
        line = line[:-2]
    elif line.endswith("\n"):
        line = line[:-1]
    return GrepMatch(path, int(number.group(1)), line)


def parse_match(record: bytes, *, bytes_paths: bool = False) -> GrepMatch | None:
    """One ``rg --json`` line as a match, or ``None`` for the other record types.

    Match records in ripgrep's own field order take a fast path that reads only the path,
    the line and its number; any other shape is decoded whole and checked field by field.

    :param bytes_paths: accept a file name that is not UTF-8 (``path.bytes``, shown with
        U+FFFD; DEVIATIONS S6) instead of failing the search
    :raises SearchError: ``SEARCH_FAILED`` with the §6.2 details
    """
    fast = _fast_match(record)
    if fast is not None:
        return fast
    try:
        parsed = _DECODER.decode(record.decode("utf-8", "surrogateescape"))
    except ValueError as exc:
        raise malformed("a line is not JSON") from exc
    if not isinstance(parsed, dict):
        raise malformed("a record is not an object")
    if parsed.get("type") != "match":
        return None
    data = parsed.get("data")
    if not isinstance(data, dict):
        raise malformed("a match record has no data")
    path = data.get("path")
    text = path.get("text") if isinstance(path, dict) else None
    if not isinstance(text, str) and bytes_paths and isinstance(path, dict) and isinstance(path.get("bytes"), str):
        text = _b64_text(path["bytes"])
    if not isinstance(text, str):
        raise malformed("a match record has no path text")
    number = data.get("line_number")
    if not isinstance(number, (int, float)) or isinstance(number, bool):
        raise malformed("a match record has no line number")
    lines = data.get("lines")
    if not isinstance(lines, dict):
        raise malformed("a match record has no line content")
    content = lines.get("text")
    if isinstance(content, str):
        if content.endswith("\r\n"):
            content = content[:-2]
        elif content.endswith("\n"):
            content = content[:-1]
        return GrepMatch(text, number, content)
    if isinstance(lines.get("bytes"), str):
        return GrepMatch(text, number, NOT_UTF8_LINE)
    raise malformed("a match record has neither line text nor bytes")


def _b64_text(encoded: str) -> str | None:
    try:
        return base64.b64decode(encoded).decode("utf-8", "replace")
    except ValueError:
        return None


def _number(value: int | float) -> str:
    return str(value) if type(value) is int else js_number_str(value)


def _noun(count: int) -> str:
    return "match" if count == 1 else "matches"


def format_grep_groups(matches: list[GrepMatch]) -> str:
    """Matches grouped by file in first-seen order: ``<path>\\nLine N: text…`` groups joined by
    a blank line (§6.2)."""
    groups: dict[str, list[GrepMatch]] = {}
    for match in matches:
        groups.setdefault(match.path, []).append(match)
    return "\n\n".join(
        path + "\n" + "\n".join(f"Line {_number(m.line_number)}: {m.line}" for m in group)
        for path, group in groups.items()
    )


class GlobPage:
    """Paths in output order: the first ``limit`` kept, all counted, all sent to ``sink``
    (joined by newlines: the spill content of §6.1)."""

    def __init__(self, limit: int, sink: Sink | None = None) -> None:
        self.limit = limit
        self.kept: list[str] = []
        self.seen = 0
        self.sink = sink

    def add(self, path: str) -> None:
        """Take the next path (a display path)."""
        if self.sink is not None:
            self.sink(path if self.seen == 0 else "\n" + path)
        self.seen += 1
        if len(self.kept) < self.limit:
            self.kept.append(path)

    def extend(self, paths: list[str]) -> None:
        """Take the next paths, in order: what ``add`` of each would do, with one sink call
        for all of them (``count`` = how many; nothing for an empty list)."""
        if not paths:
            return
        if self.sink is not None:
            text = "\n".join(paths)
            self.sink(text if self.seen == 0 else "\n" + text, len(paths))
        self.seen += len(paths)
        room = self.limit - len(self.kept)
        if room > 0:
            self.kept.extend(paths[:room])

    @property
    def truncated(self) -> bool:
        return self.seen > len(self.kept)


class GrepPage:
    """Matches in output order: the first ``limit`` kept, all counted; the grouped text of
    every match goes to ``sink`` as it comes (ripgrep prints one file's matches together)."""

    def __init__(self, limit: int, sink: Sink | None = None) -> None:
        self.limit = limit
        self.kept: list[GrepMatch] = []
        self.seen = 0
        self.sink = sink
        self._last_path: str | None = None

    def add(self, match: GrepMatch) -> None:
        if self.sink is not None:
            row = f"Line {_number(match.line_number)}: {match.line}"
            if match.path == self._last_path:
                self.sink("\n" + row)
            else:
                self.sink(("" if self._last_path is None else "\n\n") + match.path + "\n" + row)
                self._last_path = match.path
        self.seen += 1
        if len(self.kept) < self.limit:
            self.kept.append(match)

    @property
    def truncated(self) -> bool:
        return self.seen > len(self.kept)

    def head(self) -> str:
        """The spill content's first line: ``Found <total> match(es)`` and a blank line."""
        return f"Found {self.seen} {_noun(self.seen)}\n\n"


def glob_text(page: GlobPage, recovery: str | None) -> str:
    """§6.1: the kept paths; capped: ``(Showing <kept> of <total> paths. <recovery>)`` below."""
    body = "\n".join(page.kept)
    if not page.truncated:
        return body
    return f"{body}\n\n(Showing {len(page.kept)} of {page.seen} paths. {recovery})"


def grep_text(page: GrepPage, recovery: str | None) -> str:
    """§6.2: ``Found <n> match(es)``, the grouped matches; capped: ``Found <kept> of <total>
    matches`` and ``(<recovery>)`` below."""
    body = format_grep_groups(page.kept)
    if not page.truncated:
        return f"Found {page.seen} {_noun(page.seen)}\n\n{body}"
    return f"Found {len(page.kept)} of {page.seen} matches\n\n{body}\n\n({recovery})"
