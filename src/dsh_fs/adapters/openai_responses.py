"""The OpenAI Responses API: function tool definitions, ``function_call_output`` items, and
running the ``function_call`` items of one response.

Wire shapes (the SDK's objects are accepted as input):

* definition: ``{"type": "function", "name", "description", "parameters", "strict": false}``.
  ``strict`` is sent explicitly because the Responses API turns strict mode *on* when it is
  left out, and strict mode rejects the §4.3 schemas (optional properties, no
  ``additionalProperties: false``).
* call item: ``{"type": "function_call", "call_id", "name", "arguments": JSON string}``; other
  output items (messages, reasoning) are skipped.
* result item: ``{"type": "function_call_output", "call_id", "output": text}``; there is no error
  flag, a failed call's text starts with ``Error: ``.
"""

from __future__ import annotations

from typing import Any

from ..core.session import Session
from ..core.signal import AbortSignal
from ..core.tools import DEFAULT_MAX_PARALLEL, ToolCall, ToolResult
from .calls import ToolSource, field, items_of, parse_arguments, run_calls, tool_schemas

__all__ = ("function_call_output", "responses_tools", "run_responses_function_calls", "to_tool_calls")


def responses_tools(source: ToolSource) -> list[dict[str, Any]]:
    """The ``tools`` array of a Responses request (function tools, strict off), in registry order.

    :param source: a ``Context``, its ``ToolRegistry`` or a list of registry schemas
    """
    return [
        {
            "type": "function",
            "name": s["name"],
            "description": s["description"],
            "parameters": s["parameters"],
            "strict": False,
        }
        for s in tool_schemas(source)
    ]


def function_call_output(call_id: str, result: ToolResult) -> dict[str, Any]:
    """The ``function_call_output`` input item answering one call; ``output`` is the text."""
    return {"type": "function_call_output", "call_id": call_id, "output": result.text}


def to_tool_calls(output: Any) -> list[ToolCall]:
    """Registry ``ToolCall``s from the ``function_call`` items of a response.

    :param output: the ``Response`` (dict or SDK object) or its ``output`` list; items of any
        other type are skipped; arguments are parsed as in §5.5
    """
    return [
        ToolCall(
            name=field(item, "name", ""),
            arguments=parse_arguments(field(item, "arguments")),
            call_id=field(item, "call_id", ""),
        )
        for item in items_of(output, "output")
        if field(item, "type") == "function_call"
    ]


async def run_responses_function_calls(
    source: ToolSource,
    output: Any,
    *,
    session: Session | None,
    signal: AbortSignal | None = None,
    max_parallel: int = DEFAULT_MAX_PARALLEL,
) -> list[dict[str, Any]]:
    """Run the function calls of one response; return ``function_call_output`` items in order.

    Send them as the next request's ``input`` (with ``previous_response_id``, or after the
    response's output items when you keep the conversation yourself).

    :param source: a ``Context`` or its ``ToolRegistry``
    :param output: see :func:`to_tool_calls`
    :param session: the agent session (observation owner, cwd); reuse it for the conversation
    :param signal: once aborted, no further call starts; unstarted calls get no item
    :param max_parallel: cap on reads running at once
    """
    calls = to_tool_calls(output)
    results = await run_calls(source, calls, session=session, signal=signal, max_parallel=max_parallel)
    return [function_call_output(call.call_id, result) for call, result in zip(calls, results)]
