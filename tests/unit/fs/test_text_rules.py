"""Pure text rules shared by providers: ``fs/text.py``, ``fs/literal_edit.py``, ``fs/paths.py``.

Covers REFERENCE-SPEC §2.5 (strict UTF-8, BOM, NUL sample), §2.7 (normalize / detect /
restore and the mixed-file table), §2.11 steps 5–7 and §7.2 ``applyLiteralEdit`` (literal
matching), §2.2 and §9 items 1 and 7 (JS ``trim`` whitespace, Node ``path.resolve``), and
DEVIATIONS D2 (only matched spans change) and D6 (where/why details of non-text errors).

Not covered here: how providers use these rules on disk (tests/integration/fs_local/test_local_provider.py)
and the byte-preservation property over random files (tests/integration/tool_fs/test_properties.py).
"""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_fs.fs.literal_edit import EditFailure, plan_edit, raw_span
from dsh_fs.fs.paths import JS_WHITESPACE, is_blank, node_resolve
from dsh_fs.fs.provider_rules import PriorSummary, PriorTally, TextRules, rewrite
from dsh_fs.fs.text import BOM, NotTextError, TextStreamDecoder, decode_text, detect, dominant_style, foreign_bom, normalize, restore

# ------------------------------------------------------------------------------------------
# §2.7 line endings
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,expected",
    [("a\r\nb", "a\nb"), ("a\rb", "a\rb"), ("\r\r\n", "\r\n"), ("\r\n\r\n", "\n\n"), ("", ""), ("\n\r", "\n\r")],
)
def test_normalize_only_turns_crlf_into_lf(text: str, expected: str) -> None:
    assert normalize(text) == expected


@pytest.mark.parametrize(
    "text,style",
    [
        ("a\r\nb\r\n", "CRLF"),
        ("a\r\nb\r\nc\n", "CRLF"),
        ("a\r\nb\nc", "LF"),  # 1:1 tie
        ("a\r\nb\nc\n", "LF"),
        ("a\rb\r\nc\r\n", "CRLF"),  # lone CR not counted
        ("no newline at all", "LF"),
        ("\r\r\r\n", "CRLF"),
        ("x" * 5000 + "\r\n" + "y\r\n" * 10, "LF"),  # no newline in the first 4096 units
        ("x" * 4094 + "\r\n" + "y\n" * 10, "CRLF"),  # the CRLF ends exactly at unit 4096
        ("x" * 4095 + "\r\n" + "y\r\n" * 10, "LF"),  # only the CR is inside the sample
    ],
)
def test_detect_decides_from_the_first_4096_utf16_units(text: str, style: str) -> None:
    assert detect(text) == style


def test_detect_counts_non_bmp_characters_as_two_units() -> None:
    """§9 item 2: 2048 emoji fill the 4096-unit sample, so a following CRLF is not seen"""
    assert detect("😀" * 2047 + "\r\n" + "a\n" * 0) == "CRLF"
    assert detect("😀" * 2048 + "\r\n") == "LF"
    assert detect("x" * 2048 + "\r\n") == "CRLF"


def test_dominant_style_counts_the_whole_text() -> None:
    assert dominant_style("x" * 5000 + "\r\n" + "y\r\n" * 10) == "CRLF"
    assert dominant_style("a\r\nb\n") == "LF"
    assert dominant_style("") == "LF"


@pytest.mark.parametrize(
    "text,style,expected",
    [
        ("a\nb\n", "LF", "a\nb\n"),
        ("a\r\nb\n", "LF", "a\r\nb\n"),  # LF leaves the text as it is
        ("a\nb\r\nc", "CRLF", "a\r\nb\r\nc"),  # never \r\r\n
        ("a\rb\n", "CRLF", "a\rb\r\n"),
    ],
)
def test_restore(text: str, style: str, expected: str) -> None:
    assert restore(text, style) == expected  # type: ignore[arg-type]


# the §2.7 table: an edit of an unrelated line ("z" → "Z" appended as its own line)
MIXED_TABLE = [
    ("a\r\nb\r\nz", "a\r\nb\r\nZ", "a\r\nb\r\nZ"),
    ("a\r\nb\r\nc\nz", "a\r\nb\r\nc\r\nZ", "a\r\nb\r\nc\nZ"),
    ("a\r\nb\nz", "a\nb\nZ", "a\r\nb\nZ"),
    ("a\r\nb\nc\nz", "a\nb\nc\nZ", "a\r\nb\nc\nZ"),
    ("a\rb\r\nc\r\nz", "a\rb\r\nc\r\nZ", "a\rb\r\nc\r\nZ"),
    ("x" * 5000 + "\r\nb\r\nz", "x" * 5000 + "\nb\nZ", "x" * 5000 + "\r\nb\r\nZ"),
]


