"""The tool registry: schemas, the execute pipeline, error normalization, batch scheduling.

Covers REFERENCE-SPEC §5 (shapes, ``toolErrorResult``, pipeline order, schema DSL and
validation, execution mode and parallel scheduling), §4.3 (the three verbatim wire schemas,
identical with or without the policy), §9 items 10–11 (lossless JSON, JS number formatting),
plus ``Session``, ``AbortSignal`` and ``SystemPrompt`` (§4.2 ordering rules).

Not covered here: what the fs tools do with valid arguments (integration tests) and hostile
argument values end to end (tests/integration/tool_fs/test_bad_input.py).
"""

from __future__ import annotations

import json
import math
import os
from typing import Any

import anyio
import pytest

import dsh_fs
import spectext
from dsh_fs import AbortSignal, HarnessError, Session, ToolCall
from dsh_fs.core import Param, ToolArgsError, ToolDefinition, ToolNotFoundError, ToolOutput, ToolRegistry, text_block
from dsh_fs.core.jsonvalue import JSON_ARGS_ERROR, is_lossless_json, js_number_str
from dsh_fs.core.schema import json_schema
from dsh_fs.tool_fs.list_tool import list_description, list_params
from dsh_fs.core.session import ToolExecution
from dsh_fs.core.system_prompt import SystemPrompt
from dsh_fs.core.tools import ToolResult

pytestmark = pytest.mark.anyio


def _tool(name: str, execute: Any, *, params: dict[str, Param] | None = None, safe: Any = None) -> ToolDefinition:
    return ToolDefinition(
        name=name,
        description=f"the {name} tool",
        parameters=params if params is not None else {"x": Param(type="string")},
        execute=execute,
        is_concurrency_safe=safe,
    )


async def _ok(args: dict[str, Any], execution: ToolExecution) -> list[dict[str, Any]]:
    return [text_block("ok:" + json.dumps(args, sort_keys=True))]


# ------------------------------------------------------------------------------------------
# §4.3 verbatim schemas
# ------------------------------------------------------------------------------------------

READ_SCHEMA = """{
  "type": "object",
  "properties": {
    "file_path": { "type": "string", "description": "Path to read, resolved by the filesystem backend." },
    "offset": { "type": "number", "description": "1-based first line to return. Defaults to 1." },
    "limit": { "type": "number", "description": "Maximum number of lines to return. Defaults to 2000." }
  },
  "required": ["file_path"]
}"""

WRITE_SCHEMA = """{
  "type": "object",
  "properties": {
    "file_path": { "type": "string", "description": "Path to write, resolved by the filesystem backend." },
    "content": { "type": "string", "description": "Full UTF-8 text content to write." }
  },
  "required": ["file_path", "content"]
}"""

EDIT_SCHEMA = """{
  "type": "object",
  "properties": {
    "file_path": { "type": "string", "description": "Path to edit, resolved by the filesystem backend." },
    "old_string": { "type": "string", "description": "Literal text to replace. Must match exactly." },
    "new_string": { "type": "string", "description": "Literal replacement text. Use an empty string to delete the match." },
    "replace_all": { "type": "boolean", "description": "Replace all matches. Defaults to false; when false, old_string must appear exactly once." }
  },
  "required": ["file_path", "old_string", "new_string"]
}"""


