"""The MCP face: serve a ``Context``'s tools to MCP clients (``dsh-fs mcp``).

| module | owns |
|---|---|
| ``options`` | ``ServeOptions``; the one place the provider is built (``build_provider``: the root is also its containment root) |
| ``wire`` | pure: tool listings and call results as wire dicts (schemas verbatim, ``_meta``) |
| ``sessions`` | pure: HTTP sessions and their owners (one per MCP session, one per stateless principal), limits, expiry |
| ``auth`` | bearer tokens: minting, the token file, the SDK ``TokenVerifier`` (constant-time) |
| ``server`` | the SDK low-level ``Server`` (``build_server``), arrival-order scheduling of calls, stdio serving |
| ``roots`` | the MCP roots protocol (DEVIATIONS M3): client roots intersected with ``--root`` (pure), each owner's narrowed view |
| ``early``, ``handshake`` | the fast start over stdio (DEVIATIONS M2): ``initialize`` answered while the SDK is imported; that answer, pure and SDK-free |
| ``stdio`` | our stdio transport: every request line answered (even one the SDK's parser refuses), valid UTF-8 out |
| ``fdio`` | blocking reads and writes of stdin/stdout that wait out ``EAGAIN`` (a client's ``O_NONBLOCK``), standard library only |
| ``nowait`` | the stdio wire without thread hops: lines of a pipe or socket read and written on the event loop thread (``RWF_NOWAIT``); on asyncio a reader that stays registered (``Inbox``) |
| ``lean`` | the lean ``tools/call`` path of the stdio transport: a plain call run and answered without the SDK's dispatcher, with the SDK's bytes (``DSH_FS_MCP_LEAN=0``: off) |
| ``leanenv`` | the ``DSH_FS_MCP_LEAN`` switch, readable without the SDK |
| ``prelude``, ``earlywire`` | the early phase over stdio (M2): plain ``tools/call`` requests answered before the SDK is loaded, then the connection handed to the SDK path; their answers' bytes, pure and SDK-free |
| ``fastwire`` | pure: the lean path's JSON without pydantic: a plain ``tools/call`` line read, its answer written, only where the bytes are provably the SDK path's |
| ``inline`` | a coroutine run on the current task until it first suspends, then carried on by that task (a lean call run on the stdio reader's task) |
| ``percall`` | the stderr hint for clients that start a server per call without ``--session`` (a first call refused for want of a read) |
| ``http`` | streamable HTTP on a loopback address or a private Unix socket (uvicorn): auth, session bounds |
| ``numbers`` | ASGI: request bodies with JSON numbers as JavaScript reads them (``-0``, huge integers) |
| ``gate`` | ASGI, outermost: the token checked from the headers before any body is read; the body limit; no OAuth |
| ``connections`` | the connection budget (a share kept for authenticated connections) and the request-head deadline (uvicorn's h11 protocol) |
| ``approval`` | a sandbox escalation asked of the person through the client's elicitation (``--sandbox``, docs/SANDBOX.md) |
| ``revocation`` | the token file re-read on change or ``SIGHUP``: a removed token revoked, its sessions ended |

The ``mcp`` SDK (an optional dependency: ``dsh-fs[mcp]``) is imported by the modules that
need it (``server``, ``stdio``, ``lean``, ``http``, ``auth``; ``fastwire`` needs ``pydantic_core``), and the names exported here are loaded on
first use; so ``import dsh_fs.mcp`` and the SDK-free modules (``options``, ``wire``,
``sessions``, ``handshake``) do not import the SDK, and ``dsh-fs mcp`` answers the
``initialize`` handshake before the SDK is loaded (``handshake``, DEVIATIONS M2).
No tool logic lives here.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .auth import BearerTokens, load_token_file, mint_tokens, write_token_file
    from .http import build_http_app, parse_listen, serve_http
    from .options import ServeOptions, build_context, build_provider
    from .server import build_server, serve_stdio
    from .sessions import HttpSessions, SessionLimits
    from .wire import TOOL_ANNOTATIONS, call_result, tool_entries

_HOMES = {
    "BearerTokens": "auth",
    "HttpSessions": "sessions",
    "ServeOptions": "options",
    "SessionLimits": "sessions",
    "TOOL_ANNOTATIONS": "wire",
    "build_context": "options",
    "build_http_app": "http",
    "build_provider": "options",
    "build_server": "server",
    "call_result": "wire",
    "load_token_file": "auth",
    "mint_tokens": "auth",
    "parse_listen": "http",
    "serve_http": "http",
    "serve_stdio": "server",
    "tool_entries": "wire",
    "write_token_file": "auth",
}
"""public name → the submodule that defines it (imported on first use: PEP 562)"""

__all__ = tuple(sorted(_HOMES))


def __getattr__(name: str) -> Any:
    """Import a public name's submodule on first use, so that ``dsh_fs.mcp.options``,
    ``handshake`` and ``wire`` (no SDK) load without the SDK; see the module docstring."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{home}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOMES])
