"""Windowed reads on bytes: ``fs/window.py`` (collector, compact results), ``fs/byte_text.py``
(incremental validation), ``fs_local/line_index.py`` and ``fs_local/scan.py`` (tracker issue 5).

The oracle is the text path the read tool used before: ``decode_text`` + ``WindowBuilder`` for a
whole-file read (``streamed=False``), and ``TextStreamDecoder`` over ``chunk``-sized pieces +
``WindowBuilder``, abandoned when the window stops, for a streamed one. ``scan_window`` must give
the same result or the same error (reason and D6 detail, or the out-of-range message) for any
bytes — BOMs, foreign byte-order marks, NULs, invalid and truncated UTF-8, CR/LF mixes, long
lines — any window (both profiles' flags), any read piece size and with or without a line index
from earlier scans of the same file (REFERENCE-SPEC §2.5, §4.6.2–§4.6.4; DEVIATIONS A1, D6, D10).

Not covered here: the provider glue (index trust, inline reads) and the read tool end to end
(tests/integration/fs_local/test_large_files.py).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsh_fs.fs.byte_text import Utf8Validator, check_head
from dsh_fs.fs.errors import FsError
from dsh_fs.fs.text import NUL_SAMPLE, NotTextError, TextStreamDecoder, decode_text
from dsh_fs.fs.window import (
    ReadWindow,
    WindowBuilder,
    WindowCollector,
    WindowLine,
    WindowResult,
    nth_index,
    window_text,
)
from dsh_fs.fs_local.line_index import MAX_CHECKPOINTS, MIN_STRIDE, IndexCache, LineIndex, stride_for
from dsh_fs.fs_local.scan import scan_window
from dsh_fs.tool_fs import read_render
from dsh_fs.tool_fs.read_render import format_read_output

PROPS = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)

BOM = b"\xef\xbb\xbf"
ATOMS = [b"a", b"bc", b"\n", b"\r", b"\r\n", "é".encode(), "€".encode(), "😀".encode(), b"xyzxyzxyz", b" ", b"\n\n"]
BAD = [b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xe2\x82", b"\x00", b"\xf0\x9f\x98", b"\xc0\xaf"]


# -- oracle ---------------------------------------------------------------------------------

Outcome = tuple[Any, ...]


def _summary(result: WindowResult) -> Outcome:
    return ("ok", result.offset, [(line.number, line.text) for line in result.lines], result.total_lines,
            result.truncated_by_bytes)


def oracle(raw: bytes, window: ReadWindow, *, streamed: bool, foreign_boms: bool, chunk: int) -> Outcome:
    """What windowing the decoded text gives (the read tool's path before the byte scanner)."""
    try:
        if not streamed:
            result = window_text([decode_text(raw, nul_scan=NUL_SAMPLE, foreign_boms=foreign_boms)], window, "/f")
        else:
            decoder = TextStreamDecoder(foreign_boms=foreign_boms)
            builder = WindowBuilder(window)
            for start in range(0, len(raw), chunk):
                if not builder.feed(decoder.feed(raw[start : start + chunk])):
                    break
            else:
                builder.feed(decoder.finish())
            result = builder.finish("/f")
        return _summary(result)
    except NotTextError as exc:
        return ("not text", exc.reason, exc.detail)
    except FsError as exc:
        return ("fs", str(exc))


class File:
    """One file on disk for the scanner (removed by the caller's tmp dir)."""

    def __init__(self, directory: str, raw: bytes) -> None:
        self.path = os.path.join(directory, "f")
        with open(self.path, "wb") as handle:
            handle.write(raw)
        self.size = len(raw)

    def scan(self, window: ReadWindow, **options: Any) -> tuple[Outcome, LineIndex | None]:
        fd = os.open(self.path, os.O_RDONLY)
        try:
            outcome = scan_window(fd, window, display="/f", **options)
            return _summary(outcome.result), outcome.index
        except NotTextError as exc:
            return ("not text", exc.reason, exc.detail), None
        except FsError as exc:
            return ("fs", str(exc)), None
        finally:
            os.close(fd)


@pytest.fixture
def tmpdir_path() -> Iterator[str]:
    with tempfile.TemporaryDirectory() as path:
        yield path


# -- strategies ---------------------------------------------------------------------------------

@st.composite
def contents(draw: st.DrawFn) -> bytes:
    parts = draw(st.lists(st.sampled_from(ATOMS).map(lambda a: a) | st.sampled_from(ATOMS).map(lambda a: a * 40),
                          max_size=60))
    raw = b"".join(parts)
    if draw(st.booleans()):
        raw = raw * draw(st.integers(1, 1200))  # big enough for several 8 KiB chunks
        raw = raw[: draw(st.integers(0, 40_000))]
    prefix = draw(st.sampled_from([b"", b"", b"", BOM, b"\xff\xfe", b"\xfe\xff", b"\xef\xbb"]))
    raw = prefix + raw
    if raw and draw(st.integers(0, 3)) == 0:
        at = draw(st.integers(0, len(raw)))
        raw = raw[:at] + draw(st.sampled_from(BAD)) + raw[at:]
    return raw


@st.composite
def windows(draw: st.DrawFn) -> ReadWindow:
    better = draw(st.booleans())
    return ReadWindow(
        offset=draw(st.sampled_from([1, 1, 2, 3]) | st.integers(1, 4000)),
        limit=draw(st.sampled_from([1, 2, 5, 2000]) | st.integers(1, 50)),
        max_line_length=draw(st.sampled_from([1, 2, 5, 40, 2000])),
        max_bytes=draw(st.sampled_from([1, 10, 100, 51_200, 10**6]) | st.integers(1, 3000)),
        always_progress=better,
        exact_truncation=better,
    )


options = st.fixed_dictionaries(
    {
        "streamed": st.booleans(),
        "foreign_boms": st.booleans(),
        "chunk": st.sampled_from([8192, 16384]),
        "piece": st.sampled_from([1, 2, 3, 7, 64, 1000, None]),
    }
)


# -- scan_window vs the oracle ---------------------------------------------------------------------------

@PROPS
@given(raw=contents(), window=windows(), opts=options, hint=st.sampled_from(["exact", "unknown", "short"]))
def test_scan_equals_windowing_the_decoded_text(raw: bytes, window: ReadWindow, opts: dict[str, Any], hint: str) -> None:
    with tempfile.TemporaryDirectory() as directory:
        file = File(directory, raw)
        size_hint = {"exact": len(raw), "unknown": -1, "short": max(0, len(raw) - 5)}[hint]
        expected = oracle(raw, window, streamed=opts["streamed"], foreign_boms=opts["foreign_boms"], chunk=opts["chunk"])
        got, _ = file.scan(window, size_hint=size_hint, **opts)
        assert got == expected


@PROPS
@given(raw=contents(), first=windows(), later=st.lists(st.tuples(windows(), st.booleans()), min_size=1, max_size=4),
       opts=options)
def test_reads_with_a_line_index_equal_fresh_reads(raw: bytes, first: ReadWindow, later: list[tuple[ReadWindow, bool]],
                                                   opts: dict[str, Any]) -> None:
    """Indexes learned by earlier scans (complete, or partial after a streamed read stopped by
    the byte cap) never change a later result or error."""
    chunk, foreign_boms = opts["chunk"], opts["foreign_boms"]
    with tempfile.TemporaryDirectory() as directory:
        file = File(directory, raw)
        _, index = file.scan(first, **opts)
        for window, streamed in later:
            expected = oracle(raw, window, streamed=streamed, foreign_boms=foreign_boms, chunk=chunk)
            got, learned = file.scan(window, streamed=streamed, foreign_boms=foreign_boms, chunk=chunk,
                                     piece=opts["piece"], index=index)
            assert got == expected
            if learned is not None:
                assert index is None or learned.scanned_to >= index.scanned_to
                index = learned


def _lines(count: int, width: int = 20) -> bytes:
    return b"".join(b"%0*d\n" % (width - 1, i) for i in range(1, count + 1))


def test_a_streamed_read_stopped_by_the_byte_cap_validates_only_its_chunk(tmpdir_path: str) -> None:
    raw = _lines(2000) + b"\xff tail\n"  # 40 000 bytes of text, then an invalid byte
    file = File(tmpdir_path, raw)
    window = ReadWindow(max_bytes=300)
    got, index = file.scan(window, streamed=True, foreign_boms=True, chunk=8192)
    assert got[0] == "ok" and got[4] is True  # the stream never reached the bad byte
    assert index is not None and index.scanned_to == 8192 and not index.complete
    assert got == oracle(raw, window, streamed=True, foreign_boms=True, chunk=8192)
    whole, _ = file.scan(window, streamed=False, foreign_boms=True, chunk=8192, index=index)
    assert whole == ("not text", "invalid UTF-8 text", "byte 0xFF at offset 40000, line 2001")


def test_a_truncated_character_at_the_end_is_reported_unless_a_stream_stopped_before(tmpdir_path: str) -> None:
    raw = b"one\ntwo\nthree \xc3"
    file = File(tmpdir_path, raw)
    detail = "byte 0xC3 at offset 14, line 3; the file ends inside a multi-byte character"
    assert file.scan(ReadWindow(), streamed=False, foreign_boms=True)[0] == ("not text", "invalid UTF-8 text", detail)
    assert file.scan(ReadWindow(), streamed=True, foreign_boms=True)[0] == ("not text", "invalid UTF-8 text", detail)
    capped = ReadWindow(max_bytes=4)  # stops at line 2: a stream consumer never flushes
    assert file.scan(capped, streamed=True, foreign_boms=True)[0] == ("ok", 1, [(1, "one")], 2, True)


def test_nul_in_the_head_wins_over_invalid_bytes_before_it(tmpdir_path: str) -> None:
    raw = b"ab\xff\ncd\x00\n"
    file = File(tmpdir_path, raw)
    assert file.scan(ReadWindow(), streamed=False, foreign_boms=True, piece=1)[0] == (
        "not text", "binary file", "NUL byte at offset 6, line 2"
    )


def test_long_lines_are_decoded_only_as_far_as_shown(tmpdir_path: str) -> None:
    line = ("é" * 300_000).encode() + b"\r\n"  # 600 kB line ending in CR LF, spread over many pieces
    file = File(tmpdir_path, b"x\n" + line + b"y")
    for exact in (True, False):
        window = ReadWindow(max_line_length=10, always_progress=exact, exact_truncation=exact)
        got, _ = file.scan(window, streamed=False, foreign_boms=True, chunk=8192, piece=1000)
        assert got == ("ok", 1, [(1, "x"), (2, "é" * 10 + "... (line truncated to 10 chars)"), (3, "y")], 3, False)


def test_a_cr_at_the_cap_of_a_long_line_follows_each_profile(tmpdir_path: str) -> None:
    file = File(tmpdir_path, b"abcd\refgh\n" + b"z" * 20_000 + b"\r\n")
    reference = ReadWindow(max_line_length=4)
    better = ReadWindow(max_line_length=4, always_progress=True, exact_truncation=True)
    assert file.scan(reference, streamed=False, foreign_boms=False, chunk=8192, piece=3)[0][2] == [
        (1, "abcd"), (2, "zzzz... (line truncated to 4 chars)")]
    assert file.scan(better, streamed=False, foreign_boms=True, chunk=8192, piece=3)[0][2] == [
        (1, "abcd... (line truncated to 4 chars)"), (2, "zzzz... (line truncated to 4 chars)")]


def test_a_complete_index_answers_out_of_range_and_totals_without_reading(tmpdir_path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    raw = _lines(5000)
    file = File(tmpdir_path, raw)
    _, index = file.scan(ReadWindow(offset=4990), streamed=True, foreign_boms=True, chunk=8192)
    assert index is not None and index.complete and index.total_lines == 5000
    read: list[int] = []
    real = os.pread

    def counting(fd: int, n: int, offset: int) -> bytes:
        data = real(fd, n, offset)
        read.append(len(data))
        return data

    monkeypatch.setattr(os, "pread", counting)
    assert file.scan(ReadWindow(offset=5001), streamed=True, foreign_boms=True, chunk=8192, index=index)[0] == (
        "fs", 'offset 5001 is out of range for "/f" (5000 lines)')
    assert read == []
    got, learned = file.scan(ReadWindow(offset=2500, limit=3), streamed=True, foreign_boms=True, chunk=8192, index=index)
    assert got == ("ok", 2500, [(2500, "%019d" % 2500), (2501, "%019d" % 2501), (2502, "%019d" % 2502)], 5000, False)
    assert learned is None and sum(read) <= 2 * 8192  # one checkpoint's chunk, not the file


# -- the pieces -----------------------------------------------------------------------------------------

@PROPS
@given(raw=contents(), cuts=st.lists(st.integers(1, 50), min_size=1, max_size=8))
def test_incremental_validation_reports_what_decoding_reports(raw: bytes, cuts: list[int]) -> None:
    raw = raw.replace(b"\0", b"")
    try:
        decode_text(raw, nul_scan=None)
        expected: Any = None
    except NotTextError as exc:
        expected = (exc.reason, exc.detail)
    validator = Utf8Validator()
    got: Any = None
    pos = newlines = i = 0
    try:
        while pos < len(raw):
            piece = raw[pos : pos + cuts[i % len(cuts)]]
            i += 1
            validator.feed(piece, newlines)
            newlines += piece.count(b"\n")
            pos += len(piece)
        validator.finish(newlines)
    except NotTextError as exc:
        got = (exc.reason, exc.detail)
    assert got == expected


def test_check_head_applies_the_boms_then_the_nul_sample() -> None:
    with pytest.raises(NotTextError) as caught:
        check_head(b"\xff\xfea\x00", foreign_boms=True)
    assert caught.value.detail == "UTF-16LE byte-order mark; only UTF-8 is supported"
    with pytest.raises(NotTextError) as caught:
        check_head(b"\xff\xfea\x00", foreign_boms=False)
    assert caught.value.detail == "NUL byte at offset 3, line 1"
    check_head(b"a" * NUL_SAMPLE + b"\x00", foreign_boms=True)  # beyond the sample: fine


@given(text=st.text(alphabet="ab\n", max_size=300), n=st.integers(1, 60), start=st.integers(0, 20))
def test_nth_index_finds_the_nth_separator(text: str, n: int, start: int) -> None:
    text = text * 40
    found = [i for i, ch in enumerate(text) if ch == "\n" and i >= start]
    if len(found) >= n:
        assert nth_index(text, "\n", start, n) == found[n - 1]
        assert nth_index(text.encode(), b"\n", start, n) == found[n - 1]


line_text = st.text(alphabet=st.sampled_from(["a", "é", "😀", "\r", " "]), max_size=12)


@PROPS
@given(lines=st.lists(line_text, max_size=40), window=windows())
def test_bulk_lines_equal_one_at_a_time(lines: list[str], window: ReadWindow) -> None:
    window = ReadWindow(offset=1, limit=window.limit, max_line_length=window.max_line_length,
                       max_bytes=window.max_bytes, always_progress=window.always_progress,
                       exact_truncation=window.exact_truncation)
    bulk = WindowCollector(window)
    taken = bulk.add_lines(lines)
    single = WindowCollector(window)
    for count, line in enumerate(lines, 1):
        if not single.selecting:
            assert taken == count - 1
            break
        single.add(line[: window.max_line_length + 1], len(line), line.endswith("\r"))
    else:
        assert taken == len(lines)
    assert bulk.result == single.result
    assert (bulk.full, bulk.stopped) == (single.full, single.stopped)


def test_compact_results_render_and_compare_like_line_lists() -> None:
    compact = WindowResult(offset=3, total_lines=9)
    compact._extend(["c", "d"])
    listed = WindowResult(offset=3, lines=[WindowLine(3, "c"), WindowLine(4, "d")], total_lines=9)
    assert compact.texts == ["c", "d"] and listed.texts is None
    assert format_read_output("/f", compact) == format_read_output("/f", listed)
    assert compact == listed
    compact.lines.append(WindowLine(5, "e"))  # materialized: the list is now the truth
    assert compact.texts is None and compact.count() == 3
    assert "5: e" in format_read_output("/f", compact)
    assert read_render.WindowResult is WindowResult and read_render.ReadWindow is ReadWindow


# -- line index --------------------------------------------------------------------------------------------

def test_start_for_picks_the_nearest_checkpoint_before_the_line() -> None:
    from array import array

    index = LineIndex(stride=10, offsets=array("q", [0, 10, 20]), newlines=array("q", [0, 4, 4]),
                      scanned_to=30, newlines_scanned=9)
    assert index.start_for(1) == (0, 0)
    assert index.start_for(5) == (0, 0)  # line 5 starts after newline 4, which lies before offset 10
    assert index.start_for(6) == (20, 4)
    assert index.start_for(10) == (20, 4)
    assert index.start_for(11) == (30, 9)


def test_stride_keeps_checkpoints_bounded() -> None:
    assert stride_for(0, 1024) == 1024
    assert stride_for(1024 * MAX_CHECKPOINTS, 1024) == 1024
    assert stride_for(1024 * MAX_CHECKPOINTS + 1, 1024) == 2048
    assert stride_for(10**6) == MIN_STRIDE
    assert -(-(10**12) // stride_for(10**12)) <= MAX_CHECKPOINTS


def test_index_cache_is_a_small_lru_that_keeps_the_furthest_index() -> None:
    cache = IndexCache(2)
    partial, further, complete = LineIndex(stride=1, scanned_to=10), LineIndex(stride=1, scanned_to=20), \
        LineIndex(stride=1, scanned_to=30, total_lines=3)
    cache.put("a", "v1", further)
    cache.put("a", "v1", partial)
    assert cache.get("a", "v1") is further
    cache.put("a", "v1", complete)
    assert cache.get("a", "v1") is complete
    cache.put("a", "v2", partial)  # a newer version replaces the older one
    assert cache.get("a", "v1") is None and cache.get("a", "v2") is partial
    cache.put("b", "v1", partial)
    cache.put("c", "v1", partial)
    assert len(cache) == 2 and cache.get("a", "v2") is None
    IndexCache(0).put("a", "v1", partial)
