"""Turning one assistant message's tool calls into registry calls (REFERENCE-SPEC §5.5).

Shared by the provider adapters: the reference's argument parsing, field access that works on
plain dicts and on SDK objects alike, and running a batch in model order. Pure except for
:func:`run_calls`, which awaits the registry.

Not here: any provider's wire shapes (see ``openai_chat``, ``openai_responses``,
``anthropic_messages``).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..core.jsonvalue import parse_json
from ..core.session import Session
from ..core.signal import AbortSignal
from ..core.tools import DEFAULT_MAX_PARALLEL, ToolCall, ToolRegistry, ToolResult

__all__ = (
    "ToolSource",
    "chosen_schemas",
    "data_url",
    "field",
    "image_bytes",
    "items_of",
    "native_definitions",
    "parse_arguments",
    "registry_of",
    "run_calls",
    "tool_schemas",
)

ToolSource = Any
"""a ``Context`` (its ``tools`` service), a ``ToolRegistry``, or a sequence of
``{name, description, parameters}`` schemas as ``ToolRegistry.schemas()`` returns them"""


def parse_arguments(raw: Any) -> Any:
    """A model's raw tool-call arguments as the reference's agent loop parses them (§5.5).

    * ``str``: ``""`` → ``{}``; JSON text → the parsed value, with ``JSON.parse`` semantics
      (``core.jsonvalue.parse_json``: ``NaN``/``Infinity`` are not JSON, ``-0`` is negative
      zero, integers beyond 2**53 are doubles); anything unparseable → the raw string itself,
      which the registry then reports as ``"arguments" must be an object``.
    * ``None`` → ``{}`` (an SDK that leaves the field out).
    * anything else (already parsed, e.g. an Anthropic ``tool_use`` ``input``) → unchanged.
    """
    if raw is None:
        return {}
    if not isinstance(raw, str):
        return raw
    if raw == "":
        return {}
    try:
        return parse_json(raw)
    except (ValueError, RecursionError):
        return raw


def data_url(block: Mapping[str, Any]) -> str:
    """The ``data:<media type>;base64,<data>`` URL of an image block (``core.tools.image_block``),
    the form OpenAI's image parts take (``image_url``)."""
    return f"data:{block['mimeType']};base64,{block['data']}"


def image_bytes(block: Mapping[str, Any]) -> bytes:
    """The encoded image bytes of an image block (its base64 ``data`` decoded)."""
    return base64.b64decode(block["data"])


def field(obj: Any, name: str, default: Any = None) -> Any:
    """``obj[name]`` for a mapping, else ``getattr(obj, name)``; ``default`` when absent.

    Lets every adapter take the SDKs' response objects (pydantic models) and plain dicts
    (JSON from any HTTP client) alike.
    """
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


def items_of(container: Any, attribute: str) -> list[Any]:
    """The list held by ``container.<attribute>`` (a message or response), or ``container``
    itself when it is already a list of items; ``None`` → ``[]``.

    :raises TypeError: for a string or a non-iterable without ``attribute``
    """
    if container is None:
        return []
    if isinstance(container, Mapping) or hasattr(container, attribute):
        inner = field(container, attribute)  # SDK models are iterable too: look for the field first
        return [] if inner is None else list(inner)
    if isinstance(container, (str, bytes)) or not isinstance(container, Iterable):
        raise TypeError(f"expected a list of items or an object with {attribute!r}, not {type(container).__name__}")
    return list(container)


def registry_of(source: ToolSource) -> ToolRegistry:
    """The ``ToolRegistry`` of a ``Context`` or the registry itself.

    :raises TypeError: for anything else
    """
    if isinstance(source, ToolRegistry):
        return source
    registry = getattr(source, "tools", None)
    if isinstance(registry, ToolRegistry):
        return registry
    raise TypeError(f"expected a Context or a ToolRegistry, not {type(source).__name__}")


def chosen_schemas(registry: ToolRegistry, names: Iterable[str] | None) -> list[dict[str, Any]]:
    """The schemas (``ToolRegistry.schemas()``) of the tools named in ``names``, in registry
    order (§4.2); ``None``: every tool. What a framework toolkit's ``names=`` selects.

    :raises ValueError: a name is not registered (``no such tools: a, b``)
    """
    chosen = None if names is None else set(names)
    unknown = sorted((chosen or set()) - set(registry.names()))
    if unknown:
        raise ValueError(f"no such tools: {', '.join(unknown)}")
    return [schema for schema in registry.schemas() if chosen is None or schema["name"] in chosen]


def tool_schemas(source: ToolSource) -> list[dict[str, Any]]:
    """``[{name, description, parameters}]`` of ``source`` in registry order (§4.2: by name).

    The dicts are fresh copies: callers may change them without touching the registry.
    """
    if isinstance(source, ToolRegistry) or isinstance(getattr(source, "tools", None), ToolRegistry):
        return registry_of(source).schemas()
    return [json.loads(json.dumps(dict(schema))) for schema in source]


def native_definitions(source: ToolSource, format: str) -> dict[str, dict[str, Any]]:
    """name → the vendor's built-in definition in ``format`` of the tools that declare one
    (``ToolDefinition.native``: ``apply_patch`` for ``openai-responses``, the text editor for
    ``anthropic``); empty for a list of schemas. Fresh copies."""
    if not (isinstance(source, ToolRegistry) or isinstance(getattr(source, "tools", None), ToolRegistry)):
        return {}
    registry = registry_of(source)
    found: dict[str, dict[str, Any]] = {}
    for name in registry.names():
        definition = registry.get(name)
        if definition is not None and definition.native is not None and format in definition.native:
            found[name] = json.loads(json.dumps(dict(definition.native[format])))
    return found


async def run_calls(
    source: ToolSource,
    calls: Sequence[ToolCall],
    *,
    session: Session | None,
    signal: AbortSignal | None = None,
    max_parallel: int = DEFAULT_MAX_PARALLEL,
) -> list[ToolResult]:
    """Run ``calls`` as one assistant message through ``execute_batch`` (§5.5).

    Consecutive ``read`` calls run in parallel, ``write``/``edit`` are barriers; results come
    back in model order. After ``signal`` aborts, unstarted calls get no result, so the list
    can be shorter than ``calls`` (it is always a prefix).

    :param session: the calling agent session (observation owner, cwd for relative paths);
        ``None`` runs the calls with no agent, which can never overwrite or edit a file
    """
    return await registry_of(source).execute_batch(calls, session=session, signal=signal, max_parallel=max_parallel)
