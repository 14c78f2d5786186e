"""The in-memory provider: ``MemoryFileSystem`` (the fake that ships with the library)."""

from .filesystem import MemoryFileSystem as MemoryFileSystem

__all__ = ("MemoryFileSystem",)
