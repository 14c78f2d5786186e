"""Google ADK toolset (optional extra: ``pip install '.[google-adk]'``).

``DshFsToolset(ctx)`` is an ADK ``BaseToolset`` (``google.adk.tools.base_toolset``) for an
``Agent``'s ``tools``::

    from google.adk.agents import Agent
    from dsh_fs import create_context
    from dsh_fs.adapters.google_adk import DshFsToolset

    agent = Agent(name="coder", model="gemini-2.5-flash", instruction="Fix what the user asks.",
                  tools=[DshFsToolset(create_context(root="."))])   # one toolset = one agent

What the model gets:

* each tool's name and description from the registry, unchanged, and its §4.3 JSON schema as
  the declaration's ``parameters_json_schema`` (sent as given; ADK validates nothing against
  it, so the registry's own ``INVALID_ARGS`` texts answer bad arguments);
* a result's text byte for byte: the tool returns the text, which ADK hands the model as
  ``{"result": text}`` (its wrapping of every non-dict result);
* a result that carries an image (``read_image``, docs/IMAGES.md) returns ``{"result": text,
  "images": [types.Part.from_bytes(data, mime_type)]}``: ADK moves a media ``Part`` out of a
  tool's result into the ``FunctionResponse``'s ``parts`` (Gemini's multimodal function
  response, ``inline_data`` with the file's bytes), leaving ``{"result": text}`` as the
  response, as for every text result;
* a failed call returns ``{"status": "error", "error_message": text}`` with its exact
  ``Error: …`` text: ADK's documented shape for a tool error (a raised exception would end
  the run instead of reaching the model). ``errors="text"`` returns the text as a result
  instead, as Chat Completions shows it;
* the tools' system prompt sections (§4.2 ``tool:*``, not the harness identity line)
  appended to the request's system instruction (``instructions=False`` leaves them out);
* one ``Session`` per toolset (the observation owner: a file read through it may then be
  edited through it). An ADK ``Runner`` serving many conversations with one agent shares it:
  give each conversation its own agent and toolset, or pass ``session=`` yourself.

ADK's tools are async only: every call runs on the agent's event loop. ADK runs one
message's calls at once: each write or edit is still atomic and locked per file, but two
changes to one file in the same message land in either order (the other adapters keep
model order, §5.5). ``tool_filter`` and ``tool_name_prefix`` are ADK's own.

google-adk is imported by this module only; ``import dsh_fs.adapters`` never needs it.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.models.llm_request import LlmRequest
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.base_toolset import BaseToolset, ToolPredicate
from google.adk.tools.tool_context import ToolContext
from google.genai import types

from ..core.session import Session
from ..core.system_prompt import TOOL_SECTIONS
from ..core.tools import ToolRegistry
from .calls import image_bytes, registry_of

__all__ = ("DshFsTool", "DshFsToolset")


class DshFsTool(BaseTool):
    """One registry tool as an ADK ``BaseTool`` (built by ``DshFsToolset``).

    ``run_async`` passes the model's arguments to the registry as they are and returns the
    result text (with images: ``{"result": text, "images": [Part, …]}``, see the module doc),
    or ``{"status": "error", "error_message": text}`` for a failure (``errors="dict"``).
    """

    def __init__(self, *, registry: ToolRegistry, schema: dict[str, Any], session: Session,
                 errors: Literal["dict", "text"]) -> None:
        super().__init__(name=schema["name"], description=schema["description"])
        self._parameters = schema["parameters"]
        self._registry_name = schema["name"]  # ADK's tool_name_prefix renames copies of the tool
        self._registry = registry
        self._session = session
        self._errors = errors

    def _get_declaration(self) -> types.FunctionDeclaration:
        """The declaration ADK sends: name, description and the JSON schema (a fresh copy)."""
        return types.FunctionDeclaration(name=self.name, description=self.description,
                                         parameters_json_schema=json.loads(json.dumps(self._parameters)))

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        """Run one call through the registry (on the caller's event loop)."""
        call_id = getattr(tool_context, "function_call_id", None)
        result = await self._registry.execute(self._registry_name, args, session=self._session, call_id=call_id)
        if result.is_error and self._errors == "dict":
            return {"status": "error", "error_message": result.text}
        if result.images:
            return {"result": result.text, "images": [
                types.Part.from_bytes(data=image_bytes(block), mime_type=block["mimeType"]) for block in result.images]}
        return result.text


class DshFsToolset(BaseToolset):
    """The registry's tools as an ADK toolset, for one agent.

    :param ctx: a ``Context`` with the tools loaded (``dsh_fs.create_context(...)``) or a
        ``ToolRegistry``
    :param session: the agent session (observation owner, cwd for relative paths); default a
        new ``Session(cwd=cwd)`` shared by every tool of this toolset
    :param cwd: the default session's cwd (ignored when ``session`` is given)
    :param errors: ``"dict"`` (default: ``{"status": "error", "error_message": text}``) or
        ``"text"`` (the ``Error: …`` text as the result)
    :param instructions: append the tools' prompt sections to the system instruction
    :param tool_filter: ADK's: tool names, or a ``ToolPredicate``
    :param tool_name_prefix: ADK's: prefix every tool name with ``<prefix>_``
    :raises TypeError: ``ctx`` is neither a ``Context`` nor a ``ToolRegistry``
    :raises ValueError: an unknown ``errors`` mode
    """

    def __init__(self, ctx: Any, *, session: Session | None = None, cwd: str | None = None,
                 errors: Literal["dict", "text"] = "dict", instructions: bool = True,
                 tool_filter: ToolPredicate | list[str] | None = None, tool_name_prefix: str | None = None) -> None:
        if errors not in ("dict", "text"):
            raise ValueError(f'errors must be "dict" or "text", not {errors!r}')
        super().__init__(tool_filter=tool_filter, tool_name_prefix=tool_name_prefix)
        registry = registry_of(ctx)
        self.ctx = ctx
        self.session = session if session is not None else Session(cwd=cwd)
        self.instructions = instructions
        self._tools = [DshFsTool(registry=registry, schema=schema, session=self.session, errors=errors)
                       for schema in registry.schemas()]

    async def get_tools(self, readonly_context: ReadonlyContext | None = None) -> list[BaseTool]:
        """The selected tools (``tool_filter``), in registry order (§4.2); the same objects on
        every call."""
        return [tool for tool in self._tools if self._is_tool_selected(tool, readonly_context)]

    def instructions_text(self) -> str:
        """The tools' own system prompt sections (§4.2 ``tool:*``); ``""`` for a bare registry."""
        prompt = getattr(self.ctx, "system_prompt", None)
        return "" if prompt is None else prompt.render(only=TOOL_SECTIONS)

    async def process_llm_request(self, *, tool_context: ToolContext, llm_request: LlmRequest) -> None:
        """Append the tools' prompt sections to the request's system instruction (once per
        request; ADK then lets each tool add its declaration)."""
        text = self.instructions_text() if self.instructions else ""
        if text:
            llm_request.append_instructions([text])
