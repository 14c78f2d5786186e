"""The edit looks already applied (DEVIATIONS D18). Pure, stdlib only."""

from __future__ import annotations

from .state import Text

__all__ = ("already_applied",)

_APPLIED_MIN_CHARS = 3
"""new_string needs this many non-space characters to say anything by being in the file"""


def already_applied(text: Text, needle: str, replacement: str) -> str | None:
    """new_string (not part of old_string, not trivially short) is in the file: the edit most
    likely succeeded before and the model is retrying it."""
    if len("".join(replacement.split())) < _APPLIED_MIN_CHARS or replacement in needle:
        return None
    if not text.budget.pay(len(text.content)):
        return None
    idx = text.content.find(replacement)
    if idx < 0:
        return None
    text.budget.pay(idx)
    line = text.content.count("\n", 0, idx) + 1
    return (f"Hint: new_string is already in the file at line {line}: the edit looks already applied; "
            "read the file before changing it again.")
