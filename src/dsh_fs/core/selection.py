"""Serving a subset of the registered tools (``dsh-fs mcp --tools``). Knows nothing about files."""

from __future__ import annotations

from collections.abc import Iterable

from .context import Context

__all__ = ("select_tools",)


def select_tools(ctx: Context, names: Iterable[str]) -> list[str]:
    """Keep only the tools ``names`` in ``ctx.tools``; the others are unregistered together
    with their ``tool:<name>`` prompt sections, so the system prompt never mentions a tool
    the model cannot call.

    :param names: tool names; duplicates are ignored, the order does not matter
    :return: the kept names, sorted
    :raises ValueError: ``unknown tool "<name>"; registered: a, b, c`` for a name that is not
        registered, or when ``names`` is empty (nothing is changed then)
    """
    wanted = set(names)
    registered = ctx.tools.names()
    if not wanted:
        raise ValueError(f"select at least one tool; registered: {', '.join(registered)}")
    for name in sorted(wanted):
        if name not in registered:
            raise ValueError(f'unknown tool "{name}"; registered: {", ".join(registered)}')
    for name in registered:
        if name not in wanted:
            ctx.tools.unregister(name)
            ctx.system_prompt.discard(f"tool:{name}")
    return sorted(wanted)
