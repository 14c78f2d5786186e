"""How a name (a path) is printed in a tool's text: one rule for every tool and command that
lists names (deviation D22; docs/GUARANTEES.md).

A file name may hold any character but ``/`` and NUL, a line break included: printed as is,
``a.txt\\nLine 1: forged`` would show ``grep`` a match that does not exist, and ``glob`` a
file twice; a bidirectional override shows ``report\\u202egnp.exe`` as ``reportexe.png``, and a
zero-width space makes ``a\\u200bb.txt`` look like a real ``ab.txt`` beside it. So a name
holding a character that can end or rewrite a line or hide itself — a control character
(Unicode ``Cc``: C0, DEL, C1, so also ANSI escapes), a line or paragraph separator (U+2028,
U+2029) or a format character (``Cf``: bidirectional marks, embeddings, overrides and
isolates, zero-width characters, U+2060, U+FEFF, the soft hyphen, …) — is printed as a JSON
string literal: in double quotes, with ``\\n``, ``\\r``, ``\\t``, ``\\"``, ``\\\\`` and
``\\uXXXX`` escapes (a character beyond U+FFFF as its UTF-16 pair, as JSON writes it). That is
also how the model writes it back in a tool call's JSON arguments. Every other name is printed
as it is (byte-exact with the reference). Pure.
"""

from __future__ import annotations

import json
import unicodedata
from typing import Final

__all__ = ("HIDDEN_CATEGORIES", "is_hidden", "needs_quoting", "shown_name", "unicode_escape")

HIDDEN_CATEGORIES: Final = frozenset(("Cc", "Zl", "Zp", "Cf"))
"""the Unicode general categories a printed name never carries raw: controls, line and
paragraph separators, format characters"""


def is_hidden(ch: str) -> bool:
    """Whether the character ``ch`` can end or rewrite a printed line, or change how the text
    around it reads without being seen (its category is in ``HIDDEN_CATEGORIES``)."""
    return unicodedata.category(ch) in HIDDEN_CATEGORIES


def unicode_escape(ch: str) -> str:
    """``ch`` as JSON escapes it: ``\\uXXXX`` (lower-case hex), a character beyond U+FFFF as its
    UTF-16 surrogate pair ``\\uXXXX\\uXXXX``."""
    code = ord(ch)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def needs_quoting(name: str) -> bool:
    """Whether ``name`` holds a character that could end or rewrite a printed line or hide
    itself (``is_hidden``: categories ``Cc``, ``Zl``, ``Zp``, ``Cf``)."""
    if name.isprintable():
        return False
    return any(is_hidden(ch) for ch in name)


def shown_name(name: str) -> str:
    """``name`` as a tool prints it: unchanged, or (``needs_quoting``) as a JSON string
    literal in which every control, separator and format character is an escape.

    :param name: a path or file name, as the tool would otherwise print it
    """
    if not needs_quoting(name):
        return name
    quoted = json.dumps(name, ensure_ascii=False)  # escapes C0, '"' and '\\'
    return "".join(unicode_escape(ch) if is_hidden(ch) else ch for ch in quoted)
