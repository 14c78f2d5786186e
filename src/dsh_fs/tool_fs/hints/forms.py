"""Forms of old_string (old_string alone is transformed): read prefixes, escaped line breaks
(DEVIATIONS D18). Pure, stdlib only.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from .state import Ctx, find_at_lines, line_of

__all__ = ("Transform", "transforms")

_PREFIX_RE = re.compile(r"[0-9]+:(?: |$)")


@dataclass(frozen=True)
class Transform:
    """A form of old_string to search for, and how to say what was changed to get it."""

    needle: str
    literal: Callable[[Ctx], str | None] | None
    """the hint when this form occurs as it is (None: the untransformed old_string)"""
    wrap: Callable[[str], str]
    """the hint of a stage that matched this form, turned into the hint of old_string"""


def _same(hint: str) -> str:
    return hint


def _strip_prefixes(needle: str) -> tuple[str, str] | None:
    """old_string without the read tool's ``<n>: `` prefix on every line, and the first prefix."""
    segs = needle.split("\n")
    body = segs[:-1] if needle.endswith("\n") else segs
    if not body:
        return None
    stripped = []
    first_prefix = ""
    for seg in body:
        m = _PREFIX_RE.match(seg)
        if m is None:
            return None
        if not first_prefix:
            first_prefix = m.group() if m.group().endswith(" ") else m.group() + " "
        stripped.append(seg[m.end() :])
    if len(body) < len(segs):
        stripped.append("")
    candidate = "\n".join(stripped)
    return (candidate, first_prefix) if candidate.strip() else None


def _read_escapes(needle: str) -> str | None:
    """old_string with each two-character ``\\n`` (and ``\\r\\n``, ``\\t``) read as the
    character it stands for, when it has a ``\\n``."""
    if "\\n" not in needle:
        return None
    return needle.replace("\\r\\n", "\n").replace("\\n", "\n").replace("\\t", "\t")


_PREFIXES = "the line-number prefixes copied from read output (like \"{prefix}\")"
_ESCAPES = "\\n (a backslash and an n)"


def transforms(needle: str) -> Iterator[Transform]:
    """old_string itself, then the forms a model's copying mistakes give it (lazily)."""
    yield Transform(needle, None, _same)
    prefixed = _strip_prefixes(needle)
    escaped = _read_escapes(needle)
    if prefixed is not None:
        stripped, prefix = prefixed
        what = _PREFIXES.format(prefix=prefix)

        def prefix_literal(ctx: Ctx) -> str | None:
            if not ctx.pay(len(ctx.content)):
                return None
            idx = find_at_lines(ctx.content, ctx.needle, True, False)
            if idx < 0:
                return None
            return f"Hint: line {line_of(ctx, idx)} matches without {what}; they are not part of the file."

        yield Transform(stripped, prefix_literal,
                         lambda hint: f"Hint: old_string has {what}, which are not part of the file; without them, "
                                      + hint.removeprefix("Hint: "))
    if escaped is not None:

        def escapes_literal(ctx: Ctx) -> str | None:
            idx = ctx.content.find(ctx.needle)
            return None if idx < 0 else (
                f"Hint: line {line_of(ctx, idx)} matches if each {_ESCAPES} in old_string is a line break: "
                "write real line breaks, not those two characters.")

        yield Transform(escaped, escapes_literal,
                         lambda hint: f"Hint: old_string has {_ESCAPES} where the file has line breaks; with real "
                                      "line breaks, " + hint.removeprefix("Hint: "))
    both_prefixed = _strip_prefixes(escaped) if escaped is not None else None
    if both_prefixed is not None:  # prefixes on the lines the escaped line breaks make
        both, prefix = both_prefixed
        what = _PREFIXES.format(prefix=prefix)
        if both.strip():

            def both_literal(ctx: Ctx) -> str | None:
                if not ctx.pay(len(ctx.content)):
                    return None
                idx = find_at_lines(ctx.content, ctx.needle, True, False)
                return None if idx < 0 else (
                    f"Hint: line {line_of(ctx, idx)} matches without {what} and with a real line break for each "
                    f"{_ESCAPES} in old_string.")

            yield Transform(both, both_literal,
                             lambda hint: f"Hint: old_string has {what}, which are not part of the file, and {_ESCAPES} "
                                          "where the file has line breaks; without the prefixes and with real line "
                                          "breaks, " + hint.removeprefix("Hint: "))
