"""The patch parser (``dsh_fs.patch.parser``) and formatter: the Codex envelope and the V4A
operation diffs, every syntax error with its line, and what each construct means.

Not covered here: where hunks apply (test_patch_apply.py), round trips over random patches
(test_patch_properties.py).
"""

from __future__ import annotations

import pytest

from dsh_fs.patch import AddFile, Chunk, DeleteFile, Patch, PatchError, UpdateFile, format_operation_diff, format_patch
from dsh_fs.patch import parse_operation, parse_patch
from dsh_fs.patch.parser import split_lines

# The example of Codex's apply_patch_tool_instructions.md.
CODEX_EXAMPLE = """*** Begin Patch
*** Add File: hello.txt
+Hello world
*** Update File: src/app.py
*** Move to: src/main.py
@@ def greet():
-print("Hi")
+print("Hello, world!")
*** Delete File: obsolete.txt
*** End Patch
"""


def test_the_codex_example_parses_into_its_three_operations() -> None:
    patch = parse_patch(CODEX_EXAMPLE)
    assert patch == Patch(
        ops=(
            AddFile(path="hello.txt", text="Hello world\n"),
            UpdateFile(
                path="src/app.py",
                move_to="src/main.py",
                chunks=(Chunk(anchors=("def greet():",), lines=(("-", 'print("Hi")'), ("+", 'print("Hello, world!")'))),),
            ),
            DeleteFile(path="obsolete.txt"),
        )
    )
    assert [op.line for op in patch.ops] == [2, 4, 9]
    assert patch.ops[1].chunks[0].line == 6  # type: ignore[union-attr]
    assert format_patch(patch) == CODEX_EXAMPLE


@pytest.mark.parametrize(
    "text,message",
    [
        ("", "Invalid patch: The first line of the patch must be '*** Begin Patch'"),
        ("bad", "Invalid patch: The first line of the patch must be '*** Begin Patch'"),
        ("*** Begin Patch", "Invalid patch: The last line of the patch must be '*** End Patch'"),
        ("*** Begin Patch\nbad", "Invalid patch: The last line of the patch must be '*** End Patch'"),
        (
            "*** Begin Patch\n*** Frobnicate File: x\n*** End Patch",
            "Invalid patch hunk on line 2: '*** Frobnicate File: x' is not a valid hunk header. Valid hunk headers: "
            "'*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'",
        ),
        (
            "*** Begin Patch\n*** Update File: test.py\n*** End Patch",
            "Invalid patch hunk on line 2: Update file hunk for path 'test.py' is empty",
        ),
        (
            "*** Begin Patch\n*** Update File: f\n@@\n-a\n+b\n-c\n*** End Patch",
            None,  # valid: one hunk
        ),
        (  # the move line names no destination: said at its line (not "the update is empty" at line 2)
            "*** Begin Patch\n*** Update File: f\n*** Move to: \n@@\n-a\n+b\n*** End Patch",
            "Invalid patch hunk on line 3: Update file hunk for path 'f' has an empty '*** Move to:' path",
        ),
        (
            "*** Begin Patch\n*** Update File: f\n@@\n*** End Patch",
            "Invalid patch hunk on line 4: Update hunk does not contain any lines",
        ),
        (
            "*** Begin Patch\n*** Update File: f\n@@ x\n*** End of File\n*** End Patch",
            "Invalid patch hunk on line 4: Update hunk does not contain any lines",
        ),
        (  # the empty hunk is named at its End of File line, even with an operation after it
            "*** Begin Patch\n*** Update File: f\n@@ x\n*** End of File\n*** Delete File: g\n*** End Patch",
            "Invalid patch hunk on line 4: Update hunk does not contain any lines",
        ),
        (  # Codex drops a heredoc wrapper only around at least 4 lines: 3 are not a patch
            "\n<<'EOF'\n*** Begin Patch\nEOF\n",
            "Invalid patch: The first line of the patch must be '*** Begin Patch'",
        ),
        (
            "*** Begin Patch\n*** Update File: f\n a\n+b\nstray\n*** End Patch",
            "Invalid patch hunk on line 5: Unexpected line found in update hunk: 'stray'. Every line should start "
            "with ' ' (context line), '+' (added line), or '-' (removed line)",
        ),
        (
            "*** Begin Patch\n*** Add File: a\n+x\n\n*** End Patch",
            "Invalid patch hunk on line 4: '' is not a valid hunk header. Valid hunk headers: "
            "'*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'",
        ),
    ],
)
def test_malformed_patches_name_the_line_and_what_was_expected(text: str, message: str | None) -> None:
    if message is None:
        parse_patch(text)
        return
    with pytest.raises(PatchError) as info:
        parse_patch(text)
    assert str(info.value) == message
    assert info.value.kind == "syntax"