@pytest.mark.parametrize("raw,reference,default", MIXED_TABLE)
def test_edit_line_endings_reference_unifies_default_keeps_bytes(raw: str, reference: str, default: str) -> None:
    """§2.7 table (reference) and DEVIATIONS D2 (default: only the matched span changes)"""
    assert plan_edit(raw, "z", "Z", False, keep_bytes=False).text == reference
    assert plan_edit(raw, "z", "Z", False, keep_bytes=True).text == default


def test_D2_new_string_line_breaks_take_the_dominant_style() -> None:
    """D2: line breaks inside new_string are written in the file's dominant style"""
    plan = plan_edit("a\r\nb\r\nc\n", "b", "b1\nb2", False, keep_bytes=True)
    assert plan.text == "a\r\nb1\r\nb2\r\nc\n"
    assert (plan.before, plan.after) == ("a\nb\nc\n", "a\nb1\nb2\nc\n")
    plan = plan_edit("a\nb\nc\r\n", "b", "b1\r\nb2", False, keep_bytes=True)
    assert plan.text == "a\nb1\nb2\nc\r\n"


def test_D2_a_lone_cr_before_a_line_break_of_new_string_is_kept() -> None:
    """D2: new_string "\\r\\r\\n" is a literal CR plus a line break; in a CRLF file that is CR CR LF"""
    assert plan_edit("\r\n", "\n", "\r\r\n", False, keep_bytes=True).text == "\r\r\n"
    assert plan_edit("a\r\nb\r\n", "b", "x\r\ny\r", False, keep_bytes=True).text == "a\r\nx\r\ny\r\r\n"
    assert plan_edit("a\nb\n", "b", "x\r\r\ny", False, keep_bytes=True).text == "a\nx\r\ny\n"
    # the reference re-normalizes the whole edited text, so its CR is lost (kept for byte parity)
    assert plan_edit("\r\n", "\n", "\r\r\n", False, keep_bytes=False).text == "\r\n"


def test_D2_a_match_spanning_mixed_endings_maps_back_to_its_raw_span() -> None:
    raw = "head\r\nx\ny\r\nz\ntail\n"
    plan = plan_edit(raw, "x\ny\nz", "Q", False, keep_bytes=True)
    assert plan.text == "head\r\nQ\ntail\n"
    plan = plan_edit(raw, "\r\nx", "!", False, keep_bytes=True)  # CRLF in old_string matches the file's LF
    assert plan.text == "head!\ny\r\nz\ntail\n"


def test_D2_final_newline_presence_is_kept() -> None:
    assert plan_edit("a\r\nb\r\nc", "b", "B", False, keep_bytes=True).text == "a\r\nB\r\nc"
    assert plan_edit("a\r\nb\nc\n", "c", "C", False, keep_bytes=True).text == "a\r\nb\nC\n"


def test_raw_span_counts_a_crlf_pair_as_one_character() -> None:
    raw = "ab\r\ncd\r\n"
    assert raw_span(raw, 0, 2) == 2
    assert raw_span(raw, 0, 3) == 4  # "ab\n" covers the whole pair
    assert raw_span(raw, 2, 1) == 4
    assert raw_span(raw, 0, 6) == 8
    assert raw_span("x\r\r\n", 0, 2) == 2  # "x\r": the lone CR, not the pair behind it


# ------------------------------------------------------------------------------------------
# §7.2 applyLiteralEdit (plan_edit), both profiles
# ------------------------------------------------------------------------------------------

