"""Whitespace-only lines that end a hunk are skipped, as Codex's parser skips them
(``openai/codex`` ``codex-rs/apply-patch/src/parser.rs`` at 0e0fb63d029055d4aec1d536a3d72f70164ba8a6:
``parse_update_file_chunk`` ends a chunk at a line that is neither empty nor starts with
`` ``/``+``/``-``, and ``parse_one_hunk`` skips the lines whose ``trim()`` is empty before the
next chunk). A line of spaces stays a context line (its first character is `` ``)."""

from __future__ import annotations

import pytest

from dsh_fs.patch import PatchError
from dsh_fs.patch.model import Chunk, UpdateFile
from dsh_fs.patch.parser import parse_operation, parse_patch

FIRST = Chunk(anchors=("",), lines=(("-", "a"), ("+", "b")))
SECOND = Chunk(anchors=("c",), lines=(("-", "d"), ("+", "e")))


@pytest.mark.parametrize("blank", ["\t", "\t ", "\t\t", "\x0b", "\f", "\u00a0", "\u3000"])
def test_a_whitespace_only_line_between_two_hunks_is_skipped(blank: str) -> None:
    text = f"*** Begin Patch\n*** Update File: f\n@@\n-a\n+b\n{blank}\n@@ c\n-d\n+e\n*** End Patch"
    assert parse_patch(text).ops == (UpdateFile(path="f", chunks=(FIRST, SECOND)),)
    op = parse_operation("update_file", "f", f"@@\n-a\n+b\n{blank}\n@@ c\n-d\n+e\n")
    assert op == UpdateFile(path="f", chunks=(FIRST, SECOND), dialect="v4a")


def test_whitespace_only_lines_before_the_next_file_or_the_end_are_skipped() -> None:
    text = "*** Begin Patch\n*** Update File: f\n@@\n-a\n+b\n\t\n\t \n*** Delete File: g\n*** End Patch"
    (update, _delete) = parse_patch(text).ops
    assert update == UpdateFile(path="f", chunks=(FIRST,))
    assert parse_patch("*** Begin Patch\n*** Update File: f\n@@\n-a\n+b\n\t\n*** End Patch").ops == (
        UpdateFile(path="f", chunks=(FIRST,)),)


def test_a_line_of_spaces_inside_a_hunk_is_still_a_context_line() -> None:
    text = "*** Begin Patch\n*** Update File: f\n@@\n-a\n   \n+b\n*** End Patch"
    (update,) = parse_patch(text).ops
    assert update.chunks[0].lines == (("-", "a"), (" ", "  "), ("+", "b"))


def test_a_hunk_after_the_skipped_line_still_needs_its_at_at_line() -> None:
    with pytest.raises(PatchError) as caught:
        parse_patch("*** Begin Patch\n*** Update File: f\n@@\n-a\n\t\n+b\n*** End Patch")
    assert "Invalid patch hunk on line 6" in str(caught.value)


def test_a_whitespace_only_first_line_of_a_hunk_is_still_refused() -> None:
    with pytest.raises(PatchError) as caught:
        parse_patch("*** Begin Patch\n*** Update File: f\n@@\n\t\n-a\n*** End Patch")
    assert str(caught.value).startswith("Invalid patch hunk on line 4: Unexpected line found in update hunk: '\t'.")
