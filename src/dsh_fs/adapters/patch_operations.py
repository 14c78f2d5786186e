"""Responses API ``apply_patch`` operations, as the OpenAI Responses adapter and the Agents SDK
editor receive them (docs/design/EDITING-FACES-DESIGN.md §1.4, §1.5, §6.3).

An operation is ``{"type": "create_file" | "update_file" | "delete_file", "path", "diff"}``
(the Agents SDK adds ``move_to`` to an update). ``apply_operations`` checks the payloads with the
Agents SDK runner's texts (and, in the default profile, D11 on their texts), parses each V4A
``diff`` with the shared parser, and applies all of them as **one** patch through
``executor.apply_patch`` (all or nothing: E10, where the SDK's runner applies them one by one). It never raises for a failure: the result is the
``status``/``output`` pair both APIs send back. Used by ``openai_responses`` and
``openai_agents`` — ``completed`` with the SDK editors' texts
(``Created <p>``, ``Updated <p>``, ``Deleted <p>``, a move ``Updated <p>\\nMoved <p> to <d>``,
one line group per operation) or ``failed`` with the error text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..core.context import Context
from ..core.errors import HarnessError, ToolInputError
from ..core.session import ToolExecution
from ..tool_common.switches import ToolSwitches
from ..patch import Patch, PatchError, operation_summary, parse_operation
from ..tool_fs.shared import check_unicode
from ..tool_patch import PatchInputError, apply_patch
from ..tool_patch import texts as t
from .calls import field

__all__ = ("OperationResult", "apply_operations", "operation_of")

_KINDS = ("create_file", "update_file", "delete_file")


@dataclass(frozen=True, slots=True, kw_only=True)
class OperationResult:
    """What answers an ``apply_patch_call`` (Responses) or an editor call (Agents SDK)."""

    status: Literal["completed", "failed"]
    output: str
    """the model-facing text: the summary, or why nothing was written"""


def operation_of(raw: Any) -> tuple[Literal["create_file", "update_file", "delete_file"], str, str | None, str | None]:
    """``(type, path, diff, move_to)`` of one raw operation (a dict or an SDK object), checked as
    the Agents SDK's runner checks it.

    :raises PatchInputError: with the SDK's text (unknown type, no path, no diff, bad move_to)
    """
    if raw is None:
        raise PatchInputError(t.MISSING_OPERATION)
    kind = str(field(raw, "type"))
    if kind not in _KINDS:
        raise PatchInputError(t.UNKNOWN_OPERATION.format(type=kind))
    path = field(raw, "path")
    if not isinstance(path, str) or not path.strip():  # blank: the SDK's text, not a resolve error
        raise PatchInputError(t.MISSING_PATH)
    diff = field(raw, "diff")
    if kind != "delete_file" and (not isinstance(diff, str) or not diff):
        raise PatchInputError(t.MISSING_DIFF.format(type=kind))
    move_to = field(raw, "move_to")
    if move_to is not None and (not isinstance(move_to, str) or not move_to.strip()):
        raise PatchInputError(t.BAD_MOVE_TO)
    return kind, path, diff if kind != "delete_file" else None, move_to if kind == "update_file" else None  # type: ignore[return-value]


async def apply_operations(ctx: Context, operations: Sequence[Any], execution: ToolExecution) -> OperationResult:
    """Check, parse and apply ``operations`` as one patch; never raises for a failure.

    :param operations: raw operations (dicts or SDK objects), in model order
    :raises BaseException: only cancellation and programming errors
    """
    try:
        if not operations:
            raise PatchInputError(t.NO_OPERATIONS)
        ops = []
        for raw in operations:
            kind, path, diff, move_to = operation_of(raw)
            if ToolSwitches.of(ctx.profile).unicode_arguments:  # D11, as on the registry tool's input
                for name, text in (("path", path), ("diff", diff), ("move_to", move_to)):
                    if text is not None:
                        check_unicode(name, text)
            ops.append(parse_operation(kind, path, diff, move_to=move_to))
        applied = await apply_patch(ctx, Patch(ops=tuple(ops)), execution)
    except (PatchError, PatchInputError, ToolInputError, HarnessError) as err:
        return OperationResult(status="failed", output=str(err))
    summaries = [operation_summary(c.kind, c.display, c.move_display) for c in applied.changes]
    return OperationResult(status="completed", output="\n".join(summaries))
