"""E25: a patch that touches a file this session never read is refused naming the patch's own
operation (``update``/``delete``/``move requires reading "<p>" first``), not the policy's
``edit`` (a ``*** Delete File:`` refused as an "edit" misleads); the reference profile keeps the
policy's text. Through the registry's ``apply_patch`` and the Responses ``apply_patch_call``
operations (both go through ``tool_patch.executor``)."""

from __future__ import annotations

import pytest

import dsh_fs
from dsh_fs import Session
from dsh_fs.adapters import run_apply_patch_call
from filekit import get, put

pytestmark = pytest.mark.anyio

REMEDY = " — read the file, then retry"


def envelope(*lines: str) -> str:
    return "\n".join(["*** Begin Patch", *lines, "*** End Patch"])


@pytest.mark.parametrize(("lines", "operation"), [
    (("*** Update File: a.txt", "@@", "-a", "+A"), "update"),
    (("*** Delete File: a.txt",), "delete"),
    (("*** Update File: a.txt", "*** Move to: b.txt", "@@", "-a", "+A"), "move"),
])
async def test_E25_an_unread_file_is_refused_naming_the_operation(ws, lines, operation):
    put(f"{ws}/a.txt", "a\n")
    ctx = dsh_fs.create_context(cwd=ws, faces=["apply_patch"])
    result = await ctx.tools.execute("apply_patch", {"input": envelope(*lines)}, session=Session(cwd=ws))
    assert result.error is not None and result.error.code == "FS_NOT_OBSERVED"
    assert result.text == f'Error: {operation} requires reading "{ws}/a.txt" first{REMEDY}'
    assert get(f"{ws}/a.txt") == b"a\n"
    reference = dsh_fs.create_context(cwd=ws, faces=["apply_patch"], profile="reference")
    result = await reference.tools.execute("apply_patch", {"input": envelope(*lines)}, session=Session(cwd=ws))
    assert result.text == f'Error: edit requires reading "{ws}/a.txt" first'


async def test_E25_a_responses_operation_names_its_own_type_too(ws):
    put(f"{ws}/a.txt", "a\n")
    ctx = dsh_fs.create_context(cwd=ws, faces=["apply_patch"])
    item = {"type": "apply_patch_call", "call_id": "c1", "status": "completed",
            "operation": {"type": "delete_file", "path": "a.txt"}}
    output = await run_apply_patch_call(ctx, item, session=Session(cwd=ws))
    assert output["status"] == "failed"
    assert output["output"] == f'delete requires reading "{ws}/a.txt" first{REMEDY}'
