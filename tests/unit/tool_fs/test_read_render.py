"""Pure read windowing and rendering: ``tool_fs/read_render.py``.

Covers REFERENCE-SPEC §7.6 (``read-render.spec.ts``: every ``buildWindow`` case, whole and
chunked), the ``formatReadOutput footer variants`` group of §7.5, the golden examples of
§4.6.6, the §4.6.3 quirks in the reference profile, and DEVIATIONS A1 (code-point line
caps, never a split character) and D10 (a read always makes progress).

Not covered here: how the read tool routes files to whole vs streamed reads and records
observations (tests/integration/tool_fs/test_tools.py); random windows vs an independent model
(tests/integration/tool_fs/test_properties.py).
"""

from __future__ import annotations

import tracemalloc
from collections.abc import AsyncIterator

import pytest

from dsh_fs.fs import FsError
from dsh_fs.tool_fs.read_render import (
    DEFAULT_READ_LIMIT,
    DEFAULT_READ_MAX_BYTES,
    DEFAULT_READ_MAX_LINE_LENGTH,
    DEFAULT_READ_STREAM_MIN_SIZE,
    ReadWindow,
    WindowLine,
    WindowResult,
    build_window,
    format_read_output,
    truncation_suffix,
)

pytestmark = pytest.mark.anyio

REFERENCE = {"always_progress": False, "exact_truncation": False}
DEFAULT = {"always_progress": True, "exact_truncation": True}


async def chunked(text: str, size: int) -> AsyncIterator[str]:
    for i in range(0, len(text), size):
        yield text[i : i + size]


async def window(text: str, *, size: int | None = None, profile: dict[str, bool] = REFERENCE, **caps: int) -> WindowResult:
    chunks = [text] if size is None else chunked(text, size)
    return await build_window(chunks, ReadWindow(**caps, **profile), "/f")


async def render(text: str, *, profile: dict[str, bool] = REFERENCE, **caps: int) -> str:
    return format_read_output("/f", await window(text, profile=profile, **caps))


def pairs(result: WindowResult) -> list[tuple[int, str]]:
    return [(line.number, line.text) for line in result.lines]


def envelope(body: str) -> str:
    return f"<path>/f</path>\n<type>file</type>\n<content>\n{body}\n</content>"


def test_defaults() -> None:
    assert (DEFAULT_READ_LIMIT, DEFAULT_READ_MAX_LINE_LENGTH, DEFAULT_READ_MAX_BYTES, DEFAULT_READ_STREAM_MIN_SIZE) == (
        2000, 2000, 51200, 10485760
    )
    assert truncation_suffix(2000) == "... (line truncated to 2000 chars)"


# ------------------------------------------------------------------------------------------
# §7.6 buildWindow
# ------------------------------------------------------------------------------------------

@pytest.fixture(params=[None, 1, 2, 7], ids=["whole", "chunk1", "chunk2", "chunk7"])
def size(request: pytest.FixtureRequest) -> int | None:
    return request.param  # type: ignore[no-any-return]


async def test_numbers_lines_and_reports_total_for_a_whole_file_read(size: int | None) -> None:
    """buildWindow: numbers lines and reports total for a whole-file read"""
    result = await window("alpha\nbeta\ngamma\n", size=size)
    assert pairs(result) == [(1, "alpha"), (2, "beta"), (3, "gamma")]
    assert (result.total_lines, result.truncated_by_bytes, result.offset) == (3, False, 1)


async def test_applies_offset_and_limit(size: int | None) -> None:
    """buildWindow: applies offset/limit"""
    result = await window("one\ntwo\nthree\nfour", size=size, offset=2, limit=2)
    assert pairs(result) == [(2, "two"), (3, "three")]
    assert result.total_lines == 4


async def test_strips_crlf(size: int | None) -> None:
    """buildWindow: strips CRLF"""
    result = await window("x\r\ny\r\n", size=size)
    assert pairs(result) == [(1, "x"), (2, "y")] and result.total_lines == 2


async def test_truncates_an_over_long_line(size: int | None) -> None:
    """buildWindow: truncates an over-long line"""
    result = await window("a" * 3000 + "\nb", size=None if size is None else 500)
    assert pairs(result) == [(1, "a" * 2000 + "... (line truncated to 2000 chars)"), (2, "b")]


async def test_caps_output_bytes_and_reports_truncated_by_bytes() -> None:
    """buildWindow: caps output bytes and reports truncatedByBytes"""
    result = await window(("y" * 100 + "\n") * 2000)
    assert result.truncated_by_bytes and len(result.lines) == 506
    assert result.lines[-1].number == 506


