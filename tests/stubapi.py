"""A scripted LLM HTTP API on 127.0.0.1 (imported as ``stubapi``; stdlib only, so the CrewAI
environment can import it too; no tests here).

``StubApi(answer)`` serves every POST on a free loopback port in a daemon thread: ``answer(path,
body)`` gives the JSON reply; every ``(path, body)`` is recorded in ``requests``. ``close()``
stops it. ``chat_completion(tool_call, content)`` is a Chat Completions reply,
``gemini_reply(parts)`` a Gemini ``generateContent`` reply.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ("StubApi", "chat_completion", "gemini_reply")


class StubApi:
    """POST → ``answer(path, body)`` as JSON, at ``url`` (``http://127.0.0.1:PORT``)."""

    def __init__(self, answer: Callable[[str, dict[str, Any]], dict[str, Any]]) -> None:
        self.requests: list[tuple[str, dict[str, Any]]] = []
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                api.requests.append((self.path, body))
                data = json.dumps(answer(self.path, body)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def chat_completion(tool_call: dict[str, Any] | None, content: str | None = None) -> dict[str, Any]:
    """A Chat Completions reply: one tool call (``{id, type, function}``), or the final text."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_call is not None:
        message["tool_calls"] = [tool_call]
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "stub",
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if tool_call else "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


def gemini_reply(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """A Gemini ``generateContent`` reply with one candidate made of ``parts``."""
    return {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
            "modelVersion": "stub"}
