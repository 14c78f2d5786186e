"""``tools/call`` answers the wire dict (``server.handler_result``) to the SDK, not a
``CallToolResult`` model: the SDK shapes a handler's dict exactly as it shapes a model's dump
(``ServerRunner._serialize``: the dump, then the protocol version's surface), so the bytes
are the same for every result and every protocol version, with one pydantic pass less."""

from __future__ import annotations

from typing import Any

import mcp.types as types
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp.server.runner import ServerRunner
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

import dsh_fs
from dsh_fs.core.tools import ErrorInfo, ToolResult, image_block, text_block
from dsh_fs.mcp.server import build_server, encode_message, handler_result
from dsh_fs.mcp.wire import call_result

VERSIONS = (*HANDSHAKE_PROTOCOL_VERSIONS, *MODERN_PROTOCOL_VERSIONS)

texts = st.text(st.characters(codec="utf-8"), max_size=60) | st.text(st.characters(categories=["Cs", "Ll", "Nd"]), max_size=20)  # lone surrogates too
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**60), 2**60) | st.floats(allow_nan=False, allow_infinity=False) | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=8,
)
blocks = st.lists(
    texts.map(text_block) | st.binary(max_size=24).map(lambda data: image_block(data, "image/png")), max_size=3
)
results = st.builds(
    lambda content, failed, error, meta: ToolResult(content=content, is_error=failed, error=error, meta=meta),
    blocks,
    st.booleans(),
    st.none() | st.builds(ErrorInfo, texts, texts),
    st.none() | st.dictionaries(texts, json_values, max_size=3) | json_values,
)


def _runner(version: str) -> Any:
    ctx = dsh_fs.create_context(cwd="/")
    server = build_server(ctx, owner_for=lambda _rctx: dsh_fs.Session("/"))
    assert server.cache_hints.get("tools/call") is None  # no hint is merged into either form
    runner = object.__new__(ServerRunner)  # _serialize reads only the server (hints, server info)
    runner.server = server
    return runner


RUNNERS = {version: _runner(version) for version in VERSIONS}


def _wire(payload: Any, version: str) -> str:
    shaped = RUNNERS[version]._serialize("tools/call", version, payload)
    return encode_message(types.JSONRPCResponse(jsonrpc="2.0", id=7, result=shaped))


def _outcome(payload: Any, version: str) -> tuple[str, ...]:
    """The line, or the failure the SDK turns into an error reply (its type and text)."""
    try:
        return ("line", _wire(payload, version))
    except Exception as exc:
        return ("raised", type(exc).__name__, str(exc))


@settings(max_examples=300, deadline=None)
@given(result=results, version=st.sampled_from(VERSIONS))
def test_the_dict_gives_the_bytes_the_model_gave(result: ToolResult, version: str) -> None:
    """Every result, every protocol version: the same line, or the same failure (a lone
    surrogate in a ``_meta`` key cannot be dumped either way)."""
    wire = handler_result(result)
    model = types.CallToolResult.model_validate(wire)  # what call_tool returned before
    assert _outcome(wire, version) == _outcome(model, version)


def test_a_read_result_is_the_same_line_either_way() -> None:
    result = ToolResult(content=[text_block("<path>/a.txt</path>\n<type>file</type>\n<content>\n1: é\n</content>")])
    for version in VERSIONS:
        line = _wire(handler_result(result), version)
        assert line == _wire(types.CallToolResult.model_validate(call_result(result)), version)
        assert '"isError":false' in line and "1: é" in line
