"""Unit tests for ``dsh_fs.adapters`` (tracker "Serve the tools to real agents", part 3).

Covers, offline, against the installed SDKs (openai, anthropic, pydantic-ai, mcp):

* argument parsing as the reference's agent loop does (REFERENCE-SPEC §5.5);
* the tool definitions of every format: exactly the §4.3 schemas, accepted by the SDKs' own
  parameter types (pydantic ``TypeAdapter`` over their TypedDicts, plus a check for unknown
  keys, which TypedDict validation ignores);
* full agent-loop round trips through the real SDK clients on an in-memory HTTP transport
  (no network): the SDK sends our definitions, parses the canned model reply into its
  objects, the adapter runs the calls against a temp workspace, and the SDK sends our results
  back; files are checked on disk;
* the pydantic-ai toolset under pydantic-ai's ``FunctionModel`` and ``TestModel``.

Not covered here: real model behaviour (needs an API key), the MCP server (its own suite).
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

import dsh_fs
from dsh_fs.adapters import (
    anthropic_tools,
    chat_tools,
    mcp_tools,
    parse_arguments,
    responses_tools,
    run_anthropic_tool_uses,
    run_chat_tool_calls,
    run_responses_function_calls,
    tool_definitions,
)
from dsh_fs.core.schema import json_schema
from dsh_fs.core.signal import AbortSignal
from dsh_fs.tool_fs.list_tool import LIST_PROMPT, list_description, list_params
from llmkit import anthropic_message, chat_call, chat_completion, mock_client, response_object
from spectext import (
    EDIT_DESCRIPTION,
    EDIT_SCHEMA,
    FULL_PROMPT,
    GLOB_DESCRIPTION,
    GLOB_SCHEMA,
    GREP_DESCRIPTION,
    GREP_SCHEMA,
    READ_DESCRIPTION,
    READ_SCHEMA_DEFAULT,
    WRITE_DESCRIPTION,
    WRITE_SCHEMA,
)

pytestmark = pytest.mark.anyio

LIST_DESCRIPTION = list_description(200)
LIST_SCHEMA = json_schema(list_params())

TOOLS = [
    ("edit", EDIT_DESCRIPTION, EDIT_SCHEMA),
    ("glob", GLOB_DESCRIPTION, GLOB_SCHEMA),
    ("grep", GREP_DESCRIPTION, GREP_SCHEMA),
    ("list", LIST_DESCRIPTION, LIST_SCHEMA),  # the default deployment's list (DEVIATIONS L1)
    ("read", READ_DESCRIPTION, READ_SCHEMA_DEFAULT),  # with D35's column
    ("write", WRITE_DESCRIPTION, WRITE_SCHEMA),
]


@pytest.fixture
def ws(tmp_path, monkeypatch) -> str:
    monkeypatch.setenv("DSH_FS_LOCK_DIR", str(tmp_path / "locks"))
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("alpha\nbeta\n")
    (root / "b.txt").write_text("bee\n")
    return str(root)


@pytest.fixture
def ctx(ws):
    return dsh_fs.create_context(cwd=ws)


@pytest.fixture
def session(ws):
    return dsh_fs.Session(cwd=ws)


def read_text(path: str, *lines: str) -> str:
    """The §4.6.5 envelope of a whole-file read."""
    body = "\n".join(f"{i}: {line}" for i, line in enumerate(lines, 1))
    return f"<path>{path}</path>\n<type>file</type>\n<content>\n{body}\n\n(End of file - total {len(lines)} lines)\n</content>"


def created_text(path: str) -> str:
    return f"<path>{path}</path>\n<type>file</type>\n<content>\nCreated file\n</content>"


def conforms(typed_dict: Any, value: Any) -> None:
    """``value`` validates as ``typed_dict`` and has no key the TypedDict does not declare."""
    TypeAdapter(typed_dict).validate_python(value)
    declared = typed_dict.__required_keys__ | typed_dict.__optional_keys__
    assert set(value) <= declared, set(value) - declared
    assert typed_dict.__required_keys__ <= set(value)


# -- argument parsing (§5.5) ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "parsed"),
    [
        ("", {}),
        (None, {}),
        ('{"file_path": "a"}', {"file_path": "a"}),
        ("[1]", [1]),
        ("null", None),
        ("{oops", "{oops"),
        ('{"offset": NaN}', '{"offset": NaN}'),  # not JSON for JSON.parse
        ('{"offset": Infinity}', '{"offset": Infinity}'),
        ({"already": "parsed"}, {"already": "parsed"}),
    ],
)
def test_parse_arguments(raw, parsed):
    assert parse_arguments(raw) == parsed


def test_parse_arguments_keeps_negative_zero_and_huge_numbers_like_json_parse():
    zero = parse_arguments('{"offset": -0}')["offset"]
    assert zero == 0 and isinstance(zero, float) and str(zero) == "-0.0"
    assert parse_arguments('{"offset": ' + "9" * 5000 + "}")["offset"] == float("inf")
    huge = parse_arguments('{"offset": 12345678901234567890}')["offset"]  # the double JavaScript reads
    assert isinstance(huge, float) and huge == 12345678901234567168


@pytest.mark.parametrize(
    ("arguments", "text"),
    [
        ("{oops", 'Error: invalid arguments: "arguments" must be an object'),
        ('{"offset": NaN}', 'Error: invalid arguments: "arguments" must be an object'),
        ("", 'Error: invalid arguments: missing required property "file_path"'),
        ('{"file_path": "a.txt", "offset": -0}', "Error: tool execution arguments must be losslessly JSON-serializable"),
        ('{"file_path": "a.txt", "offset": 0}', "Error: offset must be a positive integer"),
    ],
)
async def test_bad_arguments_reach_the_model_with_the_spec_text(ctx, session, arguments, text):
    calls = [{"id": "c1", "type": "function", "function": {"name": "read", "arguments": arguments}}]
    assert await run_chat_tool_calls(ctx, calls, session=session) == [
        {"role": "tool", "tool_call_id": "c1", "content": text}
    ]


# -- definitions ------------------------------------------------------------------------------


def test_definitions_carry_the_spec_schemas_in_every_format(ctx):
    assert chat_tools(ctx) == [
        {"type": "function", "function": {"name": n, "description": d, "parameters": p}} for n, d, p in TOOLS
    ]
    assert responses_tools(ctx) == [
        {"type": "function", "name": n, "description": d, "parameters": p, "strict": False} for n, d, p in TOOLS
    ]
    assert anthropic_tools(ctx) == [{"name": n, "description": d, "input_schema": p} for n, d, p in TOOLS]
    assert mcp_tools(ctx) == [{"name": n, "description": d, "inputSchema": p} for n, d, p in TOOLS]
    assert tool_definitions(ctx, "native") == [{"name": n, "description": d, "parameters": p} for n, d, p in TOOLS]
    # key order is part of the wire JSON (§4.3)
    assert list(chat_tools(ctx)[4]["function"]["parameters"]["properties"]) == ["file_path", "offset", "limit", "column"]


def test_definitions_follow_the_read_limit_and_are_fresh_copies(ws):
    ctx = dsh_fs.create_context(cwd=ws, read_limit=7)
    tools = chat_tools(ctx)
    assert tools[4]["function"]["parameters"]["properties"]["limit"]["description"] == (
        "Maximum number of lines to return. Defaults to 7."
    )
    tools[4]["function"]["parameters"]["required"].append("offset")
    assert ctx.tools.schemas()[4]["parameters"]["required"] == ["file_path"]


def test_definitions_accept_a_registry_or_schema_list(ctx):
    assert anthropic_tools(ctx.tools) == anthropic_tools(ctx) == anthropic_tools(ctx.tools.schemas())
    with pytest.raises(ValueError, match="unknown tool definition format 'yaml'"):
        tool_definitions(ctx, "yaml")


def test_openai_chat_definitions_validate_with_the_sdk_types(ctx):
    from openai.types.chat import ChatCompletionToolParam
    from openai.types.shared_params import FunctionDefinition

    for tool in chat_tools(ctx):
        conforms(ChatCompletionToolParam, tool)
        conforms(FunctionDefinition, tool["function"])


def test_openai_responses_definitions_validate_with_the_sdk_types(ctx):
    from openai.types.responses import FunctionToolParam

    for tool in responses_tools(ctx):
        conforms(FunctionToolParam, tool)
        # the SDK requires "strict": left out, the API would turn strict mode on
        without = {k: v for k, v in tool.items() if k != "strict"}
        with pytest.raises(ValidationError, match="strict"):
            conforms(FunctionToolParam, without)


def test_anthropic_and_mcp_definitions_validate_with_the_sdk_types(ctx):
    from anthropic.types import ToolParam
    from mcp.types import Tool

    for tool in anthropic_tools(ctx):
        conforms(ToolParam, tool)
    for tool in mcp_tools(ctx):
        parsed = Tool.model_validate(tool)
        assert parsed.model_dump(by_alias=True, exclude_none=True) == tool


def test_importing_the_adapters_needs_no_sdk():
    code = "import sys, dsh_fs.adapters; print([m for m in ('openai', 'anthropic', 'pydantic_ai') if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"


# -- Chat Completions -------------------------------------------------------------------------


async def test_chat_completions_round_trip_through_the_openai_sdk(ws, ctx, session):
    import openai
    from openai.types.chat import ChatCompletionToolMessageParam

    a, b, new = (os.path.join(ws, name) for name in ("a.txt", "b.txt", "new.txt"))
    sent: list[dict[str, Any]] = []
    replies = [
        chat_completion(
            [
                chat_call("c1", "read", {"file_path": "a.txt"}),
                chat_call("c2", "read", {"file_path": "b.txt"}),
                chat_call("c3", "edit", {"file_path": "a.txt", "old_string": "beta", "new_string": "gamma"}),
                chat_call("c4", "write", {"file_path": "new.txt", "content": "fresh\n"}),
                chat_call("c5", "edit", {"file_path": "b.txt", "old_string": "nope", "new_string": "x"}),
                chat_call("c6", "find", {}),
            ]
        ),
        chat_completion(None, "done"),
    ]
    client = openai.AsyncOpenAI(api_key="sk-test", base_url="http://llm.test/v1", http_client=mock_client(replies, sent))
    tools = chat_tools(ctx)
    messages: list[Any] = [{"role": "user", "content": "rename beta"}]
    completion = await client.chat.completions.create(model="deepseek-chat", messages=messages, tools=tools)
    assistant = completion.choices[0].message
    results = await run_chat_tool_calls(ctx, assistant.tool_calls, session=session)
    assert results == [
        {"role": "tool", "tool_call_id": "c1", "content": read_text(a, "alpha", "beta")},
        {"role": "tool", "tool_call_id": "c2", "content": read_text(b, "bee")},
        {"role": "tool", "tool_call_id": "c3", "content": f"The file {a} has been updated successfully."},
        {"role": "tool", "tool_call_id": "c4", "content": created_text(new)},
        {"role": "tool", "tool_call_id": "c5", "content": f'Error: old_string was not found in "{b}"'},
        {"role": "tool", "tool_call_id": "c6", "content": 'Error: unknown tool "find"'},
    ]
    for message in results:
        conforms(ChatCompletionToolMessageParam, message)
    messages += [assistant.model_dump(exclude_none=True), *results]
    final = await client.chat.completions.create(model="deepseek-chat", messages=messages, tools=tools)
    assert final.choices[0].message.content == "done"
    assert sent[0]["tools"] == tools
    assert sent[1]["messages"][2:] == results
    with open(os.path.join(ws, "a.txt")) as handle:
        assert handle.read() == "alpha\ngamma\n"
    with open(new) as handle:
        assert handle.read() == "fresh\n"


async def test_chat_accepts_the_assistant_message_itself(ctx, session, ws):
    from openai.types.chat import ChatCompletionMessage

    message = ChatCompletionMessage.model_validate(
        {"role": "assistant", "content": None, "tool_calls": [chat_call("x1", "read", {"file_path": "b.txt"})]}
    )
    expected = [{"role": "tool", "tool_call_id": "x1", "content": read_text(os.path.join(ws, "b.txt"), "bee")}]
    assert await run_chat_tool_calls(ctx, message, session=session) == expected
    assert await run_chat_tool_calls(ctx, message.model_dump(), session=session) == expected
    assert await run_chat_tool_calls(ctx, {"role": "assistant", "content": "no tools"}, session=session) == []


async def test_without_a_session_nothing_existing_can_be_changed(ctx, ws):
    calls = [
        chat_call("c1", "read", {"file_path": "a.txt"}),
        chat_call("c2", "edit", {"file_path": "a.txt", "old_string": "alpha", "new_string": "x"}),
    ]
    results = await run_chat_tool_calls(ctx, calls, session=None)
    path = os.path.join(ws, "a.txt")
    assert results[1]["content"] == f'Error: edit requires reading "{path}" first — read the file, then retry'


async def test_an_aborted_signal_starts_no_call(ctx, session, ws):
    calls = [chat_call("c1", "write", {"file_path": "never.txt", "content": "x"})]
    assert await run_chat_tool_calls(ctx, calls, session=session, signal=AbortSignal.aborted_signal()) == []
    assert not os.path.exists(os.path.join(ws, "never.txt"))


# -- Responses --------------------------------------------------------------------------------


async def test_responses_round_trip_through_the_openai_sdk(ws, ctx, session):
    import openai
    from openai.types.responses import ResponseInputParam
    from openai.types.responses.response_input_item_param import FunctionCallOutput

    a = os.path.join(ws, "a.txt")
    sent: list[dict[str, Any]] = []
    message = {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "reading", "annotations": []}],
    }
    replies = [
        response_object(
            [
                message,
                {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read",
                 "arguments": '{"file_path": "a.txt", "limit": 1}', "status": "completed"},
                {"type": "function_call", "id": "fc_2", "call_id": "call_2", "name": "write",
                 "arguments": "{bad", "status": "completed"},
            ]
        ),
        response_object([message]),
    ]
    client = openai.AsyncOpenAI(api_key="sk-test", base_url="http://llm.test/v1", http_client=mock_client(replies, sent))
    tools = responses_tools(ctx)
    response = await client.responses.create(model="gpt-test", input="look", tools=tools)
    outputs = await run_responses_function_calls(ctx, response, session=session)
    assert outputs == [
        {
            "type": "function_call_output",
            "call_id": "call_1",
            "output": f"<path>{a}</path>\n<type>file</type>\n<content>\n1: alpha\n\n"
            "(Showing lines 1-1 of 2. Use offset=2 to continue.)\n</content>",
        },
        {
            "type": "function_call_output",
            "call_id": "call_2",
            "output": 'Error: invalid arguments: "arguments" must be an object',
        },
    ]
    for item in outputs:
        conforms(FunctionCallOutput, item)
    TypeAdapter(ResponseInputParam).validate_python(outputs)
    await client.responses.create(model="gpt-test", input=outputs, previous_response_id=response.id, tools=tools)
    assert sent[0]["tools"] == tools
    assert sent[1]["input"] == outputs
    # plain dicts work too: a whole response, or its bare output list
    plain = response_object([message, {"type": "function_call", "call_id": "call_3", "name": "read", "arguments": ""}])
    expected = [
        {
            "type": "function_call_output",
            "call_id": "call_3",
            "output": 'Error: invalid arguments: missing required property "file_path"',
        }
    ]
    assert await run_responses_function_calls(ctx, plain, session=session) == expected
    assert await run_responses_function_calls(ctx, plain["output"], session=session) == expected


# -- Anthropic Messages -----------------------------------------------------------------------


async def test_anthropic_round_trip_through_the_sdk(ws, ctx, session):
    import anthropic
    from anthropic.types import MessageParam, ToolResultBlockParam

    a = os.path.join(ws, "a.txt")
    sent: list[dict[str, Any]] = []
    replies = [
        anthropic_message(
            [
                {"type": "text", "text": "Let me fix it."},
                {"type": "tool_use", "id": "tu_1", "name": "read", "input": {"file_path": "a.txt"}},
                {"type": "tool_use", "id": "tu_2", "name": "edit",
                 "input": {"file_path": "a.txt", "old_string": "a", "new_string": "A", "replace_all": True}},
                {"type": "tool_use", "id": "tu_3", "name": "read", "input": {"file_path": 5}},
            ]
        ),
        anthropic_message([{"type": "text", "text": "done"}], stop="end_turn"),
    ]
    client = anthropic.AsyncAnthropic(api_key="sk-test", base_url="http://llm.test", http_client=mock_client(replies, sent))
    tools = anthropic_tools(ctx)
    history: list[Any] = [{"role": "user", "content": "capitalize"}]
    reply = await client.messages.create(model="claude-test", max_tokens=100, messages=history, tools=tools)
    blocks = await run_anthropic_tool_uses(ctx, reply, session=session)
    assert blocks == [
        {"type": "tool_result", "tool_use_id": "tu_1", "content": read_text(a, "alpha", "beta"), "is_error": False},
        {
            "type": "tool_result",
            "tool_use_id": "tu_2",
            "content": f"The file {a} has been updated. All occurrences were successfully replaced.",
            "is_error": False,
        },
        {
            "type": "tool_result",
            "tool_use_id": "tu_3",
            "content": 'Error: invalid arguments: "file_path" must be a string',
            "is_error": True,
        },
    ]
    for block in blocks:
        conforms(ToolResultBlockParam, block)
    history += [{"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in reply.content]}]
    history += [{"role": "user", "content": blocks}]
    TypeAdapter(MessageParam).validate_python(history[-1])
    await client.messages.create(model="claude-test", max_tokens=100, messages=history, tools=tools)
    assert sent[0]["tools"] == tools
    assert sent[1]["messages"][-1]["content"] == blocks
    with open(a) as handle:
        assert handle.read() == "AlphA\nbetA\n"


# -- pydantic-ai ------------------------------------------------------------------------------


async def test_pydantic_ai_toolset_under_function_model(ws, ctx):
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from dsh_fs.adapters.pydantic_ai import DshFsToolset

    a = os.path.join(ws, "a.txt")
    seen: dict[str, Any] = {}

    def model(messages: list[Any], info: AgentInfo) -> ModelResponse:
        if "tools" not in seen:
            seen["tools"] = {t.name: (t.description, t.parameters_json_schema, t.sequential, t.strict) for t in info.function_tools}
            seen["instructions"] = info.instructions
            return ModelResponse(
                parts=[
                    ToolCallPart("read", {"file_path": "a.txt"}, tool_call_id="p1"),
                    ToolCallPart("edit", '{"file_path": "a.txt", "old_string": "beta", "new_string": "delta"}', tool_call_id="p2"),
                    ToolCallPart("read", "{not json", tool_call_id="p3"),
                    ToolCallPart("write", "", tool_call_id="p4"),
                ]
            )
        seen["returns"] = {
            p.tool_call_id: p.content for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolReturnPart)
        }
        return ModelResponse(parts=[TextPart("ok")])

    agent = Agent(FunctionModel(model), toolsets=[DshFsToolset(ctx, cwd=ws)])
    result = await agent.run("go")
    assert result.output == "ok"
    assert seen["tools"] == {
        "edit": (EDIT_DESCRIPTION, EDIT_SCHEMA, True, False),
        "glob": (GLOB_DESCRIPTION, GLOB_SCHEMA, False, False),  # read-only: may run in parallel
        "grep": (GREP_DESCRIPTION, GREP_SCHEMA, False, False),
        "list": (LIST_DESCRIPTION, LIST_SCHEMA, False, False),
        "read": (READ_DESCRIPTION, READ_SCHEMA_DEFAULT, False, False),
        "write": (WRITE_DESCRIPTION, WRITE_SCHEMA, True, False),
    }
    assert seen["instructions"] == LIST_PROMPT + "\n\n" + FULL_PROMPT.split("\n\n", 1)[1]  # the tool sections only
    assert seen["returns"] == {
        "p1": read_text(a, "alpha", "beta"),
        "p2": f"The file {a} has been updated successfully.",
        "p3": 'Error: invalid arguments: "arguments" must be an object',
        "p4": 'Error: invalid arguments: missing required property "file_path"; missing required property "content"',
    }
    with open(a) as handle:
        assert handle.read() == "alpha\ndelta\n"


async def test_pydantic_ai_toolset_can_report_failures_as_tool_failed(ws, ctx):
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from dsh_fs.adapters.pydantic_ai import DshFsToolset

    parts: list[Any] = []

    def model(messages: list[Any], info: AgentInfo) -> ModelResponse:
        if not parts:
            parts.append(None)
            return ModelResponse(parts=[ToolCallPart("edit", {"file_path": "a.txt", "old_string": "a", "new_string": "b"}, tool_call_id="e1")])
        parts.extend(p for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolReturnPart))
        return ModelResponse(parts=[TextPart("ok")])

    agent = Agent(FunctionModel(model), toolsets=[DshFsToolset(ctx, cwd=ws, errors="tool_failed", instructions=False)])
    await agent.run("go")
    failed = parts[1]
    assert failed.outcome == "failed"
    assert failed.content == f'Error: edit requires reading "{os.path.join(ws, "a.txt")}" first — read the file, then retry'
    with pytest.raises(ValueError, match="errors must be"):
        DshFsToolset(ctx, errors="raise")  # type: ignore[arg-type]


async def test_pydantic_ai_toolset_under_test_model(ws, ctx):
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelRequest, ToolReturnPart
    from pydantic_ai.models.test import TestModel

    from dsh_fs.adapters.pydantic_ai import DshFsToolset

    agent = Agent(TestModel(call_tools=["read"]), toolsets=[DshFsToolset(ctx, cwd=ws)])
    result = await agent.run("go")
    returns = [p for m in result.all_messages() if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolReturnPart)]
    assert len(returns) == 1 and returns[0].tool_name == "read"
    # TestModel makes up the path "a": the exact not-found text comes back
    assert returns[0].content == f'Error: cannot read "{os.path.join(ws, "a")}": not found'
