"""Tool-specific argument checks of ``read``/``write``/``edit`` (REFERENCE-SPEC §4.4 step 4;
DEVIATIONS D7; the shared D11 check is ``shared.check_unicode``). Pure.

These are *plain* errors: the registry reports them without ``{name, code}``.
"""

from __future__ import annotations

import math

from ..core.errors import ToolInputError
from ..fs.paths import is_blank
from ..fs.text import normalize

__all__ = ("check_file_path", "check_positive_integer", "differ_only_in_line_endings")


def check_file_path(file_path: str) -> None:
    """:raises ToolInputError: ``file_path must be a non-empty string`` when blank (JS ``trim``)."""
    if is_blank(file_path):
        raise ToolInputError("file_path must be a non-empty string")


def check_positive_integer(name: str, value: int | float) -> int:
    """A finite integer ≥ 1 (``2.0`` counts as 2), returned as ``int``.

    :raises ToolInputError: ``<name> must be a positive integer``
    """
    if isinstance(value, float):
        if not math.isfinite(value) or not value.is_integer():
            raise ToolInputError(f"{name} must be a positive integer")
        value = int(value)
    if value < 1:
        raise ToolInputError(f"{name} must be a positive integer")
    return value


def differ_only_in_line_endings(old_string: str, new_string: str) -> bool:
    """D7: the strings differ, but not once CRLF is read as LF (the edit would change nothing)."""
    return old_string != new_string and normalize(old_string) == normalize(new_string)
