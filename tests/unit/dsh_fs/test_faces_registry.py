"""``dsh_fs.faces``: the editing faces are loaded by tool name, an unknown name is refused with
the list of known ones, and none is loaded by default (docs/EDITING-FACES.md).

Not covered here: the faces' tools (tests/integration/tool_patch/test_apply_patch.py, test_text_editor.py).
"""

from __future__ import annotations

import pytest

import dsh_fs
from dsh_fs.faces import FACE_TOOLS, load_faces


def test_faces_load_by_tool_name() -> None:
    ctx = dsh_fs.create_context(search=False, faces=["str_replace_editor", "apply_patch", "apply_patch"])
    assert ctx.tools.names() == ["apply_patch", "edit", "list", "read", "str_replace_editor", "write"]
    assert FACE_TOOLS == ("apply_patch", "str_replace_based_edit_tool", "str_replace_editor", "notebook_edit")
    with pytest.raises(ValueError, match='unknown face "grep"; expected one of apply_patch, '
                                         "str_replace_based_edit_tool, str_replace_editor, notebook_edit"):
        load_faces(dsh_fs.create_context(search=False), ["grep"])
    assert "apply_patch" not in dsh_fs.create_context().tools.names()  # never by default