@pytest.fixture(params=[False, True], ids=["reference", "default"])
def keep_bytes(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


def test_replaces_a_unique_match(keep_bytes: bool) -> None:
    """applyLiteralEdit: replaces a unique match"""
    plan = plan_edit("a b c", "b", "X", False, keep_bytes=keep_bytes)
    assert (plan.text, plan.before, plan.after) == ("a X c", "a b c", "a X c")


def test_rejects_zero_matches(keep_bytes: bool) -> None:
    """applyLiteralEdit: rejects zero matches"""
    with pytest.raises(EditFailure) as caught:
        plan_edit("a b c", "z", "X", False, keep_bytes=keep_bytes)
    assert (caught.value.kind, caught.value.content, caught.value.needle) == ("not_found", "a b c", "z")


def test_rejects_an_empty_old_string_without_scanning_forever(keep_bytes: bool) -> None:
    """applyLiteralEdit: rejects an empty oldString without scanning forever"""
    with pytest.raises(EditFailure) as caught:
        plan_edit("a b c", "", "X", True, keep_bytes=keep_bytes)
    assert caught.value.kind == "empty"


def test_rejects_multiple_matches_without_replace_all(keep_bytes: bool) -> None:
    """applyLiteralEdit: rejects multiple matches without replaceAll"""
    with pytest.raises(EditFailure) as caught:
        plan_edit("b b b", "b", "X", False, keep_bytes=keep_bytes)
    assert (caught.value.kind, caught.value.count) == ("ambiguous", 3)


def test_replaces_all_matches_with_replace_all(keep_bytes: bool) -> None:
    """applyLiteralEdit: replaces all matches with replaceAll"""
    assert plan_edit("b b b", "b", "X", True, keep_bytes=keep_bytes).text == "X X X"


def test_matches_across_normalized_line_endings(keep_bytes: bool) -> None:
    """applyLiteralEdit: matches across normalized line endings"""
    plan = plan_edit("one\r\ntwo\r\nthree\r\n", "one\ntwo\n", "1\n2\n", False, keep_bytes=keep_bytes)
    assert plan.text == "1\r\n2\r\nthree\r\n"
    assert plan.after == "1\n2\nthree\n"
    plan = plan_edit("one\ntwo\n", "one\r\ntwo", "x", False, keep_bytes=keep_bytes)
    assert plan.text == "x\n"


def test_occurrences_are_non_overlapping_left_to_right(keep_bytes: bool) -> None:
    with pytest.raises(EditFailure) as caught:
        plan_edit("aaaa", "aa", "b", False, keep_bytes=keep_bytes)
    assert caught.value.count == 2
    assert plan_edit("aaa", "aa", "b", False, keep_bytes=keep_bytes).text == "ba"
    assert plan_edit("aaaa", "aa", "b", True, keep_bytes=keep_bytes).text == "bb"


def test_lone_cr_is_literal_on_both_sides(keep_bytes: bool) -> None:
    assert plan_edit("a\rb\nc", "a\rb", "x", False, keep_bytes=keep_bytes).text == "x\nc"
    with pytest.raises(EditFailure):
        plan_edit("a\rb", "a\nb", "x", False, keep_bytes=keep_bytes)


def test_matching_is_case_sensitive(keep_bytes: bool) -> None:
    with pytest.raises(EditFailure):
        plan_edit("Hello", "hello", "x", False, keep_bytes=keep_bytes)


# ------------------------------------------------------------------------------------------
# §2.5 decoding; D6 details
# ------------------------------------------------------------------------------------------

def test_decode_strips_one_leading_bom_and_keeps_crlf() -> None:
    assert decode_text(b"\xef\xbb\xbfa\r\nb") == "a\r\nb"
    assert decode_text(b"\xef\xbb\xbf\xef\xbb\xbfa") == "\ufeffa"
    assert decode_text(b"a\xef\xbb\xbf") == "a\ufeff"
    assert decode_text(b"") == ""


@pytest.mark.parametrize(
    "raw",
    [b"h\xffi", b"\xc0\xaf", b"\xed\xa0\x80", b"ok\xe2\x82", b"\xf8\x88\x80\x80\x80", b"\x80"],
    ids=["ff", "overlong", "encoded-surrogate", "truncated", "five-byte", "continuation"],
)
def test_strict_utf8_rejects(raw: bytes) -> None:
    with pytest.raises(NotTextError) as caught:
        decode_text(raw)
    assert caught.value.reason == "invalid UTF-8 text"


def test_nul_sample_is_the_first_8192_bytes_for_reads_and_everything_for_edits() -> None:
    with pytest.raises(NotTextError) as caught:
        decode_text(b"h\x00i")
    assert caught.value.reason == "binary file"
    late = b"a" * 8192 + b"\x00"
    assert decode_text(late) == "a" * 8192 + "\x00"
    with pytest.raises(NotTextError):
        decode_text(b"a" * 8191 + b"\x00")
    with pytest.raises(NotTextError) as caught:
        decode_text(late, nul_scan=None)
    assert caught.value.reason == "binary file"
    with pytest.raises(NotTextError) as caught:
        decode_text(b"\x00\xff")  # NUL checked before decoding
    assert caught.value.reason == "binary file"


def test_D6_details_name_the_byte_offset_and_line() -> None:
    """D6: ``invalid UTF-8 text (byte 0x99 at offset 11, line 2)``"""
    with pytest.raises(NotTextError) as caught:
        decode_text(b"line1\nBrand\x99\nline3\n")
    assert caught.value.message(True) == "invalid UTF-8 text (byte 0x99 at offset 11, line 2)"
    assert caught.value.message(False) == "invalid UTF-8 text"
    with pytest.raises(NotTextError) as caught:
        decode_text(b"\xef\xbb\xbfab\n\xff")  # offsets count the BOM bytes
    assert caught.value.detail == "byte 0xFF at offset 6, line 2"
    with pytest.raises(NotTextError) as caught:
        decode_text(b"ok\n\xe2\x82")
    assert caught.value.detail == "byte 0xE2 at offset 3, line 2; the file ends inside a multi-byte character"
    with pytest.raises(NotTextError) as caught:
        decode_text(b"a\nb\n\x00")
    assert caught.value.message(True) == "binary file (NUL byte at offset 4, line 3)"


@pytest.mark.parametrize(
    "raw,name",
    [(b"\xff\xfeh\x00", "UTF-16LE"), (b"\xfe\xff\x00h", "UTF-16BE"), (b"\xff\xfe\x00\x00h\x00\x00\x00", "UTF-32LE"),
     (b"\x00\x00\xfe\xffh", "UTF-32BE")],
)
def test_D6_foreign_byte_order_marks_are_named(raw: bytes, name: str) -> None:
    """D6: ``binary file (UTF-16LE byte-order mark; only UTF-8 is supported)``"""
    assert foreign_bom(raw) == name
    with pytest.raises(NotTextError) as caught:
        decode_text(raw, foreign_boms=True)
    assert caught.value.message(True) == f"binary file ({name} byte-order mark; only UTF-8 is supported)"
    decoder = TextStreamDecoder(foreign_boms=True)
    with pytest.raises(NotTextError) as caught:
        for i in range(len(raw)):
            decoder.feed(raw[i : i + 1])
        decoder.finish()
    assert caught.value.detail == f"{name} byte-order mark; only UTF-8 is supported"


def test_reference_decoding_of_a_foreign_bom_is_the_plain_reason() -> None:
    with pytest.raises(NotTextError) as caught:
        decode_text(b"\xff\xfeh\x00i\x00")
    assert caught.value.reason == "binary file"  # the NUL at offset 3
    with pytest.raises(NotTextError) as caught:
        decode_text(b"\xfe\xffabc")
    assert caught.value.reason == "invalid UTF-8 text"


# ------------------------------------------------------------------------------------------
# §2.5 streamText decoding
# ------------------------------------------------------------------------------------------

def _stream(raw: bytes, sizes: list[int]) -> str:
    decoder = TextStreamDecoder()
    out, pos, i = [], 0, 0
    while pos < len(raw):
        size = sizes[i % len(sizes)]
        out.append(decoder.feed(raw[pos : pos + size]))
        pos += size
        i += 1
    out.append(decoder.finish())
    return "".join(out)


SAMPLE = ("\ufeffhé😀 line\r\n" * 50).encode("utf-8")


@pytest.mark.parametrize("sizes", [[1], [2], [3], [5, 1], [4096], [len(SAMPLE)]])
def test_stream_decoder_matches_whole_decoding_for_any_chunking(sizes: list[int]) -> None:
    raw = b"\xef\xbb\xbf" + SAMPLE
    assert _stream(raw, sizes) == decode_text(raw)


def test_stream_decoder_bom_split_across_chunks_and_short_files() -> None:
    assert _stream(b"\xef\xbb\xbfa", [1]) == "a"
    assert _stream(b"\xef\xbb\xbf", [1]) == ""
    assert _stream(b"ab", [1]) == "ab"
    assert _stream(b"", [1]) == ""


def test_stream_decoder_nul_sample_spans_chunks() -> None:
    raw = b"a" * 8191 + b"\x00" + b"b"
    with pytest.raises(NotTextError) as caught:
        _stream(raw, [5000])
    assert caught.value.detail == "NUL byte at offset 8191, line 1"
    assert _stream(b"a" * 8192 + b"\x00", [5000]) == "a" * 8192 + "\x00"


def test_stream_decoder_truncated_final_sequence_fails_on_finish() -> None:
    decoder = TextStreamDecoder()
    assert decoder.feed(b"ok\n\xe2\x82") == "ok\n"
    with pytest.raises(NotTextError) as caught:
        decoder.finish()
    assert caught.value.detail == "byte 0xE2 at offset 3, line 2; the file ends inside a multi-byte character"


def test_stream_decoder_reports_the_same_offset_as_whole_decoding() -> None:
    raw = "é".encode() * 3000 + b"\n\xffx"
    with pytest.raises(NotTextError) as whole:
        decode_text(raw)
    with pytest.raises(NotTextError) as streamed:
        _stream(raw, [7])
    assert streamed.value.detail == whole.value.detail == "byte 0xFF at offset 6001, line 2"


# ------------------------------------------------------------------------------------------
# paths (§2.2, §9 items 1 and 7)
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("ch", sorted(JS_WHITESPACE))
def test_every_js_trim_character_is_blank(ch: str) -> None:
    assert is_blank(ch) and is_blank(ch * 3 + " ")


@pytest.mark.parametrize("text", ["a", " a ", "\x1c", "\x1f", "\x85", "\u200b", "\x00", ".", "\ud800"])
def test_python_strip_only_characters_are_not_blank(text: str) -> None:
    assert not is_blank(text)


def test_js_whitespace_is_exactly_the_trim_set() -> None:
    expected = set("\t\n\v\f\r \u00a0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff") | {
        chr(c) for c in range(0x2000, 0x200B)
    }
    assert set(JS_WHITESPACE) == expected
    assert is_blank("")


@pytest.mark.parametrize(
    "base,path,expected",
    [
        ("/w", "a.txt", "/w/a.txt"),
        ("/w", " a.txt", "/w/ a.txt"),  # never trimmed
        ("/w", "/abs/b", "/abs/b"),
        ("/w/x", "../y/./z/", "/w/y/z"),
        ("/w", "//a//b/", "/a/b"),
        ("/w", "///a", "/a"),
        ("//w", "a", "/w/a"),
        ("/", "..", "/"),
        ("/w", ".", "/w"),
        ("/w", "a/link/../b", "/w/a/b"),  # lexical, before any realpath
    ],
)
def test_node_resolve(base: str, path: str, expected: str) -> None:
    assert node_resolve(base, path) == expected


def test_node_resolve_makes_a_relative_base_absolute_against_the_process_cwd() -> None:
    assert node_resolve("rel", "a") == os.path.join(os.getcwd(), "rel", "a")


# -- PriorTally: what an overwrite of a file too big to hold needs of it (D1, D4) ----------------

@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=64).map(lambda b: b.replace(b"x", b"\r\n")), st.lists(st.integers(0, 64), max_size=6),
       st.booleans())
