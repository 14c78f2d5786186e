"""The state of one hint search (DEVIATIONS D5): the work budget, the file text and one form of
old_string against it, and the line helpers every stage shares. Pure, stdlib only.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ("Budget", "Ctx", "STEP", "Text", "find_at_lines", "line_of")

STEP = 64
"""what one iteration of a Python-level loop costs, in characters: a C-speed pass examines
about that many characters in the time one Python iteration takes"""

_TOKEN_RE = re.compile(r"[^ \t\n]+")


class Budget:
    """Characters the search may still examine; every pass and loop pays before it runs."""

    __slots__ = ("limit", "spent")

    def __init__(self, limit: int) -> None:
        self.limit = max(0, int(limit))
        self.spent = 0

    def pay(self, cost: int) -> bool:
        """Pay ``cost`` if it fits; else the budget is used up and the search ends (False)."""
        if self.spent + cost > self.limit:
            self.spent = self.limit
            return False
        self.spent += cost
        return True

    def exhausted(self) -> bool:
        """Whether the whole budget is spent."""
        return self.spent >= self.limit


class Text:
    """The file text of one search, what was computed from it, and the budget (shared by every
    form of old_string the search tries)."""

    __slots__ = ("content", "budget", "_lines")

    def __init__(self, content: str, budget: Budget) -> None:
        self.content = content
        self.budget = budget
        self._lines: list[str] | None = None

    @property
    def lines(self) -> list[str]:
        """``content`` split on ``\\n``, paid for once (two characters per character)."""
        if self._lines is None:
            self._lines = self.content.split("\n") if self.budget.pay(2 * len(self.content)) else [""]
        return self._lines


class Ctx:
    """One form of old_string (the needle) against the text, with lazily computed views."""

    __slots__ = ("text", "content", "needle", "_ws_anchor")

    def __init__(self, text: Text, needle: str) -> None:
        self.text = text
        self.content = text.content
        self.needle = needle
        self._ws_anchor: bool | None = None

    def pay(self, cost: int) -> bool:
        """Pay ``cost`` characters from the search's budget (False: it is spent)."""
        return self.text.budget.pay(cost)

    def pass_over(self, fn: Callable[[], str]) -> str | None:
        """Run one full-text normalization ``fn`` if the budget pays for a pass over the text."""
        if not self.pay(len(self.content) + len(self.needle)):
            return None
        return fn()

    @property
    def lines(self) -> list[str]:
        """``content`` split on ``\\n`` (the read tool's lines)."""
        return self.text.lines

    def line_start(self, line_no: int) -> int:
        """Offset in ``content`` of the first character of 1-based line ``line_no``."""
        self.pay(line_no)
        return sum(map(len, self.lines[: line_no - 1])) + line_no - 1

    def ws_anchor_found(self) -> bool:
        """Whether the longest whitespace-free token of the needle occurs in the text.

        Normalizations that only touch spaces and tabs keep every such token, so without it
        none of them can match.
        """
        if self._ws_anchor is None:
            tokens = _TOKEN_RE.findall(self.needle)
            self._ws_anchor = bool(tokens) and self.pay(len(self.content)) and max(tokens, key=len) in self.content
        return self._ws_anchor


def find_at_lines(hay: str, pat: str, sol: bool, eol: bool) -> int:
    """First index of ``pat`` in ``hay`` that starts a line (``sol``) and/or ends one (``eol``)."""
    if not sol and not eol:
        return hay.find(pat)
    n, m = len(hay), len(pat)

    def ok(i: int) -> bool:
        return (not sol or i == 0 or hay[i - 1] == "\n") and (not eol or i + m == n or hay[i + m] == "\n")

    if hay.startswith(pat) and ok(0):
        return 0
    found = []
    key = ("\n" if sol else "") + pat + ("\n" if eol else "")
    j = hay.find(key)
    if j >= 0:
        found.append(j + (1 if sol else 0))
    if eol and n >= m and hay.endswith(pat) and ok(n - m):
        found.append(n - m)
    return min(found) if found else -1


def line_of(ctx: Ctx, idx: int) -> int:
    """The 1-based line of offset ``idx`` of ``ctx.content`` (paid for)."""
    ctx.pay(idx)
    return ctx.content.count("\n", 0, idx) + 1
