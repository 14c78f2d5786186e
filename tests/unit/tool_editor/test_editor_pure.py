"""Pure parts of the text-editor faces (``dsh_fs.tool_editor``): ``view_range`` checks, the two
file views, ``max_characters`` and reference clipping, the directory listing, ``insert`` in both
line models and profiles, and the reference's ``str_replace`` occurrence lines.

The expected strings of the reference face are the reference's own tests
(``packages/fs/tool-str-replace-editor/tests/tools.spec.ts``). Not covered here: the tools
themselves (phase 2, through the registry).
"""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from dsh_fs.fs.text import normalize
from dsh_fs.tool_editor.insert import content_line_count, insert_text, reference_line_count
from dsh_fs.tool_editor.lines import LineCollector
from dsh_fs.tool_editor.replace import occurrence_lines, occurrences, replace_once
from dsh_fs.tool_editor.texts import TRUNCATED_MESSAGE
from dsh_fs.tool_editor.view import ViewRangeError, clip_units, listed, render_listing, render_numbered
from dsh_fs.tool_editor.view import render_reference_file, select_range


@pytest.mark.parametrize(
    "view_range,count,selected",
    [(None, 3, (1, 3)), ([2, -1], 3, (2, 3)), ([1, 1], 3, (1, 1)), ([3, 3], 3, (3, 3)),
     ([1.0, 2.0], 3, (1, 2)), ([2.0, -1.0], 3, (2, 3))],  # JSON 1.0 is the integer 1 (Number.isInteger)
)
def test_select_range(view_range: list[int] | None, count: int, selected: tuple[int, int]) -> None:
    assert select_range(view_range, count) == selected


@pytest.mark.parametrize(
    "view_range,message",
    [
        ([1], "Invalid `view_range`. It should be a list of two integers."),
        ([1.5, 2], "Invalid `view_range`. It should be a list of two integers."),
        ([True, 2], "Invalid `view_range`. It should be a list of two integers."),
        ([0, 1], "Invalid `view_range`: [0, 1]. Its first element `0` should be within the range of lines of the file: [1, 3]"),
        ([1, 99], "Invalid `view_range`: [1, 99]. Its second element `99` should be smaller than the number of lines in the file: `3`"),
        ([2, 1], "Invalid `view_range`: [2, 1]. Its second element `1` should be larger or equal than its first `2`"),
        ([2, -2], "Invalid `view_range`: [2, -2]. Its second element `-2` should be larger or equal than its first `2`"),
        # numbers as JavaScript prints them (a JSON integer beyond 2**53 arrives as a double)
        ([1, 1e20], "Invalid `view_range`: [1, 100000000000000000000]. Its second element `100000000000000000000` "
                    "should be smaller than the number of lines in the file: `3`"),
        ([1e21, 2.0], "Invalid `view_range`: [1e+21, 2]. Its first element `1e+21` should be within the range of "
                      "lines of the file: [1, 3]"),
    ],
)
def test_select_range_refusals_use_the_reference_texts(view_range: list[object], message: str) -> None:
    with pytest.raises(ViewRangeError) as info:
        select_range(view_range, 3)
    assert str(info.value) == message


def test_anthropic_view_numbers_lines_as_the_documented_example() -> None:
    assert render_numbered(["def is_prime(n):", '    """Check if a number is prime."""'], 1) == (
        '1: def is_prime(n):\n2:     """Check if a number is prime."""'
    )
    assert render_numbered(["b", "c"], 2) == "2: b\n3: c"
    assert render_numbered([], 1) == ""


def test_max_characters_keeps_whole_lines_then_the_clipped_note() -> None:
    # DEVIATIONS E7
    lines = ["aaaa", "bbbb", "cccc"]
    assert render_numbered(lines, 1, 15) == "1: aaaa\n2: bbbb\n" + TRUNCATED_MESSAGE  # two rows and a break: 15
    assert render_numbered(lines, 1, 14) == "1: aaaa\n" + TRUNCATED_MESSAGE
    assert render_numbered(lines, 1, 23) == "1: aaaa\n2: bbbb\n3: cccc"  # exactly 23 characters
    assert render_numbered(["x" * 50], 1, 10) == "1: xxxxxxx\n" + TRUNCATED_MESSAGE  # a lone long line is cut


def test_reference_file_view_matches_the_reference_tests() -> None:
    sample = "/w/sample.txt"
    assert render_reference_file(sample, ["two", "three", ""], 2, -1, True, 16000, 4) == "\n".join(
        [
            f"Here's the content of {sample} with line numbers (which has a total of 4 lines) with view_range=[2, -1]:",
            "     2  two",
            "     3  three",
            "     4  ",
            "",
        ]
    )
    assert render_reference_file("/e", [""], 1, 1, False, 16000, 1).endswith("(which has a total of 1 lines):\n     1  \n")
    assert render_reference_file("/m", ["target:", "\told"], 1, 2, False, 16000, 2).splitlines()[2] == "     2  \told"


