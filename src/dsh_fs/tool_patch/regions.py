"""The UI diffs of an applied patch, computed only where its hunks changed the file
(REFERENCE-SPEC §4.9, the ``meta.diffs`` of ``apply_patch``). Pure: no I/O.

``region_diffs`` gives the hunks ``compute_hunk_diffs(path, before, after)`` gives for the
whole file, diffing only the regions the plan's line edits touch. A region holding one edit
that replaces lines by lines none of which it removed (the usual hunk: a few changed lines in
the middle of a file) has one possible §4.9 hunk, built here directly; any other region is
diffed with ``bounded_diffs`` on its slice. Both give the same strings
(``tests/unit/tool_patch/test_patch_regions.py`` compares them with the slice-diffing for random files and
edits).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..patch import LineEdit
from ..tool_fs.diff import DIFF_CONTEXT, DIFF_META_MAX_CHARS, bounded_diffs

__all__ = ("region_diffs",)

_AROUND = DIFF_CONTEXT + 1
"""lines sliced on each side of a region: one more than the context, since a change of the
final line break changes the line before it"""


def region_diffs(path: str, before: str, after: str, edits: Sequence[LineEdit]) -> list[dict[str, Any]]:
    """``compute_hunk_diffs(path, before, after)`` computed on the regions the ``edits`` touch:
    each group of edits close enough to share a hunk (§4.9 merges changes at most
    ``2 * DIFF_CONTEXT`` unchanged lines apart), with ``DIFF_CONTEXT + 1`` lines around it —
    the same hunks, without diffing the unchanged rest of the file (a patch knows where it
    changed a file).

    :param path: copied into every entry (the display path of the file)
    :param before: / after: LF-normalized texts, ``after`` being ``before`` with ``edits``
        applied
    :param edits: ``(start, removed, inserted)`` in ``before.split("\\n")`` lines, ascending
        and not overlapping (``FileChange.edits``)
    :returns: ``[{"path", "oldText", "newText"}, ...]`` in file order (``[]`` when a side is
        over ``DIFF_META_MAX_CHARS``, as ``bounded_diffs``)
    """
    old, new = before.split("\n"), after.split("\n")
    direct = len(before) <= DIFF_META_MAX_CHARS and len(after) <= DIFF_META_MAX_CHARS
    out: list[dict[str, Any]] = []
    delta = 0  # new line index minus old line index before the current group
    i = 0
    while i < len(edits):
        j = i
        # groups that may share a hunk: merging too much is harmless (the slice's own diff splits
        # it again), too little is not — hence the slack for a changed final line break
        while j + 1 < len(edits) and edits[j + 1][0] - (edits[j][0] + edits[j][1]) <= 2 * DIFF_CONTEXT + 2:
            j += 1
        group = edits[i : j + 1]
        grown = sum(len(inserted) - removed for _, removed, inserted in group)
        lo = max(0, group[0][0] - _AROUND)
        hi = min(len(old), group[-1][0] + group[-1][1] + _AROUND)
        hunk = _replaced_lines(path, old, new, group[0], lo, hi, delta) if direct and len(group) == 1 else None
        if hunk is not None:
            out.append(hunk)
        else:
            out.extend(bounded_diffs(path, _slice(old, lo, hi), _slice(new, lo + delta, hi + delta + grown)))
        delta += grown
        i = j + 1
    return out


def _replaced_lines(path: str, old: list[str], new: list[str], edit: LineEdit, lo: int, hi: int,
                    delta: int) -> dict[str, Any] | None:
    """The one §4.9 hunk of a region ``old[lo:hi]`` holding the single ``edit``, when it is
    certain without a diff search, else ``None``.

    Certain when the edit removes lines ``R`` and inserts lines ``I``, both not empty, no line
    of ``I`` is a line of ``R``, the region ends before the last line (every line of both
    slices ends with a line break), the lines around the edit are the same on both sides, and
    the first line after it is a line of neither ``R`` nor ``I``. Then the slice diff (jsdiff's
    ``diffLines`` as ``tool_fs.diff`` ports it) sets the shared lines before and after aside,
    finds no line common to ``R`` and ``I`` and reports ``R`` removed then ``I`` added: one
    hunk of the last ``DIFF_CONTEXT`` lines before, ``R``, and the first ``DIFF_CONTEXT``
    lines after (old side), the same with ``I`` (new side)."""
    start, removed, inserted = edit
    added = len(inserted)
    if not removed or not added or hi >= len(old):
        return None
    end = start + removed
    new_start, new_end = start + delta, start + delta + added
    gone, came = old[start:end], new[new_start:new_end]
    head, tail = old[max(lo, start - DIFF_CONTEXT) : start], old[end : end + DIFF_CONTEXT]
    if (new[lo + delta : new_start] != old[lo:start] or new[new_end : new_end + hi - end] != old[end:hi]
            or not set(gone).isdisjoint(came)):
        return None
    first_after = old[end]
    if first_after in gone or first_after in came:
        return None
    return {"path": path, "oldText": "\n".join(head + gone + tail), "newText": "\n".join(head + came + tail)}


def _slice(lines: list[str], lo: int, hi: int) -> str:
    """Lines ``lo``..``hi`` (exclusive) of a text split at ``"\\n"``, with their line breaks."""
    return "\n".join(lines[lo:hi]) + ("\n" if hi < len(lines) else "")
