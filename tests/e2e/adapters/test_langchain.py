"""LangChain / LangGraph end to end: ``DshFsToolkit`` in ``langchain.agents.create_agent`` and
LangGraph's prebuilt ReAct agent, driven by a scripted chat model (langchain-core's
``GenericFakeChatModel`` with ``bind_tools``), sync and async. No network.

Each scenario of ``frameworkkit`` (read then edit; edit without read; stale edit; a path
outside the root) must give the model exactly the registry's texts, errors as
``ToolMessage(status="error")``, and leave the file as the scenario says.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any

import anyio
import pytest
from langchain_core.messages import ToolMessage

import dsh_fs
from dsh_fs.adapters.langchain import DshFsToolkit
from frameworkkit import SCENARIOS, Scenario, expected_texts, make_workspace, tool_calls
from langchainkit import ScriptedChatModel, replies


def _agent(kind: str, model: ScriptedChatModel, toolkit: DshFsToolkit) -> Any:
    if kind == "react":
        from langgraph.prebuilt import create_react_agent

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # langgraph points to create_agent
            return create_react_agent(model, toolkit.get_tools(), prompt=toolkit.instructions())
    from langchain.agents import create_agent

    return create_agent(model, tools=toolkit.get_tools(), system_prompt=toolkit.instructions())


@pytest.mark.parametrize("kind,mode", [("create_agent", "sync"), ("create_agent", "async"), ("react", "sync"),
                                       ("react", "async")])
@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_scenario(scenario: Scenario, kind: str, mode: str, tmp_path: Path) -> None:
    ws = make_workspace(str(tmp_path))
    expected = expected_texts(scenario, ws)
    steps = scenario.steps(ws)
    model = ScriptedChatModel(messages=replies(steps))
    toolkit = DshFsToolkit(dsh_fs.create_context(root=ws))
    agent = _agent(kind, model, toolkit)
    request = {"messages": [("user", "Fix the typo in a.txt")]}
    try:
        if mode == "sync":
            state = agent.invoke(request)
        else:
            state = anyio.run(agent.ainvoke, request)
    finally:
        toolkit.close()
    results = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert [m.content for m in results] == expected
    assert [m.status == "error" for m in results] == scenario.errors
    assert [m.name for m in results] == [name for name, _ in tool_calls(steps)]
    assert scenario.marker in results[-1].content
    assert Path(ws, "a.txt").read_text() == scenario.final
    assert state["messages"][-1].content == "Done."
    # the model was offered exactly the registry's definitions, with the tools' guidance
    assert model.bound == dsh_fs.adapters.chat_tools(dsh_fs.create_context(root=ws))
    assert model.turns[0][0].content == toolkit.instructions() != ""


def test_one_session_per_toolkit(tmp_path: Path) -> None:
    """A read through one toolkit does not authorize an edit through another (two agents)."""
    ws = make_workspace(str(tmp_path))
    ctx = dsh_fs.create_context(root=ws)
    first, second = DshFsToolkit(ctx), DshFsToolkit(ctx)
    path = os.path.join(ws, "a.txt")
    try:
        read = next(t for t in first.get_tools() if t.name == "read")
        edit = next(t for t in second.get_tools() if t.name == "edit")
        assert read.invoke({"file_path": path}).startswith("<path>")
        refused = edit.invoke({"type": "tool_call", "id": "c1", "name": "edit",
                               "args": {"file_path": path, "old_string": "teh", "new_string": "the"}})
    finally:
        first.close()
        second.close()
    assert refused.status == "error" and "edit requires reading" in refused.content
    assert Path(path).read_text() == "hello teh world\n"


def test_bad_arguments_get_the_registry_text(tmp_path: Path) -> None:
    """LangChain validates nothing against a JSON-schema args_schema: the registry answers."""
    ws = make_workspace(str(tmp_path))
    ctx = dsh_fs.create_context(root=ws)
    toolkit = DshFsToolkit(ctx)
    read = next(t for t in toolkit.get_tools() if t.name == "read")
    try:
        message = read.invoke({"type": "tool_call", "id": "c1", "name": "read", "args": {"file_path": 7}})
    finally:
        toolkit.close()
    expected = anyio.run(lambda: ctx.tools.execute("read", {"file_path": 7}, session=dsh_fs.Session()))
    assert message.status == "error" and message.content == expected.text


def test_sync_call_on_a_running_loop_is_refused(tmp_path: Path) -> None:
    ws = make_workspace(str(tmp_path))
    toolkit = DshFsToolkit(dsh_fs.create_context(root=ws), names=["read"])
    (read,) = toolkit.get_tools()

    async def inside() -> None:
        with pytest.raises(RuntimeError, match="use the async API"):
            read._run(file_path=os.path.join(ws, "a.txt"))

    anyio.run(inside)
    assert anyio.run(read.ainvoke, {"file_path": os.path.join(ws, "a.txt")}).startswith("<path>")


def test_unknown_tool_names_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no such tools: bogus"):
        DshFsToolkit(dsh_fs.create_context(root=make_workspace(str(tmp_path))), names=["read", "bogus"])


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_parallel_calls_of_one_message(mode: str, tmp_path: Path) -> None:
    """ToolNode runs one message's calls at once (sync: in threads, all on the toolkit's loop)."""
    from langchain.agents import create_agent
    from langchain_core.messages import AIMessage

    ws = make_workspace(str(tmp_path))
    names = [f"f{n}.txt" for n in range(6)]
    for name in names:
        Path(ws, name).write_text(f"{name} teh\n")
    reads = AIMessage(content="", tool_calls=[{"name": "read", "args": {"file_path": os.path.join(ws, n)}, "id": f"r{i}"}
                                              for i, n in enumerate(names)])
    edits = AIMessage(content="", tool_calls=[{"name": "edit", "id": f"e{i}", "args": {
        "file_path": os.path.join(ws, n), "old_string": "teh", "new_string": "the"}} for i, n in enumerate(names)])
    model = ScriptedChatModel(messages=iter([reads, edits, AIMessage(content="Done.")]))
    toolkit = DshFsToolkit(dsh_fs.create_context(root=ws))
    agent = create_agent(model, tools=toolkit.get_tools())
    request = {"messages": [("user", "fix them")]}
    try:
        state = agent.invoke(request) if mode == "sync" else anyio.run(agent.ainvoke, request)
    finally:
        toolkit.close()
    results = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert [m.status for m in results] == ["success"] * 12
    assert [Path(ws, n).read_text() for n in names] == [f"{n} the\n" for n in names]
