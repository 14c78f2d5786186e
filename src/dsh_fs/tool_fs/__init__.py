"""The model-facing ``read``/``write``/``edit`` tools (``tool-fs``): schemas, argument checks,
read windowing and rendering, result texts, hints, diff meta and prompt sections."""

from .config import ToolFsConfig as ToolFsConfig
from .plugin import ToolFs as ToolFs

__all__ = ("ToolFs", "ToolFsConfig")
