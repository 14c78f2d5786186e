"""``read_pdf`` settings (docs/PDF.md, "Limits")."""

from __future__ import annotations

from dataclasses import dataclass

from ..tool_fs.read_render import DEFAULT_READ_MAX_BYTES
from ..tool_fs.shared import positive_integer

__all__ = ("CONFIG_KEYS", "PdfConfig")

CONFIG_KEYS = ("pdf_max_bytes", "pdf_max_output_bytes", "pdf_worker_memory", "pdf_worker_seconds", "pdf_workers")
"""the ``create_context`` / plugin keywords"""


@dataclass(frozen=True, slots=True, kw_only=True)
class PdfConfig:
    """The caps of one ``read_pdf`` call and of its worker.

    :raises ValueError: ``read-pdf: <name> must be a positive integer``
    """

    pdf_max_bytes: int = 100 * 1024 * 1024
    """the largest PDF (bytes) read: Claude Code's cap for text extraction (100 MB); a bigger
    file is refused on its size, before any byte is read"""
    pdf_max_output_bytes: int = DEFAULT_READ_MAX_BYTES
    """the cap on one call's page text (UTF-8 bytes): ``read``'s ``readMaxBytes``"""
    pdf_worker_memory: int = 1024 * 1024 * 1024
    """the worker's address space (bytes, ``RLIMIT_AS``)"""
    pdf_worker_seconds: int = 30
    """the worker's wall time and CPU time (seconds)"""
    pdf_workers: int = 2
    """workers at once (more calls wait for one): at most this many PDFs' bytes are held"""

    def __post_init__(self) -> None:
        for key in CONFIG_KEYS:
            object.__setattr__(self, key, positive_integer(key, getattr(self, key), plugin="read-pdf"))
