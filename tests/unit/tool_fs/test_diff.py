"""Unit tests for ``dsh_fs.tool_fs.diff`` (REFERENCE-SPEC §4.9, checklist §7.7).

Covers: the reference ``diff.spec.ts`` cases, hunk merging around the 2 x context threshold,
jsdiff's alignment on ambiguous inputs (expected values produced by jsdiff 9.0.0
``structuredPatch(..., {context: 3})``), the bounded-cost fallback, large inputs, the defensive
``diffs_from_meta`` narrowing, and property tests (the hunks rebuild ``after`` from ``before``,
the edit script is minimal, the public ``FileDiff`` sides match the hunks).

Not covered here: when the tools attach diffs to results (tool tests) and UI rendering.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_fs.tool_fs import diff as diff_mod
from dsh_fs.tool_fs.diff import DIFF_CONTEXT, compute_hunk_diffs, diffs_from_meta


def lines(*items: str) -> str:
    return "".join(item + "\n" for item in items)


def numbered(count: int, prefix: str = "line") -> list[str]:
    return [f"{prefix}{i}" for i in range(1, count + 1)]


def pairs(diffs: list[dict[str, Any]]) -> list[tuple[str | None, str]]:
    return [(d["oldText"], d["newText"]) for d in diffs]


# ------------------------------------------------------------------------------------------
# computeHunkDiffs: the reference cases (§7.7)
# ------------------------------------------------------------------------------------------


def test_single_line_change_yields_one_hunk_with_context_on_both_sides() -> None:
    before_lines = numbered(8)
    after_lines = list(before_lines)
    after_lines[3] = "CHANGED"
    result = compute_hunk_diffs("a.txt", lines(*before_lines), lines(*after_lines))
    assert result == [
        {
            "path": "a.txt",
            "oldText": "line1\nline2\nline3\nline4\nline5\nline6\nline7",
            "newText": "line1\nline2\nline3\nCHANGED\nline5\nline6\nline7",
        }
    ]


def test_scattered_replace_all_yields_one_file_diff_per_hunk() -> None:
    before_lines = numbered(20)
    after_lines = list(before_lines)
    after_lines[2] = "X3"
    after_lines[15] = "X16"
    result = compute_hunk_diffs("f.txt", lines(*before_lines), lines(*after_lines))
    assert pairs(result) == [
        (
            "line1\nline2\nline3\nline4\nline5\nline6",
            "line1\nline2\nX3\nline4\nline5\nline6",
        ),
        (
            "line13\nline14\nline15\nline16\nline17\nline18\nline19",
            "line13\nline14\nline15\nX16\nline17\nline18\nline19",
        ),
    ]
    assert all(d["path"] == "f.txt" for d in result)


def test_identical_before_and_after_yields_no_hunks() -> None:
    text = lines(*numbered(5))
    assert compute_hunk_diffs("a", text, text) == []
    assert compute_hunk_diffs("a", "", "") == []
    assert compute_hunk_diffs("a", "no newline", "no newline") == []


def test_pure_insertion_into_empty_content_reports_old_text_none() -> None:
    assert compute_hunk_diffs("new.txt", "", "brand new\n") == [
        {"path": "new.txt", "oldText": None, "newText": "brand new"}
    ]


def test_pure_deletion_of_the_whole_file_reports_empty_new_text() -> None:
    assert compute_hunk_diffs("old.txt", "gone\n", "") == [
        {"path": "old.txt", "oldText": "gone", "newText": ""}
    ]


def test_drops_the_no_newline_marker_from_a_no_trailing_newline_change() -> None:
    assert compute_hunk_diffs("x", "x", "y") == [{"path": "x", "oldText": "x", "newText": "y"}]


def test_uses_three_context_lines_seven_per_side_starting_at_line7() -> None:
    assert DIFF_CONTEXT == 3
    before_lines = numbered(20)
    after_lines = list(before_lines)
    after_lines[9] = "CHANGED"
    [hunk] = compute_hunk_diffs("f", lines(*before_lines), lines(*after_lines))
    old_side = hunk["oldText"].split("\n")
    new_side = hunk["newText"].split("\n")
    assert old_side == [f"line{i}" for i in range(7, 14)]
    assert new_side == ["line7", "line8", "line9", "CHANGED", "line11", "line12", "line13"]


# ------------------------------------------------------------------------------------------
# computeHunkDiffs: final newline, CR handling, path
# ------------------------------------------------------------------------------------------


def test_appending_a_line_after_a_last_line_without_newline() -> None:
    # "second" (no newline) and "second\n" are distinct tokens: the last line is replaced.
    assert pairs(compute_hunk_diffs("f", "first\nsecond", "first\nsecond\nthird")) == [
        ("first\nsecond", "first\nsecond\nthird")
    ]


def test_adding_only_the_final_newline_is_a_change_with_equal_looking_sides() -> None:
    assert pairs(compute_hunk_diffs("f", "first\nsecond\nthird", "first\nsecond\nthird\n")) == [
        ("first\nsecond\nthird", "first\nsecond\nthird")
    ]


def test_removing_the_final_newline_is_a_change() -> None:
    assert pairs(compute_hunk_diffs("f", "x\n", "x")) == [("x", "x")]


def test_crlf_lines_keep_their_cr_like_jsdiff_output() -> None:
    # jsdiff strips only the "\n" of each hunk line; fs inputs are LF-normalized anyway.
    assert pairs(compute_hunk_diffs("f", "a\r\nb\r\n", "a\r\nc\r\n")) == [("a\r\nb\r", "a\r\nc\r")]


def test_a_lone_cr_is_not_a_line_separator() -> None:
    assert pairs(compute_hunk_diffs("f", "a\rb\n", "a\rc\n")) == [("a\rb", "a\rc")]


def test_path_is_passed_through_unchanged() -> None:
    [entry] = compute_hunk_diffs("../weird path/ü.txt", "a\n", "b\n")
    assert entry["path"] == "../weird path/ü.txt"


def test_result_is_json_shaped() -> None:
    [entry] = compute_hunk_diffs("p", "a\n", "b\n")
    assert set(entry) == {"path", "oldText", "newText"}
    assert type(entry) is dict


# ------------------------------------------------------------------------------------------
# Hunk merging (2 x context) and the context parameter
# ------------------------------------------------------------------------------------------


def _two_changes(gap: int) -> tuple[str, str]:
    before_lines = numbered(10 + gap + 10)
    after_lines = list(before_lines)
    after_lines[9] = "A"
    after_lines[10 + gap] = "B"
    return lines(*before_lines), lines(*after_lines)


def test_changes_separated_by_six_unchanged_lines_merge_into_one_hunk() -> None:
    before, after = _two_changes(6)
    [hunk] = compute_hunk_diffs("f", before, after)
    assert hunk["oldText"].split("\n") == [f"line{i}" for i in range(7, 21)]


def test_changes_separated_by_seven_unchanged_lines_split_into_two_hunks() -> None:
    before, after = _two_changes(7)
    first, second = compute_hunk_diffs("f", before, after)
    assert first["oldText"].split("\n") == [f"line{i}" for i in range(7, 14)]
    assert second["oldText"].split("\n") == [f"line{i}" for i in range(15, 22)]


def test_change_at_file_edges_gets_truncated_context() -> None:
    before_lines = numbered(10)
    after_lines = ["FIRST", *before_lines[1:-1], "LAST"]
    first, last = compute_hunk_diffs("f", lines(*before_lines), lines(*after_lines))
    assert first == {"path": "f", "oldText": "line1\nline2\nline3\nline4", "newText": "FIRST\nline2\nline3\nline4"}
    assert last == {"path": "f", "oldText": "line7\nline8\nline9\nline10", "newText": "line7\nline8\nline9\nLAST"}


def test_context_parameter() -> None:
    before_lines = numbered(9)
    after_lines = list(before_lines)
    after_lines[4] = "MID"
    before, after = lines(*before_lines), lines(*after_lines)
    assert pairs(compute_hunk_diffs("f", before, after, context=0)) == [("line5", "MID")]
    assert pairs(compute_hunk_diffs("f", before, after, context=1)) == [
        ("line4\nline5\nline6", "line4\nMID\nline6")
    ]
    with pytest.raises(ValueError):
        compute_hunk_diffs("f", before, after, context=-1)


# ------------------------------------------------------------------------------------------
# jsdiff alignment on ambiguous inputs (expected values from jsdiff 9.0.0; difflib differs)
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        # The insertion lands after the common prefix (greedy forward Myers), not at the top.
        (lines("b", "a", "a", "a"), lines("b", "b", "a", "a", "a"), [("b\na\na\na", "b\nb\na\na\na")]),
        (lines("a", "b", "b", "b"), lines("a", "c", "b", "a", "b", "b", "b"), [("a\nb\nb\nb", "a\nc\nb\na\nb\nb\nb")]),
        # A line appended to a run of equal lines is reported at the end of the run.
        (lines("x", *["a"] * 10), lines("x", *["a"] * 11), [("a\na\na", "a\na\na\na")]),
        (
            lines(*"abbbbcbcabaccabcaaca"),
            lines(*"abbbcbcabaccacaaa"),
            [
                ("b\nb\nb\nb\nc\nb\nc", "b\nb\nb\nc\nb\nc"),
                ("c\nc\na\nb\nc\na\na\nc\na", "c\nc\na\nc\na\na\na"),
            ],
        ),
    ],
)
def test_matches_jsdiff_on_ambiguous_alignments(
    before: str, after: str, expected: list[tuple[str | None, str]]
) -> None:
    assert pairs(compute_hunk_diffs("f", before, after)) == expected


def test_structured_hunks_match_jsdiff_line_order_removals_first() -> None:
    [hunk] = diff_mod._structured_hunks(diff_mod._diff_lines("a\nb\nc\n", "a\nx\nc\n"), 3)
    assert hunk == {
        "oldStart": 1,
        "oldLines": 3,
        "newStart": 1,
        "newLines": 3,
        "lines": [" a", "-b", "+x", " c"],
    }
    [hunk] = diff_mod._structured_hunks(diff_mod._diff_lines("x", "y"), 3)
    assert hunk["lines"] == [
        "-x",
        "\\ No newline at end of file",
        "+y",
        "\\ No newline at end of file",
    ]


# ------------------------------------------------------------------------------------------
# Cost bound: large inputs and the fallback
# ------------------------------------------------------------------------------------------


def _tokenized(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Every token list ``_tokenize`` returns from now on (what the search splits into lines)."""
    seen: list[list[str]] = []
    real = diff_mod._tokenize

    def spy(text: str) -> list[str]:
        seen.append(real(text))
        return seen[-1]

    monkeypatch.setattr(diff_mod, "_tokenize", spy)
    return seen