async def test_reads_an_empty_file_at_offset_1_as_zero_lines() -> None:
    """buildWindow: reads an empty file at offset 1 as zero lines"""
    result = await window("")
    assert (result.lines, result.total_lines, result.truncated_by_bytes) == ([], 0, False)


async def test_rejects_an_offset_past_eof(size: int | None) -> None:
    """buildWindow: rejects an offset past EOF"""
    with pytest.raises(FsError) as caught:
        await window("a\nb\n", size=size, offset=9)
    assert caught.value.code == "FS_NOT_FOUND"
    assert str(caught.value) == 'offset 9 is out of range for "/f" (2 lines)'


async def test_flushes_a_final_line_with_no_trailing_newline(size: int | None) -> None:
    """buildWindow: flushes a final line with no trailing newline"""
    result = await window("a\nlast", size=size)
    assert pairs(result) == [(1, "a"), (2, "last")]


async def test_handles_a_trailing_newline_without_a_dangling_empty_line(size: int | None) -> None:
    """buildWindow: handles a trailing newline (no dangling empty line)"""
    result = await window("a\nb\n", size=size)
    assert pairs(result) == [(1, "a"), (2, "b")] and result.total_lines == 2


async def test_caps_are_per_request_custom_max_line_length() -> None:
    """buildWindow: caps are per-request: truncates lines at a custom maxLineLength and names it in the suffix"""
    result = await window("abcdefgh\nxyz", max_line_length=5)
    assert pairs(result) == [(1, "abcde... (line truncated to 5 chars)"), (2, "xyz")]


async def test_caps_are_per_request_custom_max_bytes() -> None:
    """buildWindow: caps are per-request — caps output at a custom maxBytes"""
    result = await window("aaaa\nbbbb\ncccc", max_bytes=9)
    assert [line.text for line in result.lines] == ["aaaa", "bbbb"] and result.truncated_by_bytes


async def test_chunked_input_windows_identically_in_small_chunks() -> None:
    """buildWindow: chunked input — windows identically when text arrives in small chunks"""
    text = "one\r\ntwo\n\nfour\rx\nfive" + "\n" * 3 + "z" * 30
    for caps in ({}, {"offset": 2, "limit": 3}, {"max_line_length": 4}, {"max_bytes": 12}, {"offset": 6}):
        whole = await window(text, **caps)
        two = await window(text, size=2, **caps)
        assert (pairs(two), two.total_lines, two.truncated_by_bytes) == (
            pairs(whole), whole.total_lines, whole.truncated_by_bytes
        ), caps


async def test_chunked_input_caps_a_newline_free_giant_line_without_unbounded_buffering() -> None:
    """buildWindow: chunked input: caps a newline-free giant line split across chunks without unbounded buffering"""
    piece = "x" * 65536

    async def giant() -> AsyncIterator[str]:
        for _ in range(320):  # 20 MiB of one line
            yield piece

    tracemalloc.start()
    try:
        result = await build_window(giant(), ReadWindow(), "/f")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert pairs(result) == [(1, "x" * 2000 + "... (line truncated to 2000 chars)")]
    assert result.total_lines == 1
    assert peak < 4 * 1024 * 1024, f"peak {peak} bytes: the line was buffered"


async def test_chunked_input_caps_output_bytes_mid_stream() -> None:
    """buildWindow: chunked input — caps output bytes mid-stream (the stream is abandoned)"""
    state = {"yielded": 0, "closed": False}

    async def lines() -> AsyncIterator[str]:
        try:
            for _ in range(10_000):
                state["yielded"] += 1
                yield "y" * 100 + "\n"
        finally:
            state["closed"] = True

    result = await build_window(lines(), ReadWindow(), "/f")
    assert result.truncated_by_bytes and len(result.lines) == 506
    assert state["yielded"] == 507 and state["closed"]
    assert format_read_output("/f", result).endswith(
        "(Output capped. Showing lines 1-506. Use offset=507 to continue.)\n</content>"
    )


async def test_chunked_input_flushes_a_final_newline_terminated_line_across_a_chunk_boundary() -> None:
    """buildWindow: chunked input — flushes a final newline-terminated line across a chunk boundary"""
    for chunks in (["ab", "c\n"], ["abc", "\n"], ["abc\r", "\n"], ["abc", "\r", "\n", ""]):
        result = await build_window(iter(chunks), ReadWindow(), "/f")
        assert pairs(result) == [(1, "abc")] and result.total_lines == 1, chunks


async def test_skipped_lines_still_count_to_the_exact_total(size: int | None) -> None:
    result = await window("".join(f"{i}\n" for i in range(1, 101)), size=size, offset=10, limit=2)
    assert pairs(result) == [(10, "10"), (11, "11")] and result.total_lines == 100


