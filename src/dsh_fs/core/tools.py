"""The tool registry: definitions, schemas, ``execute`` and batch scheduling (REFERENCE-SPEC §5).

``execute`` never raises for a tool failure: every exception becomes an error
``ToolResult`` whose text is ``"Error: " + message`` and whose ``error`` is ``{name, code}``
only for ``HarnessError`` subclasses (§5.2). Cancellation of the calling task still
propagates (it is not a tool failure).
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio

from .errors import HarnessError, ToolArgsError, ToolNotFoundError
from .jsonvalue import JSON_ARGS_ERROR, is_lossless_json, well_formed
from .schedule import CallScheduler
from .schema import Param, json_schema, validate
from .session import Session, ToolExecution
from .signal import AbortSignal

__all__ = (
    "ContentBlock",
    "ErrorInfo",
    "ToolCall",
    "ToolDefinition",
    "ToolOutput",
    "ToolRegistry",
    "ToolResult",
    "image_block",
    "text_block",
)

ContentBlock = dict[str, Any]
"""A content block as it goes on the wire: ``{"type": "text", "text": …}``, or (``read_image``
only, docs/IMAGES.md) ``{"type": "image", "data": <base64>, "mimeType": <media type>}`` — the
MCP ``ImageContent`` shape, which each adapter turns into its API's image part."""

DEFAULT_MAX_PARALLEL = 10


def text_block(text: str) -> ContentBlock:
    """A ``{"type": "text", "text": text}`` content block."""
    return {"type": "text", "text": text}


def image_block(data: bytes, media_type: str) -> ContentBlock:
    """A ``{"type": "image", "data": <standard base64 of data>, "mimeType": media_type}`` block.

    :param data: the encoded image file's bytes (PNG/JPEG/WebP/GIF), unchanged
    :param media_type: ``image/png``, ``image/jpeg``, ``image/webp`` or ``image/gif``
    """
    return {"type": "image", "data": base64.b64encode(data).decode("ascii"), "mimeType": media_type}


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    """The structured part of a failed result: the error class name and its stable code."""

    name: str
    code: str

    def as_dict(self) -> dict[str, str]:
        return {"name": self.name, "code": self.code}


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolOutput:
    """What a tool body may return instead of a bare content list: content plus ``meta``."""

    content: list[ContentBlock]
    meta: Any = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResult:
    """The outcome of one tool call (§5.1 ``ToolExecutionResult``)."""

    content: list[ContentBlock]
    """the blocks the model sees"""
    is_error: bool = False
    """``True`` for a failed call; its text starts with ``Error: ``"""
    error: ErrorInfo | None = None
    """``{name, code}`` for HarnessError failures, else ``None``"""
    meta: Any = None
    """JSON metadata for UIs (diff hunks), never shown to the model; ``None`` on errors"""

    @property
    def text(self) -> str:
        """The concatenated text of the text blocks."""
        return "".join(b.get("text", "") for b in self.content if b.get("type") == "text")

    @property
    def images(self) -> list[ContentBlock]:
        """The image blocks (``image_block``), in order; empty for every text-only tool."""
        return [b for b in self.content if b.get("type") == "image"]

    @classmethod
    def failure(cls, exc: BaseException | str) -> "ToolResult":
        """Normalize a thrown value into an error result (§5.2 ``toolErrorResult``)."""
        if isinstance(exc, str):
            return cls(content=[text_block("Error: " + exc)], is_error=True)
        try:
            message = str(exc)
            if not message and not isinstance(exc, HarnessError):
                message = type(exc).__name__
        except Exception:
            message = "<unprintable thrown value>"
        error = ErrorInfo(exc.name, exc.code) if isinstance(exc, HarnessError) else None
        # well_formed: a lone surrogate (e.g. from an echoed hostile tool name) never reaches the wire
        return cls(content=[text_block("Error: " + well_formed(message))], is_error=True, error=error)


Executor = Callable[[dict[str, Any], ToolExecution], Awaitable["list[ContentBlock] | ToolOutput"]]


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolDefinition:
    """A tool as registered: model-facing schema plus its executor.

    ``execute`` receives arguments that already passed schema validation.
    """

    name: str
    description: str
    parameters: Mapping[str, Param]
    execute: Executor
    is_concurrency_safe: Callable[[dict[str, Any]], bool] | None = None
    """``True`` → may run in parallel with neighbouring safe calls (§5.5); absent → exclusive"""
    present_call: Callable[[dict[str, Any]], Any] | None = None
    present_result: Callable[[dict[str, Any], ToolResult], Any] | None = None
    timeout_ms: int | None = None
    """declared time budget of one call in milliseconds (the reference's declarative
    ``timeoutMs``); the registry does not enforce it, a tool that declares it does"""
    native: Mapping[str, Mapping[str, Any]] | None = None
    """a vendor's built-in definition of this tool per adapter format (``openai-responses``:
    ``{"type": "apply_patch"}``; ``anthropic``: ``{"type": "text_editor_20250728", …}``): the
    adapters of that API send it instead of the JSON schema, and the model calls the tool it was
    trained on; every other surface uses ``schema()``"""

    def schema(self) -> dict[str, Any]:
        """``{name, description, parameters}`` exactly as the model sees it (§4.3)."""
        return {"name": self.name, "description": self.description, "parameters": json_schema(self.parameters)}


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCall:
    """One tool call of an assistant message, for ``execute_batch``."""

    name: str
    arguments: Any
    call_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    session: Session | None = None
    """overrides the batch's session for this call (``None``: use the batch's)"""