def test_one_change_in_a_200k_line_file_is_cheap_and_exact(monkeypatch: pytest.MonkeyPatch) -> None:
    """The cost is counted, not timed: of the 200,000 lines only the changed one of each side
    is split into lines for the search, and the context around it for the hunk (the shared
    start and end stay text)."""
    before_lines = [f"row {i}" for i in range(200_000)]
    after_lines = list(before_lines)
    after_lines[123_456] = "CHANGED"
    before, after = lines(*before_lines), lines(*after_lines)
    tokenized = _tokenized(monkeypatch)
    result = compute_hunk_diffs("big.txt", before, after)
    assert tokenized[:2] == [["row 123456\n"], ["CHANGED\n"]]
    assert sum(map(len, tokenized[2:])) == 2 * DIFF_CONTEXT
    assert pairs(result) == [
        (
            "\n".join(before_lines[123_453:123_460]),
            "\n".join(after_lines[123_453:123_460]),
        )
    ]


def test_a_whole_rewrite_with_unrelated_content_is_one_exact_hunk(monkeypatch: pytest.MonkeyPatch) -> None:
    """Built directly: the Myers search (O(N * D)) never runs when no line can match."""
    before_lines = [f"old {i}" for i in range(50_000)]
    after_lines = [f"new {i}" for i in range(40_000)]

    def no_search(*_: object, **__: object) -> None:
        raise AssertionError("the Myers search ran")

    monkeypatch.setattr(diff_mod, "_myers", no_search)
    result = compute_hunk_diffs("f", lines(*before_lines), lines(*after_lines))
    assert pairs(result) == [("\n".join(before_lines), "\n".join(after_lines))]


