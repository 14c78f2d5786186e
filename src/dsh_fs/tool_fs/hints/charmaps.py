"""Stages 2-5 and 10: character maps (each character of both texts maps to a fixed string;
DEVIATIONS D5). Pure, stdlib only.
"""

from __future__ import annotations

import re

from .chars import CASE, INVISIBLES, SPACES, TYPOGRAPHY, CharNorm, describe, quote, table_norm
from .state import STEP, Ctx, line_of

__all__ = (
    "stage_case",
    "stage_cr_as_break",
    "stage_cr_stray",
    "stage_invisibles",
    "stage_typography",
    "stage_unicode_spaces",
)

_MAX_TRIES = 64
"""Normalized occurrences examined per normalization before giving up."""

_CR_AS_BREAK = table_norm({"\r": "\n"}, needs_non_ascii=False)
_CR_STRAY = table_norm({"\r": ""}, needs_non_ascii=False)


def _anchor_found(ctx: Ctx, affected: str) -> bool:
    """Whether the longest run of old_string free of ``affected`` characters is in the text."""
    pieces = re.split("[" + re.escape(affected) + "]+", ctx.needle)
    anchor = max(pieces, key=len)
    return not anchor or (ctx.pay(len(ctx.content)) and anchor in ctx.content)


def _walk(ctx: Ctx, start: int, norm: CharNorm) -> list[tuple[int, int, str, str]] | None:
    """Align ``content[start:]`` with the needle chunk by chunk under ``norm.g``.

    Returns the differing chunks as (content index, needle index, file text, needle text), or
    None when the two do not normalize alike (the candidate is not a real match).
    """
    content, needle, g = ctx.content, ctx.needle, norm.g
    i, j, n, m = start, 0, len(content), len(needle)
    diffs: list[tuple[int, int, str, str]] = []
    if not ctx.pay(STEP * m):  # a step per character of old_string (and of the file text it meets)
        return None
    while j < m:
        b = needle[j]
        a = content[i] if i < n else ""
        if a == b:
            i += 1
            j += 1
            continue
        gb = g(b)
        if gb == "":
            diffs.append((i, j, "", b))
            j += 1
            continue
        if not a:
            return None
        ga = g(a)
        if ga == "":
            diffs.append((i, j, a, ""))
            i += 1
            continue
        i0, j0 = i, j
        i += 1
        j += 1
        while ga != gb:
            if len(ga) < len(gb):
                if i >= n or not gb.startswith(ga):
                    return None
                ga += g(content[i])
                i += 1
            else:
                if j >= m or not ga.startswith(gb):
                    return None
                gb += g(needle[j])
                j += 1
        if content[i0:i] != needle[j0:j]:
            diffs.append((i0, j0, content[i0:i], needle[j0:j]))
    return diffs


def _orig_index(ctx: Ctx, norm_content: str, idx: int, norm: CharNorm) -> int | None:
    """Map an index of the normalized text back to ``content`` (None: inside an expansion)."""
    if not ctx.pay(idx):
        return None
    line_no = norm_content.count("\n", 0, idx) + 1
    col = idx - (norm_content.rfind("\n", 0, idx) + 1)
    line = ctx.lines[line_no - 1]
    lo, hi = 0, len(line)
    while lo < hi:
        if not ctx.pay(len(line) + STEP):
            return None
        mid = (lo + hi) // 2
        if len(norm.apply(line[:mid])) < col:
            lo = mid + 1
        else:
            hi = mid
    if len(norm.apply(line[:lo])) != col:
        return None
    return ctx.line_start(line_no) + lo


def _char_match(ctx: Ctx, norm: CharNorm) -> tuple[int, list[tuple[int, int, str, str]]] | None:
    """First occurrence of old_string under ``norm`` that re-aligns on the original text.

    :returns: (start offset in the text, the differing chunks as ``_walk`` gives them) or None.
    """
    content, needle = ctx.content, ctx.needle
    if norm.needs_non_ascii and content.isascii() and needle.isascii():
        return None
    if norm.affected is not None and not _anchor_found(ctx, norm.affected):
        return None
    norm_needle = norm.apply(needle)
    if not norm_needle.strip():
        return None
    norm_content = ctx.pass_over(lambda: norm.apply(content))
    if norm_content is None:
        return None
    if not ctx.pay(len(norm_content)):  # the finds below, together
        return None
    idx = norm_content.find(norm_needle)
    tries = 0
    while idx >= 0 and tries < _MAX_TRIES:
        if not ctx.pay(len(norm_needle) + STEP):
            return None
        start = idx if norm.length_preserving else _orig_index(ctx, norm_content, idx, norm)
        if start is not None:
            diffs = _walk(ctx, start, norm)
            if diffs:
                return start, diffs
        idx = norm_content.find(norm_needle, idx + 1)
        tries += 1
    return None


