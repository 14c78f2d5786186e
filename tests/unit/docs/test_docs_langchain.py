"""The LangChain, deepagents and LlamaIndex programs of docs/FRAMEWORKS.md (section "LangChain,
LangGraph, deepagents and LlamaIndex"), run exactly as printed.

Each ``python`` block runs in a workspace whose README.md has a typo. The framework runs for
real; only the model is scripted: the agent constructor (``create_agent``,
``create_deep_agent``) is wrapped to swap the named model for ``langchainkit``'s scripted chat
model (the name is checked to be one LangChain resolves to DeepSeek), and LlamaIndex's
``llama_index.llms.deepseek.DeepSeek`` (a separate package, not installed here) is a stand-in
that returns llama-index-core's ``MockFunctionCallingLLM``. The scripted model reads README.md,
fixes the typo with the edit tool, then answers; the test checks what the program printed, the
file, and the tool results the model got. No network, no API key.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from docskit import DOCS, assert_fixed, blocks_by_marker, run_printed, typo_results, typo_workspace

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _examples() -> dict[str, str]:
    return blocks_by_marker("### LangChain, LangGraph, deepagents and LlamaIndex",
                            {"DshFsToolkit": "langchain", "DshFsBackend": "deepagents", "DshFsToolSpec": "llamaindex"},
                            DOCS / "FRAMEWORKS.md")


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-test")
    return typo_workspace(tmp_path, monkeypatch)


def _expected(ws: str) -> list[str]:
    return list(typo_results(ws))


def _langchain_steps(read: str, edit: str, path: str) -> list[Any]:
    return [(read, {"file_path": path}), (edit, {"file_path": path, "old_string": "teh", "new_string": "the"})]


def _scripted_constructor(monkeypatch: pytest.MonkeyPatch, module: Any, name: str, steps: list[Any]) -> tuple[list[str], Any]:
    """Wrap ``module.<name>(model, **kwargs)`` to run with the scripted model; returns the model
    names the program asked for and the scripted model."""
    from langchain.chat_models.base import _parse_model
    from langchainkit import ScriptedChatModel, replies

    model = ScriptedChatModel(messages=_final("Fixed the typo.", replies(steps)))
    named: list[str] = []
    real = getattr(module, name)

    def constructor(requested: str, **kwargs: Any) -> Any:
        assert _parse_model(requested, None) == ("deepseek-chat", "deepseek")
        named.append(requested)
        return real(model, **kwargs)

    monkeypatch.setattr(module, name, constructor)
    return named, model


def _final(text: str, messages: Any) -> Any:
    from langchain_core.messages import AIMessage

    for message in messages:
        yield AIMessage(content=text) if not message.tool_calls else message


def test_the_section_has_one_example_per_framework() -> None:
    assert set(_examples()) == {"langchain", "deepagents", "llamaindex"}


def test_langchain_example(ws: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import langchain.agents
    from langchain_core.messages import ToolMessage

    named, model = _scripted_constructor(monkeypatch, langchain.agents, "create_agent",
                                         _langchain_steps("read", "edit", "README.md"))
    run_printed(_examples()["langchain"])
    assert_fixed(ws, capsys)
    assert named == ["deepseek:deepseek-chat"]
    assert [m.content for m in model.turns[-1] if isinstance(m, ToolMessage)] == _expected(ws)


def test_deepagents_example(ws: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import deepagents
    from langchain_core.messages import ToolMessage

    path = "/README.md"  # deepagents' own paths: "/" is the project (the backend's virtual mode)
    named, model = _scripted_constructor(monkeypatch, deepagents, "create_deep_agent",
                                         _langchain_steps("read_file", "edit_file", path))
    run_printed(_examples()["deepagents"])
    assert_fixed(ws, capsys)
    assert named == ["deepseek:deepseek-chat"]
    results = [m for m in model.turns[-1] if isinstance(m, ToolMessage)]
    assert [m.status for m in results] == ["success", "success"]
    assert "teh agent" in results[0].content and results[1].content == f"Successfully replaced 1 instance(s) of the string in '{path}'"


@pytest.mark.parametrize("framework", ["langchain", "deepagents"])
def test_the_printed_install_line_brings_the_model_the_program_names(framework: str) -> None:
    """The printed install line for the program installs ``langchain-deepseek``, which the
    program's ``"deepseek:deepseek-chat"`` needs (without it ``create_agent`` raises
    ``ImportError``); it installs beside the ``[dev]`` environment (it does not pin ``openai < 3``)."""
    from docskit import README, section
    from langchain.chat_models import init_chat_model
    from langchain_deepseek import ChatDeepSeek

    printed = section("### LangChain, LangGraph, deepagents and LlamaIndex", DOCS / "FRAMEWORKS.md")
    lines = [line for line in printed.split("```")[0::2] if f"'.[{framework}]'" in line]
    assert lines and "langchain-deepseek" in lines[0], framework
    row = next(line for line in README.read_text(encoding="utf-8").splitlines() if f"'.[{framework}]'" in line)
    assert "langchain-deepseek" in row, row  # the README's framework table names the same install
    assert isinstance(init_chat_model("deepseek:deepseek-chat", api_key="sk-test"), ChatDeepSeek)


def test_llamaindex_example(ws: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from llama_index.core.base.llms.types import ChatMessage, MessageRole, ToolCallBlock
    from llama_index.core.llms.mock import MockFunctionCallingLLM

    steps = _langchain_steps("read", "edit", "README.md")
    seen: list[list[ChatMessage]] = []

    def respond(messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
        seen.append(list(messages))
        if len(seen) > len(steps):
            return ChatMessage(role=MessageRole.ASSISTANT, content="Fixed the typo.")
        name, arguments = steps[len(seen) - 1]
        return ChatMessage(role=MessageRole.ASSISTANT,
                           blocks=[ToolCallBlock(tool_call_id=f"c{len(seen)}", tool_name=name, tool_kwargs=arguments)])

    made: list[dict[str, Any]] = []
    stand_in = types.ModuleType("llama_index.llms.deepseek")

    def deepseek(**kwargs: Any) -> MockFunctionCallingLLM:
        made.append(kwargs)
        return MockFunctionCallingLLM(response_generator=respond)

    stand_in.DeepSeek = deepseek  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "llama_index.llms.deepseek", stand_in)
    monkeypatch.setenv("DEEPSEEK_API_BASE", "http://127.0.0.1:8000/v1")  # the model server's address
    run_printed(_examples()["llamaindex"])
    assert_fixed(ws, capsys)
    assert made == [{"model": "deepseek-chat", "api_base": "http://127.0.0.1:8000/v1"}]
    assert [m.content for m in seen[-1] if m.role == MessageRole.TOOL] == _expected(ws)