def test_prior_tally_agrees_with_the_whole_bytes(raw: bytes, cuts: list[int], bom: bool) -> None:
    raw = (BOM if bom else b"") + raw
    tally = PriorTally()
    start = 0
    for cut in sorted(min(c, len(raw)) for c in cuts):
        tally.feed(raw[start:cut])
        start = max(start, cut)
    tally.feed(raw[start:])
    crlf = raw.count(b"\r\n")
    assert tally.summary() == PriorSummary(has_bom=raw.startswith(BOM), crlf_dominant=crlf > raw.count(b"\n") - crlf)


def test_rewrite_over_a_summary_keeps_bom_and_crlf_without_a_diff_basis() -> None:
    rules = TextRules.for_profile("default")
    planned = rewrite(PriorSummary(has_bom=True, crlf_dominant=True), "a\nb\n", rules, "/f")
    assert (planned.data, planned.before, planned.after) == (b"\xef\xbb\xbfa\r\nb\r\n", None, "a\nb\n")
    planned = rewrite(PriorSummary(has_bom=True, crlf_dominant=True), "a\nb\n", TextRules.for_profile("reference"), "/f")
    assert planned.data == b"a\nb\n"


@pytest.mark.parametrize("size", [1, 2, 3, 4, 5])
def test_prior_tally_counts_a_crlf_split_between_two_chunks(size: int) -> None:
    """Every CRLF of a CRLF-dominant file straddles a chunk boundary at some chunk size: each
    must still count as CRLF (the random cuts above rarely split a pair)."""
    raw = b"a\r\nbb\r\nccc\r\nd\n"  # 3 CRLF against 1 bare LF
    tally = PriorTally()
    for start in range(0, len(raw), size):
        tally.feed(raw[start : start + size])
    assert tally.summary() == PriorSummary(has_bom=False, crlf_dominant=True)


