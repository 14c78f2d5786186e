"""LangChain / LangGraph tools (optional extra: ``pip install '.[langchain]'``).

``DshFsToolkit(ctx)`` is a LangChain ``BaseToolkit``; its ``get_tools()`` are ``BaseTool``s for
``langchain.agents.create_agent``, LangGraph's prebuilt ``create_react_agent`` and ``ToolNode``,
or any chat model's ``bind_tools``::

    from langchain.agents import create_agent
    from dsh_fs import create_context
    from dsh_fs.adapters.langchain import DshFsToolkit

    toolkit = DshFsToolkit(create_context(root="."))        # one toolkit = one agent
    agent = create_agent("deepseek:deepseek-chat", tools=toolkit.get_tools(),
                         system_prompt=toolkit.instructions())

What the model gets, exactly as from the other adapters:

* each tool's name, description and §4.3 JSON schema from the registry, unchanged (a
  JSON-schema ``args_schema``: LangChain sends it as given and validates nothing, so the
  registry's own ``INVALID_ARGS`` texts answer bad arguments);
* the result text byte for byte; a failed call raises ``ToolException`` with its ``Error: …``
  text, which the tool's ``handle_tool_error`` turns into the ``ToolMessage`` content with
  ``status="error"`` (LangChain's way of telling the model a tool failed);
* a result that carries an image (``read_image``, docs/IMAGES.md) returns a list of
  LangChain's standard content blocks, ``[{"type": "text", "text": envelope}, {"type":
  "image", "base64": data, "mime_type": type}]``: LangChain keeps such a list as the
  ``ToolMessage`` content (``TOOL_MESSAGE_BLOCK_TYPES``), and each chat model integration turns
  the standard ``image`` block into its API's image part (``langchain-anthropic``: an ``image``
  block inside the ``tool_result``);
* one ``Session`` per toolkit (the observation owner: a file read through it may then be
  edited through it).

``invoke`` (sync) runs the call on the toolkit's own event loop (``BlockingRunner``);
``ainvoke`` runs it on the caller's. LangGraph's ``ToolNode`` runs one message's calls at
once: each write or edit is still atomic and locked per file, but two changes to one file in
the same message land in either order (the other adapters keep model order, §5.5).

langchain-core is imported by this module only; ``import dsh_fs.adapters`` never needs it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langchain_core.tools import BaseTool, BaseToolkit, ToolException
from pydantic import ConfigDict, PrivateAttr

from ..core.session import Session
from ..core.system_prompt import TOOL_SECTIONS
from ..core.tools import ToolRegistry, ToolResult
from .blocking import BlockingRunner
from .calls import chosen_schemas, registry_of

__all__ = ("DshFsTool", "DshFsToolkit", "checkpoint_name", "graph_point", "langchain_content")


class DshFsTool(BaseTool):
    """One registry tool as a LangChain ``BaseTool`` (built by ``DshFsToolkit.get_tools``).

    ``args_schema`` is the tool's §4.3 JSON schema (a dict). The keyword arguments the model
    sent are passed to the registry as they are; the result is its text (a result with image
    blocks: ``langchain_content``), or ``ToolException`` with the error text (handled:
    ``ToolMessage(status="error")``).
    """

    handle_tool_error: Any = True
    _registry: ToolRegistry = PrivateAttr()
    _session: Session = PrivateAttr()
    _runner: BlockingRunner = PrivateAttr()
    _hooks: list[Callable[[str | None], Awaitable[None]]] = PrivateAttr()

    def __init__(self, *, registry: ToolRegistry, session: Session, runner: BlockingRunner,
                 hooks: list[Callable[[str | None], Awaitable[None]]] | None = None, **fields: Any) -> None:
        super().__init__(**fields)
        self._registry = registry
        self._session = session
        self._runner = runner
        self._hooks = hooks if hooks is not None else []

    async def _call(self, arguments: dict[str, Any], point: str | None = None) -> str | list[dict[str, Any]]:
        for hook in self._hooks:  # FileCheckpoints: mark the graph checkpoint this call starts from
            await hook(point)
        result: ToolResult = await self._registry.execute(self.name, arguments, session=self._session)
        if result.is_error:
            raise ToolException(result.text)
        return langchain_content(result)

    def _run(self, *args: Any, **kwargs: Any) -> str | list[dict[str, Any]]:
        """Sync call: runs on the toolkit's event loop (``BlockingRunner``).

        :raises ToolException: the call failed; its message is the ``Error: …`` text
        """
        return self._runner.run(self._call, _arguments(args, kwargs), graph_point())

    async def _arun(self, *args: Any, **kwargs: Any) -> str | list[dict[str, Any]]:
        """Async call on the caller's event loop.

        :raises ToolException: the call failed; its message is the ``Error: …`` text
        """
        return await self._call(_arguments(args, kwargs), graph_point())


def graph_point() -> str | None:
    """The LangGraph checkpoint the running tool call started from, as a dsh-fs checkpoint name
    (``langgraph:<checkpoint_id>``: the root graph's ``checkpoint_map[""]`` of the call's
    ``RunnableConfig``); ``None`` outside a graph with a checkpointer. Read in the calling
    thread or task, where LangChain set the call's config (docs/HISTORY.md "Frameworks")."""
    from langchain_core.runnables.config import var_child_runnable_config

    config = var_child_runnable_config.get() or {}
    found = (config.get("configurable") or {}).get("checkpoint_map") or {}
    point = found.get("") if isinstance(found, dict) else None
    return f"langgraph:{point}" if isinstance(point, str) and point else None


