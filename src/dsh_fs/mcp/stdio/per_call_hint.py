"""A hint on stderr for clients that start a server per tool call (``dsh-fs mcp`` without
``--session``).

Such a client (LangChain's MCP adapter, the MCP Inspector's CLI) reads a file through one
server process and edits it through the next, which has never seen the read: the edit is
refused ``FS_NOT_OBSERVED`` ("read the file, then retry"), and a read followed by a retry
is refused again. The model's text stays exactly the tool's; the operator, who can fix it,
is told once on stderr, as the tool commands do (``dsh-fs: hint: …``), when a call is refused
so in a process that had answered no call before it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from ...core.tools import ToolRegistry

__all__ = ("FirstCallHint", "PER_CALL_HINT")

PER_CALL_HINT = (
    "dsh-fs mcp: hint: a call was refused for want of a read, and this server had answered no call "
    "before it: a read made through another server process does not count here. A client that starts "
    "a server per tool call needs --session NAME, the same NAME every time (docs/MCP.md, Clients that start"
    " a server per call)."
)


class FirstCallHint:
    """``tools`` (the context's ``ToolRegistry``) with ``execute`` watched for the case above;
    everything else is ``tools``' own.

    :param log: where the hint goes (default: a line on stderr)
    """

    def __init__(self, tools: ToolRegistry, *, log: Callable[[str], None] | None = None) -> None:
        self._tools = tools
        self._log = log or (lambda line: print(line, file=sys.stderr, flush=True))
        self._answered = 0
        self._said = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._tools, name)

    async def execute(self, name: str, arguments: Any, **options: Any) -> Any:
        """``ToolRegistry.execute``; logs the hint once when this is a refused first call."""
        first = self._answered == 0
        try:
            result = await self._tools.execute(name, arguments, **options)
        finally:
            self._answered += 1
        error = result.error
        if first and not self._said and error is not None and error.code == "FS_NOT_OBSERVED":
            self._said = True
            self._log(PER_CALL_HINT)
        return result
