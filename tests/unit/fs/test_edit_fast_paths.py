"""The edit path's fast paths against the general ones they stand for (a speed pass).

* ``plan_edit`` finds a one-match edit with two ``find`` s and slices the match out, and skips
  the CRLF work of a text without CR: for random texts (CRLF, LF, lone CR, multi-byte
  characters) and strings, in both profiles, its plan (or failure, with its count) equals the
  general algorithm's — ``str.count``, then ``str.replace`` over the normalized text — kept
  here as the oracle (``general_plan``).
* ``EditScan(exact=False)`` + ``EditRewriter(count=False)`` (a ``replace_all`` whose count is
  moot, ``fs_local.large_edit._count_is_moot``): the same bytes, the same not-found decision,
  and a match count that is a lower bound — for any piece sizes, so matches straddle pieces.
* ``normalize`` returns its argument itself when there is no CR; version digests of bytes and
  of files agree across the 1 MiB piece boundary.

Not covered here: the streamed edit on disk, racy and not (tests/integration/fs_local/test_large_files.py).
"""

from __future__ import annotations

import os
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsh_fs.fs.literal_edit import EditFailure, plan_edit, splice
from dsh_fs.tool_fs.diff import _diff_lines, compute_hunk_diffs
from dsh_fs.fs.literal_edit_stream import EditRewriter, EditScan
from dsh_fs.fs.occurrences import borders, count_overlapping
from dsh_fs.fs.text import detect, normalize, restore
from dsh_fs.fs.types import EditRequest
from dsh_fs.fs_local import versions
from dsh_fs.fs_local.large_edit import _count_is_moot
from dsh_fs.fs_local.rules import LocalRules
from dsh_fs.core.profile import Profile

PROPS = settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)

PARTS = ["a", "b", "ab", "\n", "\r", "\r\n", "é", "😀", " "]
texts = st.lists(st.sampled_from(PARTS), max_size=60).map("".join)
strings = st.lists(st.sampled_from(PARTS + ["x"]), min_size=1, max_size=4).map("".join)


def general_plan(raw: str, old_string: str, new_string: str, replace_all: bool, *, keep_bytes: bool,
                 overlapping: bool) -> tuple[Any, ...]:
    """The matcher without fast paths: count every occurrence, then replace them all."""
    content = raw.replace("\r\n", "\n")
    old, new = old_string.replace("\r\n", "\n"), new_string.replace("\r\n", "\n")
    if old == "":
        return ("fail", "empty", 0)
    count = content.count(old)
    if count == 0:
        return ("fail", "not_found", 0)
    if not replace_all:
        found = count_overlapping(content, old) if overlapping and borders(old) else count
        if found > 1:
            return ("fail", "ambiguous", found)
    if not keep_bytes:
        edited = content.replace(old, new)
        return ("ok", restore(edited, detect(raw)), content, edited)
    if "\r\n" not in raw:
        text = raw.replace(old, new)
        return ("ok", text, content, text)
    starts, pos = [], content.find(old)
    while pos >= 0:
        starts.append(pos)
        pos = content.find(old, pos + len(old))
    text = splice(raw, ((start, start + len(old), new) for start in starts))
    return ("ok", text, content, normalize(text))


def fast_plan(raw: str, old: str, new: str, replace_all: bool, *, keep_bytes: bool, overlapping: bool) -> tuple[Any, ...]:
    try:
        plan = plan_edit(raw, old, new, replace_all, keep_bytes=keep_bytes, overlapping=overlapping)
    except EditFailure as failure:
        return ("fail", failure.kind, failure.count)
    return ("ok", plan.text, plan.before, plan.after)


@st.composite
def edits(draw: st.DrawFn) -> tuple[str, str, str]:
    text = draw(texts)
    if text and draw(st.booleans()):
        start = draw(st.integers(0, len(text) - 1))
        old = text[start : start + draw(st.integers(1, 5))]  # an existing span: one match is likely
    else:
        old = draw(strings)
    return text, old, draw(strings)


@PROPS
@given(case=edits(), replace_all=st.booleans(), keep_bytes=st.booleans(), overlapping=st.booleans())
def test_plan_edit_equals_the_general_algorithm(case: tuple[str, str, str], replace_all: bool, keep_bytes: bool,
                                                overlapping: bool) -> None:
    text, old, new = case
    assert fast_plan(text, old, new, replace_all, keep_bytes=keep_bytes, overlapping=overlapping) == general_plan(
        text, old, new, replace_all, keep_bytes=keep_bytes, overlapping=overlapping)


def test_a_one_match_edit_slices_out_exactly_that_match() -> None:
    source = "".join(f"value_{i} = compute()  # step {i}\n" for i in range(200))
    plan = plan_edit(source, "# step 100\n", "# STEP 100\n", False, keep_bytes=True, overlapping=True)
    assert plan.text == source.replace("# step 100\n", "# STEP 100\n") and plan.before is source
    assert plan_edit("x-y-x", "y", "YY", False, keep_bytes=True).text == "x-YY-x"
    assert plan_edit("aXa", "a", "b", True, keep_bytes=True).text == "bXb"


def test_normalize_returns_a_text_without_cr_itself() -> None:
    text = "no carriage return\nhere\n" * 10
    assert normalize(text) is text
    assert normalize("a\r\nb\rc\r\n") == "a\nb\rc\n"


def _pieces(data: bytes, sizes: list[int]) -> list[bytes]:
    out, pos, i = [], 0, 0
    while pos < len(data):
        out.append(data[pos : pos + sizes[i % len(sizes)]])
        pos += sizes[i % len(sizes)]
        i += 1
    return out


