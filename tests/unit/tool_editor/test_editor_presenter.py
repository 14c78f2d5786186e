"""What the text-editor faces take from the seam and show a client: ``FsError.count`` of an
ambiguous edit (the Anthropic face's multiple-matches text names it) and the editors' call
presenter (``tool_editor.plugin.editor_present_call``).

Not covered here: the editors' pure views and edits (tests/unit/tool_editor/test_editor_pure.py), the tools
doing I/O (tests/integration/tool_editor/test_text_editor.py).
"""

from __future__ import annotations

from dsh_fs.fs.errors import edit_ambiguous
from dsh_fs.tool_editor.plugin import editor_present_call


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
    for line, shown in ((3, 4), (2.7, 3), (-5, 1)):  # the line after insert_line, at least 1
        assert editor_present_call({"command": "insert", "path": "/a", "insert_line": line}) == {
            "card": "generic", "title": "insert /a", "kind": "edit", "locations": [{"path": "/a", "line": shown}]}
    for not_a_number in (True, "3", None):
        assert editor_present_call({"command": "insert", "path": "/a", "insert_line": not_a_number})["locations"] == [  # type: ignore[index]
            {"path": "/a"}]
    assert editor_present_call({"command": "undo_edit", "path": "/a"}) is None
    assert editor_present_call("nonsense") is None
