"""LlamaIndex end to end: ``DshFsToolSpec`` in a ``FunctionAgent`` driven by llama-index-core's
``MockFunctionCallingLLM`` with a scripted response generator. No network.

Each scenario of ``frameworkkit`` must give the model exactly the registry's texts, errors as
``ToolOutput(is_error=True)``, and leave the file as the scenario says. The agent workflow is
async only; the tools' sync ``call`` is tested directly.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest
from llama_index.core.agent.workflow import FunctionAgent, ToolCallResult
from llama_index.core.base.llms.types import ChatMessage, MessageRole, ToolCallBlock
from llama_index.core.llms.mock import MockFunctionCallingLLM

import dsh_fs
from dsh_fs.adapters.llamaindex import DshFsToolSpec, ToolCallFailed
from frameworkkit import SCENARIOS, Scenario, expected_texts, make_workspace, tool_calls

# llama-index's workflow engine reads pydantic's deprecated attributes while it collects steps
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:inspect")


class Script:
    """A response generator: one tool call per model turn, then a final answer; callable
    steps run before the next reply. Records the tools offered and the messages seen."""

    def __init__(self, steps: list[Any]) -> None:
        self.steps = list(steps)
        self.offered: list[list[dict[str, Any]]] = []
        self.seen: list[list[ChatMessage]] = []

    def __call__(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
        self.offered.append([tool.metadata.to_openai_tool() for tool in kwargs.get("tools") or []])
        self.seen.append(list(messages))
        while self.steps and callable(self.steps[0]):
            self.steps.pop(0)()
        if not self.steps:
            return ChatMessage(role=MessageRole.ASSISTANT, content="Done.")
        name, arguments = self.steps.pop(0)
        return ChatMessage(role=MessageRole.ASSISTANT, blocks=[
            ToolCallBlock(tool_call_id=f"call_{len(self.seen)}", tool_name=name, tool_kwargs=arguments)])


async def _run(agent: FunctionAgent) -> tuple[Any, list[ToolCallResult]]:
    handler = agent.run(user_msg="Fix the typo in a.txt")
    results = [event async for event in handler.stream_events() if isinstance(event, ToolCallResult)]
    return await handler, results


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_scenario(scenario: Scenario, tmp_path: Path) -> None:
    ws = make_workspace(str(tmp_path))
    expected = expected_texts(scenario, ws)
    steps = scenario.steps(ws)
    script = Script(steps)
    spec = DshFsToolSpec(dsh_fs.create_context(root=ws))
    agent = FunctionAgent(tools=spec.to_tool_list(), llm=MockFunctionCallingLLM(response_generator=script),
                          system_prompt=spec.instructions())
    output, results = anyio.run(_run, agent)
    assert [r.tool_output.content for r in results] == expected
    assert [r.tool_output.is_error for r in results] == scenario.errors
    assert [r.tool_name for r in results] == [name for name, _ in tool_calls(steps)]
    assert scenario.marker in results[-1].tool_output.content
    assert Path(ws, "a.txt").read_text() == scenario.final
    assert str(output.response.content) == "Done."
    # the model saw each result as the tool message of its call, and exactly the registry's tools
    tool_messages = [m for m in script.seen[-1] if m.role == MessageRole.TOOL]
    assert [m.content for m in tool_messages] == expected
    assert script.offered[0] == dsh_fs.adapters.chat_tools(dsh_fs.create_context(root=ws))
    assert script.seen[0][0].role == MessageRole.SYSTEM and script.seen[0][0].content == spec.instructions() != ""


def test_sync_calls_and_one_session_per_spec(tmp_path: Path) -> None:
    ws = make_workspace(str(tmp_path))
    ctx = dsh_fs.create_context(root=ws)
    first, second = DshFsToolSpec(ctx), DshFsToolSpec(ctx)
    path = os.path.join(ws, "a.txt")
    edit_args = {"file_path": path, "old_string": "teh", "new_string": "the"}
    try:
        read = {t.metadata.name: t for t in first.to_tool_list()}["read"]
        assert read.call(file_path=path).content.startswith(f"<path>{path}</path>")
        with pytest.raises(ToolCallFailed, match="edit requires reading"):
            second.to_tool_list(["edit"])[0].call(**edit_args)
        assert Path(path).read_text() == "hello teh world\n"
        (edit,) = first.to_tool_list(["edit"])
        assert edit.call(**edit_args).content == f"The file {path} has been updated successfully."
    finally:
        first.close()
        second.close()
    assert Path(path).read_text() == "hello the world\n"


def test_unknown_names_are_refused(tmp_path: Path) -> None:
    spec = DshFsToolSpec(dsh_fs.create_context(root=make_workspace(str(tmp_path))))
    with pytest.raises(ValueError, match="no such tools: bogus"):
        spec.to_tool_list(["read", "bogus"])