def _stream(text: str, old: str, new: str, sizes: list[int], record: int, *, exact: bool) -> tuple[int, bytes | None]:
    """(matches the scan reports, the rewritten content or ``None`` when there is no match)."""
    raw = text.encode("utf-8")
    chunks = _pieces(raw, sizes)
    scan = EditScan(old.encode("utf-8", "surrogatepass"), count_lines=True, record=record, exact=exact)
    for chunk in chunks:
        scan.feed(chunk)
    scan.finish()
    if scan.matches == 0:
        return 0, None
    rewriter = EditRewriter(old, new, keep_bytes=True, style=scan.style(True), has_crlf=scan.crlf > 0,
                            has_cr=scan.has_cr, crlf_only=scan.crlf_only, positions=scan.positions, count=exact)
    out = b"".join(b for chunk in chunks for b in rewriter.feed(chunk)) + b"".join(rewriter.finish())
    if exact:
        assert rewriter.counted and rewriter.matches == scan.matches
    return scan.matches, out


SAME_SIZE = [("ab", "xy"), ("a", "b"), ("é", "ab"), ("b a", "b_a"), ("aa", "bb"), ("😀", "abcd"), ("\rb", "\rc")]


@PROPS
@given(text=texts, pair=st.sampled_from(SAME_SIZE), sizes=st.lists(st.integers(1, 7), min_size=1, max_size=4),
       record=st.sampled_from([0, 1, 3, 1000]))
def test_a_replace_all_whose_count_is_moot_writes_the_same_bytes_uncounted(
        text: str, pair: tuple[str, str], sizes: list[int], record: int) -> None:
    old, new = pair
    rules = LocalRules.for_profile(Profile.parse("default"))
    assert _count_is_moot(EditRequest(old_string=old, new_string=new, replace_all=True), old, new, rules)
    exact_matches, exact_out = _stream(text, old, new, sizes, record, exact=True)
    matches, out = _stream(text, old, new, sizes, record, exact=False)
    assert out == exact_out
    assert (matches == 0) == (exact_matches == 0) and matches <= exact_matches
    if exact_out is not None:  # and what the in-memory edit writes
        assert exact_out == plan_edit(text, old, new, True, keep_bytes=True).text.encode("utf-8")


def test_the_count_is_moot_only_where_no_outcome_depends_on_it() -> None:
    default, reference = (LocalRules.for_profile(Profile.parse(p)) for p in ("default", "reference"))

    def moot(old: str, new: str, replace_all: bool = True, rules: LocalRules = default) -> bool:
        return _count_is_moot(EditRequest(old_string=old, new_string=new, replace_all=replace_all), old, new, rules)

    assert moot("2024-05-01", "2025-05-01") and moot("é", "ab")
    assert not moot("2024", "2025", replace_all=False)  # the one-match rule needs the count
    assert not moot("2024", "2025", rules=reference)  # the reference rewrites the whole text
    assert not moot("ab", "abc") and not moot("abc", "ab")  # the size moves with the count (D16)
    assert not moot("a\nb", "c\nd") and not moot("ab", "a\n") and not moot("a\r", "bc")  # line breaks
    assert not moot("ab", "\ud800")  # a lone surrogate is written as three bytes


def test_digests_of_bytes_and_of_files_agree_across_the_piece_size(tmp_path: Any) -> None:
    for size in (0, 10, versions._PIECE - 1, versions._PIECE, versions._PIECE + 1, 3 * versions._PIECE + 5):
        data = os.urandom(size)
        path = str(tmp_path / f"f{size}")
        with open(path, "wb") as handle:
            handle.write(data)
        digest = versions.digest_bytes(data)
        assert len(digest) == 24 and digest == versions.digest_file(path, os.stat(path))
    assert versions.digest_bytes(b"a") != versions.digest_bytes(b"b")


line_texts = st.lists(st.sampled_from(["a\n", "b\n", "a", "\n", "ab\n", "é\n", "x\r\n"]), max_size=30).map("".join)


@PROPS
@given(before=line_texts, start=st.integers(0, 40), length=st.integers(0, 8), new=line_texts,
       lie=st.tuples(st.integers(-3, 3), st.integers(-3, 3)))
def test_the_diff_of_an_edit_is_the_same_with_its_span_given(before: str, start: int, length: int, new: str,
                                                             lie: tuple[int, int]) -> None:
    """``EditOutcome.changed`` only says where to look: right or wrong, the hunks are the ones
    computed without it."""
    start = min(start, len(before))
    end = min(len(before), start + length)
    after = before[:start] + new[:6] + before[end:]
    plain = compute_hunk_diffs("p", before, after)
    assert compute_hunk_diffs("p", before, after, changed=(start, end)) == plain
    wrong = (max(0, start + lie[0]), max(0, min(len(before), end + lie[1])))
    assert compute_hunk_diffs("p", before, after, changed=wrong) == plain
    def tokens(components: list[Any]) -> list[Any]:
        return [(added, removed, list(lines)) for added, removed, lines in components]

    assert tokens(_diff_lines(before, after, changed=(start, end))) == tokens(_diff_lines(before, after))


def test_a_one_match_plan_gives_its_span_and_the_provider_passes_it_on() -> None:
    plan = plan_edit("one\ntwo\nthree\n", "two", "2", False, keep_bytes=True)
    assert plan.changed == (4, 7) and plan.after == plan.before[:4] + "2" + plan.before[7:]
    assert plan_edit("a a", "a", "b", True, keep_bytes=True).changed is None  # several replacements
