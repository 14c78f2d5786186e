"""Streamed literal edits: ``fs/literal_edit_stream.py`` against ``fs/literal_edit.plan_edit`` (tracker issue 5).

For random file texts (CRLF, LF, lone CR, ``\\r\\r\\n``, multi-byte characters), random
``old_string``/``new_string`` (including line breaks and lone surrogates) and random tiny piece
sizes — so pieces split CRLF pairs, characters and matches anywhere — ``EditScan`` +
``EditRewriter`` must make exactly the decision ``plan_edit`` makes (not found, ambiguous with
its count, or success) and write exactly the bytes the provider writes for ``plan_edit``'s text,
in both profiles (``keep_bytes`` True = DEVIATIONS D2, False = the reference's whole-file
rewrite in its detected style, REFERENCE-SPEC §2.7, §2.11).

Not covered here: the provider's streamed edit on disk (text rules, BOM, locks, atomic write:
tests/integration/fs_local/test_large_files.py).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsh_fs.fs.literal_edit import EditFailure, plan_edit
from dsh_fs.fs.literal_edit_stream import DETECT_HEAD_BYTES, EditRewriter, EditScan
from dsh_fs.fs.text import normalize
from dsh_fs.fs.provider_rules import encode_text

PROPS = settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)

PARTS = ["a", "b", "ab", "\n", "\r", "\r\n", "\r\r\n", "é", "😀", " "]


def in_memory(text: str, old: str, new: str, replace_all: bool, keep_bytes: bool,
              overlapping: bool = False) -> tuple[Any, ...]:
    try:
        plan = plan_edit(text, old, new, replace_all, keep_bytes=keep_bytes, overlapping=overlapping)
    except EditFailure as failure:
        return ("fail", failure.kind, failure.count)
    return ("ok", encode_text(plan.text))


def pieces(data: bytes, sizes: list[int]) -> list[bytes]:
    out, pos, i = [], 0, 0
    while pos < len(data):
        size = sizes[i % len(sizes)]
        out.append(data[pos : pos + size])
        pos += size
        i += 1
    return out


def streamed(text: str, old_string: str, new_string: str, replace_all: bool, keep_bytes: bool,
             sizes: list[int], count_lines: bool = True, record: int = 0, overlapping: bool = False) -> tuple[Any, ...]:
    """The provider's decisions, made from the two passes (as ``fs_local.large_edit.edit_large_file`` does)."""
    old, new = normalize(old_string), normalize(new_string)
    if old == "":
        return ("fail", "empty", 0)
    raw = text.encode("utf-8")
    chunks = pieces(raw, sizes)
    scan = EditScan(old.encode("utf-8", "surrogatepass"), count_lines=count_lines, record=record,
                    overlapping=overlapping and not replace_all)
    for chunk in chunks:
        scan.feed(chunk)
    scan.finish()
    if scan.uncounted:  # the caller's share of lazy line counting
        scan.newlines += raw.count(b"\n", 0, scan.uncounted)
    if scan.matches == 0:
        return ("fail", "not_found", 0)
    if scan.occurrences > 1 and not replace_all:
        return ("fail", "ambiguous", scan.occurrences)
    if scan.positions is not None:
        assert len(scan.positions) == scan.matches
    rewriter = EditRewriter(old, new, keep_bytes=keep_bytes, style=scan.style(keep_bytes), has_crlf=scan.crlf > 0,
                            has_cr=scan.has_cr, crlf_only=scan.crlf_only, positions=scan.positions)
    out = b"".join(buffer for chunk in chunks for buffer in rewriter.feed(chunk)) + b"".join(rewriter.finish())
    assert rewriter.matches == scan.matches
    return ("ok", out)


texts = st.lists(st.sampled_from(PARTS), max_size=80).map("".join)
strings = st.lists(st.sampled_from(PARTS + ["x"]), max_size=5).map("".join)


@st.composite
def edits(draw: st.DrawFn) -> tuple[str, str, str]:
    text = draw(texts)
    if text and draw(st.booleans()):
        start = draw(st.integers(0, len(text) - 1))
        old = text[start : start + draw(st.integers(1, 6))]  # an existing span: matches are likely
    else:
        old = draw(strings)
    new = draw(strings)
    if draw(st.integers(0, 15)) == 0:
        new += draw(st.sampled_from(["\ud83d", "\ude00", "\udc00\ud800"]))  # reference-profile input
    return text, old, new


@PROPS
@given(case=edits(), replace_all=st.booleans(), keep_bytes=st.booleans(),
       sizes=st.lists(st.integers(1, 7), min_size=1, max_size=4), count_lines=st.booleans(),
       record=st.sampled_from([0, 1, 3, 1000]), overlapping=st.booleans())
def test_streamed_edit_writes_exactly_what_plan_edit_writes(case: tuple[str, str, str], replace_all: bool,
                                                            keep_bytes: bool, sizes: list[int], count_lines: bool,
                                                            record: int, overlapping: bool) -> None:
    text, old, new = case
    got = streamed(text, old, new, replace_all, keep_bytes, sizes, count_lines, record, overlapping)
    assert got == in_memory(text, old, new, replace_all, keep_bytes, overlapping)


@pytest.mark.parametrize("keep_bytes", [True, False])
def test_every_occurrence_across_piece_boundaries_is_replaced(keep_bytes: bool) -> None:
    text = "ab\r\n" * 1000 + "tail"
    for size in (1, 2, 3, 5, 4096):
        for count_lines, record in ((True, 0), (False, 10), (True, 5000)):
            assert streamed(text, "b\nab", "X\nY", True, keep_bytes, [size], count_lines, record) == in_memory(
                text, "b\nab", "X\nY", True, keep_bytes)


def test_overlapping_needles_count_left_to_right() -> None:
    for size in (1, 2, 3):
        for record in (0, 1, 10):
            assert streamed("aaaa", "aa", "b", False, True, [size], record=record) == ("fail", "ambiguous", 2)
            assert streamed("aaaaa", "aa", "b", True, True, [size], record=record) == ("ok", b"bba")


def test_reference_style_comes_from_the_first_4096_units() -> None:
    # a CRLF file whose first 4096 characters hold no line break is rewritten as LF (§2.7)
    text = "x" * 20_000 + "\r\nend\r\n"
    scan = EditScan(b"end")
    for chunk in pieces(text.encode(), [1000]):
        scan.feed(chunk)
    scan.finish()
    assert len(scan.head) == DETECT_HEAD_BYTES and scan.style(False) == "LF" and scan.style(True) == "CRLF"
    assert streamed(text, "end", "END", False, False, [1000]) == in_memory(text, "end", "END", False, False)
    assert streamed(text, "end", "END", False, False, [1000])[1].endswith(b"x\nEND\n")


def test_empty_old_string_is_refused_by_the_scan() -> None:
    with pytest.raises(ValueError):
        EditScan(b"")
