"""``tool_fs_search.output`` at its edges: UTF-8 cuts (§6.2 previews), S11 match windows,
S14 escapes and notes, the fast and the field-by-field match parsers (§6.2), and the pages'
spill pieces and texts (§6.1, §6.2)."""

from __future__ import annotations

import dataclasses
import json

import pytest
from hypothesis import given, strategies as st

from dsh_fs.tool_fs_search import errors
from dsh_fs.tool_fs_search.output import (
    GlobPage,
    GrepMatch,
    GrepPage,
    _trim_partial_utf8,
    binary_note,
    escape_controls,
    first_submatch,
    format_grep_groups,
    glob_text,
    grep_text,
    parse_match,
    preview_line,
    to_workdir_relative,
    window_line,
)


@pytest.mark.parametrize("char", ["é", "ก", "€", "😀"])  # a lead byte of 2, 3 (0xE0 and above) and 4 bytes
def test_an_incomplete_last_code_point_is_trimmed(char: str) -> None:
    data = char.encode()
    for cut in range(len(data)):
        assert _trim_partial_utf8(b"a" + data[:cut]) == b"a"
    assert _trim_partial_utf8(b"a" + data) == b"a" + data
    assert _trim_partial_utf8(data) == data


def test_trimming_leaves_ascii_and_stray_continuation_bytes() -> None:
    assert _trim_partial_utf8(b"abc") == b"abc"
    assert _trim_partial_utf8(b"") == b""
    assert _trim_partial_utf8(b"\x80\x80\x80\x80\x80") == b"\x80\x80\x80\x80\x80"  # no lead in reach: as is
    assert _trim_partial_utf8(b"a\x7f") == b"a\x7f"


@given(st.text(min_size=1), st.integers(min_value=1, max_value=40))
def test_a_preview_keeps_the_longest_prefix_that_fits(line: str, budget: int) -> None:
    line = line.encode("utf-8", "replace").decode("utf-8")
    shown = preview_line(line, budget)
    if len(line.encode()) <= budget:
        assert shown == line
        return
    kept = shown.removesuffix(" (line truncated)")
    assert shown.endswith(" (line truncated)") and line.startswith(kept)
    assert len(kept.encode()) <= budget < len(line[: len(kept) + 1].encode())


def test_a_preview_of_exactly_the_budget_is_whole() -> None:
    assert preview_line("€€", 6) == "€€"
    assert preview_line("€€", 5) == "€ (line truncated)"
    assert preview_line("abcd", 1) == "a (line truncated)"


def test_controls_are_escaped_and_tab_kept() -> None:  # S14
    assert escape_controls("a\tb") == "a\tb"
    assert escape_controls("a\x00b\x1fc\x7f\n") == "a\\u0000b\\u001fc\\u007f\\u000a"
    assert escape_controls("\u2028 é") == "\u2028 é"  # not printable, yet no C0 control: as is
    assert binary_note(["a"]) == "(a contains NUL bytes, shown as \\u0000: it may be a binary file, searched here as text.)"
    assert binary_note(["a", "b"]) == (
        "(a, b contain NUL bytes, shown as \\u0000: they may be binary files, searched here as text.)")


def _record(submatches: object) -> bytes:
    return json.dumps({"type": "match", "data": {"submatches": submatches}}).encode()


def test_the_first_submatch_offsets() -> None:  # S11
    assert first_submatch(_record([{"start": 3, "end": 5}, {"start": 9, "end": 10}])) == (3, 5)
    assert first_submatch(_record([{"start": 0, "end": 0}])) == (0, 0)
    for bad in ([], [{"start": 5, "end": 3}], [{"start": -1, "end": 3}], [{"start": "1", "end": 3}],
                [{"start": 1, "end": "3"}], [{"start": 1}], ["x"]):
        assert first_submatch(_record(bad)) is None, bad
    assert first_submatch(b"not json") is None
    assert first_submatch(b'{"data": null}') is None