@pytest.mark.parametrize("policy", [True, False])
def test_schemas_are_verbatim_and_ordered_by_name(ws: str, policy: bool) -> None:
    """§4.3, §6: exact wire JSON (key order included), name order, with or without policy"""
    ctx = dsh_fs.create_context(cwd=ws, policy=policy)
    schemas = ctx.tools.schemas()
    assert [s["name"] for s in schemas] == ["edit", "glob", "grep", "list", "read", "write"]
    assert [list(s) for s in schemas] == [["name", "description", "parameters"]] * 6
    expected = {
        "read": ("Read a UTF-8 text file and return line-numbered content.", json.dumps(spectext.READ_SCHEMA_DEFAULT)),
        "write": ("Create or fully replace a UTF-8 text file.", WRITE_SCHEMA),
        "edit": ("Edit an existing UTF-8 text file by replacing literal text.", EDIT_SCHEMA),
        "glob": (spectext.GLOB_DESCRIPTION, json.dumps(spectext.GLOB_SCHEMA)),
        "grep": (spectext.GREP_DESCRIPTION, json.dumps(spectext.GREP_SCHEMA)),
        "list": (list_description(200), json.dumps(json_schema(list_params()))),  # L1; verbatim: test_list_tool.py
    }
    for schema in schemas:
        description, wire = expected[schema["name"]]
        assert schema["description"] == description
        assert json.dumps(schema["parameters"]) == json.dumps(json.loads(wire))


def test_read_schema_names_the_configured_read_limit(ws: str) -> None:
    ctx = dsh_fs.create_context(cwd=ws, read_limit=2)
    read = next(s for s in ctx.tools.schemas() if s["name"] == "read")
    assert read["parameters"]["properties"]["limit"]["description"] == "Maximum number of lines to return. Defaults to 2."


def test_schema_dsl_omits_required_when_empty_and_nests() -> None:
    registry = ToolRegistry()
    registry.register(_tool("t", _ok, params={
        "config": Param(type="object", description="cfg", properties={"host": Param(type="string", required=True)}),
        "tags": Param(type="array", items=Param(type="string")),
        "mode": Param(type="string", enum=("a", "b")),
    }))
    assert registry.schemas()[0]["parameters"] == {
        "type": "object",
        "properties": {
            "config": {"type": "object", "description": "cfg", "properties": {"host": {"type": "string"}},
                       "required": ["host"]},
            "tags": {"type": "array", "items": {"type": "string"}},
            "mode": {"type": "string", "enum": ["a", "b"]},
        },
    }


# ------------------------------------------------------------------------------------------
# §5.4 validation messages
# ------------------------------------------------------------------------------------------

async def test_violations_are_listed_in_declaration_order(ws: str) -> None:
    ctx = dsh_fs.create_context(cwd=ws)
    result = await ctx.tools.execute("read", {"offset": "2", "limit": None})
    assert result.is_error and result.error is not None
    assert (result.error.name, result.error.code) == ("ToolArgsError", "INVALID_ARGS")
    assert result.text == (
        'Error: invalid arguments: missing required property "file_path"; "offset" must be a number; '
        '"limit" must be a number'
    )
    result = await ctx.tools.execute(
        "edit", {"replace_all": "yes", "new_string": 1, "old_string": [], "file_path": {}}
    )
    assert result.text == (
        'Error: invalid arguments: "file_path" must be a string; "old_string" must be a string; '
        '"new_string" must be a string; "replace_all" must be a boolean'
    )
    result = await ctx.tools.execute("write", {})
    assert result.text == (
        'Error: invalid arguments: missing required property "file_path"; missing required property "content"'
    )


async def test_nested_enum_and_array_violations_use_paths() -> None:
    registry = ToolRegistry()
    registry.register(_tool("t", _ok, params={
        "config": Param(type="object", required=True, properties={"host": Param(type="string", required=True)}),
        "tags": Param(type="array", items=Param(type="string")),
        "mode": Param(type="string", enum=("a", "b")),
    }))
    result = await registry.execute("t", {"config": {"port": 1}, "tags": ["x", 2], "mode": "c"})
    assert result.text == (
        'Error: invalid arguments: missing required property "config.host"; "tags[1]" must be a string; '
        '"mode" must be one of ["a","b"]'
    )


@pytest.mark.parametrize("arguments", [None, [], ["file_path"], "{\"file_path\": \"a\"}", 3, True])
async def test_non_object_arguments(ws: str, arguments: Any) -> None:
    ctx = dsh_fs.create_context(cwd=ws)
    result = await ctx.tools.execute("read", arguments)
    assert result.text == 'Error: invalid arguments: "arguments" must be an object'
    assert result.error is not None and result.error.code == "INVALID_ARGS"


