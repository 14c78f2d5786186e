"""MCP over streamable HTTP (``dsh-fs mcp --http`` / ``--unix-socket``): many clients, one server.

| module | owns |
|---|---|
| ``app`` | ``serve_http``, ``build_http_app``: uvicorn, the SDK's streamable HTTP transport, where it listens, who owns each request's calls |
| ``auth`` | bearer tokens: minting, the token file, the SDK ``TokenVerifier`` (constant-time) |
| ``revocation`` | the token file re-read on change or ``SIGHUP``: a removed token revoked, its sessions ended |
| ``gate`` | ASGI, outermost: the token checked from the headers before any body is read; the body limit; no OAuth |
| ``js_numbers`` | ASGI: request bodies with JSON numbers as JavaScript reads them (``-0``, huge integers) |
| ``connections`` | the connection budget (a share kept for authenticated connections) and the request-head deadline (uvicorn's h11 protocol) |
| ``sessions`` | pure: HTTP sessions and their owners (one per MCP session, one per stateless principal), limits, expiry |

Every module here but ``sessions`` and ``js_numbers`` imports the MCP SDK (or uvicorn) at load; the
names exported here are imported on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .app import MAX_CONNECTIONS, MCP_PATH, build_http_app, check_private_dir, parse_listen, serve_http, server_config

__all__ = ("MAX_CONNECTIONS", "MCP_PATH", "build_http_app", "check_private_dir", "parse_listen", "serve_http",
           "server_config")


def __getattr__(name: str) -> Any:
    """``app``'s public names, imported on first use (PEP 562): ``sessions`` and ``js_numbers``
    load without the SDK."""
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(".app", __name__), name)
    globals()[name] = value
    return value
