"""Where hunks apply and what they write (``dsh_fs.patch.locate``, ``apply``, ``plan``):
tolerance tiers, ambiguity, anchors, end of file, final line breaks, CRLF/mixed files (D2), and
the whole-patch planner with every refusal and its text.

Not covered here: parsing (test_patch_parser.py), random inputs (test_patch_properties.py),
real commits (tests/integration/testing/test_commit_replay.py).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_fs.fs.literal_edit import splice
from dsh_fs.patch import FileState, Patch, PatchError, PatchRejected, apply_chunks, codex_summary, operation_summary
from dsh_fs.patch import parse_operation, parse_patch, plan_patch, required_paths
from dsh_fs.patch.apply import apply_line_edits


def update(body: str, text: str, *, path: str = "f") -> str:
    """Apply the hunks of a Codex ``*** Update File: f`` with ``body`` to ``text``."""
    (op,) = parse_patch(f"*** Begin Patch\n*** Update File: {path}\n{body}*** End Patch").ops
    return apply_chunks(text, op.chunks, dialect="codex", path=path)  # type: ignore[union-attr]


def v4a(diff: str, text: str) -> str:
    op = parse_operation("update_file", "f", diff)
    return apply_chunks(text, op.chunks, dialect="v4a", path="f")  # type: ignore[union-attr]


def failure(body: str, text: str) -> PatchError:
    with pytest.raises(PatchError) as info:
        update(body, text)
    return info.value


# -- tiers -----------------------------------------------------------------------------------


def test_exact_match_replaces_only_the_changed_line() -> None:
    assert update("@@\n a\n-b\n+B\n c\n", "a\nb\nc\n") == "a\nB\nc\n"


@pytest.mark.parametrize(
    "file_line,patch_line",
    [
        ("ctx   ", "ctx"),  # trailing whitespace
        ("    ctx", "ctx"),  # leading and trailing whitespace
        ("say \u201chi\u201d \u2014 ok", 'say "hi" - ok'),  # typographic punctuation
        ("a\u00a0b", "a b"),  # odd spaces
    ],
)
def test_looser_tiers_find_the_hunk_and_never_rewrite_context(file_line: str, patch_line: str) -> None:
    # DEVIATIONS E4
    text = f"x\n{file_line}\nold\ny\n"
    assert update(f"@@\n {patch_line}\n-old\n+new\n", text) == f"x\n{file_line}\nnew\ny\n"


def test_the_first_tier_that_matches_decides_even_if_looser_ones_match_elsewhere() -> None:
    text = "a  \nb\na\nb\n"  # exact "a","b" only at line 3; trailing-tolerant also at line 1
    assert update("@@\n a\n-b\n+B\n", text) == "a  \nb\na\nB\n"


def test_removed_lines_matched_loosely_remove_the_file_s_own_line() -> None:
    assert update("@@\n-gone\n keep\n", "  gone\t\nkeep\n") == "keep\n"


# -- ambiguity and order -----------------------------------------------------------------------


def test_a_hunk_that_fits_two_places_is_refused_with_the_lines_listed() -> None:
    # DEVIATIONS E2
    err = failure("@@\n a\n-b\n+c\n", "a\nb\nx\na\nb\n")
    assert err.kind == "ambiguous"
    assert str(err) == (
        "Expected lines match 2 places in f (lines 1, 4); add context lines or an @@ line so that they "
        "match one place:\na\nb"
    )


def test_ambiguity_within_a_looser_tier_is_refused_too() -> None:
    err = failure("@@\n-b\n+c\n", "b \nb\t\n")
    assert err.kind == "ambiguous" and "(lines 1, 2)" in str(err)


def test_an_anchor_narrows_the_search_to_after_it() -> None:
    text = "def f():\n    return 1\ndef g():\n    return 1\n"
    assert update("@@ def g():\n-    return 1\n+    return 2\n", text) == "def f():\n    return 1\ndef g():\n    return 2\n"


def test_stacked_anchors_narrow_in_turn() -> None:
    # the SDK's test_apply_diff_stacked_anchors_narrow_to_the_named_block
    text = "class First\n    def target():\n        return 0\n\nclass Second\n    def helper():\n        pass\n\n    def target():\n        pass\n"
    diff = "@@ class Second\n@@     def target():\n-        pass\n+        return 1"
    assert v4a(diff, text) == text.replace("def target():\n        pass", "def target():\n        return 1")


def test_an_anchor_above_the_cursor_still_holds_for_the_next_hunk() -> None:
    # the SDK's test_apply_diff_reuses_a_prior_parent_anchor_across_stacked_hunks
    text = "class Target\n    def first():\n        pass\n\n    def second():\n        pass\n"
    diff = "@@ class Target\n@@     def first():\n-        pass\n+        return 1\n@@ class Target\n@@     def second():\n-        pass\n+        return 2"
    assert v4a(diff, text) == "class Target\n    def first():\n        return 1\n\n    def second():\n        return 2\n"


def test_a_missing_anchor_is_an_error() -> None:
    # DEVIATIONS E11
    err = failure("@@ def nowhere():\n-a\n+b\n", "a\n")
    assert (err.kind, str(err), err.line) == ("not_found", "Failed to find context 'def nowhere():' in f", 3)


def test_missing_lines_are_an_error_listing_them() -> None:
    err = failure("@@\n a\n-zzz\n+b\n", "a\nb\n")
    assert (err.kind, str(err)) == ("not_found", "Failed to find expected lines in f:\na\nzzz")


def test_hunks_apply_in_order_each_searched_after_the_previous() -> None:
    # the second hunk's lines also occur above the first: only the later place is searched
    text = "x\nsame\ny\nsame\n"
    assert update("@@\n y\n@@\n-same\n+other\n", text) == "x\nsame\ny\nother\n"
    err = failure("@@\n y\n@@\n-x\n+X\n", text)
    assert err.kind == "not_found"


# -- end of file and final line breaks -------------------------------------------------------


def test_end_of_file_pins_the_hunk_to_the_end() -> None:
    text = "a\nb\na\nb\n"
    assert update("@@\n a\n-b\n+c\n*** End of File\n", text) == "a\nb\na\nc\n"
    assert update("@@\n a\n-b\n+c\n*** End of File\n", "a\nb\na\nb") == "a\nb\na\nc"
    assert failure("@@\n-a\n+c\n*** End of File\n", "a\nb\n").kind == "not_found"


def test_a_file_without_final_line_break_keeps_lacking_one() -> None:
    # DEVIATIONS E1
    # Codex would append one; only an explicit hunk changes the last line break
    assert update("@@\n-last\n+LAST\n", "first\nlast") == "first\nLAST"


def test_the_final_line_break_is_the_empty_last_line() -> None:
    assert update("@@\n last\n+\n", "first\nlast") == "first\nlast\n"  # add it
    assert update("@@\n last\n-\n", "first\nlast\n") == "first\nlast"  # remove it
    assert v4a("@@\n-a\n-\n", "a\n") == ""


def test_a_trailing_empty_context_line_that_does_not_fit_is_dropped() -> None:
    # models often end a hunk with a blank context line the file does not have there
    assert update("@@\n-a\n+b\n\n", "a\nc\n") == "b\nc\n"


# -- hunks without expected lines --------------------------------------------------------------


def test_a_pure_addition_goes_to_the_end_in_codex_and_to_the_cursor_in_v4a() -> None:
    assert update("@@\n+z\n", "a\nb\n") == "a\nb\nz\n"
    assert update("@@\n+z\n", "a\nb") == "a\nb\nz"
    assert v4a("@@\n+z", "a\nb\n") == "z\na\nb\n"
    assert v4a("@@\n+hello\n+world", "") == "hello\nworld\n"  # SDK test_apply_diff_with_floating_hunk_adds_lines


def test_a_bare_pure_addition_does_not_hide_later_hunks() -> None:
    # Codex test_pure_addition_chunk_followed_by_removal: the addition goes to the end of the file,
    # after the later hunk's change, and the later hunk is still searched from the top
    body = "@@\n+after-context\n+second-line\n@@\n line1\n-line2\n-line3\n+line2-replacement\n"
    assert update(body, "line1\nline2\nline3\n") == "line1\nline2-replacement\nafter-context\nsecond-line\n"
    # two floating additions keep patch order; a hunk between them is located normally
    assert update("@@\n+x\n@@\n a\n+y\n@@\n+z\n", "a\nb\n") == "a\ny\nb\nx\nz\n"
    # an end-of-file addition and a change of the last line in a later hunk both apply
    assert update("@@\n+tail\n*** End of File\n@@\n-b\n+B\n", "a\nb\n") == "a\nB\ntail\n"


def test_a_blank_line_left_between_hunks_does_not_stop_them_applying() -> None:
    # Codex test_unified_diff_insert_at_eof, and a blank / whitespace-only line that ends a hunk
    assert update("@@\n+quux\n*** End of File\n\n", "foo\nbar\nbaz\n") == "foo\nbar\nbaz\nquux\n"
    assert update("@@\n foo\n-bar\n+BAR\n   \n@@\n-baz\n+BAZ\n", "foo\nbar\nbaz\n") == "foo\nBAR\nBAZ\n"


def test_a_floating_addition_never_lands_inside_a_later_hunk_s_removal() -> None:
    # the later hunk removes the file's last line and its final line break (its empty last line)
    assert update("@@\n+z\n@@\n a\n-b\n-\n", "a\nb\n") == "a\nz"


def test_a_pure_addition_after_an_anchor_goes_right_after_it() -> None:
    # DEVIATIONS E3
    assert update("@@ b\n+inserted\n", "a\nb\nc\n") == "a\nb\ninserted\nc\n"


# -- line endings (D2) -----------------------------------------------------------------------


def test_crlf_file_new_lines_take_crlf_and_nothing_else_changes() -> None:
    text = "a\r\nb\r\nc\r\n"
    assert update("@@\n a\n-b\n+B1\n+B2\n c\n", text) == "a\r\nB1\r\nB2\r\nc\r\n"


def test_mixed_file_keeps_every_untouched_line_break() -> None:
    text = "a\r\nb\nc\r\nd\ne\r\n"  # CRLF-dominant
    assert update("@@\n b\n-c\n+C\n d\n", text) == "a\r\nb\nC\r\nd\ne\r\n"
    assert update("@@\n b\n+new\n c\n", text) == "a\r\nb\nnew\r\nc\r\nd\ne\r\n"


def test_deleting_lines_removes_their_own_line_breaks() -> None:
    assert update("@@\n a\n-b\n-c\n d\n", "a\r\nb\nc\r\nd") == "a\r\nd"
    assert update("@@\n a\n-b\n", "a\r\nb") == "a"


def test_lone_cr_is_text() -> None:
    assert update("@@\n-x\ry\n+z\n", "x\ry\nq\n") == "z\nq\n"


def test_line_edits_merge_when_they_touch() -> None:
    # deleting line 1 and then through the end: one span, no overlap
    assert apply_line_edits("a\nb\nc", [(1, 1, []), (2, 1, [])]) == "a"
    assert apply_line_edits("a\nb", [(0, 2, [])]) == ""
    assert apply_line_edits("a\nb", [(2, 0, ["c"])]) == "a\nb\nc"


# -- the planner -------------------------------------------------------------------------------


def states(**files: str | None) -> dict[str, FileState]:
    return {path: FileState(display=f"/w/{path}", key=path, text=text) for path, text in files.items()}


MULTI = """*** Begin Patch
*** Add File: new.txt
+hello
*** Update File: mod.txt
@@
-old
+new
*** Update File: mv.txt
*** Move to: moved.txt
@@
 keep
