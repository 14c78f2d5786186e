"""Near-match hints for a failed ``edit`` (DEVIATIONS D5, D18). Pure.

Stdlib only, no I/O, no imports from the rest of ``dsh_fs``.

When ``old_string`` is not found, the ``edit`` tool (``default`` profile) appends one line
``Hint: ...`` if the text is there after all under a small, named normalization. Each
normalization is applied to both the file text and ``old_string``; the first one under which
``old_string`` occurs wins, and the match is mapped back to the original text to name its
1-based line (the read tool's numbering: lines are split on ``\\n`` only) and what differs.

0. (D18) ``new_string`` is in the file instead: the edit looks already applied (models retry
   edits that succeeded). Only for a ``new_string`` that is not part of ``old_string`` and has
   at least ``_APPLIED_MIN_CHARS`` non-space characters.

Then, for old_string itself and for the forms a copying mistake gives it — without the
line-number prefixes (``12: ``) copied from ``read`` output on every line, with each two-character
``\\n`` read as a line break (D18), or both — the form occurring as it is, else, in order:

1. a final (or leading) newline of old_string the file does not have there;
2. a bare carriage return where old_string has a line break, or a stray carriage return;
3. NBSP and other Unicode spaces (U+00A0, U+1680, U+2000-U+200A, U+202F, U+205F, U+3000,
   U+FEFF) vs an ASCII space;
4. curly vs straight quotes, Unicode dashes vs ``-``, ``…`` vs ``...``;
5. invisible characters (zero-width spaces and joiners, U+2060, U+FEFF, soft hyphen);
6. NFC vs NFD (``unicodedata.normalize``);
7. indentation (leading spaces/tabs of each line), then trailing spaces/tabs, then both;
8. runs of spaces and tabs anywhere in a line;
9. (D18) any whitespace anywhere: line breaks, blank lines, a space inside a token;
10. letter case (last resort);
11. only for one-line old_strings in files of at most ``_FUZZY_MAX_LINES`` lines: the most
    similar line (``difflib`` ratio at least ``_FUZZY_CUTOFF``), worded as *not* a match.

So two differences at once are found when one of them is a copying mistake of old_string
(a prefix plus a tab typed as spaces; a prefix plus a trailing space; ``\\n`` plus
indentation), and any number of whitespace differences by stage 9. A hint for a transformed
form says both what was changed and what the stage found.

Character-exact classes (2-6) come before the whitespace ones because their hints say exactly
which character differs; on ASCII-only text they cost nothing.

Guarantees: a hint never claims a match that is not there (the normalized old_string really
occurs in the normalized text, and character-level claims are re-aligned on the original text;
the already-applied hint names a real occurrence of new_string); None when old_string
literally occurs in the text; nothing is ever applied.

Cost: nothing is searched when the text exceeds ``max_content_chars`` or old_string exceeds
``_MAX_NEEDLE_CHARS``. The search has a *work budget* counted in characters examined (not a
clock, so the answer never depends on the machine's speed): every pass over the text (C-speed
``str`` methods and regex substitutions) is paid before it runs, and every Python-level loop
pays as it goes; when the budget is spent the result is None. Most normalizations are skipped
by cheap prefilters (ASCII-only text, a piece of old_string the normalization cannot change
that must occur literally). The closest-line fallback compares at most ``_FUZZY_MAX_LINES`` lines.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import accumulate, repeat

__all__ = ("describe", "escape", "fold_lookalikes", "near_match_hint", "unnormalized_cluster")

_MAX_NEEDLE_CHARS = 100_000
"""Longest old_string (in code points) for which a hint is searched."""

_MAX_TRIES = 64
"""Normalized occurrences examined per normalization before giving up."""

_WORK_BASE = 2_000_000
_WORK_PER_CHAR = 12
"""The default work budget: this many characters examined, plus this many per character of
the text (about a dozen passes over a big file; every stage on a small one)."""

_STEP = 64
"""what one iteration of a Python-level loop costs, in characters: a C-speed pass examines
about that many characters in the time one Python iteration takes"""

_FUZZY_MAX_LINES = 5_000
"""The closest-line fallback only runs on files with at most this many lines."""

_FUZZY_MIN_CHARS = 4
_FUZZY_MAX_CHARS = 300
"""The closest-line fallback only runs for one-line old_strings of this many characters."""

_FUZZY_CUTOFF = 0.8
"""Least ``difflib.SequenceMatcher.ratio`` for the closest-line fallback."""

_EXAMPLE_SCAN_LIMIT = 20_000
"""Characters scanned for an example of a decomposed character (NFC hint)."""

_HSPACE = " \t"

_UNICODE_SPACES = "\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000\ufeff"
_SINGLE_QUOTES = "\u2018\u2019\u201a\u201b\u2032"
_DOUBLE_QUOTES = "\u201c\u201d\u201e\u201f\u2033"
_DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"
_INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff\u00ad"

_PREFIX_RE = re.compile(r"[0-9]+:(?: |$)")
_TOKEN_RE = re.compile(r"[^ \t\n]+")

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
    budget = _Budget(0)
    try:
        if not isinstance(content, str) or not isinstance(needle, str):
            return None
        budget.limit = max(0, _WORK_BASE + _WORK_PER_CHAR * len(content) if work_budget is None else int(work_budget))
        if not needle.strip() or len(needle) > _MAX_NEEDLE_CHARS or len(content) > max_content_chars:
            return None
        if not budget.pay(len(content)) or needle in content:
            return None
        text = _Text(content, budget)
        if isinstance(replacement, str):
            found = _already_applied(text, needle, replacement)
            if found is not None:
                return _escape(found)
        forms: list[tuple[_Transform, _Ctx]] = []
        for transform in _transforms(needle):  # a form that occurs as it is explains it all
            ctx = _Ctx(text, transform.needle)
            if transform.literal is not None and transform.needle in content:
                found = transform.literal(ctx)
                if found is not None:
                    return _escape(found)
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
                        return _escape(transform.wrap(hint))
        return None
    except Exception:  # a hint is best effort: never turn an edit error into a crash
        return None
    finally:
        if stats is not None:
            stats["spent"], stats["budget"] = budget.spent, budget.limit


# --------------------------------------------------------------------------------------------
# Shared state and helpers
# --------------------------------------------------------------------------------------------


class _Budget:
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
        return self.spent >= self.limit


class _Text:
    """The file text of one search, what was computed from it, and the budget (shared by every
    form of old_string the search tries)."""

    __slots__ = ("content", "budget", "_lines")

    def __init__(self, content: str, budget: _Budget) -> None:
        self.content = content
        self.budget = budget
        self._lines: list[str] | None = None

    @property
    def lines(self) -> list[str]:
        if self._lines is None:
            self._lines = self.content.split("\n") if self.budget.pay(2 * len(self.content)) else [""]
        return self._lines


class _Ctx:
    """One form of old_string (the needle) against the text, with lazily computed views."""

    __slots__ = ("text", "content", "needle", "_ws_anchor")

    def __init__(self, text: _Text, needle: str) -> None:
        self.text = text
        self.content = text.content
        self.needle = needle
        self._ws_anchor: bool | None = None

    def pay(self, cost: int) -> bool:
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


def _escape(text: str) -> str:
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


def _quote(text: str, limit: int = 40) -> str:
    if len(text) > limit:
        text = text[:limit] + "\u2026"
    return '"' + _escape(text) + '"'


def _describe(piece: str) -> str:
    """Name a character (or a short piece of text) for a hint: ``a no-break space (U+00A0)``."""
    named = _NAMED.get(piece)
    if named is not None:
        return named
    if len(piece) != 1:
        return _quote(piece)
    code = f"U+{ord(piece):04X}"
    name = unicodedata.name(piece, "").lower()
    if not name:
        return f"the character {code}"
    article = "an" if name[0] in "aeio" else "a"
    if piece.isprintable():
        return f"{article} {name} ({piece}, {code})"
    return f"{article} {name} ({code})"


describe = _describe
"""Name a character or a short piece of text for a hint: ``a no-break space (U+00A0)``."""

escape = _escape
"""A text with every non-printable character written as an escape (``\\u00a0``)."""


def _code_points(text: str) -> str:
    return " ".join(f"U+{ord(ch):04X}" for ch in text)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _ws_words(ws: str) -> str:
    """``1 tab``, ``4 spaces``, ``1 tab and 2 spaces``, ``nothing``."""
    parts = []
    if ws.count("\t"):
        parts.append(_plural(ws.count("\t"), "tab"))
    if ws.count(" "):
        parts.append(_plural(ws.count(" "), "space"))
    return " and ".join(parts) or "nothing"


def _lead(line: str) -> str:
    return line[: len(line) - len(line.lstrip(_HSPACE))]


def _trail(line: str) -> str:
    return line[len(line.rstrip(_HSPACE)) :]


def _is_blank(line: str) -> bool:
    return not line.strip(_HSPACE)


def _find_at_lines(hay: str, pat: str, sol: bool, eol: bool) -> int:
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


# --------------------------------------------------------------------------------------------
# Forms of old_string (old_string alone is transformed): read prefixes, escaped line breaks
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Transform:
    """A form of old_string to search for, and how to say what was changed to get it."""

    needle: str
    literal: Callable[[_Ctx], str | None] | None
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


def _line_of(ctx: _Ctx, idx: int) -> int:
    ctx.pay(idx)
    return ctx.content.count("\n", 0, idx) + 1


def _transforms(needle: str) -> Iterator[_Transform]:
    """old_string itself, then the forms a model's copying mistakes give it (lazily)."""
    yield _Transform(needle, None, _same)
    prefixed = _strip_prefixes(needle)
    escaped = _read_escapes(needle)
    if prefixed is not None:
        stripped, prefix = prefixed
        what = _PREFIXES.format(prefix=prefix)

        def prefix_literal(ctx: _Ctx) -> str | None:
            if not ctx.pay(len(ctx.content)):
                return None
            idx = _find_at_lines(ctx.content, ctx.needle, True, False)
            if idx < 0:
                return None
            return f"Hint: line {_line_of(ctx, idx)} matches without {what}; they are not part of the file."

        yield _Transform(stripped, prefix_literal,
                         lambda hint: f"Hint: old_string has {what}, which are not part of the file; without them, "
                                      + hint.removeprefix("Hint: "))
    if escaped is not None:

        def escapes_literal(ctx: _Ctx) -> str | None:
            idx = ctx.content.find(ctx.needle)
            return None if idx < 0 else (
                f"Hint: line {_line_of(ctx, idx)} matches if each {_ESCAPES} in old_string is a line break: "
                "write real line breaks, not those two characters.")

        yield _Transform(escaped, escapes_literal,
                         lambda hint: f"Hint: old_string has {_ESCAPES} where the file has line breaks; with real "
                                      "line breaks, " + hint.removeprefix("Hint: "))
    both_prefixed = _strip_prefixes(escaped) if escaped is not None else None
    if both_prefixed is not None:  # prefixes on the lines the escaped line breaks make
        both, prefix = both_prefixed
        what = _PREFIXES.format(prefix=prefix)
        if both.strip():

            def both_literal(ctx: _Ctx) -> str | None:
                if not ctx.pay(len(ctx.content)):
                    return None
                idx = _find_at_lines(ctx.content, ctx.needle, True, False)
                return None if idx < 0 else (
                    f"Hint: line {_line_of(ctx, idx)} matches without {what} and with a real line break for each "
                    f"{_ESCAPES} in old_string.")

            yield _Transform(both, both_literal,
                             lambda hint: f"Hint: old_string has {what}, which are not part of the file, and {_ESCAPES} "
                                          "where the file has line breaks; without the prefixes and with real line "
                                          "breaks, " + hint.removeprefix("Hint: "))


