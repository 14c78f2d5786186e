"""Every adapter delivers ``read_image``'s image as an image (docs/IMAGES.md): the request body
each real SDK serializes carries the image part, whose bytes are the file's. Scripted replies
(``llmkit``), no network."""

from __future__ import annotations

import base64
import json
import os
from typing import Any

import pytest
from pydantic import TypeAdapter

import dsh_fs
from imagekit import encoded, gradient, pixels_of, rgb
from llmkit import anthropic_message, chat_call, chat_completion, mock_client, response_object

pytestmark = pytest.mark.anyio

PNG = encoded(gradient(), "PNG")


@pytest.fixture
def ws(tmp_path, monkeypatch) -> str:
    monkeypatch.setenv("DSH_FS_LOCK_DIR", str(tmp_path / "locks"))
    root = os.path.realpath(tmp_path / "ws")
    os.mkdir(root)
    with open(os.path.join(root, "shot.png"), "wb") as handle:
        handle.write(PNG)
    return root


@pytest.fixture
def ctx(ws):
    return dsh_fs.create_context(cwd=ws, images=True)


def envelope(ws: str) -> str:
    return f"<path>{ws}/shot.png</path>\n<type>image</type>\n<content>\nimage/png image, 37x23 px, {len(PNG)} bytes\n</content>"


def from_data_url(url: str) -> bytes:
    head, _, data = url.partition(",")
    assert head == "data:image/png;base64"
    return base64.b64decode(data)


