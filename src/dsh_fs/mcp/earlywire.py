"""``tools/call`` and ``tools/list`` answers' bytes without the MCP SDK (pure; DEVIATIONS
M2): what lets the early phase (``prelude.py``) answer them before the SDK is imported (a
per-call client on the ``mcp<2`` SDK lists the tools after every call, to check its result).

The SDK path answers a call with ``mcp_types.methods.serialize_server_result("tools/call",
version, server.handler_result(result))`` (the version's ``CallToolResult`` validated and
dumped ``by_alias``, ``mode="json"``, ``exclude_none``: members in the model's field order,
``resultType`` dropped on every handshake version), then ``fastwire.response_line``.
:func:`call_surface` builds that dump from ``wire.call_result``'s dict for the shapes our
tools give (text and image blocks, ``isError``, a ``_meta`` object), and says ``None`` for
anything else (the caller then waits for the SDK and uses its functions).
``tests/unit/mcp/test_mcp_earlywire.py`` holds it to the SDK for every handshake version.

No SDK import here.
"""

from __future__ import annotations

from typing import Any, Final

from .fastwire import response_line

__all__ = ("call_answer", "call_surface", "list_answer", "list_surface")

_WIRE: Final = frozenset({"content", "isError", "_meta"})
_TEXT: Final = frozenset({"type", "text"})
_IMAGE: Final = frozenset({"type", "data", "mimeType"})
_TOOL: Final = ("annotations", "description", "inputSchema", "name")
"""a ``Tool``'s members in the order the SDK dumps them (the model's field order)"""
_SCHEMA: Final = ("properties", "required", "type")
"""an ``inputSchema``'s members in the order the SDK dumps them"""
_HINTS: Final = ("destructiveHint", "idempotentHint", "openWorldHint", "readOnlyHint")
"""``ToolAnnotations`` members (``title`` aside) in the order the SDK dumps them"""


def call_surface(wire: Any) -> dict[str, Any] | None:
    """The SDK's dump of the ``CallToolResult`` ``wire`` (``wire.call_result``'s dict) at
    every handshake protocol version (``handshake.HANDSHAKE_PROTOCOL_VERSIONS``), or ``None``
    when ``wire`` is not of the plain shape: only ``content`` (text blocks ``{type, text}``,
    image blocks ``{type, data, mimeType}``, string values), ``isError`` (a ``bool``) and
    ``_meta`` (an object with string keys, dumped as it is: ``fastwire.response_line``
    refuses any value in it that JSON mode could rewrite). Never raises."""
    if type(wire) is not dict or not wire.keys() <= _WIRE or not wire.keys() >= {"content", "isError"}:
        return None
    content, is_error = wire["content"], wire["isError"]
    if type(content) is not list or type(is_error) is not bool:
        return None
    surface: dict[str, Any] = {}
    if "_meta" in wire:
        meta = wire["_meta"]
        if type(meta) is not dict or any(type(key) is not str for key in meta):
            return None
        surface["_meta"] = meta
    blocks = []
    for block in content:
        if type(block) is not dict:
            return None
        keys = block.keys()
        if keys == _TEXT and block["type"] == "text" and type(block["text"]) is str:
            blocks.append({"text": block["text"], "type": "text"})
        elif (keys == _IMAGE and block["type"] == "image" and type(block["data"]) is str
              and type(block["mimeType"]) is str):
            blocks.append({"data": block["data"], "mimeType": block["mimeType"], "type": "image"})
        else:
            return None
    surface["content"] = blocks
    surface["isError"] = is_error
    return surface


def call_answer(request_id: int | str, wire: Any) -> bytes | None:
    """The SDK path's answer line (``\\n`` included) to the ``tools/call`` request
    ``request_id`` whose result is ``wire`` (``wire.call_result``'s dict), at any handshake
    version; ``None`` when it is not provably the SDK's (``call_surface``,
    ``fastwire.response_line``). Never raises."""
    surface = call_surface(wire)
    return response_line(request_id, surface) if surface is not None else None


def list_surface(entries: Any) -> dict[str, Any] | None:
    """The SDK's dump of ``ListToolsResult(tools=[Tool.model_validate(e) for e in entries])``
    (``server.build_server``'s ``tools/list`` handler, then ``serialize_server_result``) at
    every handshake protocol version, or ``None`` when an entry is not of the plain shape
    ``wire.tool_entries`` gives: ``name`` and ``description`` strings, an ``inputSchema`` of
    only ``type: "object"``, ``properties`` (an object, dumped as it is) and ``required`` (a
    list of strings), and ``annotations`` of only the four boolean hints. Members come in the
    models' field order. Never raises."""
    if type(entries) is not list:
        return None
    tools = []
    for entry in entries:
        if type(entry) is not dict or not entry.keys() <= _TOOL_KEYS or not entry.keys() >= _TOOL_NEEDS:
            return None
        if type(entry["name"]) is not str or type(entry["description"]) is not str:
            return None
        schema = entry["inputSchema"]
        if type(schema) is not dict or not schema.keys() <= _SCHEMA_KEYS or schema.get("type") != "object":
            return None
        if type(schema.get("properties", {})) is not dict:
            return None
        required = schema.get("required", [])
        if type(required) is not list or any(type(name) is not str for name in required):
            return None
        tool: dict[str, Any] = {}
        if "annotations" in entry:
            hints = entry["annotations"]
            if type(hints) is not dict or not hints.keys() <= _HINT_KEYS or any(type(v) is not bool for v in hints.values()):
                return None
            tool["annotations"] = {key: hints[key] for key in _HINTS if key in hints}
        tool["description"] = entry["description"]
        tool["inputSchema"] = {key: schema[key] for key in _SCHEMA if key in schema}
        tool["name"] = entry["name"]
        tools.append(tool)
    return {"tools": tools}


def list_answer(request_id: int | str, entries: Any) -> bytes | None:
    """The SDK path's answer line (``\\n`` included) to the ``tools/list`` request
    ``request_id`` for the tools ``entries`` (``wire.tool_entries``), at any handshake
    version; ``None`` when it is not provably the SDK's (``list_surface``,
    ``fastwire.response_line``). Never raises."""
    surface = list_surface(entries)
    return response_line(request_id, surface) if surface is not None else None


_TOOL_KEYS: Final = frozenset(_TOOL)
_TOOL_NEEDS: Final = frozenset({"name", "description", "inputSchema"})
_SCHEMA_KEYS: Final = frozenset(_SCHEMA)
_HINT_KEYS: Final = frozenset(_HINTS)
