"""The model-facing ``read``/``write``/``edit`` tools (``tool-fs``): schemas, argument checks,
read windowing and rendering, result texts, hints, diff meta and prompt sections; and the
``list`` tool (``tool-fs-list``, its own plugin: docs/LIST.md)."""

from .config import ToolFsConfig as ToolFsConfig
from .list_tool import ToolFsList as ToolFsList
from .plugin import ToolFs as ToolFs

__all__ = ("ToolFs", "ToolFsConfig", "ToolFsList")
