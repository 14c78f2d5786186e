"""A ``tools/call`` answer's bytes without the MCP SDK (pure; DEVIATIONS M2): what lets the
early phase (``prelude.py``) answer a call before the SDK is imported.

The SDK path answers a call with ``mcp_types.methods.serialize_server_result("tools/call",
version, server.handler_result(result))`` (the version's ``CallToolResult`` validated and
dumped ``by_alias``, ``mode="json"``, ``exclude_none``: members in the model's field order,
``resultType`` dropped on every handshake version), then ``fastwire.response_line``.
:func:`call_surface` builds that dump from ``wire.call_result``'s dict for the shapes our
tools give (text and image blocks, ``isError``, a ``_meta`` object), and says ``None`` for
anything else (the caller then waits for the SDK and uses its functions).
``tests/unit/test_mcp_earlywire.py`` holds it to the SDK for every handshake version.

No SDK import here.
"""

from __future__ import annotations

from typing import Any, Final

from .fastwire import response_line

__all__ = ("call_answer", "call_surface")

_WIRE: Final = frozenset({"content", "isError", "_meta"})
_TEXT: Final = frozenset({"type", "text"})
_IMAGE: Final = frozenset({"type", "data", "mimeType"})


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