def test_prior_tally_straddling_pairs_decide_the_dominant_style() -> None:
    """Two CRLF, both split by the chunking, against one bare LF: CRLF-dominant; without the
    carry across chunks it would count three bare LF."""
    tally = PriorTally()
    for chunk in (b"one\r", b"\ntwo\r", b"\nthree\n"):
        tally.feed(chunk)
    assert tally.summary().crlf_dominant


# -- profile switches: derived from the profile in one place (DEVIATIONS D1–D4, D6, D12) --------

def _rules_classes() -> list[type[TextRules]]:
    import dsh_fs.fs_local.rules  # noqa: F401  (registers LocalRules as a subclass)

    import sys

    found, todo = [], [TextRules]
    while todo:
        cls = todo.pop()
        # ``slots=True`` replaces a dataclass: the class its module exports is the live one
        if getattr(sys.modules[cls.__module__], cls.__qualname__, None) is cls:
            found.append(cls)
        todo.extend(cls.__subclasses__())
    return found


@pytest.mark.parametrize("cls", _rules_classes(), ids=lambda c: c.__name__)
def test_every_boolean_rule_is_a_profile_switch(cls: type[TextRules]) -> None:
    """A new flag declared as a plain ``bool = True`` would be on in the reference profile
    unless every provider remembered to turn it off: flags must be ``profile_switch`` fields."""
    import dataclasses

    flags = [f.name for f in dataclasses.fields(cls) if f.type in (bool, "bool")]
    assert flags and sorted(flags) == sorted(cls.switches())


