"""Our reading and writing of a line without pydantic (``dsh_fs.mcp.wire``) held to the SDK path's
own functions: ``plain_call`` reads what ``server.parse_line`` reads (same id, same params, same
types, same key order) or declines; ``response_line`` writes what ``server.encode_message``
writes for the same ``JSONRPCResponse`` or declines. Generated lines and results (hypothesis),
and the edge cases by name."""

from __future__ import annotations

import json
from typing import Any

import mcp.types as types
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp.shared.message import SessionMessage

from dsh_fs.mcp.server import encode_message, parse_line
from dsh_fs.mcp.wire import plain_call, response_line


def _typed(value: Any) -> Any:
    """``value`` with every scalar's type and every object's key order made part of it."""
    if isinstance(value, dict):
        return ("dict", [(key, _typed(item)) for key, item in value.items()])
    if isinstance(value, list):
        return ("list", [_typed(item) for item in value])
    return (type(value).__name__, repr(value))


def _sdk_reading(raw: bytes) -> tuple[Any, Any] | None:
    item = parse_line(raw.decode("utf-8", "replace"))
    if not isinstance(item, SessionMessage) or not isinstance(item.message, types.JSONRPCRequest):
        return None
    return item.message.id, item.message.params


def _agrees(raw: bytes) -> bool:
    """``plain_call(raw)`` is ``None`` or the SDK's reading; returns whether it read it."""
    fast = plain_call(raw)
    if fast is None:
        return False
    sdk = _sdk_reading(raw)
    assert sdk is not None, raw
    assert sdk[0] == fast[0] and type(sdk[0]) is type(fast[0]), raw
    assert sdk[1] is not None and _typed(sdk[1]) == _typed(fast[1]), raw
    assert sdk[1].get("name") == fast[1]["name"]
    return True


PLAIN = [
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","arguments":{"file_path":"a.txt"}}}',
    b'{"id":"x","params":{"arguments":{"file_path":"a","offset":5,"limit":3},"name":"read"},'
    b'"method":"tools/call","jsonrpc":"2.0"}\n',
    b'{"jsonrpc":"2.0","id":-7,"method":"tools/call","params":{"name":"read"}}',
    b'{"jsonrpc":"2.0","id":9007199254740,"method":"tools/call","params":{"name":"read","arguments":null}}',
    b'{"jsonrpc":"2.0","id":"\\u00e9\\u2028","method":"tools/call","params":{"name":"r","arguments":[1,true,null]}}',
    b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read","arguments":{"file_path":"\\ud800"}}}',
    b' {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read","arguments":{"a":1,"a":2}}} ',
    # what js_numbers rewrites, but inside strings only (a fresh machine's "/tmp/pytest-of-root/pytest-0/")
    b'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"read","arguments":{"file_path":"/t/pytest-0/a"}}}',
    b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"read","arguments":{"file_path":"-0","limit":3}}}',
    b'{"jsonrpc":"2.0","id":"12345678901234567890","method":"tools/call","params":{"name":"edit","arguments":'
    b'{"file_path":"a","old_string":"x-0","new_string":"9007199254740993"}}}',
]
DECLINED = [
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","arguments":{"offset":-0}}}',
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","arguments":{"p":"-0","offset":-0}}}',
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","arguments":{"p":"-0","o":0.5}}}',
    b'{"jsonrpc":"2.0","id":12345678901234567890,"method":"tools/call","params":{"name":"read"}}',
    b'{"jsonrpc":"2.0","id":12345678901234567890,"method":"tools/call","params":{"name":"read","arguments":"-0"}}',
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","arguments":{"limit":9007199254740993}}}',
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","arguments":{"offset":1.0}}}',
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","arguments":{"limit":1e2}}}',
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","arguments":{"limit":NaN}}}',
    b'{"jsonrpc":"2.0","id":1.0,"method":"tools/call","params":{"name":"read"}}',
    b'{"jsonrpc":"2.0","id":true,"method":"tools/call","params":{"name":"read"}}',
    b'{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"read"}}',
    b'{"jsonrpc":"2.0","method":"tools/call","params":{"name":"read"}}',
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","_meta":{"progressToken":1}}}',
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5}}',
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[1]}',
    b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"name":"read"}}',
    b'{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"read"}}',
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read"},"extra":1}',
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","arguments":"\xff"}}',
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read"}',
    b"\xef\xbb\xbf" + b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read"}}',
    b"[]",
    b"",
]


@pytest.mark.parametrize("raw", PLAIN)
def test_a_plain_call_is_read_as_the_sdk_reads_it(raw: bytes) -> None:
    assert _agrees(raw)


@pytest.mark.parametrize("raw", DECLINED)
def test_anything_else_is_left_to_the_sdk_path(raw: bytes) -> None:
    assert plain_call(raw) is None


scalars = (st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats()
           | st.text(max_size=6) | st.text(st.characters(categories=["Cs", "Cc", "Zl"]), max_size=3))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(st.text(max_size=4), inner, max_size=3), max_leaves=8)