def _char_hint(ctx: Ctx, norm: CharNorm) -> str | None:
    """``Hint: line N has <file character> where old_string has <character>.`` for ``norm``."""
    found = _char_match(ctx, norm)
    if found is None:
        return None
    start, diffs = found
    first = line_of(ctx, start)
    i0, _j0, a, b = diffs[0]
    line = first + ctx.content.count("\n", start, i0)
    if a and b:
        core = f"line {line} has {describe(a)} where old_string has {describe(b)}"
    elif a:
        core = f"line {line} has {describe(a)} that old_string lacks"
    else:
        core = f"old_string has {describe(b)} that line {line} lacks"
    more = len(diffs) - 1
    if more:
        core += f", plus {more} more such difference{'s' if more > 1 else ''}"
    if line == first:
        return f"Hint: {core}."
    return f"Hint: the text at line {first} matches, except that {core}."


def stage_cr_as_break(ctx: Ctx) -> str | None:
    """Stage 2: a bare carriage return where old_string has a line break, or the other way round."""
    if "\r" not in ctx.content and "\r" not in ctx.needle:
        return None
    return _char_hint(ctx, _CR_AS_BREAK)


def stage_cr_stray(ctx: Ctx) -> str | None:
    """Stage 2: a stray carriage return in the file or in old_string."""
    if "\r" not in ctx.content and "\r" not in ctx.needle:
        return None
    return _char_hint(ctx, _CR_STRAY)


def stage_unicode_spaces(ctx: Ctx) -> str | None:
    """Stage 3: NBSP and other Unicode spaces vs an ASCII space."""
    return _char_hint(ctx, SPACES)


def stage_typography(ctx: Ctx) -> str | None:
    """Stage 4: curly vs straight quotes, Unicode dashes vs ``-``, ``\u2026`` vs ``...``."""
    return _char_hint(ctx, TYPOGRAPHY)


def stage_invisibles(ctx: Ctx) -> str | None:
    """Stage 5: invisible characters (zero-width spaces and joiners, U+2060, U+FEFF, soft hyphen)."""
    return _char_hint(ctx, INVISIBLES)


def _word_at(text: str, pos: int, limit: int = 30) -> str:
    """The word (letters, digits, ``_``) around ``text[pos]``, at most ``limit`` chars each side."""
    lo = pos
    while lo > 0 and pos - lo < limit and (text[lo - 1].isalnum() or text[lo - 1] == "_"):
        lo -= 1
    hi = pos
    while hi < len(text) and hi - pos < limit and (text[hi].isalnum() or text[hi] == "_"):
        hi += 1
    return text[lo:hi] if hi > lo else text[pos : pos + 1]


def stage_case(ctx: Ctx) -> str | None:
    """Last resort: the texts differ only in letter case (``str.casefold``)."""
    found = _char_match(ctx, CASE)
    if found is None:
        return None
    start, diffs = found
    first = ctx.content.count("\n", 0, start) + 1
    words = []
    seen = set()
    for i0, j0, _a, _b in diffs:
        pair = (_word_at(ctx.content, i0), _word_at(ctx.needle, j0))
        if pair not in seen:
            seen.add(pair)
            words.append((i0, pair))
    i0, (file_word, needle_word) = words[0]
    line = first + ctx.content.count("\n", start, i0)
    core = f"line {line} has {quote(file_word)} where old_string has {quote(needle_word)}"
    if len(words) > 1:
        core += f", plus {len(words) - 1} more word{'s' if len(words) > 2 else ''}"
    if line == first:
        return f"Hint: {core}; only letter case differs."
    return f"Hint: the text at line {first} matches except for letter case: {core}."
