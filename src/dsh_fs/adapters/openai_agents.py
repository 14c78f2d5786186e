"""The OpenAI Agents SDK (``openai-agents``, optional extra ``dsh-fs[agents]``): the safe
``apply_patch`` executor as the SDK's editor, and the registry's tools as function tools.

``DshApplyPatchEditor(ctx, session)`` implements the SDK's ``ApplyPatchEditor`` protocol
(``create_file`` / ``update_file`` / ``delete_file``, docs/design/EDITING-FACES-DESIGN.md §1.5): each
operation is checked and applied by dsh-fs's executor (``patch_operations``: the shared parser,
the whole operation located before anything is written, atomic writes, containment, the
observation policy) and answered with ``ApplyPatchResult(status, output)`` — never an
exception, so the model always sees why. ``apply_patch_tool(ctx, session)`` is the SDK's
``ApplyPatchTool`` over it. With the observation policy, an update, move or delete needs the
file read first in this session: give the agent dsh-fs's ``read`` too
(``function_tools(ctx, session)``)::

    from agents import Agent
    from dsh_fs import Session, create_context
    from dsh_fs.adapters.openai_agents import apply_patch_tool, function_tools

    ctx, session = create_context(cwd="."), Session(cwd=".")
    agent = Agent(name="coder", tools=[*function_tools(ctx, session, names=["read"]),
                                       apply_patch_tool(ctx, session)])

The SDK is imported by this module only; ``import dsh_fs.adapters`` never needs it.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

from agents import (
    ApplyPatchOperation,
    ApplyPatchResult,
    ApplyPatchTool,
    FunctionTool,
    ToolOutputImage,
    ToolOutputText,
)
from agents.tool_context import ToolContext

from ..core.context import Context
from ..core.session import Session, ToolExecution
from .calls import data_url, parse_arguments, registry_of
from .patch_operations import apply_operations

__all__ = ("DshApplyPatchEditor", "apply_patch_tool", "function_tools")


class DshApplyPatchEditor:
    """The SDK's ``ApplyPatchEditor``, executed by dsh-fs.

    :param ctx: a ``Context`` with a provider (``create_context()`` or your own composition)
    :param session: the agent session: observation owner and cwd for relative paths (use the
        same one for the agent's ``read`` tool); ``None`` runs with no agent, which can create
        files but never change an existing one under the policy
    """

    def __init__(self, ctx: Context, session: Session | None = None) -> None:
        self.ctx = ctx
        self.session = session

    async def _apply(self, operation: ApplyPatchOperation) -> ApplyPatchResult:
        execution = ToolExecution(session=self.session, call_id=uuid.uuid4().hex)
        result = await apply_operations(self.ctx, [operation], execution)
        return ApplyPatchResult(status=result.status, output=result.output)

    async def create_file(self, operation: ApplyPatchOperation) -> ApplyPatchResult:
        """A ``create_file`` operation: the path must be free (E5)."""
        return await self._apply(operation)

    async def update_file(self, operation: ApplyPatchOperation) -> ApplyPatchResult:
        """An ``update_file`` operation (with ``move_to``: a move, the destination free)."""
        return await self._apply(operation)

    async def delete_file(self, operation: ApplyPatchOperation) -> ApplyPatchResult:
        """A ``delete_file`` operation."""
        return await self._apply(operation)


def apply_patch_tool(ctx: Context, session: Session | None = None, **options: Any) -> ApplyPatchTool:
    """The SDK's hosted ``ApplyPatchTool`` with ``DshApplyPatchEditor(ctx, session)``.

    :param options: other ``ApplyPatchTool`` fields (``needs_approval``, ``on_approval`` …)
    """
    return ApplyPatchTool(editor=DshApplyPatchEditor(ctx, session), **options)


def function_tools(ctx: Context, session: Session | None = None, *,
                   names: Iterable[str] | None = None) -> list[FunctionTool]:
    """The registry's tools as SDK ``FunctionTool`` s: the §4.3 schemas unchanged (strict off),
    arguments parsed as the reference's agent loop does (§5.5) and validated by the registry,
    the result text byte for byte (a failure's ``Error: …`` text as the output). A result that
    carries an image (``read_image``, docs/IMAGES.md) returns ``[ToolOutputText,
    ToolOutputImage(image_url=data URL)]``, the SDK's image tool output.

    :param names: only these tools (default: every registered tool; ``apply_patch`` is better
        served by ``apply_patch_tool``)
    :raises KeyError: a name that is not registered
    """
    registry = registry_of(ctx)
    chosen = list(names) if names is not None else registry.names()
    tools: list[FunctionTool] = []
    for name in chosen:
        definition = registry.get(name)
        if definition is None:
            raise KeyError(name)
        schema = definition.schema()

        async def invoke(tool_context: ToolContext[Any], raw: str, *, _name: str = name) -> Any:
            result = await registry.execute(_name, parse_arguments(raw), session=session,
                                            call_id=getattr(tool_context, "tool_call_id", None))
            if not result.images:
                return result.text
            return [
                ToolOutputImage(image_url=data_url(block)) if block.get("type") == "image"
                else ToolOutputText(text=block["text"])
                for block in result.content
                if block.get("type") in ("image", "text")
            ]

        tools.append(FunctionTool(name=schema["name"], description=schema["description"],
                                  params_json_schema=schema["parameters"], on_invoke_tool=invoke,
                                  strict_json_schema=False))
    return tools
