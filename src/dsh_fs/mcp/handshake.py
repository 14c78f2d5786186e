"""The ``initialize`` answer without the SDK (pure; DEVIATIONS M2): what lets ``dsh-fs mcp``
answer the handshake over stdio while the MCP SDK is still being imported.

The official SDK stays the protocol's oracle. The early answer is given only for a request
that the SDK is known to accept as it stands (:func:`early_reply` says ``None`` for anything
else, and the SDK answers that as usual), and it is the SDK's own answer, byte for byte: the
version negotiation of ``mcp.server.runner.ServerRunner._negotiate_initialize`` (the
client's version if it is a handshake version, else the newest one), the capabilities of our
low-level ``Server`` (tools only, ``listChanged: false``), ``serverInfo`` and the
``instructions``, serialized as the SDK serializes a reply (compact JSON, UTF-8 as is, keys in
the model's order). The same request is then handed to the SDK as well, so its session state
is what it would have been; its reply is compared with the early one and dropped
(``stdio.stdio_transport``). ``tests/unit/mcp/test_mcp_handshake.py`` holds both to the SDK: the
version lists, the capabilities, and the bytes of the SDK's answers to generated requests.

What the early path accepts (anything else is left to the SDK): one JSON object with exactly
``jsonrpc: "2.0"``, ``id`` (a string, or an integer of at most 53 bits), ``method:
"initialize"`` and ``params``; the params exactly ``protocolVersion`` (a string),
``capabilities`` (objects all the way down, except that ``listChanged`` is a boolean, though
not as a member of ``experimental`` or ``extensions``) and
``clientInfo`` (``name`` and ``version`` strings; ``title``, ``description`` and
``websiteUrl`` strings if present; no ``icons``); no duplicate keys, no lone surrogates.

No SDK import here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Final

__all__ = (
    "HANDSHAKE_PROTOCOL_VERSIONS",
    "LATEST_HANDSHAKE_VERSION",
    "SERVER_CAPABILITIES",
    "SERVER_NAME",
    "early_reply",
    "negotiate",
)

SERVER_NAME: Final = "dsh-fs"
"""the server name announced to clients (``serverInfo.name``)"""

HANDSHAKE_PROTOCOL_VERSIONS: Final = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
"""the revisions the SDK negotiates through ``initialize`` (``mcp_types.version``; a test
holds this copy to the SDK's)"""

LATEST_HANDSHAKE_VERSION: Final = HANDSHAKE_PROTOCOL_VERSIONS[-1]
"""the SDK's counter-offer to a version it does not speak"""

SERVER_CAPABILITIES: Final[Mapping[str, Any]] = {"tools": {"listChanged": False}}
"""what the SDK's low-level ``Server`` announces when only the tool handlers are set"""

_SAFE_INTEGER: Final = 2**53
_CLIENT_INFO_TEXTS: Final = frozenset({"title", "description", "websiteUrl", "website_url"})
_FLAGS: Final = frozenset({"listChanged", "list_changed"})
_SURROGATE_ESCAPE: Final = re.compile(r"\\u[dD][89a-fA-F]")


def negotiate(requested: str) -> str:
    """The protocol version the SDK answers an ``initialize`` offering ``requested`` with."""
    return requested if requested in HANDSHAKE_PROTOCOL_VERSIONS else LATEST_HANDSHAKE_VERSION


def early_reply(line: bytes, *, version: str, instructions: str | None) -> tuple[str | int, str] | None:
    """The SDK's answer to ``line`` when it is an ``initialize`` request the early path accepts
    (module docstring): ``(request id, reply line without its line end)``; else ``None``.

    :param line: one raw stdin line (its line end, if any, is ignored)
    :param version: the server's version (``serverInfo.version``)
    :param instructions: the server's instructions (``None``: the member is left out, as the
        SDK leaves it out)
    """
    try:
        text = line.decode("utf-8")
        if _SURROGATE_ESCAPE.search(text):  # the SDK's parser refuses those: left to its fallback
            return None
        message = json.loads(text, object_pairs_hook=_no_duplicates)
    except (ValueError, RecursionError):  # not UTF-8, not JSON, a duplicate key
        return None
    if not _acceptable(message):
        return None
    result: dict[str, Any] = {"capabilities": SERVER_CAPABILITIES}
    if instructions is not None:
        result["instructions"] = instructions
    result["protocolVersion"] = negotiate(message["params"]["protocolVersion"])
    result["serverInfo"] = {"name": SERVER_NAME, "version": version}
    reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
    try:
        answer = json.dumps(reply, ensure_ascii=False, separators=(",", ":"))
        answer.encode("utf-8")
    except (ValueError, UnicodeEncodeError):  # a lone surrogate in the instructions
        return None
    return message["id"], answer


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) != len(pairs):
        raise ValueError("duplicate key")
    return value


def _acceptable(message: Any) -> bool:
    if not isinstance(message, dict) or set(message) != {"jsonrpc", "id", "method", "params"}:
        return False
    request_id, params = message["id"], message["params"]
    if message["jsonrpc"] != "2.0" or message["method"] != "initialize" or not _plain_id(request_id):
        return False
    if not isinstance(params, dict) or set(params) != {"protocolVersion", "capabilities", "clientInfo"}:
        return False
    return (
        _text(params["protocolVersion"])
        and isinstance(params["capabilities"], dict)
        and _capabilities(params["capabilities"])
        and _client_info(params["clientInfo"])
    )


def _plain_id(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return -_SAFE_INTEGER < value < _SAFE_INTEGER
    return _text(value)


def _text(value: Any) -> bool:
    """A string that encodes as UTF-8 (no lone surrogate)."""
    if not isinstance(value, str):
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


_OBJECTS: Final = frozenset({"experimental", "extensions"})
"""capabilities whose members the SDK types as objects (a ``listChanged`` there is no flag)"""


def _capabilities(value: dict[str, Any], *, flags: bool = True) -> bool:
    """Objects all the way down, ``listChanged`` a boolean where ``flags`` (not directly under
    ``experimental`` or ``extensions``: the SDK types their members as objects)."""
    for key, item in value.items():
        if not _text(key):
            return False
        if flags and key in _FLAGS:
            if not isinstance(item, bool):
                return False
        elif not isinstance(item, dict) or not _capabilities(item, flags=not (flags and key in _OBJECTS)):
            return False
    return True


def _client_info(value: Any) -> bool:
    if not isinstance(value, dict) or not _text(value.get("name")) or not _text(value.get("version")):
        return False
    if "icons" in value:
        return False
    return all(_text(value[key]) for key in _CLIENT_INFO_TEXTS & value.keys()) and all(_text(k) for k in value)
