"""Our answers' bytes (``wire.call_answer``, ``wire.list_answer``) held to the SDK: a
``tools/call`` answer is the SDK path's (``serialize_server_result`` of ``handler_result`` at the
handshake version, a ``JSONRPCResponse``, ``server.encode_message``), for every handshake version,
generated results (texts with any code point, lone surrogates included; images; tool errors
and ``isError``; ``_meta`` with JSON values), a large result; and ``None`` (the SDK's
encoding then) for what it cannot prove."""

from __future__ import annotations

import mcp.types as types
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp_types import methods as sdk_methods

from dsh_fs.core.tools import ErrorInfo, ToolResult, image_block, text_block
from dsh_fs.mcp.server import encode_message, handler_result
from dsh_fs.mcp.wire import HANDSHAKE_PROTOCOL_VERSIONS, call_answer, call_result, call_surface


def sdk_answer(request_id: int | str, version: str, result: ToolResult) -> bytes:
    """What the SDK path writes for this call (``server.result_line``'s message)."""
    dumped = sdk_methods.serialize_server_result("tools/call", version, handler_result(result))
    return encode_message(types.JSONRPCResponse(jsonrpc="2.0", id=request_id, result=dumped)).encode("utf-8") + b"\n"


def early_answer(request_id: int | str, result: ToolResult) -> bytes | None:
    return call_answer(request_id, call_result(result))


texts = st.text(st.characters(blacklist_categories=[]))  # lone surrogates too
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**63), max_value=2**64 - 1) | texts,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
blocks = st.one_of(
    st.builds(text_block, texts),
    st.builds(image_block, st.binary(max_size=64), st.sampled_from(["image/png", "image/jpeg", "image/webp"])),
)
results = st.builds(
    ToolResult,
    content=st.lists(blocks, max_size=4),
    is_error=st.booleans(),
    error=st.none() | st.builds(ErrorInfo, name=st.text(max_size=12), code=st.text(max_size=12)),
    meta=st.none() | st.dictionaries(st.text(max_size=8), json_values, max_size=4),
)
ids = st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1) | st.text(max_size=12)


@settings(max_examples=300, deadline=None)
@given(request_id=ids, result=results)
def test_generated_results_are_the_sdks_bytes_at_every_version(request_id: int | str, result: ToolResult) -> None:
    early = early_answer(request_id, result)
    for version in HANDSHAKE_PROTOCOL_VERSIONS:
        if early is not None:
            assert early == sdk_answer(request_id, version, result), version


@pytest.mark.parametrize("version", HANDSHAKE_PROTOCOL_VERSIONS)
@pytest.mark.parametrize(
    "result",
    [
        ToolResult(content=[text_block("     1\tline 1\n")]),
        ToolResult(content=[text_block("Error: not found: /x")], is_error=True,
                   error=ErrorInfo(name="FsError", code="FS_NOT_FOUND")),
        ToolResult(content=[text_block("Edited /a.txt")], meta={"diffs": [{"path": "/a.txt", "hunks": ["@@ -1 +1 @@"]}]}),
        ToolResult(content=[text_block("x" * (4 << 20))]),  # a large result
        ToolResult(content=[image_block(b"\x89PNG\r\n\x1a\n", "image/png"), text_block("é ✓ 𝄞")]),
        ToolResult(content=[]),
    ],
    ids=["read", "tool-error", "meta", "large", "image", "empty"],
)
def test_our_results_are_answered_early_with_the_sdks_bytes(version: str, result: ToolResult) -> None:
    early = early_answer(7, result)
    assert early is not None  # these are what the early phase exists for
    assert early == sdk_answer(7, version, result)
    assert early_answer("call-7", result) == sdk_answer("call-7", version, result)


def test_what_is_not_provable_is_left_to_the_sdk() -> None:
    assert early_answer(1, ToolResult(content=[text_block("lone \ud800")])) is None  # encode_message repairs it
    assert early_answer(1, ToolResult(content=[text_block("x")], meta={"f": 0.5})) is None  # a float
    assert early_answer(1, ToolResult(content=[text_block("x")], meta={"t": (1, 2)})) is None  # not JSON
    assert call_surface({"content": [{"type": "text", "text": "x", "annotations": {}}], "isError": False}) is None
    assert call_surface({"content": [{"type": "audio", "data": "", "mimeType": "audio/wav"}], "isError": False}) is None
    assert call_surface({"content": [], "isError": 1}) is None
    assert call_surface({"content": []}) is None
    assert call_surface({"content": [], "isError": False, "structuredContent": {}}) is None
    assert call_surface({"content": [], "isError": False, "_meta": {1: 2}}) is None
    assert call_surface([]) is None


