"""The local-disk provider: ``LocalFileSystem`` (REFERENCE-SPEC §2, DEVIATIONS A1–A6)."""

from .filesystem import LocalFileSystem as LocalFileSystem

__all__ = ("LocalFileSystem",)