def checkpoint_name(config: Any) -> str:
    """The dsh-fs checkpoint name of a LangGraph ``RunnableConfig`` naming a checkpoint
    (``{"configurable": {"thread_id": …, "checkpoint_id": …}}``, a ``StateSnapshot.config``).

    :raises ValueError: ``config`` names no checkpoint
    """
    point = ((config or {}).get("configurable") or {}).get("checkpoint_id") if isinstance(config, dict) else None
    if not isinstance(point, str) or not point:
        raise ValueError("a LangGraph config naming a checkpoint: {'configurable': {'thread_id': …, 'checkpoint_id': …}}")
    return f"langgraph:{point}"


def langchain_content(result: ToolResult) -> str | list[dict[str, Any]]:
    """A successful result as ``ToolMessage`` content: its text when it has no image (every
    tool but ``read_image``), else LangChain's standard blocks in the result's order — text
    ``{"type": "text", "text": …}``, image ``{"type": "image", "base64": <data>, "mime_type":
    <media type>}`` (langchain-core's ``ImageContentBlock``; docs/IMAGES.md)."""
    if not result.images:
        return result.text
    blocks: list[dict[str, Any]] = []
    for block in result.content:
        if block.get("type") == "image":
            blocks.append({"type": "image", "base64": block["data"], "mime_type": block["mimeType"]})
        elif block.get("type") == "text":
            blocks.append({"type": "text", "text": block["text"]})
    return blocks


def _arguments(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The model's arguments: LangChain passes a dict input as keywords; a bare string input
    (not a JSON object) reaches the registry as it is, which reports it (§5.5)."""
    if args:
        return args[0]
    return dict(kwargs)


class DshFsToolkit(BaseToolkit):
    """The registry's tools as LangChain tools, for one agent.

    :param ctx: a ``Context`` with the tools loaded (``dsh_fs.create_context(...)``) or a
        ``ToolRegistry``
    :param session: the agent session (observation owner, cwd for relative paths); default a
        new ``Session(cwd=cwd)`` shared by every tool of this toolkit
    :param cwd: the default session's cwd (ignored when ``session`` is given)
    :param names: only these tools (registry names), in registry order; default all
    :raises TypeError: ``ctx`` is neither a ``Context`` nor a ``ToolRegistry``
    :raises ValueError: a name in ``names`` is not registered
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    ctx: Any
    session: Session
    names: list[str] | None = None
    _tools: list[BaseTool] = PrivateAttr()
    _runner: BlockingRunner = PrivateAttr()
    _hooks: list[Callable[[str | None], Awaitable[None]]] = PrivateAttr()

    def __init__(self, ctx: Any, *, session: Session | None = None, cwd: str | None = None,
                 names: list[str] | None = None) -> None:
        super().__init__(ctx=ctx, session=session if session is not None else Session(cwd=cwd), names=names)
        registry = registry_of(ctx)
        self._runner = BlockingRunner("dsh-fs langchain")
        self._hooks = []
        self._tools = [
            DshFsTool(registry=registry, session=self.session, runner=self._runner, hooks=self._hooks,
                      name=schema["name"], description=schema["description"], args_schema=schema["parameters"])
            for schema in chosen_schemas(registry, names)
        ]

    def get_tools(self) -> list[BaseTool]:
        """The tools, in registry order (§4.2); the same objects on every call."""
        return list(self._tools)

    def instructions(self) -> str:
        """The tools' own system prompt sections (§4.2 ``tool:*``, without the harness identity
        line), for ``create_agent(system_prompt=…)``; ``""`` for a bare registry."""
        prompt = getattr(self.ctx, "system_prompt", None)
        return "" if prompt is None else prompt.render(only=TOOL_SECTIONS)

    def close(self) -> None:
        """Stop the event loop the sync calls run on (a later sync call starts a new one)."""
        self._runner.close()

    # -- the file history's ties (``adapters.checkpoints.FileCheckpoints``) -------------------
    @property
    def runner(self) -> BlockingRunner:
        """The event loop the sync calls run on."""
        return self._runner

    @property
    def call_hooks(self) -> list[Callable[[str | None], Awaitable[None]]]:
        """Awaited before each tool call with the name of the LangGraph checkpoint it starts
        from (``graph_point``), or ``None``; ``FileCheckpoints`` adds its mark here."""
        return self._hooks

    @staticmethod
    def checkpoint_name(config: Any) -> str:
        """``checkpoint_name``: the dsh-fs checkpoint name of a LangGraph config."""
        return checkpoint_name(config)
