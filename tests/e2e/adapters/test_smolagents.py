"""smolagents end to end: ``DshFsToolCollection`` in a ``ToolCallingAgent`` and a ``CodeAgent``,
driven by a scripted model (a smolagents ``Model`` subclass returning scripted
``ChatMessage`` s). No network.

Each scenario of ``frameworkkit`` (read then edit; edit without read; stale edit; a path
outside the root) must give the model exactly the registry's texts (a failure as smolagents
reports a raised tool error) and leave the file as the scenario says.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from smolagents import CodeAgent, ToolCallingAgent
from smolagents.models import ChatMessage, ChatMessageToolCall, ChatMessageToolCallFunction, MessageRole, Model
from smolagents.models import get_tool_json_schema

import dsh_fs
from dsh_fs.adapters.smolagents import DshFsToolCollection, DshFsToolError
from frameworkkit import SCENARIOS, Scenario, expected_texts, make_workspace, tool_calls


class ScriptedModel(Model):
    """Answers each ``generate`` with the next scripted ``ChatMessage``; records what it was
    sent (the messages as text, the tools' JSON schemas)."""

    def __init__(self, replies: Iterator[ChatMessage]) -> None:
        super().__init__(model_id="scripted")
        self.replies = replies
        self.turns: list[str] = []
        self.tools: list[dict[str, Any]] = []

    def generate(self, messages: list[Any], stop_sequences: Any = None, response_format: Any = None,
                 tools_to_call_from: Any = None, **kwargs: Any) -> ChatMessage:
        self.turns.append(json.dumps([m if isinstance(m, dict) else m.dict() for m in messages], default=str))
        if tools_to_call_from:
            self.tools = [get_tool_json_schema(tool) for tool in tools_to_call_from]
        return next(self.replies)


def _tool_call(index: int, name: str, arguments: dict[str, Any]) -> ChatMessage:
    function = ChatMessageToolCallFunction(name=name, arguments=arguments)
    return ChatMessage(role=MessageRole.ASSISTANT, content="",
                       tool_calls=[ChatMessageToolCall(function=function, id=f"call_{index}", type="function")])


def _calling_replies(steps: list[Any]) -> Iterator[ChatMessage]:
    """One tool call per reply; a callable step runs before the next reply is made."""
    for index, step in enumerate(steps):
        if callable(step):
            step()
            continue
        yield _tool_call(index, *step)
    yield _tool_call(len(steps), "final_answer", {"answer": "Done."})


def _code_replies(steps: list[Any]) -> Iterator[ChatMessage]:
    """One code action per tool call (keyword arguments, the result printed)."""
    for step in steps:
        if callable(step):
            step()
            continue
        name, arguments = step
        call = ", ".join(f"{key}={value!r}" for key, value in arguments.items())
        yield ChatMessage(role=MessageRole.ASSISTANT, content=f"Thought: next.\n<code>\nprint({name}({call}))\n</code>")
    yield ChatMessage(role=MessageRole.ASSISTANT, content='Thought: done.\n<code>\nfinal_answer("Done.")\n</code>')


def _expected_schemas(ws: str) -> list[dict[str, Any]]:
    """The registry's Chat Completions definitions, each optional property marked nullable."""
    tools = dsh_fs.adapters.chat_tools(dsh_fs.create_context(root=ws))
    for tool in tools:
        parameters = tool["function"]["parameters"]
        parameters.setdefault("required", [])  # smolagents always sends the list (list has no required argument)
        for name, schema in parameters["properties"].items():
            if name not in parameters["required"]:
                schema["nullable"] = True
    return tools


@pytest.mark.parametrize("kind", ["tool_calling", "code"])
@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_scenario(scenario: Scenario, kind: str, tmp_path: Path) -> None:
    ws = make_workspace(str(tmp_path))
    expected = expected_texts(scenario, ws)
    steps = scenario.steps(ws)
    collection = DshFsToolCollection(dsh_fs.create_context(root=ws))
    if kind == "tool_calling":
        model = ScriptedModel(_calling_replies(steps))
        agent: Any = ToolCallingAgent(tools=collection.tools, model=model, instructions=collection.instructions(),
                                      max_steps=8, verbosity_level=0)
    else:
        model = ScriptedModel(_code_replies(steps))
        agent = CodeAgent(tools=collection.tools, model=model, instructions=collection.instructions(),
                          max_steps=8, verbosity_level=0)
    try:
        answer = agent.run("Fix the typo in a.txt")
    finally:
        collection.close()
    assert answer == "Done."
    assert Path(ws, "a.txt").read_text() == scenario.final
    steps_done = [step for step in agent.memory.steps if getattr(step, "model_output_message", None) is not None]
    calls = tool_calls(steps)
    assert len(steps_done) == len(calls) + 1
    for step, text, failed in zip(steps_done, expected, scenario.errors):
        if failed:  # smolagents reports the raised DshFsToolError in the step's error
            assert step.error is not None and text in str(step.error)
            assert "DshFsToolError: " + text in str(step.error)
        else:
            assert step.error is None
            if kind == "tool_calling":
                assert step.observations == text.strip()  # smolagents strips an observation
            else:  # what the code printed
                logs = step.observations.split("Execution logs:\n", 1)[1]
                assert logs.split("\nLast output from code snippet:", 1)[0] == text
    # what the model was sent next: each text, exactly, in the conversation
    for turn, text in zip(model.turns[1:], expected):
        assert json.dumps(text)[1:-1] in turn
    assert scenario.marker in expected[-1]
    assert collection.instructions() != "" and json.dumps(collection.instructions())[1:-1] in model.turns[0]
    if kind == "tool_calling":
        offered = [tool for tool in model.tools if tool["function"]["name"] != "final_answer"]
        assert sorted(offered, key=lambda t: t["function"]["name"]) == _expected_schemas(ws)


def test_forward_by_position_and_null_optionals(tmp_path: Path) -> None:
    """A CodeAgent may call ``read("a.txt")``; a null optional argument is "not given"."""
    ws = make_workspace(str(tmp_path))
    collection = DshFsToolCollection(dsh_fs.create_context(root=ws), names=["read"])
    (read,) = collection.tools
    try:
        by_position = read(os.path.join(ws, "a.txt"))
        with_nulls = read(file_path=os.path.join(ws, "a.txt"), offset=None, limit=None)
    finally:
        collection.close()
    assert by_position == with_nulls == expected_texts(SCENARIOS[0], ws)[0]


def test_errors_as_text_and_one_session_per_collection(tmp_path: Path) -> None:
    """``errors="text"`` returns the refusal; a read through one collection does not authorize
    an edit through another (two agents)."""
    ws = make_workspace(str(tmp_path))
    ctx = dsh_fs.create_context(root=ws)
    first, second = DshFsToolCollection(ctx), DshFsToolCollection(ctx, errors="text")
    path = os.path.join(ws, "a.txt")
    try:
        read = next(t for t in first.tools if t.name == "read")
        edit = next(t for t in second.tools if t.name == "edit")
        assert read(file_path=path).startswith("<path>")
        refused = edit(file_path=path, old_string="teh", new_string="the")
        raising = next(t for t in first.tools if t.name == "edit")
        with pytest.raises(DshFsToolError) as caught:
            raising(file_path=os.path.join(ws, "missing.txt"), old_string="a", new_string="b")
    finally:
        first.close()
        second.close()
    assert refused.startswith("Error: ") and "edit requires reading" in refused
    assert str(caught.value).startswith("Error: ")
    assert Path(path).read_text() == "hello teh world\n"


def test_bad_options_are_refused(tmp_path: Path) -> None:
    ctx = dsh_fs.create_context(root=make_workspace(str(tmp_path)))
    with pytest.raises(ValueError, match="no such tools: bogus"):
        DshFsToolCollection(ctx, names=["read", "bogus"])
    with pytest.raises(ValueError, match="errors must be"):
        DshFsToolCollection(ctx, errors="loud")  # type: ignore[arg-type]