# --------------------------------------------------------------------------------------------
# The edit looks already applied (D18)
# --------------------------------------------------------------------------------------------

_APPLIED_MIN_CHARS = 3
"""new_string needs this many non-space characters to say anything by being in the file"""


def _already_applied(text: _Text, needle: str, replacement: str) -> str | None:
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


# --------------------------------------------------------------------------------------------
# Edge newlines (old_string alone is transformed)
# --------------------------------------------------------------------------------------------


def _stage_edge_newlines(ctx: _Ctx) -> str | None:
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


# --------------------------------------------------------------------------------------------
# 8-9. Spaces and tabs at line level
# --------------------------------------------------------------------------------------------


def _collapse_runs(text: str) -> str:
    """Every run of spaces and tabs as one space (linear: log2(longest run) passes)."""
    text = text.replace("\t", " ")
    while "  " in text:
        text = text.replace("  ", " ")
    return text


def _ws_stage(ctx: _Ctx, *, lead: bool, trail: bool, runs: bool, intro: str) -> str | None:
    """Match with leading (``lead``) / trailing (``trail``) spaces and tabs of every line removed,
    and with ``runs`` every run of them as one space; the hint names what differs per line.

    Stripping the start of old_string's first line (the end of its last line) is only fair when
    the match starts (ends) a line in the file, so the search then demands it.
    """
    needle = ctx.needle
    segs = needle.split("\n")
    if runs:
        useful = len(segs) > 1 or " " in needle or "\t" in needle
    else:
        useful = (lead and (len(segs) > 1 or segs[0][:1] in (" ", "\t"))) or (
            trail and (len(segs) > 1 or segs[-1][-1:] in (" ", "\t"))
        )
    if not useful or not ctx.ws_anchor_found():
        return None

    method = str.strip if lead and trail else str.lstrip if lead else str.rstrip
    chars = " " if runs else _HSPACE  # after _collapse_runs only spaces are left

    def strip_lines(lines: list[str]) -> str:
        return "\n".join(map(method, lines, repeat(chars, len(lines))))

    sol = lead and segs[0][:1] in (" ", "\t")
    eol = trail and segs[-1][-1:] in (" ", "\t")
    norm_needle = strip_lines(_collapse_runs(needle).split("\n") if runs else segs)
    if not norm_needle.strip():
        return None
    if runs:
        norm_content = ctx.pass_over(lambda: strip_lines(_collapse_runs(ctx.content).split("\n")))
    else:
        lines = ctx.lines  # split (and paid for) once, shared by every stage
        norm_content = ctx.pass_over(lambda: strip_lines(lines))
    if norm_content is None:
        return None
    idx = _find_at_lines(norm_content, norm_needle, sol, eol)
    if idx < 0 or not ctx.pay(len(norm_content) + _STEP * (len(segs) + len(needle))):  # the count, the detail loops
        return None
    first = norm_content.count("\n", 0, idx) + 1
    file_lines = ctx.lines[first - 1 : first - 1 + len(segs)]
    if len(file_lines) != len(segs):  # cannot happen: the normalizations keep every line
        return None
    # Rows: (line number, file line, old_string line, starts mid-line?, ends mid-line?). The first
    # line of old_string is known to start a line only when its leading whitespace was stripped
    # (then the match had to start a line); likewise for the end of its last line.
    rows = []
    for i, (fl, nl) in enumerate(zip(file_lines, segs)):
        rows.append((first + i, fl, nl, i == 0 and not sol, i == len(segs) - 1 and not eol))
    details = []
    if lead:
        details += _indent_details(rows)
    if trail:
        details += _trailing_details(rows, skip_blank=lead)
    if runs:
        details += _inner_details(rows)
    if details:
        return f"Hint: line {first} {intro}: {'; '.join(details)}."
    return f"Hint: line {first} {intro}."


