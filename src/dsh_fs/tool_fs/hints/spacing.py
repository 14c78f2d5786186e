"""Stages 7-9: spaces and tabs at line level, then whitespace of any kind (DEVIATIONS D5, D18).
Pure, stdlib only.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from itertools import accumulate, repeat

from .state import STEP, Ctx, find_at_lines

__all__ = ("stage_indent", "stage_indent_trailing", "stage_spacing", "stage_trailing", "stage_whitespace_any")

_HSPACE = " \t"


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


def _collapse_runs(text: str) -> str:
    """Every run of spaces and tabs as one space (linear: log2(longest run) passes)."""
    text = text.replace("\t", " ")
    while "  " in text:
        text = text.replace("  ", " ")
    return text


def _ws_stage(ctx: Ctx, *, lead: bool, trail: bool, runs: bool, intro: str) -> str | None:
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
    idx = find_at_lines(norm_content, norm_needle, sol, eol)
    if idx < 0 or not ctx.pay(len(norm_content) + STEP * (len(segs) + len(needle))):  # the count, the detail loops
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


def stage_indent(ctx: Ctx) -> str | None:
    """Stage 7: the indentation (leading spaces and tabs) of some line differs."""
    return _ws_stage(ctx, lead=True, trail=False, runs=False, intro="matches if indentation is ignored")


def stage_trailing(ctx: Ctx) -> str | None:
    """Stage 7: the trailing spaces and tabs of some line differ."""
    return _ws_stage(ctx, lead=False, trail=True, runs=False, intro="matches if trailing whitespace is ignored")


def stage_indent_trailing(ctx: Ctx) -> str | None:
    """Stage 7: indentation and trailing spaces and tabs differ, both."""
    return _ws_stage(
        ctx, lead=True, trail=True, runs=False, intro="matches if indentation and trailing whitespace are ignored"
    )


def stage_spacing(ctx: Ctx) -> str | None:
    """Stage 8: runs of spaces and tabs anywhere in a line differ."""
    return _ws_stage(ctx, lead=True, trail=True, runs=True, intro="matches if spaces and tabs are compared loosely")


def _nonspace(text: str) -> str:
    return "".join(text.split())


def stage_whitespace_any(ctx: Ctx) -> str | None:
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