@pytest.mark.parametrize("cls", _rules_classes(), ids=lambda c: c.__name__)
def test_for_profile_turns_every_switch_on_or_off(cls: type[TextRules]) -> None:
    default, reference = cls.for_profile("default"), cls.for_profile("reference")
    assert all(getattr(default, name) is True for name in cls.switches())
    assert all(getattr(reference, name) is False for name in cls.switches())
    assert cls.for_profile(None) == default
    with pytest.raises(TypeError, match="follow the profile"):
        cls.for_profile("reference", keep_bom=True)
    with pytest.raises(TypeError):
        cls(**dict.fromkeys(cls.switches()[1:], True))  # a switch left out has no default


@pytest.mark.parametrize("profile", ["default", "reference"])
def test_every_provider_derives_its_rules_from_the_profile(tmp_path: object, profile: str) -> None:
    from dsh_fs.fs_local import LocalFileSystem
    from dsh_fs.fs_memory import MemoryFileSystem
    from dsh_fs.fs_s3 import S3FileSystem

    for provider in (LocalFileSystem(cwd=str(tmp_path), profile=profile), MemoryFileSystem(profile=profile),
                     S3FileSystem(bucket="b", profile=profile)):
        rules = provider.rules  # type: ignore[attr-defined]
        assert {name: getattr(rules, name) for name in rules.switches()} == dict.fromkeys(
            rules.switches(), profile == "default"), type(provider).__name__


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=40).map(lambda b: bytes(b"\r\na"[x % 3] for x in b)))
def test_the_crlf_count_without_a_cr_is_the_counted_answer(raw: bytes) -> None:
    """``rewrite`` decides D4's CRLF on the bytes it replaces: the shortcut for bytes without
    a CR gives the counted answer (CRLF breaks outnumber bare LF ones) for any bytes."""
    from dsh_fs.fs.provider_rules import _crlf_dominant

    crlf = raw.count(b"\r\n")
    assert _crlf_dominant(raw) is (crlf > raw.count(b"\n") - crlf)
    written = rewrite(raw, "x\ny\n", TextRules.for_profile("default"), "/f").data
    assert written == (b"x\r\ny\r\n" if crlf > raw.count(b"\n") - crlf else b"x\ny\n")