def test_a_second_hunk_needs_its_at_at_line() -> None:
    # two hunks are separated by @@; a run of diff lines cannot restart without one
    text = "*** Begin Patch\n*** Update File: f\n@@\n-a\n+b\n*** End of File\n-c\n*** End Patch"
    with pytest.raises(PatchError) as info:
        parse_patch(text)
    assert str(info.value) == (
        "Invalid patch hunk on line 7: Expected update hunk to start with a @@ context marker, got: '-c'"
    )


def test_leniencies_of_codex_blank_lines_heredoc_padding() -> None:
    body = "*** Begin Patch \n  *** Update File: f  \n\n@@\n-a\n+b\n *** End Patch"
    expected = Patch(ops=(UpdateFile(path="f", chunks=(Chunk(anchors=("",), lines=(("-", "a"), ("+", "b"))),)),))
    assert parse_patch("\n\n" + body + "\n\n") == expected
    assert parse_patch("<<'EOF'\n" + body + "\nEOF\n") == expected
    assert parse_patch('<<"EOF"\n' + body + "\nEOF") == expected
    # the shortest wrapped patch (4 lines) is unwrapped too: an empty patch, not a first-line error
    assert parse_patch("\n<<EOF\n*** Begin Patch\n*** End Patch\nEOF\n") == Patch(ops=())


def test_blank_lines_between_hunks_and_after_end_of_file_are_skipped() -> None:
    # Codex test_unified_diff_insert_at_eof: its wrapper leaves a blank line after *** End of File
    eof = Chunk(anchors=("",), lines=(("+", "quux"),), end_of_file=True)
    (update,) = parse_patch("*** Begin Patch\n*** Update File: f\n@@\n+quux\n*** End of File\n\n*** End Patch").ops
    assert update == UpdateFile(path="f", chunks=(eof,))
    # derived: blank and whitespace-only lines between an end-of-file hunk and the next one
    (update,) = parse_patch(
        "*** Begin Patch\n*** Update File: f\n@@\n+quux\n*** End of File\n  \n\t\n\n@@ a\n-b\n*** End Patch"
    ).ops
    assert update == UpdateFile(path="f", chunks=(eof, Chunk(anchors=("a",), lines=(("-", "b"),))))
    # derived: the same in a Responses update_file diff
    op = parse_operation("update_file", "f", "@@\n+quux\n*** End of File\n \n\n@@ a\n-b\n")
    assert op == UpdateFile(path="f", chunks=(eof, Chunk(anchors=("a",), lines=(("-", "b"),))), dialect="v4a")


def test_line_numbers_count_the_text_as_given() -> None:
    with pytest.raises(PatchError) as info:
        parse_patch("\n\n*** Begin Patch\n*** Nope\n*** End Patch")
    assert str(info.value).startswith("Invalid patch hunk on line 4: '*** Nope'")
    assert info.value.line == 4


