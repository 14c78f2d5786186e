"""Tool definitions in every format the adapters speak, by name (``dsh-fs schema --format``).

| format | shape | for |
|---|---|---|
| ``native`` | ``{name, description, parameters}`` | ``ToolRegistry.schemas()`` itself (§4.3) |
| ``mcp`` | ``{name, description, inputSchema}`` | an MCP ``tools/list`` result's ``tools`` |
| ``openai`` | ``{"type": "function", "function": {name, description, parameters}}`` | Chat Completions (DeepSeek) |
| ``openai-responses`` | ``{"type": "function", name, description, parameters, "strict": false}`` | the Responses API |
| ``anthropic`` | ``{name, description, input_schema}`` | Anthropic Messages |

The JSON schemas are the §4.3 wire JSON in every format, never rewritten.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .anthropic_messages import anthropic_tools
from .calls import ToolSource, tool_schemas
from .openai_chat import chat_tools
from .openai_responses import responses_tools

__all__ = ("FORMATS", "mcp_tools", "tool_definitions")


def mcp_tools(source: ToolSource) -> list[dict[str, Any]]:
    """The tools as an MCP ``tools/list`` result lists them: ``{name, description, inputSchema}``."""
    return [{"name": s["name"], "description": s["description"], "inputSchema": s["parameters"]} for s in tool_schemas(source)]


FORMATS: dict[str, Callable[[ToolSource], list[dict[str, Any]]]] = {
    "mcp": mcp_tools,
    "openai": chat_tools,
    "openai-responses": responses_tools,
    "anthropic": anthropic_tools,
    "native": tool_schemas,
}
"""format name → converter"""


def tool_definitions(source: ToolSource, format: str = "mcp") -> list[dict[str, Any]]:
    """The tool definitions of ``source`` in ``format`` (see the module table), registry order.

    :raises ValueError: for an unknown format
    """
    try:
        convert = FORMATS[format]
    except KeyError:
        raise ValueError(f"unknown tool definition format {format!r}; expected one of {', '.join(FORMATS)}") from None
    return convert(source)
