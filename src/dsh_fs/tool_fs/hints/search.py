"""The near-match search for a failed ``edit``: every form of old_string through every stage, in
order, under one work budget (DEVIATIONS D5, D18; the order and the guarantees: the package
docstring). Pure, stdlib only.
"""

from __future__ import annotations

from collections.abc import Callable

from .applied import already_applied
from .charmaps import (
    stage_case,
    stage_cr_as_break,
    stage_cr_stray,
    stage_invisibles,
    stage_typography,
    stage_unicode_spaces,
)
from .chars import escape
from .closest import stage_closest_line
from .edges import stage_edge_newlines
from .forms import Transform, transforms
from .nfc import stage_nfc
from .spacing import stage_indent, stage_indent_trailing, stage_spacing, stage_trailing, stage_whitespace_any
from .state import Budget, Ctx, Text

__all__ = ("near_match_hint",)

_MAX_NEEDLE_CHARS = 100_000
"""Longest old_string (in code points) for which a hint is searched."""

_WORK_BASE = 2_000_000
_WORK_PER_CHAR = 12
"""The default work budget: this many characters examined, plus this many per character of
the text (about a dozen passes over a big file; every stage on a small one)."""


def near_match_hint(
    content: str,
    needle: str,
    *,
    replacement: str | None = None,
    max_content_chars: int = 4_000_000,
    work_budget: int | None = None,
    stats: dict[str, int] | None = None,
) -> str | None:
    """Explain why ``needle`` was not found in ``content``, if a near match exists (DEVIATIONS D5, D18).

    :param content: the file text, LF-normalized (CRLF already turned to LF, BOM stripped).
    :param needle: ``old_string``, LF-normalized the same way.
    :param replacement: ``new_string``, LF-normalized: when it is in the file instead, the
        edit looks already applied (D18).
    :param max_content_chars: above this many characters of ``content`` nothing is searched.
    :param work_budget: characters the search may examine (a count, not a clock: the same
        inputs always give the same answer); default ``_WORK_BASE + _WORK_PER_CHAR`` per
        character of ``content``. Each pass over the text is paid before it runs; when the
        budget runs out the result is None.
    :param stats: when given, receives ``spent`` (characters examined) and ``budget``.
    :returns: one line starting with ``Hint: `` (no leading or trailing newline, no control
        characters, ending with a period) that names the closest candidate as ``line N`` and
        what differs; or None when there is no near match, when ``needle`` occurs literally in
        ``content``, when either argument is not a string or is out of bounds, or when the budget
        ran out. Never raises.
    """
    budget = Budget(0)
    try:
        if not isinstance(content, str) or not isinstance(needle, str):
            return None
        budget.limit = max(0, _WORK_BASE + _WORK_PER_CHAR * len(content) if work_budget is None else int(work_budget))
        if not needle.strip() or len(needle) > _MAX_NEEDLE_CHARS or len(content) > max_content_chars:
            return None
        if not budget.pay(len(content)) or needle in content:
            return None
        text = Text(content, budget)
        if isinstance(replacement, str):
            found = already_applied(text, needle, replacement)
            if found is not None:
                return escape(found)
        forms: list[tuple[Transform, Ctx]] = []
        for transform in transforms(needle):  # a form that occurs as it is explains it all
            ctx = Ctx(text, transform.needle)
            if transform.literal is not None and transform.needle in content:
                found = transform.literal(ctx)
                if found is not None:
                    return escape(found)
                continue  # it occurs, but not where a copy of read output would be
            if transform.needle.strip():
                forms.append((transform, ctx))
        for stages in (_STAGES, _LAST_RESORT):  # precise classes on every form before guesses
            for transform, ctx in forms:
                for stage in stages:
                    if budget.exhausted():
                        return None
                    hint = stage(ctx)
                    if hint is not None:
                        return escape(transform.wrap(hint))
        return None
    except Exception:  # a hint is best effort: never turn an edit error into a crash
        return None
    finally:
        if stats is not None:
            stats["spent"], stats["budget"] = budget.spent, budget.limit


_STAGES: tuple[Callable[[Ctx], str | None], ...] = (
    stage_edge_newlines,
    stage_cr_as_break,
    stage_cr_stray,
    stage_unicode_spaces,
    stage_typography,
    stage_invisibles,
    stage_nfc,
    stage_indent,
    stage_trailing,
    stage_indent_trailing,
    stage_spacing,
    stage_whitespace_any,
)

_LAST_RESORT: tuple[Callable[[Ctx], str | None], ...] = (
    stage_case,
    stage_closest_line,
)
