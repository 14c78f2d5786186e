"""HTTP helpers for the MCP tests (imported as ``httpkit``; no tests here).

* ``server_argv`` / ``stop`` — the ``dsh-fs mcp`` command line; ending a server process.
* ``HttpServer`` / ``http_server`` / ``http_server_async`` — a real ``dsh-fs mcp --http
  127.0.0.1:0`` process, its ``Endpoint`` (URL and the tokens it minted into a private
  token file, unless the flags say ``--no-auth`` or name one) and its stderr.
* ``Endpoint`` — a running server's URL and its agents' bearer tokens.
* ``http_session(endpoint, agent)`` — an initialized SDK ``ClientSession`` (one MCP session).
* ``http_client(endpoint, mode=…, agent=…)`` — the SDK's ``Client`` (``"legacy"``, ``"auto"``
  or the stateless ``"2026-07-28"``).
* ``serve_in_process(ctx, root, …)`` — the real HTTP app (``dsh_fs.mcp.build_http_app``) on
  uvicorn at 127.0.0.1 (a free port) in the caller's event loop, for what a subprocess
  cannot show: a provider that stalls on cue, small session limits, the session table.
* ``raw_post`` / ``INITIALIZE`` — one raw JSON-RPC POST (any headers), answer as JSON.

Every client speaks real HTTP to a real socket.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import anyio
import httpx2
from mcp import Client, ClientSession
from mcp.client.streamable_http import streamable_http_client

from dsh_fs.core.context import Context
from dsh_fs.mcp import HttpSessions, SessionLimits, build_http_app, load_token_file
from dsh_fs.mcp.http.connections import ConnectionLimits

__all__ = (
    "Endpoint",
    "HTTP_TIMEOUT",
    "HttpServer",
    "INITIALIZE",
    "InProcess",
    "MODERN_META",
    "http_client",
    "http_server",
    "http_server_async",
    "http_session",
    "raw_post",
    "serve_in_process",
    "server_argv",
    "stop",
    "tool_call",
)

HTTP_TIMEOUT = httpx2.Timeout(30.0, read=300.0)
"""the SDK's own HTTP client timeouts"""
STARTUP_TIMEOUT = 30.0
"""seconds a server may take to start (generous: a loaded CI machine)"""
STOP_TIMEOUT = 10.0

INITIALIZE: Mapping[str, Any] = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
}
"""a handshake-era ``initialize`` request"""

MODERN_META: Mapping[str, Any] = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "0"},
}
"""the ``_meta`` a 2026-07-28 (stateless) request carries in place of a handshake"""


def tool_call(name: str, arguments: dict[str, Any], *, modern: bool = False, id_: int = 2) -> dict[str, Any]:
    """A ``tools/call`` request (``modern``: with the 2026-07-28 ``_meta``)."""
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if modern:
        params["_meta"] = MODERN_META
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": params}


@dataclass(frozen=True)
class Endpoint:
    """A running HTTP server: its URL and the bearer tokens its agents use (none without auth)."""

    url: str
    tokens: tuple[str, ...]

    def headers(self, agent: int = 0) -> dict[str, str]:
        """The ``Authorization`` header of agent ``agent`` (0-based); ``{}`` without auth."""
        return {"Authorization": f"Bearer {self.tokens[agent]}"} if self.tokens else {}


def server_argv(root: str, *flags: str) -> list[str]:
    """The ``dsh-fs mcp`` command line, run with this interpreter."""
    return [sys.executable, "-m", "dsh_fs.cli.main", "mcp", "--root", root, *flags]


def stop(proc: subprocess.Popen[Any], *, already_closing: bool = False) -> None:
    """End ``proc`` (SIGTERM, then SIGKILL after ``STOP_TIMEOUT``) and reap it."""
    if proc.poll() is None and not already_closing:
        proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=STOP_TIMEOUT)


class HttpServer:
    """A ``dsh-fs mcp --http 127.0.0.1:0`` subprocess (umask 022), its announced URL and its
    tokens (minted into a private token file unless the flags say ``--no-auth`` or name one)."""

    def __init__(self, root: str, *flags: str) -> None:
        self.errlog = tempfile.TemporaryFile("w+")
        self.private = tempfile.TemporaryDirectory()
        self.token_file: str | None = None
        if "--token-file" in flags:
            self.token_file = flags[flags.index("--token-file") + 1]
        elif "--no-auth" not in flags:
            self.token_file = os.path.join(self.private.name, "tokens")
            flags = (*flags, "--token-file", self.token_file)
        self.proc = subprocess.Popen(
            server_argv(root, *flags, "--http", "127.0.0.1:0"),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self.errlog,
            umask=0o022,
        )
        self.deadline = time.monotonic() + STARTUP_TIMEOUT

    def log(self) -> str:
        self.errlog.seek(0)
        return self.errlog.read()

    def endpoint(self) -> Endpoint | None:
        """The endpoint once announced, ``None`` while starting.

        :raises AssertionError: if the server died or did not start in time
        """
        log = self.log()
        found = re.search(r" at (http://127\.0\.0\.1:\d+/mcp)\n", log)
        if found:
            tokens = tuple(load_token_file(self.token_file)) if self.token_file is not None else ()
            return Endpoint(found.group(1), tokens)
        if self.proc.poll() is not None or time.monotonic() > self.deadline:
            raise AssertionError(f"dsh-fs mcp --http did not start: {log[-3000:]}")
        return None

    def stop(self) -> None:
        try:
            stop(self.proc)
        finally:
            self.errlog.close()
            self.private.cleanup()