def test_hunk_lines_context_removed_added_empty_anchors_and_end_of_file() -> None:
    patch = parse_patch(
        "*** Begin Patch\n*** Update File: f\n keep\n-old\n+new\n\n@@ class A\n@@     def m():\n-x\n+y\n*** End of File\n*** End Patch"
    )
    (update,) = patch.ops
    assert isinstance(update, UpdateFile)
    first, second = update.chunks
    assert first == Chunk(lines=((" ", "keep"), ("-", "old"), ("+", "new"), (" ", "")))
    assert second == Chunk(anchors=("class A", "    def m():"), lines=(("-", "x"), ("+", "y")), end_of_file=True)
    assert first.old_lines == ["keep", "old", ""] and first.new_lines == ["keep", "new", ""]


def test_blank_anchor_text_is_a_bare_at_at() -> None:
    (update,) = parse_patch("*** Begin Patch\n*** Update File: f\n@@   \n-a\n*** End Patch").ops
    assert update.chunks[0].anchors == ("",)  # type: ignore[union-attr]


def test_a_crlf_patch_reads_like_an_lf_one_and_added_files_keep_their_line_breaks() -> None:
    patch = parse_patch("*** Begin Patch\r\n*** Add File: w.txt\r\n+one\r\n+two\r\n*** Update File: f\r\n@@\r\n-a\r\n+b\r\n*** End Patch\r\n")
    add, update = patch.ops
    assert add == AddFile(path="w.txt", text="one\r\ntwo\r\n")
    assert update == UpdateFile(path="f", chunks=(Chunk(anchors=("",), lines=(("-", "a"), ("+", "b"))),))


def test_a_lone_cr_is_text_not_a_line_break() -> None:
    (add,) = parse_patch("*** Begin Patch\n*** Add File: a\n+x\ry\n*** End Patch").ops
    assert add == AddFile(path="a", text="x\ry\n")
    assert split_lines("a\rb\r\nc\r") == [("a\rb", "\r\n"), ("c\r", "")]


def test_an_add_file_without_lines_creates_an_empty_file() -> None:
    assert parse_patch("*** Begin Patch\n*** Add File: e\n*** End Patch").ops == (AddFile(path="e", text=""),)


# -- V4A operation diffs (Responses API, Agents SDK) ------------------------------------------


@pytest.mark.parametrize(
    "diff,text",
    [
        ("+hello\n+world\n+", "hello\nworld\n"),  # SDK test_apply_diff_create_mode_preserves_trailing_newline
        ("+hello\n+world\n", "hello\nworld"),
        ("+hello\n+world", "hello\nworld"),
        ("+a\r\n+b\r\n+", "a\r\nb\r\n"),
        ("+", ""),
        ("", ""),
    ],
)
def test_create_file_diffs_join_their_lines_as_the_sdk_does(diff: str, text: str) -> None:
    assert parse_operation("create_file", "p", diff) == AddFile(path="p", text=text)


def test_create_file_lines_must_start_with_plus() -> None:
    with pytest.raises(PatchError) as info:
        parse_operation("create_file", "p", "+ok\nplain line\n")
    assert str(info.value) == (
        "Invalid patch hunk on line 2: Unexpected line found in add file hunk: 'plain line'. "
        "Every line should start with '+' (added line)"
    )


def test_update_file_diffs_are_hunks_without_the_envelope() -> None:
    op = parse_operation("update_file", "p", "@@ line1\n-line2\n+updated\n line3", move_to="q")
    assert op == UpdateFile(
        path="p",
        move_to="q",
        dialect="v4a",
        chunks=(Chunk(anchors=("line1",), lines=(("-", "line2"), ("+", "updated"), (" ", "line3"))),),
    )
    # the first hunk may start without @@, as in the envelope
    assert parse_operation("update_file", "p", " a\n-b\n").chunks[0].anchors == ()  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "diff,message",
    [
        ("", "Invalid patch hunk on line 1: Update file hunk for path 'p' is empty"),
        (
            "@@\n-a\n*** Update File: q\n",
            "Invalid patch hunk on line 3: Unexpected line found in update hunk: '*** Update File: q'. Every line "
            "should start with ' ' (context line), '+' (added line), or '-' (removed line)",
        ),
        ("@@ a\n", "Invalid patch hunk on line 2: Update hunk does not contain any lines"),
    ],
)
def test_malformed_update_diffs(diff: str, message: str) -> None:
    with pytest.raises(PatchError) as info:
        parse_operation("update_file", "p", diff)
    assert str(info.value) == message


