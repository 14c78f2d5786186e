"""``tool_patch.regions.region_diffs``: the UI diffs of an applied patch built directly for a
region of one replacing edit are the strings diffing the region's slice gives (the function as
it was before the direct hunk, kept here as the oracle), for any file and any edits —
repeated lines, blank lines, lone CRs, edits at either end, touching edits."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_fs.tool_fs.diff import DIFF_CONTEXT, bounded_diffs, compute_hunk_diffs
from dsh_fs.tool_patch import regions
from dsh_fs.tool_patch.regions import region_diffs

Edit = tuple[int, int, list[str]]


def sliced_region_diffs(path: str, before: str, after: str, edits: list[Edit]) -> list[dict[str, Any]]:
    """The oracle: ``region_diffs`` before the direct hunk (every region diffed as a slice)."""
    old, new = before.split("\n"), after.split("\n")
    out: list[dict[str, Any]] = []
    delta = 0
    i = 0
    while i < len(edits):
        j = i
        while j + 1 < len(edits) and edits[j + 1][0] - (edits[j][0] + edits[j][1]) <= 2 * DIFF_CONTEXT + 2:
            j += 1
        group = edits[i : j + 1]
        grown = sum(len(inserted) - removed for _, removed, inserted in group)
        lo = max(0, group[0][0] - DIFF_CONTEXT - 1)
        hi = min(len(old), group[-1][0] + group[-1][1] + DIFF_CONTEXT + 1)
        out.extend(bounded_diffs(path, _slice(old, lo, hi), _slice(new, lo + delta, hi + delta + grown)))
        delta += grown
        i = j + 1
    return out


def _slice(lines: list[str], lo: int, hi: int) -> str:
    return "\n".join(lines[lo:hi]) + ("\n" if hi < len(lines) else "")


def _apply(lines: list[str], edits: list[Edit]) -> list[str]:
    out = list(lines)
    for start, removed, inserted in reversed(edits):
        out[start : start + removed] = inserted
    return out


_UNIQUE = st.integers(0, 400).map(lambda n: f"u{n}")
_LINE = st.one_of(st.sampled_from(["a", "b", "c", "", "  a", "x\r", "d"]), _UNIQUE, _UNIQUE)
"""mostly distinct lines (the usual file), some repeated, blank or with a lone CR"""


@st.composite
def files_and_edits(draw: st.DrawFn) -> tuple[list[str], list[Edit]]:
    lines = draw(st.lists(_LINE, min_size=1, max_size=60)) + draw(st.lists(_LINE, min_size=0, max_size=30))
    if draw(st.booleans()):
        lines.append("")  # a final line break
    edits: list[Edit] = []
    at = draw(st.integers(0, 12))
    while at <= len(lines) and len(edits) < 6:
        kind = draw(st.sampled_from(["replace", "replace", "replace", "insert", "remove"]))
        most = min(3, len(lines) - at)
        removed = 0 if kind == "insert" or not most else draw(st.integers(1, most))
        inserted = draw(st.lists(_LINE, min_size=1, max_size=3)) if kind != "remove" or not removed else []
        edits.append((at, removed, inserted))
        at += removed + draw(st.integers(0, 16))
    return lines, edits


@settings(max_examples=2500, deadline=None)
@given(files_and_edits())
def test_the_direct_hunk_is_the_slice_diff(case: tuple[list[str], list[Edit]]) -> None:
    lines, edits = case
    before, after = "\n".join(lines), "\n".join(_apply(lines, edits))
    assert region_diffs("p", before, after, edits) == sliced_region_diffs("p", before, after, edits)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 10_000))
def test_distinct_lines_give_the_whole_file_diff(seed: int) -> None:
    """Distinct lines (one alignment): the regions' hunks are the whole file's."""
    import random

    rng = random.Random(seed)
    lines = [f"line {i}" for i in range(rng.randint(1, 80))] + ([""] if rng.random() < 0.8 else [])
    edits: list[Edit] = []
    at = rng.randint(0, 5)
    while at < len(lines) and len(edits) < 8:
        removed = rng.randint(0, min(3, len(lines) - at))
        edits.append((at, removed, [f"new {at} {k}" for k in range(rng.randint(0 if removed else 1, 3))]))
        at += removed + rng.randint(0, 14)
    before, after = "\n".join(lines), "\n".join(_apply(lines, edits))
    assert region_diffs("p", before, after, edits) == compute_hunk_diffs("p", before, after)


def test_a_replaced_line_mid_file_is_built_without_a_diff(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bench's shape (one changed line per hunk, far apart) never reaches the slice diff."""
    lines = [f"v{i} = compute(a)" for i in range(100)] + [""]
    edits: list[Edit] = [(k, 1, [lines[k].replace("compute", "recompute")]) for k in (5, 50, 90)]
    before, after = "\n".join(lines), "\n".join(_apply(lines, edits))
    expected = compute_hunk_diffs("p", before, after)
    monkeypatch.setattr(regions, "bounded_diffs", lambda *a, **k: pytest.fail("diffed a slice"))
    assert region_diffs("p", before, after, edits) == expected
    assert expected[0] == {"path": "p", "oldText": "v2 = compute(a)\nv3 = compute(a)\nv4 = compute(a)\n"
                                                   "v5 = compute(a)\nv6 = compute(a)\nv7 = compute(a)\nv8 = compute(a)",
                           "newText": "v2 = compute(a)\nv3 = compute(a)\nv4 = compute(a)\n"
                                      "v5 = recompute(a)\nv6 = compute(a)\nv7 = compute(a)\nv8 = compute(a)"}


