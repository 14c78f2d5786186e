"""Counting and replacing occurrences: ``fs/occurrences.py`` and ``fs/literal_edit.plan_edit``
against slow, obviously right models (DEVIATIONS D2, D15, D16; tracker issue 12 item 4,
issue 13 item 1).

* ``count_overlapping`` and ``greedy_end`` equal a position-by-position count and the
  reference's left-to-right scan, on ``str`` and ``bytes``, with bounds, for random texts
  and for the shapes their shortcuts exist for (periodic runs, clusters of overlapping
  pairs at a non-multiple of the period, many small clusters).
* ``plan_edit`` in the default profile's byte-keeping mode writes what an index map from
  normalized to raw characters gives; the one-match rule counts overlapping occurrences
  (D15); ``edited_size`` is the size of the bytes actually written (D16).
* Cost is linear: a step budget (slice comparisons and searches counted by a text wrapper)
  grows with the number of clusters, not with the occurrences in a run. No timers.

Not covered here: the streamed matcher (tests/unit/fs/test_literal_edit_stream.py), providers
(tests/integration/tool_fs/test_properties.py, tests/integration/fs_local/test_large_files.py, the contract suite).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsh_fs.fs import occurrences
from dsh_fs.fs.literal_edit import EditFailure, edited_size, plan_edit
from dsh_fs.fs.occurrences import borders, count_overlapping, greedy_end
from dsh_fs.fs.provider_rules import encode_text
from dsh_fs.fs.text import dominant_style, normalize

PROPS = settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)


def all_positions(text: str, needle: str, start: int = 0, end: int | None = None) -> int:
    stop = len(text) if end is None else end
    return sum(1 for i in range(start, stop - len(needle) + 1) if text[i : i + len(needle)] == needle)


def scan(text: str, needle: str, start: int = 0) -> tuple[int, int]:
    found, pos, end = 0, start, start
    while True:
        at = text.find(needle, pos)
        if at < 0:
            return found, end
        found, pos, end = found + 1, at + len(needle), at + len(needle)


small = st.text(alphabet="ab\n", max_size=60)
needles = st.text(alphabet="ab\n", min_size=1, max_size=6)


@PROPS
@given(text=small, needle=needles, start=st.integers(0, 8), end=st.one_of(st.none(), st.integers(0, 70)))
def test_count_overlapping_counts_every_position(text: str, needle: str, start: int, end: int | None) -> None:
    expected = all_positions(text, needle, start, end)
    assert count_overlapping(text, needle, start, end) == expected
    assert count_overlapping(text.encode(), needle.encode(), start, end) == expected


@PROPS
@given(text=small, needle=needles, start=st.integers(0, 8))
def test_greedy_end_is_the_reference_scan(text: str, needle: str, start: int) -> None:
    assert greedy_end(text, needle, start) == scan(text, needle, start)
    assert greedy_end(text.encode(), needle.encode(), start) == scan(text, needle, start)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("a" * 5000, "aa"),  # one long run
        ("foo\n" * 3000, "foo\nfoo\n"),  # identical lines
        ("aabaa" + "abaa" * 2000, "aabaa"),  # occurrences 4 apart, the period is 3
        ("foo\nfoo\nfoo\nX\n" * 1000, "foo\nfoo\n"),  # many clusters of two: the engine takes over
        (("a" * 40 + "X") * 400, "aaaa"),  # many runs
        ("ab" * 3000 + "a", "aba"),
        ("a" * 20 + "b" + "a" * 20, "a" * 10 + "b" + "a" * 10),  # many short borders
        ("x" * 300, "x" * 40),  # more periods than witnesses are kept
    ],
)
def test_count_overlapping_on_the_shapes_it_shortcuts(text: str, needle: str) -> None:
    assert count_overlapping(text, needle) == all_positions(text, needle)
    assert greedy_end(text, needle) == scan(text, needle)


def test_borders_are_longest_first() -> None:
    assert borders("abab") == [2]
    assert borders("aaaa") == [3, 2, 1]
    assert borders("abcab") == [2]
    assert borders("abc") == []


class Counted(str):
    """A ``str`` whose searches and slice comparisons are counted (a step budget, not a timer)."""

    steps = 0

    def find(self, *args):  # type: ignore[no-untyped-def,override]
        Counted.steps += 1
        return str.find(self, *args)

    def count(self, *args):  # type: ignore[no-untyped-def,override]
        Counted.steps += 1
        return str.count(self, *args)

    def startswith(self, *args):  # type: ignore[no-untyped-def,override]
        Counted.steps += 1
        return str.startswith(self, *args)

    def __getitem__(self, key):  # type: ignore[no-untyped-def,override]
        Counted.steps += 1
        return str.__getitem__(self, key)


@pytest.mark.parametrize("runs", [10, 100, 1000])
def test_a_run_costs_a_few_steps_however_long_it_is(runs: int) -> None:
    """Long runs: the steps grow with the number of runs (and the log of their length), never
    with the occurrences inside them."""
    text = Counted(("a" * 1000 + "X") * runs)
    Counted.steps = 0
    assert count_overlapping(text, "aa") == 999 * runs
    assert Counted.steps <= 60 * runs


def test_many_small_clusters_are_counted_by_the_engine() -> None:
    text = Counted("foo\nfoo\nfoo\nX\n" * 20_000)
    Counted.steps = 0
    assert count_overlapping(text, "foo\nfoo\n") == 40_000
    assert Counted.steps <= 30 * occurrences._DENSE_CLUSTERS


# -- plan_edit: the default profile's byte-keeping mode against an index map (D2) ----------------

def keep_bytes_model(raw: str, old: str, new: str, replace_all: bool) -> tuple[object, ...]:
    """D2 by brute force: normalized character i is raw[index[i]:index[i + 1]]."""
    index, i = [], 0
    while i < len(raw):
        index.append(i)
        i += 2 if raw.startswith("\r\n", i) else 1
    index.append(len(raw))
    content, old, new = normalize(raw), normalize(old), normalize(new)
    if not old:
        return ("fail", "empty", 0)
    found, pos = [], 0
    while (at := content.find(old, pos)) >= 0:
        found.append(at)
        pos = at + len(old)
    overlapping = all_positions(content, old)
    if not found:
        return ("fail", "not_found", 0)
    if overlapping > 1 and not replace_all:
        return ("fail", "ambiguous", overlapping)
    replacement = new.replace("\n", "\r\n") if "\r\n" in raw and dominant_style(raw) == "CRLF" else new
    out, cursor = [], 0
    for at in found:
        out += [raw[cursor : index[at]], replacement]
        cursor = index[at + len(old)]
    return ("ok", "".join(out) + raw[cursor:])


parts = st.lists(st.sampled_from(["a", "b", "ab", "\n", "\r", "\r\n", "\r\r\n", "é", " "]), max_size=40).map("".join)
olds = st.lists(st.sampled_from(["a", "b", "\n", "\r", "\r\n", "é"]), min_size=1, max_size=5).map("".join)


@PROPS
@given(raw=parts, old=olds, new=olds, replace_all=st.booleans())
def test_keep_bytes_edit_equals_the_index_map_model(raw: str, old: str, new: str, replace_all: bool) -> None:
    try:
        plan = plan_edit(raw, old, new, replace_all, keep_bytes=True, overlapping=True)
        got: tuple[object, ...] = ("ok", plan.text)
    except EditFailure as failure:
        got = ("fail", failure.kind, failure.count)
    assert got == keep_bytes_model(raw, old, new, replace_all)


@PROPS
@given(raw=parts, old=olds, new=olds, keep_bytes=st.booleans())
def test_edited_size_is_the_size_written(raw: str, old: str, new: str, keep_bytes: bool) -> None:
    try:
        plan = plan_edit(raw, old, new, True, keep_bytes=keep_bytes)
    except EditFailure:
        return
    count = normalize(raw).count(normalize(old))
    size = edited_size(raw, len(raw.encode()), normalize(old), normalize(new), count, keep_bytes=keep_bytes)
    written = len(encode_text(plan.text))
    if keep_bytes:
        assert size == written
    else:  # the reference's rewrite may merge a lone CR at a replacement's edge with a line break
        assert abs(size - written) <= 2 * count
        if "\r" not in raw + old + new:
            assert size == written


# -- D15: overlapping occurrences ---------------------------------------------------------------

@pytest.mark.parametrize("keep_bytes", [True, False])
def test_D15_overlapping_occurrences_are_ambiguous(keep_bytes: bool) -> None:
    for text, old, count in (("foo\nfoo\nfoo\n", "foo\nfoo\n", 2), ("aaa\n", "aa", 2), ("aaaa", "aa", 3),
                             ("a\r\na\r\na\r\n", "a\na\n", 2)):
        with pytest.raises(EditFailure) as caught:
            plan_edit(text, old, "X", False, keep_bytes=keep_bytes, overlapping=True)
        assert (caught.value.kind, caught.value.count, caught.value.overlapping) == ("ambiguous", count, True)


def test_D15_a_real_double_match_is_not_called_overlapping() -> None:
    with pytest.raises(EditFailure) as caught:
        plan_edit("ab ab", "ab", "X", False, keep_bytes=True, overlapping=True)
    assert (caught.value.count, caught.value.overlapping) == (2, False)


def test_D15_reference_and_replace_all_keep_the_non_overlapping_scan() -> None:
    assert plan_edit("foo\nfoo\nfoo\n", "foo\nfoo\n", "X", False, keep_bytes=False).text == "Xfoo\n"
    assert plan_edit("aaa\n", "aa", "b", False, keep_bytes=True).text == "ba\n"
    for keep_bytes in (True, False):
        assert plan_edit("foo\nfoo\nfoo\n", "foo\nfoo\n", "X", True, keep_bytes=keep_bytes,
                         overlapping=True).text == "Xfoo\n"
        assert plan_edit("aaaaa", "aa", "b", True, keep_bytes=keep_bytes, overlapping=True).text == "bba"


# -- D16: the size limit --------------------------------------------------------------------

@pytest.mark.parametrize("keep_bytes", [True, False])
def test_D16_an_edit_over_the_limit_fails_before_it_is_built(keep_bytes: bool) -> None:
    with pytest.raises(EditFailure) as caught:
        plan_edit("a" * 1000, "a", "b" * 1000, True, keep_bytes=keep_bytes, max_bytes=999_999)
    assert (caught.value.kind, caught.value.size) == ("too_large", 1_000_000)
    assert len(plan_edit("a" * 1000, "a", "b" * 1000, True, keep_bytes=keep_bytes, max_bytes=1_000_000).text) == 1_000_000


def test_D16_crlf_spans_are_measured_exactly_near_the_limit() -> None:
    raw = "a\r\nb\nc\r\n" * 100  # mixed endings: the spans of "a\nb" differ in length
    plan = plan_edit(raw, "a\nb", "Z", True, keep_bytes=True)
    size = len(plan.text.encode())
    assert plan_edit(raw, "a\nb", "Z", True, keep_bytes=True, max_bytes=size).text == plan.text
    with pytest.raises(EditFailure) as caught:
        plan_edit(raw, "a\nb", "Z", True, keep_bytes=True, max_bytes=size - 1)
    assert caught.value.size == size
