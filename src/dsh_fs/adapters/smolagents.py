"""smolagents tools (optional extra: ``pip install '.[smolagents]'``).

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
  edited through it);
* an image (``read_image``, docs/IMAGES.md) the way smolagents shows images to a model: a
  tool's return value only ever reaches it as text (an ``AgentImage`` return becomes
  ``Stored 'image.png' in memory.``), but a step's ``observations_images`` go into the next
  request as a ``user`` message of ``image`` parts (each model class encodes them; the PIL
  image is re-encoded as PNG, the file's pixels unchanged). So the tool returns the text
  envelope and keeps the image; ``attach_images``, registered as a step callback, moves the
  images of the step's calls onto the step::

      agent = ToolCallingAgent(tools=files.tools, model=model, step_callbacks=[files.attach_images])

  Without that callback the model gets the envelope only (at most ``MAX_PENDING_IMAGES``
  images wait for a callback; older ones are dropped).

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
import io
import threading
from collections import deque
from collections.abc import Iterable
from typing import Any, Literal

from smolagents import Tool, ToolCollection

from ..core.session import Session
from ..core.system_prompt import TOOL_SECTIONS
from ..core.tools import ToolRegistry
from .blocking import BlockingRunner
from .calls import chosen_schemas, image_bytes, registry_of

__all__ = ("DshFsTool", "DshFsToolCollection", "DshFsToolError", "MAX_PENDING_IMAGES", "PendingImages",
           "smolagents_inputs")

MAX_PENDING_IMAGES = 16
"""the most images (encoded, each at most ``read_image``'s byte cap) a collection keeps for
``attach_images``; an older one is dropped past it"""


class PendingImages:
    """The encoded images of the calls since the last step callback (thread-safe: a
    ``ToolCallingAgent`` runs one message's calls in threads), at most ``MAX_PENDING_IMAGES``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._images: deque[bytes] = deque(maxlen=MAX_PENDING_IMAGES)

    def add(self, data: bytes) -> None:
        """Keep one encoded image (the oldest kept is dropped past ``MAX_PENDING_IMAGES``)."""
        with self._lock:
            self._images.append(data)

    def take(self) -> list[bytes]:
        """The kept images, oldest first, and forget them."""
        with self._lock:
            taken = list(self._images)
            self._images.clear()
            return taken


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
    result text; a result's image blocks are kept for ``DshFsToolCollection.attach_images``.

    :raises DshFsToolError: the call failed (``errors="raise"``)
    """

    skip_forward_signature_validation = True  # forward takes the registry's arguments as given
    output_type = "string"

    def __init__(self, *, registry: ToolRegistry, schema: dict[str, Any], session: Session,
                 runner: BlockingRunner, errors: Literal["raise", "text"], pending: PendingImages | None = None) -> None:
        self.name = schema["name"]
        self.description = schema["description"]
        self.inputs = smolagents_inputs(schema["parameters"])
        self._required = set(schema["parameters"].get("required", ()))
        self._registry = registry
        self._session = session
        self._runner = runner
        self._errors = errors
        self._pending = pending if pending is not None else PendingImages()
        super().__init__()

    def forward(self, *args: Any, **kwargs: Any) -> str:
        arguments: dict[str, Any] = dict(zip(self.inputs, args))
        arguments.update(kwargs)
        arguments = {k: v for k, v in arguments.items() if v is not None or k in self._required}
        call = functools.partial(self._registry.execute, self.name, arguments, session=self._session)
        result = self._runner.run(call)
        if result.is_error and self._errors == "raise":
            raise DshFsToolError(result.text)
        for block in result.images:
            self._pending.add(image_bytes(block))
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
        self.ctx = ctx
        self.session = session if session is not None else Session(cwd=cwd)
        self._runner = BlockingRunner("dsh-fs smolagents")
        self._pending = PendingImages()
        super().__init__([
            DshFsTool(registry=registry, schema=schema, session=self.session, runner=self._runner, errors=errors,
                      pending=self._pending)
            for schema in chosen_schemas(registry, names)
        ])

    def instructions(self) -> str:
        """The tools' own system prompt sections (§4.2 ``tool:*``, without the harness identity
        line), for the agent's ``instructions=``; ``""`` for a bare registry."""
        prompt = getattr(self.ctx, "system_prompt", None)
        return "" if prompt is None else prompt.render(only=TOOL_SECTIONS)

    def attach_images(self, memory_step: Any) -> None:
        """smolagents step callback (``step_callbacks=[files.attach_images]``): the images the
        step's calls returned (``read_image``), decoded (Pillow, first frame) and appended to
        ``memory_step.observations_images``, which smolagents sends in the next request as a
        ``user`` message of ``image`` parts. A step with no image is left as it is."""
        taken = self._pending.take()
        if not taken:
            return
        from PIL import Image  # the [images] extra: read_image needs it too

        images = []
        for data in taken:
            with Image.open(io.BytesIO(data)) as image:
                image.load()
                images.append(image.copy())
        memory_step.observations_images = [*(getattr(memory_step, "observations_images", None) or ()), *images]

    def close(self) -> None:
        """Stop the event loop the calls run on (a later call starts a new one)."""
        self._runner.close()
