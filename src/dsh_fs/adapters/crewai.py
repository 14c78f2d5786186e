"""CrewAI tools (optional extra: ``pip install '.[crewai]'``).

``DshFsToolkit(ctx)`` holds one agent's tools; its ``get_tools()`` are CrewAI ``BaseTool`` s
(``crewai.tools.BaseTool``) for an ``Agent``'s ``tools``::

    from crewai import Agent
    from dsh_fs import create_context
    from dsh_fs.adapters.crewai import DshFsToolkit

    files = DshFsToolkit(create_context(root="."))           # one toolkit = one agent
    coder = Agent(role="coder", goal="Fix what the task asks", backstory=files.instructions(),
                  tools=files.get_tools(), llm="deepseek/deepseek-chat")

What the model gets:

* each tool's name and description from the registry, unchanged;
* its §4.3 JSON schema as the argument schema, every property as it is except that one the
  schema does not require is made nullable (``"type": [T, "null"]``). CrewAI sends every
  tool in OpenAI's strict mode and rewrites the schema for it (``additionalProperties:
  false``, every property required); a nullable property is how strict mode says
  "optional", and a ``null`` the model sends for it is dropped (not given). CrewAI checks
  nothing else: the registry validates the arguments with the spec's texts;
* the result text byte for byte;
* a failed call returns CrewAI's ``ToolFailure`` with the exact ``Error: …`` text as its
  message (the model sees that text; CrewAI records the failure on the task output and
  applies its ``tool_failure_policy``). ``errors="text"`` returns the text as a plain result
  instead, as Chat Completions shows it;
* a result that carries an image (``read_image``, docs/IMAGES.md): its text envelope and then
  ``IMAGE_NOT_SHOWN`` on a line of its own (DEVIATIONS I6). CrewAI 1.15 hands a tool's result
  to the model as the text of a ``tool`` message (``AgentExecutor``); only its planning step
  executor turns a ``VISION_IMAGE:<type>:<base64>`` result into an image, and everywhere else
  that sentinel would reach the model as megabytes of base64 text. So the image is not sent,
  and the model is told so rather than left to guess;
* never a cached result: CrewAI's tool cache would answer a repeated ``read`` without
  reading (and a repeated ``edit`` without editing), so these tools opt out of it;
* one ``Session`` per toolkit (the observation owner: a file read through it may then be
  edited through it).

``run`` (sync) runs the call on the toolkit's own event loop (``BlockingRunner``); ``arun``
runs it on the caller's. CrewAI 1.15's agents call ``run`` from ``kickoff`` and ``akickoff``
alike (the latter in a worker thread); ``arun`` serves code that awaits a tool itself.

crewai is imported by this module only; ``import dsh_fs.adapters`` never needs it.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any, Literal

from crewai.tools import BaseTool
from crewai.tools.tool_failure import ToolFailure
from pydantic import BaseModel, ConfigDict, PrivateAttr

from ..core.session import Session
from ..core.system_prompt import TOOL_SECTIONS
from ..core.tools import ToolRegistry, ToolResult
from .blocking import BlockingRunner
from .calls import chosen_schemas, registry_of

__all__ = ("DshFsTool", "DshFsToolkit", "IMAGE_NOT_SHOWN", "crewai_parameters")

IMAGE_NOT_SHOWN = "Hint: the image itself is not shown: CrewAI passes tool results to the model as text only."
"""the line after an image result's envelope (DEVIATIONS I6): CrewAI's agent loop carries no
image in a tool result"""


def crewai_parameters(parameters: dict[str, Any]) -> dict[str, Any]:
    """A §4.3 JSON schema with each property the schema does not require made nullable
    (``"type": T`` → ``"type": [T, "null"]``), for CrewAI's strict mode. A fresh copy."""
    schema = copy.deepcopy(parameters)
    required = set(schema.get("required", ()))
    for name, prop in schema.get("properties", {}).items():
        if name not in required and isinstance(prop.get("type"), str):
            prop["type"] = [prop["type"], "null"]
    return schema


def _arguments_model(name: str, parameters: dict[str, Any]) -> type[BaseModel]:
    """A field-less pydantic model whose JSON schema is ``crewai_parameters(parameters)``:
    CrewAI reads the schema from it and, finding no fields, validates nothing."""
    schema = crewai_parameters(parameters)

    class Arguments(BaseModel):
        model_config = ConfigDict(extra="allow")

        @classmethod
        def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
            return copy.deepcopy(schema)

    Arguments.__name__ = Arguments.__qualname__ = f"{name}_arguments"
    return Arguments


