"""Read windows: which lines one read selects and how each is cut (REFERENCE-SPEC §4.6.2–§4.6.4;
DEVIATIONS A1, D10, D35). Pure: no I/O, no kernel imports.

This is seam vocabulary so that a provider can window a file itself, on bytes, without ever
decoding the lines outside the window (``FileSystem.read_window``); the tool layer renders the
result (``tool_fs.read_render``). Three pieces:

* ``ReadWindow`` — what one read selects and its caps; ``WindowResult`` / ``WindowLine`` — what
  it selected and what the footer needs.
* ``WindowCollector`` — the per-line rules (count, select, truncate, byte cap, limit) for lines
  that have already been split; ``add`` takes one line, ``add_lines`` a batch of short lines at
  C speed. Every windowing path goes through it, so whole-file, streamed and byte-level reads
  produce identical results.
* ``WindowBuilder`` — incremental windowing over decoded text chunks (chunk boundaries carry no
  meaning), keeping only the selected lines plus one bounded line buffer.
* ``window_whole`` — the same result for a text held whole (a small file): one ``split``, and
  for the usual first page of short lines no per-line rule at all.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .errors import column_out_of_range, offset_out_of_range

__all__ = (
    "DEFAULT_READ_LIMIT",
    "DEFAULT_READ_MAX_BYTES",
    "DEFAULT_READ_MAX_LINE_LENGTH",
    "ReadWindow",
    "WindowBuilder",
    "WindowCollector",
    "WindowLine",
    "WindowResult",
    "nth_index",
    "truncation_suffix",
    "window_text",
    "window_whole",
)

DEFAULT_READ_LIMIT = 2000
DEFAULT_READ_MAX_LINE_LENGTH = 2000
DEFAULT_READ_MAX_BYTES = 50 * 1024


def truncation_suffix(length: int) -> str:
    """``... (line truncated to <length> chars)``"""
    return f"... (line truncated to {length} chars)"


@dataclass(frozen=True, slots=True, kw_only=True)
class ReadWindow:
    """What one read selects and its caps."""

    offset: int = 1
    """1-based first line"""
    limit: int = DEFAULT_READ_LIMIT
    """maximum number of lines"""
    max_line_length: int = DEFAULT_READ_MAX_LINE_LENGTH
    """characters (code points, A1) kept per line before the truncation suffix"""
    max_bytes: int = DEFAULT_READ_MAX_BYTES
    """cap on UTF-8 bytes of the selected lines (joining newlines counted, prefixes not)"""
    always_progress: bool = False
    """D10: a first line over ``max_bytes`` is cut to fit instead of returning nothing"""
    exact_truncation: bool = False
    """default profile: a lone CR at the cap never hides a truncation (reference quirk §4.6.3)"""
    column: int = 1
    """D35: the 1-based first character of line ``offset`` to show (the characters before it are
    skipped, as if the line began there: a line cut at ``max_line_length`` from column c goes on
    at column c + ``max_line_length``). ``FileSystem.read_window`` is never asked for a window
    with ``column`` > 1: the tool windows such a read itself (``WindowBuilder``)"""


@dataclass(frozen=True, slots=True)
class WindowLine:
    number: int
    """1-based line number"""
    text: str
    """line text, CR stripped, possibly truncated (suffix included)"""


class WindowResult:
    """The selected lines and what the footer needs.

    Selected lines always carry consecutive numbers from ``offset``, so a result built by a
    collector stores only their texts (``texts``); ``lines`` materializes ``WindowLine``
    objects on first access (a result built with ``lines=`` keeps that list as given).
    Equality compares ``offset``, ``lines``, ``total_lines`` and ``truncated_by_bytes``.
    """

    __slots__ = ("encoding", "offset", "total_lines", "truncated_by_bytes", "version", "_lines", "_texts")
    __hash__ = None  # type: ignore[assignment]  # mutable, like the dataclass it replaces

    def __init__(
        self,
        *,
        offset: int,
        lines: list[WindowLine] | None = None,
        total_lines: int = 0,
        truncated_by_bytes: bool = False,
    ) -> None:
        self.offset = offset
        self.total_lines = total_lines
        """lines in the file (partial when ``truncated_by_bytes``)"""
        self.truncated_by_bytes = truncated_by_bytes
        self._lines: list[WindowLine] | None = lines
        self._texts: list[str] | None = [] if lines is None else None
        self.encoding: str | None = None
        """the legacy encoding the text was decoded from (F7: a ``legacy_text.DecodedText``
        windowed by ``window_whole``); ``None``: UTF-8"""
        self.version: str | None = None
        """the version of the bytes windowed when the provider knows it better than the
        caller's ``info.version``: with the digest of the whole content (DEVIATIONS D29,
        ``fs_local.versions.known``); ``None``: ``info.version``"""

    @property
    def lines(self) -> list[WindowLine]:
        """The selected lines (a mutable list; mutating it is allowed)."""
        if self._lines is None:
            texts = self._texts or []
            self._lines = [WindowLine(number, text) for number, text in zip(range(self.offset, self.offset + len(texts)), texts)]
            self._texts = None
        return self._lines

    @lines.setter
    def lines(self, value: list[WindowLine]) -> None:
        self._lines = value
        self._texts = None

    @property
    def texts(self) -> list[str] | None:
        """The selected texts (numbered ``offset``, ``offset + 1``, …) while the result is in
        its compact form; ``None`` once ``lines`` was accessed or given."""
        return self._texts

    def count(self) -> int:
        """Number of selected lines."""
        return len(self._texts) if self._texts is not None else len(self._lines or ())

    def _append(self, text: str) -> None:
        if self._texts is not None:
            self._texts.append(text)
        else:
            lines = self.lines
            lines.append(WindowLine(self.offset + len(lines), text))

    def _extend(self, texts: list[str]) -> None:
        if self._texts is not None:
            self._texts.extend(texts)
        else:
            for text in texts:
                self._append(text)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, WindowResult):
            return NotImplemented
        return (self.offset, self.lines, self.total_lines, self.truncated_by_bytes) == (
            other.offset,
            other.lines,
            other.total_lines,
            other.truncated_by_bytes,
        )

    def __repr__(self) -> str:
        return (
            f"WindowResult(offset={self.offset!r}, lines={self.lines!r}, total_lines={self.total_lines!r}, "
            f"truncated_by_bytes={self.truncated_by_bytes!r})"
        )


def nth_index(data: Any, sep: Any, start: int, n: int) -> int:
    """Index of the ``n``-th (1-based) ``sep`` in ``data[start:]``; the caller guarantees it exists.

    Works on ``str`` and ``bytes`` alike and costs a few C-speed ``count`` calls instead of
    ``n`` Python-level ``find`` calls: it halves the range by counting until few remain.
    """
    end = len(data)
    while n > 8 and end - start > 4096:
        mid = (start + end) // 2
        left = data.count(sep, start, mid)
        if left >= n:
            end = mid
        else:
            n -= left
            start = mid
    pos = start - 1
    for _ in range(n):
        pos = data.find(sep, pos + 1)
    return pos


class WindowCollector:
    """The per-line window rules of §4.6.3 over lines that are already split.

    A line is handed over as its first ``max_line_length + 1`` characters (``head``), its
    true length in code points (``length``; any value above ``max_line_length + 1`` may be
    passed for a longer line) and whether its last character is ``"\\r"`` (``last_cr``).
    The collector counts every line, selects those from ``offset`` until ``limit`` lines are
    kept (``full``) or the byte cap is hit (``stopped``), and ``finish`` applies §4.6.4.
    """

    __slots__ = ("window", "result", "_bytes", "stopped", "full")

    def __init__(self, window: ReadWindow) -> None:
        self.window = window
        self.result = WindowResult(offset=window.offset)
        self._bytes = 0
        self.stopped = False
        """the byte cap stopped the scan: nothing after it matters"""
        self.full = window.limit <= 0
        """``limit`` lines are selected: later lines are only counted"""

    @property
    def selecting(self) -> bool:
        """Would the next line be selected (it is at or after ``offset`` and there is room)?"""
        return not self.full and not self.stopped and self.result.total_lines + 1 >= self.window.offset

    def skip(self, count: int) -> None:
        """Count ``count`` lines without selecting them (before the window or after it)."""
        self.result.total_lines += count

    def add(self, head: str, length: int, last_cr: bool) -> None:
        """Count one line and select it if it falls inside the window (§4.6.3 steps 1–6)."""
        result = self.result
        result.total_lines += 1
        window = self.window
        if result.total_lines < window.offset or self.full or self.stopped:
            return
        text = head
        cap = window.max_line_length
        if window.exact_truncation:
            truncated = length - (1 if last_cr else 0) > cap
            if not truncated and last_cr:
                text = text[:-1]
        else:
            if text.endswith("\r"):
                text = text[:-1]
            truncated = len(text) > cap
        kept = text[:cap] if truncated else text
        text = kept + truncation_suffix(cap) if truncated else kept
        first = result.count() == 0
        size = len(text.encode("utf-8", "surrogatepass")) + (0 if first else 1)
        if self._bytes + size > window.max_bytes:
            if first and window.always_progress:
                text = _cut_to_bytes(kept, window.max_bytes)
                size = window.max_bytes
            else:
                result.truncated_by_bytes = True
                self.stopped = True
                return
        self._bytes += size
        result._append(text)
        if result.count() >= window.limit:
            self.full = True

    def add_lines(self, lines: list[str], *, short: bool = False) -> int:
        """Add complete lines (each without its ``"\\n"``) in order, as ``add`` would one by
        one, while the window is selecting; returns how many were consumed (counted).

        Fewer than ``len(lines)`` are consumed only when the window became full or stopped;
        the caller counts the rest itself. Runs of lines no longer than ``max_line_length``
        are handled in bulk (one join, one encode); longer lines go through ``add``.

        :param short: the caller knows no line is longer than ``max_line_length`` (e.g. the
            whole text is not): their lengths are then not looked at
        """
        consumed = 0
        total = len(lines)
        cap = self.window.max_line_length
        while consumed < total and self.selecting:
            room = self.window.limit - self.result.count()
            stop = min(total, consumed + room)
            batch = lines[consumed:stop] if consumed or stop < total else lines
            if not short and max(map(len, batch)) > cap:
                long_at = next(i for i, line in enumerate(batch) if len(line) > cap)
                if long_at:
                    consumed += self._add_short(batch[:long_at])
                    continue
                line = batch[0]
                self.add(line[: cap + 1], len(line), line.endswith("\r"))
                consumed += 1
                continue
            consumed += self._add_short(batch)
        return consumed

    def _add_short(self, batch: list[str]) -> int:
        """Bulk ``add`` of lines that cannot be truncated (each at most ``max_line_length``)."""
        window = self.window
        result = self.result
        joined = "\n".join(batch)
        texts = batch
        if "\r" in joined:
            texts = [line[:-1] if line.endswith("\r") else line for line in batch]
            joined = "\n".join(texts)
        first = result.count() == 0
        ascii_only = joined.isascii()
        size = (len(joined) if ascii_only else len(joined.encode("utf-8", "surrogatepass"))) + (0 if first else 1)
        budget = window.max_bytes - self._bytes
        if size <= budget:
            accepted = len(texts)
            self._bytes += size
        else:
            accepted = 0
            used = 0
            for text in texts:
                need = (len(text) if ascii_only else len(text.encode("utf-8", "surrogatepass"))) + (
                    0 if first and accepted == 0 else 1
                )
                if used + need > budget:
                    break
                used += need
                accepted += 1
            self._bytes += used
        result.total_lines += accepted
        result._extend(texts if accepted == len(texts) else texts[:accepted])
        if result.count() >= window.limit:
            self.full = True
        if accepted < len(batch):
            line = batch[accepted]  # the line that overflows: stop, or cut it to fit (D10)
            self.add(line, len(line), line.endswith("\r"))
            accepted += 1
        return accepted

    def finish(self, display_path: str) -> WindowResult:
        """The result, after the out-of-range rule (§4.6.4).

        :raises FsError: FS_NOT_FOUND ``offset <n> is out of range for "<path>" (<total> lines)``
        """
        result = self.result
        offset = self.window.offset
        if not result.truncated_by_bytes and offset > result.total_lines and not (
            result.total_lines == 0 and offset == 1
        ):
            raise offset_out_of_range(offset, display_path, result.total_lines)
        return result


def _cut_to_bytes(text: str, max_bytes: int) -> str:
    """D10: the longest prefix of ``text`` that fits ``max_bytes`` together with its
    truncation suffix (at least one character, so the read always moves on)."""
    lo, hi = 1, len(text)
    best = 1
    while lo <= hi:
        mid = (lo + hi) // 2
        if len((text[:mid] + truncation_suffix(mid)).encode("utf-8", "surrogatepass")) <= max_bytes:
            best = mid
            lo = mid + 1
        else:
            hi = mid - 1
    return text[:best] + truncation_suffix(best)


class WindowBuilder:
    """Incremental line windowing over decoded text chunks (§4.6.2–§4.6.3).

    Lines outside the window are only counted (C-speed ``count`` over whole chunks); while a
    line is accumulated at most ``max_line_length + 1`` characters of it are kept.
    """

    def __init__(self, window: ReadWindow) -> None:
        self.window = window
        self._collector = WindowCollector(window)
        self.result = self._collector.result
        # the line being accumulated
        self._buf: list[str] = []
        self._buf_len = 0
        self._line_len = 0  # true length in code points
        self._last_cr = False  # the true line's last character so far is "\r"
        self._skip = window.column - 1  # D35: characters of line ``offset`` still to skip
        self._short_line: tuple[int, int] | None = None  # D35: (line, its length) shorter than ``column``
        self._skipped = False  # D35: the line being accumulated had characters skipped

    @property
    def done(self) -> bool:
        """``True`` once the byte cap stopped the scan (the rest of the input is irrelevant)."""
        return self._collector.stopped

    def feed(self, chunk: str) -> bool:
        """Consume one chunk; returns ``False`` when the scan has stopped (byte cap)."""
        collector = self._collector
        if collector.stopped or not chunk:
            return not collector.stopped
        pos = 0
        end = len(chunk)
        while pos < end:
            if not collector.selecting:
                # count-only: lines before the window or after it is full
                newlines = chunk.count("\n", pos)
                if not collector.full:
                    newlines = min(self.window.offset - 1 - self.result.total_lines, newlines)
                if newlines == 0:
                    self._extend_unbuffered(chunk, pos, end)
                    return True
                if collector.full:
                    cut = chunk.rfind("\n", pos)
                else:
                    cut = nth_index(chunk, "\n", pos, newlines)
                collector.skip(newlines)
                self._reset_line()
                pos = cut + 1
                continue
            nl = chunk.find("\n", pos)
            if nl < 0:
                self._extend(chunk, pos, end)
                return True
            self._extend(chunk, pos, nl)
            self._complete_line()
            if collector.stopped:
                return False
            pos = nl + 1
        return True

    def _extend_unbuffered(self, chunk: str, start: int, stop: int) -> None:
        if stop > start:
            self._line_len += stop - start
            self._last_cr = chunk[stop - 1] == "\r"

    def _extend(self, chunk: str, start: int, stop: int) -> None:
        if self._skip and stop > start:  # D35: the first characters of line ``offset``
            skipped = min(self._skip, stop - start)
            self._skip -= skipped
            start += skipped
            self._last_cr = chunk[start - 1] == "\r"
            self._skipped = True
        if stop <= start:
            return
        room = self.window.max_line_length + 1 - self._buf_len
        if room > 0:
            piece = chunk[start : min(stop, start + room)]
            self._buf.append(piece)
            self._buf_len += len(piece)
        self._line_len += stop - start
        self._last_cr = chunk[stop - 1] == "\r"

    def _reset_line(self) -> None:
        self._buf.clear()
        self._buf_len = 0
        self._line_len = 0
        self._last_cr = False
        self._skipped = False

    def _complete_line(self) -> None:
        head = "".join(self._buf)
        length, last_cr = self._line_len, self._last_cr
        self._reset_line()
        column = self.window.column
        if column > 1 and self.result.total_lines + 1 == self.window.offset:
            # D35: the line ``column`` starts in; nothing of it left (or only its CR): too short
            if length - (1 if last_cr else 0) <= 0:
                skipped = column - 1 - self._skip
                self._short_line = (self.window.offset, skipped + length - (1 if last_cr else 0))
            self._skip = 0
        self._collector.add(head, length, last_cr)

    def finish(self, display_path: str) -> WindowResult:
        """Flush the final unterminated line and apply the out-of-range rule (§4.6.4).

        :raises FsError: FS_NOT_FOUND ``offset <n> is out of range for "<path>" (<total> lines)``;
            D35's ``column <c> is out of range for line <n> of "<path>" (<length> characters)``
        """
        if not self._collector.stopped and (self._line_len > 0 or self._skipped):
            self._complete_line()
        result = self._collector.finish(display_path)
        if self._short_line is not None:
            line, length = self._short_line
            raise column_out_of_range(self.window.column, line, display_path, length)
        return result


def window_text(chunks: Iterable[str], window: ReadWindow, display_path: str) -> WindowResult:
    """Window synchronously iterated ``chunks`` (see ``WindowBuilder``)."""
    builder = WindowBuilder(window)
    for chunk in chunks:
        if not builder.feed(chunk):
            break
    return builder.finish(display_path)


def window_whole(text: str, window: ReadWindow, display_path: str, *, size: int | None = None) -> WindowResult:
    """Window a text held whole: what ``window_text([text], …)`` gives, at C speed.

    Only the window's lines are split out (lines before it are counted with ``str.count``, the
    rest after ``limit`` lines too). A first page (``offset`` 1) of the whole text, with no
    ``"\\r"``, no line over ``max_line_length`` and at most ``max_bytes`` UTF-8 bytes, selects
    every line as it is: the result is built directly, without the per-line rules (which
    would change nothing in it).

    :param text: the decoded text (a BOM already removed); a ``legacy_text.DecodedText`` gives
        the result its ``encoding`` (F7)
    :param size: the UTF-8 length of ``text`` in bytes when the caller knows it (the file's
        size less its BOM); ``None``: measured when needed
    :raises FsError: FS_NOT_FOUND ``offset <n> is out of range for "<path>" (<total> lines)``;
        D35's ``column <c> is out of range for line <n> of "<path>" (<length> characters)``
    """
    result = _window_whole(text, window, display_path, size)
    if type(text) is not str:  # F7: a legacy-decoded text says its encoding
        result.encoding = getattr(text, "encoding", None)
    return result


def _window_whole(text: str, window: ReadWindow, display_path: str, size: int | None) -> WindowResult:
    if window.column > 1:
        return window_text([text], window, display_path)
    offset = window.offset
    limit = window.limit
    cap = window.max_line_length
    if offset == 1 and limit > 0:
        lines = text.split("\n", limit)
        if len(lines) <= limit:  # the whole text
            if not lines[-1]:
                lines.pop()
            if "\r" not in text and (len(text) <= cap or not lines or max(map(len, lines)) <= cap):
                if size is None:
                    size = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
                if size - (1 if text.endswith("\n") else 0) <= window.max_bytes:
                    result = WindowResult(offset=1, total_lines=len(lines))
                    result._texts = lines
                    return result
            collector = WindowCollector(window)
            collector.add_lines(lines, short=len(text) <= cap)
            if not collector.stopped:
                collector.result.total_lines = len(lines)
            return collector.finish(display_path)
        rest = lines.pop()  # after ``limit`` lines: only counted
        collector = WindowCollector(window)
        collector.add_lines(lines, short=len(text) <= cap)
        if not collector.stopped:
            collector.result.total_lines = limit + rest.count("\n") + (1 if rest and not rest.endswith("\n") else 0)
        return collector.finish(display_path)
    collector = WindowCollector(window)
    newlines = text.count("\n")
    total = newlines + (1 if text and not text.endswith("\n") else 0)
    if offset <= total:
        start = 0 if offset == 1 else nth_index(text, "\n", 0, offset - 1) + 1
        if newlines - (offset - 1) >= limit:
            lines = text[start : nth_index(text, "\n", start, limit)].split("\n") if limit > 0 else []
        else:
            lines = text[start:].split("\n")
            if not lines[-1]:
                lines.pop()
        collector.skip(offset - 1)
        collector.add_lines(lines)
    if not collector.stopped:
        collector.result.total_lines = total
    return collector.finish(display_path)