# ------------------------------------------------------------------------------------------
# §4.6.2 line splitting
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "text,lines",
    [
        ("", []), ("a", ["a"]), ("a\n", ["a"]), ("a\nb", ["a", "b"]), ("\n", [""]), ("\n\n", ["", ""]),
        ("a\r", ["a"]), ("\r", [""]), ("a\rb", ["a\rb"]), ("a\r\r\n", ["a\r"]),
        ("a\vb\fc\x1cd\x85e\u2028f\u2029g", ["a\vb\fc\x1cd\x85e\u2028f\u2029g"]),
    ],
)
async def test_lines_split_on_lf_only(text: str, lines: list[str]) -> None:
    result = await window(text)
    assert [line.text for line in result.lines] == lines and result.total_lines == len(lines)


# ------------------------------------------------------------------------------------------
# §4.6.6 golden examples (reference profile) and footers
# ------------------------------------------------------------------------------------------

GOLDEN = [
    ("hello\nworld", {}, "1: hello\n2: world\n\n(End of file - total 2 lines)"),
    ("", {}, "(End of file - total 0 lines)"),
    ("\n", {}, "1: \n\n(End of file - total 1 lines)"),
    ("a\rb\nc", {}, "1: a\rb\n2: c\n\n(End of file - total 2 lines)"),
    ("x\r\ny\r\n", {}, "1: x\n2: y\n\n(End of file - total 2 lines)"),
    ("one\ntwo\nthree\nfour", {"offset": 2, "limit": 2},
     "2: two\n3: three\n\n(Showing lines 2-3 of 4. Use offset=4 to continue.)"),
    ("one\ntwo\nthree\nfour", {"limit": 2}, "1: one\n2: two\n\n(Showing lines 1-2 of 4. Use offset=3 to continue.)"),
    ("aaaa\nbbbb\ncccc", {"max_bytes": 9},
     "1: aaaa\n2: bbbb\n\n(Output capped. Showing lines 1-2. Use offset=3 to continue.)"),
    ("abcdefgh", {"max_line_length": 4}, "1: abcd... (line truncated to 4 chars)\n\n(End of file - total 1 lines)"),
    ("abcd\r\nxy", {"max_line_length": 4}, "1: abcd\n2: xy\n\n(End of file - total 2 lines)"),
    ("aaaaaaaaaa\nb", {"max_bytes": 5}, "(Output capped. Showing lines 1-0. Use offset=1 to continue.)"),
]


@pytest.mark.parametrize("text,caps,body", GOLDEN)
async def test_golden_examples_reference_profile(text: str, caps: dict[str, int], body: str) -> None:
    """§4.6.6 golden examples, byte for byte"""
    assert await render(text, **caps) == envelope(body)


async def test_golden_2000_lines_of_100_bytes_stop_at_506() -> None:
    text = await render(("y" * 100 + "\n") * 2000)
    assert text.endswith("\n506: " + "y" * 100 + "\n\n(Output capped. Showing lines 1-506. Use offset=507 to continue.)\n</content>")


@pytest.mark.parametrize(
    "text,offset,message",
    [("", 2, 'offset 2 is out of range for "/f" (0 lines)'), ("a\nb\n", 3, 'offset 3 is out of range for "/f" (2 lines)'),
     ("a\nb", 3, 'offset 3 is out of range for "/f" (2 lines)'), ("a", 10**30, 'offset 1e+30 is out of range for "/f" (1 lines)')],
)
async def test_offset_out_of_range(text: str, offset: int, message: str) -> None:
    """§4.6.4: offset > total (except an empty file at offset 1) is FS_NOT_FOUND"""
    with pytest.raises(FsError) as caught:
        await window(text, offset=offset)
    assert (caught.value.code, str(caught.value)) == ("FS_NOT_FOUND", message)


async def test_offset_equal_to_total_returns_the_last_line() -> None:
    assert await render("a\nb\n", offset=2) == envelope("2: b\n\n(End of file - total 2 lines)")
    assert await render("a\nb", offset=2, limit=5) == envelope("2: b\n\n(End of file - total 2 lines)")


def test_format_read_output_reports_a_byte_capped_read() -> None:
    """formatReadOutput footer variants: reports a byte-capped read"""
    result = WindowResult(offset=1, lines=[WindowLine(1, "a")], total_lines=1, truncated_by_bytes=True)
    assert format_read_output("/f", result) == envelope("1: a\n\n(Output capped. Showing lines 1-1. Use offset=2 to continue.)")


def test_format_read_output_reports_a_more_remaining_page() -> None:
    """formatReadOutput footer variants: reports a more-remaining page"""
    result = WindowResult(offset=1, lines=[WindowLine(1, "a")], total_lines=99)
    assert format_read_output("/f", result) == envelope("1: a\n\n(Showing lines 1-1 of 99. Use offset=2 to continue.)")


