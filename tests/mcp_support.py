"""Helpers for the MCP end-to-end tests (kept out of the ``test_*`` glob).

Every server here is the real ``dsh-fs mcp`` command in a subprocess, driven by the official
SDK's ``ClientSession``: over stdio (``stdio_client``) or streamable HTTP (the HTTP helpers
live in ``tests/httpkit.py`` and are re-exported here). Servers are always terminated.

Also: raw ``tools/call`` (any JSON value as ``arguments``, raw JSON result), raw JSON-RPC
over a stdio pipe (to see the wire bytes), and a conformance scenario runner that sends a
scenario's calls through one HTTP server, one MCP session per actor.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Mapping
from typing import Any

import anyio
import mcp.types as types
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from pydantic import TypeAdapter

from dsh_fs.cli.replay import build_workspace, external_step, scenario_args, scrub_workspace, snapshot
from httpkit import (
    STARTUP_TIMEOUT,
    Endpoint,
    http_client,
    http_server,
    http_server_async,
    http_session,
    server_argv,
    stop,
)

__all__ = (
    "CONFIG_FLAGS",
    "Endpoint",
    "RawStdio",
    "Unsupported",
    "call_raw",
    "unexpressible",
    "http_client",
    "http_server",
    "http_server_async",
    "http_session",
    "list_raw",
    "row",
    "run_scenario_over_mcp",
    "scenario_flags",
    "server_argv",
    "stdio_session",
)

CONFIG_FLAGS = {
    "readLimit": "--read-limit",
    "readMaxLineLength": "--read-max-line-length",
    "readMaxBytes": "--read-max-bytes",
    "readStreamMinSize": "--read-stream-min-size",
}
"""scenario config key (the reference's name) → ``dsh-fs mcp`` flag"""

_RAW = TypeAdapter(dict[str, Any])


class Unsupported(Exception):
    """The scenario cannot be expressed over MCP (the message says why)."""


class _RawRequest(types.Request[dict[str, Any] | None, str]):
    """A request whose params go on the wire as given (no client-side validation)."""


# --- calls -------------------------------------------------------------------------------


async def call_raw(session: ClientSession, name: str, arguments: Any) -> dict[str, Any]:
    """``tools/call`` with ``arguments`` exactly as given (any JSON value); the raw result."""
    request = _RawRequest(method="tools/call", params={"name": name, "arguments": arguments})
    return await session.send_request(request, _RAW)


async def list_raw(session: ClientSession) -> dict[str, Any]:
    """The raw ``tools/list`` result."""
    return await session.send_request(_RawRequest(method="tools/list", params=None), _RAW)


def row(raw: Mapping[str, Any]) -> dict[str, Any]:
    """A wire ``CallToolResult`` as a replay result row: ``is_error``, ``text`` (the text
    blocks, concatenated), ``code``/``error_name`` and ``meta`` (from ``_meta.dsh_fs``)."""
    ours = dict((raw.get("_meta") or {}).get("dsh_fs") or {})
    error = ours.pop("error", None)
    return {
        "is_error": raw.get("isError", False),
        "text": "".join(b.get("text", "") for b in raw["content"] if b.get("type") == "text"),
        "code": error["code"] if error else None,
        "error_name": error["name"] if error else None,
        "meta": ours or None,
    }


# --- stdio -------------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def stdio_session(root: str, *flags: str, modern: bool = False) -> AsyncIterator[ClientSession]:
    """An initialized ``ClientSession`` to a fresh ``dsh-fs mcp`` over stdio (one process,
    stopped by ``stdio_client`` on exit). The server's stderr is echoed if anything fails.

    :param modern: open the 2026-07-28 era (``server/discover``, per-request envelopes)
        instead of the ``initialize`` handshake
    """
    params = StdioServerParameters(command=sys.executable, args=server_argv(root, *flags)[1:], cwd=root)
    with tempfile.TemporaryFile("w+") as errlog:
        try:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write, read_timeout_seconds=STARTUP_TIMEOUT) as session:
                    with anyio.fail_after(STARTUP_TIMEOUT):
                        if modern:
                            await session.discover()
                            assert session.protocol_version == "2026-07-28", session.protocol_version
                        else:
                            await session.initialize()
                    yield session
        except BaseException:
            errlog.seek(0)
            sys.stderr.write(errlog.read()[-3000:])
            raise


