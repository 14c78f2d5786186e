"""The MCP wire of our tools, pure and SDK-free: what a line is, and our answers as bytes.

No SDK import, no I/O (``pydantic_core``'s serializer is imported on the first answer). The
stdio server (``stdio/``) reads every line through :func:`classify` and answers the lines it
serves itself with the bytes built here; everything else goes to the SDK (``server.py``). The
SDK stays the protocol's oracle: every answer here is the SDK path's answer byte for byte, or
``None`` (the SDK's functions then answer).

* **Our tools on the wire**: ``tools/list`` entries are ``{name, description, inputSchema,
  annotations?}`` with ``inputSchema`` exactly ``ctx.tools.schemas()[i]["parameters"]``
  (:func:`tool_entries`); a ``tools/call`` result shows the model only our content blocks (the
  ``Error: …`` text for a failure) and ``isError``; what is not for the model goes under
  ``_meta`` as ``{"dsh_fs": {"diffs": …, "error": {"name": …, "code": …}}}`` (each key only
  when present), never ``structuredContent`` (:func:`call_result`); the ``initialize``
  ``instructions`` are the tools' own prompt sections, and under a sandbox (D37, default
  profile) the ``sandbox:policy`` sentence naming its mode (:func:`server_instructions`); a
  client no approval can reach is listed no escalation fields (:func:`offers_escalation`).
* **The handshake** (DEVIATIONS M2): :func:`initialize_answer` is the SDK's answer to a plain
  ``initialize`` (``ServerRunner._negotiate_initialize``'s version choice, our low-level
  ``Server``'s capabilities, ``serverInfo``, ``instructions``, compact JSON in the model's key
  order). Plain: exactly ``jsonrpc: "2.0"``, ``id`` (a string, or an integer of at most 53
  bits), ``method: "initialize"`` and ``params`` of exactly ``protocolVersion`` (a string),
  ``capabilities`` (objects all the way down, ``listChanged`` a boolean, not as a member of
  ``experimental`` or ``extensions``) and ``clientInfo`` (``name`` and ``version`` strings;
  ``title``, ``description``, ``websiteUrl`` strings if present; no ``icons``); no duplicate
  key, no lone surrogate.
* **A line** (:func:`classify`): blank, a plain ``initialize``, ``notifications/initialized``,
  a plain ``tools/call`` (:func:`plain_call`), a ``tools/list`` without ``params``, a
  ``notifications/cancelled``, ``notifications/roots/list_changed``, a response (the client's
  answer to a request of ours: ``roots/list``), or anything else. :func:`plain_roots` reads a
  ``roots/list`` answer where its URIs are provably the ones the SDK's session reads. A kind is given only where the SDK path reads
  the line as that very message with these values: strict UTF-8 (a BOM, an encoded surrogate:
  the SDK path's parse error), no number ``core.jsonvalue.js_numbers`` may rewrite (``-0``, 16
  digits or more) where it could matter, for a call no float, ``NaN`` or ``Infinity``
  (pydantic's float reading is not Python's to the last bit).
* **Answers**: :func:`call_answer` and :func:`list_answer` (the SDK's per-version result
  surface, ``serialize_server_result``, built for the shapes our tools give, the same at every
  handshake version), :func:`response_line` (``encode_message``'s bytes without the model:
  ``pydantic_core.to_json`` of the plain dict, the serializer the model's fields use),
  :func:`error_line`.

``tests/unit/mcp/test_mcp_lines.py``, ``test_mcp_answers.py`` and ``test_mcp_handshake.py`` hold each
to the SDK's functions (hypothesis).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from ..core.context import Context
from ..core.jsonvalue import may_rewrite, read_noting_numbers
from ..core.system_prompt import TOOL_SECTIONS
from ..core.tools import ToolResult
from ..tool_common.switches import ToolSwitches

__all__ = (
    "CANCELLED_REASON",
    "HANDSHAKE_PROTOCOL_VERSIONS",
    "LATEST_HANDSHAKE_VERSION",
    "Line",
    "META_KEY",
    "SERVER_CAPABILITIES",
    "SERVER_NAME",
    "TOOL_ANNOTATIONS",
    "call_answer",
    "call_result",
    "call_surface",
    "classify",
    "coerce_id",
    "error_line",
    "initialize_answer",
    "list_answer",
    "list_surface",
    "negotiate",
    "offers_escalation",
    "plain_call",
    "plain_roots",
    "recover_id",
    "response_line",
    "server_instructions",
    "tool_entries",
)

# -- our tools ------------------------------------------------------------------------------------

META_KEY: Final = "dsh_fs"
"""our key inside a result's ``_meta``"""

