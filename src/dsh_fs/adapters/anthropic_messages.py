"""Anthropic Messages: tool definitions, ``tool_result`` blocks with the native ``is_error``
flag, and running the ``tool_use`` blocks of one assistant message.

Wire shapes (the SDK's objects are accepted as input):

* definition: ``{"name", "description", "input_schema"}``, ``input_schema`` exactly §4.3; a tool
  with an Anthropic built-in definition (``ToolDefinition.native["anthropic"]``: the text
  editor, ``{"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"}``) is sent
  as that definition, so the model uses the editor it was trained on.
* call block: ``{"type": "tool_use", "id", "name", "input": object}``; ``input`` is already
  parsed by the API and goes to the registry unchanged. Other blocks (text, thinking) are
  skipped.
* result block: ``{"type": "tool_result", "tool_use_id", "content": text, "is_error": bool}``.
  ``content`` is the result's text (a string), so the model sees exactly what the other
  adapters show; ``is_error`` mirrors ``ToolResult.is_error``. A result that carries an image
  (``read_image``, docs/IMAGES.md) has a list instead: ``[{"type": "text", "text"}, {"type":
  "image", "source": {"type": "base64", "media_type", "data"}}]`` — Anthropic documents text
  and image blocks as a ``tool_result``'s content.
"""

from __future__ import annotations

from typing import Any

from ..core.session import Session
from ..core.signal import AbortSignal
from ..core.tools import DEFAULT_MAX_PARALLEL, ToolCall, ToolResult
from .calls import ToolSource, field, items_of, native_definitions, parse_arguments, run_calls, tool_schemas

__all__ = ("anthropic_content", "anthropic_tools", "run_anthropic_tool_uses", "to_tool_calls", "tool_result_block")


def anthropic_tools(source: ToolSource) -> list[dict[str, Any]]:
    """The ``tools`` array of a Messages request, in registry order (built-in definitions
    for the tools that have one).

    :param source: a ``Context``, its ``ToolRegistry`` or a list of registry schemas
    """
    native = native_definitions(source, "anthropic")
    return [
        native.get(s["name"]) or {"name": s["name"], "description": s["description"], "input_schema": s["parameters"]}
        for s in tool_schemas(source)
    ]


def tool_result_block(tool_use_id: str, result: ToolResult) -> dict[str, Any]:
    """The ``tool_result`` content block answering one ``tool_use`` block: ``content`` is the
    text, or, for a result with image blocks, the text and image blocks in order."""
    if not result.images:
        return {"type": "tool_result", "tool_use_id": tool_use_id, "content": result.text, "is_error": result.is_error}
    return {"type": "tool_result", "tool_use_id": tool_use_id, "content": anthropic_content(result),
            "is_error": result.is_error}


def anthropic_content(result: ToolResult) -> list[dict[str, Any]]:
    """A result's blocks as Anthropic content blocks: text → ``{"type": "text", "text"}``,
    image → ``{"type": "image", "source": {"type": "base64", "media_type", "data"}}``."""
    blocks: list[dict[str, Any]] = []
    for block in result.content:
        if block.get("type") == "image":
            source = {"type": "base64", "media_type": block["mimeType"], "data": block["data"]}
            blocks.append({"type": "image", "source": source})
        elif block.get("type") == "text":
            blocks.append({"type": "text", "text": block["text"]})
    return blocks


def to_tool_calls(content: Any) -> list[ToolCall]:
    """Registry ``ToolCall``s from the ``tool_use`` blocks of an assistant message.

    :param content: the ``Message`` (dict or SDK object) or its ``content`` list
    """
    return [
        ToolCall(name=field(block, "name", ""), arguments=parse_arguments(field(block, "input")), call_id=field(block, "id", ""))
        for block in items_of(content, "content")
        if field(block, "type") == "tool_use"
    ]


async def run_anthropic_tool_uses(
    source: ToolSource,
    content: Any,
    *,
    session: Session | None,
    signal: AbortSignal | None = None,
    max_parallel: int = DEFAULT_MAX_PARALLEL,
) -> list[dict[str, Any]]:
    """Run the ``tool_use`` blocks of one assistant message; return ``tool_result`` blocks in order.

    Send them as the content of the next ``user`` message (tool results first).

    :param source: a ``Context`` or its ``ToolRegistry``
    :param content: see :func:`to_tool_calls`
    :param session: the agent session (observation owner, cwd); reuse it for the conversation
    :param signal: once aborted, no further call starts; unstarted calls get no block
    :param max_parallel: cap on reads running at once
    """
    calls = to_tool_calls(content)
    results = await run_calls(source, calls, session=session, signal=signal, max_parallel=max_parallel)
    return [tool_result_block(call.call_id, result) for call, result in zip(calls, results)]
