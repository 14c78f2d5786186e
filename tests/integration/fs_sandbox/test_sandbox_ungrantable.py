"""D37 in the library: a sandbox composed without an approval callback can never grant an
escalation, so (default profile) no mutating tool offers ``sandbox_permissions``/``justification``
and no refusal carries the escalation hint; with a callback, or in the reference profile, both
stay. A callback that says it cannot ask now (``reachable()`` false) gets no hint either."""

from __future__ import annotations

import os

import pytest

import dsh_fs
from dsh_fs import Session
from dsh_fs.tool_common.sandbox_texts import denial_marker, escalation_hint

pytestmark = pytest.mark.anyio

FIELDS = {"sandbox_permissions", "justification"}


async def allow(request):  # an approval callback that always allows
    return "allowed-once"


class Unreachable:
    async def __call__(self, request):
        return "unavailable"

    def reachable(self) -> bool:
        return False


def properties(ctx: dsh_fs.Context, tool: str) -> set[str]:
    return set(ctx.tools.get(tool).schema()["parameters"]["properties"])


@pytest.mark.parametrize("approval", [None, Unreachable()], ids=["no callback", "unreachable"])
async def test_D37_no_escalation_is_offered_that_cannot_be_granted(ws, approval):
    ctx = dsh_fs.create_context(cwd=ws, sandbox="read-only", approval=approval, faces=["apply_patch"])
    if approval is None:
        for tool in ("write", "edit", "apply_patch"):
            assert not properties(ctx, tool) & FIELDS, tool
    written = await ctx.tools.execute("write", {"file_path": "a.txt", "content": "x"}, session=Session(cwd=ws))
    assert written.text == "Error: " + denial_marker("read-only")
    patched = await ctx.tools.execute("apply_patch", {"input": "*** Begin Patch\n*** Add File: b.txt\n+x\n*** End Patch"},
                                      session=Session(cwd=ws))
    assert patched.text.endswith(denial_marker("read-only")) and escalation_hint("operation") not in patched.text
    assert not os.listdir(ws)


@pytest.mark.parametrize(("profile", "approval"), [("default", allow), ("reference", None)])
async def test_D37_with_a_callback_or_in_the_reference_profile_escalation_is_offered(ws, profile, approval):
    ctx = dsh_fs.create_context(cwd=ws, sandbox="read-only", approval=approval, profile=profile)
    assert properties(ctx, "write") >= FIELDS and properties(ctx, "edit") >= FIELDS
    written = await ctx.tools.execute("write", {"file_path": "a.txt", "content": "x"}, session=Session(cwd=ws))
    assert written.text == "Error: " + denial_marker("read-only") + "\n" + escalation_hint("operation")
