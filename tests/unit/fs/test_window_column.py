"""D35 in the pure windowing (``fs.window``): a window from ``column`` c of line ``offset`` is
the window of the same text with that line's first c − 1 characters gone, whatever the chunking;
a column past the line's end is ``FS_NOT_FOUND``; reads from column 1, 1 + cap, 1 + 2·cap …
show the whole line."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from dsh_fs.fs.errors import FsError
from dsh_fs.fs.window import ReadWindow, truncation_suffix, window_text, window_whole

ALPHABET = st.sampled_from(["a", "b", "é", "\u4e2d", "\U0001f600", "\r", "\n", " "])
text_strategy = st.lists(ALPHABET, max_size=60).map("".join)


def chunked(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c % (len(text) + 1) for c in cuts})
    bounds = [0, *points, len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:]) if b > a]


def trimmed(text: str, offset: int, skip: int) -> str | None:
    """``text`` with line ``offset``'s first ``skip`` characters removed; ``None`` when the line
    has no character left (its final CR is not one: §4.6.3 strips it)."""
    if skip == 0 or not text:
        return text  # nothing skipped; an empty file has no line 1 to be short (§4.6.4's special case)
    lines = text.split("\n")
    if offset > len(lines) or (offset == len(lines) and lines[-1] == "" and text):
        return text  # no such line: the offset rule decides, as without a column
    line = lines[offset - 1]
    rest = line[skip:]
    visible = rest[:-1] if rest.endswith("\r") else rest  # a line's final CR is its line break
    if not visible:
        return None
    lines[offset - 1] = rest
    return "\n".join(lines)


def windows(offset: int, column: int, cap: int, max_bytes: int = 40, **kw: object) -> tuple[ReadWindow, ReadWindow]:
    base = dict(offset=offset, limit=4, max_line_length=cap, max_bytes=max_bytes, always_progress=True,
                exact_truncation=True, **kw)
    return ReadWindow(column=column, **base), ReadWindow(column=1, **base)  # type: ignore[arg-type]


def outcome(run):  # type: ignore[no-untyped-def]
    try:
        return run()
    except FsError as err:
        return ("error", err.code, str(err))


@settings(max_examples=1500)
@given(text_strategy, st.integers(1, 4), st.integers(1, 12), st.integers(1, 6), st.lists(st.integers(0, 80), max_size=6))
def test_a_column_window_is_the_window_of_the_trimmed_line(text, offset, column, cap, cuts):
    with_column, plain = windows(offset, column, cap)
    got = outcome(lambda: window_text(chunked(text, cuts), with_column, "/f"))
    assert got == outcome(lambda: window_whole(text, with_column, "/f"))
    expected_text = trimmed(text, offset, column - 1)
    if expected_text is None:
        assert isinstance(got, tuple) and got[2].startswith(f'column {column} is out of range for line {offset} of "/f" (')
    else:
        assert got == outcome(lambda: window_text([expected_text], plain, "/f"))


def test_a_column_past_the_end_names_the_line_and_its_length():
    window, _ = windows(2, 5, 10)
    for text in ("x\nabc\ny", "x\nabcd\n", "x\nabcd\r\ny", "x\nabcd"):
        with pytest.raises(FsError) as caught:
            window_text([text], window, "/f")
        length = 3 if "abc\n" in text else 4
        assert caught.value.code == "FS_NOT_FOUND"
        assert str(caught.value) == f'column 5 is out of range for line 2 of "/f" ({length} characters)'
    with pytest.raises(FsError, match=r"^offset 2 is out of range"):
        window_text(["one line"], window, "/f")


def test_a_cut_line_goes_on_at_column_plus_the_cap():
    line = "".join(chr(ord("a") + i % 26) for i in range(25))
    pieces, column = [], 1
    while True:
        window, _ = windows(1, column, 10, 500)
        (shown, after) = window_text([line + "\nnext"], window, "/f").lines
        assert after.text == "next"
        if not shown.text.endswith(truncation_suffix(10)):
            pieces.append(shown.text)
            break
        pieces.append(shown.text[: -len(truncation_suffix(10))])
        column += 10
    assert "".join(pieces) == line and column == 21


def test_the_byte_cap_cut_of_a_column_read_still_makes_progress():
    # D10 cuts a first line over max_bytes to fit; from a column it is cut the same way
    window = ReadWindow(offset=1, limit=5, max_line_length=100, max_bytes=40, always_progress=True, column=7)
    line = "".join(chr(ord("a") + i % 26) for i in range(100))
    (shown,) = window_text([line], window, "/f").lines
    kept = shown.text.split("...")[0]
    assert kept and line[6:].startswith(kept) and shown.text == kept + truncation_suffix(len(kept))
