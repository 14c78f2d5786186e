"""The kernel: ``Context`` (plugins, services, events), ``ToolRegistry``, ``SystemPrompt``,
``Session`` and ``ToolExecution``. Knows nothing about files."""

from .context import Context as Context, Plugin as Plugin, Scope as Scope, ScopeState as ScopeState
from .errors import (
    HarnessError as HarnessError,
    ToolArgsError as ToolArgsError,
    ToolInputError as ToolInputError,
    ToolNotFoundError as ToolNotFoundError,
)
from .profile import Profile as Profile
from .schema import Param as Param
from .session import Session as Session, ToolExecution as ToolExecution
from .signal import AbortSignal as AbortSignal
from .system_prompt import SystemPrompt as SystemPrompt
from .tools import (
    ContentBlock as ContentBlock,
    ErrorInfo as ErrorInfo,
    ToolCall as ToolCall,
    ToolDefinition as ToolDefinition,
    ToolOutput as ToolOutput,
    ToolRegistry as ToolRegistry,
    ToolResult as ToolResult,
    image_block as image_block,
    text_block as text_block,
)

__all__ = (
    "AbortSignal",
    "ContentBlock",
    "Context",
    "ErrorInfo",
    "HarnessError",
    "Param",
    "Plugin",
    "Profile",
    "Scope",
    "ScopeState",
    "Session",
    "SystemPrompt",
    "ToolArgsError",
    "ToolCall",
    "ToolDefinition",
    "ToolExecution",
    "ToolInputError",
    "ToolNotFoundError",
    "ToolOutput",
    "ToolRegistry",
    "ToolResult",
    "image_block",
    "text_block",
)
