"""``undo_edit`` of ``str_replace_editor`` on the history (DEVIATIONS H10, docs/HISTORY.md
"undo_edit"), through the registry on the local disk.

Covers: OpenHands' own tests' expectations (``openhands-aci`` 9d22d0d2df,
``tests/integration/test_oh_editor.py::test_undo_edit``, ``::test_multiple_undo_edits``,
``::test_undo_edit_no_history_error``; ``tests/integration/editor/test_error_handling.py::
test_undo_validation``; ``test_basic_operations.py``'s undo after ``insert``), with OpenHands'
answer texts byte for byte; what the history adds: a created file removed, a change by another
tool undone, a file someone else changed since refused and left byte-identical, the undo a
step a rewind can take back (redo), the owner's observation after the undo, the listing cut
at the face's ``maxOutputChars``; the schema and description offered only in the ``default``
profile of a context with a history (``reference`` byte-exact).
Not covered here: the pure choice of the change and the listing
(tests/unit/tool_editor/test_undo_pure.py), the rewind itself (tests/integration/history/).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pytest

import dsh_fs
from dsh_fs import Session
from dsh_fs.tool_editor.texts import REF_DESCRIPTION, UNDO_TRUNCATED
from filekit import get, put

pytestmark = pytest.mark.anyio

SRE = "str_replace_editor"
OPENHANDS_TEXT = "This is a test file.\nThis file is for testing purposes."


@pytest.fixture
def editor_ctx(make_ctx: Callable[..., dsh_fs.Context]) -> Callable[..., dsh_fs.Context]:
    return lambda **kw: make_ctx(faces=[SRE], **{"history": True, **kw})


async def run(ctx: dsh_fs.Context, session: Session, **args: Any) -> Any:
    return await ctx.tools.execute(SRE, args, session=session)


def listing(path: str, text: str) -> str:
    numbered = "\n".join(f"{n:6}\t{line}" for n, line in enumerate(text.split("\n"), start=1))
    return (f"Last edit to {path} undone successfully. Here's the result of running `cat -n` on {path}:\n"
            f"{numbered}\n")


async def test_undo_edit_as_openhands_tests_it(ws: str, editor_ctx: Any) -> None:
    """``test_undo_edit``: the original content is back, the answer says ``Last edit to``."""
    path = f"{ws}/test.txt"
    put(path, OPENHANDS_TEXT)
    ctx, session = editor_ctx(), Session(cwd=ws)
    await run(ctx, session, command="view", path=path)
    edited = await run(ctx, session, command="str_replace", path=path, old_str="test file", new_str="sample file")
    assert not edited.is_error, edited.text
    result = await run(ctx, session, command="undo_edit", path=path)
    assert not result.is_error and result.text == listing(path, OPENHANDS_TEXT)
    assert get(path) == OPENHANDS_TEXT.encode()


async def test_multiple_undo_edits_walk_back_as_openhands_stack_pops(ws: str, editor_ctx: Any) -> None:
    """``test_multiple_undo_edits``: the first undo restores v1, the second the original; a third
    finds no edit left (``No edit history found``)."""
    path = f"{ws}/test.txt"
    put(path, OPENHANDS_TEXT)
    ctx, session = editor_ctx(), Session(cwd=ws)
    await run(ctx, session, command="view", path=path)
    await run(ctx, session, command="str_replace", path=path, old_str="test file", new_str="sample file v1")
    await run(ctx, session, command="str_replace", path=path, old_str="sample file v1", new_str="sample file v2")
    first = await run(ctx, session, command="undo_edit", path=path)
    assert "Last edit to" in first.text and "sample file v1" in get(path).decode()
    second = await run(ctx, session, command="undo_edit", path=path)
    assert "Last edit to" in second.text and get(path) == OPENHANDS_TEXT.encode()
    third = await run(ctx, session, command="undo_edit", path=path)
    assert third.is_error and third.text == f"Error: No edit history found for {path}."
    assert get(path) == OPENHANDS_TEXT.encode()


async def test_no_edit_history_is_openhands_error(ws: str, editor_ctx: Any, tree: Any) -> None:
    """``test_undo_edit_no_history_error`` / ``test_undo_validation``: a file never edited."""
    put(f"{ws}/empty.txt", "")
    put(f"{ws}/lines.txt", "line 1\nline 2\nline 3\n")
    ctx, session = editor_ctx(), Session(cwd=ws)
    before = tree(ws)
    for name in ("empty.txt", "lines.txt", "missing.txt"):
        result = await run(ctx, session, command="undo_edit", path=f"{ws}/{name}")
        assert result.is_error and result.text == f"Error: No edit history found for {ws}/{name}."
    assert tree(ws) == before


async def test_undo_after_insert_and_a_change_by_another_tool(ws: str, editor_ctx: Any) -> None:
    """``test_basic_operations``: an ``insert`` undone; here any tool's change is the file's last
    change (an ``edit`` through ``edit``), and an undo takes it back."""
    path = f"{ws}/lines.txt"
    put(path, "line 1\nline 2\nline 3\n")
    ctx, session = editor_ctx(), Session(cwd=ws)
    await run(ctx, session, command="view", path=path)
    await run(ctx, session, command="insert", path=path, insert_line=1, new_str="inserted line")
    assert "inserted line" in get(path).decode()
    undone = await run(ctx, session, command="undo_edit", path=path)
    assert "undone successfully" in undone.text and get(path) == b"line 1\nline 2\nline 3\n"
    edited = await ctx.tools.execute("edit", {"file_path": path, "old_string": "line 2", "new_string": "two"},
                                     session=session)
    assert not edited.is_error, edited.text
    await run(ctx, session, command="undo_edit", path=path)
    assert get(path) == b"line 1\nline 2\nline 3\n"


async def test_undo_of_a_create_removes_the_file(ws: str, editor_ctx: Any, tree: Any) -> None:
    before = tree(ws)
    ctx, session = editor_ctx(), Session(cwd=ws)
    created = await run(ctx, session, command="create", path=f"{ws}/new.py", file_text="print(1)\n")
    assert not created.is_error
    undone = await run(ctx, session, command="undo_edit", path=f"{ws}/new.py")
    assert undone.text == (f"Last edit to {ws}/new.py undone successfully. The file did not exist before that edit,"
                           " so it has been removed.")
    assert tree(ws) == before
    again = await run(ctx, session, command="create", path=f"{ws}/new.py", file_text="print(2)\n")
    assert not again.is_error, again.text  # the absence is observed: the path may be created again


async def test_a_file_someone_else_changed_since_is_not_touched(ws: str, editor_ctx: Any) -> None:
    path = f"{ws}/a.txt"
    put(path, "one\ntwo\n")
    ctx, session = editor_ctx(), Session(cwd=ws)
    await run(ctx, session, command="view", path=path)
    await run(ctx, session, command="str_replace", path=path, old_str="two", new_str="2")
    put(path, "one\n2\nthree (a person's line)\n")
    refused = await run(ctx, session, command="undo_edit", path=path)
    assert refused.is_error and refused.text == (
        f'Error: cannot undo the last edit to "{path}": changed since this owner\'s last change; nothing was'
        " changed (view the file and edit it instead)")
    assert get(path) == b"one\n2\nthree (a person's line)\n"
    other = Session(cwd=ws)  # another owner has no edit of the file to undo
    assert (await run(ctx, other, command="undo_edit", path=path)).text == f"Error: No edit history found for {path}."


async def test_an_undo_is_a_step_a_rewind_takes_back_and_the_file_stays_editable(ws: str, editor_ctx: Any) -> None:
    path = f"{ws}/a.txt"
    put(path, "alpha\n")
    ctx, session = editor_ctx(), Session(cwd=ws)
    await run(ctx, session, command="view", path=path)
    await run(ctx, session, command="str_replace", path=path, old_str="alpha", new_str="beta")
    await run(ctx, session, command="undo_edit", path=path)
    steps = await ctx.history(session)
    assert [s.tool for s in steps] == [SRE, "undo_edit"]
    redo = await ctx.rewind(session, last=1)
    assert not redo.refused and get(path) == b"beta\n"
    stale = await run(ctx, session, command="str_replace", path=path, old_str="beta", new_str="gamma")
    assert stale.is_error and "re-read the file" in stale.text  # the model has not seen what the rewind wrote
    await run(ctx, session, command="view", path=path)
    edited = await run(ctx, session, command="str_replace", path=path, old_str="beta", new_str="gamma")
    assert not edited.is_error, edited.text
    await run(ctx, session, command="undo_edit", path=path)
    assert get(path) == b"beta\n"
    after_undo = await run(ctx, session, command="str_replace", path=path, old_str="beta", new_str="delta")
    assert not after_undo.is_error, after_undo.text  # the undo's version is observed too


async def test_the_listing_is_cut_as_openhands_cuts_it(ws: str, editor_ctx: Any) -> None:
    path = f"{ws}/big.txt"
    text = "".join(f"line {n}\n" for n in range(5000))
    put(path, text)
    ctx, session = editor_ctx(), Session(cwd=ws)
    await run(ctx, session, command="view", path=path, view_range=[1, 2])
    await run(ctx, session, command="str_replace", path=path, old_str="line 4999\n", new_str="last\n")
    undone = await run(ctx, session, command="undo_edit", path=path)
    assert get(path) == text.encode()
    shown = text[:16_000] + UNDO_TRUNCATED
    assert undone.text == listing(path, shown)


def _schema(ctx: dsh_fs.Context) -> dict[str, Any]:
    return next(s for s in ctx.tools.schemas() if s["name"] == SRE)


async def test_the_command_is_offered_only_in_the_default_profile_with_a_history(editor_ctx: Any) -> None:
    offered = _schema(editor_ctx())
    command = offered["parameters"]["properties"]["command"]
    assert command["enum"] == ["view", "create", "str_replace", "insert", "undo_edit"]
    assert command["description"] == ("The commands to run. Allowed options are: `view`, `create`, `str_replace`, "
                                      "`insert`, `undo_edit`.")
    lines = offered["description"].split("\n")
    at = lines.index("* The `undo_edit` command will revert the last edit made to the file at `path`")
    assert "<response clipped>" in lines[at - 1] and "\n".join(lines[:at] + lines[at + 1:]) == REF_DESCRIPTION
    bare = _schema(editor_ctx(history=False))
    reference = _schema(editor_ctx(profile="reference"))
    assert bare == reference == _schema(editor_ctx(profile="reference", history=False))
    assert reference["description"] == REF_DESCRIPTION
    assert "undo_edit" not in reference["parameters"]["properties"]["command"]["enum"]


async def test_without_the_command_undo_edit_is_refused_by_the_schema(ws: str, editor_ctx: Any) -> None:
    put(f"{ws}/a.txt", "x\n")
    for ctx in (editor_ctx(profile="reference"), editor_ctx(history=False)):
        result = await run(ctx, Session(cwd=ws), command="undo_edit", path=f"{ws}/a.txt")
        assert result.is_error and "command" in result.text and "undo_edit" not in _schema(ctx)["description"]
    assert os.path.exists(f"{ws}/a.txt")