def _indent_details(rows: list[tuple[int, str, str, bool, bool]]) -> list[str]:
    diffs = []
    blanks = []
    for line, fl, nl, partial_start, partial_end in rows:
        if partial_start or (partial_end and nl == ""):
            continue
        f, n = _lead(fl), _lead(nl)
        if f == n:
            continue
        if _is_blank(fl) and _is_blank(nl):
            blanks.append((line, f, n))
        else:
            diffs.append((line, f, n))
    if diffs:
        if all(f and set(f) == {"\t"} and n and set(n) == {" "} for _, f, n in diffs):
            return ["the file indents with tabs, old_string with spaces"]
        if all(f and set(f) == {" "} and n and set(n) == {"\t"} for _, f, n in diffs):
            return ["the file indents with spaces, old_string with tabs"]
        line, f, n = diffs[0]
        if not n:
            return [f"line {line} is indented with {_ws_words(f)} in the file but not in old_string"]
        if not f:
            return [f"old_string indents line {line} with {_ws_words(n)} but the file does not"]
        return [f"the file indents line {line} with {_ws_words(f)}, old_string with {_ws_words(n)}"]
    if blanks:
        line, f, n = blanks[0]
        return [f"blank line {line} holds {_ws_words(f)} in the file but {_ws_words(n)} in old_string"]
    return []


