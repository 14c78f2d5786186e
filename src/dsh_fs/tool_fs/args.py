"""Tool-specific argument checks (REFERENCE-SPEC §4.4 step 4; DEVIATIONS D7, D11). Pure.

These are *plain* errors: the registry reports them without ``{name, code}``.
"""

from __future__ import annotations

import math

from ..fs.paths import is_blank
from ..fs.text import normalize

__all__ = ("ToolInputError", "check_file_path", "check_positive_integer", "check_unicode", "lone_surrogate")


class ToolInputError(ValueError):
    """A tool argument has the right JSON type but an unusable value (plain error, no code)."""


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


def lone_surrogate(text: str) -> tuple[int, int] | None:
    """``(index, code point)`` of the first unpaired surrogate in ``text``, or ``None``."""
    try:
        text.encode("utf-8")
        return None
    except UnicodeEncodeError:
        pass
    i = 0
    n = len(text)
    while i < n:
        cp = ord(text[i])
        if 0xD800 <= cp <= 0xDBFF:
            if i + 1 < n and 0xDC00 <= ord(text[i + 1]) <= 0xDFFF:
                i += 2
                continue
            return i, cp
        if 0xDC00 <= cp <= 0xDFFF:
            return i, cp
        i += 1
    return None


def check_unicode(name: str, text: str) -> None:
    """D11: reject unpaired surrogates instead of writing U+FFFD.

    :raises ToolInputError: ``<name> must be valid Unicode text (lone surrogate U+D83D at index 3)``
    """
    found = lone_surrogate(text)
    if found is not None:
        index, cp = found
        raise ToolInputError(f"{name} must be valid Unicode text (lone surrogate U+{cp:04X} at index {index})")


def differ_only_in_line_endings(old_string: str, new_string: str) -> bool:
    """D7: the strings differ, but not once CRLF is read as LF (the edit would change nothing)."""
    return old_string != new_string and normalize(old_string) == normalize(new_string)
