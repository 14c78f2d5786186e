"""``fs.legacy_text``: legacy encodings byte-exact (docs/ENCODINGS.md; DEVIATIONS F7–F10) — the
encoding list, detection, unencodable characters, and the edit whose bytes outside the replaced
spans are the file's own. Property tests over random texts in each encoding: an edit changes
exactly the replaced bytes. Pure; the providers and tools: tests/integration/fs_local/test_encodings.py."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from dsh_fs.fs.legacy_text import (
    DecodedText,
    ProofFailed,
    Unencodable,
    check_encodings,
    decode_legacy,
    edit_bytes,
    edit_spans,
    encode_checked,
    encoding_note,
)
from dsh_fs.fs.literal_edit import EditFailure

ENCODINGS = ("shift_jis", "gb18030", "cp1252", "big5", "euc_kr", "cp932", "latin_1")

BIG = 1 << 30


def test_check_encodings_names_and_refusals() -> None:
    assert check_encodings(["SJIS", "shift-jis", "GB18030", "windows-1252"]) == ("shift_jis", "gb18030", "cp1252")
    assert check_encodings([]) == ()
    for bad, text in [("utf-8", 'encoding "utf-8" is UTF-8, which is always read'),
                      ("UTF8", 'encoding "UTF8" is UTF-8, which is always read'),
                      ("utf_8_sig", 'encoding "utf_8_sig" is UTF-8, which is always read'),
                      ("utf-16", 'encoding "utf-16" is not ASCII-compatible (UTF-16, UTF-32, UTF-7 …): not supported'),
                      ("utf-32-le", 'encoding "utf-32-le" is not ASCII-compatible (UTF-16, UTF-32, UTF-7 …): not supported'),
                      ("utf-7", 'encoding "utf-7" is not ASCII-compatible (UTF-16, UTF-32, UTF-7 …): not supported'),
                      ("cp037", 'encoding "cp037" is not ASCII-compatible (UTF-16, UTF-32, UTF-7 …): not supported'),
                      ("rot13", 'encoding "rot13" is not ASCII-compatible (UTF-16, UTF-32, UTF-7 …): not supported'),
                      ("nope", 'unknown encoding "nope"'), ("", 'unknown encoding ""')]:
        with pytest.raises(ValueError) as caught:
            check_encodings([bad])
        assert str(caught.value) == text


def test_decoded_text_is_a_str_that_knows_its_encoding() -> None:
    text = DecodedText("abc", "cp1252")
    assert text == "abc" and isinstance(text, str) and text.encoding == "cp1252"
    assert encoding_note("cp1252") == "(This file is cp1252 text, not UTF-8: edit and write keep it in cp1252.)"


def test_decode_picks_the_only_faithful_encoding() -> None:
    data = "日本語のテキスト\n".encode("shift_jis")
    found = decode_legacy(data, ("gb18030", "shift_jis"))
    assert found == "日本語のテキスト\n" and found is not None and found.encoding == "shift_jis"
    assert decode_legacy(b"caf\xe9\n", ("shift_jis",)) is None
    assert decode_legacy(b"\x81", ("cp1252",)) is None  # undefined in cp1252
    assert decode_legacy(b"caf\xe9", ()) is None


def test_a_mapping_that_does_not_round_trip_is_not_used() -> None:
    nec = b"\x87\x90"  # cp932: an NEC duplicate of U+2252, which encodes back as 0x81E0
    assert nec.decode("cp932").encode("cp932") != nec
    assert decode_legacy(nec, ("cp932",)) is None


def test_several_faithful_encodings_are_told_apart_by_the_detector() -> None:
    text = "これは日本語の文章です。ファイルの中身を読みます。" * 20 + "\n"
    data = text.encode("shift_jis")
    found = decode_legacy(data, ("cp932", "shift_jis"))
    assert found is not None and found.encoding in ("cp932", "shift_jis") and found == text
    chinese = ("这是一个中文文件，我们要读取它的内容。" * 20 + "\n").encode("gb18030")
    picked = decode_legacy(chinese, ("big5", "gb18030"))
    if chinese.decode("big5", errors="replace") != chinese.decode("big5", errors="ignore"):
        assert picked is not None and picked.encoding == "gb18030"
    latin = "Café crème, déjà vu — naïve façade\n".encode("cp1252")
    assert decode_legacy(latin, ("cp1252", "latin_1")).encoding == "cp1252"  # type: ignore[union-attr]


def test_without_the_detector_the_first_listed_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real = builtins.__import__

    def no_detector(name: str, *args: object, **kw: object) -> object:
        if name == "charset_normalizer":
            raise ImportError(name)
        return real(name, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(builtins, "__import__", no_detector)
    latin = "Café\n".encode("cp1252")
    assert decode_legacy(latin, ("latin_1", "cp1252")).encoding == "latin_1"  # type: ignore[union-attr]
    assert decode_legacy(latin, ("cp1252", "latin_1")).encoding == "cp1252"  # type: ignore[union-attr]


def test_unencodable_names_the_character_and_where() -> None:
    with pytest.raises(Unencodable) as caught:
        encode_checked("ab\ncd日x", "cp1252")
    assert caught.value == Unencodable("日", 5, "cp1252")
    assert caught.value.describe("ab\ncd日x", "new_string") == "U+65E5 (CJK UNIFIED IDEOGRAPH-65E5) at line 2, column 3 of new_string"
    assert Unencodable("\ue000", 0, "cp1252").describe("\ue000", "content") == "U+E000 at line 1, column 1 of content"
    assert Unencodable("\U0001f600", 1, "x").describe("a\U0001f600", "c") == "U+1F600 (GRINNING FACE) at line 1, column 2 of c"
    assert encode_checked("日本", "shift_jis") == "日本".encode("shift_jis")


def test_edit_changes_only_the_replaced_bytes() -> None:
    text = "一行目\r\n二行目\r\n三行目\r\n"
    raw = text.encode("shift_jis")
    edited = edit_bytes(raw, text, "shift_jis", "二行目", "第二\n行", False, overlapping=True, max_bytes=BIG)
    assert edited.data == "一行目\r\n第二\r\n行\r\n三行目\r\n".encode("shift_jis")
    assert edited.plan.before == "一行目\n二行目\n三行目\n" and edited.plan.after == "一行目\n第二\n行\n三行目\n"
    every = edit_bytes(b"a-a-a", "a-a-a", "cp1252", "a", "\xe9", True, overlapping=True, max_bytes=BIG)
    assert every.data == b"\xe9-\xe9-\xe9"
    lone = edit_bytes(b"x\ry\r\nz", "x\ry\r\nz", "cp1252", "y\nz", "Y", False, overlapping=True, max_bytes=BIG)
    assert lone.data == b"x\rY"


def test_edit_refusals() -> None:
    raw = "ab ab".encode("cp1252")
    with pytest.raises(EditFailure) as ambiguous:
        edit_bytes(raw, "ab ab", "cp1252", "ab", "x", False, overlapping=True, max_bytes=BIG)
    assert ambiguous.value.kind == "ambiguous"
    with pytest.raises(EditFailure) as missing:
        edit_bytes(raw, "ab ab", "cp1252", "zz", "x", False, overlapping=True, max_bytes=BIG)
    assert missing.value.kind == "not_found"
    with pytest.raises(EditFailure) as big:
        edit_bytes(raw, "ab ab", "cp1252", "ab", "x" * 100, True, overlapping=True, max_bytes=50)
    assert big.value.kind == "too_large"
    with pytest.raises(Unencodable) as unencodable:
        edit_bytes(raw, "ab ab", "cp1252", "ab ", "ok\r\n日", False, overlapping=True, max_bytes=BIG)
    assert unencodable.value.index == 3 and unencodable.value.character == "日"


def test_a_codec_that_does_not_map_text_to_bytes_piecewise_is_refused() -> None:
    """ISO-2022-JP switches character sets with escape sequences: a replacement next to Japanese
    text would change the escapes around it, outside the replaced span — refused (F9)."""
    text = "日本語と英語"
    raw = text.encode("iso2022_jp")
    assert decode_legacy(raw, ("iso2022_jp",)) == text
    with pytest.raises(ProofFailed):
        edit_bytes(raw, text, "iso2022_jp", "と", "and", False, overlapping=True, max_bytes=BIG)


def test_edit_spans_map_matches_back_to_the_text_on_disk() -> None:
    assert edit_spans("a\r\nb a\r\nb", "a\nb", 2, replace_all=True) == [(0, 4), (5, 9)]
    assert edit_spans("a\r\nb a\r\nb", "a\nb", 2, replace_all=False) == [(0, 4)]
    assert edit_spans("xxx", "x", 2, replace_all=True) == [(0, 1), (1, 2)]
    assert edit_spans("abc", "z", 1, replace_all=False) == []


def _texts(encoding: str) -> st.SearchStrategy[str]:
    def fits(ch: str) -> bool:
        try:
            return ch.encode(encoding).decode(encoding) == ch and ch != "\0"
        except UnicodeError:
            return False

    pool = {"shift_jis": "あいうえお日本語漢字カタカナ", "cp932": "あいう日本①", "gb18030": "中文汉字简体繁體𠀀",
            "cp1252": "éèàçœ€™—", "big5": "中文繁體字", "euc_kr": "한국어글자", "latin_1": "éàÿ¤"}[encoding]
    alphabet = st.sampled_from(list(pool) + list("abc xyz\n\r\t.-"))
    return st.text(alphabet, max_size=60).filter(lambda t: all(fits(c) for c in t))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data(), encoding=st.sampled_from(ENCODINGS), replace_all=st.booleans())
def test_an_edit_changes_exactly_the_replaced_bytes(data: st.DataObject, encoding: str, replace_all: bool) -> None:
    text = data.draw(_texts(encoding))
    raw = text.encode(encoding)
    assume(raw.decode(encoding).encode(encoding) == raw)
    assume(text)
    start = data.draw(st.integers(0, len(text) - 1))
    end = data.draw(st.integers(start + 1, min(len(text), start + 6)))
    old = text[start:end]
    assume("\r" not in old[-1:] and "\n" not in old[:1])  # a CRLF split by the pick is not a match of its own
    new = data.draw(_texts(encoding))
    try:
        edited = edit_bytes(raw, text, encoding, old, new, replace_all, overlapping=True, max_bytes=BIG)
    except EditFailure as failure:
        assert failure.kind in ("ambiguous", "not_found", "empty")
        return
    spans = edit_spans(text, old.replace("\r\n", "\n"), text.replace("\r\n", "\n").count(old.replace("\r\n", "\n")),
                       replace_all=replace_all)
    # every byte outside the spans is the file's; inside, the encoded replacement
    kept: list[bytes] = []
    at = 0
    for s, e in spans:
        kept.append(text[at:s].encode(encoding))
        at = e
    kept.append(text[at:].encode(encoding))
    position = 0
    for index, piece in enumerate(kept):
        assert edited.data[position:position + len(piece)] == piece
        position += len(piece)
        if index < len(spans):
            replaced = new.replace("\r\n", "\n")
            if "\r\n" in text and text.count("\r\n") > text.count("\n") - text.count("\r\n"):
                replaced = replaced.replace("\n", "\r\n")
            encoded = replaced.encode(encoding)
            assert edited.data[position:position + len(encoded)] == encoded
            position += len(encoded)
    assert position == len(edited.data)
    assert edited.data.decode(encoding) == edited.plan.text


def test_positions_count_from_the_first_character() -> None:
    assert Unencodable("é", 1, "ascii").describe("\né", "c") == "U+00E9 (LATIN SMALL LETTER E WITH ACUTE) at line 2, column 1 of c"
    assert edit_spans("\r\nzz a\r\nb", "a\nb", 1, replace_all=False) == [(5, 9)]


def test_the_replacements_breaks_follow_the_dominant_style() -> None:
    text = "a\r\nb\nc\nd\nTARGET\n"  # one CRLF, LF dominant: a new line break is LF
    edited = edit_bytes(text.encode("cp1252"), text, "cp1252", "TARGET", "x\ny", False, overlapping=True, max_bytes=BIG)
    assert edited.data == b"a\r\nb\nc\nd\nx\ny\n"
    mixed = "one\r\ntwo\nthree\r\n"  # mixed endings are kept as they are outside the replacement
    kept = edit_bytes(mixed.encode("cp1252"), mixed, "cp1252", "two", "2", False, overlapping=True, max_bytes=BIG)
    assert kept.data == b"one\r\n2\nthree\r\n"


def test_the_read_limit_is_64_mib() -> None:
    from dsh_fs.fs.legacy_text import LEGACY_MAX_BYTES

    assert LEGACY_MAX_BYTES == 67108864  # docs/ENCODINGS.md "up to 64 MiB"
