"""The text-editor faces through the registry on the local disk (``dsh_fs.tool_editor``).

Covers both tools as a model meets them: Anthropic's ``str_replace_based_edit_tool`` (the
documented texts, ``view`` numbering and ranges, ``max_characters``, create-or-overwrite under
the policy, ``str_replace`` as ``edit`` with a unique match and its D2/D5 behaviour, ``insert``
after ``insert_line`` with ``insert_text`` or ``new_str``) and the reference's
``str_replace_editor`` (its texts byte for byte, absolute paths, the reference profile's raw
matching, ``maxOutputChars``); the observations ``view`` records and the guards every change
runs under; CRLF and BOM bytes kept; files untouched after every failure.
Not covered here: the pure rendering and insertion rules (tests/unit/tool_editor/test_editor_pure.py), the
Anthropic adapter's blocks (tests/unit/adapters/test_editing_adapters.py).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pytest

import dsh_fs
from dsh_fs import Session
from dsh_fs.fs.errors import permission_denied
from dsh_fs.fs_local import LocalFileSystem
from dsh_fs.tool_editor import ToolStrReplaceEditor, ToolTextEditor
from dsh_fs.tool_editor.texts import TRUNCATED_MESSAGE
from filekit import get, put

pytestmark = pytest.mark.anyio

BOM = b"\xef\xbb\xbf"
TE = "str_replace_based_edit_tool"
SRE = "str_replace_editor"


@pytest.fixture
def editor_ctx(make_ctx: Callable[..., dsh_fs.Context]) -> Callable[..., dsh_fs.Context]:
    return lambda **kw: make_ctx(faces=[TE, SRE], **kw)


async def run(ctx: dsh_fs.Context, session: Session, tool: str, **args: Any) -> Any:
    return await ctx.tools.execute(tool, args, session=session)


# -- str_replace_based_edit_tool ---------------------------------------------------------------

async def test_view_numbers_lines_as_documented(ws: str, editor_ctx: Any) -> None:
    put(f"{ws}/a.py", BOM + b"def is_prime(n):\r\n    return n > 1\r\n\r\n# end")
    ctx, session = editor_ctx(), Session(cwd=ws)
    whole = await run(ctx, session, TE, command="view", path="a.py")
    assert whole.text == "1: def is_prime(n):\n2:     return n > 1\n3: \n4: # end"
    part = await run(ctx, session, TE, command="view", path=f"{ws}/a.py", view_range=[2, -1])
    assert part.text == "2:     return n > 1\n3: \n4: # end"
    bad = await run(editor_ctx(profile="reference"), session, TE, command="view", path="a.py", view_range=[3, 9])
    assert bad.text == ("Error: Invalid `view_range`: [3, 9]. Its second element `9` should be smaller than the "
                        "number of lines in the file: `4`") and bad.error is None
    shape = await run(ctx, session, TE, command="view", path="a.py", view_range=[1])
    assert shape.text == "Error: Invalid `view_range`. It should be a list of two integers."
    typed = await run(ctx, session, TE, command="view", path="a.py", view_range=[1, "2"])
    assert typed.text == 'Error: invalid arguments: "view_range[1]" must be an integer'


async def test_numbers_are_read_and_shown_as_json_and_javascript_have_them(ws: str, editor_ctx: Any, tree: Any) -> None:
    """``2.0`` is the JSON integer 2 (the schema accepts it, so the commands must too); numbers in
    texts are printed as the reference prints them (``1e+300``, never 301 digits or ``-1.0``)."""
    put(f"{ws}/a.txt", "one\ntwo\nthree\n")
    ctx, session = editor_ctx(), Session(cwd=ws)
    part = await run(ctx, session, TE, command="view", path="a.txt", view_range=[2.0, 3.0])
    assert part.text == "2: two\n3: three"
    ref = await run(ctx, session, SRE, command="view", path=f"{ws}/a.txt", view_range=[3.0, -1.0])
    assert ref.text == (f"Here's the content of {ws}/a.txt with line numbers (which has a total of 3 lines) "
                        "with view_range=[3, -1]:\n     3  three\n")  # E21
    before = tree(ws)
    far = await run(ctx, session, TE, command="insert", path="a.txt", insert_line=1e300, insert_text="x")
    assert far.text == "Error: Invalid `insert_line` parameter: 1e+300. It should be within the range [0, 3]."
    far_ref = await run(ctx, session, SRE, command="insert", path=f"{ws}/a.txt", insert_line=1e300, new_str="x")
    assert far_ref.text == ("Error: Invalid `insert_line` parameter: 1e+300. It should be within the range of lines "
                            "of the file: [0, 3]")  # E21
    assert tree(ws) == before
    done = await run(ctx, session, TE, command="insert", path="a.txt", insert_line=1.0, insert_text="x")
    assert not done.is_error and get(f"{ws}/a.txt") == b"one\nx\ntwo\nthree\n"


async def test_view_records_an_observation_like_read(ws: str, editor_ctx: Any) -> None:
    # DEVIATIONS E14
    put(f"{ws}/a.txt", "alpha\n")
    ctx, session = editor_ctx(), Session(cwd=ws)
    refused = await run(ctx, session, "edit", file_path="a.txt", old_string="alpha", new_string="beta")
    assert refused.error is not None and refused.error.code == "FS_NOT_OBSERVED"
    await run(ctx, session, TE, command="view", path="a.txt")
    done = await run(ctx, session, "edit", file_path="a.txt", old_string="alpha", new_string="beta")
    assert not done.is_error and get(f"{ws}/a.txt") == b"beta\n"


async def test_max_characters_cuts_views_on_a_line_boundary(ws: str, make_ctx: Any) -> None:
    # DEVIATIONS E7
    put(f"{ws}/a.txt", "".join(f"line {i}\n" for i in range(1, 30)))
    ctx, session = make_ctx(), Session(cwd=ws)
    ctx.plugin(ToolTextEditor, max_characters=20)
    result = await run(ctx, session, TE, command="view", path="a.txt")
    assert result.text.startswith("1: line 1\n2: line 2\n<response clipped><NOTE>")
    assert ctx.tools.get(TE).native == {  # type: ignore[union-attr]
        "anthropic": {"type": "text_editor_20250728", "name": TE, "max_characters": 20}}
    with pytest.raises(ValueError, match="tool-text-editor: max_characters must be a positive integer"):
        make_ctx().plugin(ToolTextEditor, max_characters=0)


async def test_view_of_a_directory_and_of_nothing(ws: str, editor_ctx: Any) -> None:
    for rel in ("src/app.py", "src/pkg/mod.py", "src/pkg/deep/x.py", ".git/HEAD", "node_modules/m/i.js",
                "src/__pycache__/c.pyc", "README.md"):
        put(f"{ws}/{rel}", "x")
    ctx, session = editor_ctx(), Session(cwd=ws)
    listing = await run(ctx, session, TE, command="view", path=".")
    assert listing.text == (
        f"Here're the files and directories up to 2 levels deep in {ws}, excluding hidden items, node_modules, "
        f"and Python cache directories:\nd\t{ws}\nf\t{ws}/README.md\nd\t{ws}/src\nf\t{ws}/src/app.py\n"
        f"d\t{ws}/src/pkg\n\n"
    )
    ranged = await run(ctx, session, TE, command="view", path=".", view_range=[1, 2])
    assert ranged.text == "Error: The `view_range` parameter is not allowed when `path` points to a directory."
    missing = await run(ctx, session, TE, command="view", path="nope.txt")
    assert (missing.text, missing.error.code) == ("Error: File not found", "FS_NOT_FOUND")  # type: ignore[union-attr]


async def test_E18_a_huge_directory_view_is_clipped(ws: str, editor_ctx: Any, make_ctx: Any) -> None:
    """Without ``max_characters``, the default profile clips a directory view at 16,000
    characters with the ``<response clipped>`` note (a tree of 3,000 files would be ~100 KB);
    the reference profile shows it whole; ``max_characters`` still rules when given."""
    for i in range(3000):
        put(f"{ws}/src/module_with_a_long_name_{i:04}.py", "x")
    header = (f"Here're the files and directories up to 2 levels deep in {ws}, excluding hidden items, "
              "node_modules, and Python cache directories:\n")
    clipped = (await run(editor_ctx(), Session(cwd=ws), TE, command="view", path=".")).text
    assert clipped.startswith(header + f"d\t{ws}\nd\t{ws}/src\nf\t{ws}/src/module_with_a_long_name_0000.py\n")
    assert clipped.endswith(TRUNCATED_MESSAGE + "\n") and len(clipped) == len(header) + 16_000 + len(TRUNCATED_MESSAGE) + 1
    whole = (await run(make_ctx(profile="reference").plugin(ToolTextEditor), Session(cwd=ws), TE,
                       command="view", path=".")).text
    assert "<response clipped>" not in whole and whole.count("\nf\t") == 3000
    small = await run(make_ctx().plugin(ToolTextEditor, max_characters=100), Session(cwd=ws), TE,
                      command="view", path=".")
    assert len(small.text) == len(header) + 100 + len(TRUNCATED_MESSAGE) + 1


async def test_create_is_create_or_overwrite_under_the_policy(ws: str, editor_ctx: Any, tree: Any) -> None:
    put(f"{ws}/win.txt", BOM + b"old\r\ntext\r\n")
    ctx, session = editor_ctx(), Session(cwd=ws)
    new = await run(ctx, session, TE, command="create", path="sub/new.txt", file_text="hello\n")
    assert new.text == f"File created successfully at: {ws}/sub/new.txt" and get(f"{ws}/sub/new.txt") == b"hello\n"
    before = tree(ws)
    refused = await run(ctx, session, TE, command="create", path="win.txt", file_text="new\n")
    assert refused.text == (f'Error: cannot overwrite existing "{ws}/win.txt" without reading it first '
                            "— read the file, then retry")
    assert tree(ws) == before
    await run(ctx, session, TE, command="view", path="win.txt")
    over = await run(ctx, session, TE, command="create", path="win.txt", file_text="new\ntext\n")
    assert not over.is_error and get(f"{ws}/win.txt") == BOM + b"new\r\ntext\r\n"  # D4
    missing = await run(ctx, session, TE, command="create", path="x.txt")
    assert missing.text == "Error: Parameter `file_text` is required for command: create"


async def test_str_replace_is_edit_with_a_unique_match(ws: str, editor_ctx: Any, tree: Any) -> None:
    # DEVIATIONS E16
    put(f"{ws}/a.py", b"def f():\r\n    return 1\r\n\r\ndef g():\r\n    return 1\r\n")
    ctx, session = editor_ctx(), Session(cwd=ws)
    unread = await run(ctx, session, TE, command="str_replace", path="a.py", old_str="def f", new_str="def h")
    assert unread.error is not None and unread.error.code == "FS_NOT_OBSERVED"
    await run(ctx, session, TE, command="view", path="a.py")
    before = tree(ws)
    several = await run(ctx, session, TE, command="str_replace", path="a.py", old_str="return 1", new_str="return 2")
    assert several.text == ("Error: Found 2 matches for replacement text. Please provide more context to make a "
                            "unique match.")
    assert several.error is not None and several.error.code == "FS_AMBIGUOUS_EDIT"
    none = await run(ctx, session, TE, command="str_replace", path="a.py", old_str="def f():\n  return 1",
                     new_str="x")
    assert none.text.startswith("Error: No match found for replacement. Please check your text and try again.\nHint: ")
    empty = await run(ctx, session, TE, command="str_replace", path="a.py", old_str="", new_str="x")
    assert empty.text == "Error: Parameter `old_str` is empty for command: str_replace"
    assert tree(ws) == before
    done = await run(ctx, session, TE, command="str_replace", path="a.py", old_str="def g():\n    return 1",
                     new_str="def g():\n    return 2")
    assert done.text == "Successfully replaced text at exactly one location."
    assert get(f"{ws}/a.py") == b"def f():\r\n    return 1\r\n\r\ndef g():\r\n    return 2\r\n"  # D2
    (diff,) = done.meta["diffs"]
    assert diff["path"] == "a.py" and diff["oldText"].endswith("    return 1") and diff["newText"].endswith("    return 2")
    gone = await run(ctx, session, TE, command="str_replace", path="nope.py", old_str="a", new_str="b")
    assert gone.text == "Error: File not found"
    folder = await run(ctx, session, TE, command="str_replace", path=".", old_str="a", new_str="b")
    assert folder.text == (f"Error: The path {ws} is a directory and only the `view` command can be used on "
                           "directories")


async def test_a_change_made_behind_the_view_is_stale(ws: str, editor_ctx: Any, tree: Any) -> None:
    # DEVIATIONS E14
    put(f"{ws}/a.txt", "one\ntwo\n")
    ctx, session = editor_ctx(), Session(cwd=ws)
    await run(ctx, session, TE, command="view", path="a.txt")
    for n, args in enumerate(({"command": "str_replace", "old_str": "one", "new_str": "1"},
                              {"command": "insert", "insert_line": 0, "insert_text": "zero\n"})):
        # changed again before each: a refusal's whole diff counts as seen (DEVIATIONS D30)
        put(f"{ws}/a.txt", "one\ntwo\n" + "three\n" * (n + 1))
        before = tree(ws)
        result = await run(ctx, session, TE, path="a.txt", **args)
        assert result.error is not None and result.error.code == "FS_STALE_VERSION", result.text
        assert tree(ws) == before


async def test_insert_takes_whole_lines_after_insert_line(ws: str, editor_ctx: Any) -> None:
    # DEVIATIONS E9, E13
    put(f"{ws}/a.txt", b"one\r\ntwo\r\n")
    ctx, session = editor_ctx(), Session(cwd=ws)
    await run(ctx, session, TE, command="view", path="a.txt")
    top = await run(ctx, session, TE, command="insert", path="a.txt", insert_line=0, insert_text="zero")
    assert top.text == f"The file {ws}/a.txt has been edited."
    end = await run(ctx, session, TE, command="insert", path="a.txt", insert_line=3, new_str="three\n")  # older name
    assert not end.is_error, end.text
    assert get(f"{ws}/a.txt") == b"zero\r\none\r\ntwo\r\nthree\r\n"
    out = await run(ctx, session, TE, command="insert", path="a.txt", insert_line=9, insert_text="x")
    assert out.text == "Error: Invalid `insert_line` parameter: 9. It should be within the range [0, 4]."
    typed = await run(ctx, session, TE, command="insert", path="a.txt", insert_line=1.5, insert_text="x")
    assert typed.text == 'Error: invalid arguments: "insert_line" must be an integer'
    nothing = await run(ctx, session, TE, command="insert", path="a.txt", insert_line=1)
    assert nothing.text == "Error: Parameter `insert_text` is required for command: insert"
    assert get(f"{ws}/a.txt") == b"zero\r\none\r\ntwo\r\nthree\r\n"


async def test_a_write_the_os_refuses_gets_the_documented_text(ws: str) -> None:
    class Denied(LocalFileSystem):
        async def write_text(self, target: Any, content: str, expected: Any = None, *, signal: Any = None) -> Any:
            raise permission_denied("write", target.display_path)

    put(f"{ws}/a.txt", "a\n")
    ctx = dsh_fs.create_context(provider=Denied(cwd=ws), faces=[TE])
    session = Session(cwd=ws)
    result = await run(ctx, session, TE, command="create", path="b.txt", file_text="b")
    assert (result.text, result.error.code) == (  # type: ignore[union-attr]
        "Error: Permission denied. Cannot write to file.", "FS_PERMISSION_DENIED")


# -- str_replace_editor ----------------------------------------------------------------------

async def test_the_reference_editor_needs_absolute_paths(ws: str, editor_ctx: Any) -> None:
    ctx, session = editor_ctx(), Session(cwd=ws)
    result = await run(ctx, session, SRE, command="view", path="a.txt")
    assert result.text == "Error: The path a.txt is not an absolute path, it should start with `/`. Maybe you meant /a.txt?"
    blank = await run(ctx, session, SRE, command="view", path="  ")
    assert blank.text == "Error: path must be a non-empty string"


@pytest.mark.parametrize("profile", ["default", "reference"])
async def test_the_reference_editor_view(ws: str, editor_ctx: Any, profile: str) -> None:
    # DEVIATIONS E8
    put(f"{ws}/a.txt", b"one\r\ntwo\r\n")
    ctx, session = editor_ctx(profile=profile), Session(cwd=ws)
    result = await run(ctx, session, SRE, command="view", path=f"{ws}/a.txt")
    cr = "" if profile == "default" else "\r"  # E8: the default profile shows lines LF-normalized
    count, last = (2, "") if profile == "default" else (3, "     3  \n")  # E21: the Anthropic face's line model
    assert result.text == (f"Here's the content of {ws}/a.txt with line numbers (which has a total of {count} lines):"
                           f"\n     1  one{cr}\n     2  two{cr}\n{last}")
    ranged = await run(ctx, session, SRE, command="view", path=f"{ws}/a.txt", view_range=[2, -1])
    assert ranged.text.startswith(f"Here's the content of {ws}/a.txt with line numbers (which has a total of {count} "
                                  "lines) with view_range=[2, -1]:\n     2  two")
    missing = await run(ctx, session, SRE, command="view", path=f"{ws}/nope")
    assert missing.text == f"Error: The path {ws}/nope does not exist. Please provide a valid path."


async def test_the_reference_editor_clips_at_16000_units_by_default_and_at_one_when_asked(
        ws: str, make_ctx: Any) -> None:
    put(f"{ws}/a.txt", "x\n" * 20_000)
    session = Session(cwd=ws)
    whole = await run(make_ctx().plugin(ToolStrReplaceEditor, max_output_chars=2**53 - 1), session, SRE,
                      command="view", path=f"{ws}/a.txt")
    assert not whole.is_error and len(whole.text) > 16_001 and "<response clipped>" not in whole.text
    default = await run(make_ctx().plugin(ToolStrReplaceEditor), session, SRE, command="view", path=f"{ws}/a.txt")
    assert default.text.startswith(whole.text[:16_000] + "<response clipped><NOTE>")
    one = await run(make_ctx().plugin(ToolStrReplaceEditor, max_output_chars=1), session, SRE, command="view",
                    path=f"{ws}/a.txt")
    assert one.text.startswith(whole.text[:1] + "<response clipped><NOTE>")


async def test_the_reference_editor_clips_at_max_output_chars(ws: str, make_ctx: Any) -> None:
    put(f"{ws}/a.txt", "x" * 50)
    ctx, session = make_ctx(), Session(cwd=ws)
    ctx.plugin(ToolStrReplaceEditor, max_output_chars=30)
    result = await run(ctx, session, SRE, command="view", path=f"{ws}/a.txt")
    assert result.text == f"Here's the content of {ws}"[:30] + "<response clipped><NOTE>" + result.text.split("<NOTE>")[1]
    with pytest.raises(ValueError, match="maxOutputChars must be a positive safe integer"):
        make_ctx().plugin(ToolStrReplaceEditor, max_output_chars=0)


async def test_the_reference_editor_create_str_replace_insert(ws: str, editor_ctx: Any, tree: Any) -> None:
    ctx, session = editor_ctx(profile="reference"), Session(cwd=ws)
    created = await run(ctx, session, SRE, command="create", path=f"{ws}/a.txt", file_text="a\nb\na\n")
    assert created.text == f"New file created successfully at: {ws}/a.txt"
    exists = await run(ctx, session, SRE, command="create", path=f"{ws}/a.txt", file_text="x")
    assert exists.text == f"Error: File already exists at: {ws}/a.txt. Cannot overwrite files using command `create`."
    before = tree(ws)
    several = await run(ctx, session, SRE, command="str_replace", path=f"{ws}/a.txt", old_str="a", new_str="c")
    assert several.text == ("Error: No replacement was performed. Multiple occurrences of old_str `a` in lines "
                            "[1, 3]. Please ensure it is unique")
    none = await run(ctx, session, SRE, command="str_replace", path=f"{ws}/a.txt", old_str="zz", new_str="c")
    assert none.text == f"Error: No replacement was performed, old_str `zz` did not appear verbatim in {ws}/a.txt."
    out = await run(ctx, session, SRE, command="insert", path=f"{ws}/a.txt", insert_line=5, new_str="x")
    assert out.text == ("Error: Invalid `insert_line` parameter: 5. It should be within the range of lines of the "
                        "file: [0, 4]")
    assert tree(ws) == before
    done = await run(ctx, session, SRE, command="str_replace", path=f"{ws}/a.txt", old_str="b", new_str="B")
    assert done.text == f"The file {ws}/a.txt has been edited successfully."
    inserted = await run(ctx, session, SRE, command="insert", path=f"{ws}/a.txt", insert_line=4, new_str="end")
    assert not inserted.is_error
    assert get(f"{ws}/a.txt") == b"a\nB\na\n\nend"  # the reference's line model: split("\n")


async def test_the_reference_profile_matches_the_raw_text(ws: str, editor_ctx: Any) -> None:
    # DEVIATIONS E16
    put(f"{ws}/a.txt", b"one\r\ntwo\r\n")
    put(f"{ws}/b.txt", b"one\r\ntwo\r\n")
    for profile, name in (("reference", "a.txt"), ("default", "b.txt")):
        ctx, session = editor_ctx(profile=profile), Session(cwd=ws)
        await run(ctx, session, SRE, command="view", path=f"{ws}/{name}")
        result = await run(ctx, session, SRE, command="str_replace", path=f"{ws}/{name}", old_str="one\ntwo",
                           new_str="1\n2")
        assert result.is_error == (profile == "reference"), result.text
    assert get(f"{ws}/a.txt") == b"one\r\ntwo\r\n"
    assert get(f"{ws}/b.txt") == b"1\r\n2\r\n"  # D2


# -- E19–E22 and the pins of the editors' reference behaviour ------------------------------------

SEVEN = "".join(f"l{i}\n" for i in range(1, 8))


@pytest.mark.parametrize("tool", [TE, SRE])
async def test_E19_a_replace_that_changes_nothing_is_refused(ws: str, editor_ctx: Any, tool: str) -> None:
    put(f"{ws}/a.txt", "alpha\r\nbeta\n")
    ctx, session = editor_ctx(), Session(cwd=ws)
    await run(ctx, session, tool, command="view", path=f"{ws}/a.txt")
    before = os.stat(f"{ws}/a.txt")
    for new in ("alpha", "alpha\n"):  # the same text; the same text but for its line break (D7)
        old = "alpha\r\n" if new.endswith("\n") else "alpha"
        same = await run(ctx, session, tool, command="str_replace", path=f"{ws}/a.txt", old_str=old, new_str=new)
        assert same.text == "Error: No replacement was performed. `new_str` and `old_str` must be different."
        assert same.error is None  # a plain input error, as OpenHands raises it
    after = os.stat(f"{ws}/a.txt")
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    # the reference profile does as the reference does: the call succeeds
    put(f"{ws}/b.txt", "alpha\nbeta\n")
    ref_ctx = editor_ctx(profile="reference")
    await run(ref_ctx, session, tool, command="view", path=f"{ws}/b.txt")
    done = await run(ref_ctx, session, tool, command="str_replace", path=f"{ws}/b.txt", old_str="beta", new_str="beta")
    assert not done.is_error and get(f"{ws}/b.txt") == b"alpha\nbeta\n"


async def test_E20_a_huge_file_view_is_clipped_and_says_how_to_go_on(ws: str, editor_ctx: Any) -> None:
    put(f"{ws}/big.txt", "".join(f"line {i:07d}\n" for i in range(1, 200_001)))  # 2.6 MB: streamed
    ctx, session = editor_ctx(), Session(cwd=ws)
    whole = await run(ctx, session, TE, command="view", path="big.txt")
    rows = [f"{i}: line {i:07d}" for i in range(1, 200_001)]
    shown = 0
    while len("\n".join(rows[: shown + 1])) <= 16_000:
        shown += 1
    assert whole.text == ("\n".join(rows[:shown]) + "\n" + TRUNCATED_MESSAGE + "\n"
                          f"Lines 1-{shown} of the file are shown; view the rest with view_range [{shown + 1}, -1].")
    more = await run(ctx, session, TE, command="view", path="big.txt", view_range=[shown + 1, -1])
    assert more.text.startswith(f"{shown + 1}: line {shown + 1:07d}\n") and len(more.text) < 16_001 + len(TRUNCATED_MESSAGE) + 100
    tail = await run(ctx, session, TE, command="view", path="big.txt", view_range=[199_999, -1])
    assert tail.text == "199999: line 0199999\n200000: line 0200000"
    ref = await run(editor_ctx(profile="reference"), session, TE, command="view", path="big.txt")
    assert ref.text == "\n".join(rows)  # the reference profile: Anthropic's unbounded view


async def test_E21_str_replace_editor_counts_lines_as_the_anthropic_face(ws: str, editor_ctx: Any) -> None:
    put(f"{ws}/a.txt", SEVEN)
    put(f"{ws}/b.txt", SEVEN)
    ctx, session = editor_ctx(), Session(cwd=ws)
    view = await run(ctx, session, SRE, command="view", path=f"{ws}/a.txt")
    assert view.text.startswith(f"Here's the content of {ws}/a.txt with line numbers (which has a total of 7 lines):")
    assert view.text.endswith("     7  l7\n")
    done = await run(ctx, session, SRE, command="insert", path=f"{ws}/a.txt", insert_line=7, new_str="X\n")
    assert not done.is_error and get(f"{ws}/a.txt") == (SEVEN + "X\n").encode()
    top = await run(ctx, session, SRE, command="insert", path=f"{ws}/a.txt", insert_line=0, new_str="T")
    assert not top.is_error and get(f"{ws}/a.txt") == ("T\n" + SEVEN + "X\n").encode()
    # the reference profile: split("\n"), a final line break leaves an empty line 8
    ref, ref_session = editor_ctx(profile="reference"), Session(cwd=ws)
    view = await run(ref, ref_session, SRE, command="view", path=f"{ws}/b.txt")
    assert "(which has a total of 8 lines)" in view.text and view.text.endswith("     8  \n")
    done = await run(ref, ref_session, SRE, command="insert", path=f"{ws}/b.txt", insert_line=7, new_str="X\n")
    assert not done.is_error and get(f"{ws}/b.txt") == (SEVEN + "X\n\n").encode()


@pytest.mark.parametrize("tool", [TE, SRE])
async def test_E22_a_view_range_past_the_end_shows_to_the_end_and_says_so(ws: str, editor_ctx: Any,
                                                                          tool: str) -> None:
    put(f"{ws}/a.txt", SEVEN)
    ctx, session = editor_ctx(), Session(cwd=ws)
    note = "NOTE: We only show up to 7 since there're only 7 lines in this file.\n"
    result = await run(ctx, session, tool, command="view", path=f"{ws}/a.txt", view_range=[5, 20])
    if tool == TE:
        assert result.text == note + "5: l5\n6: l6\n7: l7"
    else:
        assert result.text == (note + f"Here's the content of {ws}/a.txt with line numbers (which has a total of 7 "
                               "lines) with view_range=[5, 7]:\n     5  l5\n     6  l6\n     7  l7\n")
    exact = await run(ctx, session, tool, command="view", path=f"{ws}/a.txt", view_range=[5, 7])
    assert not exact.text.startswith("NOTE")
    start_past = await run(ctx, session, tool, command="view", path=f"{ws}/a.txt", view_range=[8, 20])
    assert start_past.text == ("Error: Invalid `view_range`: [8, 20]. Its first element `8` should be within the "
                               "range of lines of the file: [1, 7]")
    ref = await run(editor_ctx(profile="reference"), session, tool, command="view", path=f"{ws}/a.txt",
                    view_range=[5, 20])
    count = 7 if tool == TE else 8
    assert ref.text == ("Error: Invalid `view_range`: [5, 20]. Its second element `20` should be smaller than the "
                        f"number of lines in the file: `{count}`")


async def test_the_reference_face_refuses_a_match_found_twice_and_a_range_past_the_end(ws: str,
                                                                                     editor_ctx: Any) -> None:
    put(f"{ws}/a.txt", "x = 1\ny = 2\nx = 1\n")
    ctx, session = editor_ctx(profile="reference"), Session(cwd=ws)
    await run(ctx, session, SRE, command="view", path=f"{ws}/a.txt")
    twice = await run(ctx, session, SRE, command="str_replace", path=f"{ws}/a.txt", old_str="x = 1", new_str="x = 3")
    assert twice.text == ("Error: No replacement was performed. Multiple occurrences of old_str `x = 1` in lines "
                          "[1, 3]. Please ensure it is unique")
    assert get(f"{ws}/a.txt") == b"x = 1\ny = 2\nx = 1\n"
    past = await run(ctx, session, SRE, command="view", path=f"{ws}/a.txt", view_range=[5, -1])  # count + 1
    assert past.text == ("Error: Invalid `view_range`: [5, -1]. Its first element `5` should be within the range "
                         "of lines of the file: [1, 4]")


async def test_E24_insert_changes_files_up_to_16_mib_and_refuses_a_byte_more(ws: str, editor_ctx: Any,
                                                                            tree: Any) -> None:
    tool = TE  # str_replace_editor's insert runs the same check (test_bounded_edits.py: both faces, 64 MiB)
    limit = 16 * 1024 * 1024
    put(f"{ws}/edge.txt", b"x" * (limit - 1) + b"\n")  # exactly the limit
    put(f"{ws}/over.txt", b"x" * limit + b"\n")
    ctx, session = editor_ctx(), Session(cwd=ws)
    text_arg = "insert_text" if tool == TE else "new_str"
    for name in ("edge.txt", "over.txt"):
        await run(ctx, session, tool, command="view", path=f"{ws}/{name}", view_range=[1, 1])
    before = tree(ws)
    over = await run(ctx, session, tool, command="insert", path=f"{ws}/over.txt", insert_line=0, **{text_arg: "top"})
    assert over.error is not None, over.text[:300]
    assert (over.error.code, over.text) == ("FS_IO_ERROR", (
        f'Error: cannot insert into "{ws}/over.txt": the file is {limit + 1} bytes, more than the limit of '
        "16777216 bytes insert changes; change it with str_replace"))
    assert tree(ws) == before
    edge = await run(ctx, session, tool, command="insert", path=f"{ws}/edge.txt", insert_line=0, **{text_arg: "top"})
    assert not edge.is_error, edge.text
    assert get(f"{ws}/edge.txt") == b"top\n" + b"x" * (limit - 1) + b"\n"


@pytest.mark.parametrize("tool", [TE, SRE])
async def test_command_and_path_are_required_and_only_view_runs_alongside_others(ws: str, editor_ctx: Any,
                                                                                 tool: str, tree: Any) -> None:
    ctx, session = editor_ctx(), Session(cwd=ws)
    before = tree(ws)
    no_path = await run(ctx, session, tool, command="create", file_text="x")
    assert no_path.text == 'Error: invalid arguments: missing required property "path"'
    no_command = await run(ctx, session, tool, path=f"{ws}/a.txt", file_text="x")
    assert no_command.text == 'Error: invalid arguments: missing required property "command"'
    assert tree(ws) == before
    definition = ctx.tools.get(tool)
    assert definition is not None and definition.parameters["command"].required and definition.parameters["path"].required
    assert [definition.is_concurrency_safe({"command": c}) for c in ("view", "create", "str_replace", "insert")] == [
        True, False, False, False]


def test_the_editor_plugins_check_their_options(make_ctx: Any) -> None:
    for bad in (True, 1.5, -1, "5"):
        with pytest.raises(ValueError, match="^tool-text-editor: max_characters must be a positive integer$"):
            make_ctx().plugin(ToolTextEditor, max_characters=bad)
    assert make_ctx().plugin(ToolTextEditor, max_characters=1).tools.get(TE).native == {  # type: ignore[union-attr]
        "anthropic": {"type": "text_editor_20250728", "name": TE, "max_characters": 1}}
    assert make_ctx().plugin(ToolTextEditor).tools.get(TE).native == {  # type: ignore[union-attr]
        "anthropic": {"type": "text_editor_20250728", "name": TE}}
    for bad in (True, 2**53, -5, 2.0):
        with pytest.raises(ValueError, match="^tool-str-replace-editor: maxOutputChars must be a positive safe integer$"):
            make_ctx().plugin(ToolStrReplaceEditor, max_output_chars=bad)
    largest = make_ctx().plugin(ToolStrReplaceEditor, max_output_chars=2**53 - 1).tools.get(SRE)
    assert largest is not None and largest.native is None
    with pytest.raises(ValueError, match="^tool-str-replace-editor: description must be non-empty$"):
        make_ctx().plugin(ToolStrReplaceEditor, description=" \n")
    own = make_ctx().plugin(ToolStrReplaceEditor, description="Edit files.").tools.get(SRE)
    assert own is not None and own.description == "Edit files."


async def test_insert_of_a_file_changed_after_its_stat_is_refused_as_the_write_would(ws: str) -> None:
    """The file changes between ``insert``'s stat and its read of that version: the call says
    what the guarded write would (``file changed since it was read``) and writes nothing."""

    class Racing(LocalFileSystem):
        async def read_text_at(self, target: Any, version: Any, **kwargs: Any) -> Any:
            put(f"{ws}/a.txt", "someone else's\n")
            return await super().read_text_at(target, version, **kwargs)

    put(f"{ws}/a.txt", "one\n")
    ctx = dsh_fs.create_context(provider=Racing(cwd=ws), faces=[TE], policy=False)
    result = await run(ctx, Session(cwd=ws), TE, command="insert", path="a.txt", insert_line=0, insert_text="top")
    assert result.error is not None and result.error.code == "FS_STALE_VERSION"
    assert result.text.startswith(f'Error: cannot write "{ws}/a.txt": file changed since it was read'), result.text
    assert get(f"{ws}/a.txt") == b"someone else's\n"