async def test_extra_keys_are_ignored_and_booleans_are_not_numbers() -> None:
    registry = ToolRegistry()
    registry.register(_tool("t", _ok, params={"n": Param(type="number"), "b": Param(type="boolean")}))
    ok = await registry.execute("t", {"n": 2.5, "b": False, "replaceAll": True})
    assert not ok.is_error and ok.text == 'ok:{"b": false, "n": 2.5, "replaceAll": true}'
    bad = await registry.execute("t", {"n": True, "b": 0})
    assert bad.text == 'Error: invalid arguments: "n" must be a number; "b" must be a boolean'


# ------------------------------------------------------------------------------------------
# §5.2 / §5.3 execute pipeline and error normalization
# ------------------------------------------------------------------------------------------

async def test_success_shapes_list_and_output_with_meta() -> None:
    registry = ToolRegistry()

    async def with_meta(args: dict[str, Any], execution: ToolExecution) -> ToolOutput:
        return ToolOutput(content=[text_block("a"), text_block("b")], meta={"diffs": []})

    registry.register(_tool("plain", _ok))
    registry.register(_tool("meta", with_meta))
    plain = await registry.execute("plain", {})
    assert plain == ToolResult(content=[{"type": "text", "text": "ok:{}"}], is_error=False, error=None, meta=None)
    meta = await registry.execute("meta", {})
    assert (meta.text, meta.is_error, meta.meta) == ("ab", False, {"diffs": []})


async def test_harness_errors_carry_name_and_code_plain_errors_do_not() -> None:
    registry = ToolRegistry()

    class CustomError(HarnessError):
        pass

    async def harness(args: dict[str, Any], execution: ToolExecution) -> Any:
        raise CustomError("custom failure", "CUSTOM_CODE")

    async def plain(args: dict[str, Any], execution: ToolExecution) -> Any:
        raise ValueError("offset must be a positive integer")

    async def os_error(args: dict[str, Any], execution: ToolExecution) -> Any:
        raise PermissionError(13, "Permission denied")

    registry.register(_tool("harness", harness))
    registry.register(_tool("plain", plain))
    registry.register(_tool("os", os_error))
    result = await registry.execute("harness", {})
    assert (result.text, result.is_error, result.error, result.meta) == (
        "Error: custom failure", True, dsh_fs.ErrorInfo("CustomError", "CUSTOM_CODE"), None
    )
    assert result.error is not None and result.error.as_dict() == {"name": "CustomError", "code": "CUSTOM_CODE"}
    result = await registry.execute("plain", {})
    assert (result.text, result.error) == ("Error: offset must be a positive integer", None)
    result = await registry.execute("os", {})
    assert result.is_error and result.error is None and result.text.startswith("Error: ")


