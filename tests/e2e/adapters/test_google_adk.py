"""Google ADK end to end: ``DshFsToolset`` in an ADK ``Agent`` run by an ``InMemoryRunner``,
driven by a scripted model (a ``BaseLlm`` subclass). No network.

Each scenario of ``frameworkkit`` (read then edit; edit without read; stale edit; a path
outside the root) must give the model exactly the registry's texts — a result as
``{"result": text}``, a failure as ``{"status": "error", "error_message": text}`` — and leave
the file as the scenario says.
"""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from google.adk.agents import Agent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import InMemoryRunner
from google.genai import types
from pydantic import Field

import dsh_fs
from dsh_fs.adapters.google_adk import DshFsToolset
from frameworkkit import SCENARIOS, Scenario, expected_texts, make_workspace, tool_calls


class ScriptedLlm(BaseLlm):
    """Answers each request with the next scripted ``Content``; records every request."""

    replies: Any = None
    requests: list[LlmRequest] = Field(default_factory=list)

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        # a snapshot of what the model is sent (tools_dict holds the live tools: not copied)
        self.requests.append(LlmRequest(contents=[c.model_copy(deep=True) for c in llm_request.contents],
                                        config=llm_request.config.model_copy(deep=True)))
        yield LlmResponse(content=next(self.replies))


def _replies(steps: list[Any]) -> Iterator[types.Content]:
    """One function call per reply; a callable step runs before the next reply is made."""
    for index, step in enumerate(steps):
        if callable(step):
            step()
            continue
        name, arguments = step
        call = types.FunctionCall(id=f"call_{index}", name=name, args=arguments)
        yield types.Content(role="model", parts=[types.Part(function_call=call)])
    yield types.Content(role="model", parts=[types.Part(text="Done.")])


async def _run(agent: Agent, prompt: str) -> list[Any]:
    runner = InMemoryRunner(agent=agent, app_name="dsh-fs-test")
    session = await runner.session_service.create_session(app_name="dsh-fs-test", user_id="u")
    message = types.Content(role="user", parts=[types.Part(text=prompt)])
    events = [event async for event in runner.run_async(user_id="u", session_id=session.id, new_message=message)]
    await runner.close()
    return events


def _responses(request: LlmRequest) -> list[types.FunctionResponse]:
    return [part.function_response for content in request.contents for part in content.parts or []
            if part.function_response is not None]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_scenario(scenario: Scenario, tmp_path: Path) -> None:
    ws = make_workspace(str(tmp_path))
    expected = expected_texts(scenario, ws)
    steps = scenario.steps(ws)
    model = ScriptedLlm(model="scripted", replies=_replies(steps))
    ctx = dsh_fs.create_context(root=ws)
    toolset = DshFsToolset(ctx)
    agent = Agent(name="coder", model=model, instruction="Fix what the user asks.", tools=[toolset])
    events = anyio.run(_run, agent, "Fix the typo in a.txt")
    assert events[-1].content.parts[0].text == "Done."
    assert Path(ws, "a.txt").read_text() == scenario.final
    calls = tool_calls(steps)
    assert len(model.requests) == len(calls) + 1
    # the model got each result back, exactly, in the shape ADK gives it
    responses = _responses(model.requests[-1])
    assert [r.name for r in responses] == [name for name, _ in calls]
    assert [r.id for r in responses] == [f"call_{steps.index(call)}" for call in calls]
    shapes = [{"status": "error", "error_message": text} if failed else {"result": text}
              for text, failed in zip(expected, scenario.errors)]
    assert [r.response for r in responses] == shapes
    assert scenario.marker in expected[-1]
    # every request declared exactly the registry's schemas and carried the tools' guidance
    for request in model.requests:
        (tool,) = request.config.tools
        declared = [{"name": d.name, "description": d.description, "parameters": d.parameters_json_schema}
                    for d in tool.function_declarations]
        assert declared == ctx.tools.schemas()
        instruction = request.config.system_instruction
        assert instruction.startswith("Fix what the user asks.")
        assert instruction.count(toolset.instructions_text()) == 1 and toolset.instructions_text() != ""


def test_filter_prefix_text_errors_and_bad_arguments(tmp_path: Path) -> None:
    """ADK's ``tool_filter``/``tool_name_prefix`` apply; ``errors="text"`` returns the refusal
    as a result; bad arguments get the registry's own text (ADK validates nothing)."""
    ws = make_workspace(str(tmp_path))
    ctx = dsh_fs.create_context(root=ws)
    steps = [("files_read", {"file_path": 7}),
             ("files_edit", {"file_path": os.path.join(ws, "a.txt"), "old_string": "teh", "new_string": "the"})]
    model = ScriptedLlm(model="scripted", replies=_replies(steps))
    toolset = DshFsToolset(ctx, errors="text", instructions=False, tool_filter=["read", "edit"],
                           tool_name_prefix="files")
    agent = Agent(name="coder", model=model, instruction="Fix it.", tools=[toolset])
    anyio.run(_run, agent, "Fix the typo in a.txt")

    async def direct() -> list[str]:
        session = dsh_fs.Session()
        return [(await ctx.tools.execute("read", {"file_path": 7}, session=session)).text,
                (await ctx.tools.execute("edit", steps[1][1], session=session)).text]

    bad, refused = anyio.run(direct)
    assert bad.startswith("Error: ") and "edit requires reading" in refused
    assert [r.response for r in _responses(model.requests[-1])] == [{"result": bad}, {"result": refused}]
    (tool,) = model.requests[0].config.tools
    assert [d.name for d in tool.function_declarations] == ["files_edit", "files_read"]
    assert toolset.instructions_text() not in model.requests[0].config.system_instruction
    assert Path(ws, "a.txt").read_text() == "hello teh world\n"


def test_one_session_per_toolset(tmp_path: Path) -> None:
    """A read through one toolset does not authorize an edit through another (two agents)."""
    ws = make_workspace(str(tmp_path))
    ctx = dsh_fs.create_context(root=ws)
    path = os.path.join(ws, "a.txt")
    first, second = DshFsToolset(ctx), DshFsToolset(ctx)

    async def calls() -> tuple[Any, Any]:
        read = next(t for t in await first.get_tools() if t.name == "read")
        edit = next(t for t in await second.get_tools() if t.name == "edit")
        seen = await read.run_async(args={"file_path": path}, tool_context=None)  # type: ignore[arg-type]
        return seen, await edit.run_async(args={"file_path": path, "old_string": "teh", "new_string": "the"},
                                          tool_context=None)  # type: ignore[arg-type]

    seen, refused = anyio.run(calls)
    assert seen.startswith("<path>") and refused["status"] == "error"
    assert "edit requires reading" in refused["error_message"]
    assert Path(path).read_text() == "hello teh world\n"
    with pytest.raises(ValueError, match="errors must be"):
        DshFsToolset(ctx, errors="raise")  # type: ignore[arg-type]