# -- tools/list ---------------------------------------------------------------------------------

import dsh_fs  # noqa: E402
from dsh_fs.mcp.wire import list_answer, list_surface, tool_entries  # noqa: E402


def sdk_list_answer(request_id: int | str, version: str, entries: list[dict]) -> bytes:
    """What the SDK path writes for ``tools/list`` (``build_server``'s handler, the runner's
    ``_dump_result`` and ``serialize_server_result``, a ``JSONRPCResponse``)."""
    model = types.ListToolsResult(tools=[types.Tool.model_validate(e) for e in entries])
    dumped = sdk_methods.serialize_server_result("tools/list", version,
                                                 model.model_dump(by_alias=True, mode="json", exclude_none=True))
    return encode_message(types.JSONRPCResponse(jsonrpc="2.0", id=request_id, result=dumped)).encode("utf-8") + b"\n"


DEPLOYMENTS = {
    "default": {}, "reference": {"profile": "reference"}, "images": {"images": True},
    "faces": {"faces": ["apply_patch", "str_replace_based_edit_tool", "str_replace_editor"]},
    "read-only": {"sandbox": "read-only"}, "workspace-write": {"sandbox": "workspace-write"},
    "no-search": {"search": False},
}


@pytest.mark.parametrize("version", HANDSHAKE_PROTOCOL_VERSIONS)
@pytest.mark.parametrize("name", sorted(DEPLOYMENTS))
def test_our_tool_lists_are_answered_early_with_the_sdks_bytes(tmp_path: Any, name: str, version: str) -> None:
    ctx = dsh_fs.create_context(root=str(tmp_path), **DEPLOYMENTS[name])
    entries = tool_entries(ctx.tools.schemas())
    early = list_answer(3, entries)
    assert early is not None  # ours are all of the plain shape
    assert early == sdk_list_answer(3, version, entries)
    assert list_answer("l-3", entries) == sdk_list_answer("l-3", version, entries)


names = st.text(min_size=1, max_size=8)
schemas = st.fixed_dictionaries({"type": st.just("object")}, optional={
    "properties": st.dictionaries(names, st.fixed_dictionaries({"type": st.sampled_from(["string", "integer"])},
                                                               optional={"description": texts}), max_size=3),
    "required": st.lists(names, max_size=3)})
hints = st.fixed_dictionaries({}, optional={k: st.booleans() for k in
                                            ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")})
entries_st = st.lists(st.fixed_dictionaries({"name": names, "description": texts, "inputSchema": schemas},
                                            optional={"annotations": hints}), max_size=4)


@settings(max_examples=300, deadline=None)
@given(request_id=ids, entries=entries_st)
def test_generated_tool_lists_are_the_sdks_bytes_at_every_version(request_id: int | str, entries: list[dict]) -> None:
    early = list_answer(request_id, entries)
    for version in HANDSHAKE_PROTOCOL_VERSIONS:
        if early is not None:
            assert early == sdk_list_answer(request_id, version, entries), version


def test_tool_lists_not_of_the_plain_shape_are_left_to_the_sdk() -> None:
    plain = {"name": "t", "description": "d", "inputSchema": {"type": "object"}}
    assert list_surface([plain]) == {"tools": [{"description": "d", "inputSchema": {"type": "object"}, "name": "t"}]}
    assert list_surface([{**plain, "title": "T"}]) is None
    assert list_surface([{**plain, "inputSchema": {"type": "object", "additionalProperties": False}}]) is None
    assert list_surface([{**plain, "inputSchema": {"type": "array"}}]) is None
    assert list_surface([{**plain, "annotations": {"title": "T"}}]) is None
    assert list_surface([{**plain, "annotations": {"readOnlyHint": 1}}]) is None
    assert list_surface([{**plain, "inputSchema": {"type": "object", "required": "x"}}]) is None
    assert list_surface([{k: v for k, v in plain.items() if k != "description"}]) is None
    assert list_surface(({**plain},)) is None
    assert list_answer(1, [{**plain, "inputSchema": {"type": "object", "properties": {"x": {"minimum": 0.5}}}}]) is None
