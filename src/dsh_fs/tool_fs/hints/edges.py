"""Stage 1: edge newlines (old_string alone is transformed; DEVIATIONS D5). Pure, stdlib only."""

from __future__ import annotations

from .state import Ctx

__all__ = ("stage_edge_newlines",)

def stage_edge_newlines(ctx: Ctx) -> str | None:
    """old_string ends (starts) with more newlines than the file has at its end (start)."""
    content, needle = ctx.content, ctx.needle
    core = needle.rstrip("\n")
    extra = len(needle) - len(core)
    if (extra or needle.startswith("\n")) and not ctx.pay(len(content)):
        return None
    if extra and core.strip():
        body = content.rstrip("\n")
        have = len(content) - len(body)
        if have < extra and body.endswith(core):
            line = content.count("\n", 0, len(body) - len(core)) + 1
            if have == 0:
                newline = "newline" if extra == 1 else f"{extra} newlines"
                return (
                    f"Hint: line {line} matches without the final {newline} of old_string; "
                    "the file does not end with a newline there."
                )
            return (
                f"Hint: line {line} matches if old_string ends with {have} newline{'s' if have > 1 else ''} "
                f"instead of {extra}; the file ends there."
            )
    core = needle.lstrip("\n")
    extra = len(needle) - len(core)
    if extra and core.strip():
        body = content.lstrip("\n")
        have = len(content) - len(body)
        if have < extra and body.startswith(core):
            if have == 0:
                newline = "newline" if extra == 1 else f"{extra} newlines"
                return f"Hint: line 1 matches without the leading {newline} of old_string; the file starts there."
            return (
                f"Hint: line {have + 1} matches if old_string starts with {have} "
                f"newline{'s' if have > 1 else ''} instead of {extra}; the file starts there."
            )
    return None