def test_many_scattered_changes_stay_bounded_in_work(monkeypatch: pytest.MonkeyPatch) -> None:
    """Edit distance far beyond the budget: the search gives up after its step budget (counted:
    one ``_snake`` per diagonal visit, the last round finished) and falls back instead of
    running O(N * D)."""
    before_lines = [f"l{i}" for i in range(30_000)]
    after_lines = [f"l{i}" if i % 5 else f"x{i}" for i in range(30_000)]
    snakes, gave_up = [0], []
    real_snake, real_myers = diff_mod._snake, diff_mod._myers

    def counted_snake(*args: Any) -> int:
        snakes[0] += 1
        return real_snake(*args)

    def watched_myers(*args: Any, **kw: Any) -> Any:
        try:
            return real_myers(*args, **kw)
        except diff_mod._BudgetExceeded:
            gave_up.append(snakes[0])
            raise

    monkeypatch.setattr(diff_mod, "_snake", counted_snake)
    monkeypatch.setattr(diff_mod, "_myers", watched_myers)
    result = compute_hunk_diffs("f", lines(*before_lines), lines(*after_lines))
    assert len(gave_up) == 1 and gave_up[0] <= diff_mod._MAX_WORK + 2 * diff_mod._MAX_EDIT_LENGTH + 2
    # One hunk from the first difference (line 1) to the last (3 lines before the end) + context.
    [hunk] = result
    assert hunk["oldText"] == "\n".join(before_lines[:29_999])
    assert hunk["newText"] == "\n".join(after_lines[:29_999])


