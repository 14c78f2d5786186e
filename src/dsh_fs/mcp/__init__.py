"""The MCP face: serve a ``Context``'s tools to MCP clients (``dsh-fs mcp``).

| module | owns |
|---|---|
| ``wire`` | pure, SDK-free: our tools on the wire (listings, results, instructions), what a stdin line is, our answers as the SDK's bytes (the handshake included: DEVIATIONS M2) |
| ``server`` | the SDK: the low-level ``Server`` both transports run (``build_server``), and the SDK as the stdio connection's fallback route (``SdkRoute``) |
| ``stdio`` | one client over stdin/stdout (``serve_stdio``): its reader, writer and dispatcher (our route and the SDK's) |
| ``options`` | ``ServeOptions``; the one place the provider is built (``build_provider``: the root is also its containment root) |
| ``roots`` | the MCP roots protocol (DEVIATIONS M3): client roots intersected with ``--root`` (pure), each owner's narrowed view |
| ``approval`` | a sandbox escalation asked of the person through the client's elicitation (``--sandbox``, docs/SANDBOX.md) |
| ``http`` | streamable HTTP on a loopback address or a private Unix socket (uvicorn): auth, session bounds, the connection budget |

The ``mcp`` SDK (an optional dependency: ``dsh-fs[mcp]``) is imported by the modules that need
it (``server``, the ``http`` package), and the names exported here are
loaded on first use; ``import dsh_fs.mcp``, ``wire``, ``options``, ``http.sessions`` and the whole
``stdio`` package load without the SDK, so ``dsh-fs mcp`` answers ``initialize`` and plain
calls before the SDK is loaded (DEVIATIONS M2). No tool logic lives here.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .http import build_http_app, parse_listen, serve_http
    from .http.auth import BearerTokens, load_token_file, mint_tokens, write_token_file
    from .http.sessions import HttpSessions, SessionLimits
    from .options import ServeOptions, build_context, build_provider
    from .server import build_server
    from .stdio import serve_stdio
    from .wire import TOOL_ANNOTATIONS, call_result, tool_entries

_HOMES = {
    "BearerTokens": "http.auth",
    "HttpSessions": "http.sessions",
    "ServeOptions": "options",
    "SessionLimits": "http.sessions",
    "TOOL_ANNOTATIONS": "wire",
    "build_context": "options",
    "build_http_app": "http",
    "build_provider": "options",
    "build_server": "server",
    "call_result": "wire",
    "load_token_file": "http.auth",
    "mint_tokens": "http.auth",
    "parse_listen": "http",
    "serve_http": "http",
    "serve_stdio": "stdio",
    "tool_entries": "wire",
    "write_token_file": "http.auth",
}
"""public name → the submodule that defines it (imported on first use: PEP 562)"""

__all__ = tuple(sorted(_HOMES))


def __getattr__(name: str) -> Any:
    """Import a public name's submodule on first use, so that ``dsh_fs.mcp.options``, ``wire``
    and ``stdio`` (no SDK) load without the SDK; see the module docstring."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{home}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOMES])
