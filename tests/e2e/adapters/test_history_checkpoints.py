"""A framework's checkpoints and runs tied to the agent's file history
(``dsh_fs.adapters.checkpoints.FileCheckpoints``, docs/HISTORY.md "Frameworks"), with the real
packages and a scripted model.

Covers: a LangGraph agent (``langchain.agents.create_agent``) with a real checkpointer
(``InMemorySaver``), sent back to the checkpoint before its edit, gets its files back to that
point (sync ``invoke`` and async ``ainvoke``), and replaying from there redoes the edit; a
checkpoint no tool call started from stands for the next one that did; a dry run; a file someone
else changed since is refused; deepagents (``create_deep_agent`` over ``DshFsBackend``) the same;
a pydantic-ai run taken back by its ``run_id``; a context without a history is refused.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from langchain_core.messages import AIMessage

from dsh_fs import create_context
from dsh_fs.adapters.checkpoints import FileCheckpoints

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

TYPO = "A tool that teh agent uses.\n"


@pytest.fixture
def ws(tmp_path: Path) -> str:
    root = tmp_path / "project"
    root.mkdir()
    (root / "README.md").write_text(TYPO)
    return os.path.realpath(root)


def _script(ws: str, *, read: str = "read", edit: str = "edit", write: str = "write") -> Iterator[AIMessage]:
    """read README.md, fix its typo, write NOTES.md, answer; then (a replay) answer again."""
    readme = f"{ws}/README.md"
    calls = [(read, {"file_path": readme}), (edit, {"file_path": readme, "old_string": "teh", "new_string": "the"}),
             (write, {"file_path": f"{ws}/NOTES.md", "content": "fixed a typo\n"})]
    for index, (name, args) in enumerate(calls):
        yield AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"call_{index}"}])
    yield AIMessage(content="Fixed the typo.")
    yield AIMessage(content="Fixed it again.")


def _checkpoint_before(history: list[Any], tool: str) -> Any:
    """The graph state whose next step runs the tool call named ``tool``."""
    for state in history:
        last = state.values["messages"][-1] if state.values.get("messages") else None
        if state.next == ("tools",) and last is not None and last.tool_calls[0]["name"] == tool:
            return state
    raise AssertionError(f"no checkpoint before a {tool} call")


def _langgraph_agent(ws: str) -> tuple[Any, Any, Any]:
    from langchain.agents import create_agent
    from langgraph.checkpoint.memory import InMemorySaver
    from langchainkit import ScriptedChatModel

    from dsh_fs.adapters.langchain import DshFsToolkit

    toolkit = DshFsToolkit(create_context(root=ws, history=True))
    files = FileCheckpoints(toolkit)
    agent = create_agent(ScriptedChatModel(messages=_script(ws)), tools=toolkit.get_tools(),
                         checkpointer=InMemorySaver())
    return agent, files, toolkit


def test_a_langgraph_agent_sent_back_to_a_checkpoint_gets_its_files_back(ws: str) -> None:
    agent, files, toolkit = _langgraph_agent(ws)
    config = {"configurable": {"thread_id": "t1"}}
    agent.invoke({"messages": [("user", "Fix the typo in README.md")]}, config)
    assert Path(ws, "README.md").read_text() == "A tool that the agent uses.\n" and Path(ws, "NOTES.md").exists()
    history = list(agent.get_state_history(config))
    before_edit = _checkpoint_before(history, "edit")
    preview = files.rewind(before_edit.config, dry_run=True)
    assert {(f.path, f.action) for f in preview.files} == {(f"{ws}/README.md", "restore"), (f"{ws}/NOTES.md", "remove")}
    assert "-A tool that the agent uses.\n+A tool that teh agent uses.\n" in next(
        f.diff for f in preview.files if f.action == "restore")
    done = files.rewind(before_edit.config)
    assert not done.refused and Path(ws, "README.md").read_text() == TYPO and not Path(ws, "NOTES.md").exists()
    # the graph replays from there: the edit runs again (the model saw the file at that point)
    replayed = agent.invoke(None, before_edit.config)
    assert replayed["messages"][-1].content in ("Fixed the typo.", "Fixed it again.")
    assert Path(ws, "README.md").read_text() == "A tool that the agent uses.\n"
    # a checkpoint no tool call started from (the first run's last) has the files its tool calls left
    end_of_first_run = files.rewind(history[0].config, dry_run=True)
    assert end_of_first_run.to == 2 and [(f.path, f.action) for f in end_of_first_run.files] == [
        (f"{ws}/NOTES.md", "restore"), (f"{ws}/README.md", "unchanged")]
    toolkit.close()


def test_a_file_someone_else_changed_is_refused_then_skipped(ws: str) -> None:
    agent, files, toolkit = _langgraph_agent(ws)
    config = {"configurable": {"thread_id": "t1"}}
    agent.invoke({"messages": [("user", "Fix the typo in README.md")]}, config)
    Path(ws, "NOTES.md").write_text("a person's notes\n")
    before_edit = _checkpoint_before(list(agent.get_state_history(config)), "edit")
    refused = files.rewind(before_edit.config)
    assert refused.refused and Path(ws, "NOTES.md").read_text() == "a person's notes\n"
    assert Path(ws, "README.md").read_text() == "A tool that the agent uses.\n"
    skipped = files.rewind(before_edit.config, skip_changed=True)
    assert not skipped.refused and Path(ws, "README.md").read_text() == TYPO
    assert Path(ws, "NOTES.md").read_text() == "a person's notes\n"
    toolkit.close()


def test_the_async_graph_the_same(ws: str) -> None:
    agent, files, toolkit = _langgraph_agent(ws)
    config = {"configurable": {"thread_id": "t2"}}

    async def run() -> None:
        await agent.ainvoke({"messages": [("user", "Fix the typo in README.md")]}, config)
        history = [state async for state in agent.aget_state_history(config)]
        before_write = _checkpoint_before(history, "write")
        done = await files.arewind(before_write.config)
        assert not done.refused and [f.action for f in done.files] == ["remove"]

    anyio.run(run)
    assert Path(ws, "README.md").read_text() == "A tool that the agent uses.\n" and not Path(ws, "NOTES.md").exists()
    toolkit.close()


def test_deepagents_the_same(ws: str) -> None:
    from deepagents import create_deep_agent
    from langgraph.checkpoint.memory import InMemorySaver
    from langchainkit import ScriptedChatModel

    from dsh_fs.adapters.deepagents import DshFsBackend

    backend = DshFsBackend(create_context(root=ws, history=True))
    files = FileCheckpoints(backend)
    model = ScriptedChatModel(messages=_script("", read="read_file", edit="edit_file", write="write_file"))
    agent = create_deep_agent(model, backend=backend, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "d1"}}
    agent.invoke({"messages": [("user", "Fix the typo in README.md")]}, config)
    assert Path(ws, "README.md").read_text() == "A tool that the agent uses.\n" and Path(ws, "NOTES.md").exists()
    before_edit = _checkpoint_before(list(agent.get_state_history(config)), "edit_file")
    done = files.rewind(before_edit.config)
    assert not done.refused and Path(ws, "README.md").read_text() == TYPO and not Path(ws, "NOTES.md").exists()
    backend.close()


def test_a_pydantic_ai_run_is_taken_back_by_its_run_id(ws: str) -> None:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import FunctionModel

    from dsh_fs.adapters.pydantic_ai import DshFsToolset

    def script(path: str, content: str) -> Any:
        turns = iter([[ToolCallPart("write", {"file_path": path, "content": content})], [TextPart("Written.")]])
        return FunctionModel(lambda messages, info: ModelResponse(parts=next(turns)))

    toolset = DshFsToolset(create_context(root=ws, history=True))
    files = FileCheckpoints(toolset)

    async def run() -> None:
        first = await Agent(script(f"{ws}/one.txt", "1\n"), toolsets=[toolset]).run("write one")
        second = await Agent(script(f"{ws}/two.txt", "2\n"), toolsets=[toolset]).run("write two")
        assert Path(ws, "one.txt").exists() and Path(ws, "two.txt").exists()
        done = await files.arewind(second.run_id)
        assert not done.refused and not Path(ws, "two.txt").exists() and Path(ws, "one.txt").exists()
        await files.arewind(first.run_id)
        assert not Path(ws, "one.txt").exists()
        with pytest.raises(RuntimeError, match="async only"):
            files.rewind(first.run_id)

    anyio.run(run)


def test_a_context_without_a_history_is_refused(ws: str) -> None:
    from dsh_fs.adapters.langchain import DshFsToolkit

    with pytest.raises(ValueError, match="history"):
        FileCheckpoints(DshFsToolkit(create_context(root=ws)))
    with pytest.raises(TypeError):
        FileCheckpoints(object())