def test_fallback_is_one_hunk_from_first_to_last_difference(monkeypatch: pytest.MonkeyPatch) -> None:
    before_lines = numbered(40)
    after_lines = list(before_lines)
    after_lines[4] = "FIVE"
    after_lines[29] = "THIRTY"
    before, after = lines(*before_lines), lines(*after_lines)
    assert len(compute_hunk_diffs("f", before, after)) == 2  # exact: two hunks

    monkeypatch.setattr(diff_mod, "_MAX_EDIT_LENGTH", 1)
    [hunk] = compute_hunk_diffs("f", before, after)
    assert hunk["oldText"] == "\n".join(before_lines[1:33])
    assert hunk["newText"] == "\n".join(after_lines[1:33])


def test_fallback_on_work_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(diff_mod, "_MAX_WORK", 0)
    before_lines = numbered(30)
    after_lines = before_lines[:10] + ["NEW"] + before_lines[10:20] + before_lines[21:]
    [hunk] = compute_hunk_diffs("f", lines(*before_lines), lines(*after_lines))
    assert hunk["oldText"] == "\n".join(before_lines[7:24])
    assert hunk["newText"] == "\n".join(after_lines[7:24])


def test_fallback_pure_insertion_keeps_old_text_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(diff_mod, "_MAX_EDIT_LENGTH", 0)
    assert pairs(compute_hunk_diffs("f", "", "a\nb\n")) == [(None, "a\nb")]


# ------------------------------------------------------------------------------------------
# Properties
# ------------------------------------------------------------------------------------------

_line_tokens = st.lists(st.sampled_from(["a", "b", "c", "", "a\r", "dd"]), max_size=30)


def _text(items: list[str], final_newline: bool) -> str:
    text = "\n".join(items)
    return text + "\n" if items and final_newline else text


def _lcs(a: list[str], b: list[str]) -> int:
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def _check_hunks(before: str, after: str, components: list[Any], context: int) -> None:
    old = diff_mod._tokenize(before)
    new = diff_mod._tokenize(after)
    hunks = diff_mod._structured_hunks(components, context)

    # Components replay exactly: equal runs and removals consume `old`, equal runs and
    # additions produce `new`.
    assert [t for added, _r, toks in components if not added for t in toks] == old
    assert [t for _a, removed, toks in components if not removed for t in toks] == new

    # Applying the hunks to `before` (by their positions) rebuilds `after`.
    rebuilt: list[str] = []
    cursor = 0  # 0-based index into old
    prev_end = 0
    for hunk in hunks:
        start = hunk["oldStart"] - 1
        assert start >= prev_end
        if prev_end:
            # Hunks are only split by more than 2 x context unchanged lines.
            assert start - prev_end >= 1
        rebuilt.extend(old[cursor:start])
        body = [line for line in hunk["lines"] if not line.startswith("\\")]
        old_side = [line[1:] for line in body if line[0] in " -"]
        new_side = [line[1:] for line in body if line[0] in " +"]
        assert len(old_side) == hunk["oldLines"]
        assert len(new_side) == hunk["newLines"]
        assert [t.removesuffix("\n") for t in old[start : start + hunk["oldLines"]]] == old_side
        new_start = hunk["newStart"] - 1
        assert [t.removesuffix("\n") for t in new[new_start : new_start + hunk["newLines"]]] == new_side
        rebuilt.extend(new[new_start : new_start + hunk["newLines"]])
        cursor = start + hunk["oldLines"]
        prev_end = cursor
    rebuilt.extend(old[cursor:])
    assert rebuilt == new
    assert (hunks == []) == (old == new)


