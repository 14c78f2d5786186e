"""ASGI: the outermost wrapper of ``dsh-fs mcp --http`` — who is asking, before any work.

A request is judged from its headers alone, before one byte of its body is read
(docs/GUARANTEES.md, "No work before authentication"):

1. a path other than ``MCP_PATH`` gets ``404`` — among them the OAuth discovery documents
   (``/.well-known/oauth-protected-resource``, ``/.well-known/oauth-authorization-server``),
   which this server does not have: the MCP authorization specification makes authorization
   optional and starts OAuth only from those documents, so a client finds none and the
   answer says how to authenticate instead;
2. with tokens, a request without one of them gets ``401`` (``WWW-Authenticate: Bearer``,
   RFC 6750 §3) saying how to authenticate (``UNAUTHORIZED``): no body read, no JSON parsed;
3. an authenticated request passes on with ``scope["user"]``/``scope["auth"]`` set as the
   SDK's ``BearerAuthBackend`` sets them, its body limited by the SDK's
   ``RequestBodyLimitMiddleware`` (``413`` from ``Content-Length`` at once, or as soon as
   the streamed body passes the limit; never more than the limit held in memory).

Pure ASGI over the SDK's auth types: no session, tool or transport logic here.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Final

from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend
from mcp.server.auth.provider import TokenVerifier
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE, RequestBodyLimitMiddleware
from starlette.requests import HTTPConnection

__all__ = ("AuthFirst", "MAX_BODY", "NO_OAUTH", "UNAUTHORIZED")

MAX_BODY: Final = DEFAULT_MAX_REQUEST_BODY_SIZE
"""bytes a request body may have (the SDK's own limit, 4 MiB)"""
UNAUTHORIZED: Final = (
    "Authentication required: send the header Authorization: Bearer TOKEN, where TOKEN is one of"
    " the tokens dsh-fs mcp showed on stderr when it started, or a line of its --token-file"
    " (DSH_FS_TOKEN_FILE). This server does not use OAuth."
)
"""the ``error_description`` of a ``401`` (no double quote: it sits in a quoted-string)"""
NO_OAUTH: Final = (
    "Not found. This server does not use OAuth (no authorization server, no metadata):"
    " send the header Authorization: Bearer TOKEN with a token dsh-fs mcp showed on stderr"
    " when it started, or a line of its --token-file (DSH_FS_TOKEN_FILE)."
)
"""the ``error_description`` of a ``404`` for any path but the endpoint"""

_ASGIApp = Callable[[dict[str, Any], Any, Any], Any]


async def _answer(send: Any, status: int, error: str, description: str, *, challenge: bool = False) -> None:
    body = json.dumps({"error": error, "error_description": description}).encode("utf-8")
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode("ascii"))]
    if challenge:
        value = f'Bearer error="{error}", error_description="{description}"'
        headers.append((b"www-authenticate", value.encode("latin-1")))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class AuthFirst:
    """Wraps the server's ASGI app: refuses by headers alone, then limits the body.

    :param app: the application served at ``path`` (it sees only authenticated requests
        when ``verifier`` is given, and bodies of at most ``max_body`` bytes)
    :param verifier: the SDK ``TokenVerifier`` of the bearer tokens; ``None``: no
        authentication (``--no-auth``)
    :param path: the one path served (``MCP_PATH``)
    :param max_body: the body limit in bytes (``MAX_BODY``)
    """

    def __init__(self, app: _ASGIApp, *, verifier: TokenVerifier | None, path: str, max_body: int = MAX_BODY) -> None:
        self._limited = RequestBodyLimitMiddleware(app, max_body)
        self._backend = BearerAuthBackend(verifier) if verifier is not None else None
        self._path = path
        self._app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") != "http":  # lifespan: the application's own
            await self._app(scope, receive, send)
            return
        if scope.get("path") != self._path:
            await _answer(send, 404, "not_found", NO_OAUTH)
            return
        if self._backend is not None:
            found = await self._backend.authenticate(HTTPConnection(scope))
            if found is None:
                await _answer(send, 401, "invalid_token", UNAUTHORIZED, challenge=True)
                return
            scope = {**scope, "auth": found[0], "user": found[1]}
        await self._limited(scope, receive, send)