def _line(request_id: Any, params: Any, extra: dict[str, Any]) -> bytes | None:
    message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params, **extra}
    try:
        return json.dumps(message, ensure_ascii=False).encode("utf-8", "surrogatepass")
    except ValueError:
        return None


plain_params = st.fixed_dictionaries({"name": st.sampled_from(["read", "edit"])}, optional={"arguments": values})


@settings(max_examples=400, deadline=None)
@given(request_id=st.one_of(st.integers(-(2**60), 2**60), st.text(max_size=5), values),
       params=st.one_of(plain_params, plain_params, plain_params, values),  # mostly plain: read, not declined
       extra=st.one_of(st.just({}), st.just({}), st.dictionaries(st.sampled_from(["x", "_meta"]), values, max_size=1)),
       ascii_only=st.booleans())
def test_generated_lines_are_read_as_the_sdk_reads_them_or_declined(
    request_id: Any, params: Any, extra: dict[str, Any], ascii_only: bool
) -> None:
    raw = _line(request_id, params, extra)
    if raw is None:
        return
    if ascii_only:
        raw = json.dumps(json.loads(raw.decode("utf-8", "surrogatepass"))).encode()
    _agrees(raw)


def _sdk_line(request_id: Any, result: dict[str, Any]) -> bytes | None:
    try:
        return encode_message(types.JSONRPCResponse(jsonrpc="2.0", id=request_id, result=result)).encode() + b"\n"
    except (ValueError, UnicodeEncodeError):
        return None


RESULTS = [
    {"content": [{"type": "text", "text": "1: x\n2: \u00e9 \u2028 \x00 \x1f \x7f \"q\" \\ / \t\b\f\r 😀"}],
     "isError": False},
    {"content": [], "isError": True, "_meta": {"ints": [2**53 + 1, -(2**63), 0, 2**64 - 1], "nested": [[{}], None]}},
    {"resultType": "complete", "content": [{"type": "image", "data": "iVBO", "mimeType": "image/png"}]},
]


@pytest.mark.parametrize("result", RESULTS)
@pytest.mark.parametrize("request_id", [1, -7, 0, "two", "\u00e9\u2028", "", 2**53 - 1])
def test_an_answer_is_the_sdks_line(request_id: Any, result: dict[str, Any]) -> None:
    assert response_line(request_id, result) == _sdk_line(request_id, result)


@pytest.mark.parametrize("result", [
    {"_meta": {"f": 1e16}}, {"_meta": {"f": 0.1}}, {"_meta": {"nan": float("nan")}}, {"text": "\ud800"},
    {"\udc00": 1}, {"big": 2**64}, {1: "int key"}, {"t": (1, 2)}, {"b": b"x"},
])
def test_an_answer_pydantic_writes_its_own_way_is_left_to_the_sdk(result: dict[str, Any]) -> None:
    assert response_line(1, result) is None


def test_a_lone_surrogate_in_the_id_is_left_to_the_sdk() -> None:
    assert response_line("\ud800", {"isError": False}) is None


def test_a_cycle_is_declined_not_a_hang() -> None:
    result: dict[str, Any] = {"content": []}
    result["content"].append(result)
    assert response_line(1, result) is None


@settings(max_examples=400, deadline=None)
@given(request_id=st.integers(-(2**63), 2**63) | st.text(max_size=5),
       result=st.dictionaries(st.text(max_size=4), values, max_size=4))
def test_generated_answers_are_the_sdks_lines_or_declined(request_id: Any, result: dict[str, Any]) -> None:
    fast = response_line(request_id, result)
    if fast is not None:
        assert fast == _sdk_line(request_id, result)


# -- what a line is (wire.classify) -------------------------------------------------------------

from dsh_fs.mcp.wire import CALL, CANCEL, INITIALIZED, LIST, OTHER, classify, error_line  # noqa: E402

BOM = b"\xef\xbb\xbf"
CANCEL_LINE = b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}\n'
LIST_LINE = b'{"jsonrpc":"2.0","id":"x","method":"tools/list"}\n'
INITIALIZED_LINE = b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'


def test_the_kinds_read_text_as_the_sdk_path_does() -> None:
    """A BOM is no part of a JSON text on the SDK path (``server.parse_line``: a parse error),
    nor are encoded surrogates (strict UTF-8); a form feed is no blank."""
    assert classify(CANCEL_LINE).kind == CANCEL and classify(CANCEL_LINE).id == 2
    assert classify(BOM + CANCEL_LINE).kind == OTHER
    assert classify(LIST_LINE).kind == LIST and classify(LIST_LINE).id == "x"
    assert classify(BOM + LIST_LINE).kind == OTHER
    assert classify(LIST_LINE.replace(b'"x"', b'"\xed\xa0\x80"')).kind == OTHER
    assert classify(INITIALIZED_LINE).kind == INITIALIZED and classify(BOM + INITIALIZED_LINE).kind == OTHER
    assert classify(b" \t\r\n").kind == "blank" and classify(b"\x0c\n").kind == OTHER
    assert classify(b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"c"}}').kind == OTHER
    assert classify(b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":null}').kind == OTHER
    assert classify(b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":true}}').kind == OTHER
    assert classify(b'{"jsonrpc":"2.0","id":3,"method":"notifications/cancelled","params":{"requestId":2}}').kind == OTHER
    floats = b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"2","x":0.5}}'
    assert classify(floats).kind == CANCEL and classify(floats).id == "2"  # a float elsewhere: still one
    assert classify(b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":-0}}').kind == OTHER
    in_strings = b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"r-0","reason":"1234567890123456"}}'
    assert classify(in_strings).kind == CANCEL and classify(in_strings).id == "r-0"
    assert classify(b'{"jsonrpc":"2.0","id":"-0","method":"tools/list"}').id == "-0"