@contextlib.contextmanager
def http_server(root: str, *flags: str) -> Iterator[Endpoint]:
    """Start ``dsh-fs mcp --http 127.0.0.1:0`` (umask 022); yield its endpoint; stop it."""
    server = HttpServer(root, *flags)
    try:
        while (endpoint := server.endpoint()) is None:
            time.sleep(0.02)
        yield endpoint
    finally:
        server.stop()


@contextlib.asynccontextmanager
async def http_server_async(root: str, *flags: str) -> AsyncIterator[Endpoint]:
    """``http_server`` for async code (waits without blocking the event loop)."""
    server = HttpServer(root, *flags)
    try:
        while (endpoint := server.endpoint()) is None:
            await anyio.sleep(0.02)
        yield endpoint
    finally:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(server.stop)


@contextlib.asynccontextmanager
async def http_session(endpoint: Endpoint, agent: int = 0) -> AsyncIterator[ClientSession]:
    """An initialized ``ClientSession`` (its own MCP session) to ``endpoint``, as agent ``agent``."""
    async with httpx2.AsyncClient(headers=endpoint.headers(agent), timeout=HTTP_TIMEOUT) as http:
        async with streamable_http_client(endpoint.url, http_client=http) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=STARTUP_TIMEOUT) as session:
                with anyio.fail_after(STARTUP_TIMEOUT):
                    await session.initialize()
                yield session


@contextlib.asynccontextmanager
async def http_client(endpoint: Endpoint, *, mode: str = "auto", agent: int = 0) -> AsyncIterator[Client]:
    """The SDK's high-level ``Client`` to ``endpoint`` as agent ``agent``; ``mode``: ``"legacy"``
    (the handshake), ``"2026-07-28"`` (stateless requests) or ``"auto"``."""
    async with httpx2.AsyncClient(headers=endpoint.headers(agent), timeout=HTTP_TIMEOUT) as http:
        async with Client(streamable_http_client(endpoint.url, http_client=http), mode=mode) as client:
            yield client


async def raw_post(
    http: httpx2.AsyncClient, url: str, body: Any, headers: Mapping[str, Any] = {}, *, method: str = "POST"
) -> tuple[int, Mapping[str, str], Any]:
    """One request with a JSON body (``None``: no body); ``(status, headers, the JSON answer)``
    where an SSE answer is reduced to its last ``data:`` line and a non-JSON body stays text."""
    base = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    content = None if body is None else json.dumps(body).encode("utf-8")
    response = await http.request(method, url, content=content, headers={**base, **headers})
    text = response.text
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
        text = data[-1] if data else ""
    try:
        answer: Any = json.loads(text) if text else None
    except ValueError:
        answer = text
    return response.status_code, response.headers, answer


@dataclass
class InProcess:
    """A server running in this event loop: its endpoint and its session table."""

    endpoint: Endpoint
    sessions: HttpSessions


@contextlib.asynccontextmanager
async def serve_in_process(
    ctx: Context, root: str, *, tokens: Sequence[str] | None = ("token-of-agent-one-0001", "token-of-agent-two-0002"),
    limits: SessionLimits = SessionLimits(), connections: ConnectionLimits = ConnectionLimits(),
) -> AsyncIterator[InProcess]:
    """Serve ``ctx`` with ``build_http_app`` and ``server_config`` (as ``serve_http`` does) on
    127.0.0.1 (a free port) until the block ends."""
    import uvicorn

    from dsh_fs.mcp.http.app import _bind_tcp, server_config

    sock = _bind_tcp("127.0.0.1", 0)
    netloc = f"127.0.0.1:{sock.getsockname()[1]}"
    app, sessions = build_http_app(ctx, root=root, tokens=tokens, limits=limits, host="127.0.0.1", host_header=netloc)
    config = server_config(app, tokens=tokens, connections=connections)
    config.timeout_graceful_shutdown = 2
    web = uvicorn.Server(config)
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: web.serve(sockets=[sock]))
            with anyio.fail_after(STARTUP_TIMEOUT):
                while not web.started:
                    await anyio.sleep(0.01)
            yield InProcess(Endpoint(f"http://{netloc}/mcp", tuple(tokens or ())), sessions)
            web.should_exit = True
    finally:
        sock.close()
