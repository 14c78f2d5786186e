"""Result-time hunk diffs for the ``write`` and ``edit`` tools (REFERENCE-SPEC §4.9).

A pure module: stdlib only, no I/O, no imports from the rest of ``dsh_fs``.

It ports the TypeScript reference's use of jsdiff v9:

* ``diffLines`` -- Myers' O(ND) diff over line tokens, with jsdiff's exact path-selection
  tie-break (``_myers``), and its tokenizer (``_tokenize``);
* ``structuredPatch(..., {context: 3})`` -- grouping the change list into hunks with ``context``
  lines around each change block, merging blocks separated by ``<= 2 * context`` unchanged lines
  (``_structured_hunks``);
* ``computeHunkDiffs`` / ``diffsFromMeta`` -- mapping each hunk to a ``FileDiff`` dict
  (``compute_hunk_diffs``) and the defensive narrowing of a result's ``meta`` (``diffs_from_meta``).

``bounded_diffs`` is what the tools attach: no hunks when a side is missing or over
``DIFF_META_MAX_CHARS`` characters (a bound of ours; the reference diffs any size).

Not here: deciding *whether* to diff (undiffable prior bytes, creates), LF normalization of the
inputs (the provider hands over LF-normalized text, SPEC §1.1), and how a UI renders the diffs.

Cost bound (a deliberate addition; jsdiff has none when no ``maxEditLength``/``timeout`` is given):
Myers costs O((N + M) * D). Exact shortcuts first: the common prefix is consumed before the search
(exactly what jsdiff's first snake does), long equal runs are compared in C-speed slices, and when
nothing past the prefix can match (a rewrite with unrelated content) the result is built directly.
The common suffix is set aside too, but only when its first line occurs nowhere in the changed
middle of either side: otherwise trimming it could slide a change along a run of repeated lines
and move the hunk extents away from jsdiff's (a property test checks the trimmed search against
the untrimmed one). Both set-aside runs stay text (``_Run``): a small edit of a big file splits
only its changed middle into lines. Otherwise the search gives up once the edit distance exceeds
``_MAX_EDIT_LENGTH`` or its step counter exceeds ``_MAX_WORK`` (about a second of CPU), and falls
back to ONE hunk spanning from the first to the last differing line (common prefix and suffix
trimmed), with the usual context around it, where jsdiff might report several hunks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

__all__ = ("DIFF_CONTEXT", "DIFF_META_MAX_CHARS", "bounded_diffs", "compute_hunk_diffs", "diffs_from_meta")

DIFF_CONTEXT = 3
"""Unchanged lines shown around each change block (the reference's ``DIFF_CONTEXT``)."""

_MAX_EDIT_LENGTH = 2_000
"""Largest edit distance (removed + added lines) the Myers search explores before falling back."""

_MAX_WORK = 1_000_000
"""Budget of Myers inner-loop steps (diagonal visits plus snake chunks) before falling back."""

_NO_NEWLINE_MARKER = "\\ No newline at end of file"

class _Run:
    """An equal run of whole lines kept as text: what the hunk builder reads of a token list
    (its length, its first or last few lines, iteration) without splitting all of it."""

    __slots__ = ("_count", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self._count = -1  # counted when first asked: the run after the last change never is

    def __len__(self) -> int:
        if self._count < 0:
            self._count = self.text.count("\n") + (not self.text.endswith("\n"))
        return self._count

    def __iter__(self) -> Iterator[str]:
        return iter(_tokenize(self.text))

    def __getitem__(self, index: slice) -> list[str]:
        """``[:n]`` (the first ``n`` lines) and ``[-n:]`` (the last ``n``) split only those."""
        start, stop = index.start, index.stop
        if index.step is None and start is None and stop is not None and stop >= 0:
            cut = 0
            for _ in range(stop):
                cut = self.text.find("\n", cut) + 1
                if cut == 0:
                    return _tokenize(self.text)
            return _tokenize(self.text[:cut])
        if index.step is None and stop is None and start is not None and start < 0:
            cut = len(self.text) - 1  # the last line's own terminator is not a boundary
            for _ in range(-start):
                cut = self.text.rfind("\n", 0, cut)
                if cut < 0:
                    return _tokenize(self.text)
            return _tokenize(self.text[cut + 1 :])
        return _tokenize(self.text)[index]


# A change component, as jsdiff's ``ChangeObject`` restricted to what the patch builder reads:
# (added, removed, tokens). Equal runs have added == removed == False; the set-aside common
# prefix and suffix are ``_Run`` s.
_Component = tuple[bool, bool, "list[str] | _Run"]


# --------------------------------------------------------------------------------------------
# Tokenization (jsdiff ``diff/line.js`` ``tokenize``)
# --------------------------------------------------------------------------------------------


def _tokenize(text: str) -> list[str]:
    """Split ``text`` into line tokens that keep their terminator.

    jsdiff splits on ``/(\\n|\\r\\n)/`` and glues each separator back onto its line, so a token
    ends with ``"\\n"`` or ``"\\r\\n"``; a lone ``"\\r"`` is not a separator. Splitting on
    ``"\\n"`` alone gives the same tokens (the ``"\\r"`` of a CRLF stays on its line either way).
    A final line without a terminator is its own token (``"x"`` differs from ``"x\\n"``); an
    empty string has no tokens.
    """
    if not text:
        return []
    # ``str.splitlines`` (fast) also splits at "\r", "\v", "\f", "\x1c".."\x1e", "\x85",
    # "\u2028" and "\u2029"; each "\n" (alone or in "\r\n") ends exactly one of its lines, so
    # when it returns no more lines than there are "\n"s (plus an unterminated last line) it
    # split at "\n" only and its lines are the tokens
    lines = text.splitlines(True)
    if len(lines) == text.count("\n") + (not text.endswith("\n")):
        return lines
    parts = text.split("\n")
    tokens = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        tokens.append(parts[-1])
    return tokens


# --------------------------------------------------------------------------------------------
# Myers diff (jsdiff ``diff/base.js`` ``diffWithOptionsObj``)
# --------------------------------------------------------------------------------------------


class _BudgetExceeded(Exception):
    """Internal: the Myers search went over its budget (never escapes this module)."""


def _snake(old: list[str], new: list[str], i: int, j: int) -> int:
    """Length of the run of equal tokens ``old[i:] == new[j:]`` starting at ``i`` / ``j``.

    Same result as jsdiff's token-by-token ``extractCommon`` loop; long runs are compared in
    growing slices so a 200k-line common region costs a few C-level comparisons.
    """
    old_len = len(old)
    new_len = len(new)
    if i >= old_len or j >= new_len or old[i] != new[j]:
        return 0
    start = i
    i += 1
    j += 1
    step = 8
    while True:
        size = min(step, old_len - i, new_len - j)
        if size <= 0:
            break
        if old[i : i + size] == new[j : j + size]:
            i += size
            j += size
            if step < 65_536:
                step *= 2
        else:
            # The mismatch lies inside this chunk, so this loop stops before its end.
            while old[i] == new[j]:
                i += 1
                j += 1
            break
    return i - start


# A draft component in jsdiff's reversed linked list: (count, added, removed, previous).
_Draft = tuple[int, bool, bool, Any]


def _build_values(last: _Draft | None, old: list[str], new: list[str]) -> list[_Component]:
    """Turn the reversed draft list into ordered components with their tokens (``buildValues``)."""
    drafts: list[_Draft] = []
    while last is not None:
        drafts.append(last)
        last = last[3]
    drafts.reverse()
    components: list[_Component] = []
    old_pos = 0
    new_pos = 0
    for count, added, removed, _prev in drafts:
        if not removed:
            components.append((added, False, new[new_pos : new_pos + count]))
            new_pos += count
            if not added:
                old_pos += count
        else:
            components.append((False, True, old[old_pos : old_pos + count]))
            old_pos += count
    return components


def _myers(
    old: list[str], new: list[str], *, max_edit_length: int, max_work: int
) -> list[_Component]:
    """jsdiff's greedy forward Myers search, tie-breaks included.

    On each diagonal ``k`` the path is extended from the removal path (diagonal ``k - 1``)
    unless it cannot remove, or it can add and the removal path's ``oldPos`` is strictly behind
    the addition path's: ``!canRemove || (canAdd && removePath.oldPos < addPath.oldPos)``. This
    is what makes jsdiff list a replaced block's removals before its additions.

    :raises _BudgetExceeded: if the edit distance exceeds ``max_edit_length`` or the step count
        exceeds ``max_work``.
    """
    old_len = len(old)
    new_len = len(new)

    # Seed: editLength = 0, the common prefix.
    common = _snake(old, new, 0, 0)
    seed_last: _Draft | None = (common, False, False, None) if common else None
    seed_old_pos = common - 1
    new_pos = common - 1
    if seed_old_pos + 1 >= old_len and new_pos + 1 >= new_len:
        return _build_values(seed_last, old, new)

    # best[offset + k] holds the furthest-reaching path (oldPos, lastDraft) on diagonal k.
    # Diagonals stay within -newLen..oldLen and within -D..D; one spare slot on each side
    # for the k - 1 / k + 1 reads, and one more for safety.
    low = min(new_len, max_edit_length) + 2
    high = min(old_len, max_edit_length) + 2
    offset = low
    best: list[tuple[int, _Draft | None] | None] = [None] * (low + high + 1)
    best[offset] = (seed_old_pos, seed_last)

    # jsdiff's edge optimisation (see its comment): once a path reaches the last old token on
    # diagonal k, diagonals > k are pointless; once it reaches the last new token, diagonals < k.
    # The seed may already sit on an edge (one side empty, or a prefix of the other).
    min_diagonal = -(new_len + 2)
    max_diagonal = old_len + 2
    if seed_old_pos + 1 >= old_len:
        max_diagonal = -1
    if new_pos + 1 >= new_len:
        min_diagonal = 1

    work = 0
    edit_length = 1
    while edit_length <= max_edit_length:
        k = max(min_diagonal, -edit_length)
        # The bound is re-read on every step: max_diagonal can shrink inside the round.
        while k <= min(max_diagonal, edit_length):
            work += 1
            remove_path = best[offset + k - 1]
            add_path = best[offset + k + 1]
            if remove_path is not None:
                best[offset + k - 1] = None  # nobody else reads it

            can_add = False
            if add_path is not None:
                add_new_pos = add_path[0] - k  # newPos after an insertion
                can_add = 0 <= add_new_pos < new_len
            can_remove = remove_path is not None and remove_path[0] + 1 < old_len
            if not can_add and not can_remove:
                best[offset + k] = None  # a terminal path: prune
                k += 2
                continue

            if not can_remove or (can_add and remove_path[0] < add_path[0]):  # type: ignore[index]
                assert add_path is not None
                old_pos, last = add_path
                if last is not None and last[1] and not last[2]:
                    last = (last[0] + 1, True, False, last[3])
                else:
                    last = (1, True, False, last)
            else:
                assert remove_path is not None
                old_pos, last = remove_path
                old_pos += 1
                if last is not None and last[2] and not last[1]:
                    last = (last[0] + 1, False, True, last[3])
                else:
                    last = (1, False, True, last)

            new_pos = old_pos - k
            run = _snake(old, new, old_pos + 1, new_pos + 1)
            if run:
                old_pos += run
                new_pos += run
                last = (run, False, False, last)
                work += 1 + run // 1024

            if old_pos + 1 >= old_len and new_pos + 1 >= new_len:
                return _build_values(last, old, new)
            best[offset + k] = (old_pos, last)
            if old_pos + 1 >= old_len:
                max_diagonal = min(max_diagonal, k - 1)
            if new_pos + 1 >= new_len:
                min_diagonal = max(min_diagonal, k + 1)
            k += 2
        if work > max_work:
            raise _BudgetExceeded
        edit_length += 1
    raise _BudgetExceeded


def _fallback_components(old: list[str], new: list[str]) -> list[_Component]:
    """One change block from the first to the last differing token (bounded-cost fallback)."""
    prefix = _snake(old, new, 0, 0)
    limit = min(len(old), len(new)) - prefix
    suffix = 0
    while suffix < limit and old[len(old) - 1 - suffix] == new[len(new) - 1 - suffix]:
        suffix += 1
    components: list[_Component] = []
    if prefix:
        components.append((False, False, old[:prefix]))
    if len(old) - suffix > prefix:
        components.append((False, True, old[prefix : len(old) - suffix]))
    if len(new) - suffix > prefix:
        components.append((True, False, new[prefix : len(new) - suffix]))
    if suffix:
        components.append((False, False, old[len(old) - suffix :]))
    return components


def _diff_lines(
    before: str,
    after: str,
    *,
    max_edit_length: int | None = None,
    max_work: int | None = None,
    trim_suffix: bool = True,
    changed: tuple[int, int] | None = None,
) -> list[_Component]:
    """jsdiff ``diffLines(before, after)``, or the one-block fallback past the budget.

    The budgets default to the module's ``_MAX_EDIT_LENGTH`` / ``_MAX_WORK``, read at call time.
    ``trim_suffix=False`` searches through the common suffix too (what the tests compare with).
    ``changed``: the span of ``before`` an edit replaced (``EditOutcome.changed``), where the
    common prefix and suffix searches start once its two sides are checked equal.
    """
    if max_edit_length is None:
        max_edit_length = _MAX_EDIT_LENGTH
    if max_work is None:
        max_work = _MAX_WORK
    # The lines both texts share at the start are found on characters and not tokenized: jsdiff's
    # first snake consumes exactly them, and the search past them only ever looks further on (its
    # positions merely shift), so diffing the rest and putting the shared lines in front as one
    # equal run gives the same components, budget included.
    known_prefix, known_suffix = (changed[0], len(before) - changed[1]) if changed is not None else (0, 0)
    start = before.rfind("\n", 0, _common_prefix_length(before, after, known_prefix)) + 1
    end_before, end_after = len(before), len(after)
    if trim_suffix:
        end_before, end_after = _suffix_start(before, after, start, known_suffix)
    old = _tokenize(before[start:end_before])
    new = _tokenize(after[start:end_after])
    prefix = _snake(old, new, 0, 0)
    if set(new[prefix:]).isdisjoint(old[prefix:]):
        # Past the common prefix no line can match: jsdiff's path is the prefix, then every old
        # line removed, then every new line added -- exactly the one-block components, without
        # the O(N * M) search (a whole-file rewrite with unrelated content stays exact and fast).
        components = _fallback_components(old, new)
    else:
        try:
            components = _myers(old, new, max_edit_length=max_edit_length, max_work=max_work)
        except _BudgetExceeded:
            components = _fallback_components(old, new)
    if start:
        components = _join_equal(_Run(before[:start]), components, at_end=False)
    if end_before < len(before):
        components = _join_equal(_Run(before[end_before:]), components, at_end=True)
    return components


def _join_equal(run: _Run, components: list[_Component], *, at_end: bool) -> list[_Component]:
    """``components`` with the equal ``run`` in front (or at the end), merged into an equal
    component already there, as jsdiff's single equal run would be."""
    edge = -1 if at_end else 0
    if components and not components[edge][0] and not components[edge][1]:
        lines = "".join(components[edge][2])
        merged = _Run(lines + run.text if at_end else run.text + lines)
        return [*components[:-1], (False, False, merged)] if at_end else [(False, False, merged), *components[1:]]
    return [*components, (False, False, run)] if at_end else [(False, False, run), *components]


def _suffix_start(before: str, after: str, start: int, known: int = 0) -> tuple[int, int]:
    """Where the common suffix that may be set aside starts in ``before`` and in ``after``
    (their lengths when there is none): whole lines after ``start``, and its first line
    occurring as no line of either changed middle (then no minimal path can slide a change
    into it, and jsdiff's search ends with exactly this snake). ``known``: as for
    ``_common_suffix_length``."""
    shared = _common_suffix_length(before, after, len(before) - start, len(after) - start, known)
    if not shared:
        return len(before), len(after)
    at_before, at_after = len(before) - shared, len(after) - shared
    if not ((at_before == start or before[at_before - 1] == "\n") and (at_after == start or after[at_after - 1] == "\n")):
        cut = before.find("\n", at_before) + 1  # the next line start (inside the shared text)
        if cut == 0 or cut == len(before):
            return len(before), len(after)
        at_after += cut - at_before
        at_before = cut
    line_end = before.find("\n", at_before) + 1
    first = before[at_before:line_end] if line_end else before[at_before:]
    if first.endswith("\n") and ("\n" + first in "\n" + before[start:at_before]
                                  or "\n" + first in "\n" + after[start:at_after]):
        return len(before), len(after)
    return at_before, at_after


_NEAR_STEP = 16
"""first block of a search that starts at a known shared run: the difference is near"""


def _common_suffix_length(a: str, b: str, limit_a: int, limit_b: int, known: int = 0) -> int:
    """Length of the longest common suffix of ``a`` and ``b``, at most ``limit_a`` /
    ``limit_b`` characters. ``known``: a length the caller believes shared (an edit's span);
    checked with one comparison, then the search starts there (ignored when wrong)."""
    la, lb = len(a), len(b)
    n = min(limit_a, limit_b)
    if 0 < known <= n and a[la - known :] == b[lb - known :]:
        ea, eb = la - known, lb - known
        return known + _common_run(n - known, lambda i, j: a[ea - j : ea - i] == b[eb - j : eb - i], _NEAR_STEP)
    return _common_run(n, lambda i, j: a[la - j : la - i] == b[lb - j : lb - i])


def _common_prefix_length(a: str, b: str, known: int = 0) -> int:
    """Length of the longest common prefix of ``a`` and ``b``. ``known``: as for
    ``_common_suffix_length``."""
    n = min(len(a), len(b))
    if 0 < known <= n and a[:known] == b[:known]:
        return known + _common_run(n - known, lambda i, j: a[known + i : known + j] == b[known + i : known + j],
                                   _NEAR_STEP)
    return _common_run(n, lambda i, j: a[i:j] == b[i:j])


def _common_run(n: int, same: Callable[[int, int], bool], step: int = 1024) -> int:
    """The largest ``k <= n`` with ``same(0, k)``, where ``same(i, j)`` compares characters
    ``i`` to ``j`` of the run (``same(0, j)`` given ``same(0, i)``): C-speed slice
    comparisons in growing blocks (the first ``step`` long), then a bisection inside the
    first differing block."""
    i = 0
    while i < n:
        j = min(i + step, n)
        if not same(i, j):
            break
        i = j
        if step < 1 << 20:
            step *= 2
    else:
        return n
    hi = j
    while hi - i > 1:
        mid = (i + hi) // 2
        if same(i, mid):
            i = mid
        else:
            hi = mid
    return i


# --------------------------------------------------------------------------------------------
# Hunks (jsdiff ``patch/create.js`` ``structuredPatch`` -> ``diffLinesResultToPatch``)
# --------------------------------------------------------------------------------------------


def _structured_hunks(components: list[_Component], context: int) -> list[dict[str, Any]]:
    """Group components into unified-diff hunks exactly as jsdiff's ``structuredPatch`` does.

    Each hunk is ``{"oldStart", "oldLines", "newStart", "newLines", "lines"}`` (1-based starts);
    ``lines`` carry a ``" "``/``"-"``/``"+"`` prefix, lose their trailing ``"\\n"``, and a line
    without one is followed by a ``"\\ No newline at end of file"`` marker.
    """
    comps = [*components, (False, False, [])]  # sentinel, as jsdiff appends one
    count = len(comps)
    hunks: list[dict[str, Any]] = []
    old_range_start = 0
    new_range_start = 0
    cur_range: list[str] = []
    old_line = 1
    new_line = 1
    for i, (added, removed, lines) in enumerate(comps):
        if added or removed:
            if not old_range_start:
                old_range_start = old_line
                new_range_start = new_line
                if i > 0:
                    prev_lines = comps[i - 1][2]
                    cur_range = [" " + line for line in prev_lines[-context:]] if context > 0 else []
                    old_range_start -= len(cur_range)
                    new_range_start -= len(cur_range)
            prefix = "+" if added else "-"
            cur_range.extend(prefix + line for line in lines)
            if added:
                new_line += len(lines)
            else:
                old_line += len(lines)
        else:
            if old_range_start:
                if i < count - 2 and len(lines) <= context * 2:
                    # Overlapping contexts: join with the next change block.
                    cur_range.extend(" " + line for line in lines)
                else:
                    head = lines[:context]  # a run's first lines, without counting the run
                    context_size = len(head)
                    cur_range.extend(" " + line for line in head)
                    hunks.append(
                        {
                            "oldStart": old_range_start,
                            "oldLines": old_line - old_range_start + context_size,
                            "newStart": new_range_start,
                            "newLines": new_line - new_range_start + context_size,
                            "lines": cur_range,
                        }
                    )
                    old_range_start = 0
                    new_range_start = 0
                    cur_range = []
            if i < count - 2:  # (after the last component no line number is read)
                old_line += len(lines)
                new_line += len(lines)

    for hunk in hunks:
        out: list[str] = []
        for line in hunk["lines"]:
            if line.endswith("\n"):
                out.append(line[:-1])
            else:
                out.append(line)
                out.append(_NO_NEWLINE_MARKER)
        hunk["lines"] = out
    return hunks


# --------------------------------------------------------------------------------------------
# Public API (reference ``computeHunkDiffs`` / ``diffsFromMeta``)
# --------------------------------------------------------------------------------------------


def compute_hunk_diffs(
    path: str, before: str, after: str, *, context: int = DIFF_CONTEXT, changed: tuple[int, int] | None = None
) -> list[dict[str, Any]]:
    """Compute one ``FileDiff`` per unified-diff hunk of ``before`` -> ``after`` (SPEC §4.9).

    Behaviour of the reference ``computeHunkDiffs`` (jsdiff v9 ``structuredPatch`` with
    ``{context: 3}``): lines are compared with their terminator (a missing final newline is a
    change); each change block gets up to ``context`` unchanged lines before and after; blocks
    separated by at most ``2 * context`` unchanged lines share one hunk. For each hunk, the
    ``"\\ No newline at end of file"`` markers are dropped, every line loses its one-char prefix
    and trailing newline (a CRLF line keeps its ``"\\r"``, as in jsdiff's output), ``-`` and
    context lines form the old side, ``+`` and context lines the new side.

    Cost bound (not in the reference): when the Myers search exceeds its budget (edit distance
    above ``_MAX_EDIT_LENGTH`` lines, or ``_MAX_WORK`` steps) the result is a single hunk from the
    first to the last differing line, with ``context`` lines around it, instead of jsdiff's
    finer-grained hunks. A small change in a large file is always diffed exactly, and fast.

    :param path: the model's raw ``file_path``, copied into every entry unchanged
    :param before: prior content (LF-normalized by the provider)
    :param after: new content (LF-normalized by the provider)
    :param context: unchanged lines around each change block (``>= 0``; default 3)
    :param changed: ``(start, end)``: the edit replaced ``before[start:end]`` (``EditOutcome.changed``);
        a hint where to look, checked before use: the result is the same with or without it
    :returns: ``[{"path": path, "oldText": str | None, "newText": str}, ...]`` in file order;
        ``oldText`` is ``None`` when the hunk has no old lines (pure insertion into an empty
        file), ``newText`` may be ``""`` (whole-file deletion); ``[]`` for identical inputs
    :raises ValueError: if ``context`` is negative
    """
    if context < 0:
        raise ValueError("context must be >= 0")
    if before == after:
        return []
    diffs: list[dict[str, Any]] = []
    for hunk in _structured_hunks(_diff_lines(before, after, changed=changed), context):
        old_side: list[str] = []
        new_side: list[str] = []
        for line in hunk["lines"]:
            tag = line[:1]
            if tag == " ":
                old_side.append(line[1:])
                new_side.append(line[1:])
            elif tag == "-":
                old_side.append(line[1:])
            elif tag == "+":
                new_side.append(line[1:])
            # "\" : the no-newline marker, dropped
        diffs.append(
            {
                "path": path,
                "oldText": "\n".join(old_side) if old_side else None,
                "newText": "\n".join(new_side),
            }
        )
    return diffs


def _is_file_diff(entry: object) -> bool:
    if not isinstance(entry, Mapping):
        return False
    if not isinstance(entry.get("path"), str):
        return False
    if "oldText" not in entry:
        return False
    old_text = entry["oldText"]
    if old_text is not None and not isinstance(old_text, str):
        return False
    return isinstance(entry.get("newText"), str)


def diffs_from_meta(meta: object) -> list[dict[str, Any]] | None:
    """Narrow a tool result's ``meta`` to its ``FileDiff`` list, defensively (SPEC §4.9).

    Used on live and on replayed (JSON) results, so anything may arrive. Mirrors the reference
    ``diffsFromMeta``: ``meta`` must be a mapping (not ``None``, not a list) whose ``"diffs"`` is a
    non-empty ``list`` in which every element is a mapping with ``"path": str``,
    ``"oldText": str | None`` (the key must be present) and ``"newText": str``. Extra keys are
    allowed and kept.

    :param meta: the ``meta`` of a tool result, of any type
    :returns: the ``diffs`` list itself (not a copy) when well formed, else ``None``; never raises
    """
    try:
        if not isinstance(meta, Mapping):
            return None
        diffs = meta.get("diffs")
        if not isinstance(diffs, list) or not diffs:
            return None
        if not all(_is_file_diff(entry) for entry in diffs):
            return None
        return diffs
    except Exception:  # a hostile Mapping; narrowing must never raise
        return None


DIFF_META_MAX_CHARS = 32 * 1024 * 1024
"""largest diff basis (characters per side) for which hunk metadata is computed"""


def bounded_diffs(file_path: str, before: str | None, after: str | None, *,
                  changed: tuple[int, int] | None = None) -> list[dict[str, Any]]:
    """§4.9 hunks of ``before`` → ``after``; none when either side is missing or exceeds
    ``DIFF_META_MAX_CHARS`` (the file tools and the editing faces: the bound on diff metadata).
    ``changed``: as for ``compute_hunk_diffs``."""
    if before is None or after is None or len(before) > DIFF_META_MAX_CHARS or len(after) > DIFF_META_MAX_CHARS:
        return []
    return compute_hunk_diffs(file_path, before, after, changed=changed)
