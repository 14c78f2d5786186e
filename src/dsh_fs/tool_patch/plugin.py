"""The ``tool-patch`` plugin: the ``apply_patch`` registry tool (docs/design/EDITING-FACES-DESIGN.md §6.3).

One required string parameter ``input`` holding a Codex-format patch (``*** Begin Patch`` …
``*** End Patch``), with Codex's own description (``texts``). The patch is parsed by the shared
engine (``dsh_fs.patch``) and applied by ``executor.apply_patch``: checked whole first, nothing
written unless all of it applies. Success: Codex's ``Success. Updated the following files:``
list (display paths); ``meta.diffs``: the §4.9 hunks of every file. Errors: the engine's texts
(which line, what was expected; which hunk, where it fits), with the codes of EDITING-FACES-DESIGN §2.6.

The OpenAI Responses adapter sends the built-in ``{"type": "apply_patch"}`` for this tool
instead of the function form (``ToolDefinition.native``) and answers its ``apply_patch_call``
items through the same executor. Not loaded by ``create_context()`` unless asked for
(``create_context(faces=["apply_patch"])``): a model sees it only where it is wanted.
"""

from __future__ import annotations

from typing import Any, ClassVar

import anyio

from ..core.context import Scope
from ..core.schema import Param
from ..core.session import ToolExecution
from ..core.tools import ToolDefinition, ToolOutput, text_block
from ..tool_common.switches import ToolSwitches
from ..patch import Patch, PatchError, parse_patch
from ..tool_fs.shared import check_unicode
from ..fs_sandbox.changes import Change
from ..fs_sandbox.tools import call_fs, confines, escalation_offered, with_escalation
from .executor import PatchInputError, apply_patch
from .texts import APPLY_PATCH_DESCRIPTION, INPUT_DESCRIPTION, TOOL_NAME

__all__ = ("ToolPatch", "approval_changes", "patch_params")


def approval_changes(patch: Patch) -> list[Change]:
    """The files an escalated patch changes, for the person asked to approve it (X2): one per
    file in patch order, ``A`` (add), ``M`` (update; with its destination for a move), ``D``
    (delete), the letters of the Codex success summary; the prompt names each by its real
    place (``fs_sandbox.changes.describe``). Pure."""
    letters = {"add": "A", "delete": "D"}
    return [Change(letters.get(op.kind, "M"), op.path, op.move_to if op.kind not in letters else None)
            for op in patch.ops]


def patch_params() -> dict[str, Param]:
    """The ``apply_patch`` parameters (Codex ``create_apply_patch_json_tool``)."""
    return {"input": Param(type="string", required=True, description=INPUT_DESCRIPTION)}


_PARSE_IN_THREAD = 16 * 1024
"""patch texts of at least this many characters are parsed in a worker thread"""


class ToolPatch:
    """``ctx.plugin(ToolPatch)``: registers ``apply_patch``; the profile comes from the context
    (default: DEVIATIONS D9 remedies and D11 on the patch text)."""

    name: ClassVar[str] = "tool-patch"
    inject: ClassVar[tuple[str, ...]] = ("fs", "tools")

    @classmethod
    def apply(cls, scope: Scope, /) -> None:
        ctx = scope.ctx
        switches = ToolSwitches.of(scope.profile)
        escalates = switches.patch_escalation and confines(scope.fs)  # X2: the fields under a sandbox
        params = with_escalation(patch_params(), scope.fs, scope.profile) if escalates else patch_params()

        async def execute(args: dict[str, Any], execution: ToolExecution) -> ToolOutput:
            text: str = args["input"]
            if switches.unicode_arguments:
                check_unicode("input", text)
            try:  # off the event loop: a big patch must not stall other calls (parsing is linear)
                patch = parse_patch(text) if len(text) < _PARSE_IN_THREAD else await anyio.to_thread.run_sync(
                    parse_patch, text)
            except PatchError as err:
                raise PatchInputError(err.message) from None
            await call_fs(ctx, TOOL_NAME, args, execution, escalates=switches.patch_escalation,  # X2
                          changes=approval_changes(patch), header=TOOL_NAME)
            hint = escalates and escalation_offered(execution.fs or ctx.fs, ctx.profile)  # D37
            applied = await apply_patch(ctx, patch, execution, escalation_hint=hint,
                                        with_diffs=True)  # diffed while written
            diffs = applied.diffs()
            return ToolOutput(content=[text_block(applied.codex_summary())], meta={"diffs": diffs})

        scope.effect(
            scope.tools.register(
                ToolDefinition(
                    name=TOOL_NAME,
                    description=APPLY_PATCH_DESCRIPTION,
                    parameters=params,
                    execute=execute,
                    native={"openai-responses": {"type": "apply_patch"}},
                )
            )
        )
