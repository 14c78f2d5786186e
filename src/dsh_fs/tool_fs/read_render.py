"""Read windowing and rendering for the ``read`` tool (REFERENCE-SPEC §4.6.2–§4.6.5; DEVIATIONS A1, D10). Pure.

The windowing vocabulary (``ReadWindow``, ``WindowResult``, ``WindowLine``, ``WindowBuilder``)
lives in the seam (``dsh_fs.fs.window``) so providers can window files themselves
(``FileSystem.read_window``); it is re-exported here. This module adds ``build_window`` (any
chunk source, sync or async) and ``format_read_output``, which renders the envelope and one of
the three footers.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, Iterable, Sequence

from ..core.jsonvalue import js_number_str
from ..fs.window import (
    DEFAULT_READ_LIMIT as DEFAULT_READ_LIMIT,
    DEFAULT_READ_MAX_BYTES as DEFAULT_READ_MAX_BYTES,
    DEFAULT_READ_MAX_LINE_LENGTH as DEFAULT_READ_MAX_LINE_LENGTH,
    ReadWindow as ReadWindow,
    WindowBuilder as WindowBuilder,
    WindowLine as WindowLine,
    WindowResult as WindowResult,
    truncation_suffix as truncation_suffix,
)

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
    "numbered_lines",
    "truncation_suffix",
)

DEFAULT_READ_STREAM_MIN_SIZE = 10 * 1024 * 1024

PREFIX_CACHE_LINES = 4096
"""line numbers whose ``"\\n<n>: "`` prefix is kept once built (about 60 bytes each)"""

_prefixes: list[str] = ["\n0: "]
"""``_prefixes[n] == f"\\n{n}: "`` for every ``n`` built so far: grown on demand (at least
doubling, never past ``PREFIX_CACHE_LINES``) by replacing the list, never by mutating it, so
a thread that took the old list still reads a correct one"""


async def build_window(chunks: AsyncIterable[str] | Iterable[str], window: ReadWindow, display_path: str) -> WindowResult:
    """Window ``chunks`` (whole text as one chunk, or a stream) — see ``WindowBuilder``.

    An async source is closed (``aclose``) as soon as the window stops reading it.
    """
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


def _grown(known: list[str], end: int) -> list[str]:
    """A new prefix list covering at least the numbers below ``end`` (and published)."""
    global _prefixes
    size = min(PREFIX_CACHE_LINES, max(end, 2 * len(known)))
    _prefixes = known = known + [f"\n{number}: " for number in range(len(known), size)]
    return known


def numbered_lines(offset: int, texts: list[str]) -> str:
    """``"\\n".join(f"{n}: {text}")`` over ``texts`` numbered from ``offset``: the body of the
    read envelope (REFERENCE-SPEC §4.6.5, ``<line number>: <text>``, numbers in decimal as
    JavaScript prints an integer).

    One ``str.join`` over the texts interleaved with their prefixes (``"\\n<n>: "``, kept for
    numbers up to ``PREFIX_CACHE_LINES``), instead of one formatted string per line.

    :param offset: the 1-based number of the first text
    :param texts: the line texts (already cut, CR stripped); empty gives ``""``
    """
    count = len(texts)
    if not count:
        return ""
    end = offset + count
    if end <= PREFIX_CACHE_LINES:
        known = _prefixes
        if len(known) < end:
            known = _grown(known, end)
        prefixes = known[offset:end]
    else:
        prefixes = [f"\n{number}: " for number in range(offset, end)]
    parts = prefixes + texts
    parts[0::2] = prefixes
    parts[1::2] = texts
    parts[0] = parts[0][1:]  # no newline before the first line
    return "".join(parts)


def format_read_output(display_path: str, result: WindowResult, *, kind: str = "file",
                       notes: Sequence[str] = ()) -> str:
    """The read envelope with line numbers and the footer (§4.6.5).

    :param kind: the ``<type>`` of the envelope (``notebook`` for a notebook's cell view,
        DEVIATIONS F1)
    :param notes: lines after the footer (F1: the notebook view's image notes); none in the
        reference's envelope
    """
    offset = result.offset
    texts = result.texts
    if texts is not None:
        count = len(texts)
        end_line = offset + count - 1 if count else max(0, offset - 1)
        body_lines = numbered_lines(offset, texts)
    else:
        lines = result.lines
        count = len(lines)
        end_line = lines[-1].number if lines else max(0, offset - 1)
        body_lines = "\n".join(f"{line.number}: {line.text}" for line in lines)
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
    body = body_lines + "\n\n" + footer if count else footer
    if notes:
        body = "\n".join((body, *notes))
    return f"<path>{display_path}</path>\n<type>{kind}</type>\n<content>\n{body}\n</content>"
