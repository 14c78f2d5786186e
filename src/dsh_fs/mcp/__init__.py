"""The MCP face: serve a ``Context``'s tools to MCP clients (``dsh-fs mcp``).

| module | owns |
|---|---|
| ``options`` | ``ServeOptions``; the one place the provider is built (``build_provider``: the root is also its containment root) |
| ``wire`` | pure: tool listings and call results as wire dicts (schemas verbatim, ``_meta``) |
| ``sessions`` | pure: HTTP sessions and their owners (one per MCP session, one per stateless principal), limits, expiry |
| ``auth`` | bearer tokens: minting, the token file, the SDK ``TokenVerifier`` (constant-time) |
| ``server`` | the SDK low-level ``Server`` (``build_server``), arrival-order scheduling of calls, stdio serving |
| ``stdio`` | our stdio transport: every request line answered (even one the SDK's parser refuses), valid UTF-8 out |
| ``http`` | streamable HTTP on a loopback address or a private Unix socket (uvicorn): auth, session bounds |
| ``numbers`` | ASGI: request bodies with JSON numbers as JavaScript reads them (``-0``, huge integers) |
| ``gate`` | ASGI, outermost: the token checked from the headers before any body is read; the body limit; no OAuth |
| ``connections`` | the connection budget (a share kept for authenticated connections) and the request-head deadline (uvicorn's h11 protocol) |
| ``revocation`` | the token file re-read on change or ``SIGHUP``: a removed token revoked, its sessions ended |

Importing this package imports the ``mcp`` SDK (an optional dependency: ``dsh-fs[mcp]``);
``import dsh_fs`` and the ``dsh-fs`` command line never import it until ``dsh-fs mcp`` runs.
No tool logic lives here.
"""

from __future__ import annotations

from .auth import (
    BearerTokens as BearerTokens,
    load_token_file as load_token_file,
    mint_tokens as mint_tokens,
    write_token_file as write_token_file,
)
from .http import build_http_app as build_http_app, parse_listen as parse_listen, serve_http as serve_http
from .options import ServeOptions as ServeOptions, build_context as build_context, build_provider as build_provider
from .server import build_server as build_server, serve_stdio as serve_stdio
from .sessions import HttpSessions as HttpSessions, SessionLimits as SessionLimits
from .wire import TOOL_ANNOTATIONS as TOOL_ANNOTATIONS, call_result as call_result, tool_entries as tool_entries

__all__ = (
    "BearerTokens",
    "HttpSessions",
    "ServeOptions",
    "SessionLimits",
    "TOOL_ANNOTATIONS",
    "build_context",
    "build_http_app",
    "build_provider",
    "build_server",
    "call_result",
    "load_token_file",
    "mint_tokens",
    "parse_listen",
    "serve_http",
    "serve_stdio",
    "tool_entries",
    "write_token_file",
)