CANCELLED_REASON: Final = "the client cancelled the request"
"""the reason a call's ``AbortSignal`` carries when the client cancels it
(``notifications/cancelled``), on every route: the SDK's handler (``server.py``) and ours
(``stdio/dispatch.py``)"""


SANDBOX_SECTION: Final = "sandbox:policy"
"""the reference's standing-policy section (``fs_sandbox.prompt``)"""


def server_instructions(ctx: Context) -> str | None:
    """The server's ``instructions``: the tools' prompt sections of ``ctx`` (no agent identity:
    that belongs to the client's agent), then (D37, default profile) the ``sandbox:policy``
    section when a sandbox is composed, so the model knows the mode before its first refusal;
    ``None`` when there is nothing."""
    tools = ctx.system_prompt.render(only=TOOL_SECTIONS)
    if ToolSwitches.of(ctx.profile).escalation_only_when_grantable:
        policy = ctx.system_prompt.render(only=SANDBOX_SECTION)
        tools = "\n\n".join(t for t in (tools, policy) if t)
    return tools or None


def offers_escalation(ctx: Context, client_can_be_asked: bool) -> bool:
    """Whether ``tools/list`` shows the escalation fields to a client: always in the reference
    profile; under D37 only when the client can be asked (it declared ``elicitation``) or
    the approval callback needs nobody at the client (a library's own)."""
    if not ToolSwitches.of(ctx.profile).escalation_only_when_grantable:
        return True
    approval = getattr(ctx.fs, "approval", None)
    return client_can_be_asked or (approval is not None and getattr(approval, "reachable", None) is None)


_MUTATION: Final[Mapping[str, bool]] = {
    "readOnlyHint": False,
    "destructiveHint": True,  # write overwrites; edit replaces text in place
    "idempotentHint": False,
    "openWorldHint": False,
}

_READ_ONLY: Final[Mapping[str, bool]] = {"readOnlyHint": True, "openWorldHint": False}

TOOL_ANNOTATIONS: Final[Mapping[str, Mapping[str, bool]]] = {
    "list": _READ_ONLY,  # docs/LIST.md
    "read": _READ_ONLY,
    "write": _MUTATION,
    "edit": _MUTATION,
    "glob": _READ_ONLY,
    "grep": _READ_ONLY,
    "read_image": _READ_ONLY,  # opt-in (docs/IMAGES.md)
    "apply_patch": _MUTATION,  # the editing faces (docs/EDITING-FACES.md): views and changes alike
    "str_replace_based_edit_tool": _MUTATION,
    "str_replace_editor": _MUTATION,
    "notebook_edit": _MUTATION,  # docs/NOTEBOOKS.md
    "read_pdf": _READ_ONLY,  # opt-in (docs/PDF.md)
}
"""MCP ``ToolAnnotations`` (wire names) per tool; a tool not listed here gets none"""


