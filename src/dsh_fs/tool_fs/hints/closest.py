"""Stage 11: the closest line (a bounded fuzzy fallback that never claims a match; DEVIATIONS
D5). Pure, stdlib only.
"""

from __future__ import annotations

import difflib

from .state import STEP, Ctx

__all__ = ("stage_closest_line",)

_FUZZY_MAX_LINES = 5_000
"""The closest-line fallback only runs on files with at most this many lines."""

_FUZZY_MIN_CHARS = 4
_FUZZY_MAX_CHARS = 300
"""The closest-line fallback only runs for one-line old_strings of this many characters."""

_FUZZY_CUTOFF = 0.8
"""Least ``difflib.SequenceMatcher.ratio`` for the closest-line fallback."""


def stage_closest_line(ctx: Ctx) -> str | None:
    """The line most similar to a one-line old_string, worded as no match (bounded ``difflib``)."""
    target = ctx.needle.strip()
    if "\n" in target or not _FUZZY_MIN_CHARS <= len(target) <= _FUZZY_MAX_CHARS:
        return None
    if not ctx.pay(len(ctx.content)) or ctx.content.count("\n") >= _FUZZY_MAX_LINES:
        return None
    # ratio = 2*M/(a+b) >= cutoff needs the lengths within these bounds
    lo = len(target) * _FUZZY_CUTOFF / (2 - _FUZZY_CUTOFF)
    hi = len(target) * (2 - _FUZZY_CUTOFF) / _FUZZY_CUTOFF
    matcher = difflib.SequenceMatcher(None, autojunk=False)
    matcher.set_seq2(target)
    best_ratio, best_line = 0.0, 0
    for line_no, line in enumerate(ctx.lines, 1):
        if not ctx.pay(len(line) + STEP):
            return None
        candidate = line.strip()
        if not lo <= len(candidate) <= hi:
            continue
        matcher.set_seq1(candidate)
        if matcher.real_quick_ratio() < _FUZZY_CUTOFF:
            continue
        if not ctx.pay(STEP * (len(candidate) + len(target))):  # quick_ratio: a Python loop per character
            return None
        quick = matcher.quick_ratio()
        if quick < _FUZZY_CUTOFF or quick <= best_ratio:
            continue
        if not ctx.pay(STEP * len(candidate) * len(target) // 8):  # ratio: difflib's matching blocks
            return None
        ratio = matcher.ratio()
        if ratio >= _FUZZY_CUTOFF and ratio > best_ratio:
            best_ratio, best_line = ratio, line_no
    if not best_line:
        return None
    return (
        f"Hint: nothing matches exactly; the most similar text is line {best_line} "
        f"({int(best_ratio * 100)}% alike): read it again and copy it exactly."
    )
