"""Read windowing and rendering (REFERENCE-SPEC §4.6.2–§4.6.5; DEVIATIONS A1, D10). Pure.

``WindowBuilder`` consumes decoded text chunks (chunk boundaries carry no meaning) and keeps
only the selected lines plus one bounded line buffer; lines outside the window are only
counted, with ``str.count`` over whole chunks where possible. ``format_read_output``
renders the envelope and one of the three footers.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, Iterable
from dataclasses import dataclass, field

from ..core.jsonvalue import js_number_str
from ..fs.errors import FsError, FsErrorCode

__all__ = (
    "DEFAULT_READ_LIMIT",
    "DEFAULT_READ_MAX_BYTES",
    "DEFAULT_READ_MAX_LINE_LENGTH",
    "DEFAULT_READ_STREAM_MIN_SIZE",
    "ReadWindow",
    "WindowBuilder",
    "WindowLine",
    "WindowResult",
    "build_window",
    "format_read_output",
    "truncation_suffix",
)

DEFAULT_READ_LIMIT = 2000
DEFAULT_READ_MAX_LINE_LENGTH = 2000
DEFAULT_READ_MAX_BYTES = 50 * 1024
DEFAULT_READ_STREAM_MIN_SIZE = 10 * 1024 * 1024


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


@dataclass(frozen=True, slots=True)
class WindowLine:
    number: int
    """1-based line number"""
    text: str
    """line text, CR stripped, possibly truncated (suffix included)"""


@dataclass(slots=True, kw_only=True)
class WindowResult:
    """The selected lines and what the footer needs."""

    offset: int
    lines: list[WindowLine] = field(default_factory=list)
    total_lines: int = 0
    """lines in the file (partial when ``truncated_by_bytes``)"""
    truncated_by_bytes: bool = False


class WindowBuilder:
    """Incremental line windowing over decoded text chunks (§4.6.2–§4.6.3)."""

    def __init__(self, window: ReadWindow) -> None:
        self.window = window
        self.result = WindowResult(offset=window.offset)
        self._bytes = 0
        self._stopped = False
        self._full = window.limit <= 0
        # the line being accumulated
        self._buf: list[str] = []
        self._buf_len = 0
        self._line_len = 0  # true length in code points
        self._last_cr = False  # the true line's last character so far is "\r"

    @property
    def done(self) -> bool:
        """``True`` once the byte cap stopped the scan (the rest of the input is irrelevant)."""
        return self._stopped

    def _selecting(self) -> bool:
        return not self._full and self.result.total_lines + 1 >= self.window.offset

    def feed(self, chunk: str) -> bool:
        """Consume one chunk; returns ``False`` when the scan has stopped (byte cap)."""
        if self._stopped or not chunk:
            return not self._stopped
        pos = 0
        end = len(chunk)
        while pos < end:
            if not self._selecting():
                # count-only: lines before the window or after it is full
                if self._full:
                    newlines = chunk.count("\n", pos)
                else:
                    skip = self.window.offset - 1 - self.result.total_lines
                    newlines = min(skip, chunk.count("\n", pos))
                if newlines == 0:
                    self._extend_unbuffered(chunk, pos, end)
                    return True
                cut = pos - 1
                for _ in range(newlines):
                    cut = chunk.find("\n", cut + 1)
                self.result.total_lines += newlines
                self._reset_line()
                pos = cut + 1
                continue
            nl = chunk.find("\n", pos)
            if nl < 0:
                self._extend(chunk, pos, end)
                return True
            self._extend(chunk, pos, nl)
            self._complete_line()
            if self._stopped:
                return False
            pos = nl + 1
        return True

    def _extend_unbuffered(self, chunk: str, start: int, stop: int) -> None:
        if stop > start:
            self._line_len += stop - start
            self._last_cr = chunk[stop - 1] == "\r"

    def _extend(self, chunk: str, start: int, stop: int) -> None:
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

    def _complete_line(self) -> None:
        result = self.result
        result.total_lines += 1
        number = result.total_lines
        window = self.window
        if number < window.offset or self._full:
            self._reset_line()
            return
        text = "".join(self._buf)
        cap = window.max_line_length
        if window.exact_truncation:
            truncated = self._line_len - (1 if self._last_cr else 0) > cap
            if not truncated and self._last_cr:
                text = text[:-1]
        else:
            if text.endswith("\r"):
                text = text[:-1]
            truncated = len(text) > cap
        kept = text[:cap] if truncated else text
        text = kept + truncation_suffix(cap) if truncated else kept
        self._reset_line()
        first = not result.lines
        size = len(text.encode("utf-8", "surrogatepass")) + (0 if first else 1)
        if self._bytes + size > window.max_bytes:
            if first and window.always_progress:
                text = _cut_to_bytes(kept, window.max_bytes)
                size = window.max_bytes
            else:
                result.truncated_by_bytes = True
                self._stopped = True
                return
        self._bytes += size
        result.lines.append(WindowLine(number, text))
        if len(result.lines) >= window.limit:
            self._full = True

    def finish(self, display_path: str) -> WindowResult:
        """Flush the final unterminated line and apply the out-of-range rule (§4.6.4).

        :raises FsError: FS_NOT_FOUND ``offset <n> is out of range for "<path>" (<total> lines)``
        """
        if not self._stopped and self._line_len > 0:
            self._complete_line()
        result = self.result
        offset = self.window.offset
        if not result.truncated_by_bytes and offset > result.total_lines and not (
            result.total_lines == 0 and offset == 1
        ):
            raise FsError(
                f'offset {js_number_str(offset)} is out of range for "{display_path}" ({result.total_lines} lines)',
                FsErrorCode.NOT_FOUND,
            )
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


async def build_window(chunks: AsyncIterable[str] | Iterable[str], window: ReadWindow, display_path: str) -> WindowResult:
    """Window ``chunks`` (whole text as one chunk, or a stream) — see ``WindowBuilder``."""
    builder = WindowBuilder(window)
    if isinstance(chunks, AsyncIterable):
        iterator = chunks.__aiter__()
        try:
            async for chunk in iterator:
                if not builder.feed(chunk):
                    break
        finally:
            close = getattr(iterator, "aclose", None)
            if close is not None:
                await close()
    else:
        for chunk in chunks:
            if not builder.feed(chunk):
                break
    return builder.finish(display_path)


def format_read_output(display_path: str, result: WindowResult) -> str:
    """The read envelope with line numbers and the footer (§4.6.5)."""
    offset = result.offset
    end_line = result.lines[-1].number if result.lines else max(0, offset - 1)
    if result.truncated_by_bytes:
        footer = (
            f"(Output capped. Showing lines {js_number_str(offset)}-{js_number_str(end_line)}. "
            f"Use offset={js_number_str(end_line + 1)} to continue.)"
        )
    elif end_line < result.total_lines:
        footer = (
            f"(Showing lines {js_number_str(offset)}-{js_number_str(end_line)} of {result.total_lines}. "
            f"Use offset={js_number_str(end_line + 1)} to continue.)"
        )
    else:
        footer = f"(End of file - total {result.total_lines} lines)"
    if result.lines:
        body = "\n".join(f"{line.number}: {line.text}" for line in result.lines) + "\n\n" + footer
    else:
        body = footer
    return f"<path>{display_path}</path>\n<type>file</type>\n<content>\n{body}\n</content>"
