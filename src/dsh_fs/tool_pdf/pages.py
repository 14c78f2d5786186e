"""``read_pdf``'s ``pages`` argument (docs/PDF.md). Pure.

Claude Code's ``Read`` ``pages`` semantics (``@anthropic-ai/claude-code`` 2.1.100, ``cli.js``:
``parsePDFPageRange`` and the ``Read`` tool's input validation): ``"3"`` is page 3, ``"1-5"``
pages 1 to 5, ``"10-"`` page 10 to the end; pages are 1-based; a range of more than
``MAX_PAGES_PER_READ`` pages (an open one counts as more) is refused. Numbers are decimal digits
with optional spaces around them and the dash (Claude Code's ``parseInt`` also takes ``"3abc"``
as 3: that is refused here as not a page range).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ("MAX_PAGES_PER_READ", "PageRange", "invalid_pages", "parse_pages", "too_many_pages")

MAX_PAGES_PER_READ = 20
"""Claude Code's ``PDF_MAX_PAGES_PER_READ``: the most pages one ``read_pdf`` call returns"""

_RANGE = re.compile(r"\s*([0-9]+)\s*(?:(-)\s*([0-9]+)?\s*)?")


@dataclass(frozen=True, slots=True)
class PageRange:
    """Pages ``first`` to ``last`` (1-based, inclusive); ``last`` is ``None`` for an open range."""

    first: int
    last: int | None

    def size(self) -> int | None:
        """How many pages the range names (``None``: open)."""
        return None if self.last is None else self.last - self.first + 1


def parse_pages(pages: str) -> PageRange | None:
    """The range ``pages`` names, or ``None`` when it is not a page range (empty, a page 0, a
    range that ends before it starts, anything but digits, spaces and one dash)."""
    match = _RANGE.fullmatch(pages)
    if match is None:
        return None
    first = int(match.group(1))
    if first < 1:
        return None
    if match.group(2) is None:
        return PageRange(first, first)
    if match.group(3) is None:
        return PageRange(first, None)
    last = int(match.group(3))
    if last < first:
        return None
    return PageRange(first, last)


def invalid_pages(pages: str) -> str:
    """Claude Code's text for a ``pages`` value that is not a page range."""
    return f'Invalid pages parameter: "{pages}". Use formats like "1-5", "3", or "10-20". Pages are 1-indexed.'


def too_many_pages(pages: str) -> str:
    """Claude Code's text for a range over ``MAX_PAGES_PER_READ`` pages (or an open one)."""
    return (f'Page range "{pages}" exceeds maximum of {MAX_PAGES_PER_READ} pages per request. '
            "Please use a smaller range.")