@pytest.mark.parametrize(("line", "start", "end", "budget", "shown"), [
    ("0123456789" * 3, 12, 14, 10,
     "... 0123456789 ... (line truncated: characters 11-20 of 30 shown; the match starts at column 13)"),
    ("0123456789" * 3, 2, 14, 10,
     "0123456789 ... (line truncated: characters 1-10 of 30 shown; the match starts at column 3)"),
    ("é" * 20, 20, 22, 10,
     "... ééééé ... (line truncated: characters 10-14 of 20 shown; the match starts at column 11)"),
    ("ab" * 10, 18, 20, 8,
     "... abababab (line truncated: characters 13-20 of 20 shown; the match starts at column 19)"),
    ("a" * 20, 10, 11, 10,
     "... aaaaaaaaaa ... (line truncated: characters 9-18 of 20 shown; the match starts at column 11)"),
    ("a" * 21, 10, 21, 20,
     "... aaaaaaaaaaaaaaaaaaaa (line truncated: characters 2-21 of 21 shown; the match starts at column 11)"),
    ("😀" * 10, 12, 16, 9,  # the window starts inside a code point: at the next one
     "... 😀 ... (line truncated: characters 4-4 of 10 shown; the match starts at column 4)"),
    ("😀" * 10, 12, 16, 12,  # from inside a code point whose continuation bytes are odd and even
     "... 😀😀 ... (line truncated: characters 4-5 of 10 shown; the match starts at column 4)"),
    ("ก" * 10, 13, 15, 8,
     "... กก ... (line truncated: characters 5-6 of 10 shown; the match starts at column 6)"),
    ("a" * 20, 10, 10, 10, None),  # the preview shows a match ending at the budget
    ("a" * 20, 10, 21, 10, None),  # offsets past the line
    ("a" * 20, 10, 20, 20, None),  # the whole line fits
])
def test_match_windows(line: str, start: int, end: int, budget: int, shown: str | None) -> None:  # S11
    assert window_line(line, start, end, budget) == shown


def _fast(path: str = "a.ts", text: str = "hit\n", number: int = 3) -> bytes:
    return (json.dumps({"type": "match", "data": {"path": {"text": path}, "lines": {"text": text},
                                                  "line_number": number, "absolute_offset": 0,
                                                  "submatches": []}}, separators=(",", ":"))).encode()


def test_records_in_ripgrep_s_own_layout() -> None:
    assert parse_match(_fast()) == GrepMatch("a.ts", 3, "hit")
    assert parse_match(_fast(text="crlf\r\n")) == GrepMatch("a.ts", 3, "crlf")
    assert parse_match(_fast(text="a\n\n")) == GrepMatch("a.ts", 3, "a\n")
    assert parse_match(_fast(text="no end")) == GrepMatch("a.ts", 3, "no end")
    assert parse_match(_fast(path='q"u\\o\u00e9', text='say "hi"\n')) == GrepMatch('q"u\\o\u00e9', 3, 'say "hi"')
    assert parse_match(_fast(number=123456789012345)).line_number == 123456789012345
    big = parse_match(_fast(number=1234567890123456))  # past the fast path's 15 digits: read whole, alike
    assert big == GrepMatch("a.ts", 1234567890123456, "hit")
    assert parse_match(_fast().replace(b'"text":"hit\\n"', b'"bytes":"aGl0"')) == GrepMatch(
        "a.ts", 3, "(line is not valid UTF-8)")


def test_ripgrep_s_layout_is_read_without_decoding_the_rest() -> None:
    """A line's ``submatches`` can be far bigger than the line: a record in ripgrep's own field
    order is read up to the line number only (what follows is not even decoded)."""
    head = _fast(path="d/a.ts", text="x\n", number=9).split(b',"absolute_offset":')[0]
    assert parse_match(head + b',"absolute_offset":0,"submatches":[{"match":') == GrepMatch("d/a.ts", 9, "x")
    shifted = head.replace(b'"lines"', b'"lines2"') + b',"absolute_offset":0,"submatches":[{"match":'
    with pytest.raises(errors.SearchError, match="a line is not JSON"):  # not that layout: decoded whole
        parse_match(shifted)