def test_delete_file_ignores_the_diff_and_unknown_types_are_refused() -> None:
    assert parse_operation("delete_file", "p", None) == DeleteFile(path="p")
    with pytest.raises(ValueError):
        parse_operation("rename_file", "p", "")  # type: ignore[arg-type]


def test_formatting_refuses_what_the_text_cannot_carry() -> None:
    with pytest.raises(ValueError):
        format_patch(Patch(ops=(AddFile(path="a", text="no final newline"),)))
    with pytest.raises(ValueError):
        format_patch(Patch(ops=(DeleteFile(path=" padded"),)))
    second_without_anchor = UpdateFile(path="f", chunks=(Chunk(lines=(("-", "a"),)), Chunk(lines=(("-", "b"),))))
    with pytest.raises(ValueError):
        format_patch(Patch(ops=(second_without_anchor,)))
    with pytest.raises(ValueError):
        format_operation_diff(UpdateFile(path="f", chunks=(Chunk(lines=(("-", "a\nb"),)),)))
    with pytest.raises(ValueError):  # the parser would skip that blank first line
        format_operation_diff(UpdateFile(path="f", chunks=(Chunk(lines=((" ", " "),)),)))
    assert format_operation_diff(DeleteFile(path="f")) == ""
    assert format_operation_diff(AddFile(path="f", text="a\nb\n")) == "+a\n+b\n+"


def test_a_parsed_patch_is_an_immutable_value() -> None:
    # the planner runs on a worker thread over the parsed patch: nothing in it can be changed, and equal
    # patches (line numbers aside) hash alike
    import dataclasses

    patch = parse_patch(CODEX_EXAMPLE)
    add, update, delete = patch.ops
    values = (patch, add, update, delete, update.chunks[0])  # type: ignore[union-attr]
    for value, name in zip(values, ("ops", "text", "move_to", "path", "lines")):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(value, name, ())
    assert len({parse_patch(CODEX_EXAMPLE), parse_patch("\n" + CODEX_EXAMPLE)}) == 1
    assert len(set(values)) == len(values)


@pytest.mark.parametrize("op", [
    AddFile(path="", text="x\n"),
    DeleteFile(path="a\nb"),
    DeleteFile(path="a\rb"),
    UpdateFile(path="f", move_to=" g", chunks=(Chunk(anchors=("",), lines=(("-", "a"),)),)),
    UpdateFile(path="f", chunks=(Chunk(anchors=("  ",), lines=(("-", "a"),)),)),  # a blank anchor is a bare @@
    UpdateFile(path="f", chunks=(Chunk(anchors=("a\nb",), lines=(("-", "a"),)),)),
    UpdateFile(path="f", chunks=(Chunk(anchors=("",), lines=(("-", "a\r"),)),)),
    UpdateFile(path="f", chunks=()),
    UpdateFile(path="f", chunks=(Chunk(anchors=("",)),)),
])
def test_formatting_refuses_each_name_and_line_the_envelope_cannot_carry(op: AddFile | DeleteFile | UpdateFile) -> None:
    with pytest.raises(ValueError):
        format_patch(Patch(ops=(op,)))


def test_formatting_writes_anchors_moves_and_end_of_file_marks() -> None:
    op = UpdateFile(path="f", move_to="g", chunks=(
        Chunk(lines=((" ", "a"),)),
        Chunk(anchors=("", "def f():"), lines=(("-", "b"), ("+", "c")), end_of_file=True),
    ))
    diff = " a\n@@\n@@ def f():\n-b\n+c\n*** End of File\n"
    assert format_patch(Patch(ops=(op,))) == f"*** Begin Patch\n*** Update File: f\n*** Move to: g\n{diff}*** End Patch\n"
    assert format_operation_diff(op) == diff
