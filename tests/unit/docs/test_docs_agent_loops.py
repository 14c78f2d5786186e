"""The agent loops of docs/FRAMEWORKS.md, one per API, run exactly as printed.

Each ``python`` block of its "One agent loop per API" section is executed as a
program in a workspace whose README.md has a typo. The real SDK clients talk to a scripted
model through an in-memory transport (``llmkit``): its first reply reads README.md, its second
fixes the typo with ``edit``, its third is the final answer. The test checks what the program
printed, the file on disk, and that the model got the tools and exactly the tools' results.
pydantic-ai's model name is checked to be one pydantic-ai knows; the run itself uses its
``FunctionModel``. No network, no API key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import dsh_fs
from docskit import DOCS, EDIT_ARGS, READ_ARGS, assert_fixed, blocks_by_marker, run_printed, typo_results, typo_workspace
from llmkit import anthropic_message, chat_call, chat_completion, mock_client, response_object


LOCAL_SERVER = "http://127.0.0.1:8000/v1"
"""``DEEPSEEK_API_BASE`` in the tests: a compatible server the program must be pointed at"""


def _examples() -> dict[str, str]:
    """The section's python blocks, keyed by the adapter each one uses."""
    return blocks_by_marker("## One agent loop per API", {"chat_tools": "chat", "responses_tools": "responses",
                                                          "anthropic_tools": "anthropic", "DshFsToolset": "pydantic-ai"},
                            DOCS / "FRAMEWORKS.md")


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    return typo_workspace(tmp_path, monkeypatch)


