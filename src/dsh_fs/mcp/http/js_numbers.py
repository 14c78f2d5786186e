"""ASGI wrapper: JSON-RPC request bodies read with JavaScript's number semantics
(docs/JSON-NUMBERS.md).

The SDK's streamable HTTP transport parses a POST body with pydantic's JSON parser, which
reads ``-0`` as the integer 0 and keeps every digit of a huge integer; the reference (and our
stdio server, ``server.parse_line``) reads them as ``JSON.parse`` does. ``JsNumbers``
rewrites the body with ``core.jsonvalue.js_numbers`` before the transport sees it; a body
without such a literal passes untouched. Pure ASGI: no SDK import.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...core.jsonvalue import js_numbers

__all__ = ("JsNumbers",)

_ASGIApp = Callable[[dict[str, Any], Any, Any], Any]


class JsNumbers:
    """Wraps an ASGI app; POST bodies reach it with ``-0`` and huge integers as JavaScript reads them."""

    def __init__(self, app: _ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        while True:
            message = await receive()
            if message.get("type") != "http.request":  # a disconnect: pass it on as is
                await self.app(scope, _replay([message]), send)
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            rewritten = body
        else:
            fixed = js_numbers(text)
            rewritten = body if fixed is text else fixed.encode("utf-8")
        headers = [(k, v) for k, v in scope.get("headers", []) if k.lower() != b"content-length"]
        headers.append((b"content-length", str(len(rewritten)).encode("ascii")))
        await self.app({**scope, "headers": headers}, _replay([{"type": "http.request", "body": rewritten}],
                                                              receive), send)


def _replay(messages: list[dict[str, Any]], then: Any = None) -> Callable[[], Any]:
    """An ASGI ``receive`` that gives ``messages`` first, then defers to ``then``."""
    queue = list(messages)

    async def receive() -> dict[str, Any]:
        if queue:
            return queue.pop(0)
        if then is not None:
            return await then()
        return {"type": "http.disconnect"}

    return receive
