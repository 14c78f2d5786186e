"""``dsh_fs.mcp.http.gate.AuthFirst`` as ASGI, without a server: a path other than the endpoint is
``404`` with the no-OAuth text; without a token of the verifier a request is ``401`` with the
Bearer challenge, its body never read; an authenticated request reaches the application with
the SDK's ``user``/``auth`` in its scope, its body bounded (``413``); lifespan events pass.

Through a real server: ``tests/e2e/mcp/test_mcp_http_auth_help.py``, ``tests/robustness/mcp/test_http_*.py``.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from starlette.authentication import AuthCredentials

from dsh_fs.mcp import BearerTokens
from dsh_fs.mcp.http.gate import NO_OAUTH, UNAUTHORIZED, AuthFirst

TOKEN = "token-of-agent-one-0001"


class App:
    """The wrapped application: records the scopes it sees and reads the whole body."""

    def __init__(self) -> None:
        self.scopes: list[dict[str, Any]] = []
        self.body = b""

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        self.scopes.append(scope)
        if scope["type"] != "http":
            return
        while True:
            message = await receive()
            self.body += message.get("body", b"")
            if not message.get("more_body"):
                break
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})


def _request(gate: AuthFirst, path: str, headers: list[tuple[bytes, bytes]], body: bytes = b"") -> tuple[list[dict[str, Any]], int]:
    """(the messages sent, how many times the body was asked for)"""
    sent: list[dict[str, Any]] = []
    asked = 0

    async def receive() -> dict[str, Any]:
        nonlocal asked
        asked += 1
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": path, "headers": headers, "query_string": b""}
    anyio.run(gate, scope, receive, send)
    return sent, asked


def test_another_path_is_not_found_without_a_challenge() -> None:
    app = App()
    sent, asked = _request(AuthFirst(app, verifier=BearerTokens([TOKEN]), path="/mcp"),
                           "/.well-known/oauth-protected-resource", [(b"authorization", f"Bearer {TOKEN}".encode())])
    assert sent[0]["status"] == 404 and dict(sent[0]["headers"])[b"content-type"] == b"application/json"
    assert b"www-authenticate" not in dict(sent[0]["headers"])
    assert json.loads(sent[1]["body"]) == {"error": "not_found", "error_description": NO_OAUTH}
    assert (app.scopes, asked) == ([], 0)


def test_no_token_is_a_bearer_challenge_and_the_body_is_never_read() -> None:
    app = App()
    for headers in ([], [(b"authorization", b"Bearer token-of-nobody-000000")]):
        sent, asked = _request(AuthFirst(app, verifier=BearerTokens([TOKEN]), path="/mcp"), "/mcp", headers, b"{}")
        assert sent[0]["status"] == 401
        assert dict(sent[0]["headers"])[b"www-authenticate"] == (
            f'Bearer error="invalid_token", error_description="{UNAUTHORIZED}"'.encode("latin-1"))
        assert json.loads(sent[1]["body"]) == {"error": "invalid_token", "error_description": UNAUTHORIZED}
        assert (app.scopes, asked) == ([], 0)


def test_an_authenticated_request_reaches_the_app_as_its_principal() -> None:
    app = App()
    sent, _ = _request(AuthFirst(app, verifier=BearerTokens([TOKEN]), path="/mcp"), "/mcp",
                       [(b"authorization", f"Bearer {TOKEN}".encode())], b'{"a": 1}')
    assert [m.get("status") for m in sent] == [200, None] and app.body == b'{"a": 1}'
    (scope,) = app.scopes
    assert isinstance(scope["user"], AuthenticatedUser) and scope["user"].access_token.client_id == "agent-1"
    assert isinstance(scope["auth"], AuthCredentials)


def test_without_a_verifier_every_request_passes_and_bodies_are_still_bounded() -> None:
    app = App()
    gate = AuthFirst(app, verifier=None, path="/mcp", max_body=8)
    sent, _ = _request(gate, "/mcp", [], b"12345678")
    assert sent[0]["status"] == 200 and "user" not in app.scopes[0]
    sent, _ = _request(gate, "/mcp", [(b"content-length", b"9")], b"123456789")
    assert sent[0]["status"] == 413 and len(app.scopes) == 1


def test_lifespan_events_reach_the_app() -> None:
    app = App()
    anyio.run(AuthFirst(app, verifier=BearerTokens([TOKEN]), path="/mcp"), {"type": "lifespan"}, None, None)
    assert app.scopes == [{"type": "lifespan"}]
