"""Characters as the hints name them (DEVIATIONS D5, D18, D19). Pure, stdlib only.

The helpers the edit hints share with the name hints (``tool_fs.name_hints``, D19) and the
lookup's messages (``tool_fs.lookup``): naming a character (``describe``), escaping what is not
printable (``escape``), the lookalike classes as per-character maps (``CharNorm``: Unicode spaces,
typography, invisible characters, letter case) and the folding of them all (``fold_lookalikes``),
and the first cluster NFC changes (``unnormalized_cluster``).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

__all__ = (
    "CASE",
    "CharNorm",
    "EXAMPLE_SCAN_LIMIT",
    "INVISIBLES",
    "SPACES",
    "TYPOGRAPHY",
    "code_points",
    "describe",
    "escape",
    "fold_lookalikes",
    "quote",
    "table_norm",
    "unnormalized_cluster",
)

EXAMPLE_SCAN_LIMIT = 20_000
"""Characters scanned for an example of a decomposed character (NFC hint)."""

_UNICODE_SPACES = "\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000\ufeff"
_SINGLE_QUOTES = "\u2018\u2019\u201a\u201b\u2032"
_DOUBLE_QUOTES = "\u201c\u201d\u201e\u201f\u2033"
_DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"
_INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff\u00ad"

_NAMED = {
    "": "nothing",
    " ": "a space",
    "\t": "a tab",
    "\n": "a line break (\\n)",
    "\r": "a carriage return (\\r)",
    "'": "a straight quote (')",
    '"': 'a straight double quote (")',
    "-": "a hyphen-minus (-)",
    "...": "three dots (...)",
}


def escape(text: str) -> str:
    """``text`` with every non-printable character (newlines included) written as an escape."""
    if text.isprintable():
        return text
    out = []
    for ch in text:
        if ch.isprintable():
            out.append(ch)
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ord(ch) <= 0xFFFF:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return "".join(out)


def quote(text: str, limit: int = 40) -> str:
    """``text`` escaped in double quotes, cut after ``limit`` characters with ``\u2026``."""
    if len(text) > limit:
        text = text[:limit] + "\u2026"
    return '"' + escape(text) + '"'


def describe(piece: str) -> str:
    """Name a character (or a short piece of text) for a hint: ``a no-break space (U+00A0)``."""
    named = _NAMED.get(piece)
    if named is not None:
        return named
    if len(piece) != 1:
        return quote(piece)
    code = f"U+{ord(piece):04X}"
    name = unicodedata.name(piece, "").lower()
    if not name:
        return f"the character {code}"
    article = "an" if name[0] in "aeio" else "a"
    if piece.isprintable():
        return f"{article} {name} ({piece}, {code})"
    return f"{article} {name} ({code})"


def code_points(text: str) -> str:
    """The code points of ``text``: ``U+0065 U+0301``."""
    return " ".join(f"U+{ord(ch):04X}" for ch in text)


@dataclass(frozen=True)
class CharNorm:
    """A normalization that maps each character independently: ``apply(s) == "".join(map(g, s))``."""

    apply: Callable[[str], str]
    g: Callable[[str], str]
    length_preserving: bool
    affected: str | None  # characters changed or produced; None: no literal anchor exists
    needs_non_ascii: bool  # the map can only change non-ASCII characters


def table_norm(table: dict[str, str], *, needs_non_ascii: bool) -> CharNorm:
    """A ``CharNorm`` that replaces each key of ``table`` by its value (``needs_non_ascii``: every
    key is non-ASCII, so an ASCII text is returned as it is)."""
    groups: dict[str, str] = {}
    for key, value in table.items():
        groups[value] = groups.get(value, "") + key
    if len(table) == 1:
        ((key, value),) = table.items()

        def apply(text: str) -> str:
            return text.replace(key, value)

    else:
        subs = [(re.compile("[" + re.escape(keys) + "]"), value) for value, keys in groups.items()]

        def apply(text: str) -> str:
            if needs_non_ascii and text.isascii():
                return text
            for rx, value in subs:
                text = rx.sub(value, text)
            return text

    def g(ch: str) -> str:
        return table.get(ch, ch)

    # A deleting map joins the text around what it deletes, so no literal anchor is safe.
    affected = None if "" in table.values() else "".join(sorted(set(table) | set("".join(table.values()))))
    return CharNorm(apply, g, all(len(v) == 1 for v in table.values()), affected, needs_non_ascii)


SPACES = table_norm({ch: " " for ch in _UNICODE_SPACES}, needs_non_ascii=True)
TYPOGRAPHY = table_norm(
    {
        **{ch: "'" for ch in _SINGLE_QUOTES},
        **{ch: '"' for ch in _DOUBLE_QUOTES},
        **{ch: "-" for ch in _DASHES},
        "\u2026": "...",
    },
    needs_non_ascii=True,
)
INVISIBLES = table_norm({ch: "" for ch in _INVISIBLE}, needs_non_ascii=True)
CASE = CharNorm(str.casefold, str.casefold, False, None, False)


def fold_lookalikes(text: str) -> str:
    """``text`` with every difference these hints name as a lookalike folded away: NFC,
    invisible characters removed, Unicode spaces as a space, curly quotes and dashes as ASCII,
    letter case folded (for names: ``name_hints``, DEVIATIONS D19)."""
    text = unicodedata.normalize("NFC", text)
    return CASE.apply(TYPOGRAPHY.apply(SPACES.apply(INVISIBLES.apply(text))))


def unnormalized_cluster(text: str, wanted_in: str | None) -> str | None:
    """The first base character + combining marks of ``text`` that NFC changes."""
    limit = min(len(text), EXAMPLE_SCAN_LIMIT)
    i = 0
    while i < limit:
        j = i + 1
        while j < len(text) and unicodedata.combining(text[j]):
            j += 1
        cluster = text[i:j]
        composed = unicodedata.normalize("NFC", cluster)
        if composed != cluster and (wanted_in is None or composed in wanted_in):
            return cluster
        i = j
    return None
