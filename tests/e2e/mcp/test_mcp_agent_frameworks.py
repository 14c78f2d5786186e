"""pydantic-ai and the OpenAI Agents SDK using ``dsh-fs mcp`` as their MCP server, with a
scripted model (no network): one agent run keeps one observation owner, so its ``read``
authorizes its ``edit``.

* pydantic-ai: its current MCP toolset (``pydantic_ai.mcp.MCPToolset`` on a fastmcp stdio
  transport; over streamable HTTP with a bearer token) under ``FunctionModel``: the run reads
  ``a.txt`` then edits it; the second run's edit without a read is refused with our text.
* OpenAI Agents SDK: ``Agent(mcp_servers=[MCPServerStdio(...)])`` and
  ``MCPServerStreamableHttp`` under a scripted ``Model``: read then edit succeeds; an edit
  outside the root is refused.

Each model sees only the tools' own texts (what it receives is asserted). Not here: the
native pydantic-ai toolset (``tests/unit/adapters/test_adapters.py``).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from httpkit import http_server_async

pytestmark = pytest.mark.anyio


def _workspace(ws: str) -> str:
    path = os.path.join(ws, "a.txt")
    Path(path).write_text("alpha\nbeta\n")
    return path


def _argv(ws: str) -> list[str]:
    return ["-m", "dsh_fs.cli.main", "mcp", "--root", ws]


# -- pydantic-ai ---------------------------------------------------------------------------------


def _pydantic_model(script: list[list[tuple[str, dict[str, Any]]]], returns: list[str]) -> Any:
    """A ``FunctionModel`` that makes the calls of ``script`` turn by turn, then answers "ok";
    every tool result it is given is appended to ``returns``."""
    from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart, UserPromptPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    turns = iter(script)

    def model(messages: list[Any], info: AgentInfo) -> ModelResponse:
        last = messages[-1]
        if isinstance(last, ModelRequest):
            returns.extend(repr(p) if not isinstance(p, ToolReturnPart) else str(p.content) for p in last.parts
                           if not isinstance(p, UserPromptPart))
        calls = next(turns, None)
        if calls is None:
            return ModelResponse(parts=[TextPart("ok")])
        return ModelResponse(parts=[ToolCallPart(name, args, tool_call_id=f"{name}-{i}")
                                    for i, (name, args) in enumerate(calls)])

    return FunctionModel(model)


async def _pydantic_run(toolset: Any, script: list[list[tuple[str, dict[str, Any]]]]) -> list[str]:
    from pydantic_ai import Agent

    returns: list[str] = []
    agent = Agent(_pydantic_model(script, returns), toolsets=[toolset])
    with anyio.fail_after(120):
        assert (await agent.run("fix a.txt")).output == "ok"
    return returns


async def test_pydantic_ai_over_stdio_keeps_one_owner_per_run(ws: str) -> None:
    from fastmcp.client.transports import StdioTransport
    from pydantic_ai.mcp import MCPToolset

    path = _workspace(ws)

    def toolset() -> Any:
        transport = StdioTransport(command=sys.executable, args=_argv(ws), cwd=ws, env=dict(os.environ))
        return MCPToolset(transport, tool_error_behavior="failed")

    edit = ("edit", {"file_path": "a.txt", "old_string": "beta", "new_string": "gamma"})
    returns = await _pydantic_run(toolset(), [[("read", {"file_path": "a.txt"})], [edit]])
    assert returns[1] == f"The file {path} has been updated successfully."
    assert returns[0] == (f"<path>{path}</path>\n<type>file</type>\n<content>\n1: alpha\n2: beta\n\n"
                          "(End of file - total 2 lines)\n</content>")
    assert Path(path).read_text() == "alpha\ngamma\n"
    # a new run is a new server process: a new owner, which has read nothing
    refused = await _pydantic_run(toolset(), [[("edit", {"file_path": "a.txt", "old_string": "gamma", "new_string": "x"})]])
    assert refused == [f'Error: edit requires reading "{path}" first — read the file, then retry']
    assert Path(path).read_text() == "alpha\ngamma\n"


async def test_pydantic_ai_over_streamable_http_keeps_one_owner_per_run(ws: str) -> None:
    from pydantic_ai.mcp import MCPToolset

    path = _workspace(ws)
    async with http_server_async(ws) as endpoint:
        toolset = MCPToolset(endpoint.url, headers=endpoint.headers(0), tool_error_behavior="failed")
        returns = await _pydantic_run(toolset, [
            [("read", {"file_path": "a.txt"})],
            [("edit", {"file_path": "a.txt", "old_string": "beta", "new_string": "gamma"})],
        ])
    assert returns[1] == f"The file {path} has been updated successfully."
    assert Path(path).read_text() == "alpha\ngamma\n"


# -- the OpenAI Agents SDK -------------------------------------------------------------------------


def _agents_model(script: list[tuple[str, dict[str, Any]]], outputs: list[str]) -> Any:
    """A scripted Agents SDK ``Model``: one function call per turn from ``script``, then "done";
    the text of every ``function_call_output`` it is given is appended to ``outputs``."""
    from agents import ModelResponse, Usage
    from agents.models.interface import Model
    from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

    class Scripted(Model):
        turn = 0

        async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> ModelResponse:
            if isinstance(input, list) and input and isinstance(input[-1], dict) and \
                    input[-1].get("type") == "function_call_output":
                output_value = input[-1]["output"]
                outputs.append(output_value if isinstance(output_value, str) else json.dumps(output_value))
            if self.turn < len(script):
                name, arguments = script[self.turn]
                self.turn += 1
                output: list[Any] = [ResponseFunctionToolCall.model_validate({
                    "type": "function_call", "id": f"f{self.turn}", "call_id": f"c{self.turn}", "name": name,
                    "arguments": json.dumps(arguments), "status": "completed"})]
            else:
                output = [ResponseOutputMessage.model_validate({
                    "type": "message", "id": "m", "role": "assistant", "status": "completed",
                    "content": [ResponseOutputText(type="output_text", text="done", annotations=[]).model_dump()]})]
            return ModelResponse(output=output, usage=Usage(), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:  # pragma: no cover - not streamed here
            raise NotImplementedError

    return Scripted()


async def _agents_run(server: Any, script: list[tuple[str, dict[str, Any]]]) -> list[str]:
    from agents import Agent, Runner, set_tracing_disabled

    set_tracing_disabled(True)  # nothing leaves the machine
    outputs: list[str] = []
    with anyio.fail_after(120):
        async with server:
            agent = Agent(name="coder", model=_agents_model(script, outputs), mcp_servers=[server])
            assert (await Runner.run(agent, "fix a.txt")).final_output == "done"
    return outputs


def _text(output: str) -> str:
    """The text of an MCP tool output as the Agents SDK hands it to the model: a list of
    ``input_text`` items (one per text block of the result)."""
    items = json.loads(output)
    assert all(item["type"] == "input_text" for item in items), output
    return "".join(item["text"] for item in items)


async def test_the_agents_sdk_over_stdio_keeps_one_owner_per_run(ws: str) -> None:
    from agents.mcp import MCPServerStdio

    path = _workspace(ws)
    server = MCPServerStdio({"command": sys.executable, "args": _argv(ws), "cwd": ws, "env": dict(os.environ)},
                            client_session_timeout_seconds=60)
    outputs = await _agents_run(server, [
        ("read", {"file_path": "a.txt"}),
        ("edit", {"file_path": "a.txt", "old_string": "beta", "new_string": "gamma"}),
        ("edit", {"file_path": "../outside.txt", "old_string": "a", "new_string": "b"}),
    ])
    assert _text(outputs[1]) == f"The file {path} has been updated successfully."
    outside = os.path.join(os.path.dirname(ws), "outside.txt")
    assert f'cannot resolve "{outside}": outside the workspace "{ws}"' in _text(outputs[2]), outputs[2]
    assert Path(path).read_text() == "alpha\ngamma\n"


async def test_the_agents_sdk_over_streamable_http_keeps_one_owner_per_run(ws: str) -> None:
    from agents.mcp import MCPServerStreamableHttp

    path = _workspace(ws)
    async with http_server_async(ws) as endpoint:
        server = MCPServerStreamableHttp({"url": endpoint.url, "headers": endpoint.headers(0)},
                                         client_session_timeout_seconds=60)
        outputs = await _agents_run(server, [
            ("read", {"file_path": "a.txt"}),
            ("edit", {"file_path": "a.txt", "old_string": "beta", "new_string": "gamma"}),
        ])
    assert _text(outputs[1]) == f"The file {path} has been updated successfully."
    assert Path(path).read_text() == "alpha\ngamma\n"
