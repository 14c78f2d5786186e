"""``dsh-fs mcp --http HOST:PORT``: streamable HTTP on a loopback address (uvicorn).

* Loopback only: ``127.0.0.0/8``, ``::1`` or ``localhost``; DNS-rebinding protection on
  (``Host``/``Origin`` must name a loopback address).
* One observation owner per MCP session (the ``Mcp-Session-Id`` the SDK assigns at
  ``initialize``): two HTTP clients never share observations. The owner is forgotten when
  the client ends the session (``DELETE``) or the session idles out.
* The 2026-07-28 single-exchange HTTP era has no session, so no owner to scope
  observations to: such requests are answered ``-32022`` (unsupported protocol version)
  naming the handshake versions; the SDK's ``Client(mode="auto")`` then falls back to the
  ``initialize`` handshake by itself.

The endpoint is ``http://HOST:PORT/mcp``. ``serve_http`` reports it through ``announce``
once the server accepts connections (port ``0`` picks a free port).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from typing import Any, Final

import anyio
from mcp.server import ServerRequestContext
from mcp.server.context import CallNext, HandlerResult
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_REQUEST, UNSUPPORTED_PROTOCOL_VERSION
from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

from ..core.context import Context
from ..core.session import Session
from .numbers import JsNumbers
from .owners import SessionOwners
from .server import build_server

__all__ = ("MCP_PATH", "SESSION_IDLE_TIMEOUT", "parse_listen", "serve_http")

MCP_PATH: Final = "/mcp"
SESSION_IDLE_TIMEOUT: Final = 30 * 60
"""seconds an idle MCP session (and its observations) is kept"""

_Scope = dict[str, Any]
_ASGIApp = Callable[[_Scope, Any, Any], Any]


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


def _security(host: str) -> TransportSecuritySettings:
    names = sorted({_netloc(host), "127.0.0.1", "localhost", "[::1]"})
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{name}:*" for name in names],
        allowed_origins=[f"http://{name}:*" for name in names],
    )


def _session_id(rctx: ServerRequestContext[Any, Any]) -> str | None:
    headers = getattr(rctx.request, "headers", None)
    value = headers.get(MCP_SESSION_ID_HEADER) if headers is not None else None
    return value or None


def _owner_lookup(owners: SessionOwners) -> Callable[[ServerRequestContext[Any, Any]], Session]:
    def owner_for(rctx: ServerRequestContext[Any, Any]) -> Session:
        session_id = _session_id(rctx)
        if session_id is None:
            raise MCPError(code=INVALID_REQUEST, message="tool calls need an MCP session (Mcp-Session-Id)")
        return owners.get(session_id)

    return owner_for


async def _refuse_sessionless_era(rctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """Middleware: a 2026-07-28 request (no MCP session, so no owner) → ``-32022``."""
    if rctx.request_id is not None and rctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        raise MCPError(
            code=UNSUPPORTED_PROTOCOL_VERSION,
            message="dsh-fs over HTTP needs an MCP session: connect with the initialize handshake",
            data={"supported": list(HANDSHAKE_PROTOCOL_VERSIONS), "requested": rctx.protocol_version},
        )
    return await call_next(rctx)


def _toucher(owners: SessionOwners) -> Callable[[ServerRequestContext[Any, Any], CallNext], Any]:
    async def touch(rctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        """Middleware: any request on a session keeps its owner alive."""
        session_id = _session_id(rctx)
        try:
            return await call_next(rctx)
        finally:
            if session_id is not None:
                owners.touch(session_id)

    return touch


class _ForgetOnDelete:
    """ASGI wrapper: a successful ``DELETE`` (the client ends its session) drops the owner."""

    def __init__(self, app: _ASGIApp, owners: SessionOwners) -> None:
        self.app = app
        self.owners = owners

    async def __call__(self, scope: _Scope, receive: Any, send: Any) -> None:
        if scope.get("type") != "http" or scope.get("method") != "DELETE":
            await self.app(scope, receive, send)
            return
        wanted = MCP_SESSION_ID_HEADER.lower().encode("latin-1")
        session_id = next((v.decode("latin-1") for k, v in scope.get("headers", []) if k.lower() == wanted), None)
        status: int | None = None

        async def watch(message: dict[str, Any]) -> None:
            nonlocal status
            if message.get("type") == "http.response.start":
                status = message.get("status")
            await send(message)

        await self.app(scope, receive, watch)
        if session_id and status is not None and status < 300:
            self.owners.drop(session_id)


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
        sock.setblocking(False)
    except BaseException:
        sock.close()
        raise
    return sock


async def serve_http(
    ctx: Context,
    *,
    root: str,
    host: str,
    port: int,
    announce: Callable[[str], None] = lambda url: None,
) -> None:
    """Serve ``ctx`` over streamable HTTP at ``http://host:port/mcp`` until SIGINT/SIGTERM.

    :param root: every session's cwd
    :param host: a loopback address (see ``parse_listen``)
    :param port: TCP port; ``0`` picks a free one
    :param announce: called with the endpoint URL once connections are accepted
    :raises ValueError: for a non-loopback ``host``
    :raises OSError: if the address cannot be bound
    """
    import uvicorn

    parse_listen(f"{_netloc(host)}:{port}")  # the loopback check, for direct callers too
    owners = SessionOwners(root, idle_timeout=SESSION_IDLE_TIMEOUT)
    server = build_server(
        ctx, owner_for=_owner_lookup(owners), middleware=[_refuse_sessionless_era, _toucher(owners)]
    )
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        host=host,
        session_idle_timeout=SESSION_IDLE_TIMEOUT,
        transport_security=_security(host),
    )
    sock = _bind(host, port)
    url = f"http://{_netloc(host)}:{sock.getsockname()[1]}{MCP_PATH}"
    config = uvicorn.Config(
        JsNumbers(_ForgetOnDelete(app, owners)),
        log_level="warning",
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=5,
    )
    web = uvicorn.Server(config)

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