@settings(max_examples=300, deadline=None)
@given(_line_tokens, _line_tokens, st.booleans(), st.booleans(), st.integers(0, 4))
def test_property_hunks_rebuild_after_and_the_script_is_minimal(
    before_items: list[str], after_items: list[str], nl_before: bool, nl_after: bool, context: int
) -> None:
    before = _text(before_items, nl_before)
    after = _text(after_items, nl_after)
    components = diff_mod._diff_lines(before, after)
    _check_hunks(before, after, components, context)

    # Myers is minimal: changed tokens == |old| + |new| - 2 * LCS.
    old = diff_mod._tokenize(before)
    new = diff_mod._tokenize(after)
    changed = sum(len(toks) for added, removed, toks in components if added or removed)
    assert changed == len(old) + len(new) - 2 * _lcs(old, new)


@settings(max_examples=200, deadline=None)
@given(_line_tokens, _line_tokens, st.booleans(), st.booleans())
def test_property_fallback_components_also_rebuild_after(
    before_items: list[str], after_items: list[str], nl_before: bool, nl_after: bool
) -> None:
    before = _text(before_items, nl_before)
    after = _text(after_items, nl_after)
    components = diff_mod._diff_lines(before, after, max_edit_length=0)
    _check_hunks(before, after, components, DIFF_CONTEXT)
    assert len(diff_mod._structured_hunks(components, DIFF_CONTEXT)) <= 1


@settings(max_examples=300, deadline=None)
@given(_line_tokens, _line_tokens, st.booleans(), st.booleans())
def test_property_public_file_diffs_are_contiguous_slices(
    before_items: list[str], after_items: list[str], nl_before: bool, nl_after: bool
) -> None:
    before = _text(before_items, nl_before)
    after = _text(after_items, nl_after)
    result = compute_hunk_diffs("p", before, after)
    hunks = diff_mod._structured_hunks(diff_mod._diff_lines(before, after), DIFF_CONTEXT)
    assert len(result) == len(hunks)
    assert (result == []) == (before == after)
    old_lines = [t.removesuffix("\n") for t in diff_mod._tokenize(before)]
    new_lines = [t.removesuffix("\n") for t in diff_mod._tokenize(after)]
    for entry, hunk in zip(result, hunks, strict=True):
        assert entry["path"] == "p"
        start = hunk["oldStart"] - 1
        expected_old = old_lines[start : start + hunk["oldLines"]]
        assert entry["oldText"] == ("\n".join(expected_old) if expected_old else None)
        start = hunk["newStart"] - 1
        assert entry["newText"] == "\n".join(new_lines[start : start + hunk["newLines"]])


# ------------------------------------------------------------------------------------------
# diffsFromMeta (defensive narrowing)
# ------------------------------------------------------------------------------------------


def test_narrows_a_well_formed_diffs_payload() -> None:
    diffs = [{"path": "a.txt", "oldText": "hello world", "newText": "hello there"}]
    meta = {"diffs": diffs}
    assert diffs_from_meta(meta) is diffs


def test_accepts_a_diff_whose_old_text_is_none() -> None:
    diffs = [{"path": "a.txt", "oldText": None, "newText": "x"}]
    assert diffs_from_meta({"diffs": diffs}) == diffs


def test_accepts_extra_keys() -> None:
    diffs = [{"path": "a", "oldText": "x", "newText": "y", "extra": 1}]
    assert diffs_from_meta({"diffs": diffs, "other": True}) == diffs


def test_round_trips_compute_hunk_diffs() -> None:
    diffs = compute_hunk_diffs("a", "x\n", "y\n")
    assert diffs_from_meta({"diffs": diffs}) == diffs


@pytest.mark.parametrize("meta", [None, 1, "diffs", True, [], [{"diffs": []}], ({"diffs": []},)])
def test_rejects_missing_non_object_or_array_meta(meta: object) -> None:
    assert diffs_from_meta(meta) is None


@pytest.mark.parametrize(
    "meta",
    [{}, {"diffs": None}, {"diffs": []}, {"diffs": "x"}, {"diffs": {"path": "a"}}, {"diffs": 3}],
)
def test_rejects_a_missing_empty_or_non_array_diffs_field(meta: object) -> None:
    assert diffs_from_meta(meta) is None


_GOOD = {"path": "a", "oldText": "x", "newText": "y"}


@pytest.mark.parametrize(
    "entry",
    [
        {"path": "a", "oldText": "x"},  # missing newText
        {"oldText": "x", "newText": "y"},  # missing path
        {"path": "a", "newText": "y"},  # missing oldText
        {"path": 1, "oldText": "x", "newText": "y"},
        {"path": "a", "oldText": 1, "newText": "y"},
        {"path": "a", "oldText": "x", "newText": 1},
        {"path": "a", "oldText": "x", "newText": None},
        {"path": "a", "oldText": ["x"], "newText": "y"},
        None,
        "string",
        ["a", "x", "y"],
        42,
    ],
)
def test_rejects_a_diffs_array_containing_a_malformed_entry(entry: object) -> None:
    assert diffs_from_meta({"diffs": [_GOOD, entry]}) is None
    assert diffs_from_meta({"diffs": [entry]}) is None


