"""The lean path's JSON without pydantic: a plain ``tools/call`` line read, and its answer
written, each only where the bytes are provably what the SDK path makes of them.

The SDK path reads a line with ``stdio.parse_line`` (``js_numbers``, then pydantic's JSON-RPC
validation) and writes an answer with ``stdio.encode_message`` (pydantic's
``model_dump_json(by_alias=True, exclude_unset=True)`` of a ``JSONRPCResponse``). About 20 µs a
round trip of a small ``read`` (bench/README.md, "The MCP stdio round trip, fourth pass"). Here:

* ``plain_call``: one ``json.loads``, then a strict shape check. Anything it is not sure of is
  ``None`` (the caller then takes the SDK path): text that is not strict UTF-8, a number
  ``js_numbers`` may rewrite (``-0``, 16 digits or more, anywhere in the line), a float, ``NaN``
  or ``Infinity`` (pydantic's float reading is not Python's to the last bit, and it refuses the
  constants), any member beyond ``jsonrpc``/``id``/``method``/``params``, an ``id`` that is not a
  string or an integer, ``params`` beyond ``name`` (a string) and ``arguments``.
* ``response_line``: the message as a plain dict through ``pydantic_core.to_json``, the
  serializer the model's ``id`` and ``result: dict[str, Any]`` fields use, without building and
  dumping the ``JSONRPCResponse`` model (``json.dumps`` was measured 3× slower than it on a 12 KB
  answer). ``None`` (the SDK's encoding then) for a result holding anything but strings,
  ``bool``, ``None``, integers within 64 bits, lists and objects with string keys (a float,
  ``NaN`` included: ``to_json`` writes the constants where the model writes ``null``), or a lone
  surrogate anywhere (pydantic refuses it; ``encode_message`` repairs it).

``tests/unit/mcp/test_mcp_fastwire.py`` holds both to the SDK's functions (hypothesis), and
``tests/unit/mcp/test_mcp_lean.py`` the whole answers to the SDK path's.
"""

from __future__ import annotations

import json
from typing import Any, Final

import pydantic_core

from ..core.jsonvalue import may_rewrite

__all__ = ("plain_call", "response_line")

_MEMBERS: Final = frozenset({"jsonrpc", "id", "method", "params"})
_PARAMS: Final = frozenset({"name", "arguments"})
_INT_MIN: Final = -(2**63)
_INT_MAX: Final = 2**64 - 1


def _refuse(literal: str) -> Any:
    raise ValueError(f"not a plain value: {literal}")


_DECODER: Final = json.JSONDecoder(parse_float=_refuse, parse_constant=_refuse)
"""``json.loads`` with these hooks, made once (``loads`` makes a decoder per call for them)"""


def plain_call(raw: bytes) -> tuple[int | str, dict[str, Any]] | None:
    """``(id, params)`` of ``raw`` (one stdin line, its line end included or not) when it is a
    plain ``tools/call`` request whose SDK-path reading (``stdio.parse_line``) is provably the
    same JSON-RPC request with these values; ``None`` otherwise (module docstring).
    Never raises."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if may_rewrite(text):
        return None
    try:
        value = _DECODER.decode(text)
    except (ValueError, RecursionError):
        return None
    if type(value) is not dict or value.keys() != _MEMBERS:
        return None
    if value["method"] != "tools/call" or value["jsonrpc"] != "2.0":
        return None
    request_id = value["id"]
    kind = type(request_id)
    if kind is not int and kind is not str:
        return None
    params = value["params"]
    if type(params) is not dict or not params.keys() <= _PARAMS or type(params.get("name")) is not str:
        return None
    return request_id, params


def response_line(request_id: int | str, result: dict[str, Any]) -> bytes | None:
    """The line (``\\n`` included) ``encode_message`` writes for ``JSONRPCResponse(jsonrpc="2.0",
    id=request_id, result=result)``, or ``None`` when ``result`` (or the id) holds anything
    whose bytes are not provably pydantic's (module docstring). Never raises."""
    if not _plain(request_id) or not _plain(result):
        return None
    try:  # the serializer the model's ``result: dict[str, Any]`` and ``id`` fields use
        return pydantic_core.to_json({"jsonrpc": "2.0", "id": request_id, "result": result}) + b"\n"
    except (ValueError, TypeError, RecursionError, pydantic_core.PydanticSerializationError):
        return None  # a lone surrogate


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