class ToolRegistry:
    """The ``tools`` service: registered tools, their schemas and their execution."""

    def __init__(self) -> None:
        self._tools: dict[str, ToolDefinition] = {}

    def register(self, definition: ToolDefinition) -> Callable[[], None]:
        """Register ``definition``; returns a function that unregisters it.

        :raises HarnessError: ``DUPLICATE_TOOL`` when the name is taken
        """
        if definition.name in self._tools:
            raise HarnessError(f'tool "{definition.name}" is already registered', "DUPLICATE_TOOL")
        self._tools[definition.name] = definition

        def unregister() -> None:
            if self._tools.get(definition.name) is definition:
                del self._tools[definition.name]

        return unregister

    def unregister(self, name: str) -> ToolDefinition | None:
        """Remove the tool registered as ``name`` (if any) and return its definition."""
        return self._tools.pop(name, None)

    def get(self, name: str) -> ToolDefinition | None:
        """The definition registered as ``name``, if any."""
        return self._tools.get(name)

    def names(self) -> list[str]:
        """Registered tool names, sorted."""
        return sorted(self._tools)

    def schemas(self) -> list[dict[str, Any]]:
        """Every tool's ``{name, description, parameters}``, ordered by name (§4.2)."""
        return [self._tools[name].schema() for name in self.names()]

    def is_parallel(self, name: str, arguments: Any) -> bool:
        """§5.5 ``executionMode``: ``True`` only when the tool's classifier says exactly ``True``."""
        tool = self._tools.get(name)
        if tool is None or tool.is_concurrency_safe is None:
            return False
        if not isinstance(arguments, dict) or validate(arguments, tool.parameters):
            return False
        try:
            return tool.is_concurrency_safe(arguments) is True
        except Exception:
            return False

    async def execute(
        self,
        name: str,
        arguments: Any,
        *,
        session: Session | None = None,
        signal: AbortSignal | None = None,
        call_id: str | None = None,
    ) -> ToolResult:
        """Run one tool call and return its result; never raises for a tool failure (§5.3).

        :param name: the tool name as the model sent it
        :param arguments: the parsed JSON arguments (any JSON value; wrong types are reported)
        :param session: the calling agent session (observation owner, cwd); ``None``: no agent
        :param signal: cooperative cancellation for this call
        :param call_id: the model's tool-call id
        """
        if not is_lossless_json(arguments):
            return ToolResult.failure(JSON_ARGS_ERROR)
        execution = ToolExecution(session=session, signal=signal, call_id=call_id or None)
        try:
            tool = self._tools.get(name)
            if tool is None:
                raise ToolNotFoundError(name)
            violations = validate(arguments, tool.parameters)
            if violations:
                raise ToolArgsError(violations)
            returned = await tool.execute(arguments, execution)
        except Exception as exc:
            return ToolResult.failure(exc)
        if isinstance(returned, ToolOutput):
            return ToolResult(content=list(returned.content), meta=returned.meta)
        return ToolResult(content=list(returned))

    async def execute_batch(
        self,
        calls: Sequence[ToolCall],
        *,
        session: Session | None = None,
        signal: AbortSignal | None = None,
        max_parallel: int = DEFAULT_MAX_PARALLEL,
    ) -> list[ToolResult]:
        """Run the tool calls of one assistant message; results come back in model order (§5.5).

        Consecutive concurrency-safe calls (``read``) run together, at most ``max_parallel``
        at a time; every other call is a barrier that runs alone (``CallScheduler``, the
        same order an MCP connection's calls get). Once ``signal`` is aborted no further
        call is started; unstarted calls are omitted from the result list.
        """
        if max_parallel < 1:
            raise ValueError("max_parallel must be at least 1")
        results: list[ToolResult | None] = [None] * len(calls)
        limiter = anyio.CapacityLimiter(max_parallel)
        scheduler = CallScheduler()
        turns = [scheduler.admit(parallel=self.is_parallel(call.name, call.arguments)) for call in calls]

        async def run(index: int) -> None:
            call = calls[index]
            async with turns[index]:
                if signal is not None and signal.aborted:
                    return
                async with limiter:
                    results[index] = await self.execute(
                        call.name, call.arguments, session=call.session or session, signal=signal, call_id=call.call_id
                    )

        async with anyio.create_task_group() as tg:
            for index in range(len(calls)):
                tg.start_soon(run, index)
        return [r for r in results if r is not None]