class RawStdio:
    """JSON-RPC lines over a ``dsh-fs mcp`` stdio pipe, to inspect the exact wire JSON."""

    def __init__(self, root: str, *flags: str) -> None:
        self._errlog = tempfile.TemporaryFile("w+")
        self.proc = subprocess.Popen(
            server_argv(root, *flags), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._errlog
        )
        self._next_id = 0

    def send(self, message: Mapping[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode("utf-8") + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: Any = None, *, params_json: str | None = None) -> dict[str, Any]:
        """Send one request and return the raw response message (the next line).

        :param params_json: the params as raw JSON text (literals JSON itself would not write)
        """
        self._next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        if params is not None:
            message["params"] = params
        if params_json is None:
            self.send(message)
        else:
            assert self.proc.stdin is not None
            self.proc.stdin.write(json.dumps(message)[:-1].encode() + f', "params": {params_json}}}\n'.encode())
            self.proc.stdin.flush()
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()  # the pytest-timeout bounds a hung server
        assert line, self.stderr()
        response = json.loads(line)
        assert response.get("id") == self._next_id, response
        return response

    def initialize(self) -> dict[str, Any]:
        response = self.request(
            "initialize",
            {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return response

    def stderr(self) -> str:
        self._errlog.seek(0)
        return self._errlog.read()

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        stop(self.proc, already_closing=True)
        assert self.proc.stdout is not None
        self.proc.stdout.close()
        self._errlog.close()

    def __enter__(self) -> "RawStdio":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# --- HTTP --------------------------------------------------------------------------------


# --- conformance scenarios over MCP ------------------------------------------------------


def scenario_flags(scenario: Mapping[str, Any]) -> list[str]:
    """``dsh-fs mcp`` flags for a scenario's ``profile``, ``policy`` and ``config``.

    :raises Unsupported: for a config key the command has no flag for
    """
    flags = ["--profile", scenario.get("profile") or "default"]
    tools = ["read", "write", "edit"]  # the scenario format's deployment: the file tools only,
    if scenario.get("search") is True:  # glob/grep with "search": true, list with "list": true
        tools += ["glob", "grep"]
    if scenario.get("list") is True:
        tools.append("list")
    flags += ["--tools", ",".join(tools)]
    if scenario.get("policy", True) is False:
        flags.append("--no-policy")
    for key, value in (scenario.get("config") or {}).items():
        if key not in CONFIG_FLAGS or not isinstance(value, int) or isinstance(value, bool):
            raise Unsupported(f"config {key}={value!r} has no dsh-fs mcp flag")
        flags += [CONFIG_FLAGS[key], str(value)]
    return flags


def unexpressible(scenario: Mapping[str, Any]) -> str | None:
    """Why ``scenario`` cannot be run over MCP (``Unsupported``'s message), or ``None``."""
    try:
        _check_expressible(scenario)
        scenario_flags(scenario)
    except Unsupported as why:
        return str(why)
    return None


def _check_expressible(scenario: Mapping[str, Any]) -> None:
    for call in scenario.get("calls", []):
        if "batch" in call:
            raise Unsupported("a batch is one assistant message for the registry's scheduler; MCP has no batch call")
        if "tool" in call and call.get("actor", "a") is None:
            raise Unsupported("a call with actor null has no session, but every MCP connection is an owner")


async def run_scenario_over_mcp(scenario: Mapping[str, Any], ws: str, *, transport: str = "http") -> dict[str, Any]:
    """Run ``scenario`` in the empty real directory ``ws`` through ``dsh-fs mcp`` (root = the
    workspace), one MCP connection per actor; the output is what ``dsh-fs replay`` prints.

    :param transport: ``"http"``: one server, one MCP session per actor; ``"stdio"``: one
        server process per actor, all on the same workspace; ``"stdio-2026"``: the same in
        the 2026-07-28 era
    :raises Unsupported: for what MCP cannot express (``actor: null`` calls, batches)
    """
    _check_expressible(scenario)
    flags = scenario_flags(scenario)
    session_cwd = scenario.get("session_cwd", True)
    if session_cwd is True or session_cwd is False:
        root = ws  # no session cwd: the provider's cwd, which is the workspace too
    else:
        root = os.path.join(ws, session_cwd)
    build_workspace(ws, scenario.get("files", {}))
    steps: dict[int, list[Mapping[str, Any]]] = {}
    for step in scenario.get("external", []):
        steps.setdefault(int(step["before"]), []).append(step)
    results: list[dict[str, Any]] = []
    async with contextlib.AsyncExitStack() as stack:  # sessions close before their server
        endpoint = await stack.enter_async_context(http_server_async(root, *flags)) if transport == "http" else None
        sessions: dict[str, ClientSession] = {}
        for index, call in enumerate(scenario.get("calls", [])):
            for step in steps.pop(index, []):
                external_step(ws, step)
            if "tool" not in call:
                external_step(ws, call)
                continue
            actor = call.get("actor", "a")
            if actor not in sessions:
                if endpoint is not None:
                    connect = http_session(endpoint)
                else:
                    connect = stdio_session(root, *flags, modern=transport == "stdio-2026")
                sessions[actor] = await stack.enter_async_context(connect)
            with anyio.fail_after(STARTUP_TIMEOUT):
                raw = await call_raw(sessions[actor], call["tool"], scenario_args(call.get("args"), ws))
            results.append({"tool": call["tool"], "actor": actor, **row(raw)})
    for index in sorted(steps):
        for step in steps[index]:
            external_step(ws, step)
    return scrub_workspace({"results": results, **snapshot(ws)}, ws)
