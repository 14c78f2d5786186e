"""The ``integer`` parameter type the reference's ``str_replace_editor`` declares
(``dsh_fs.core.schema``: JavaScript ``Number.isInteger`` semantics, its violation text, its JSON
Schema; docs/design/EDITING-FACES-DESIGN.md §1.3).

Not covered here: the other parameter types (tests/unit/core/test_core_registry.py), the face itself
(tests/integration/tool_editor/test_text_editor.py).
"""

from __future__ import annotations

import pytest

from dsh_fs.core.schema import Param, json_schema, validate


@pytest.mark.parametrize(("value", "ok"), [(2, True), (2.0, True), (-1, True), (1.5, False), (True, False),
                                            ("2", False), (None, False)])
def test_the_integer_type(value: object, ok: bool) -> None:
    params = {"n": Param(type="integer")}
    assert validate({"n": value}, params) == ([] if ok else ['"n" must be an integer'])
    assert json_schema(params) == {"type": "object", "properties": {"n": {"type": "integer"}}}
