"""The Agents SDK runner's checks of Responses ``apply_patch`` operations
(``dsh_fs.adapters.patch_operations.operation_of``): the SDK's own texts, and an operation read
as the SDK reads it.

Not covered here: the runner with the SDK (tests/unit/adapters/test_editing_adapters.py).
"""

from __future__ import annotations

import pytest

from dsh_fs.adapters.patch_operations import operation_of
from dsh_fs.tool_patch import PatchInputError


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