async def test_an_unprintable_thrown_value() -> None:
    class Unprintable(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no")

    async def raise_it(args: dict[str, Any], execution: ToolExecution) -> Any:
        raise Unprintable()

    registry = ToolRegistry()
    registry.register(_tool("t", raise_it))
    assert (await registry.execute("t", {})).text == "Error: <unprintable thrown value>"


async def test_unknown_tool() -> None:
    registry = ToolRegistry()
    result = await registry.execute("nope", {})
    assert result.text == 'Error: unknown tool "nope"'
    assert result.error == dsh_fs.ErrorInfo("ToolNotFoundError", "UNKNOWN_TOOL")
    err = ToolNotFoundError("x")
    assert (err.code, err.name, err.tool_name) == ("UNKNOWN_TOOL", "ToolNotFoundError", "x")
    args_err = ToolArgsError(["a", "b"])
    assert (str(args_err), args_err.violations) == ("invalid arguments: a; b", ("a", "b"))


async def test_lossless_json_check_comes_first_even_for_unknown_tools() -> None:
    registry = ToolRegistry()
    calls: list[Any] = []

    async def record(args: dict[str, Any], execution: ToolExecution) -> Any:
        calls.append(args)
        return []

    registry.register(_tool("t", record))
    for name in ("t", "nope"):
        result = await registry.execute(name, {"x": float("nan")})
        assert (result.text, result.is_error, result.error) == (
            "Error: tool execution arguments must be losslessly JSON-serializable", True, None
        )
    assert calls == []


async def test_the_execution_carries_session_signal_and_call_id() -> None:
    registry = ToolRegistry()
    seen: list[ToolExecution] = []

    async def record(args: dict[str, Any], execution: ToolExecution) -> Any:
        seen.append(execution)
        return []

    registry.register(_tool("t", record))
    session, signal = Session("/w"), AbortSignal()
    await registry.execute("t", {}, session=session, signal=signal, call_id="call-1")
    await registry.execute("t", {})
    assert (seen[0].session, seen[0].signal, seen[0].call_id, seen[0].cwd) == (session, signal, "call-1", "/w")
    assert seen[1].session is None and seen[1].cwd is None and seen[1].call_id


def test_register_rejects_a_duplicate_and_unregisters() -> None:
    registry = ToolRegistry()
    unregister = registry.register(_tool("t", _ok))
    with pytest.raises(HarnessError) as caught:
        registry.register(_tool("t", _ok))
    assert caught.value.code == "DUPLICATE_TOOL"
    unregister()
    assert registry.names() == [] and registry.get("t") is None


# ------------------------------------------------------------------------------------------
# §9 item 10: lossless JSON; item 11: JS number formatting
# ------------------------------------------------------------------------------------------

class _Custom:
    pass


_cycle: list[Any] = []
_cycle.append(_cycle)


@pytest.mark.parametrize(
    "value,ok",
    [
        (None, True), (True, True), (0, True), (-5, True), (2.5, True), (0.0, True), ("s", True),
        ([1, [2, {"a": None}]], True), ({"k": [1.0, "x"]}, True), (10**30, True), (2**1023, True),
        (1e308, True),
        (float("nan"), False), (float("inf"), False), (float("-inf"), False), (-0.0, False),
        ({"x": [-0.0]}, False), (2**1100, False), (-(2**1100), False), ((1, 2), False), ({1, 2}, False),
        (b"bytes", False), ({1: "a"}, False), (_Custom(), False), (_cycle, False), ({"a": _cycle}, False),
    ],
)
def test_is_lossless_json(value: Any, ok: bool) -> None:
    assert is_lossless_json(value) is ok


def test_is_lossless_json_accepts_shared_non_cyclic_references_and_deep_nesting() -> None:
    shared = [1]
    assert is_lossless_json({"a": shared, "b": [shared, shared]})
    deep: list[Any] = []
    cur = deep
    for _ in range(200_000):
        nxt: list[Any] = []
        cur.append(nxt)
        cur = nxt
    assert is_lossless_json(deep)
    cur.append(math.nan)
    assert not is_lossless_json(deep)


@pytest.mark.parametrize(
    "value,text",
    [
        (12, "12"), (12.0, "12"), (1.5, "1.5"), (-3, "-3"), (0, "0"), (-0.0, "0"), (1e21, "1e+21"),
        (1e20, "100000000000000000000"), (123456789012345680000, "123456789012345680000"),
        (1e-7, "1e-7"), (1.5e-7, "1.5e-7"), (0.000001, "0.000001"), (1e308, "1e+308"), (10**30, "1e+30"),
        (2**53 + 1, "9007199254740992"), (2**64, "18446744073709552000"), (0.1, "0.1"), (-2.5e25, "-2.5e+25"), (float("inf"), "Infinity"),
    ],
)
def test_js_number_str(value: Any, text: str) -> None:
    assert js_number_str(value) == text


# ------------------------------------------------------------------------------------------
# §5.5 execution mode and batch scheduling
# ------------------------------------------------------------------------------------------

def test_is_parallel_only_for_an_exact_true_on_valid_arguments() -> None:
    registry = ToolRegistry()

    def explode(args: dict[str, Any]) -> bool:
        raise RuntimeError("classifier failed")

    registry.register(_tool("safe", _ok, params={"x": Param(type="string", required=True)}, safe=lambda a: True))
    registry.register(_tool("truthy", _ok, safe=lambda a: 1))
    registry.register(_tool("boom", _ok, safe=explode))
    registry.register(_tool("none", _ok))
    assert registry.is_parallel("safe", {"x": "a"}) is True
    assert registry.is_parallel("safe", {}) is False  # invalid arguments → exclusive
    assert registry.is_parallel("safe", ["x"]) is False
    assert registry.is_parallel("truthy", {}) is False
    assert registry.is_parallel("boom", {}) is False
    assert registry.is_parallel("none", {}) is False
    assert registry.is_parallel("missing", {}) is False


def test_fs_tools_execution_modes(ws: str) -> None:
    """declares read parallel-safe while write/edit remain exclusive"""
    ctx = dsh_fs.create_context(cwd=ws)
    assert ctx.tools.is_parallel("read", {"file_path": "a"}) is True
    assert ctx.tools.is_parallel("read", {"file_path": 1}) is False
    assert ctx.tools.is_parallel("write", {"file_path": "a", "content": ""}) is False
    assert ctx.tools.is_parallel("edit", {"file_path": "a", "old_string": "a", "new_string": "b"}) is False


class _Probe:
    """Parallel ``p`` calls and exclusive ``x`` calls that log their overlap."""

    def __init__(self) -> None:
        self.active: set[str] = set()
        self.log: list[tuple[str, frozenset[str]]] = []
        self.max_active = 0

    async def run(self, args: dict[str, Any], execution: ToolExecution) -> list[dict[str, Any]]:
        tag = args["x"]
        self.active.add(tag)
        self.max_active = max(self.max_active, len(self.active))
        self.log.append((tag, frozenset(self.active)))
        await anyio.sleep(0.02)
        self.active.discard(tag)
        return [text_block(tag)]

    def registry(self) -> ToolRegistry:
        registry = ToolRegistry()
        registry.register(_tool("p", self.run, safe=lambda a: True))
        registry.register(_tool("x", self.run))
        return registry


async def test_batch_groups_parallel_runs_with_exclusive_barriers() -> None:
    """[read A, read B, write A, read C] → {A, B} → {write} → {C}; results in model order"""
    probe = _Probe()
    registry = probe.registry()
    calls = [ToolCall(name="p", arguments={"x": "A"}), ToolCall(name="p", arguments={"x": "B"}),
             ToolCall(name="x", arguments={"x": "W"}), ToolCall(name="p", arguments={"x": "C"})]
    with anyio.fail_after(60):
        results = await registry.execute_batch(calls)
    assert [r.text for r in results] == ["A", "B", "W", "C"]
    starts = {tag: overlap for tag, overlap in probe.log}
    assert starts["W"] == {"W"} and starts["C"] == {"C"}
    assert probe.max_active == 2


async def test_batch_respects_max_parallel_and_aborts_before_starting() -> None:
    probe = _Probe()
    registry = probe.registry()
    calls = [ToolCall(name="p", arguments={"x": str(i)}) for i in range(5)]
    with anyio.fail_after(60):
        results = await registry.execute_batch(calls, max_parallel=1)
    assert [r.text for r in results] == ["0", "1", "2", "3", "4"] and probe.max_active == 1
    with anyio.fail_after(60):
        assert await registry.execute_batch(calls, signal=AbortSignal.aborted_signal()) == []
    with pytest.raises(ValueError):
        await registry.execute_batch(calls, max_parallel=0)


async def test_batch_uses_each_calls_session_or_the_batch_session() -> None:
    registry = ToolRegistry()
    seen: list[Session | None] = []

    async def record(args: dict[str, Any], execution: ToolExecution) -> Any:
        seen.append(execution.session)
        return []

    registry.register(_tool("t", record))
    own, shared = Session("/a"), Session("/b")
    await registry.execute_batch([ToolCall(name="t", arguments={}, session=own), ToolCall(name="t", arguments={})],
                                 session=shared)
    assert seen[0] is own and seen[1] is shared


# ------------------------------------------------------------------------------------------
# Session, AbortSignal, SystemPrompt (§3.2, §2.12, §4.2)
# ------------------------------------------------------------------------------------------

def test_session_cwd_is_absolute_and_identity_matters() -> None:
    s = Session("relative/dir", id="s1")
    assert s.cwd == os.path.abspath("relative/dir") and s.id == "s1"
    assert Session().cwd is None and Session().id != Session().id
    assert Session("/w") is not Session("/w")


def test_abort_signal_is_one_way_and_idempotent() -> None:
    signal = AbortSignal()
    assert not signal.aborted
    signal.abort("first")
    signal.abort("second")
    assert signal.aborted and signal.reason == "first"
    assert AbortSignal.aborted_signal().aborted


def test_system_prompt_orders_by_order_then_registration_and_drops_empty() -> None:
    prompt = SystemPrompt(persona="")
    prompt.add("z", "Z", order=5)
    prompt.add("a", "A", order=5)
    prompt.add("first", "F", order=-200)
    remove = prompt.add("empty", "", order=1)
    prompt.add("dynamic", lambda: "D", order=6)
    assert prompt.render() == (
        "F\n\nYou are an AI agent powered by the DeepSeek Harness SDK.\n\nZ\n\nA\n\nD"
    )
    assert prompt.names() == ["a", "deployment:persona", "dynamic", "empty", "first", "harness:identity", "z"]
    remove()
    assert "empty" not in prompt.names()
    assert SystemPrompt(persona="Be brief.").render() == (
        "You are an AI agent powered by the DeepSeek Harness SDK.\n\nBe brief."
    )


async def test_error_texts_never_carry_a_lone_surrogate() -> None:
    """A1 spirit: every error text encodes as UTF-8 (a lone surrogate becomes U+FFFD; pairs join)"""
    registry = ToolRegistry()

    async def echo(args: dict[str, Any], execution: ToolExecution) -> Any:
        raise ValueError(args["x"])

    registry.register(_tool("t", echo))
    assert (await registry.execute("t", {"x": "a\ud800b\ud83d\ude00"})).text == "Error: a\ufffdb\U0001f600"
    assert (await registry.execute("\udfff", {})).text == 'Error: unknown tool "\ufffd"'


def test_error_results_never_carry_meta() -> None:
    result = ToolResult.failure(ValueError("x"))
    assert (result.meta, result.text, result.error) == (None, "Error: x", None)
    assert ToolResult.failure("reason").text == "Error: reason"
    assert JSON_ARGS_ERROR == "tool execution arguments must be losslessly JSON-serializable"


def test_select_tools_keeps_a_subset_and_its_prompt_sections(ws: str) -> None:
    """``dsh-fs mcp --tools``: the others go with their prompt sections; unknown names change nothing"""
    from dsh_fs.core.selection import select_tools

    ctx = dsh_fs.create_context(cwd=ws)
    with pytest.raises(ValueError, match='^unknown tool "nope"; registered: edit, glob, grep, list, read, write$'):
        select_tools(ctx, ["read", "nope"])
    with pytest.raises(ValueError, match="^select at least one tool"):
        select_tools(ctx, [])
    assert ctx.tools.names() == ["edit", "glob", "grep", "list", "read", "write"]
    assert select_tools(ctx, ["grep", "read", "read"]) == ["grep", "read"]
    assert ctx.tools.names() == ["grep", "read"]
    assert [n for n in ctx.system_prompt.names() if n.startswith("tool:")] == ["tool:grep", "tool:read"]
    for scope in ctx.scopes:
        scope.dispose()  # disposal after a selection is still clean
    assert ctx.tools.names() == []