@pytest.mark.parametrize("edit", [(3, 1, ["a4"]), (3, 0, ["z"]), (3, 1, []), (9, 1, ["z"]), (3, 1, ["a3", "z"])])
def test_other_regions_are_diffed_as_slices(edit: Edit, monkeypatch: pytest.MonkeyPatch) -> None:
    """The line after the edit inserted, a pure insertion or removal, an edit reaching the last
    line, a removed line inserted again:
    the slice diff decides (the direct hunk is not certain there)."""
    lines = [f"a{i}" for i in range(10)] + [""]
    before, after = "\n".join(lines), "\n".join(_apply(lines, [edit]))
    calls: list[str] = []
    real = regions.bounded_diffs
    monkeypatch.setattr(regions, "bounded_diffs", lambda *a, **k: calls.append("x") or real(*a, **k))
    assert region_diffs("p", before, after, [edit]) == compute_hunk_diffs("p", before, after)
    assert calls == ["x"]


def test_a_side_over_the_diff_bound_gives_what_its_slice_gives(monkeypatch: pytest.MonkeyPatch) -> None:
    """A text over ``DIFF_META_MAX_CHARS`` is never built into a direct hunk: its region's
    slice may be over the bound too, and then the slice diff gives no hunk (bounded_diffs)."""
    from dsh_fs.tool_fs import diff

    lines = [f"a{i}" for i in range(12)] + [""]
    edits: list[Edit] = [(5, 1, ["z" * 60])]
    before, after = "\n".join(lines), "\n".join(_apply(lines, edits))
    assert len(before) <= 50 < len(after)
    monkeypatch.setattr(diff, "DIFF_META_MAX_CHARS", 50)
    monkeypatch.setattr(regions, "DIFF_META_MAX_CHARS", 50)
    assert region_diffs("p", before, after, edits) == sliced_region_diffs("p", before, after, edits) == []


def test_hunks_after_a_grown_or_shrunk_region_are_built_without_a_diff(monkeypatch: pytest.MonkeyPatch) -> None:
    """The direct hunk follows the shift of the lines after an edit that changed their count."""
    lines = [f"v{i} = compute(a)" for i in range(100)] + [""]
    edits: list[Edit] = [(5, 1, ["n1", "n2", "n3"]), (40, 3, ["n4"]), (70, 1, ["n5"]), (90, 2, ["n6", "n7"])]
    before, after = "\n".join(lines), "\n".join(_apply(lines, edits))
    expected = compute_hunk_diffs("p", before, after)
    monkeypatch.setattr(regions, "bounded_diffs", lambda *a, **k: pytest.fail("diffed a slice"))
    assert region_diffs("p", before, after, edits) == expected
    assert [d["newText"].split("\n")[3] for d in expected] == ["n1", "n4", "n5", "n6"]