def tool_entries(schemas: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Wire ``Tool`` objects for ``schemas`` (``ctx.tools.schemas()``), in the same order.

    :param schemas: ``[{name, description, parameters}]`` as the registry returns them
    :return: ``[{name, description, inputSchema, annotations?}]``; ``inputSchema`` is the
        ``parameters`` object itself (not copied, not rewritten)
    """
    entries = []
    for schema in schemas:
        entry: dict[str, Any] = {
            "name": schema["name"],
            "description": schema["description"],
            "inputSchema": schema["parameters"],
        }
        hints = TOOL_ANNOTATIONS.get(schema["name"])
        if hints is not None:
            entry["annotations"] = dict(hints)
        entries.append(entry)
    return entries


def call_result(result: ToolResult) -> dict[str, Any]:
    """The wire ``CallToolResult`` for one registry result: a tool failure stays a result
    (``isError: true`` with our ``Error: …`` text), never a protocol error; ``_meta`` carries
    the diff metadata and the error ``{name, code}``.

    :param result: what ``ctx.tools.execute`` returned
    :return: ``{content, isError, _meta?}`` with camelCase wire keys
    """
    wire: dict[str, Any] = {"content": [dict(block) for block in result.content], "isError": result.is_error}
    ours: dict[str, Any] = {}
    if isinstance(result.meta, Mapping):
        ours.update(result.meta)
    elif result.meta is not None:
        ours["meta"] = result.meta
    if result.error is not None:
        ours["error"] = result.error.as_dict()
    if ours:
        wire["_meta"] = {META_KEY: ours}
    return wire


# -- the handshake ----------------------------------------------------------------------------------

SERVER_NAME: Final = "dsh-fs"
"""the server name announced to clients (``serverInfo.name``)"""

HANDSHAKE_PROTOCOL_VERSIONS: Final = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
"""the revisions the SDK negotiates through ``initialize`` (``mcp_types.version``; a test holds
this copy to the SDK's)"""

LATEST_HANDSHAKE_VERSION: Final = HANDSHAKE_PROTOCOL_VERSIONS[-1]
"""the SDK's counter-offer to a version it does not speak"""

SERVER_CAPABILITIES: Final[Mapping[str, Any]] = {"tools": {"listChanged": False}}
"""what the SDK's low-level ``Server`` announces when only the tool handlers are set"""

_SAFE_INTEGER: Final = 2**53
_CLIENT_INFO_TEXTS: Final = frozenset({"title", "description", "websiteUrl", "website_url"})
_FLAGS: Final = frozenset({"listChanged", "list_changed"})
_OBJECTS: Final = frozenset({"experimental", "extensions"})
"""capabilities whose members the SDK types as objects (a ``listChanged`` there is no flag)"""
_SURROGATE_ESCAPE: Final = re.compile(r"\\u[dD][89a-fA-F]")


def negotiate(requested: str) -> str:
    """The protocol version the SDK answers an ``initialize`` offering ``requested`` with."""
    return requested if requested in HANDSHAKE_PROTOCOL_VERSIONS else LATEST_HANDSHAKE_VERSION


def initialize_answer(line: bytes, *, version: str, instructions: str | None) -> tuple[str | int, str] | None:
    """The SDK's answer to ``line`` when it is a plain ``initialize`` (module docstring):
    ``(request id, the answer line without its line end)``; else ``None``.

    :param line: one raw stdin line (its line end, if any, is ignored)
    :param version: the server's version (``serverInfo.version``)
    :param instructions: the server's instructions (``None``: the member is left out, as the
        SDK leaves it out)
    """
    message = _initialize_request(line)
    if message is None:
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


def _initialize_request(line: bytes) -> dict[str, Any] | None:
    """``line`` as a plain ``initialize`` request (module docstring), or ``None``."""
    try:
        text = line.decode("utf-8")
        if _SURROGATE_ESCAPE.search(text):  # the SDK's parser refuses those: left to its fallback
            return None
        message = json.loads(text, object_pairs_hook=_no_duplicates)
    except (ValueError, RecursionError):  # not UTF-8, not JSON, a duplicate key
        return None
    return message if _acceptable(message) else None


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) != len(pairs):
        raise ValueError("duplicate key")
    return value


def _acceptable(message: Any) -> bool:
    if not isinstance(message, dict) or set(message) != {"jsonrpc", "id", "method", "params"}:
        return False
    request_id, params = message["id"], message["params"]
    if message["jsonrpc"] != "2.0" or message["method"] != "initialize" or not _safe_id(request_id):
        return False
    if not isinstance(params, dict) or set(params) != {"protocolVersion", "capabilities", "clientInfo"}:
        return False
    return (
        _text(params["protocolVersion"])
        and isinstance(params["capabilities"], dict)
        and _capabilities(params["capabilities"])
        and _client_info(params["clientInfo"])
    )


def _safe_id(value: Any) -> bool:
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


# -- what a line is ---------------------------------------------------------------------------------

BLANK: Final = "blank"
INITIALIZE: Final = "initialize"
INITIALIZED: Final = "initialized"
CALL: Final = "call"
LIST: Final = "list"
CANCEL: Final = "cancel"
ROOTS_CHANGED: Final = "roots_changed"
RESPONSE: Final = "response"
OTHER: Final = "other"


@dataclass(frozen=True, slots=True)
class Line:
    """What :func:`classify` made of one line."""

    kind: str
    """``blank``, ``initialize``, ``initialized``, ``call``, ``list``, ``cancel``,
    ``roots_changed``, ``response`` or ``other``"""
    id: Any = None
    """the request's id (``initialize``, ``call``, ``list``), or the one a ``response``
    answers; for ``cancel``, the ``requestId`` it names (a string or an integer, as written)"""
    params: Any = None
    """``call``: its ``params`` (``name``, ``arguments``?); ``initialize``: its ``params``;
    ``response``: the message (``result`` or ``error``)"""


_BLANK_LINE: Final = Line(BLANK)
_OTHER_LINE: Final = Line(OTHER)
_WHITESPACE: Final = " \t\n\r"
"""what a blank line may hold (the SDK path's whitespace; a form feed is a parse error there)"""
_MEMBERS: Final = frozenset({"jsonrpc", "id", "method", "params"})
_NOTIFICATION: Final = frozenset({"jsonrpc", "method", "params"})
_PARAMS: Final = frozenset({"name", "arguments"})


class _Float(ValueError):
    """A float or a constant in a line read for a call."""


def _refuse(literal: str) -> Any:
    raise _Float(literal)


_PLAIN_DECODER: Final = json.JSONDecoder(parse_float=_refuse, parse_constant=_refuse)
"""``json.loads`` refusing floats and constants, made once (``loads`` makes a decoder per call
for these hooks)"""


def classify(raw: bytes) -> Line:
    """What the line ``raw`` (its line end included or not) is for the stdio dispatcher (module
    docstring). Never raises."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return _OTHER_LINE
    if not text.strip(_WHITESPACE):
        return _BLANK_LINE
    plain, floats = True, False
    try:
        if may_rewrite(text):  # maybe inside a string only (a path "pytest-0/a"): read the literals
            value, rewritten, floats = read_noting_numbers(text)
            plain = not rewritten
        else:
            try:
                value = _PLAIN_DECODER.decode(text)
            except _Float:
                floats = True
                value = json.loads(text)
    except (ValueError, RecursionError):
        return _OTHER_LINE
    if type(value) is not dict or value.get("jsonrpc") != "2.0":
        return _OTHER_LINE
    if "method" not in value:
        answered = value.get("id")
        if (type(answered) is int or type(answered) is str) and ("result" in value) != ("error" in value):
            return Line(RESPONSE, answered, value)
        return _OTHER_LINE
    method = value.get("method")
    if method == "tools/call":
        call = _plain_call(value) if plain and not floats else None
        return Line(CALL, call[0], call[1]) if call is not None else _OTHER_LINE
    if method == "tools/list":
        request_id = _list_request(value) if plain else None
        return Line(LIST, request_id) if request_id is not None else _OTHER_LINE
    if method == "notifications/cancelled":
        target = _cancelled(value) if plain else None
        return Line(CANCEL, target) if target is not None else _OTHER_LINE
    if method == "notifications/roots/list_changed":
        plain_notification = "id" not in value and value.keys() <= _NOTIFICATION and _meta_only(value.get("params", {}))
        return Line(ROOTS_CHANGED) if plain_notification else _OTHER_LINE
    if method == "notifications/initialized":
        return Line(INITIALIZED) if value.keys() <= _NOTIFICATION and value.get("params", {}) == {} else _OTHER_LINE
    if method == "initialize":
        message = _initialize_request(raw)
        return Line(INITIALIZE, message["id"], message["params"]) if message is not None else _OTHER_LINE
    return _OTHER_LINE


def plain_call(raw: bytes) -> tuple[int | str, dict[str, Any]] | None:
    """``(id, params)`` of ``raw`` (one line) when it is a plain ``tools/call`` request, read as
    the SDK path reads it (``server.parse_line``: the same id, params, types and key order);
    ``None`` otherwise (module docstring). Never raises."""
    line = classify(raw)
    return (line.id, line.params) if line.kind == CALL else None


def _plain_call(value: dict[str, Any]) -> tuple[int | str, dict[str, Any]] | None:
    if value.keys() != _MEMBERS:
        return None
    request_id = value["id"]
    kind = type(request_id)
    if kind is not int and kind is not str:
        return None
    params = value["params"]
    if type(params) is not dict or not params.keys() <= _PARAMS or type(params.get("name")) is not str:
        return None
    return request_id, params


def _list_request(value: dict[str, Any]) -> int | str | None:
    """The id of a ``tools/list`` request with no ``params`` (or ``{}``) and a string or integer
    id; else ``None``."""
    if not value.keys() <= _MEMBERS or value.get("params", {}) != {}:
        return None
    request_id = value.get("id")
    return request_id if type(request_id) is int or type(request_id) is str else None


def _cancelled(value: dict[str, Any]) -> int | str | None:
    """The ``requestId`` of a ``notifications/cancelled`` (a string or an integer, not a
    ``bool``: the SDK's ``as_request_id``), or ``None``."""
    params = value.get("params")
    if "id" in value or type(params) is not dict:
        return None
    target = params.get("requestId")
    return target if type(target) is int or type(target) is str else None


def _meta_only(params: Any) -> bool:
    """``params`` of nothing but an optional ``_meta`` object."""
    return type(params) is dict and params.keys() <= _META and type(params.get("_meta", {})) is dict


_META: Final = frozenset({"_meta"})
_ROOTS_RESULT: Final = frozenset({"roots", "_meta"})
_ROOT: Final = frozenset({"uri", "name", "_meta"})
_PLAIN_FILE_URI: Final = re.compile(r"file:///(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/]|%[0-9A-Fa-f]{2})*")
_DOT_SEGMENT: Final = re.compile(r"/\.\.?(?:/|$)|%2[eE]")


def plain_roots(result: Any) -> list[str] | None:
    """The URIs of the ``roots/list`` result ``result`` (a client's answer), when the SDK's
    session provably reads the same (``server.roots_of``: ``str(root.uri)`` of its ``FileUrl``):
    only ``roots`` (each of ``uri``, ``name``? a string or ``null``, ``_meta``? an object or
    ``null``) and ``_meta``?, every ``uri`` a ``file:///`` URI of unreserved and sub-delimiter
    characters and percent escapes with no dot segment and no empty one (``FileUrl`` rewrites
    those); else
    ``None`` (the SDK's reading then). Never raises."""
    if type(result) is not dict or not result.keys() <= _ROOTS_RESULT:
        return None
    if result.get("_meta") is not None and type(result["_meta"]) is not dict:
        return None
    roots = result.get("roots")
    if type(roots) is not list:
        return None
    uris = []
    for root in roots:
        if type(root) is not dict or not root.keys() <= _ROOT:
            return None
        uri, name, meta = root.get("uri"), root.get("name"), root.get("_meta")
        if (type(uri) is not str or (name is not None and type(name) is not str)
                or (meta is not None and type(meta) is not dict)):
            return None
        if _PLAIN_FILE_URI.fullmatch(uri) is None or _DOT_SEGMENT.search(uri) is not None or "//" in uri[7:]:
            return None
        uris.append(uri)
    return uris


def coerce_id(request_id: Any) -> Any:
    """A request id as the SDK's dispatcher correlates it (``coerce_request_id``: a string of
    an integer is that integer)."""
    if isinstance(request_id, str):
        try:
            return int(request_id)
        except ValueError:
            pass
    return request_id


# -- answers as bytes ---------------------------------------------------------------------------------

_INT_MIN: Final = -(2**63)
_INT_MAX: Final = 2**64 - 1
_to_json: Any = None


def response_line(request_id: int | str, result: dict[str, Any]) -> bytes | None:
    """The line (``\\n`` included) the SDK path writes for ``JSONRPCResponse(jsonrpc="2.0",
    id=request_id, result=result)`` (``server.encode_message``), or ``None`` when ``result`` (or
    the id) holds anything but strings, ``bool``, ``None``, integers within 64 bits, lists and
    objects with string keys (a float, ``NaN`` included: ``to_json`` writes the constants where
    the model writes ``null``), or a lone surrogate anywhere (pydantic refuses it;
    ``encode_message`` repairs it). ``json.dumps`` was measured 3× slower than ``to_json`` on a
    12 KB answer. Never raises."""
    global _to_json
    if not _plain(request_id) or not _plain(result):
        return None
    if _to_json is None:
        from pydantic_core import to_json

        _to_json = to_json
    try:  # the serializer the model's ``result: dict[str, Any]`` and ``id`` fields use
        return _to_json({"jsonrpc": "2.0", "id": request_id, "result": result}) + b"\n"  # type: ignore[no-any-return]
    except (ValueError, TypeError, RecursionError):  # a lone surrogate (PydanticSerializationError)
        return None


def _plain(value: Any) -> bool:
    """Whether ``value`` holds only strings, ``bool``, ``None``, 64-bit integers, lists and
    objects with string keys (iterative: any depth; a cycle or ``float`` is refused)."""
    stack = [value]
    seen = 0
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is str or kind is bool or item is None:
            continue
        if kind is int:
            if not _INT_MIN <= item <= _INT_MAX:
                return False
            continue
        seen += 1
        if seen > 100_000:  # a cycle (or a value too large to be worth it)
            return False
        if kind is list:
            stack.extend(item)
        elif kind is dict:
            for key in item:
                if type(key) is not str:
                    return False
            stack.extend(item.values())
        else:
            return False
    return True


_WIRE: Final = frozenset({"content", "isError", "_meta"})
_TEXT_BLOCK: Final = frozenset({"type", "text"})
_IMAGE_BLOCK: Final = frozenset({"type", "data", "mimeType"})
_TOOL: Final = ("annotations", "description", "inputSchema", "name")
"""a ``Tool``'s members in the order the SDK dumps them (the model's field order)"""
_SCHEMA: Final = ("properties", "required", "type")
"""an ``inputSchema``'s members in the order the SDK dumps them"""
_HINTS: Final = ("destructiveHint", "idempotentHint", "openWorldHint", "readOnlyHint")
"""``ToolAnnotations`` members (``title`` aside) in the order the SDK dumps them"""
_TOOL_KEYS: Final = frozenset(_TOOL)
_TOOL_NEEDS: Final = frozenset({"name", "description", "inputSchema"})
_SCHEMA_KEYS: Final = frozenset(_SCHEMA)
_HINT_KEYS: Final = frozenset(_HINTS)


def call_surface(wire: Any) -> dict[str, Any] | None:
    """The SDK's dump of the ``CallToolResult`` ``wire`` (:func:`call_result`'s dict: what
    ``serialize_server_result("tools/call", version, server.handler_result(result))`` gives,
    members in the model's field order, ``resultType`` dropped) at every handshake protocol
    version, or ``None`` when ``wire`` is not of the plain shape: only ``content`` (text blocks
    ``{type, text}``, image blocks ``{type, data, mimeType}``, string values), ``isError`` (a
    ``bool``) and ``_meta`` (an object with string keys, dumped as it is: :func:`response_line`
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
        if keys == _TEXT_BLOCK and block["type"] == "text" and type(block["text"]) is str:
            blocks.append({"text": block["text"], "type": "text"})
        elif (keys == _IMAGE_BLOCK and block["type"] == "image" and type(block["data"]) is str
              and type(block["mimeType"]) is str):
            blocks.append({"data": block["data"], "mimeType": block["mimeType"], "type": "image"})
        else:
            return None
    surface["content"] = blocks
    surface["isError"] = is_error
    return surface


def call_answer(request_id: int | str, wire: Any) -> bytes | None:
    """The SDK path's answer line (``\\n`` included) to the ``tools/call`` request
    ``request_id`` whose result is ``wire`` (:func:`call_result`'s dict), at any handshake
    version; ``None`` when it is not provably the SDK's (:func:`call_surface`,
    :func:`response_line`). Never raises."""
    surface = call_surface(wire)
    return response_line(request_id, surface) if surface is not None else None


def list_surface(entries: Any) -> dict[str, Any] | None:
    """The SDK's dump of ``ListToolsResult(tools=[Tool.model_validate(e) for e in entries])``
    (``server.build_server``'s ``tools/list`` handler, then ``serialize_server_result``) at
    every handshake protocol version, or ``None`` when an entry is not of the plain shape
    :func:`tool_entries` gives: ``name`` and ``description`` strings, an ``inputSchema`` of
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
    ``request_id`` for the tools ``entries`` (:func:`tool_entries`), at any handshake version;
    ``None`` when it is not provably the SDK's (:func:`list_surface`, :func:`response_line`).
    Never raises."""
    surface = list_surface(entries)
    return response_line(request_id, surface) if surface is not None else None


def error_line(request_id: Any, code: int, message: str) -> bytes:
    """The SDK path's line (``\\n`` included) for ``JSONRPCError(jsonrpc="2.0", id=request_id,
    error=ErrorData(code=code, message=message))`` (``server.encode_message``: the model's
    serializer; an id with a lone surrogate kept, ASCII-escaped, so the client can still match it).

    :param request_id: a string, an integer or ``None``
    """
    global _to_json
    if _to_json is None:
        from pydantic_core import to_json

        _to_json = to_json
    reply = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
    try:
        return _to_json(reply) + b"\n"  # type: ignore[no-any-return]
    except (ValueError, TypeError):  # a lone surrogate in the id
        return json.dumps(reply, separators=(",", ":")).encode("ascii") + b"\n"


# -- an id found without parsing --------------------------------------------------------------------

_NESTING: Final = re.compile(r'[\[\]{}"]')
SKIPPED: Final[Any] = object()
"""what :func:`scan_id` gives for an ``id`` whose value is an array or an object"""
MISSING: Final[Any] = object()
"""what :func:`scan_id` gives when there is no top-level ``id``"""


def recover_id(text: str) -> str | int | None:
    """The ``id`` member of the JSON object ``text`` if it is a string or an integer, found
    without parsing nested values (so even past a value too deep to parse, or in the first part
    of a line too long to keep). ``None`` when there is no such member, or when it comes after
    a syntax error.

    :param text: one JSON-RPC line, possibly malformed or cut
    """
    value = scan_id(text)
    return value if _is_id(value) else None


def scan_id(text: str) -> Any:
    """The value of the last top-level ``id`` member of the JSON object ``text``
    (:data:`SKIPPED` for an array or an object) before the end or a syntax error;
    :data:`MISSING` if there is none."""
    found: Any = MISSING
    decoder = json.JSONDecoder()
    try:
        at = _skip_space(text, 0)
        if text[at] != "{":
            return found
        at = _skip_space(text, at + 1)
        while text[at] == '"':
            key, at = json.decoder.scanstring(text, at + 1)  # type: ignore[attr-defined]
            at = _skip_space(text, at)
            if text[at] != ":":
                return found
            at = _skip_space(text, at + 1)
            if text[at] in "[{":
                value, at = SKIPPED, _skip_nested(text, at)
            else:
                value, at = decoder.raw_decode(text, at)
            if key == "id":
                found = value  # the last one wins, as in json.loads
            at = _skip_space(text, at)
            if text[at] != ",":
                return found
            at = _skip_space(text, at + 1)
    except (ValueError, IndexError):
        pass
    return found


def _skip_space(text: str, at: int) -> int:
    while at < len(text) and text[at] in _WHITESPACE:
        at += 1
    return at


def _skip_nested(text: str, at: int) -> int:
    """The index after the array or object that starts at ``text[at]`` (iterative: any depth).

    :raises ValueError: it does not end (or a string in it does not)
    """
    depth = 0
    while True:
        match = _NESTING.search(text, at)
        if match is None:
            raise ValueError("unterminated array or object")
        char, at = match.group(), match.end()
        if char == '"':
            at = json.decoder.scanstring(text, at, False)[1]  # type: ignore[attr-defined]
        elif char in "[{":
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return at


def _is_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))