def test_clipping_counts_utf16_units_and_never_splits_a_pair() -> None:
    assert clip_units("abc", 3) == "abc"
    assert clip_units("abcd", 3) == "abc" + TRUNCATED_MESSAGE
    assert clip_units("a\U0001f600b", 2) == "a" + TRUNCATED_MESSAGE  # the emoji takes 2 units
    assert clip_units("a\U0001f600b", 3) == "a\U0001f600" + TRUNCATED_MESSAGE


def test_listing_is_sorted_filtered_and_clipped() -> None:
    rows = [("f", "/d/b.txt"), ("d", "/d/a"), ("f", "/d/a/x.py")]
    assert render_listing("/d", rows, 16000) == (
        "Here're the files and directories up to 2 levels deep in /d, excluding hidden items, node_modules, "
        "and Python cache directories:\nd\t/d\nd\t/d/a\nf\t/d/a/x.py\nf\t/d/b.txt\n\n"
    )
    assert render_listing("/d", rows, 5).endswith("d\t/d\n" + TRUNCATED_MESSAGE + "\n")
    # UTF-16 order puts an astral character before U+FFFD, code point order after
    astral = [("f", "/d/\ufffd"), ("f", "/d/\U0001f600")]
    assert render_listing("/d", astral, None, utf16_order=True).index("\U0001f600") < render_listing(
        "/d", astral, None, utf16_order=True
    ).index("\ufffd")
    assert render_listing("/d", astral, None).index("\ufffd") < render_listing("/d", astral, None).index("\U0001f600")
    assert [listed(n) for n in [".git", "node_modules", "__pycache__", "node_modules_old", "__pycache__backup", "src"]] == [
        False,
        False,
        False,
        True,
        True,
        True,
    ]


# -- insert ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,line,new,expected",
    [  # the reference's tests
        ("one\ntwo", 2, "three", "one\ntwo\nthree"),
        ("one\n", 2, "three", "one\n\nthree"),
        ("one\nTWO\n\nthree\n", 1, "between", "one\nbetween\nTWO\n\nthree\n"),
        ("target:\n\tnew\n", 1, "\tkept", "target:\n\tkept\n\tnew\n"),
    ],
)
def test_reference_insert(text: str, line: int, new: str, expected: str) -> None:
    assert insert_text(text, line, new, whole_lines=False, keep_bytes=False) == expected
    assert insert_text(text, line, new, whole_lines=False, keep_bytes=True) == expected


def test_reference_insert_in_the_default_profile_keeps_crlf() -> None:
    assert insert_text("a\r\nb\r\n", 1, "x", whole_lines=False, keep_bytes=False) == "a\r\nx\nb\r\n"  # reference
    assert insert_text("a\r\nb\r\n", 1, "x", whole_lines=False, keep_bytes=True) == "a\r\nx\r\nb\r\n"


@pytest.mark.parametrize(
    "text,line,new,expected",
    [
        ("a\nb\n", 0, "X\n", "X\na\nb\n"),
        ("a\nb\n", 0, "X", "X\na\nb\n"),
        ("a\nb\n", 2, "X\n", "a\nb\nX\n"),
        ("a\nb", 2, "X\n", "a\nb\nX"),  # the file still has no final line break
        ("", 0, "X\n", "X\n"),
        ("a\r\nb\r\n", 1, "x\ny\n", "a\r\nx\r\ny\r\nb\r\n"),
        ("a\n", 1, "doc\n\n", "a\ndoc\n\n"),  # an intended blank line stays
    ],
)
def test_anthropic_insert_takes_whole_lines(text: str, line: int, new: str, expected: str) -> None:
    # DEVIATIONS E9
    assert insert_text(text, line, new, whole_lines=True, keep_bytes=True) == expected


def test_line_counts_of_the_two_models() -> None:
    assert [content_line_count(t) for t in ["", "a", "a\n", "a\nb", "\n", "a\r\n"]] == [0, 1, 1, 2, 1, 1]
    assert [reference_line_count(t) for t in ["", "a", "a\n", "a\nb", "\n"]] == [1, 1, 2, 2, 2]


def test_reference_occurrence_lines() -> None:
    text = "same\nother\nsame"
    assert occurrence_lines(text, occurrences(text, "same")) == [1, 3]
    text = "alpha\nbeta\nmiddle\nalpha\nbeta"
    assert occurrence_lines(text, occurrences(text, "alpha\nbeta")) == [1, 4]
    assert occurrences("aaa", "aa") == [0]  # non-overlapping, as the reference's matchOffsets
    assert replace_once("before OLD after", 7, "OLD", "$&|$`") == "before $&|$` after"


# -- LineCollector: chunked gathering equals slicing the whole text ------------------------------

