"""``tool_fs.stale_diff``: the changes block of a stale refusal (DEVIATIONS D30): its header,
a standard unified diff, the caps and the cut note; a whole diff carries the new text."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from dsh_fs.tool_fs.stale_diff import HEADER, MAX_BYTES, MAX_LINES, Changes, changes_block, cut_note, lines_of


def test_the_texts() -> None:
    assert HEADER == "What changed since you last saw it (unified diff: - as you saw it, + as it is now):"
    assert cut_note(7) == "(diff cut after 7 lines; read the file to see the rest)"
    assert (MAX_LINES, MAX_BYTES) == (100, 8192)


def test_lines_of_drops_breaks_like_read() -> None:
    assert lines_of("a\r\nb\nc") == ["a", "b", "c"]
    assert lines_of("a\n") == ["a"]
    assert lines_of("") == []
    assert lines_of("\n") == [""]
    assert lines_of("a\r\r\n") == ["a\r"]
    assert lines_of("a\rb\n") == ["a\rb"]


def test_a_change_is_a_unified_diff_after_the_header() -> None:
    got = changes_block("a\nb\nc\nd\ne\nf\ng\nh\n", "a\nb\nc\nd\nE\nf\ng\nh\n", "/w/x.txt")
    assert got == Changes(
        "\n".join([HEADER, "--- /w/x.txt (as you saw it)", "+++ /w/x.txt (now)", "@@ -2,7 +2,7 @@",
                   " b", " c", " d", "-e", "+E", " f", " g", " h"]), True)


def test_the_same_lines_give_no_block() -> None:
    assert changes_block("a\r\nb\r\n", "a\nb", "/x") is None
    assert changes_block("", "", "/x") is None


def test_the_line_cap_cuts_and_says_so() -> None:
    old = "".join(f"{i}\n" for i in range(50))
    new = "".join(f"x{i}\n" for i in range(50))
    got = changes_block(old, new, "/x", max_lines=10)
    assert got is not None and not got.whole
    lines = got.text.split("\n")
    assert lines[0] == HEADER and len(lines) == 12 and lines[-1] == cut_note(10)
    exact = changes_block("a\n", "b\n", "/x", max_lines=5)  # headers, hunk, -a, +b: exactly 5
    assert exact is not None and exact.whole
    assert not changes_block("a\n", "b\n", "/x", max_lines=4).whole  # type: ignore[union-attr]


def test_the_byte_cap_counts_utf8_and_line_breaks() -> None:
    whole = changes_block("a\n", "é\n", "/x")
    assert whole is not None
    size = len("\n".join(whole.text.split("\n")[1:]).encode()) + 1  # every diff line and its break
    assert changes_block("a\n", "é\n", "/x", max_bytes=size).whole  # type: ignore[union-attr]
    cut = changes_block("a\n", "é\n", "/x", max_bytes=size - 1)
    assert cut is not None and not cut.whole and cut.text.endswith(cut_note(4))


def _apply(old: list[str], diff: list[str]) -> list[str]:
    """Apply a unified diff of lines (what a model does with it)."""
    out: list[str] = []
    at = 0
    for line in diff:
        m = re.match(r"@@ -(\d+)(?:,(\d+))? ", line)
        if m:
            start = int(m.group(1)) - (0 if m.group(2) == "0" else 1)
            out += old[at:start]
            at = start
        elif line.startswith((" ", "-")):
            assert old[at] == line[1:]
            if line[0] == " ":
                out.append(old[at])
            at += 1
        elif line.startswith("+"):
            out.append(line[1:])
    return out + old[at:]


texts = st.lists(st.sampled_from(["a", "b", "c", "é", "", "  x"]), max_size=30).map(lambda ls: "".join(f"{x}\n" for x in ls))


@given(old=texts, new=texts, max_lines=st.integers(1, 40), max_bytes=st.integers(1, 400))
def test_a_whole_diff_turns_what_was_seen_into_what_is_there(old: str, new: str, max_lines: int, max_bytes: int) -> None:
    got = changes_block(old, new, "/f", max_lines=max_lines, max_bytes=max_bytes)
    if lines_of(old) == lines_of(new):
        assert got is None
        return
    assert got is not None
    lines = got.text.split("\n")
    assert lines[0] == HEADER
    shown = lines[1:] if got.whole else lines[1:-1]
    assert len(shown) <= max_lines and sum(len(x.encode()) + 1 for x in shown) <= max_bytes
    if got.whole:
        assert shown[:2] == ["--- /f (as you saw it)", "+++ /f (now)"]
        assert _apply(lines_of(old), shown[2:]) == lines_of(new)
    else:
        assert lines[-1] == cut_note(len(shown))