*** Delete File: gone.txt
*** End Patch
"""


def test_a_multi_file_patch_plans_every_change_in_order() -> None:
    patch = parse_patch(MULTI)
    assert required_paths(patch) == ["new.txt", "mod.txt", "mv.txt", "moved.txt", "gone.txt"]
    changes = plan_patch(patch, states(**{"new.txt": None, "mod.txt": "old\n", "mv.txt": "keep\n", "moved.txt": None, "gone.txt": "x"}))
    assert [(c.kind, c.path, c.before, c.after, c.move_to) for c in changes] == [
        ("create", "new.txt", None, "hello\n", None),
        ("update", "mod.txt", "old\n", "new\n", None),
        ("update", "mv.txt", "keep\n", "keep\n", "moved.txt"),
        ("delete", "gone.txt", "x", None, None),
    ]
    assert changes[2].move_display == "/w/moved.txt"


def rejected(patch_text: str, files: dict[str, FileState]) -> list[tuple[str, str]]:
    with pytest.raises(PatchRejected) as info:
        plan_patch(parse_patch(patch_text), files)
    assert str(info.value) == "\n".join(e.message for e in info.value.errors)
    return [(e.kind, e.message) for e in info.value.errors]


def test_half_of_the_files_missing_lists_every_reason() -> None:
    # DEVIATIONS E5
    assert rejected(MULTI, states(**{"new.txt": "there", "mod.txt": None, "mv.txt": "keep\n", "moved.txt": "x", "gone.txt": None})) == [
        ("exists", "Failed to add file /w/new.txt: the file already exists"),
        ("missing", "Failed to read file to update /w/mod.txt: file not found"),
        ("exists", "Failed to move /w/mv.txt to /w/moved.txt: the destination already exists"),
        ("missing", "Failed to delete file /w/gone.txt: file not found"),
    ]


def test_a_file_touched_twice_is_refused() -> None:
    # DEVIATIONS E6
    text = "*** Begin Patch\n*** Delete File: a\n*** Add File: a\n+again\n*** End Patch"
    assert rejected(text, states(a="old\n")) == [("duplicate", "The patch touches /w/a more than once")]
    # same file under two names (same key)
    two_names = {"a": FileState(display="/w/a", key="K", text="x\n"), "./a": FileState(display="/w/a", key="K", text="x\n")}
    text = "*** Begin Patch\n*** Update File: a\n@@\n-x\n+y\n*** Delete File: ./a\n*** End Patch"
    assert rejected(text, two_names) == [("duplicate", "The patch touches /w/a more than once")]


def test_a_patch_cannot_add_a_file_and_a_path_beneath_it() -> None:
    """No file system holds both ``n`` (a file) and ``n/x`` (a file in ``n``): such a patch is
    refused whole, whichever comes first — not after the first has been written."""
    def named(*paths: str, **texts: str) -> dict[str, FileState]:
        return {p: FileState(display=f"/w/{p}", key=p, text=texts.get(p)) for p in paths}

    files = named("n", "n/x.txt", "a", "q/r.txt", "q", "nx", "n/y/z", a="a\n")
    file_first = "*** Begin Patch\n*** Add File: n\n+x\n*** Add File: n/x.txt\n+y\n*** End Patch"
    assert rejected(file_first, files) == [
        ("duplicate", "Failed to add file /w/n/x.txt: the patch adds /w/n as a file")]
    file_last = "*** Begin Patch\n*** Add File: n/y/z\n+y\n*** Add File: n\n+x\n*** End Patch"
    assert rejected(file_last, files) == [("duplicate", "Failed to add file /w/n: the patch adds /w/n/y/z inside it")]
    moved = "*** Begin Patch\n*** Update File: a\n*** Move to: q/r.txt\n@@\n-a\n+A\n*** Add File: q\n+x\n*** End Patch"
    assert rejected(moved, files) == [("duplicate", "Failed to add file /w/q: the patch adds /w/q/r.txt inside it")]
    moved_in = ("*** Begin Patch\n*** Add File: q\n+x\n"
                "*** Update File: a\n*** Move to: q/r.txt\n@@\n-a\n+A\n*** End Patch")
    assert rejected(moved_in, files) == [
        ("duplicate", "Failed to move /w/a to /w/q/r.txt: the patch adds /w/q as a file")]
    siblings = ("*** Begin Patch\n*** Add File: nx\n+x\n*** Add File: n/x.txt\n+y\n"
                "*** Add File: n/y/z\n+z\n*** End Patch")
    assert [c.display for c in plan_patch(parse_patch(siblings), files)] == ["/w/nx", "/w/n/x.txt", "/w/n/y/z"]


def test_an_empty_patch_modifies_nothing() -> None:
    assert rejected("*** Begin Patch\n*** End Patch", {}) == [("empty", "No files were modified.")]


def test_moving_a_file_onto_itself_is_a_plain_update() -> None:
    files = {"a": FileState(display="/w/a", key="K", text="x\n"), "A": FileState(display="/w/a", key="K", text="x\n")}
    (change,) = plan_patch(parse_patch("*** Begin Patch\n*** Update File: a\n*** Move to: A\n@@\n-x\n+y\n*** End Patch"), files)
    assert (change.kind, change.after, change.move_to) == ("update", "y\n", None)


def test_hunk_failures_are_collected_per_file() -> None:
    text = "*** Begin Patch\n*** Update File: a\n@@\n-zz\n*** Update File: b\n@@\n-q\n+r\n*** End Patch"
    assert rejected(text, states(a="x\n", b="q\nq\n")) == [
        ("not_found", "Failed to find expected lines in /w/a:\nzz"),
        ("ambiguous", "Expected lines match 2 places in /w/b (lines 1, 2); add context lines or an @@ line so that they match one place:\nq"),
    ]


def test_success_texts() -> None:
    assert codex_summary(["a"], ["b", "c"], ["d"]) == "Success. Updated the following files:\nA a\nM b\nM c\nD d\n"
    assert operation_summary("create", "p") == "Created p"
    assert operation_summary("update", "p") == "Updated p"
    assert operation_summary("update", "p", "q") == "Updated p\nMoved p to q"
    assert operation_summary("delete", "p") == "Deleted p"


def test_an_anchored_hunk_takes_the_nearest_match_after_its_anchor() -> None:
    text = "def f():\n    pass\ndef g():\n    pass\ndef h():\n    pass\n"
    assert update("@@ def g():\n-    pass\n+    return 2\n", text) == text.replace("g():\n    pass", "g():\n    return 2")
    # the same hunk without its anchor fits three places
    assert failure("@@\n-    pass\n+    return 2\n", text).kind == "ambiguous"


def test_splice_maps_normalized_spans_to_raw_and_new_breaks_to_the_dominant_style() -> None:
    # fs.literal_edit.splice, the mapping this engine shares with edit (D2)
    raw = "a\r\nb\nc\r\nd"  # CRLF-dominant, one bare LF
    # normalized "a\nb\nc\nd": replace "b" (2..3), drop the LF after it, insert before "d": spans touch
    assert splice(raw, [(2, 3, "B\nB2"), (3, 4, ""), (6, 6, "x\n")]) == "a\r\nB\r\nB2c\r\nx\r\nd"
    assert splice("a\nb", []) == "a\nb"
    assert splice("a\r\nb", [(1, 2, "")]) == "ab"  # a CRLF pair is removed whole


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab\n", max_size=40), st.lists(st.tuples(st.integers(0, 40), st.integers(0, 40),
                                                                st.text(alphabet="xy\n", max_size=5)), max_size=6))
def test_splice_of_a_text_without_cr_is_the_mapping_of_one_with_a_lone_cr(raw: str, picks: list) -> None:
    # the CR-free fast path: the same result as the general mapping (a lone CR appended stays
    # where it is and changes neither the offsets nor the dominant style)
    cuts = sorted(min(p, len(raw)) for pick in picks for p in pick[:2])
    spans = [(cuts[2 * i], cuts[2 * i + 1], pick[2]) for i, pick in enumerate(picks[: len(cuts) // 2])]
    assert splice(raw + "\r", spans) == splice(raw, spans) + "\r"
    out, cursor = [], 0
    for start, end, text in spans:
        out += [raw[cursor:start], text]
        cursor = end
    assert splice(raw, spans) == "".join(out) + raw[cursor:]


# -- pins (behaviours a mutant could break unseen) ---------------------------------------------


def test_a_hunk_header_without_a_space_is_a_syntax_error_not_an_anchor() -> None:
    for body in ("@@foo\n-a\n+b\n", "@@ a\n-a\n+b\n@@oo\n-c\n"):
        with pytest.raises(PatchError) as info:
            update(body, "a\nc\nfoo\noo\n")
        assert info.value.kind == "syntax", str(info.value)


def test_a_second_stacked_anchor_is_searched_below_the_first() -> None:
    text = "inner\nclass A\n  x\n"
    with pytest.raises(PatchError) as info:
        update("@@ class A\n@@ inner\n-  x\n+  y\n", text)
    assert str(info.value) == "Failed to find context 'inner' in f"
    assert update("@@ inner\n@@ class A\n-  x\n+  y\n", text) == "inner\nclass A\n  y\n"


def test_the_next_hunk_is_searched_after_the_previous_hunk_s_end() -> None:
    assert update("@@\n a\n-b\n+B\n@@\n-b\n+X\n", "a\nb\nc\nb\n") == "a\nB\nc\nX\n"


def test_a_hunk_is_never_found_overlapping_the_previous_one_even_by_its_rarest_line() -> None:
    # the second hunk's pattern c/d is indexed by "d" (its rarer line); "c d" at lines 2-3 starts inside the
    # first hunk, so only lines 5-6 are searched and the hunk fits one place
    text = "x\nc\nd\nc\nc\nd\n"
    assert update("@@\n-x\n+X\n c\n@@\n c\n-d\n+D\n", text) == "X\nc\nd\nc\nc\nD\n"


def test_the_work_budget_counts_one_comparison_per_candidate_place() -> None:
    from dsh_fs.patch.locate import Haystack, locate_chunk

    (op,) = parse_patch("*** Begin Patch\n*** Update File: f\n@@\n k\n-y\n+Y\n*** End Patch").ops
    lines = ["k", "k", "y", "k", ""]  # "y", the rarer line, has one candidate place
    hay = Haystack(lines, budget=1)
    assert locate_chunk(hay, op.chunks[0], 0, dialect="codex", path="f").start == 1  # type: ignore[union-attr]
    assert hay.budget == 0
    with pytest.raises(PatchError) as info:
        locate_chunk(Haystack(lines, budget=0), op.chunks[0], 0, dialect="codex", path="f")  # type: ignore[union-attr]
    assert (info.value.kind, info.value.line) == ("not_found", 3)
    assert str(info.value).startswith("Locating the hunks of f needs more than 4000000 comparisons")


def test_a_responses_operation_s_planning_errors_point_at_its_diff_s_first_line() -> None:
    op = parse_operation("update_file", "f", "@@\n-a\n+b\n")
    with pytest.raises(PatchRejected) as info:
        plan_patch(Patch(ops=(op,)), states(f=None))
    (err,) = info.value.errors
    assert (err.kind, err.line, str(err)) == ("missing", 1, "Failed to read file to update /w/f: file not found")


def test_haystack_matches_lists_the_starts_between_its_bounds_in_order_up_to_the_limit() -> None:
    from dsh_fs.patch.locate import Haystack

    hay = Haystack(["a", "b", "a", "b", "a", "b", ""])
    assert hay.matches(["a", "b"], "exact", 0, 5) == [0, 2, 4]
    assert hay.matches(["a", "b"], "exact", 2, 4) == [2, 4]  # both bounds included
    assert hay.matches(["a", "b"], "exact", 0, 5, limit=1) == [0]
    assert hay.matches(["a", "b"], "exact", 1, 5, limit=2) == [2, 4]
    assert hay.matches([" a ", "b"], "surrounding", 1, 5, limit=1) == [2]


def test_a_plan_and_the_states_it_was_made_from_are_immutable_values() -> None:
    import dataclasses

    files = states(**{"new.txt": None, "mod.txt": "old\n", "mv.txt": "keep\n", "moved.txt": None, "gone.txt": "x"})
    changes = plan_patch(parse_patch(MULTI), files)
    for value in (*changes, *files.values()):
        with pytest.raises(dataclasses.FrozenInstanceError):
            value.display = "elsewhere"  # type: ignore[misc]
    assert len(set(files.values())) == len(files)


def test_an_ambiguous_hunk_lists_ten_places_then_an_ellipsis() -> None:
    ten = failure("@@\n-q\n+r\n", "q\n" * 10)
    assert str(ten).startswith("Expected lines match 10 places in f (lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10); add")
    eleven = failure("@@\n-q\n+r\n", "q\n" * 11)
    assert str(eleven).startswith("Expected lines match 11 places in f (lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, …); add")


def test_an_end_of_file_hunk_may_cover_the_whole_file() -> None:
    assert update("@@\n-a\n+A\n*** End of File\n", "a\n") == "A\n"
    assert update("@@\n a\n-b\n+B\n*** End of File\n", "a\nb") == "a\nB"


def test_added_lines_before_a_blank_context_line_the_file_lacks_are_not_found() -> None:
    # the retry without the trailing blank context line leaves no expected line: an error, not a crash
    err = failure("@@\n+x\n \n", "a")
    assert (err.kind, str(err)) == ("not_found", "Failed to find expected lines in f:\n")


def test_an_anchored_hunk_stops_at_its_first_match() -> None:
    from dsh_fs.patch.locate import Haystack, locate_chunk

    (op,) = parse_patch("*** Begin Patch\n*** Update File: f\n@@ a\n x\n-q\n+Q\n*** End Patch").ops
    hay = Haystack(["a", "x", "q", "x", "q", "x", "q", ""], budget=10)
    assert locate_chunk(hay, op.chunks[0], 0, dialect="codex", path="f").start == 1  # type: ignore[union-attr]
    assert hay.budget == 9  # one candidate compared, not every later one


def test_a_file_inside_a_file_is_refused_under_relative_display_names_too() -> None:
    files = {p: FileState(display=p, key=p, text=None) for p in ("n", "n/x")}
    text = "*** Begin Patch\n*** Add File: n\n+x\n*** Add File: n/x\n+y\n*** End Patch"
    assert rejected(text, files) == [("duplicate", "Failed to add file n/x: the patch adds n as a file")]


def test_a_floating_addition_keeps_every_other_hunk_where_it_applied() -> None:
    # a bare pure addition (appended at the end) puts the edits in file order: the others stay in place
    assert update("@@\n+x\n@@\n-a\n-b\n+B\n@@\n c\n-d\n+D\n", "a\nb\nc\nd\ne\n") == "B\nc\nD\ne\nx\n"
    # and one landing inside a removal that does not start at its own length goes to that removal's end
    assert update("@@\n+x\n@@\n c\n-d\n-\n", "a\nb\nc\nd\n") == "a\nb\nc\nx"


def test_a_nested_file_error_names_the_operation_s_own_file() -> None:
    # PatchError.path is the file the failing operation names (an added file, or the file moved), which the
    # faces use to order and merge reasons
    files = {p: FileState(display=f"/w/{p}", key=p, text="a\n" if p == "a" else None) for p in ("q", "q/r", "a")}
    for text, path in (("*** Begin Patch\n*** Add File: q\n+x\n*** Add File: q/r\n+y\n*** End Patch", "/w/q/r"),
                       ("*** Begin Patch\n*** Add File: q\n+x\n*** Update File: a\n*** Move to: q/r\n@@\n-a\n+A\n"
                        "*** End Patch", "/w/a")):
        with pytest.raises(PatchRejected) as info:
            plan_patch(parse_patch(text), files)
        assert [(e.kind, e.path) for e in info.value.errors] == [("duplicate", path)]


def test_responses_create_and_delete_operations_have_no_patch_line() -> None:
    # they carry no patch text to point into: their errors' line is 0 (an update's diff has a line 1)
    create, delete = parse_operation("create_file", "f", "+x\n"), parse_operation("delete_file", "g", None)
    with pytest.raises(PatchRejected) as info:
        plan_patch(Patch(ops=(create, delete)), states(f="there\n", g=None))
    assert [(e.kind, e.line) for e in info.value.errors] == [("exists", 0), ("missing", 0)]


def test_an_end_of_file_hunk_may_remove_the_final_line_break() -> None:
    # its expected lines end with the empty last line that the final line break leaves
    assert update("@@\n b\n-\n*** End of File\n", "a\nb\n") == "a\nb"


@pytest.mark.parametrize("budget,kind", [(5, "ambiguous"), (4, "not_found")])
def test_an_unanchored_hunk_stops_at_its_second_match_before_listing_every_place(budget: int, kind: str) -> None:
    """Three places: the search stops at the second (2 comparisons), the listing visits all
    three (3): a budget of 5 lists them, 4 is past it."""
    from dsh_fs.patch import PatchError
    from dsh_fs.patch.locate import Haystack, locate_chunk

    op = parse_patch("*** Begin Patch\n*** Update File: f\n@@\n-a\n+c\n*** End Patch\n").ops[0]
    with pytest.raises(PatchError) as info:
        locate_chunk(Haystack(["a", "b", "a", "b", "a", "b", ""], budget=budget), op.chunks[0], 0,  # type: ignore[union-attr]
                     dialect="codex", path="f")
    assert info.value.kind == kind, str(info.value)
