"""``dsh-fs mcp --http HOST:PORT`` / ``--unix-socket PATH``: streamable HTTP (uvicorn).

* **Where.** A loopback TCP address (``127.0.0.0/8``, ``::1`` or ``localhost``) with
  DNS-rebinding protection (``Host``/``Origin`` must name a loopback address), or a Unix
  socket whose parent directory is private to the serving user (``0700``, created if absent),
  so no other user can even connect.
* **Who.** Every request, session creation included, must carry
  ``Authorization: Bearer <token>`` (``auth.BearerTokens``, compared in constant time; the
  SDK's bearer middleware answers ``401`` otherwise). Each token is one agent (principal);
  a session is bound to the token that opened it. ``tokens=None`` serves without auth (the
  command line's ``--no-auth``, which warns).
* **Owners.** A sessionful client (the ``initialize`` handshake, revisions up to 2025-11-25)
  gets one observation owner per MCP session; a stateless 2026-07-28 request (no handshake,
  no session) is owned by its authenticated principal. Without auth a stateless request has
  no owner, so that era is refused with ``-32022`` naming the handshake versions (the SDK's
  ``Client(mode="auto")`` then falls back to the handshake by itself).
* **Bounds (``sessions.SessionLimits``).** Sessions per token and in total,
  requests in flight per session (or stateless principal), expiry of sessions unused after
  the handshake (60 s) or idle (30 min), observations per owner (``ServeOptions``). Over a
  bound: ``503`` with a JSON-RPC error that says which.
* **Before any work (``gate.AuthFirst``, outermost).** The token is checked from the headers
  before a byte of the body is read; bodies over the SDK's 4 MiB get ``413`` (from
  ``Content-Length`` or as they stream), never held whole.
* **Connections (``connections``).** A request head must arrive within 10 s and its body
  within 30 s; a share of the 256 connections is kept for connections that showed a token,
  one token holds at most 32, and a revoked token's connections are closed.
* **Order.** One owner's calls run in arrival order (``server.schedule_calls``).

The endpoint is ``http://HOST:PORT/mcp`` (``http://localhost/mcp`` over a Unix socket);
``serve_http`` reports it through ``announce`` once connections are accepted (port ``0``
picks a free port).
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import signal
import socket
import stat
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any, Final

import anyio
import uvicorn
from mcp.server import ServerRequestContext
from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.context import CallNext, HandlerResult, ServerMiddleware
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp.types import INTERNAL_ERROR, INVALID_REQUEST, UNSUPPORTED_PROTOCOL_VERSION
from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import Route

from ...core.context import Context
from ...core.session import Session
from .auth import BearerTokens, require_private
from .connections import ConnectionBudget, ConnectionLimits, guarded_protocol, revoke
from .gate import AuthFirst
from ..server import build_server
from .js_numbers import JsNumbers
from .revocation import watch_token_file
from .sessions import HttpSessions, Principal, Refused, SessionLimits

__all__ = (
    "MAX_CONNECTIONS", "MCP_PATH", "build_http_app", "check_private_dir", "parse_listen", "serve_http", "server_config",
)

MCP_PATH: Final = "/mcp"
MAX_CONNECTIONS: Final = ConnectionLimits().total
"""concurrent HTTP connections (``connections.ConnectionLimits``: a share is kept for authenticated ones)"""

_Scope = dict[str, Any]
_ASGIApp = Callable[[_Scope, Any, Any], Any]
_SESSION_HEADER: Final = MCP_SESSION_ID_HEADER.lower().encode("latin-1")
_VERSION_HEADER: Final = MCP_PROTOCOL_VERSION_HEADER.lower().encode("latin-1")


def parse_listen(text: str) -> tuple[str, int]:
    """``127.0.0.1:8765``, ``[::1]:8765``, ``localhost:0`` → ``(host, port)``.

    ``localhost`` becomes ``127.0.0.1`` (one address to bind and to announce).

    :raises ValueError: not ``HOST:PORT``, a port outside 0–65535, or a host that is not a
        loopback address
    """
    host, sep, port_text = text.rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not sep or not host or not port_text.isdigit() or int(port_text) > 65535:
        raise ValueError(f"expected HOST:PORT with a loopback HOST and a port 0-65535, got {text!r}")
    if host.lower() == "localhost":
        return "127.0.0.1", int(port_text)
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise ValueError(f"refusing to listen on {host!r}: only loopback addresses (127.0.0.1, ::1, localhost)")
    return host, int(port_text)


def _netloc(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _security(host: str | None) -> TransportSecuritySettings:
    """DNS-rebinding protection for a loopback TCP address; none for a Unix socket (no
    browser can reach one)."""
    if host is None:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    names = sorted({_netloc(host), "127.0.0.1", "localhost", "[::1]"})
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{name}:*" for name in names],
        allowed_origins=[f"http://{name}:*" for name in names],
    )


# -- who is asking ------------------------------------------------------------------------------


def _header(headers: Sequence[tuple[bytes, bytes]], name: bytes) -> str | None:
    value = next((v for k, v in headers if k.lower() == name), None)
    return value.decode("latin-1") if value else None


def _scope_principal(scope: _Scope) -> Principal:
    user = scope.get("user")
    return user.access_token.client_id if isinstance(user, AuthenticatedUser) else None


def _request_scope(rctx: ServerRequestContext[Any, Any]) -> _Scope:
    return getattr(rctx.request, "scope", None) or {}


def _session_id(rctx: ServerRequestContext[Any, Any]) -> str | None:
    return _header(_request_scope(rctx).get("headers", []), _SESSION_HEADER)


def _owner_lookup(sessions: HttpSessions) -> Callable[[ServerRequestContext[Any, Any]], Session]:
    def owner_for(rctx: ServerRequestContext[Any, Any]) -> Session:
        session_id = _session_id(rctx)
        principal = _scope_principal(_request_scope(rctx))
        if session_id is not None:
            try:
                return sessions.owner(session_id, principal)
            except KeyError:
                raise MCPError(code=INVALID_REQUEST, message="unknown or expired MCP session") from None
        if principal is not None:  # a stateless request of an authenticated agent
            return sessions.stateless_owner(principal)
        raise MCPError(code=INVALID_REQUEST, message="tool calls need an MCP session (Mcp-Session-Id) or a token")

    return owner_for


async def _refuse_sessionless_era(rctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """Middleware (without auth): a 2026-07-28 request has no session and no principal to own
    its observations → ``-32022``."""
    if rctx.request_id is not None and rctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        raise MCPError(
            code=UNSUPPORTED_PROTOCOL_VERSION,
            message="dsh-fs mcp without authentication serves only the initialize handshake: a stateless"
            " request has no session and no token to own its observations",
            data={"supported": list(HANDSHAKE_PROTOCOL_VERSIONS), "requested": rctx.protocol_version},
        )
    return await call_next(rctx)


def _usage_marker(sessions: HttpSessions) -> ServerMiddleware[Any]:
    async def mark_used(rctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        """Middleware: any request after the handshake makes its session "used"."""
        if rctx.request_id is not None and rctx.method != "initialize":
            session_id = _session_id(rctx)
            if session_id is not None:
                sessions.used(session_id)
        return await call_next(rctx)

    return mark_used


# -- sessions at the HTTP level -----------------------------------------------------------------


async def _refuse(reason: Refused, send: Any) -> None:
    body = json.dumps(
        {"jsonrpc": "2.0", "id": None, "error": {"code": INTERNAL_ERROR, "message": str(reason)}}
    ).encode("utf-8")
    await send(
        {
            "type": "http.response.start",
            "status": 503,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def _not_found(send: Any) -> None:
    """``404`` for a session id this principal does not hold: the SDK's own answer (the
    streamable HTTP transport's ``Session not found``), so that every path says the same."""
    body = json.dumps(
        {"jsonrpc": "2.0", "id": None, "error": {"code": INVALID_REQUEST, "message": "Session not found"}}
    ).encode("utf-8")
    await send(
        {
            "type": "http.response.start",
            "status": 404,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


class _SessionGate:
    """ASGI wrapper around the SDK's endpoint (inside authentication): enforces
    ``SessionLimits`` and keeps ``HttpSessions`` in step with the SDK's sessions.

    * no ``Mcp-Session-Id``, a handshake-era ``POST``: may open a session → a place is
      reserved first (``503`` when over a limit) and becomes the session when the answer
      names one;
    * a session's request: counted in flight while it runs (``503`` over the limit); a
      successful ``DELETE`` forgets the session; a JSON-RPC request whose id is already in
      flight in the session is answered at once (``400``, ``-32600`` ``request id <id> is
      already in flight``, the SDK dispatcher's text): the SDK's transport keeps one response
      stream per id, and a second request would take the first one's, leaving one of them
      unanswered forever;
    * a stateless (2026-07-28) request: counted in flight for its principal.
    """

    def __init__(self, app: _ASGIApp, sessions: HttpSessions) -> None:
        self.app = app
        self.sessions = sessions
        self._ids: dict[str, set[str]] = {}
        """the JSON-RPC ids of each session's requests in flight (as the transport keys them)"""

    async def __call__(self, scope: _Scope, receive: Any, send: Any) -> None:
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        headers = scope.get("headers", [])
        principal = _scope_principal(scope)
        session_id = _header(headers, _SESSION_HEADER)
        version = _header(headers, _VERSION_HEADER)
        try:
            if session_id is not None:
                await self._on_session(session_id, principal, scope, receive, send)
            elif version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
                self.sessions.begin_stateless(principal)
                try:
                    await self.app(scope, receive, send)
                finally:
                    self.sessions.end_stateless(principal)
            elif scope.get("method") == "POST":
                await self._opening(principal, scope, receive, send)
            else:
                await self.app(scope, receive, send)
        except Refused as reason:
            await _refuse(reason, send)

    async def _on_session(self, session_id: str, principal: Principal, scope: _Scope, receive: Any, send: Any) -> None:
        counted = self.sessions.begin(session_id, principal)
        if not counted:  # unknown, expired, or another principal's: on every path, whatever the era
            await _not_found(send)
            return
        status: int | None = None

        async def watch(message: dict[str, Any]) -> None:
            nonlocal status
            if message.get("type") == "http.response.start":
                status = message.get("status")
            await send(message)

        key: str | None = None
        try:
            if scope.get("method") == "POST":
                receive, request_id = await _request_id(receive)
                if request_id is not None:
                    key = str(request_id)  # the transport's key: 7 and "7" collide there too
                    taken = self._ids.setdefault(session_id, set())
                    if key in taken:
                        key = None
                        await _id_in_flight(request_id, send)
                        return
                    taken.add(key)
            await self.app(scope, receive, watch)
        finally:
            if key is not None:
                taken = self._ids[session_id]
                taken.discard(key)
                if not taken:
                    del self._ids[session_id]
            self.sessions.end(session_id)
            if scope.get("method") == "DELETE" and status is not None and status < 300:
                self.sessions.drop(session_id)

    async def _opening(self, principal: Principal, scope: _Scope, receive: Any, send: Any) -> None:
        self.sessions.reserve(principal)
        opened = False

        async def watch(message: dict[str, Any]) -> None:
            nonlocal opened
            if message.get("type") == "http.response.start" and message.get("status", 500) < 400:
                new_id = _header(message.get("headers", []), _SESSION_HEADER)
                if new_id is not None and not opened:
                    self.sessions.opened(new_id, principal)
                    opened = True
            await send(message)

        try:
            await self.app(scope, receive, watch)
        finally:
            if not opened:
                self.sessions.unreserve(principal)


async def _request_id(receive: Any) -> tuple[Any, Any]:
    """``(receive, id)``: a ``receive`` that gives the whole body again, and the id of the
    JSON-RPC request it holds (``None`` for a notification, a response, or a body that is not
    one JSON-RPC request; the transport answers those)."""
    messages: list[dict[str, Any]] = []
    while True:  # the body is whole and bounded already (gate.AuthFirst, numbers.JsNumbers)
        message = await receive()
        messages.append(message)
        if message.get("type") != "http.request" or not message.get("more_body", False):
            break
    body = b"".join(m.get("body", b"") for m in messages if m.get("type") == "http.request")
    request_id = None
    try:
        parsed = json.loads(body)
    except ValueError:  # not JSON (UnicodeDecodeError included): the transport says so
        parsed = None
    if isinstance(parsed, dict) and "method" in parsed and isinstance(parsed.get("id"), (int, str)) \
            and not isinstance(parsed.get("id"), bool):
        request_id = parsed["id"]
    queue = list(messages)

    async def replay() -> dict[str, Any]:
        return queue.pop(0) if queue else await receive()

    return replay, request_id


async def _id_in_flight(request_id: Any, send: Any) -> None:
    """``400`` with the JSON-RPC error for a request whose id is in flight in its session."""
    body = json.dumps({"jsonrpc": "2.0", "id": request_id, "error": {
        "code": INVALID_REQUEST, "message": f"request id {request_id!r} is already in flight"}}).encode("utf-8")
    await send({"type": "http.response.start", "status": 400,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


async def _end_session(app: _ASGIApp, session_id: str, principal: Principal, host: str) -> None:
    """End ``session_id`` as its client would: a ``DELETE`` to the SDK's endpoint, made as
    the principal that opened it (the SDK refuses a session to any other credential)."""
    scope: _Scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "DELETE",
        "scheme": "http",
        "path": MCP_PATH,
        "raw_path": MCP_PATH.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": [(b"host", host.encode("latin-1")), (_SESSION_HEADER, session_id.encode("latin-1"))],
        "client": None,
        "server": None,
    }
    if principal is not None:
        scope["user"] = AuthenticatedUser(AccessToken(token="", client_id=principal, scopes=[]))
    delivered = False

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if delivered:
            await anyio.sleep_forever()
        delivered = True
        return {"type": "http.request", "body": b"", "more_body": False}

    async def discard(message: dict[str, Any]) -> None:
        pass

    await app(scope, receive, discard)


# -- the application ----------------------------------------------------------------------------


def build_http_app(
    ctx: Context,
    *,
    root: str,
    tokens: Sequence[str] | BearerTokens | None,
    limits: SessionLimits = SessionLimits(),
    host: str | None = "127.0.0.1",
    host_header: str = "127.0.0.1",
    token_file: str | None = None,
    report: Callable[[str], None] = lambda line: None,
    client_roots: bool = True,
) -> tuple[_ASGIApp, HttpSessions]:
    """The ASGI application serving ``ctx`` at ``MCP_PATH``, and its session table.

    Its lifespan runs the SDK's session manager and closes expired sessions. Outermost,
    ``gate.AuthFirst`` refuses unauthenticated requests and oversized bodies before any
    work; then ``numbers.JsNumbers`` reads the body's numbers as JavaScript does.

    :param root: every owner's cwd
    :param tokens: the bearer tokens (one per agent), or their verifier (to share it with
        ``server_config``); ``None``: no authentication
    :param limits: what sessions may cost; without tokens the per-token bound does not apply
    :param host: the loopback address served (for DNS-rebinding protection); ``None`` for
        a Unix socket (no protection needed)
    :param host_header: a ``Host`` the server accepts (used to end expired sessions)
    :param token_file: where ``tokens`` came from: re-read on change or ``SIGHUP``, a removed
        token's sessions ended (``revocation.watch_token_file``)
    :param report: one line for the operator (stderr) per token-file reload
    :param client_roots: a client's roots narrow its calls (M3); ``False``: every root is
        served to every client (``dsh-fs mcp --ignore-client-roots``, D36)
    """
    verifier = _verifier(tokens)
    sessions = HttpSessions(root, limits=limits)
    middleware: list[ServerMiddleware[Any]] = [_usage_marker(sessions)]
    if tokens is None:
        middleware.insert(0, _refuse_sessionless_era)
    server = build_server(ctx, owner_for=_owner_lookup(sessions), middleware=middleware, client_roots=client_roots)
    manager = StreamableHTTPSessionManager(
        app=server,
        security_settings=_security(host),
        session_idle_timeout=limits.idle_timeout,
        max_sessions=limits.total,
    )
    sdk_endpoint = StreamableHTTPASGIApp(manager)
    endpoint: _ASGIApp = _SessionGate(sdk_endpoint, sessions)
    http_middleware = [Middleware(AuthContextMiddleware)]  # the SDK reads the principal from it
    period = min(5.0, max(0.05, min(limits.unused_timeout, limits.idle_timeout) / 4))

    async def close_expired() -> None:
        while True:
            await anyio.sleep(period)
            for session_id, principal in sessions.expired():
                await _end_session(sdk_endpoint, session_id, principal, host_header)
                sessions.drop(session_id)

    async def end_sessions_of(principals: list[str]) -> None:
        for session_id, principal in sessions.revoke(principals):
            await _end_session(sdk_endpoint, session_id, principal, host_header)
            sessions.drop(session_id)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        async with manager.run(), anyio.create_task_group() as tg:
            tg.start_soon(close_expired)
            if token_file is not None and verifier is not None:
                tg.start_soon(lambda: watch_token_file(token_file, verifier, end_sessions_of, report=report))
            yield
            tg.cancel_scope.cancel()

    app = Starlette(routes=[Route(MCP_PATH, endpoint=endpoint)], middleware=http_middleware, lifespan=lifespan)
    return AuthFirst(JsNumbers(app), verifier=verifier, path=MCP_PATH), sessions


def _verifier(tokens: Sequence[str] | BearerTokens | None) -> BearerTokens | None:
    if tokens is None or isinstance(tokens, BearerTokens):
        return tokens
    return BearerTokens(tokens)


# -- listening ----------------------------------------------------------------------------------


def _listening(family: socket.AddressFamily, address: Any, *, prepare: Callable[[socket.socket], None]) -> socket.socket:
    """A non-blocking socket listening on ``address``; ``prepare(sock)`` runs after ``bind``."""
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        if family != socket.AF_UNIX:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        prepare(sock)
        sock.listen(128)
        sock.setblocking(False)
    except BaseException:
        sock.close()
        raise
    return sock


def _bind_tcp(host: str, port: int) -> socket.socket:
    return _listening(socket.AF_INET6 if ":" in host else socket.AF_INET, (host, port), prepare=lambda sock: None)


def check_private_dir(path: str) -> None:
    """Make sure ``path`` is a directory only this user can enter: create it (mode ``0700``)
    if absent; otherwise it must be a real directory (not a symlink) owned by this user with
    no access for group or others.

    :raises ValueError: it is not such a directory (the message says how to fix it)
    :raises OSError: it cannot be created (e.g. its parent does not exist)
    """
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, 0o700)
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode):
        raise ValueError(f"{path} is not a directory (a symlink is not accepted)")
    require_private(info, path, chmod=f"chmod 700 {path}")


def _bind_unix(path: str) -> socket.socket:
    """A listening Unix socket at ``path``, in a private directory (``check_private_dir``).
    A stale socket left by a dead server is replaced; a live one is not.

    :raises ValueError: the directory is not private, or ``path`` exists and is not a socket
    :raises OSError: ``EADDRINUSE`` when another server listens there; other bind failures
    """
    path = os.path.abspath(path)
    check_private_dir(os.path.dirname(path))
    if os.path.lexists(path):
        if not stat.S_ISSOCK(os.lstat(path).st_mode):
            raise ValueError(f"{path} exists and is not a socket")
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            try:
                probe.connect(path)
            except OSError:
                os.unlink(path)  # stale: nobody listens
            else:
                raise OSError(98, f"another server is listening on {path}")
    return _listening(socket.AF_UNIX, path, prepare=lambda sock: os.chmod(path, 0o600))


def server_config(
    app: _ASGIApp, *, tokens: Sequence[str] | BearerTokens | None, connections: ConnectionLimits = ConnectionLimits()
) -> uvicorn.Config:
    """The uvicorn configuration serving ``app`` (from ``build_http_app``): h11 with the
    connection budget, the per-token share and the request-head and body deadlines of
    ``connections.guarded_protocol``; a token the token file drops has its connections closed
    at once (``connections.revoke``).

    :param tokens: the bearer tokens (a connection is proven by a request carrying one);
        ``None``: every connection that sends a complete request head is proven
    """
    verifier = _verifier(tokens)
    budget: ConnectionBudget[Any] = ConnectionBudget(connections)

    def identify(headers: Sequence[tuple[bytes, bytes]]) -> tuple[bool, str | None]:
        if verifier is None:
            return True, None
        principal = verifier.principal_of(headers)
        return principal is not None, principal

    if verifier is not None:
        verifier.on_revoked(lambda principals: revoke(budget, principals))
    return uvicorn.Config(
        app,
        http=guarded_protocol(budget, identify),
        ws="none",
        log_level="warning",
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=5,
        timeout_keep_alive=connections.keep_alive,
        limit_concurrency=None,
    )


def _reopen_event_streams() -> None:
    """Let event streams run again after a server of this process stopped: sse-starlette's
    patch of uvicorn's ``handle_exit`` sets its process-global ``AppStatus.should_exit``, which
    nothing resets, so every SSE answer of a later ``serve_http`` in the same process would end
    before its first event (sse-starlette documents setting the flag as the application's job)."""
    from sse_starlette.sse import AppStatus

    AppStatus.should_exit = False


class _Uvicorn(uvicorn.Server):
    """uvicorn's server, except that SIGINT/SIGTERM end ``serve`` normally after the graceful
    shutdown (uvicorn raises the signal again, which kills the process before any cleanup:
    the Unix socket would be left behind, a remote provider's client not closed)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = {sig: signal.signal(sig, self.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


async def serve_http(
    ctx: Context,
    *,
    root: str,
    tokens: Sequence[str] | None,
    host: str = "127.0.0.1",
    port: int = 0,
    unix_socket: str | None = None,
    limits: SessionLimits = SessionLimits(),
    connections: ConnectionLimits = ConnectionLimits(),
    announce: Callable[[str], None] = lambda url: None,
    token_file: str | None = None,
    report: Callable[[str], None] = lambda line: None,
    client_roots: bool = True,
) -> None:
    """Serve ``ctx`` over streamable HTTP until SIGINT/SIGTERM (then return normally).

    :param root: every owner's cwd
    :param tokens: bearer tokens, one per agent (``auth.mint_tokens``/``load_token_file``);
        ``None`` serves without authentication
    :param host: a loopback address (see ``parse_listen``); ignored with ``unix_socket``
    :param port: TCP port; ``0`` picks a free one
    :param unix_socket: serve on this Unix socket path instead of TCP (removed on exit)
    :param limits: what sessions may cost
    :param connections: what connections may cost (``connections.ConnectionLimits``)
    :param announce: called with the endpoint URL once connections are accepted
        (``http://localhost/mcp`` over a Unix socket)
    :param token_file: the file ``tokens`` came from, re-read on change or ``SIGHUP``
        (a removed token is revoked and its sessions ended)
    :param report: one line for the operator (stderr) per token-file reload
    :param client_roots: as ``build_http_app``'s
    :raises ValueError: for a non-loopback ``host`` or an unsafe socket directory
    :raises OSError: if the address cannot be bound
    """
    verifier = _verifier(tokens)  # one verifier: the gate, the connection budget and the reloads share it
    if unix_socket is None:
        parse_listen(f"{_netloc(host)}:{port}")  # the loopback check, for direct callers too
        sock = _bind_tcp(host, port)
        netloc = f"{_netloc(host)}:{sock.getsockname()[1]}"
        url = f"http://{netloc}{MCP_PATH}"
        app, _ = build_http_app(ctx, root=root, tokens=verifier, limits=limits, host=host, host_header=netloc,
                                token_file=token_file, report=report, client_roots=client_roots)
    else:
        sock = _bind_unix(unix_socket)
        bound = os.stat(unix_socket).st_ino
        url = f"http://localhost{MCP_PATH}"
        app, _ = build_http_app(ctx, root=root, tokens=verifier, limits=limits, host=None, host_header="localhost",
                                token_file=token_file, report=report, client_roots=client_roots)
    web = _Uvicorn(server_config(app, tokens=verifier, connections=connections))

    async def announce_when_started() -> None:
        while not web.started:
            await anyio.sleep(0.01)
        announce(url)

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(announce_when_started)
            await web.serve(sockets=[sock])
            tg.cancel_scope.cancel()
    finally:
        sock.close()
        _reopen_event_streams()
        if unix_socket is not None:
            with contextlib.suppress(OSError):
                if os.lstat(unix_socket).st_ino == bound:  # still ours
                    os.unlink(unix_socket)
