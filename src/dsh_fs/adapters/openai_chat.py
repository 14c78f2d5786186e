"""OpenAI-compatible Chat Completions (the DeepSeek API speaks it): tool definitions, tool
messages, and running one assistant message's ``tool_calls``.

Wire shapes (no SDK needed; the SDK's objects are accepted as input):

* definition: ``{"type": "function", "function": {"name", "description", "parameters"}}``,
  ``parameters`` exactly the §4.3 schema. ``strict`` is left out (off): the schemas have
  optional properties, which strict mode does not allow.
* tool call: ``{"id", "type": "function", "function": {"name", "arguments": JSON string}}``
* result: ``{"role": "tool", "tool_call_id", "content": text}``. Chat Completions has no error
  flag; a failed call's text starts with ``Error: `` (§5.2), which is what the model sees.
* images (``read_image``, docs/IMAGES.md; DEVIATIONS I4): a tool message holds text only, so a
  result that carries an image answers with its text envelope in the tool message, and
  ``run_chat_tool_calls`` adds one ``{"role": "user", "content": [{"type": "text", "text":
  envelope}, {"type": "image_url", "image_url": {"url": "data:…"}}, …]}`` message after all the
  tool messages (tool messages must directly follow their assistant message) — as the
  reference forwards a nested call's image result as a user message (its code mode).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.session import Session
from ..core.signal import AbortSignal
from ..core.tools import DEFAULT_MAX_PARALLEL, ToolCall, ToolResult
from .calls import ToolSource, data_url, field, items_of, parse_arguments, run_calls, tool_schemas

__all__ = ("chat_image_message", "chat_tool_message", "chat_tools", "run_chat_tool_calls", "to_tool_calls")


def chat_tools(source: ToolSource) -> list[dict[str, Any]]:
    """The ``tools`` array of a Chat Completions request, in registry order.

    :param source: a ``Context``, its ``ToolRegistry`` or a list of registry schemas
    """
    return [
        {
            "type": "function",
            "function": {"name": s["name"], "description": s["description"], "parameters": s["parameters"]},
        }
        for s in tool_schemas(source)
    ]


def chat_tool_message(tool_call_id: str, result: ToolResult) -> dict[str, Any]:
    """The ``{"role": "tool", "tool_call_id", "content"}`` message answering one call; ``content``
    is the result's text, byte for byte."""
    return {"role": "tool", "tool_call_id": tool_call_id, "content": result.text}


def to_tool_calls(tool_calls: Any) -> list[ToolCall]:
    """Registry ``ToolCall``s from the ``tool_calls`` of one assistant message.

    :param tool_calls: a list of tool calls (dicts or SDK objects), or the assistant message
        itself (dict or ``ChatCompletionMessage``); arguments are parsed as in §5.5
    """
    calls = []
    for call in items_of(tool_calls, "tool_calls"):
        function = field(call, "function")
        calls.append(
            ToolCall(
                name=field(function, "name", "") if function is not None else "",
                arguments=parse_arguments(field(function, "arguments") if function is not None else None),
                call_id=field(call, "id", ""),
            )
        )
    return calls


async def run_chat_tool_calls(
    source: ToolSource,
    tool_calls: Any,
    *,
    session: Session | None,
    signal: AbortSignal | None = None,
    max_parallel: int = DEFAULT_MAX_PARALLEL,
) -> list[dict[str, Any]]:
    """Run the ``tool_calls`` of one assistant message; return the tool messages in model order,
    then (only when a result carries an image) the ``chat_image_message`` of those results.

    Append the returned messages to the conversation after the assistant message.

    :param source: a ``Context`` or its ``ToolRegistry``
    :param tool_calls: see :func:`to_tool_calls`
    :param session: the agent session (observation owner; relative paths resolve against its
        cwd). Reuse one ``Session`` object for the whole conversation.
    :param signal: once aborted, no further call starts; unstarted calls get no message
        (the list is then a prefix), and the caller must answer them itself
    :param max_parallel: cap on reads running at once
    """
    calls = to_tool_calls(tool_calls)
    results = await run_calls(source, calls, session=session, signal=signal, max_parallel=max_parallel)
    return _messages(calls, results)


def chat_image_message(results: Sequence[ToolResult]) -> dict[str, Any] | None:
    """The user message carrying the images of ``results`` (each imaged result's text
    envelope, then its ``image_url`` parts, in order); ``None`` when no result has an image."""
    parts: list[dict[str, Any]] = []
    for result in results:
        if not result.images:
            continue
        for block in result.content:
            if block.get("type") == "image":
                parts.append({"type": "image_url", "image_url": {"url": data_url(block)}})
            elif block.get("type") == "text":
                parts.append({"type": "text", "text": block["text"]})
    return {"role": "user", "content": parts} if parts else None


def _messages(calls: Sequence[ToolCall], results: Sequence[ToolResult]) -> list[dict[str, Any]]:
    messages = [chat_tool_message(call.call_id, result) for call, result in zip(calls, results)]
    images = chat_image_message(results)
    return messages if images is None else [*messages, images]