def _scripted(monkeypatch: pytest.MonkeyPatch, sdk: Any, client_class: str,
              replies: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Make ``sdk.<client_class>(**kwargs)`` build the real client on a transport that answers
    ``replies``; returns the request bodies sent and the constructor's keyword arguments."""
    sent: list[dict[str, Any]] = []
    made: list[dict[str, Any]] = []
    real = getattr(sdk, client_class)

    def client(**kwargs: Any) -> Any:
        made.append(kwargs)
        return real(**kwargs, http_client=mock_client(replies, sent))

    monkeypatch.setattr(sdk, client_class, client)
    return sent, made


def _tool_names(tools: list[dict[str, Any]]) -> list[str]:
    return sorted(tool.get("name") or tool["function"]["name"] for tool in tools)


def test_the_section_has_one_example_per_adapter() -> None:
    assert set(_examples()) == {"chat", "responses", "anthropic", "pydantic-ai"}


def test_chat_completions_example(ws: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import openai

    replies = [chat_completion([chat_call("c1", "read", READ_ARGS)]), chat_completion([chat_call("c2", "edit", EDIT_ARGS)]),
               chat_completion(None, "Fixed the typo.")]
    sent, made = _scripted(monkeypatch, openai, "AsyncOpenAI", replies)
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-test")
    monkeypatch.setenv("DEEPSEEK_API_BASE", LOCAL_SERVER)  # the model server's address comes from the environment
    run_printed(_examples()["chat"])
    read, edited = typo_results(ws)
    assert_fixed(ws, capsys)
    assert made == [{"base_url": LOCAL_SERVER, "api_key": "sk-test"}]
    assert _tool_names(sent[0]["tools"]) == ["edit", "glob", "grep", "list", "read", "write"]
    assert sent[0]["messages"][0] == {"role": "system", "content": _guidance()}
    assert sent[1]["messages"][-1] == {"role": "tool", "tool_call_id": "c1", "content": read}
    assert sent[2]["messages"][-1] == {"role": "tool", "tool_call_id": "c2", "content": edited}


def _guidance() -> str:
    """The system prompt the printed loops send: the tools' guidance, without the identity line."""
    text = dsh_fs.create_context().system_prompt.render(only="tool:")
    assert "DeepSeek Harness SDK" not in text and "glob" in text and "edit" in text
    return text


def _function_call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    import json

    return {"type": "function_call", "id": f"fc_{call_id}", "call_id": call_id, "name": name,
            "arguments": json.dumps(arguments), "status": "completed"}


def test_responses_example(ws: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import openai

    answer = {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
              "content": [{"type": "output_text", "text": "Fixed the typo.", "annotations": []}]}
    replies = [response_object([_function_call("call_1", "read", READ_ARGS)]),
               response_object([_function_call("call_2", "edit", EDIT_ARGS)]), response_object([answer])]
    sent, _ = _scripted(monkeypatch, openai, "AsyncOpenAI", replies)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    run_printed(_examples()["responses"])
    read, edited = typo_results(ws)
    assert_fixed(ws, capsys)
    assert all(_tool_names(body["tools"]) == ["edit", "glob", "grep", "list", "read", "write"] for body in sent)
    assert all(body["instructions"] == _guidance() for body in sent)
    assert sent[1]["input"] == [{"type": "function_call_output", "call_id": "call_1", "output": read}]
    assert sent[2]["input"] == [{"type": "function_call_output", "call_id": "call_2", "output": edited}]
    assert sent[2]["previous_response_id"] == "resp_1"


def test_anthropic_example(ws: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import anthropic
    from anthropic._data import DEPRECATED_MODELS

    replies = [
        anthropic_message([{"type": "tool_use", "id": "tu_1", "name": "read", "input": READ_ARGS}]),
        anthropic_message([{"type": "text", "text": "Now the fix."},
                           {"type": "tool_use", "id": "tu_2", "name": "edit", "input": EDIT_ARGS}]),
        anthropic_message([{"type": "text", "text": "Fixed the typo."}], stop="end_turn"),
    ]
    sent, _ = _scripted(monkeypatch, anthropic, "AsyncAnthropic", replies)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    run_printed(_examples()["anthropic"])
    read, edited = typo_results(ws)
    assert_fixed(ws, capsys)
    assert sent[0]["model"] not in DEPRECATED_MODELS
    assert all(body["system"] == _guidance() for body in sent)
    assert all(_tool_names(body["tools"]) == ["edit", "glob", "grep", "list", "read", "write"] for body in sent)
    assert sent[1]["messages"][-1] == {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "tu_1", "content": read, "is_error": False}]}
    assert sent[2]["messages"][-2]["content"][1] == {"type": "tool_use", "id": "tu_2", "name": "edit", "input": EDIT_ARGS}
    assert sent[2]["messages"][-1] == {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "tu_2", "content": edited, "is_error": False}]}


def test_pydantic_ai_example(ws: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import pydantic_ai
    from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models import infer_model
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    returns: list[str] = []

    def model(messages: list[Any], info: AgentInfo) -> ModelResponse:
        returns[:] = [p.content for m in messages if isinstance(m, ModelRequest) for p in m.parts
                      if isinstance(p, ToolReturnPart)]
        step = sum(isinstance(m, ModelResponse) for m in messages)
        if step == 0:
            return ModelResponse(parts=[ToolCallPart("read", READ_ARGS, tool_call_id="p1")])
        if step == 1:
            return ModelResponse(parts=[ToolCallPart("edit", EDIT_ARGS, tool_call_id="p2")])
        return ModelResponse(parts=[TextPart("Fixed the typo.")])

    real = pydantic_ai.Agent
    named: list[Any] = []

    def agent(name: Any, **kwargs: Any) -> Any:
        named.append(infer_model(name))  # a model pydantic-ai knows (no request is made)
        return real(FunctionModel(model), **kwargs)

    monkeypatch.setattr(pydantic_ai, "Agent", agent)
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-test")
    monkeypatch.setenv("DEEPSEEK_API_BASE", LOCAL_SERVER)
    run_printed(_examples()["pydantic-ai"])
    assert_fixed(ws, capsys)
    assert [(m.model_name, m.system, m.base_url) for m in named] == [("deepseek-chat", "deepseek", LOCAL_SERVER + "/")]
    assert returns == list(typo_results(ws))