def _trailing_details(rows: list[tuple[int, str, str, bool, bool]], *, skip_blank: bool) -> list[str]:
    for line, fl, nl, _partial_start, partial_end in rows:
        if partial_end:
            continue
        if skip_blank and _is_blank(fl) and _is_blank(nl):
            continue
        f, n = _trail(fl), _trail(nl)
        if f == n:
            continue
        if _is_blank(fl) and _is_blank(nl):
            return [f"blank line {line} holds {_ws_words(f)} in the file but {_ws_words(n)} in old_string"]
        if not n:
            return [f"line {line} ends with {_ws_words(f)} that old_string does not have"]
        if not f:
            return [f"old_string has {_ws_words(n)} at the end of line {line}, the file does not"]
        return [f"line {line} ends with {_ws_words(f)} in the file but {_ws_words(n)} in old_string"]
    return []


def _split_runs(text: str) -> list[str]:
    """``text`` stripped of spaces and tabs at both ends, as [word, run, word, run, ..., word]."""
    return re.split(r"([ \t]+)", text.strip(_HSPACE))


def _inner_details(rows: list[tuple[int, str, str, bool, bool]]) -> list[str]:
    """The first run of spaces/tabs inside a line that differs from old_string's."""
    for line, fl, nl, partial_start, partial_end in rows:
        if len(fl) > 5_000 or len(nl) > 5_000:
            continue
        fa, na = _split_runs(fl), _split_runs(nl)
        if len(na) < 3:  # a single word: no inner run
            continue
        fw, nw = fa[0::2], na[0::2]
        for off in range(len(fw) - len(nw) + 1):
            if off and not partial_start:
                break
            if off + len(nw) != len(fw) and not partial_end:
                continue
            if not (fw[off] == nw[0] or (partial_start and fw[off].endswith(nw[0]))):
                continue
            last = off + len(nw) - 1
            if not (fw[last] == nw[-1] or (partial_end and fw[last].startswith(nw[-1]))):
                continue
            if fw[off + 1 : last] != nw[1:-1]:
                continue
            for x in range(len(nw) - 1):
                f, n = fa[2 * (off + x) + 1], na[2 * x + 1]
                if f != n:
                    return [f"line {line} has {_ws_words(f)} where old_string has {_ws_words(n)}"]
            break
    return []