def test_format_read_output_reports_end_of_file() -> None:
    """formatReadOutput footer variants: reports end-of-file"""
    result = WindowResult(offset=1, lines=[WindowLine(1, "a")], total_lines=1)
    assert format_read_output("/f", result) == envelope("1: a\n\n(End of file - total 1 lines)")


def test_format_read_output_renders_an_empty_file_as_just_the_footer() -> None:
    """formatReadOutput footer variants: renders an empty file as just the footer"""
    text = format_read_output("/f", WindowResult(offset=1))
    assert text == envelope("(End of file - total 0 lines)") and ": " not in text


# ------------------------------------------------------------------------------------------
# §4.6.3 quirks: reference vs default profile; A1; D10
# ------------------------------------------------------------------------------------------

async def test_lone_cr_at_the_cap_reference_drops_the_suffix_default_keeps_it() -> None:
    """§4.6.3 quirk (reference) — default never hides a truncation"""
    assert pairs(await window("abcd\refgh", max_line_length=4)) == [(1, "abcd")]
    assert pairs(await window("abcd\refgh", max_line_length=4, profile=DEFAULT)) == [
        (1, "abcd... (line truncated to 4 chars)")
    ]
    for profile in (REFERENCE, DEFAULT):  # a real CRLF at the cap is a line ending in both
        assert pairs(await window("abcd\r\nxy", max_line_length=4, profile=profile)) == [(1, "abcd"), (2, "xy")]
        assert pairs(await window("abcd\r", max_line_length=4, profile=profile, size=1)) == [(1, "abcd")]


@pytest.mark.parametrize("profile", [REFERENCE, DEFAULT], ids=["reference", "default"])
async def test_A1_line_cap_counts_code_points_and_never_splits_a_character(profile: dict[str, bool]) -> None:
    """A1: ``readMaxLineLength`` counts code points; a cut never leaves a lone surrogate"""
    assert pairs(await window("😀😀😀", max_line_length=3, profile=profile)) == [(1, "😀😀😀")]
    result = await window("😀😀😀😀\n", max_line_length=3, profile=profile, size=1)
    assert pairs(result) == [(1, "😀😀😀... (line truncated to 3 chars)")]
    rendered = format_read_output("/f", result)
    rendered.encode("utf-8")  # strict: no lone surrogate anywhere
    result = await window("e\u0301" * 3, max_line_length=3, profile=profile)  # combining marks are code points
    assert pairs(result) == [(1, "e\u0301e... (line truncated to 3 chars)")]


@pytest.mark.parametrize("profile", [REFERENCE, DEFAULT], ids=["reference", "default"])
async def test_A1_byte_cap_counts_utf8_bytes_of_the_cut_text(profile: dict[str, bool]) -> None:
    # line 2 "😀é" = 4 + 2 bytes + 1 joining newline; line 1 "a" = 1 byte
    assert pairs(await window("a\n😀é\nz", max_bytes=8, profile=profile)) == [(1, "a"), (2, "😀é")]
    capped = await window("a\n😀é\nz", max_bytes=7, profile=profile)
    assert pairs(capped) == [(1, "a")] and capped.truncated_by_bytes


async def test_D10_a_first_line_over_the_byte_cap_is_cut_to_fit() -> None:
    """D10: a read always makes progress (default); reference returns zero lines"""
    result = await window("aaaaaaaaaa\nb", max_bytes=5, profile=DEFAULT)
    assert pairs(result) == [(1, "a... (line truncated to 1 chars)")] and result.truncated_by_bytes
    assert format_read_output("/f", result).endswith(
        "(Output capped. Showing lines 1-1. Use offset=2 to continue.)\n</content>"
    )
    result = await window("y" * 45 + "\nshort\n", max_bytes=40, max_line_length=50, profile=DEFAULT)
    (number, text), = pairs(result)
    kept = text.index(".")
    assert number == 1 and kept >= 1
    assert len(text.encode()) <= 40 and text == "y" * kept + truncation_suffix(kept)
    assert len(("y" * (kept + 1) + truncation_suffix(kept + 1)).encode()) > 40  # the longest cut that fits
    reference = await window("aaaaaaaaaa\nb", max_bytes=5)
    assert reference.lines == [] and reference.truncated_by_bytes


async def test_D10_cut_never_splits_a_multibyte_character() -> None:
    result = await window("é" * 40 + "\n", max_bytes=40, max_line_length=100, profile=DEFAULT)
    (_, text), = pairs(result)
    text.encode("utf-8")
    assert text.startswith("é") and len(text.encode()) <= 40
