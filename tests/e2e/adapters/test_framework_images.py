"""The framework integrations deliver ``read_image``'s image as an image (docs/IMAGES.md): a
scripted model of each framework receives, in the message its framework hands it, an image
part whose bytes decode to the file's pixels. No network.

CrewAI runs in its own venv (``tests/e2e/adapters/test_crewai.py``)."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import anyio
import pytest

import dsh_fs
from imagekit import encoded, gradient, pixels_of, rgb

PNG = encoded(gradient(), "PNG")
PIXELS = rgb(gradient())


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("DSH_FS_LOCK_DIR", str(tmp_path / "locks"))
    root = os.path.realpath(tmp_path / "ws")
    os.mkdir(root)
    Path(root, "shot.png").write_bytes(PNG)
    Path(root, "a.txt").write_text("hello\n")
    return root


def envelope(ws: str) -> str:
    return (f"<path>{ws}/shot.png</path>\n<type>image</type>\n<content>\n"
            f"image/png image, 37x23 px, {len(PNG)} bytes\n</content>")


# -- LangChain / LangGraph ------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["sync", "async"])
def test_langchain_tool_message_carries_a_standard_image_block(ws: str, mode: str) -> None:
    from langchain.agents import create_agent
    from langchain_anthropic import ChatAnthropic
    from langchain_core.messages import AIMessage, ToolMessage

    from dsh_fs.adapters.langchain import DshFsToolkit
    from langchainkit import ScriptedChatModel

    calls = AIMessage(content="", tool_calls=[
        {"name": "read_image", "args": {"file_path": "shot.png"}, "id": "c1"},
        {"name": "read", "args": {"file_path": "a.txt"}, "id": "c2"}])
    model = ScriptedChatModel(messages=iter([calls, AIMessage(content="A gradient.")]))
    toolkit = DshFsToolkit(dsh_fs.create_context(root=ws, images=True))
    agent = create_agent(model, tools=toolkit.get_tools())
    request = {"messages": [("user", "look at shot.png")]}
    try:
        agent.invoke(request) if mode == "sync" else anyio.run(agent.ainvoke, request)
    finally:
        toolkit.close()
    image_message, text_message = [m for m in model.turns[1] if isinstance(m, ToolMessage)]
    text, image = image_message.content
    assert text == {"type": "text", "text": envelope(ws)}
    assert image["type"] == "image" and image["mime_type"] == "image/png"
    assert pixels_of(base64.b64decode(image["base64"])) == PIXELS
    assert image_message.status == "success"
    assert isinstance(text_message.content, str) and text_message.content.startswith("<path>")  # text-only: unchanged
    # a real chat model integration turns the standard block into its API's image part
    payload = ChatAnthropic(model="claude-test", api_key="sk-test")._get_request_payload(model.turns[1])
    result = next(b for m in payload["messages"] for b in (m["content"] if isinstance(m["content"], list) else [])
                  if b.get("type") == "tool_result" and b["tool_use_id"] == "c1")
    sent_text, sent_image = result["content"]
    assert sent_text == {"type": "text", "text": envelope(ws)}
    assert sent_image["type"] == "image" and sent_image["source"]["type"] == "base64"
    assert sent_image["source"]["media_type"] == "image/png"
    assert base64.b64decode(sent_image["source"]["data"]) == PNG


# -- LlamaIndex -----------------------------------------------------------------------------

@pytest.mark.filterwarnings("ignore::DeprecationWarning:inspect")
def test_llamaindex_tool_message_carries_an_image_block(ws: str) -> None:
    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.core.base.llms.types import ChatMessage, ImageBlock, MessageRole, TextBlock, ToolCallBlock
    from llama_index.core.llms.mock import MockFunctionCallingLLM

    from dsh_fs.adapters.llamaindex import DshFsToolSpec

    seen: list[list[ChatMessage]] = []

    def script(messages: Any, **kwargs: Any) -> ChatMessage:
        seen.append(list(messages))
        if len(seen) > 1:
            return ChatMessage(role=MessageRole.ASSISTANT, content="A gradient.")
        return ChatMessage(role=MessageRole.ASSISTANT, blocks=[
            ToolCallBlock(tool_call_id="c1", tool_name="read_image", tool_kwargs={"file_path": "shot.png"}),
            ToolCallBlock(tool_call_id="c2", tool_name="read", tool_kwargs={"file_path": "a.txt"})])

    spec = DshFsToolSpec(dsh_fs.create_context(root=ws, images=True))
    agent = FunctionAgent(tools=spec.to_tool_list(), llm=MockFunctionCallingLLM(response_generator=script))

    async def run() -> Any:
        return await agent.run(user_msg="look at shot.png")

    anyio.run(run)
    results = {m.additional_kwargs["tool_call_id"]: m for m in seen[1] if m.role == MessageRole.TOOL}
    image_message, text_message = results["c1"], results["c2"]  # the workflow runs both at once
    text, image = image_message.blocks
    assert isinstance(text, TextBlock) and text.text == envelope(ws)
    assert isinstance(image, ImageBlock) and image.image_mimetype == "image/png"
    assert pixels_of(image.resolve_image().read()) == PIXELS
    assert [type(b) for b in text_message.blocks] == [TextBlock]  # text-only results: unchanged
    # the sync call returns the same blocks
    (tool,) = spec.to_tool_list(["read_image"])
    try:
        output = tool.call(file_path="shot.png")
    finally:
        spec.close()
    assert output.content == envelope(ws) and not output.is_error
    assert pixels_of(output.blocks[1].resolve_image().read()) == PIXELS


# -- smolagents -----------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["tool_calling", "code"])
def test_smolagents_next_request_carries_the_image(ws: str, kind: str) -> None:
    from smolagents import CodeAgent, ToolCallingAgent
    from smolagents.models import (
        ChatMessage,
        ChatMessageToolCall,
        ChatMessageToolCallFunction,
        MessageRole,
        Model,
        get_clean_message_list,
    )

    from dsh_fs.adapters.smolagents import DshFsToolCollection

    def call(name: str, arguments: dict[str, Any]) -> ChatMessage:
        function = ChatMessageToolCallFunction(name=name, arguments=arguments)
        return ChatMessage(role=MessageRole.ASSISTANT, content="",
                           tool_calls=[ChatMessageToolCall(function=function, id=f"id_{name}", type="function")])

    if kind == "code":
        replies = iter([ChatMessage(role=MessageRole.ASSISTANT,
                                    content="Thought: look.\n<code>\nprint(read_image(file_path='shot.png'))\n</code>"),
                        ChatMessage(role=MessageRole.ASSISTANT,
                                    content="Thought: done.\n<code>\nfinal_answer('A gradient.')\n</code>")])
    else:
        replies = iter([call("read_image", {"file_path": "shot.png"}), call("final_answer", {"answer": "A gradient."})])
    sent: list[list[Any]] = []

    class Scripted(Model):
        def generate(self, messages: list[Any], *args: Any, **kwargs: Any) -> ChatMessage:
            sent.append(list(messages))
            return next(replies)

    files = DshFsToolCollection(dsh_fs.create_context(root=ws, images=True), names=["read_image"])
    agent_class = CodeAgent if kind == "code" else ToolCallingAgent
    agent = agent_class(tools=files.tools, model=Scripted(model_id="scripted"), step_callbacks=[files.attach_images])
    try:
        assert agent.run("look at shot.png") == "A gradient."
    finally:
        files.close()
    second = get_clean_message_list(sent[1], convert_images_to_image_urls=True)  # as OpenAIModel sends it
    parts = [part for message in second if message["role"] == "user" for part in message["content"]
             if part["type"] == "image_url"]
    (part,) = parts
    head, _, data = part["image_url"]["url"].partition(",")
    assert head == "data:image/png;base64"
    assert pixels_of(base64.b64decode(data)) == PIXELS
    texts = [part["text"] for message in second for part in message["content"] if part["type"] == "text"]
    assert any(envelope(ws) in text for text in texts)  # the envelope stays the observation
    assert files._pending.take() == []  # handed over once


# -- Google ADK -----------------------------------------------------------------------------

def test_google_adk_function_response_carries_the_image_part(ws: str) -> None:
    from collections.abc import AsyncGenerator

    from google.adk.agents import Agent
    from google.adk.models.base_llm import BaseLlm
    from google.adk.models.llm_request import LlmRequest
    from google.adk.models.llm_response import LlmResponse
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    from dsh_fs.adapters.google_adk import DshFsToolset

    calls = [types.FunctionCall(id="c1", name="read_image", args={"file_path": "shot.png"}),
             types.FunctionCall(id="c2", name="read", args={"file_path": "a.txt"})]
    replies = iter([types.Content(role="model", parts=[types.Part(function_call=c) for c in calls]),
                    types.Content(role="model", parts=[types.Part(text="A gradient.")])])
    requests: list[list[types.Content]] = []

    class Scripted(BaseLlm):
        async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False
                                         ) -> AsyncGenerator[LlmResponse, None]:
            requests.append([c.model_copy(deep=True) for c in llm_request.contents])
            yield LlmResponse(content=next(replies))

    agent = Agent(name="looker", model=Scripted(model="scripted"), instruction="Look.",
                  tools=[DshFsToolset(dsh_fs.create_context(root=ws, images=True))])

    async def run() -> None:
        runner = InMemoryRunner(agent=agent, app_name="dsh-fs-test")
        session = await runner.session_service.create_session(app_name="dsh-fs-test", user_id="u")
        message = types.Content(role="user", parts=[types.Part(text="look at shot.png")])
        async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=message):
            pass
        await runner.close()

    anyio.run(run)
    responses = {p.function_response.id: p.function_response for c in requests[1] for p in c.parts or []
                 if p.function_response is not None}
    image, text = responses["c1"], responses["c2"]
    assert image.response == {"result": envelope(ws)}
    (part,) = image.parts
    assert part.inline_data.mime_type == "image/png" and part.inline_data.data == PNG
    assert pixels_of(part.inline_data.data) == PIXELS
    assert text.parts is None and text.response["result"].startswith("<path>")  # text-only results: unchanged
    # as the Gemini API's JSON carries it
    wire = image.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert wire["parts"][0]["inlineData"]["mimeType"] == "image/png"
    assert base64.urlsafe_b64decode(wire["parts"][0]["inlineData"]["data"]) == PNG  # genai: URL-safe base64


# -- deepagents -----------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["sync", "async"])
def test_deepagents_read_file_of_an_image_gives_an_image_block(ws: str, mode: str) -> None:
    import warnings

    from deepagents import create_deep_agent
    from langchain_core.messages import AIMessage, ToolMessage

    from dsh_fs.adapters.deepagents import DshFsBackend
    from langchainkit import ScriptedChatModel

    calls = AIMessage(content="", tool_calls=[{"name": "read_file", "args": {"file_path": f"{ws}/shot.png"}, "id": "c1"}])
    model = ScriptedChatModel(messages=iter([calls, AIMessage(content="A gradient.")]))
    backend = DshFsBackend(dsh_fs.create_context(root=ws, images=True))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        agent = create_deep_agent(model=model, backend=backend)
    request = {"messages": [("user", "look at shot.png")]}
    try:
        agent.invoke(request) if mode == "sync" else anyio.run(agent.ainvoke, request)
        # read_image's gates answer through deepagents' own "Error: " prefix, once
        Path(ws, "fake.png").write_bytes(encoded(gradient(), "JPEG"))
        refused = backend.read(f"{ws}/fake.png")
    finally:
        backend.close()
    (message,) = [m for m in model.turns[1] if isinstance(m, ToolMessage)]
    blocks = [b for b in message.content_blocks if b.get("type") == "image"]
    (image,) = blocks
    assert image["mime_type"] == "image/png" and base64.b64decode(image["base64"]) == PNG
    assert pixels_of(base64.b64decode(image["base64"])) == PIXELS
    assert refused.error is not None and refused.error.startswith('cannot read "') and "rename the file" in refused.error
    # the read was recorded: write_file may now replace the image (dsh-fs's observation policy)
    try:
        assert backend.write(f"{ws}/shot.png", "replaced\n").error is None
    finally:
        backend.close()


def test_deepagents_without_images_reads_an_image_as_text_and_refuses(ws: str) -> None:
    from dsh_fs.adapters.deepagents import DshFsBackend

    backend = DshFsBackend(dsh_fs.create_context(root=ws))
    try:
        result = backend.read(f"{ws}/shot.png")
    finally:
        backend.close()
    # virtual mode (the default): the model is shown the path below ``/`` (docs/FRAMEWORKS.md)
    assert result.file_data is None and result.error == 'cannot read "/shot.png": binary file (NUL byte at offset 8, line 3)'


def test_smolagents_pending_images_are_bounded() -> None:
    """Without ``attach_images`` registered, the kept images never grow past the bound."""
    from dsh_fs.adapters.smolagents import MAX_PENDING_IMAGES, PendingImages

    pending = PendingImages()
    for n in range(MAX_PENDING_IMAGES + 5):
        pending.add(bytes([n]))
    assert pending.take() == [bytes([n]) for n in range(5, MAX_PENDING_IMAGES + 5)]
    assert pending.take() == []