def _stage_indent(ctx: _Ctx) -> str | None:
    return _ws_stage(ctx, lead=True, trail=False, runs=False, intro="matches if indentation is ignored")


def _stage_trailing(ctx: _Ctx) -> str | None:
    return _ws_stage(ctx, lead=False, trail=True, runs=False, intro="matches if trailing whitespace is ignored")


def _stage_indent_trailing(ctx: _Ctx) -> str | None:
    return _ws_stage(
        ctx, lead=True, trail=True, runs=False, intro="matches if indentation and trailing whitespace are ignored"
    )


def _stage_spacing(ctx: _Ctx) -> str | None:
    return _ws_stage(ctx, lead=True, trail=True, runs=True, intro="matches if spaces and tabs are compared loosely")


def _nonspace(text: str) -> str:
    return "".join(text.split())


def _stage_whitespace_any(ctx: _Ctx) -> str | None:
    """Only whitespace differs, of any kind and anywhere: spaces, tabs, Unicode spaces, line
    breaks, blank lines, a space inside a token (D18). The claim is exact: old_string and the
    text from line N on are equal once every whitespace character is removed from both."""
    core = _nonspace(ctx.needle)
    if not core:
        return None
    flat = ctx.pass_over(lambda: _nonspace(ctx.content))
    if flat is None:
        return None
    idx = flat.find(core)
    if idx < 0 or not ctx.pay(2 * len(ctx.content) + 8 * len(ctx.lines)):  # C-speed, line by line
        return None
    # non-space characters up to the end of each line: the match's first and last lines
    seen = list(accumulate(map(len, map("".join, map(str.split, ctx.lines)))))
    first, last = bisect_right(seen, idx) + 1, bisect_left(seen, idx + len(core)) + 1
    file_lines, needle_lines = last - first + 1, ctx.needle.strip().count("\n") + 1
    if file_lines != needle_lines:
        return (f"Hint: line {first} matches if all whitespace is ignored: the text runs over {file_lines} "
                f"line{'s' if file_lines > 1 else ''} in the file (lines {first}-{last}) but {needle_lines} in old_string.")
    return f"Hint: line {first} matches if all whitespace is ignored."


