"""How a name (a path) is printed in a tool's text: one rule for every tool and command that
lists names (deviation D22; README guarantees table).

A file name may hold any character but ``/`` and NUL, a line break included: printed as is,
``a.txt\\nLine 1: forged`` would show ``grep`` a match that does not exist, and ``glob`` a
file twice. So a name holding a character that can end or rewrite a line — a control
character (Unicode ``Cc``: C0, DEL, C1, so also ANSI escapes) or a line or paragraph
separator (U+2028, U+2029) — is printed as a JSON string literal: in double quotes, with
``\\n``, ``\\r``, ``\\t``, ``\\"``, ``\\\\`` and ``\\uXXXX`` escapes. That is also how the
model writes it back in a tool call's JSON arguments. Every other name is printed as it is
(byte-exact with the reference). Pure.
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Final

__all__ = ("needs_quoting", "shown_name")

_C1_AND_SEPARATORS: Final = re.compile("[\x7f-\x9f\u2028\u2029]")


def needs_quoting(name: str) -> bool:
    """Whether ``name`` holds a character that could end or rewrite a printed line
    (category ``Cc``, or U+2028/U+2029)."""
    if name.isprintable():
        return False
    return any(unicodedata.category(ch) in ("Cc", "Zl", "Zp") for ch in name)


def shown_name(name: str) -> str:
    """``name`` as a tool prints it: unchanged, or (``needs_quoting``) as a JSON string
    literal in which every control character and line separator is an escape.

    :param name: a path or file name, as the tool would otherwise print it
    """
    if not needs_quoting(name):
        return name
    quoted = json.dumps(name, ensure_ascii=False)  # escapes C0, '"' and '\\'
    return _C1_AND_SEPARATORS.sub(lambda found: f"\\u{ord(found.group()):04x}", quoted)