def test_never_raises_on_a_hostile_mapping() -> None:
    class Hostile(dict):  # type: ignore[type-arg]
        def get(self, *args: object, **kwargs: object) -> object:
            raise RuntimeError("boom")

    assert diffs_from_meta(Hostile(diffs=[_GOOD])) is None
    assert diffs_from_meta({"diffs": [Hostile(_GOOD)]}) is None


_repetitive = st.lists(st.sampled_from(["a\n", "b\n", "c\n", "\n", "a\r\n", "a"]), max_size=24)


@settings(max_examples=2000, deadline=None)
@given(_repetitive, _repetitive, st.integers(0, 4))
def test_property_setting_the_common_suffix_aside_changes_no_hunk(
    before_items: list[str], after_items: list[str], context: int
) -> None:
    """The suffix shortcut (taken only when its first line is in neither changed middle) gives
    the hunks of the search through the whole text, line for line (tiny alphabets make the
    slides that an unconditional trim would get wrong likely)."""
    before, after = "".join(before_items), "".join(after_items)
    trimmed = diff_mod._diff_lines(before, after)
    whole = diff_mod._diff_lines(before, after, trim_suffix=False)
    assert diff_mod._structured_hunks(trimmed, context) == diff_mod._structured_hunks(whole, context)
    assert [(a, r, list(t)) for a, r, t in _merged(trimmed)] == [(a, r, list(t)) for a, r, t in _merged(whole)]


def _merged(components: list[Any]) -> list[Any]:
    """Adjacent components of one kind joined (jsdiff never emits two in a row; the check is
    on token lists)."""
    out: list[Any] = []
    for added, removed, tokens in components:
        if out and out[-1][0] == added and out[-1][1] == removed:
            out[-1] = (added, removed, [*out[-1][2], *tokens])
        else:
            out.append((added, removed, list(tokens)))
    return out


def test_an_unsafe_suffix_is_not_set_aside() -> None:
    """``x a a a a`` → ``y a a a a b a``: the shared last ``a`` also occurs in the changed
    middle, so trimming it could slide a change; the search runs through it, and a shared
    suffix whose first line is new to both middles is set aside."""
    before, after = "x\n" + "a\n" * 4, "y\n" + "a\n" * 4 + "b\na\n"
    assert diff_mod._suffix_start(before, after, 0) == (len(before), len(after))
    [hunk] = diff_mod._structured_hunks(diff_mod._diff_lines(before, after), 3)
    assert hunk["lines"] == ["-x", "+y", " a", " a", " a", " a", "+b", "+a"]
    before, after = "x\na\nz\nz\n", "y\na\nz\nz\n"
    assert diff_mod._suffix_start(before, after, 0) == (2, 2)


def test_a_small_edit_of_a_big_text_splits_only_its_middle(monkeypatch: pytest.MonkeyPatch) -> None:
    body = [f"line {i}\n" for i in range(5000)]
    before = "".join(body)
    after = "".join(body[:2500] + ["changed\n"] + body[2501:])
    split: list[int] = []
    real = diff_mod._tokenize

    def counting(text: str) -> list[str]:
        tokens = real(text)
        split.append(len(tokens))
        return tokens

    monkeypatch.setattr(diff_mod, "_tokenize", counting)
    [entry] = compute_hunk_diffs("f", before, after)
    assert entry["oldText"] == "".join(body[2497:2504]).removesuffix("\n")
    assert entry["newText"] == "".join(body[2497:2500] + ["changed\n"] + body[2501:2504]).removesuffix("\n")
    assert sum(split) <= 20, split  # the changed line and a few context lines, not 10 000


@pytest.mark.parametrize("text", ["x", "x\n", "a\nb", "a\nb\n", "a\nb\nc\nd\n", "a\r\nb\n\nc", "\n\n"])
def test_runs_slice_like_token_lists(text: str) -> None:
    run, tokens = diff_mod._Run(text), diff_mod._tokenize(text)
    assert len(run) == len(tokens) and list(run) == tokens
    for n in range(0, 6):
        assert run[:n] == tokens[:n]
        if n:
            assert run[-n:] == tokens[-n:]
