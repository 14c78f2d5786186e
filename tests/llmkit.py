"""Scripted LLM API replies for the adapter tests (imported as ``llmkit``; no tests here).

The real SDK clients (openai, anthropic) run against an in-memory HTTP transport — no network:

* ``mock_client(replies, sent)`` — an ``httpx2.AsyncClient`` that answers each request with the
  next of ``replies`` and records every request body in ``sent``; pass it as the SDK client's
  ``http_client``;
* ``chat_completion(tool_calls, content)``, ``chat_call(id, name, arguments)`` — a Chat
  Completions reply and one of its tool calls;
* ``response_object(output)`` — a Responses API reply;
* ``anthropic_message(content, stop)`` — an Anthropic Messages reply.
"""

from __future__ import annotations

import json
from typing import Any

import httpx2

__all__ = ("anthropic_message", "chat_call", "chat_completion", "mock_client", "response_object")


def mock_client(replies: list[dict[str, Any]], sent: list[dict[str, Any]]) -> httpx2.AsyncClient:
    """An HTTP client whose transport answers from ``replies`` and records request bodies."""

    def handler(request: httpx2.Request) -> httpx2.Response:
        sent.append(json.loads(request.content))
        return httpx2.Response(200, json=replies.pop(0))

    return httpx2.AsyncClient(transport=httpx2.MockTransport(handler))


def chat_completion(tool_calls: list[dict[str, Any]] | None, content: str | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "deepseek-chat",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if tool_calls else "stop"}],
    }


def chat_call(call_id: str, name: str, arguments: Any) -> dict[str, Any]:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": text}}


def response_object(output: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "model": "gpt-test",
        "status": "completed",
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
    }


def anthropic_message(content: list[dict[str, Any]], stop: str = "tool_use") -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