# --------------------------------------------------------------------------------------------
# 3-6, 10. Character maps (each character of both texts maps to a fixed string)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _CharNorm:
    """A normalization that maps each character independently: ``apply(s) == "".join(map(g, s))``."""

    apply: Callable[[str], str]
    g: Callable[[str], str]
    length_preserving: bool
    affected: str | None  # characters changed or produced; None: no literal anchor exists
    needs_non_ascii: bool  # the map can only change non-ASCII characters


def _table_norm(table: dict[str, str], *, needs_non_ascii: bool) -> _CharNorm:
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
    return _CharNorm(apply, g, all(len(v) == 1 for v in table.values()), affected, needs_non_ascii)


_CR_AS_BREAK = _table_norm({"\r": "\n"}, needs_non_ascii=False)
_CR_STRAY = _table_norm({"\r": ""}, needs_non_ascii=False)
_SPACES = _table_norm({ch: " " for ch in _UNICODE_SPACES}, needs_non_ascii=True)
_TYPOGRAPHY = _table_norm(
    {
        **{ch: "'" for ch in _SINGLE_QUOTES},
        **{ch: '"' for ch in _DOUBLE_QUOTES},
        **{ch: "-" for ch in _DASHES},
        "\u2026": "...",
    },
    needs_non_ascii=True,
)
_INVISIBLES = _table_norm({ch: "" for ch in _INVISIBLE}, needs_non_ascii=True)
_CASE = _CharNorm(str.casefold, str.casefold, False, None, False)


def fold_lookalikes(text: str) -> str:
    """``text`` with every difference these hints name as a lookalike folded away: NFC,
    invisible characters removed, Unicode spaces as a space, curly quotes and dashes as ASCII,
    letter case folded (for names: ``name_hints``, DEVIATIONS D19)."""
    text = unicodedata.normalize("NFC", text)
    return _CASE.apply(_TYPOGRAPHY.apply(_SPACES.apply(_INVISIBLES.apply(text))))


def _anchor_found(ctx: _Ctx, affected: str) -> bool:
    """Whether the longest run of old_string free of ``affected`` characters is in the text."""
    pieces = re.split("[" + re.escape(affected) + "]+", ctx.needle)
    anchor = max(pieces, key=len)
    return not anchor or (ctx.pay(len(ctx.content)) and anchor in ctx.content)


def _walk(ctx: _Ctx, start: int, norm: _CharNorm) -> list[tuple[int, int, str, str]] | None:
    """Align ``content[start:]`` with the needle chunk by chunk under ``norm.g``.

    Returns the differing chunks as (content index, needle index, file text, needle text), or
    None when the two do not normalize alike (the candidate is not a real match).
    """
    content, needle, g = ctx.content, ctx.needle, norm.g
    i, j, n, m = start, 0, len(content), len(needle)
    diffs: list[tuple[int, int, str, str]] = []
    if not ctx.pay(_STEP * m):  # a step per character of old_string (and of the file text it meets)
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