def test_records_in_another_layout_are_read_field_by_field() -> None:
    other = json.dumps({"data": {"line_number": 7, "lines": {"text": "x\r\n"}, "path": {"text": "b"}},
                        "type": "match"}).encode()
    assert parse_match(other) == GrepMatch("b", 7, "x")
    assert parse_match(json.dumps({"type": "match", "data": {"path": {"text": "b"}, "line_number": 2.5,
                                                              "lines": {"text": "y"}}}).encode()).line_number == 2.5
    bad_b64 = json.dumps({"type": "match", "data": {"path": {"bytes": "Y"}, "line_number": 1,
                                                     "lines": {"text": "y"}}}).encode()
    with pytest.raises(errors.SearchError, match="no path text"):
        parse_match(bad_b64, bytes_paths=True)
    text_wins = json.dumps({"type": "match", "data": {"path": {"text": "t", "bytes": "Yg=="}, "line_number": 1,
                                                       "lines": {"text": "y"}}}).encode()
    assert parse_match(text_wins, bytes_paths=True).path == "t"


def test_a_match_is_a_frozen_slotted_value() -> None:
    match = GrepMatch("a", 1, "x")
    with pytest.raises(dataclasses.FrozenInstanceError):
        match.line = "y"  # type: ignore[misc]
    assert not hasattr(match, "__dict__")


def test_grouped_matches_and_line_numbers() -> None:
    text = format_grep_groups([GrepMatch("a", 1, "x"), GrepMatch("b", 2.0, "y"), GrepMatch("a", 1e21, "z")])
    assert text == "a\nLine 1: x\nLine 1e+21: z\n\nb\nLine 2: y"
    assert format_grep_groups([]) == ""


def test_glob_page_pieces_and_bounds() -> None:
    pieces: list[str] = []
    page = GlobPage(2, pieces.append)
    page.add("a")
    page.add("b")
    assert (page.kept, page.seen, page.truncated, pieces) == (["a", "b"], 2, False, ["a", "\nb"])
    assert glob_text(page, "R") == "a\nb"
    page.add("c")
    assert (page.kept, page.seen, page.truncated, pieces[-1]) == (["a", "b"], 3, True, "\nc")
    assert glob_text(page, "R") == "a\nb\n\n(Showing 2 of 3 paths. R)"
    assert GlobPage(0).truncated is False and glob_text(GlobPage(3), None) == ""


def test_grep_page_pieces_and_bounds() -> None:
    pieces: list[str] = []
    page = GrepPage(2, pieces.append)
    for match in (GrepMatch("a", 1, "x"), GrepMatch("a", 2, "y")):
        page.add(match)
    assert (page.seen, page.truncated, pieces) == (2, False, ["a\nLine 1: x", "\nLine 2: y"])
    assert grep_text(page, "R") == "Found 2 matches\n\na\nLine 1: x\nLine 2: y"
    page.add(GrepMatch("b", 3.0, "z"))
    page.add(GrepMatch("a", 4, "w"))  # a file again after another: a group of its own in the spill
    assert pieces[2:] == ["\n\nb\nLine 3: z", "\n\na\nLine 4: w"]
    assert (len(page.kept), page.seen, page.truncated) == (2, 4, True)
    assert grep_text(page, "R") == "Found 2 of 4 matches\n\na\nLine 1: x\nLine 2: y\n\n(R)"
    assert page.head() == "Found 4 matches\n\n"
    single = GrepPage(1)
    single.add(GrepMatch("a", 1, "x"))
    assert single.head() == "Found 1 match\n\n" and not single.truncated


def test_display_paths_at_the_edges() -> None:
    assert to_workdir_relative("/w/..x", "/w") == "..x"
    assert to_workdir_relative("/", "/w") == "/"
    assert to_workdir_relative("/w/a", "/") == "w/a"


def test_extending_a_glob_page_is_adding_each_with_one_sink_call() -> None:
    calls: list[tuple[str, int]] = []
    page = GlobPage(3, lambda piece, count=1: calls.append((piece, count)))
    page.extend([])
    assert calls == [] and page.seen == 0
    page.extend(["a", "b"])
    page.extend(["c", "d"])
    page.add("e")
    assert calls == [("a\nb", 2), ("\nc\nd", 2), ("\ne", 1)]
    assert (page.kept, page.seen, page.truncated) == (["a", "b", "c"], 5, True)
    full = GlobPage(2)
    full.extend(["a", "b"])
    full.extend(["c"])
    assert (full.kept, full.seen) == (["a", "b"], 3)
