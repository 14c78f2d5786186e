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
  flag, a failed call's text starts with ``Error: ``. A result that carries an image
  (``read_image``, docs/IMAGES.md) has an ``output`` list instead: ``[{"type": "input_text",
  "text"}, {"type": "input_image", "image_url": "data:<type>;base64,…"}]`` (the SDK's
  ``ResponseFunctionCallOutputItemListParam``).
* the built-in ``apply_patch`` tool (docs/design/EDITING-FACES-DESIGN.md §1.4): when the
  ``apply_patch`` face is loaded (``ToolPatch``), ``responses_tools`` sends
  ``{"type": "apply_patch"}`` instead of its function form; the model then emits ``{"type": "apply_patch_call", "call_id", "operation":
  {"type": "create_file" | "update_file" | "delete_file", "path", "diff"}}`` items, answered with
  ``{"type": "apply_patch_call_output", "call_id", "status": "completed" | "failed", "output"}``
  (``patch_operations``: the safe executor, the Agents SDK editors' texts).
"""

from __future__ import annotations

import uuid
from typing import Any

from ..core.context import Context
from ..core.session import Session, ToolExecution
from ..core.signal import AbortSignal
from ..core.tools import DEFAULT_MAX_PARALLEL, ToolCall, ToolResult
from .calls import ToolSource, data_url, field, items_of, native_definitions, parse_arguments, run_calls, tool_schemas
from .patch_operations import OperationResult, apply_operations

__all__ = (
    "apply_patch_call_output",
    "function_call_output",
    "responses_tools",
    "run_apply_patch_call",
    "run_responses_function_calls",
    "to_tool_calls",
)


def responses_tools(source: ToolSource) -> list[dict[str, Any]]:
    """The ``tools`` array of a Responses request (function tools, strict off; the built-in
    ``{"type": "apply_patch"}`` for the ``apply_patch`` face), in registry order.

    :param source: a ``Context``, its ``ToolRegistry`` or a list of registry schemas
    """
    native = native_definitions(source, "openai-responses")
    return [
        native.get(s["name"])
        or {
            "type": "function",
            "name": s["name"],
            "description": s["description"],
            "parameters": s["parameters"],
            "strict": False,
        }
        for s in tool_schemas(source)
    ]


def function_call_output(call_id: str, result: ToolResult) -> dict[str, Any]:
    """The ``function_call_output`` input item answering one call; ``output`` is the text, or
    for a result with image blocks the list of its ``input_text`` / ``input_image`` parts."""
    if not result.images:
        return {"type": "function_call_output", "call_id": call_id, "output": result.text}
    parts: list[dict[str, Any]] = []
    for block in result.content:
        if block.get("type") == "image":
            parts.append({"type": "input_image", "image_url": data_url(block)})
        elif block.get("type") == "text":
            parts.append({"type": "input_text", "text": block["text"]})
    return {"type": "function_call_output", "call_id": call_id, "output": parts}


def apply_patch_call_output(call_id: str, result: OperationResult) -> dict[str, Any]:
    """The ``apply_patch_call_output`` input item answering one ``apply_patch_call``."""
    return {"type": "apply_patch_call_output", "call_id": call_id, "status": result.status, "output": result.output}


async def run_apply_patch_call(ctx: Context, item: Any, *, session: Session | None,
                               signal: AbortSignal | None = None) -> dict[str, Any]:
    """Apply one ``apply_patch_call`` item (its ``operation``, or an ``operations`` list as the
    Agents SDK accepts, applied as one patch) and return its ``apply_patch_call_output``.

    :param ctx: the ``Context`` (the executor needs its provider and policy events)
    :param session: the agent session (observation owner, cwd)
    """
    call_id = field(item, "call_id", "")
    operations = field(item, "operations")
    if not isinstance(operations, list):
        operation = field(item, "operation")
        operations = [operation] if operation is not None else [None]
    execution = ToolExecution(session=session, signal=signal, call_id=call_id or uuid.uuid4().hex)
    return apply_patch_call_output(call_id, await apply_operations(ctx, operations, execution))


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
    """Run the function calls (and ``apply_patch_call`` items) of one response; return their
    ``function_call_output`` / ``apply_patch_call_output`` items in model order.

    Send them as the next request's ``input`` (with ``previous_response_id``, or after the
    response's output items when you keep the conversation yourself). An ``apply_patch_call``
    runs alone, after every call before it (a barrier, as ``write``/``edit`` are).

    :param source: a ``Context`` or its ``ToolRegistry`` (``apply_patch_call`` items need the
        ``Context``)
    :param output: see :func:`to_tool_calls`
    :param session: the agent session (observation owner, cwd); reuse it for the conversation
    :param signal: once aborted, no further call starts; unstarted calls get no item
    :param max_parallel: cap on reads running at once
    :raises TypeError: an ``apply_patch_call`` with a bare ``ToolRegistry`` as ``source``
    """
    answered: list[dict[str, Any]] = []
    pending: list[ToolCall] = []

    async def flush() -> bool:
        """Run the pending function calls; ``False`` when the signal stopped some of them."""
        calls = list(pending)
        pending.clear()
        results = await run_calls(source, calls, session=session, signal=signal, max_parallel=max_parallel)
        answered.extend(function_call_output(call.call_id, result) for call, result in zip(calls, results))
        return len(results) == len(calls)

    for item in items_of(output, "output"):
        kind = field(item, "type")
        if kind == "function_call":
            pending.extend(to_tool_calls([item]))
        elif kind == "apply_patch_call":
            if not isinstance(source, Context):
                raise TypeError("apply_patch_call items need the Context, not only its ToolRegistry")
            if not await flush() or (signal is not None and signal.aborted):
                return answered
            answered.append(await run_apply_patch_call(source, item, session=session, signal=signal))
    await flush()
    return answered
