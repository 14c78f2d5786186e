"""smolagents tools (optional extra: ``pip install 'dsh-fs[smolagents]'``).

``DshFsToolCollection(ctx)`` is a smolagents ``ToolCollection``; its ``tools`` are ``Tool`` s
for ``ToolCallingAgent`` and ``CodeAgent`` alike::

    from smolagents import CodeAgent, OpenAIModel
    from dsh_fs import create_context
    from dsh_fs.adapters.smolagents import DshFsToolCollection

    files = DshFsToolCollection(create_context(root="."))    # one collection = one agent
    agent = CodeAgent(tools=files.tools, model=OpenAIModel(model_id="deepseek-chat", ...),
                      instructions=files.instructions())

What the model gets:

* each tool's name and description from the registry, unchanged; ``inputs`` are the §4.3
  JSON schema's ``properties`` as they are, plus smolagents' ``"nullable": true`` on each
  property the schema does not require (smolagents has no ``required`` list: it derives it
  from ``nullable``, so the JSON schema a ``ToolCallingAgent`` sends is ours with that one
  key added; a ``CodeAgent`` shows the same names, types and descriptions as a Python
  signature);
* the result text byte for byte (as the tool's return value);
* a failed call raises ``DshFsToolError`` whose message is exactly its ``Error: …`` text:
  smolagents' way of telling the model a tool failed (a ``ToolCallingAgent`` reports it in
  the step's error, a ``CodeAgent`` in the code's execution error, each wrapped in
  smolagents' own framing). ``errors="text"`` returns the text instead, as Chat Completions
  shows it;
* one ``Session`` per collection (the observation owner: a file read through it may then be
  edited through it).

smolagents validates the arguments itself before a tool runs (a missing required argument,
a value of the wrong JSON type: its own ``AgentToolCallError`` texts); what it passes, the
registry validates again with the spec's texts. A ``null`` for an optional argument means
"not given" (smolagents' ``nullable``) and is dropped. smolagents is sync only: every call
runs on the collection's own event loop (``BlockingRunner``). A ``ToolCallingAgent`` runs
one message's calls in threads at once: each write or edit is still atomic and locked per
file, but two changes to one file in the same message land in either order (the other
adapters keep model order, §5.5).

smolagents is imported by this module only; ``import dsh_fs.adapters`` never needs it.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any, Literal

from smolagents import Tool, ToolCollection

from ..core.session import Session
from ..core.system_prompt import TOOL_SECTIONS
from ..core.tools import ToolRegistry
from .blocking import BlockingRunner
from .calls import registry_of

__all__ = ("DshFsTool", "DshFsToolCollection", "DshFsToolError", "smolagents_inputs")


class DshFsToolError(Exception):
    """A failed call; ``str(error)`` is exactly the tool's ``Error: …`` text (§5.2)."""


def smolagents_inputs(parameters: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """A §4.3 JSON schema (``{type: object, properties, required}``) as smolagents ``inputs``.

    Each property is copied as it is; one the schema does not require gets
    ``"nullable": True`` (smolagents' only way to mark an input optional). Fresh dicts.
    """
    required = set(parameters.get("required", ()))
    inputs: dict[str, dict[str, Any]] = {}
    for name, schema in parameters.get("properties", {}).items():
        entry = dict(schema)
        if name not in required:
            entry["nullable"] = True
        inputs[name] = entry
    return inputs


class DshFsTool(Tool):
    """One registry tool as a smolagents ``Tool`` (built by ``DshFsToolCollection``).

    ``forward`` takes the arguments by name (``ToolCallingAgent``, ``read(file_path=…)`` in a
    ``CodeAgent``) or by position in ``inputs`` order (``read("a.txt")``), and returns the
    result text.

    :raises DshFsToolError: the call failed (``errors="raise"``)
    """

    skip_forward_signature_validation = True  # forward takes the registry's arguments as given
    output_type = "string"

    def __init__(self, *, registry: ToolRegistry, schema: dict[str, Any], session: Session,
                 runner: BlockingRunner, errors: Literal["raise", "text"]) -> None:
        self.name = schema["name"]
        self.description = schema["description"]
        self.inputs = smolagents_inputs(schema["parameters"])
        self._required = set(schema["parameters"].get("required", ()))
        self._registry = registry
        self._session = session
        self._runner = runner
        self._errors = errors
        super().__init__()

    def forward(self, *args: Any, **kwargs: Any) -> str:
        arguments: dict[str, Any] = dict(zip(self.inputs, args))
        arguments.update(kwargs)
        arguments = {k: v for k, v in arguments.items() if v is not None or k in self._required}
        call = functools.partial(self._registry.execute, self.name, arguments, session=self._session)
        result = self._runner.run(call)
        if result.is_error and self._errors == "raise":
            raise DshFsToolError(result.text)
        return result.text


class DshFsToolCollection(ToolCollection):
    """The registry's tools as smolagents tools, for one agent.

    :param ctx: a ``Context`` with the tools loaded (``dsh_fs.create_context(...)``) or a
        ``ToolRegistry``
    :param session: the agent session (observation owner, cwd for relative paths); default a
        new ``Session(cwd=cwd)`` shared by every tool of this collection
    :param cwd: the default session's cwd (ignored when ``session`` is given)
    :param names: only these tools (registry names), in registry order; default all
    :param errors: ``"raise"`` (default: ``DshFsToolError``) or ``"text"`` (the ``Error: …``
        text as the return value)
    :raises TypeError: ``ctx`` is neither a ``Context`` nor a ``ToolRegistry``
    :raises ValueError: a name in ``names`` is not registered, or an unknown ``errors`` mode
    """

    def __init__(self, ctx: Any, *, session: Session | None = None, cwd: str | None = None,
                 names: Iterable[str] | None = None, errors: Literal["raise", "text"] = "raise") -> None:
        if errors not in ("raise", "text"):
            raise ValueError(f'errors must be "raise" or "text", not {errors!r}')
        registry = registry_of(ctx)
        chosen = None if names is None else set(names)
        unknown = sorted((chosen or set()) - set(registry.names()))
        if unknown:
            raise ValueError(f"no such tools: {', '.join(unknown)}")
        self.ctx = ctx
        self.session = session if session is not None else Session(cwd=cwd)
        self._runner = BlockingRunner("dsh-fs smolagents")
        super().__init__([
            DshFsTool(registry=registry, schema=schema, session=self.session, runner=self._runner, errors=errors)
            for schema in registry.schemas()
            if chosen is None or schema["name"] in chosen
        ])

    def instructions(self) -> str:
        """The tools' own system prompt sections (§4.2 ``tool:*``, without the harness identity
        line), for the agent's ``instructions=``; ``""`` for a bare registry."""
        prompt = getattr(self.ctx, "system_prompt", None)
        return "" if prompt is None else prompt.render(only=TOOL_SECTIONS)

    def close(self) -> None:
        """Stop the event loop the calls run on (a later call starts a new one)."""
        self._runner.close()
