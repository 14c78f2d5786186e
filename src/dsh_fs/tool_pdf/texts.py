"""Every model-facing text of ``read_pdf`` (docs/PDF.md).

Where Claude Code has a text for the same case its words are kept (``@anthropic-ai/claude-code``
2.1.100, ``cli.js``: the ``Read`` tool's ``pages`` description and PDF errors), prefixed with
``cannot read "<dp>": `` where Claude Code's names no file, so that parallel reads say which
failed (as DEVIATIONS I2 does for ``read_image``). The description and the page envelope are
dsh-fs's own (Claude Code returns PDF pages as images or a document block, not as text).
The ``pages`` texts are in ``pages``.
"""

from __future__ import annotations

__all__ = (
    "DAMAGED",
    "DESCRIPTION",
    "FILE_PATH_DESCRIPTION",
    "PAGES_DESCRIPTION",
    "PASSWORD",
    "empty",
    "in_file",
    "memory_limit",
    "no_text",
    "not_a_pdf",
    "not_a_pdf_path",
    "out_of_range",
    "time_limit",
    "worker_failed",
)

DESCRIPTION = (
    "Read the text of a PDF file, page by page. Use the pages parameter to read a page range "
    '(e.g., pages: "1-5"); without it the first pages are read. The text of each page follows a '
    '"--- page N of M ---" line, and a footer says how to continue. Pages without a text layer '
    "(scans) are returned as images when image reads are enabled."
)
FILE_PATH_DESCRIPTION = "Path to the PDF file, resolved by the filesystem backend."
PAGES_DESCRIPTION = (
    'Page range for PDF files (e.g., "1-5", "3", "10-20"). Only applicable to PDF files. '
    "Maximum 20 pages per request."
)
"""Claude Code's ``Read`` ``pages`` description, verbatim"""

PASSWORD = "PDF is password-protected. Please provide an unprotected version."
"""Claude Code's text for an encrypted PDF"""
DAMAGED = "PDF file is corrupted or invalid."
"""Claude Code's text for a PDF its extractor cannot read"""


def in_file(display: str, reason: str) -> str:
    """``reason`` (a text that names no file) about the file ``display``."""
    return f'cannot read "{display}": {reason}'


def not_a_pdf_path(file_path: str) -> str:
    """The extension gate (``file_path`` as the model sent it; ``read_image``'s wording)."""
    return f'cannot read "{file_path}": read_pdf only accepts .pdf paths'


def empty(display: str) -> str:
    """Claude Code's text for an empty file."""
    return f"PDF file is empty: {display}"


def not_a_pdf(display: str) -> str:
    """Claude Code's text for a file without the ``%PDF-`` header."""
    return f"File is not a valid PDF (missing %PDF- header): {display}"


def out_of_range(display: str, first: int, count: int) -> str:
    """A range that starts past the last page."""
    pages = "1 page" if count == 1 else f"{count} pages"
    return f'cannot read "{display}": page {first} is out of range (the PDF has {pages})'


def no_text(display: str, first: int, last: int) -> str:
    """Every page read is without text and the deployment takes no images."""
    which = f"page {first} has" if first == last else f"pages {first}-{last} have"
    return (f'cannot read "{display}": {which} no text layer (scanned or image-only); read_pdf shows such pages '
            "as images only where image reads are enabled (create_context(images=True) or dsh-fs mcp --images)")


def time_limit(display: str, seconds: float) -> str:
    """The worker ran past its time limit (a damaged or hostile file)."""
    return f'cannot read "{display}": the PDF could not be read within the {seconds:g}-second time limit'


def memory_limit(display: str, limit: int) -> str:
    """The worker ran out of its address space (a damaged or hostile file)."""
    return f'cannot read "{display}": the PDF could not be read within the {limit}-byte memory limit'


def worker_failed(display: str, how: str, limit: int) -> str:
    """The worker died another way (``how``: ``signal 6``, ``exit status 1``): PDFium stops the
    process when an allocation fails under the memory limit, and on some damaged files."""
    return (f'cannot read "{display}": the PDF reader stopped on this file ({how}): it may be damaged, or need '
            f"more than the {limit}-byte memory limit")