@settings(max_examples=300, deadline=None)
@given(
    text=st.text(alphabet="ab\r\n", max_size=40),
    cuts=st.lists(st.integers(0, 40), max_size=6),
    first=st.integers(1, 8),
    span=st.one_of(st.none(), st.integers(0, 8)),
    model=st.sampled_from(["content", "split"]),
    crlf=st.booleans(),
    keep=st.one_of(st.none(), st.integers(0, 12)),
)
# a CR the cut kept is the line's own character, not the CR of its CRLF (found by this test)
@example(text="\r\r\n", cuts=[], first=1, span=None, model="content", crlf=True, keep=0)
def test_line_collector_equals_slicing_the_whole_text(text: str, cuts: list[int], first: int, span: int | None,
                                                      model: str, crlf: bool, keep: int | None) -> None:
    last = None if span is None else first + span
    collector = LineCollector(first, last, model=model, crlf=crlf, keep_chars=keep)  # type: ignore[arg-type]
    bounds = [0, *sorted(cuts), len(text)]
    for lo, hi in zip(bounds, bounds[1:]):
        collector.feed(text[lo:hi])
    kept, count = collector.finish()
    lines = (normalize(text) if crlf else text).split("\n")
    if model == "content" and lines[-1] == "":
        lines.pop()
    assert count == len(lines)
    wanted = lines[first - 1 : last]
    if keep is None:
        assert kept == wanted
    else:  # a prefix of the wanted lines, the last one perhaps cut, holding more than keep chars if short
        assert len(kept) <= len(wanted)
        for got, full in zip(kept, wanted):
            assert full.startswith(got) and (got == full or len(got) == keep + 1)
        if len(kept) < len(wanted) or (kept and kept[-1] != wanted[len(kept) - 1]):
            assert sum(len(line) + 1 for line in kept) > keep


def test_line_collector_cuts_a_line_fed_in_pieces_at_keep_chars_plus_one() -> None:
    """A line longer than ``keep_chars`` arriving over several chunks keeps exactly its first
    ``keep_chars + 1`` characters, however the chunks cut it."""
    collector = LineCollector(1, None, model="content", crlf=False, keep_chars=3)
    for chunk in ("ab", "cdef", "gh\nxy"):
        collector.feed(chunk)
    assert collector.finish() == (["abcd"], 2)
    collector = LineCollector(1, None, model="content", crlf=False, keep_chars=5)
    for chunk in ("abcdef", "g", "h\n"):
        collector.feed(chunk)
    assert collector.finish() == (["abcdef"], 1)


def test_line_collector_keeps_lines_until_they_hold_more_than_keep_chars() -> None:
    collector = LineCollector(1, None, model="content", crlf=False, keep_chars=4)
    collector.feed("abc\nd\nef\n")  # "abc" + its break is 4: not more than 4, so "d" is kept too
    assert collector.finish() == (["abc", "d"], 3)


def test_line_collector_keeps_a_lone_cr_at_the_end_of_the_text() -> None:
    """With ``crlf`` only a CR right before a LF is dropped: a final CR with no LF after it is text."""
    collector = LineCollector(1, None, model="content", crlf=True, keep_chars=None)
    collector.feed("a\r\nb\r")
    assert collector.finish() == (["a", "b\r"], 2)


def test_line_collector_keeps_a_cr_that_a_cut_leaves_last() -> None:
    """A line cut at ``keep_chars + 1`` whose last kept character is a CR keeps it: that CR is
    text (the CRLF's CR, if any, was cut off with the rest), found by the property above."""
    collector = LineCollector(1, None, model="content", crlf=True, keep_chars=2)
    collector.feed("aa\r\r\n")
    assert collector.finish() == (["aa\r"], 1)
    collector = LineCollector(1, None, model="content", crlf=True, keep_chars=2)
    collector.feed("ab\r\nc")  # kept whole: the CR of its CRLF goes
    assert collector.finish() == (["ab"], 2)


def test_requested_range_names_the_lines_to_gather_before_the_count_is_known() -> None:
    from dsh_fs.tool_editor.view import requested_range

    assert [requested_range(r) for r in ([2, 5], [2.0, 5.0], [2, -1], [0, 3], [5, 2], [3, 3])] == [
        (2, 5), (2, 5), (2, None), (1, 3), (5, None), (3, 3)]
    assert [requested_range(r) for r in (None, [1], [1, 2, 3], [1.5, 2], [True, 2])] == [(1, None)] * 5


def test_clipping_counts_the_last_bmp_character_as_one_unit() -> None:
    assert clip_units("\uffff\uffff", 2) == "\uffff\uffff"  # U+FFFF is one UTF-16 unit
    assert clip_units("\U00010000", 1) == TRUNCATED_MESSAGE  # U+10000 is two


def test_occurrence_lines_count_a_line_break_at_the_very_start() -> None:
    text = "\nsame\nsame"
    assert occurrence_lines(text, occurrences(text, "same")) == [2, 3]
