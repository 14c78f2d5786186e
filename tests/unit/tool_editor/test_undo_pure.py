"""The pure parts of ``undo_edit`` (``dsh_fs.tool_editor.undo``, DEVIATIONS H10): which step an
undo takes back (OpenHands' stack, popped), and OpenHands' answer text (``_make_output``,
``maybe_truncate``).
Not covered here: undo through the registry (tests/integration/tool_editor/test_undo_edit.py)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from dsh_fs.history.model import Before, FileChange, Step
from dsh_fs.tool_editor.undo import UNDO_MAX_CHARS, change_to_undo, undone_listing


def step(number: int, tool: str, *keys: str, dest: str | None = None) -> Step:
    changes = tuple(FileChange(id=number * 10 + i, op="rename" if dest else "write", key=key, path=key,
                               before=Before.absent(), after_version="v", dest_key=dest, dest_path=dest)
                    for i, key in enumerate(keys))
    return Step(number=number, time=0.0, tool=tool, owner="o", changes=changes)


def test_the_newest_change_of_the_file_is_taken_back() -> None:
    steps = [step(1, "write", "a"), step(2, "edit", "a"), step(3, "edit", "b")]
    assert change_to_undo(steps, "a") is steps[1]
    assert change_to_undo(steps, "b") is steps[2]
    assert change_to_undo(steps, "c") is None
    assert change_to_undo([], "a") is None


def test_each_undo_cancels_the_newest_change_before_it() -> None:
    steps = [step(1, "write", "a"), step(2, "edit", "a"), step(3, "edit", "a"), step(4, "undo_edit", "a")]
    assert change_to_undo(steps, "a") is steps[1]
    steps.append(step(5, "undo_edit", "a"))
    assert change_to_undo(steps, "a") is steps[0]
    steps.append(step(6, "undo_edit", "a"))
    assert change_to_undo(steps, "a") is None
    steps.append(step(7, "rewind", "a"))  # a rewind is a change like any other: undo takes it back
    assert change_to_undo(steps, "a") is steps[-1]


def test_a_move_counts_for_both_names_and_other_files_never_count() -> None:
    steps = [step(1, "write", "a"), step(2, "apply_patch", "a", dest="b"), step(3, "undo_edit", "c")]
    assert change_to_undo(steps, "b") is steps[1]
    assert change_to_undo(steps, "a") is steps[1]


@given(st.lists(st.sampled_from(["edit", "undo_edit"]), max_size=12))
def test_undo_pops_a_stack(tools: list[str]) -> None:
    """The step chosen is the top of the stack of edits that pushing each edit and popping at
    each undo leaves (``None`` when it is empty)."""
    steps = [step(n, tool, "f") for n, tool in enumerate(tools, start=1)]
    stack: list[Step] = []
    kept: list[Step] = []
    for s in steps:
        if s.tool == "undo_edit" and not stack:
            continue  # an undo with nothing to take back is never recorded ("No edit history found")
        kept.append(s)
        if s.tool == "edit":
            stack.append(s)
        else:
            stack.pop()
        assert change_to_undo(kept, "f") is (stack[-1] if stack else None)


def test_the_listing_is_openhands_cat_n() -> None:
    assert undone_listing("/w/a.py", "x = 1\ny = 2\n") == (
        "Last edit to /w/a.py undone successfully. Here's the result of running `cat -n` on /w/a.py:\n"
        "     1\tx = 1\n     2\ty = 2\n     3\t\n")
    assert undone_listing("/w/a.py", "") == (
        "Last edit to /w/a.py undone successfully. Here's the result of running `cat -n` on /w/a.py:\n     1\t\n")
    assert undone_listing("/w/n.py", None) == (
        "Last edit to /w/n.py undone successfully. The file did not exist before that edit, so it has been removed.")


def test_a_long_text_is_cut_then_numbered_as_openhands_does() -> None:
    text = "ab\n" * 10
    cut = undone_listing("/p", text, max_chars=7)
    assert cut.split(":\n", 1)[1] == (
        "     1\tab\n     2\tab\n     3\ta<response clipped><NOTE>Due to the max output limit, only part of this file has"
        " been shown to you. You should retry this tool after you have searched inside the file with `grep -n` in"
        " order to find the line numbers of what you are looking for.</NOTE>\n")
    assert UNDO_MAX_CHARS == 16_000  # OpenHands' MAX_RESPONSE_LEN_CHAR (openhands_aci/editor/config.py)
    exact = "a" * UNDO_MAX_CHARS
    assert "<response clipped>" not in undone_listing("/p", exact)
    assert "<response clipped>" in undone_listing("/p", exact + "b")
