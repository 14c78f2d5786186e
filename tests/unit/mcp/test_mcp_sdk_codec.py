"""The SDK path's line codec (``dsh_fs.mcp.server``), pure: each line becomes a message, an error reply or
nothing (``parse_line``, ``recover_id``); every outgoing message is one valid UTF-8 JSON line
(``encode_message``), byte for byte what the SDK would write where the SDK can write it.

The transport that uses them (every reply written, through the end of input; stray output
never on the wire) is in ``tests/e2e/mcp/test_mcp_stdio_transport.py``.
"""

from __future__ import annotations

import json
from typing import Any

import mcp.types as types
import pytest
from mcp.shared.message import SessionMessage

from dsh_fs.mcp.server import encode_message, parse_line
from dsh_fs.mcp.wire import recover_id
from mcpkit import raw_request

DEEP = "[" * 5000 + "]" * 5000


# -- reading ------------------------------------------------------------------------------------


def test_a_line_the_sdk_accepts_is_the_sdks_message() -> None:
    line = raw_request(1, '{"name":"read","arguments":{"file_path":"a.txt"}}')
    item = parse_line(line + "\n")
    assert isinstance(item, SessionMessage)
    assert item.message == types.jsonrpc_message_adapter.validate_json(line, by_name=False)


@pytest.mark.parametrize(
    ("params_json", "expected"),
    [
        ('{"name":"read","arguments":{"file_path":"\\ud800"}}', {"name": "read", "arguments": {"file_path": "\ud800"}}),
        ('{"name":"\\udc00x","arguments":{}}', {"name": "\udc00x", "arguments": {}}),
        ('{"name":"read","arguments":{"k":' + "[" * 500 + "]" * 500 + "}}",
         {"name": "read", "arguments": {"k": json.loads("[" * 500 + "]" * 500)}}),
    ],
    ids=["lone surrogate in an argument", "lone surrogate in the name", "nested 500 deep"],
)
def test_a_line_the_sdk_refuses_but_python_parses_is_a_message(params_json: str, expected: Any) -> None:
    item = parse_line(raw_request(7, params_json))
    assert isinstance(item, SessionMessage)
    assert isinstance(item.message, types.JSONRPCRequest)
    assert item.message.id == 7
    assert item.message.params == expected


@pytest.mark.parametrize("line", ['{"jsonrpc":"2.0","method":"notifications/initialized","id":null}',
                                  '{"jsonrpc":"2.0","method":"notifications/x","id":null,"params":{"s":"\\ud800"}}'])
def test_a_notification_with_a_null_id_is_a_notification(line: str) -> None:
    item = parse_line(line)
    assert isinstance(item, SessionMessage) and isinstance(item.message, types.JSONRPCNotification)


@pytest.mark.parametrize(
    ("line", "code", "request_id"),
    [
        (raw_request(3, '{"name":"read","arguments":{"file_path":' + DEEP + "}}"), types.PARSE_ERROR, 3),
        ('{"jsonrpc":"2.0","params":{"a":' + DEEP + '},"method":"x","id":"late"}', types.PARSE_ERROR, "late"),
        ('{"jsonrpc":"2.0","id":4,"method":', types.PARSE_ERROR, 4),
        ('{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"a":[1,}}', types.PARSE_ERROR, 5),
        ("not json", types.PARSE_ERROR, None),
        ('{"jsonrpc":"2.0","id":1' + "0" * 5000 + ',"method":"ping"}', types.PARSE_ERROR, None),
        ("[]", types.INVALID_REQUEST, None),
        ("42", types.INVALID_REQUEST, None),
        ('{"id":6}', types.INVALID_REQUEST, 6),
        ('{"jsonrpc":"2.0","id":"x","method":7}', types.INVALID_REQUEST, "x"),
        ('{"jsonrpc":"2.0","id":1.5,"method":"ping"}', types.INVALID_REQUEST, None),  # not a notification
        ('{"jsonrpc":"2.0","method":"ping","id":true}', types.INVALID_REQUEST, None),
        ('{"jsonrpc":"2.0","method":"ping","id":{"a":1},"params":{"s":"\\ud800"}}', types.INVALID_REQUEST, None),
        ('{"jsonrpc":"1.0","id":8,"method":"ping"}', types.INVALID_REQUEST, 8),
    ],
)
def test_a_line_that_is_not_a_message_gets_an_error_reply(line: str, code: int, request_id: Any) -> None:
    item = parse_line(line)
    assert isinstance(item, types.JSONRPCError), item
    assert (item.error.code, item.id) == (code, request_id)


@pytest.mark.parametrize(
    "line",
    ["", "\n", " \t\r\n",
     '{"jsonrpc":"2.0","method":"notifications/x","params":[1]}',  # an invalid notification
     '{"jsonrpc":"2.0","method":"notifications/x","id":null,"params":[1]}',
     '{"jsonrpc":"2.0","id":9,"result":7}',  # an invalid response
     '{"jsonrpc":"2.0","id":9,"error":"no"}'],
)
def test_blank_lines_invalid_notifications_and_responses_get_no_reply(line: str) -> None:
    assert parse_line(line) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a":{"b":[1,"]}",{"c":"\\"}"}]},"id":9}', 9),
        (' { "id" : "x" , "id" : 3 }', 3),
        ('{"id":"\\ud800"}', "\ud800"),
        ('{"params":' + DEEP + ',"id":2}', 2),
        ('{"id":1.5}', None),
        ('{"id":true}', None),
        ('{"id":null}', None),
        ('{"id":[1]}', None),
        ('{"method":"x"}', None),
        ('{"a":[[[1,"x"],"id":4}', None),  # never balanced
        ('{"id":5,"a":[[[', 5),
        ("[1]", None),
        ("", None),
        ("{", None),
    ],
)
def test_recover_id(text: str, expected: Any) -> None:
    assert recover_id(text) == expected


# -- writing ------------------------------------------------------------------------------------


def test_a_message_is_encoded_as_the_sdk_encodes_it() -> None:
    message = types.JSONRPCResponse(jsonrpc="2.0", id=1, result={"content": [{"type": "text", "text": "é€😀"}]})
    assert encode_message(message) == message.model_dump_json(by_alias=True, exclude_unset=True)


def test_lone_surrogates_become_u_fffd_and_an_id_keeps_them_escaped() -> None:
    message = types.JSONRPCResponse(jsonrpc="2.0", id="\ud800", result={"t": "a\udfffb", "\udc00k": ["\ud83d\ude00"]})
    text = encode_message(message)
    text.encode("utf-8")
    assert "\\ud800" in text
    assert json.loads(text) == {"jsonrpc": "2.0", "id": "\ud800", "result": {"t": "a\ufffdb", "\ufffdk": ["😀"]}}
    error = types.JSONRPCError(jsonrpc="2.0", id=2, error=types.ErrorData(code=-32601, message="x", data="m\udc00"))
    assert json.loads(encode_message(error))["error"] == {"code": -32601, "message": "x", "data": "m\ufffd"}


def test_a_reply_that_cannot_be_serialized_becomes_an_internal_error() -> None:
    deep: Any = []
    for _ in range(5000):
        deep = [deep]
    text = encode_message(types.JSONRPCResponse(jsonrpc="2.0", id=3, result={"v": deep}))
    reply = json.loads(text)
    assert reply["id"] == 3 and reply["error"]["code"] == types.INTERNAL_ERROR
    with pytest.raises(ValueError):
        encode_message(types.JSONRPCNotification(jsonrpc="2.0", method="x", params={"v": deep}))
