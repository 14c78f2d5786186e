"""The editing faces in the vendor adapters (docs/design/EDITING-FACES-DESIGN.md §1.2–§1.5, §6.3).

Covers: the built-in definitions (``{"type": "apply_patch"}`` in the Responses tools,
``text_editor_20250728`` in the Anthropic tools, both in ``tool_definitions``); the Responses
adapter turning ``apply_patch_call`` items (dicts and the ``openai`` SDK's objects) into
``apply_patch_call_output`` items with ``status`` and ``output``, in model order with the
function calls, with the Agents SDK runner's texts for malformed operations; the Anthropic
adapter answering text-editor ``tool_use`` blocks with ``tool_result`` blocks (``is_error``);
and the Agents SDK: ``DshApplyPatchEditor`` called directly and through the SDK's own runner
(``Runner.run`` with a scripted model emitting ``apply_patch_call`` items).
Over the in-memory fake provider (``MemoryFs``); not covered: the executor's rules
(tests/integration/tool_patch/test_apply_patch.py).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import dsh_fs
from dsh_fs import Session
from dsh_fs.adapters import anthropic_tools, responses_tools, run_anthropic_tool_uses, run_responses_function_calls
from dsh_fs.adapters import tool_definitions
from dsh_fs import AbortSignal

from sandboxkit import Approvals

pytestmark = pytest.mark.anyio


@pytest.fixture
def ctx(memory_fs: Any) -> dsh_fs.Context:
    fs = memory_fs(files={"/abs/a.txt": "one\ntwo\n", "/abs/b.txt": "bee\n"})
    return dsh_fs.create_context(provider=fs, search=False,
                                 faces=["apply_patch", "str_replace_based_edit_tool", "str_replace_editor"])


def read_call(call_id: str, path: str) -> dict[str, Any]:
    return {"type": "function_call", "call_id": call_id, "name": "read", "arguments": json.dumps({"file_path": path})}


def patch_call(call_id: str, **operation: Any) -> dict[str, Any]:
    return {"type": "apply_patch_call", "call_id": call_id, "status": "completed", "operation": operation}


def test_the_vendor_apis_get_their_built_in_tools(ctx: dsh_fs.Context) -> None:
    # DEVIATIONS E12
    tools = responses_tools(ctx)
    assert [t.get("name", t["type"]) for t in tools] == [
        "apply_patch", "edit", "list", "read", "str_replace_based_edit_tool", "str_replace_editor", "write"]
    assert tools[0] == {"type": "apply_patch"}
    assert tools[4]["type"] == "function" and tools[4]["parameters"]["properties"]["insert_line"] == {
        "type": "integer", "description": "The line number after which to insert the text (0 for beginning of file)."}
    claude = anthropic_tools(ctx)
    assert claude[4] == {"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"}
    assert claude[0]["name"] == "apply_patch" and "input_schema" in claude[0]
    assert claude[5]["name"] == "str_replace_editor" and claude[5]["input_schema"]["required"] == ["command", "path"]
    assert tool_definitions(ctx, "anthropic") == claude
    mcp = tool_definitions(ctx, "mcp")
    assert mcp[0]["inputSchema"] == {"type": "object", "properties": {"input": {
        "type": "string", "description": "The entire contents of the apply_patch command"}}, "required": ["input"]}


async def test_responses_apply_patch_calls_answer_in_model_order(ctx: dsh_fs.Context) -> None:
    session = Session(cwd="/abs")
    output = {"output": [
        {"type": "reasoning", "id": "r"},
        read_call("c1", "a.txt"),
        patch_call("p1", type="update_file", path="a.txt", diff="@@\n one\n-two\n+TWO\n"),
        patch_call("p2", type="create_file", path="new/c.txt", diff="+hello\n+"),
        patch_call("p3", type="delete_file", path="b.txt"),
        patch_call("p4", type="rename_file", path="x"),
        patch_call("p5", type="update_file", path="a.txt", diff=""),
        patch_call("p6", type="update_file", path="a.txt", diff="@@\n-nope\n+x\n"),
        read_call("c2", "a.txt"),
    ]}
    items = await run_responses_function_calls(ctx, output, session=session)
    assert [(i["type"], i["call_id"]) for i in items] == [
        ("function_call_output", "c1"), *[("apply_patch_call_output", f"p{n}") for n in range(1, 7)],
        ("function_call_output", "c2")]
    outputs = {i["call_id"]: (i.get("status"), i["output"]) for i in items}
    assert outputs["p1"] == ("completed", "Updated /abs/a.txt")
    assert outputs["p2"] == ("completed", "Created /abs/new/c.txt")
    assert outputs["p3"] == ("failed", 'delete requires reading "/abs/b.txt" first — read the file, then retry')
    assert outputs["p4"] == ("failed", "Unknown apply_patch operation: rename_file")
    assert outputs["p5"] == ("failed", "Apply patch operation update_file is missing the required diff payload.")
    assert outputs["p6"] == ("failed", "Failed to find expected lines in /abs/a.txt:\nnope")
    assert outputs["c2"][1].startswith("<path>/abs/a.txt</path>") and "1: one\n2: TWO" in outputs["c2"][1]
    fs = ctx.fs
    assert fs.text("/abs/a.txt") == "one\nTWO\n" and fs.text("/abs/new/c.txt") == "hello\n"
    assert fs.text("/abs/b.txt") == "bee\n"


async def test_responses_sdk_objects_and_several_operations(ctx: dsh_fs.Context) -> None:
    # DEVIATIONS E10
    from openai.types.responses import ResponseApplyPatchToolCall

    session = Session(cwd="/abs")
    await ctx.tools.execute("read", {"file_path": "b.txt"}, session=session)
    item = ResponseApplyPatchToolCall.model_validate(
        {"type": "apply_patch_call", "id": "x", "call_id": "p1", "status": "completed",
         "operation": {"type": "delete_file", "path": "b.txt"}})
    (answer,) = await run_responses_function_calls(ctx, [item], session=session)
    assert answer == {"type": "apply_patch_call_output", "call_id": "p1", "status": "completed",
                      "output": "Deleted /abs/b.txt"}
    several = {"type": "apply_patch_call", "call_id": "p2", "operations": [
        {"type": "create_file", "path": "x.txt", "diff": "+x\n+"},
        {"type": "create_file", "path": "a.txt", "diff": "+clash\n+"},
    ]}
    (failed,) = await run_responses_function_calls(ctx, {"output": [several]}, session=session)
    assert failed["status"] == "failed"
    assert failed["output"] == "Failed to add file /abs/a.txt: the file already exists"
    assert ctx.fs.text("/abs/x.txt") is None  # all or nothing (E10)


async def test_responses_operations_are_checked_as_the_tool_s_input(ctx: dsh_fs.Context) -> None:
    """D11 on the operation's texts as on the registry tool's ``input``; a blank path is a
    missing path (not a resolve error naming a ``file_path`` the model never sent)."""
    session = Session(cwd="/abs")
    output = [
        patch_call("p1", type="create_file", path="s.txt", diff="+ok\ud800\n+"),
        patch_call("p2", type="create_file", path="s\udc00.txt", diff="+ok\n+"),
        patch_call("p3", type="create_file", path="   ", diff="+ok\n+"),
    ]
    items = await run_responses_function_calls(ctx, output, session=session)
    assert [(i["status"], i["output"]) for i in items] == [
        ("failed", "diff must be valid Unicode text (lone surrogate U+D800 at index 3)"),
        ("failed", "path must be valid Unicode text (lone surrogate U+DC00 at index 1)"),
        ("failed", "Apply patch operation is missing a valid path."),
    ]
    assert ctx.fs.text("/abs/s.txt") is None
    reference = dsh_fs.create_context(provider=ctx.fs, search=False, faces=["apply_patch"], profile="reference")
    (lenient,) = await run_responses_function_calls(reference, output[:1], session=session)
    assert lenient["status"] == "completed" and ctx.fs.text("/abs/s.txt") == "ok\ufffd\n"


async def test_responses_stop_at_an_abort_and_need_the_context(ctx: dsh_fs.Context) -> None:
    output = [patch_call("p1", type="create_file", path="z.txt", diff="+z\n+")]
    assert await run_responses_function_calls(ctx, output, session=None, signal=AbortSignal.aborted_signal()) == []
    with pytest.raises(TypeError, match="apply_patch_call items need the Context"):
        await run_responses_function_calls(ctx.tools, output, session=None)


async def test_anthropic_text_editor_blocks(ctx: dsh_fs.Context) -> None:
    session = Session(cwd="/abs")
    content = {"content": [
        {"type": "text", "text": "let me look"},
        {"type": "tool_use", "id": "t1", "name": "str_replace_based_edit_tool",
         "input": {"command": "view", "path": "/abs/a.txt"}},
        {"type": "tool_use", "id": "t2", "name": "str_replace_based_edit_tool",
         "input": {"command": "str_replace", "path": "/abs/a.txt", "old_str": "two", "new_str": "2"}},
        {"type": "tool_use", "id": "t3", "name": "str_replace_based_edit_tool",
         "input": {"command": "str_replace", "path": "/abs/a.txt", "old_str": "zzz", "new_str": "2"}},
    ]}
    blocks = await run_anthropic_tool_uses(ctx, content, session=session)
    assert blocks == [
        {"type": "tool_result", "tool_use_id": "t1", "content": "1: one\n2: two", "is_error": False},
        {"type": "tool_result", "tool_use_id": "t2", "content": "Successfully replaced text at exactly one location.",
         "is_error": False},
        {"type": "tool_result", "tool_use_id": "t3",
         "content": "Error: No match found for replacement. Please check your text and try again.", "is_error": True},
    ]


# -- the OpenAI Agents SDK --------------------------------------------------------------------

async def test_the_agents_sdk_editor_called_directly(ctx: dsh_fs.Context) -> None:
    from agents import ApplyPatchEditor, ApplyPatchOperation, ApplyPatchResult

    from dsh_fs.adapters.openai_agents import DshApplyPatchEditor

    session = Session(cwd="/abs")
    editor = DshApplyPatchEditor(ctx, session)
    assert isinstance(editor, ApplyPatchEditor)
    await ctx.tools.execute("read", {"file_path": "a.txt"}, session=session)
    moved = await editor.update_file(ApplyPatchOperation(type="update_file", path="a.txt", diff="@@\n-one\n+ONE\n",
                                                         move_to="sub/a.txt"))
    assert moved == ApplyPatchResult(status="completed", output="Updated /abs/a.txt\nMoved /abs/a.txt to /abs/sub/a.txt")
    assert ctx.fs.text("/abs/sub/a.txt") == "ONE\ntwo\n" and ctx.fs.text("/abs/a.txt") is None
    refused = await editor.delete_file(ApplyPatchOperation(type="delete_file", path="b.txt"))
    assert refused.status == "failed" and refused.output is not None and "delete requires reading" in refused.output
    created = await editor.create_file(ApplyPatchOperation(type="create_file", path="n.txt", diff="+n\n+"))
    assert created == ApplyPatchResult(status="completed", output="Created /abs/n.txt")


async def test_the_agents_sdk_runner_uses_the_editor(ctx: dsh_fs.Context) -> None:
    from agents import Agent, ModelResponse, Runner, Usage, set_tracing_disabled
    from agents.models.interface import Model
    from openai.types.responses import ResponseApplyPatchToolCall, ResponseOutputMessage, ResponseOutputText

    from dsh_fs.adapters.openai_agents import apply_patch_tool, function_tools

    seen: list[list[Any]] = []

    class Scripted(Model):
        """Turn 1: read a.txt; turn 2: patch it and create a file; turn 3: done."""

        turn = 0

        async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> ModelResponse:
            seen.append(list(input) if isinstance(input, list) else [input])
            self.turn += 1
            if self.turn == 1:
                output: list[Any] = [{"type": "function_call", "id": "f1", "call_id": "c1", "name": "read",
                                      "arguments": json.dumps({"file_path": "a.txt"}), "status": "completed"}]
                from openai.types.responses import ResponseFunctionToolCall

                output = [ResponseFunctionToolCall.model_validate(output[0])]
            elif self.turn == 2:
                output = [ResponseApplyPatchToolCall.model_validate({
                    "type": "apply_patch_call", "id": "p", "call_id": "p1", "status": "completed",
                    "operation": {"type": "update_file", "path": "a.txt", "diff": "@@\n one\n-two\n+2\n"}})]
            else:
                output = [ResponseOutputMessage.model_validate({
                    "type": "message", "id": "m", "role": "assistant", "status": "completed",
                    "content": [ResponseOutputText(type="output_text", text="done", annotations=[]).model_dump()]})]
            return ModelResponse(output=output, usage=Usage(), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:  # pragma: no cover - not streamed here
            raise NotImplementedError

    set_tracing_disabled(True)  # nothing leaves the machine
    session = Session(cwd="/abs")
    agent = Agent(name="coder", model=Scripted(),
                  tools=[*function_tools(ctx, session, names=["read"]), apply_patch_tool(ctx, session)])
    result = await Runner.run(agent, "change two to 2")
    assert result.final_output == "done"
    assert ctx.fs.text("/abs/a.txt") == "one\n2\n"
    answered = [item for item in seen[2] if isinstance(item, dict) and item.get("type") == "apply_patch_call_output"]
    assert answered == [{"type": "apply_patch_call_output", "call_id": "p1", "status": "completed",
                         "output": "Updated /abs/a.txt"}]


async def test_the_agents_sdk_editor_under_a_sandbox_denial_offers_no_escalation(memory_fs: Any) -> None:
    """The Responses ``apply_patch`` tool has no ``sandbox_permissions`` field, so a sandbox
    denial through the editor (and the Responses adapter) ends with the denial marker and no
    escalation hint (docs/SANDBOX.md: the hint only where the tool can carry the request);
    nothing is written."""
    from agents import ApplyPatchOperation

    from dsh_fs.adapters.openai_agents import DshApplyPatchEditor

    fs = memory_fs(files={"/abs/a.txt": "one\ntwo\n"})
    # an approval callback is composed, so the registry's own tools offer the escalation (D37)
    ctx = dsh_fs.create_context(provider=fs, search=False, faces=["apply_patch"], sandbox="read-only",
                                approval=Approvals("rejected"))
    session = Session(cwd="/abs")
    editor = DshApplyPatchEditor(ctx, session)
    await ctx.tools.execute("read", {"file_path": "a.txt"}, session=session)
    denied = await editor.update_file(ApplyPatchOperation(type="update_file", path="a.txt", diff="@@\n-one\n+ONE\n"))
    assert denied.status == "failed"
    assert denied.output == ('cannot write "/abs/a.txt": file access denied under read-only mode\n'
                             "[sandbox: file access denied under read-only mode]")
    assert fs.text("/abs/a.txt") == "one\ntwo\n"
    # the registry's apply_patch under the same denial does offer it (its schema has the field, X2;
    # someone can approve, D37)
    registry = await ctx.tools.execute("apply_patch", {"input": "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n"
                                                                 "*** End Patch"}, session=session)
    assert registry.is_error and registry.text.endswith("the approval prompt asks the user]")
