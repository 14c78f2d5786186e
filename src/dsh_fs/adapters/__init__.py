"""Framework adapters: the tools as LLM APIs and agent frameworks expect them.

| module | API | definitions | results |
|---|---|---|---|
| ``openai_chat`` | Chat Completions (OpenAI, DeepSeek, any compatible server) | ``chat_tools`` | ``run_chat_tool_calls`` → ``{"role": "tool", …}`` |
| ``openai_responses`` | OpenAI Responses | ``responses_tools`` (built-in ``apply_patch``) | ``run_responses_function_calls`` → ``function_call_output``, ``apply_patch_call_output`` |
| ``anthropic_messages`` | Anthropic Messages | ``anthropic_tools`` (built-in text editor) | ``run_anthropic_tool_uses`` → ``tool_result`` |
| ``openai_agents`` (optional extra, import it explicitly) | OpenAI Agents SDK | ``function_tools``, ``apply_patch_tool`` | ``DshApplyPatchEditor`` → ``ApplyPatchResult`` |
| ``patch_operations`` | Responses ``apply_patch`` operations (shared by the two above) | | ``apply_operations`` → status + output |
| ``pydantic_ai`` (optional extra, import it explicitly) | pydantic-ai agents | ``DshFsToolset`` | |
| ``langchain`` (optional extra, import it explicitly) | LangChain ``create_agent``, LangGraph ReAct / ``ToolNode`` | ``DshFsToolkit`` | ``ToolMessage(status="error")`` |
| ``deepagents`` (optional extra, import it explicitly) | deepagents ``create_deep_agent(backend=…)`` | ``DshFsBackend`` (its own tools) | ``ReadResult``/``EditResult``… ``error`` |
| ``llamaindex`` (optional extra, import it explicitly) | LlamaIndex ``FunctionAgent`` | ``DshFsToolSpec`` | ``ToolOutput(is_error=True)`` |
| ``smolagents`` (optional extra, import it explicitly) | smolagents ``ToolCallingAgent``/``CodeAgent`` | ``DshFsToolCollection`` | ``DshFsToolError`` |
| ``google_adk`` (optional extra, import it explicitly) | Google ADK agents | ``DshFsToolset`` | ``{"status": "error", …}`` |
| ``crewai`` (optional extra, import it explicitly) | CrewAI agents | ``DshFsToolkit`` | ``ToolFailure`` |
| ``definitions`` | ``dsh-fs schema --format`` | ``tool_definitions`` | |

None of them imports an SDK: they build and read plain JSON shapes and also accept the SDKs'
objects. Every result carries exactly the text the model must see (REFERENCE-SPEC §4, §5.2).
Arguments are parsed as the reference's agent loop does (§5.5: ``""`` → ``{}``, unparseable →
the raw string, reported as ``"arguments" must be an object``), and one message's calls run
through ``execute_batch`` (reads in parallel, write/edit as barriers, results in model order).

Give them a confined context: ``dsh_fs.create_context(cwd="/srv/project")`` keeps every path
the model names inside ``/srv/project`` (``root`` defaults to the cwd; ``root=None`` would
hand the model the whole disk)::

    ctx = dsh_fs.create_context(cwd="/srv/project")
    tools = chat_tools(ctx)                                   # for the request
    messages += await run_chat_tool_calls(ctx, reply.tool_calls, session=dsh_fs.Session())
"""

from __future__ import annotations

from .anthropic_messages import anthropic_tools as anthropic_tools
from .anthropic_messages import run_anthropic_tool_uses as run_anthropic_tool_uses
from .anthropic_messages import tool_result_block as tool_result_block
from .calls import parse_arguments as parse_arguments
from .definitions import FORMATS as FORMATS
from .definitions import mcp_tools as mcp_tools
from .definitions import tool_definitions as tool_definitions
from .openai_chat import chat_tool_message as chat_tool_message
from .openai_chat import chat_tools as chat_tools
from .openai_chat import run_chat_tool_calls as run_chat_tool_calls
from .openai_responses import apply_patch_call_output as apply_patch_call_output
from .openai_responses import function_call_output as function_call_output
from .openai_responses import responses_tools as responses_tools
from .openai_responses import run_apply_patch_call as run_apply_patch_call
from .openai_responses import run_responses_function_calls as run_responses_function_calls

__all__ = (
    "FORMATS",
    "anthropic_tools",
    "apply_patch_call_output",
    "chat_tool_message",
    "chat_tools",
    "function_call_output",
    "mcp_tools",
    "parse_arguments",
    "responses_tools",
    "run_anthropic_tool_uses",
    "run_apply_patch_call",
    "run_chat_tool_calls",
    "run_responses_function_calls",
    "tool_definitions",
    "tool_result_block",
)
