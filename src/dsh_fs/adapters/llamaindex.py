"""LlamaIndex tools (optional extra: ``pip install '.[llamaindex]'``).

``DshFsToolSpec(ctx)`` is a LlamaIndex ``BaseToolSpec``; ``to_tool_list()`` gives one
``FunctionTool`` per registry tool, for ``FunctionAgent`` (or any agent of
``llama_index.core.agent.workflow``)::

    from llama_index.core.agent.workflow import FunctionAgent
    from dsh_fs import create_context
    from dsh_fs.adapters.llamaindex import DshFsToolSpec

    spec = DshFsToolSpec(create_context(root="."))              # one spec = one agent
    agent = FunctionAgent(tools=spec.to_tool_list(), llm=llm, system_prompt=spec.instructions())

What the model gets, exactly as from the other adapters:

* each tool's name, description and §4.3 JSON schema from the registry, unchanged
  (``JsonSchemaToolMetadata``: ``get_parameters_dict()`` is the schema itself, not one rebuilt
  from a pydantic model), so ``to_openai_tool()`` and every LLM integration send it as is;
* the result text byte for byte; a failed call raises ``ToolCallFailed`` with its
  ``Error: …`` text, which the agent workflow turns into ``ToolOutput(is_error=True)`` whose
  content is that text (LlamaIndex's way of telling the model a tool failed);
* a result that carries an image (``read_image``, docs/IMAGES.md) returns ``[TextBlock(text),
  ImageBlock(image=bytes, image_mimetype=type)]``: ``FunctionTool`` keeps such a list as the
  ``ToolOutput``'s ``blocks`` (its ``content`` stays the text), and the agent workflow puts
  those blocks in the ``tool`` message it hands the LLM;
* one ``Session`` per spec (the observation owner).

``call`` (sync) runs on the spec's own event loop (``BlockingRunner``); ``acall`` on the
caller's. llama-index-core is imported by this module only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from llama_index.core.base.llms.types import ImageBlock, TextBlock
from llama_index.core.tools import FunctionTool, ToolMetadata
from llama_index.core.tools.tool_spec.base import BaseToolSpec

from ..core.session import Session
from ..core.system_prompt import TOOL_SECTIONS
from ..core.tools import ToolRegistry, ToolResult
from .blocking import BlockingRunner
from .calls import chosen_schemas, image_bytes, registry_of

__all__ = ("DshFsToolSpec", "JsonSchemaToolMetadata", "ToolCallFailed", "llamaindex_output")


class ToolCallFailed(Exception):
    """A tool call failed; ``str(exc)`` is its ``Error: …`` text, as the model must see it."""


@dataclass
class JsonSchemaToolMetadata(ToolMetadata):
    """``ToolMetadata`` whose parameters are a JSON schema as given (no pydantic model)."""

    fn_schema: Any = None
    parameters: dict[str, Any] = field(default_factory=dict)

    def get_parameters_dict(self) -> dict:
        """The tool's §4.3 JSON schema (a copy)."""
        return _copy(self.parameters)


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def llamaindex_output(result: ToolResult) -> str | list[TextBlock | ImageBlock]:
    """A successful result as a ``FunctionTool`` return value: its text when it has no image
    (every tool but ``read_image``), else its blocks in order as ``TextBlock`` /
    ``ImageBlock(image=<the encoded file's bytes>, image_mimetype=<media type>)``
    (docs/IMAGES.md)."""
    if not result.images:
        return result.text
    blocks: list[TextBlock | ImageBlock] = []
    for block in result.content:
        if block.get("type") == "image":
            blocks.append(ImageBlock(image=image_bytes(block), image_mimetype=block["mimeType"]))
        elif block.get("type") == "text":
            blocks.append(TextBlock(text=block["text"]))
    return blocks


class DshFsToolSpec(BaseToolSpec):
    """The registry's tools as a LlamaIndex tool spec, for one agent.

    :param ctx: a ``Context`` with the tools loaded (``dsh_fs.create_context(...)``) or a
        ``ToolRegistry``
    :param session: the agent session (observation owner, cwd for relative paths); default a
        new ``Session(cwd=cwd)`` shared by every tool of this spec
    :param cwd: the default session's cwd (ignored when ``session`` is given)
    :raises TypeError: ``ctx`` is neither a ``Context`` nor a ``ToolRegistry``
    """

    def __init__(self, ctx: Any, *, session: Session | None = None, cwd: str | None = None) -> None:
        self.ctx = ctx
        self.registry: ToolRegistry = registry_of(ctx)
        self.session = session if session is not None else Session(cwd=cwd)
        self.spec_functions = self.registry.names()
        self._runner = BlockingRunner("dsh-fs llamaindex")

    def to_tool_list(self, spec_functions: list[Any] | None = None,
                     func_to_metadata_mapping: dict[str, ToolMetadata] | None = None) -> list[FunctionTool]:
        """One ``FunctionTool`` per registry tool, in registry order (§4.2); ``spec_functions``
        narrows them to those names. ``func_to_metadata_mapping`` (name → ``ToolMetadata``)
        replaces a tool's metadata, as ``BaseToolSpec`` allows.

        :raises ValueError: a name in ``spec_functions`` is not registered
        """
        names = list(spec_functions) if spec_functions is not None else self.spec_functions
        mapping = func_to_metadata_mapping or {}
        return [self._tool(schema, mapping.get(schema["name"])) for schema in chosen_schemas(self.registry, names)]

    def _tool(self, schema: dict[str, Any], metadata: ToolMetadata | None) -> FunctionTool:
        name = schema["name"]

        async def call(**arguments: Any) -> str | list[TextBlock | ImageBlock]:
            result = await self.registry.execute(name, arguments, session=self.session)
            if result.is_error:
                raise ToolCallFailed(result.text)
            return llamaindex_output(result)

        def call_sync(**arguments: Any) -> str | list[TextBlock | ImageBlock]:
            return self._runner.run(lambda: call(**arguments))

        if metadata is None:
            metadata = JsonSchemaToolMetadata(name=name, description=schema["description"],
                                              parameters=schema["parameters"])
        return FunctionTool(fn=call_sync, async_fn=call, metadata=metadata)

    def instructions(self) -> str:
        """The tools' own system prompt sections (§4.2 ``tool:*``, without the harness identity
        line), for an agent's ``system_prompt``; ``""`` for a bare registry."""
        prompt = getattr(self.ctx, "system_prompt", None)
        return "" if prompt is None else prompt.render(only=TOOL_SECTIONS)

    def close(self) -> None:
        """Stop the event loop the sync calls run on (a later sync call starts a new one)."""
        self._runner.close()