kinds = st.sampled_from(["tools/list", "notifications/cancelled", "notifications/initialized", "tools/call", "ping"])


@settings(max_examples=400, deadline=None)
@given(method=kinds, request_id=st.one_of(st.none(), st.integers(-(2**60), 2**60), st.text(max_size=4), values),
       params=st.one_of(st.none(), st.just({}), values,
                        st.fixed_dictionaries({"requestId": st.one_of(st.integers(-5, 5), st.text(max_size=3), values)},
                                              optional={"reason": values})),
       ascii_only=st.booleans())
def test_a_kind_is_given_only_where_the_sdk_reads_that_message(method: str, request_id: Any, params: Any,
                                                                ascii_only: bool) -> None:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if request_id is not None:
        message["id"] = request_id
    if params is not None:
        message["params"] = params
    try:
        raw = json.dumps(message, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")
    except ValueError:
        return
    line = classify(raw)
    if line.kind == OTHER:
        return
    item = parse_line(raw.decode("utf-8", "replace"))
    assert isinstance(item, SessionMessage), raw
    sdk = item.message
    assert sdk.method == method
    if line.kind == LIST:
        assert isinstance(sdk, types.JSONRPCRequest) and sdk.id == line.id and type(sdk.id) is type(line.id)
    elif line.kind == CANCEL:
        assert isinstance(sdk, types.JSONRPCNotification) and sdk.params is not None
        assert sdk.params["requestId"] == line.id and type(sdk.params["requestId"]) is type(line.id)
    elif line.kind == INITIALIZED:
        assert isinstance(sdk, types.JSONRPCNotification)
    else:
        assert line.kind == CALL and isinstance(sdk, types.JSONRPCRequest) and sdk.id == line.id


@pytest.mark.parametrize("request_id", [1, "x", None, "\u00e9\u2028", "\ud800", 2**63, -(2**53)])
def test_an_error_line_is_the_sdks(request_id: Any) -> None:
    error = types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=-32600, message="too big é"))
    assert error_line(request_id, -32600, "too big é") == encode_message(error).encode("utf-8") + b"\n"


# -- a client's roots (wire.plain_roots) --------------------------------------------------------

from dsh_fs.mcp.server import roots_of  # noqa: E402
from dsh_fs.mcp.wire import HANDSHAKE_PROTOCOL_VERSIONS, plain_roots  # noqa: E402

uri_chars = st.sampled_from(list("abcXYZ019-._~!$&'()*+,;=:@/%") + ["%2e", "%2E", "%20", "%zz", "..", " ", "é", "\\"])
uris = st.one_of(
    st.lists(uri_chars, max_size=10).map(lambda parts: "file:///" + "".join(parts)),
    st.sampled_from(["file://localhost/tmp", "file:/tmp", "http://x/y", "file:///a/./b", "file:///a/..", "FILE:///a",
                     "file:///a%2Fb", "file:///", "file:////x"]),
)
roots_entries = st.fixed_dictionaries({"uri": uris}, optional={"name": st.none() | st.text(max_size=3),
                                                                "_meta": st.none() | st.just({"k": 1})})
roots_results = st.fixed_dictionaries({"roots": st.lists(roots_entries, max_size=4)},
                                      optional={"_meta": st.none() | st.just({}), "extra": st.just(1)})


@settings(max_examples=400, deadline=None)
@given(result=roots_results, version=st.sampled_from(HANDSHAKE_PROTOCOL_VERSIONS))
def test_plain_roots_are_the_uris_the_sdks_session_reads(result: dict[str, Any], version: str) -> None:
    ours = plain_roots(result)
    if ours is None:
        return
    assert ours == roots_of(result, version)


def test_what_plain_roots_leaves_to_the_sdk() -> None:
    assert plain_roots({"roots": [{"uri": "file:///home/me/project", "name": "p"}]}) == ["file:///home/me/project"]
    for uri in ("file://localhost/x", "file:///a/../b", "file:///a%2e%2e/b", "file:///a b", "file:///é"):
        assert plain_roots({"roots": [{"uri": uri}]}) is None, uri
    assert plain_roots({"roots": [], "resultType": "complete"}) is None
    assert plain_roots({"roots": [{"uri": "file:///x", "extra": 1}]}) is None
    assert plain_roots({"roots": "file:///x"}) is None and plain_roots([]) is None
