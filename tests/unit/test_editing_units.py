"""Small pure parts of the editing faces (docs/EDITING-FACES.md §6).

Covers: the ``integer`` parameter type the reference's ``str_replace_editor`` declares
(JavaScript ``Number.isInteger`` semantics, its violation text); ``dsh_fs.faces`` (names,
unknown names); the ``apply_patch`` description as Codex ships it; the Agents SDK runner's
checks of Responses operations (``patch_operations.operation_of``); the planner-kind → code
map; ``FsError.count`` of an ambiguous edit; the editors' call presenter.
Not covered here: anything doing I/O (tests/integration/test_apply_patch.py, test_text_editor.py).
"""

from __future__ import annotations

import pytest

import dsh_fs
from dsh_fs.adapters.patch_operations import operation_of
from dsh_fs.core.schema import Param, json_schema, validate
from dsh_fs.faces import FACE_TOOLS, load_faces
from dsh_fs.fs.errors import edit_ambiguous
from dsh_fs.patch import PatchError
from dsh_fs.tool_editor.plugin import editor_present_call
from dsh_fs.tool_patch import PatchInputError
from dsh_fs.tool_patch.executor import patch_error_code
from dsh_fs.tool_patch.texts import APPLY_PATCH_DESCRIPTION


@pytest.mark.parametrize(("value", "ok"), [(2, True), (2.0, True), (-1, True), (1.5, False), (True, False),
                                            ("2", False), (None, False)])
def test_the_integer_type(value: object, ok: bool) -> None:
    params = {"n": Param(type="integer")}
    assert validate({"n": value}, params) == ([] if ok else ['"n" must be an integer'])
    assert json_schema(params) == {"type": "object", "properties": {"n": {"type": "integer"}}}


def test_faces_load_by_tool_name() -> None:
    ctx = dsh_fs.create_context(search=False, faces=["str_replace_editor", "apply_patch", "apply_patch"])
    assert ctx.tools.names() == ["apply_patch", "edit", "list", "read", "str_replace_editor", "write"]
    assert FACE_TOOLS == ("apply_patch", "str_replace_based_edit_tool", "str_replace_editor")
    with pytest.raises(ValueError, match='unknown face "grep"; expected one of apply_patch, '
                                         "str_replace_based_edit_tool, str_replace_editor"):
        load_faces(dsh_fs.create_context(search=False), ["grep"])
    assert "apply_patch" not in dsh_fs.create_context().tools.names()  # never by default


def test_the_apply_patch_description_is_codexs() -> None:
    assert APPLY_PATCH_DESCRIPTION.startswith("Use the `apply_patch` tool to edit files.\nYour patch language is a "
                                              "stripped\u2011down, file\u2011oriented diff format")
    assert "\n@@ \t def method():\n" in APPLY_PATCH_DESCRIPTION
    assert "Then one or more \u201chunks\u201d" in APPLY_PATCH_DESCRIPTION
    assert APPLY_PATCH_DESCRIPTION.endswith("- File references can only be relative, NEVER ABSOLUTE.\n")


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (None, "Apply patch call is missing an operation payload."),
        ({"type": "rename_file", "path": "a"}, "Unknown apply_patch operation: rename_file"),
        ({"type": "delete_file", "path": ""}, "Apply patch operation is missing a valid path."),
        ({"type": "create_file", "path": "a"}, "Apply patch operation create_file is missing the required diff payload."),
        ({"type": "update_file", "path": "a", "diff": "@@\n-x\n+y\n", "move_to": ""},
         "Apply patch operation move_to must be a non-empty path."),
    ],
)
def test_operations_are_checked_with_the_sdk_texts(raw: object, message: str) -> None:
    with pytest.raises(PatchInputError) as caught:
        operation_of(raw)
    assert str(caught.value) == message


def test_an_operation_is_read_as_the_sdk_reads_it() -> None:
    assert operation_of({"type": "update_file", "path": "a", "diff": "@@\n", "move_to": "b"}) == ("update_file", "a", "@@\n", "b")
    assert operation_of({"type": "delete_file", "path": "a", "diff": "ignored", "move_to": "b"}) == ("delete_file", "a", None, None)


def test_planner_kinds_map_to_codes() -> None:
    codes = {kind: patch_error_code(PatchError("x", kind)) for kind in
             ("syntax", "empty", "duplicate", "missing", "exists", "not_found", "ambiguous")}
    assert {k: v and v.value for k, v in codes.items()} == {
        "syntax": None, "empty": None, "duplicate": None, "missing": "FS_NOT_FOUND", "exists": "FS_NOT_OBSERVED",
        "not_found": "FS_EDIT_NOT_FOUND", "ambiguous": "FS_AMBIGUOUS_EDIT"}


def test_an_ambiguous_edit_keeps_its_count() -> None:
    assert edit_ambiguous("/a", 3).count == 3


def test_the_editor_call_presenter() -> None:
    assert editor_present_call({"command": "view", "path": "/a"}) == {
        "card": "generic", "title": "view /a", "kind": "read", "locations": [{"path": "/a"}]}
    assert editor_present_call({"command": "create", "path": "/a", "file_text": "x"}) == {
        "card": "diff", "title": "create /a", "diffs": [{"path": "/a", "oldText": None, "newText": "x"}],
        "locations": [{"path": "/a"}]}
    assert editor_present_call({"command": "str_replace", "path": "/a", "old_str": "o"})["diffs"] == [  # type: ignore[index]
        {"path": "/a", "oldText": "o", "newText": ""}]
    assert editor_present_call({"command": "insert", "path": "/a", "insert_line": 0})["locations"] == [  # type: ignore[index]
        {"path": "/a", "line": 1}]
    assert editor_present_call({"command": "undo_edit", "path": "/a"}) is None
    assert editor_present_call("nonsense") is None


def _apply(lines: list[str], edits: list[tuple[int, int, list[str]]]) -> list[str]:
    out = list(lines)
    for start, removed, inserted in reversed(edits):
        out[start : start + removed] = inserted
    return out


@pytest.mark.parametrize("seed", range(300))
def test_region_diffs_equal_the_whole_file_diff(seed: int) -> None:
    """``AppliedPatch.diffs`` diffs only around a patch's hunks: the same §4.9 hunks as diffing
    the whole file (distinct lines, so the alignment is unique)."""
    import random

    from dsh_fs.tool_fs.diff import compute_hunk_diffs
    from dsh_fs.tool_patch.executor import region_diffs

    rng = random.Random(seed)
    count = rng.randint(1, 60)
    lines = [f"line {i}" for i in range(count)] + ([""] if rng.random() < 0.8 else [])
    edits: list[tuple[int, int, list[str]]] = []
    at = 0
    while at < len(lines) and len(edits) < 8:
        at += rng.randint(0, 12)
        if at > len(lines):
            break
        removed = rng.randint(0, min(3, len(lines) - at))
        inserted = [f"new {seed} {at} {k}" for k in range(rng.randint(0 if removed else 1, 3))]
        edits.append((at, removed, inserted))
        at += removed + 1
    before, after = "\n".join(lines), "\n".join(_apply(lines, edits))
    assert region_diffs("p", before, after, edits) == compute_hunk_diffs("p", before, after)