def _orig_index(ctx: _Ctx, norm_content: str, idx: int, norm: _CharNorm) -> int | None:
    """Map an index of the normalized text back to ``content`` (None: inside an expansion)."""
    if not ctx.pay(idx):
        return None
    line_no = norm_content.count("\n", 0, idx) + 1
    col = idx - (norm_content.rfind("\n", 0, idx) + 1)
    line = ctx.lines[line_no - 1]
    lo, hi = 0, len(line)
    while lo < hi:
        if not ctx.pay(len(line) + _STEP):
            return None
        mid = (lo + hi) // 2
        if len(norm.apply(line[:mid])) < col:
            lo = mid + 1
        else:
            hi = mid
    if len(norm.apply(line[:lo])) != col:
        return None
    return ctx.line_start(line_no) + lo


def _char_match(ctx: _Ctx, norm: _CharNorm) -> tuple[int, list[tuple[int, int, str, str]]] | None:
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
        if not ctx.pay(len(norm_needle) + _STEP):
            return None
        start = idx if norm.length_preserving else _orig_index(ctx, norm_content, idx, norm)
        if start is not None:
            diffs = _walk(ctx, start, norm)
            if diffs:
                return start, diffs
        idx = norm_content.find(norm_needle, idx + 1)
        tries += 1
    return None


def _char_hint(ctx: _Ctx, norm: _CharNorm) -> str | None:
    """``Hint: line N has <file character> where old_string has <character>.`` for ``norm``."""
    found = _char_match(ctx, norm)
    if found is None:
        return None
    start, diffs = found
    first = _line_of(ctx, start)
    i0, _j0, a, b = diffs[0]
    line = first + ctx.content.count("\n", start, i0)
    if a and b:
        core = f"line {line} has {_describe(a)} where old_string has {_describe(b)}"
    elif a:
        core = f"line {line} has {_describe(a)} that old_string lacks"
    else:
        core = f"old_string has {_describe(b)} that line {line} lacks"
    more = len(diffs) - 1
    if more:
        core += f", plus {more} more such difference{'s' if more > 1 else ''}"
    if line == first:
        return f"Hint: {core}."
    return f"Hint: the text at line {first} matches, except that {core}."


def _stage_cr_as_break(ctx: _Ctx) -> str | None:
    if "\r" not in ctx.content and "\r" not in ctx.needle:
        return None
    return _char_hint(ctx, _CR_AS_BREAK)


def _stage_cr_stray(ctx: _Ctx) -> str | None:
    if "\r" not in ctx.content and "\r" not in ctx.needle:
        return None
    return _char_hint(ctx, _CR_STRAY)


def _stage_unicode_spaces(ctx: _Ctx) -> str | None:
    return _char_hint(ctx, _SPACES)


def _stage_typography(ctx: _Ctx) -> str | None:
    return _char_hint(ctx, _TYPOGRAPHY)


def _stage_invisibles(ctx: _Ctx) -> str | None:
    return _char_hint(ctx, _INVISIBLES)


def _word_at(text: str, pos: int, limit: int = 30) -> str:
    """The word (letters, digits, ``_``) around ``text[pos]``, at most ``limit`` chars each side."""
    lo = pos
    while lo > 0 and pos - lo < limit and (text[lo - 1].isalnum() or text[lo - 1] == "_"):
        lo -= 1
    hi = pos
    while hi < len(text) and hi - pos < limit and (text[hi].isalnum() or text[hi] == "_"):
        hi += 1
    return text[lo:hi] if hi > lo else text[pos : pos + 1]


def _stage_case(ctx: _Ctx) -> str | None:
    """Last resort: the texts differ only in letter case (``str.casefold``)."""
    found = _char_match(ctx, _CASE)
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
    core = f"line {line} has {_quote(file_word)} where old_string has {_quote(needle_word)}"
    if len(words) > 1:
        core += f", plus {len(words) - 1} more word{'s' if len(words) > 2 else ''}"
    if line == first:
        return f"Hint: {core}; only letter case differs."
    return f"Hint: the text at line {first} matches except for letter case: {core}."


