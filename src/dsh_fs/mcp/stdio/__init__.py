"""MCP over stdio: one client per process (``dsh-fs mcp``).

| module | owns |
|---|---|
| ``transport`` | ``serve_stdio``: the standard descriptors, the event loop, the reading loop, the line limit, the end of input |
| ``dispatch`` | each line served by us or by the SDK (the one gate, the one cancellation table, the in-flight cap) |
| ``pipe`` | stdin's lines and stdout's lines without blocking the event loop (``RWF_NOWAIT``, threads elsewhere) |
| ``per_call_hint`` | the stderr hint for clients that start a server per call without ``--session`` |

No module here imports the MCP SDK at load time: it is imported in a background thread and
attached as the fallback (``dsh_fs.mcp.server``) when a line first needs it.
"""

from .transport import LINE_MAX, serve_stdio

__all__ = ("LINE_MAX", "serve_stdio")
