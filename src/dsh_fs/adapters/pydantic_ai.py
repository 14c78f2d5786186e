"""A pydantic-ai toolset serving the tools (optional extra: ``pip install pydantic-ai-slim``).

``DshFsToolset(ctx)`` is an ``AbstractToolset`` (pydantic-ai's toolset API: ``get_tools`` +
``call_tool``) over any context's registry::

    from pydantic_ai import Agent
    from dsh_fs import create_context
    from dsh_fs.adapters.pydantic_ai import DshFsToolset

    # the model's paths stay inside /srv/project (create_context confines to its cwd by default)
    ctx = create_context(cwd="/srv/project")
    agent = Agent("deepseek:deepseek-chat", toolsets=[DshFsToolset(ctx)])

What the model gets, exactly as from the other adapters:

* the §4.3 schemas unchanged (``strict=False``, so no provider rewrites them for strict mode);
  ``read`` may run in parallel, ``write``/``edit`` are ``sequential`` barriers (§5.5);
* arguments parsed as the reference does (§5.5) and validated by the registry itself (its
  exact ``INVALID_ARGS`` texts), never by pydantic;
* the result text byte for byte. A failed call returns its ``Error: …`` text as the tool's
  return value by default (``errors="text"``), as Chat Completions shows it. With
  ``errors="tool_failed"`` it raises ``ToolFailed`` instead: providers with a native error
  flag (Anthropic) then mark the result as an error, but pydantic-ai wraps the text in
  ``{"error": …}`` JSON for providers without one.
* a result that carries an image (``read_image``, docs/IMAGES.md) returns ``[text,
  BinaryImage(data, media_type)]``: pydantic-ai sends multimodal content returned from a tool
  natively in the tool result where the provider takes it (its ``ToolReturn`` docs);
* the tools' system prompt sections (§4.2 ``tool:*``, not the harness identity line) as the
  toolset's static instructions (``instructions=False`` leaves them out).

pydantic-ai is imported by this module only; ``import dsh_fs.adapters`` never needs it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal

from pydantic_ai.exceptions import ToolFailed
from pydantic_ai.messages import BinaryImage, InstructionPart
from pydantic_ai.tools import RunContext, ToolDefinition
from pydantic_ai.toolsets import AbstractToolset
from pydantic_ai.toolsets.abstract import ToolsetTool

from ..core.session import Session
from ..core.system_prompt import TOOL_SECTIONS
from .calls import image_bytes, parse_arguments, registry_of

__all__ = ("DshFsToolset", "ReferenceArgsValidator")


class ReferenceArgsValidator:
    """pydantic-ai's ``args_validator`` protocol, parsing as the reference's agent loop does.

    ``validate_json`` → :func:`dsh_fs.adapters.parse_arguments` (unparseable JSON is passed on
    as the raw string); ``validate_python`` → the value unchanged. Never raises: the registry
    reports bad arguments with the spec's texts.
    """

    def validate_json(self, input: str | bytes | bytearray, *, allow_partial: Any = False, **kwargs: Any) -> Any:
        text = input if isinstance(input, str) else bytes(input).decode("utf-8", "surrogateescape")
        return parse_arguments(text)

    def validate_python(self, input: Any, *, allow_partial: Any = False, **kwargs: Any) -> Any:
        return input


class DshFsToolset(AbstractToolset[Any]):
    """The registry's tools as a pydantic-ai toolset.

    :param ctx: a ``Context`` with the tools loaded (e.g. ``dsh_fs.create_context(...)``)
    :param session: the agent session: observation owner, cwd for relative paths. Default: a
        new ``Session(cwd=cwd)``, shared by every run of this toolset (one toolset = one
        agent's conversation; pass another session per conversation otherwise)
    :param cwd: the default session's cwd (ignored when ``session`` is given)
    :param id: the toolset id (needed for durable execution)
    :param errors: ``"text"`` (default) or ``"tool_failed"``, see the module docstring
    :param instructions: add the tools' prompt sections as instructions
    :param max_retries: pydantic-ai's retry budget per tool (the tools never ask for a retry)
    :raises ValueError: for an unknown ``errors`` mode
    """

    def __init__(
        self,
        ctx: Any,
        *,
        session: Session | None = None,
        cwd: str | None = None,
        id: str | None = None,
        errors: Literal["text", "tool_failed"] = "text",
        instructions: bool = True,
        max_retries: int = 1,
    ) -> None:
        if errors not in ("text", "tool_failed"):
            raise ValueError(f'errors must be "text" or "tool_failed", not {errors!r}')
        self.ctx = ctx
        self.registry = registry_of(ctx)
        self.session = session if session is not None else Session(cwd=cwd)
        self._id = id
        self.errors = errors
        self.instructions = instructions
        self.max_retries = max_retries
        self._validator = ReferenceArgsValidator()
        self._hooks: list[Callable[[str | None], Awaitable[None]]] = []

    @property
    def id(self) -> str | None:
        return self._id

    # -- the file history's ties (``adapters.checkpoints.FileCheckpoints``) -------------------
    @property
    def call_hooks(self) -> list[Callable[[str | None], Awaitable[None]]]:
        """Awaited before each tool call with ``pydantic-ai:<run_id>`` (the call's
        ``RunContext.run_id``); ``FileCheckpoints`` adds its mark here."""
        return self._hooks

    @staticmethod
    def checkpoint_name(run_id: Any) -> str:
        """The dsh-fs checkpoint name of a pydantic-ai run (``AgentRunResult.run_id``): the files
        as they were when the run's first tool call began.

        :raises ValueError: ``run_id`` is not a run id
        """
        if not isinstance(run_id, str) or not run_id:
            raise ValueError("a pydantic-ai run id (AgentRunResult.run_id, RunContext.run_id)")
        return f"pydantic-ai:{run_id}"

    async def get_instructions(self, ctx: RunContext[Any]) -> InstructionPart | None:
        """The ``tool:*`` prompt sections of the context, joined as the prompt joins them."""
        if not self.instructions:
            return None
        prompt = getattr(self.ctx, "system_prompt", None)
        if prompt is None:
            return None
        text = prompt.render(only=TOOL_SECTIONS)
        return InstructionPart(content=text, dynamic=False) if text else None

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        tools: dict[str, ToolsetTool[Any]] = {}
        for schema in self.registry.schemas():
            name = schema["name"]
            definition = self.registry.get(name)
            parallel = definition is not None and definition.is_concurrency_safe is not None
            tools[name] = ToolsetTool(
                toolset=self,
                tool_def=ToolDefinition(
                    name=name,
                    description=schema["description"],
                    parameters_json_schema=schema["parameters"],
                    strict=False,
                    sequential=not parallel,
                ),
                max_retries=self.max_retries,
                args_validator=self._validator,
            )
        return tools

    async def call_tool(self, name: str, tool_args: Any, ctx: RunContext[Any], tool: ToolsetTool[Any]) -> Any:
        """Run one call through the registry; returns the result text (see ``errors``), or for
        a result with image blocks ``[text, BinaryImage, …]`` in the result's order.

        :raises ToolFailed: for a failed call when ``errors="tool_failed"``
        """
        if self._hooks:  # FileCheckpoints: mark the run this call belongs to (its first call's state)
            point = f"pydantic-ai:{ctx.run_id}" if ctx.run_id else None
            for hook in self._hooks:
                await hook(point)
        result = await self.registry.execute(name, tool_args, session=self.session, call_id=ctx.tool_call_id)
        if result.is_error and self.errors == "tool_failed":
            raise ToolFailed(result.text)
        if not result.images:
            return result.text
        return [
            BinaryImage(data=image_bytes(block), media_type=block["mimeType"]) if block.get("type") == "image"
            else block["text"]
            for block in result.content
            if block.get("type") in ("image", "text")
        ]
