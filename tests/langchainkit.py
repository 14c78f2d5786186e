"""A scripted LangChain chat model for the LangChain/LangGraph/deepagents tests (imported as
``langchainkit``; no tests here).

``ScriptedChatModel(messages=replies(steps))``: langchain-core's ``GenericFakeChatModel`` that
also accepts ``bind_tools`` (recording the tools as the OpenAI format would send them) and
records the messages of every turn. ``replies(steps, rename)`` makes one ``AIMessage`` per
tool call of a ``frameworkkit`` scenario; a callable step runs before the next reply.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field

__all__ = ("ScriptedChatModel", "replies")


class ScriptedChatModel(GenericFakeChatModel):
    """``GenericFakeChatModel`` that accepts ``bind_tools`` (recording what the model would
    be sent) and records the messages of every turn."""

    bound: list[dict[str, Any]] = Field(default_factory=list)
    turns: list[list[BaseMessage]] = Field(default_factory=list)

    def bind_tools(self, tools: Any, **kwargs: Any) -> "ScriptedChatModel":
        self.bound[:] = [convert_to_openai_tool(tool) for tool in tools]
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.turns.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


def replies(steps: list[Any], rename: Callable[[str, dict[str, Any]], tuple[str, dict[str, Any]]] | None = None
            ) -> Iterator[AIMessage]:
    """One AIMessage per tool call; a callable step runs before the next reply is made."""
    for index, step in enumerate(steps):
        if callable(step):
            step()
            continue
        name, arguments = rename(*step) if rename is not None else step
        yield AIMessage(content="", tool_calls=[{"name": name, "args": arguments, "id": f"call_{index}"}])
    yield AIMessage(content="Done.")