# --------------------------------------------------------------------------------------------
# 7. NFC vs NFD
# --------------------------------------------------------------------------------------------


def _first_unnormalized_cluster(text: str, wanted_in: str | None) -> str | None:
    """The first base character + combining marks of ``text`` that NFC changes."""
    limit = min(len(text), _EXAMPLE_SCAN_LIMIT)
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


unnormalized_cluster = _first_unnormalized_cluster
"""The first base character plus combining marks of a text that NFC changes (or None)."""


def _stage_nfc(ctx: _Ctx) -> str | None:
    """Match after NFC on both sides; name a decomposed character as an example when possible."""
    content, needle = ctx.content, ctx.needle
    if content.isascii() and needle.isascii():
        return None
    if not ctx.pay(len(content) + _STEP * _EXAMPLE_SCAN_LIMIT):  # the example scan is a Python loop
        return None
    if unicodedata.is_normalized("NFC", content) and unicodedata.is_normalized("NFC", needle):
        return None
    norm_needle = unicodedata.normalize("NFC", needle)
    if not norm_needle.strip():
        return None
    norm_content = ctx.pass_over(lambda: unicodedata.normalize("NFC", content))
    if norm_content is None:
        return None
    idx = norm_content.find(norm_needle)
    if idx < 0 or not ctx.pay(len(content)):
        return None
    first = norm_content.count("\n", 0, idx) + 1
    region = "\n".join(ctx.lines[first - 1 : first + needle.count("\n")])
    file_dec = not unicodedata.is_normalized("NFC", region)
    needle_dec = not unicodedata.is_normalized("NFC", needle)
    intro = f"Hint: line {first} matches after Unicode normalization (NFC)"
    if file_dec and not needle_dec:
        cluster = _first_unnormalized_cluster(region, norm_needle)
        if cluster is not None:
            composed = unicodedata.normalize("NFC", cluster)
            return (
                f"{intro}: the file writes {_quote(composed)} as {_code_points(cluster)} (decomposed), "
                f"old_string as {_code_points(composed)} (composed)."
            )
    elif needle_dec and not file_dec:
        cluster = _first_unnormalized_cluster(needle, None)
        if cluster is not None:
            composed = unicodedata.normalize("NFC", cluster)
            return (
                f"{intro}: old_string writes {_quote(composed)} as {_code_points(cluster)} (decomposed), "
                f"the file as {_code_points(composed)} (composed)."
            )
    return f"{intro}: the file and old_string encode some accented characters differently."


# --------------------------------------------------------------------------------------------
# 11. Closest line (bounded fuzzy fallback; never claims a match)
# --------------------------------------------------------------------------------------------


def _stage_closest_line(ctx: _Ctx) -> str | None:
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
        if not ctx.pay(len(line) + _STEP):
            return None
        candidate = line.strip()
        if not lo <= len(candidate) <= hi:
            continue
        matcher.set_seq1(candidate)
        if matcher.real_quick_ratio() < _FUZZY_CUTOFF:
            continue
        if not ctx.pay(_STEP * (len(candidate) + len(target))):  # quick_ratio: a Python loop per character
            return None
        quick = matcher.quick_ratio()
        if quick < _FUZZY_CUTOFF or quick <= best_ratio:
            continue
        if not ctx.pay(_STEP * len(candidate) * len(target) // 8):  # ratio: difflib's matching blocks
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


_STAGES: tuple[Callable[[_Ctx], str | None], ...] = (
    _stage_edge_newlines,
    _stage_cr_as_break,
    _stage_cr_stray,
    _stage_unicode_spaces,
    _stage_typography,
    _stage_invisibles,
    _stage_nfc,
    _stage_indent,
    _stage_trailing,
    _stage_indent_trailing,
    _stage_spacing,
    _stage_whitespace_any,
)

_LAST_RESORT: tuple[Callable[[_Ctx], str | None], ...] = (
    _stage_case,
    _stage_closest_line,
)