async def test_anthropic_sends_an_image_block_inside_the_tool_result(ws, ctx):
    import anthropic
    from anthropic.types import MessageParam

    from dsh_fs.adapters import anthropic_tools, run_anthropic_tool_uses

    sent: list[dict[str, Any]] = []
    replies = [anthropic_message([{"type": "tool_use", "id": "tu_1", "name": "read_image", "input": {"file_path": "shot.png"}},
                                  {"type": "tool_use", "id": "tu_2", "name": "read", "input": {"file_path": "shot.png"}}]),
               anthropic_message([{"type": "text", "text": "a gradient"}], stop="end_turn")]
    client = anthropic.AsyncAnthropic(api_key="sk-test", base_url="http://llm.test", http_client=mock_client(replies, sent))
    history: list[Any] = [{"role": "user", "content": "look"}]
    reply = await client.messages.create(model="claude-test", max_tokens=100, messages=history, tools=anthropic_tools(ctx))
    blocks = await run_anthropic_tool_uses(ctx, reply, session=dsh_fs.Session(cwd=ws))
    history += [{"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in reply.content]},
                {"role": "user", "content": blocks}]
    TypeAdapter(MessageParam).validate_python(history[-1])
    await client.messages.create(model="claude-test", max_tokens=100, messages=history, tools=anthropic_tools(ctx))
    image_result, text_result = sent[1]["messages"][-1]["content"]
    assert image_result["content"][0] == {"type": "text", "text": envelope(ws)}
    image = image_result["content"][1]
    assert image["type"] == "image" and image["source"]["type"] == "base64" and image["source"]["media_type"] == "image/png"
    assert pixels_of(base64.b64decode(image["source"]["data"])) == rgb(gradient())
    assert isinstance(text_result["content"], str) and text_result["is_error"] is True  # text-only results unchanged


async def test_responses_sends_input_image_in_the_function_call_output(ws, ctx):
    import openai

    from dsh_fs.adapters import responses_tools, run_responses_function_calls

    sent: list[dict[str, Any]] = []
    call = {"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "read_image",
            "arguments": json.dumps({"file_path": "shot.png"}), "status": "completed"}
    replies = [response_object([call]), response_object([])]
    client = openai.AsyncOpenAI(api_key="sk-test", base_url="http://llm.test/v1", http_client=mock_client(replies, sent))
    first = await client.responses.create(model="gpt-test", input="look", tools=responses_tools(ctx))
    items = await run_responses_function_calls(ctx, first, session=dsh_fs.Session(cwd=ws))
    await client.responses.create(model="gpt-test", input=items, previous_response_id=first.id, tools=responses_tools(ctx))
    (output,) = sent[1]["input"]
    assert output["type"] == "function_call_output" and output["call_id"] == "c1"
    text, image = output["output"]
    assert text == {"type": "input_text", "text": envelope(ws)}
    assert image["type"] == "input_image" and from_data_url(image["image_url"]) == PNG


async def test_I4_chat_completions_sends_the_image_in_a_user_message_after_the_tool_messages(ws, ctx):
    import openai
    from openai.types.chat import ChatCompletionMessageParam

    from dsh_fs.adapters import chat_tools, run_chat_tool_calls

    sent: list[dict[str, Any]] = []
    replies = [chat_completion([chat_call("c1", "read_image", {"file_path": "shot.png"}),
                                chat_call("c2", "read", {"file_path": "nope.txt"})]), chat_completion(None, "done")]
    client = openai.AsyncOpenAI(api_key="sk-test", base_url="http://llm.test/v1", http_client=mock_client(replies, sent))
    messages: list[Any] = [{"role": "user", "content": "look"}]
    completion = await client.chat.completions.create(model="deepseek-chat", messages=messages, tools=chat_tools(ctx))
    assistant = completion.choices[0].message
    answered = await run_chat_tool_calls(ctx, assistant.tool_calls, session=dsh_fs.Session(cwd=ws))
    messages += [assistant.model_dump(exclude_none=True), *answered]
    for message in messages:
        TypeAdapter(ChatCompletionMessageParam).validate_python(message)
    await client.chat.completions.create(model="deepseek-chat", messages=messages, tools=chat_tools(ctx))
    tool1, tool2, user = sent[1]["messages"][-3:]
    assert tool1 == {"role": "tool", "tool_call_id": "c1", "content": envelope(ws)}
    assert tool2["role"] == "tool" and tool2["content"].startswith("Error: cannot read")
    assert user["role"] == "user" and user["content"][0] == {"type": "text", "text": envelope(ws)}
    assert user["content"][1]["type"] == "image_url" and from_data_url(user["content"][1]["image_url"]["url"]) == PNG


async def test_chat_completions_text_only_results_add_no_user_message(ws, ctx):
    from dsh_fs.adapters import run_chat_tool_calls

    calls = [{"id": "c1", "type": "function", "function": {"name": "read", "arguments": '{"file_path": "x"}'}}]
    assert [m["role"] for m in await run_chat_tool_calls(ctx, calls, session=None)] == ["tool"]


async def test_pydantic_ai_returns_a_binary_image_and_anthropic_serializes_it_in_the_tool_result(ws, ctx):
    import anthropic
    from pydantic_ai import Agent
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.providers.anthropic import AnthropicProvider

    from dsh_fs.adapters.pydantic_ai import DshFsToolset

    sent: list[dict[str, Any]] = []
    replies = [anthropic_message([{"type": "tool_use", "id": "tu_1", "name": "read_image", "input": {"file_path": "shot.png"}}]),
               anthropic_message([{"type": "text", "text": "a gradient"}], stop="end_turn")]
    client = anthropic.AsyncAnthropic(api_key="sk-test", base_url="http://llm.test", http_client=mock_client(replies, sent))
    model = AnthropicModel("claude-test", provider=AnthropicProvider(anthropic_client=client))
    agent = Agent(model, toolsets=[DshFsToolset(ctx, cwd=ws)])
    result = await agent.run("look")
    assert result.output == "a gradient"
    blocks = [b for m in sent[1]["messages"] if m["role"] == "user" and isinstance(m["content"], list) for b in m["content"]]
    images = [part for b in blocks if b.get("type") == "tool_result" for part in (b.get("content") or []) if part.get("type") == "image"]
    images += [b for b in blocks if b.get("type") == "image"]
    assert len(images) == 1, blocks
    assert base64.b64decode(images[0]["source"]["data"]) == PNG
    texts = json.dumps(blocks)
    assert "37x23 px" in texts


async def test_the_agents_sdk_sends_the_image_output_as_input_image(ws, ctx):
    import openai
    from agents import Agent, OpenAIResponsesModel, Runner, set_tracing_disabled

    from dsh_fs.adapters.openai_agents import function_tools

    sent: list[dict[str, Any]] = []
    call = {"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "read_image",
            "arguments": json.dumps({"file_path": "shot.png"}), "status": "completed"}
    done = {"type": "message", "id": "m", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": "a gradient", "annotations": []}]}
    replies = [response_object([call]), response_object([done])]
    client = openai.AsyncOpenAI(api_key="sk-test", base_url="http://llm.test/v1", http_client=mock_client(replies, sent))
    set_tracing_disabled(True)
    session = dsh_fs.Session(cwd=ws)
    agent = Agent(name="viewer", model=OpenAIResponsesModel("gpt-test", openai_client=client),
                  tools=function_tools(ctx, session, names=["read_image"]))
    result = await Runner.run(agent, "look")
    assert result.final_output == "a gradient"
    (output,) = [item for item in sent[1]["input"] if item.get("type") == "function_call_output"]
    parts = output["output"]
    assert {"type": "input_text", "text": envelope(ws)} in parts
    (image,) = [p for p in parts if p["type"] == "input_image"]
    assert from_data_url(image["image_url"]) == PNG