def _never_cache(_args: Any = None, _result: Any = None) -> bool:
    """CrewAI's ``cache_function``: no result is ever cached (a file can change)."""
    return False


class DshFsTool(BaseTool):
    """One registry tool as a CrewAI ``BaseTool`` (built by ``DshFsToolkit``).

    Returns the result text (an image result: its envelope and ``IMAGE_NOT_SHOWN``), or
    ``ToolFailure(message=text)`` for a failure (``errors="failure"``).
    """

    _registry: ToolRegistry = PrivateAttr()
    _session: Session = PrivateAttr()
    _runner: BlockingRunner = PrivateAttr()
    _required: frozenset[str] = PrivateAttr()
    _errors: str = PrivateAttr()

    def __init__(self, *, registry: ToolRegistry, schema: dict[str, Any], session: Session, runner: BlockingRunner,
                 errors: Literal["failure", "text"]) -> None:
        super().__init__(name=schema["name"], description=schema["description"],
                         args_schema=_arguments_model(schema["name"], schema["parameters"]),
                         cache_function=_never_cache)
        self._registry = registry
        self._session = session
        self._runner = runner
        self._required = frozenset(schema["parameters"].get("required", ()))
        self._errors = errors

    def _arguments(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """The model's arguments; a bare positional input reaches the registry as it is."""
        if args:
            return args[0]
        return {k: v for k, v in kwargs.items() if v is not None or k in self._required}

    def _answer(self, result: ToolResult) -> str | ToolFailure:
        if result.is_error and self._errors == "failure":
            return ToolFailure(message=result.text,
                               details={} if result.error is None else result.error.as_dict())
        if result.images:
            return f"{result.text}\n{IMAGE_NOT_SHOWN}"
        return result.text

    def _run(self, *args: Any, **kwargs: Any) -> str | ToolFailure:
        """Sync call: runs on the toolkit's event loop (``BlockingRunner``)."""
        return self._answer(self._runner.run(self._call, self._arguments(args, kwargs)))

    async def _arun(self, *args: Any, **kwargs: Any) -> str | ToolFailure:
        """Async call on the caller's event loop."""
        return self._answer(await self._call(self._arguments(args, kwargs)))

    async def _call(self, arguments: Any) -> ToolResult:
        return await self._registry.execute(self.name, arguments, session=self._session)


class DshFsToolkit:
    """The registry's tools as CrewAI tools, for one agent.

    :param ctx: a ``Context`` with the tools loaded (``dsh_fs.create_context(...)``) or a
        ``ToolRegistry``
    :param session: the agent session (observation owner, cwd for relative paths); default a
        new ``Session(cwd=cwd)`` shared by every tool of this toolkit
    :param cwd: the default session's cwd (ignored when ``session`` is given)
    :param names: only these tools (registry names), in registry order; default all
    :param errors: ``"failure"`` (default: CrewAI's ``ToolFailure``) or ``"text"``
    :raises TypeError: ``ctx`` is neither a ``Context`` nor a ``ToolRegistry``
    :raises ValueError: a name in ``names`` is not registered, or an unknown ``errors`` mode
    """

    def __init__(self, ctx: Any, *, session: Session | None = None, cwd: str | None = None,
                 names: Iterable[str] | None = None, errors: Literal["failure", "text"] = "failure") -> None:
        if errors not in ("failure", "text"):
            raise ValueError(f'errors must be "failure" or "text", not {errors!r}')
        registry = registry_of(ctx)
        self.ctx = ctx
        self.session = session if session is not None else Session(cwd=cwd)
        self._runner = BlockingRunner("dsh-fs crewai")
        self._tools = [
            DshFsTool(registry=registry, schema=schema, session=self.session, runner=self._runner, errors=errors)
            for schema in chosen_schemas(registry, names)
        ]

    def get_tools(self) -> list[BaseTool]:
        """The tools, in registry order (§4.2); the same objects on every call."""
        return list(self._tools)

    def instructions(self) -> str:
        """The tools' own system prompt sections (§4.2 ``tool:*``, without the harness identity
        line), e.g. for the agent's ``backstory``; ``""`` for a bare registry."""
        prompt = getattr(self.ctx, "system_prompt", None)
        return "" if prompt is None else prompt.render(only=TOOL_SECTIONS)

    def close(self) -> None:
        """Stop the event loop the sync calls run on (a later sync call starts a new one)."""
        self._runner.close()
