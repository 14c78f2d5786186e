"""The model-facing ``glob`` and ``grep`` tools (``tool-fs-search``): ripgrep as a subprocess
over any provider, under its containment root, with capped results saved whole to the spill
store (REFERENCE-SPEC §6)."""

from .config import ToolFsSearchConfig as ToolFsSearchConfig
from .errors import SearchError as SearchError
from .plugin import ToolFsSearch as ToolFsSearch

__all__ = ("SearchError", "ToolFsSearch", "ToolFsSearchConfig")
