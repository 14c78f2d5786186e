"""The MCP SDK serving a ``Context``'s tools (mcp ≥ 2.3 low-level ``Server``): the only module
the stdio server loads the SDK through, and the server both transports run.

* ``tools/list`` → ``wire.tool_entries(ctx.tools.schemas())``: our schemas verbatim.
* ``tools/call`` → ``ctx.tools.execute(name, arguments, session=<the connection's owner>,
  signal=…)`` → ``wire.call_result``: a tool failure (unknown tool and invalid arguments
  included) is an ``isError`` result with our exact ``Error: …`` text, never a protocol error.
  ``arguments`` that are not a JSON object reach the registry unchanged (the SDK would reject
  them before any handler runs), so the model sees the registry's ``INVALID_ARGS`` text;
  absent ``arguments`` mean ``{}``.
* client roots (``roots.py``, DEVIATIONS M3): ``roots/list`` with an owner's first
  ``tools/call`` and its first after ``notifications/roots/list_changed``; each call runs
  through its owner's narrowed provider view (``Context.scoped``).
* ``instructions`` = the tools' own prompt sections (``wire.server_instructions``): a tool
  server gives guidance for its tools, not the agent's identity (the client's agent has one).

Calls sent together are scheduled as the registry schedules one assistant message
(REFERENCE-SPEC §5.5, ``core.schedule.CallScheduler``), per observation owner (one stdio
connection, one HTTP session, one authenticated principal): a ``read`` overlaps the reads
around it, a ``write``/``edit`` (or any call that is not concurrency-safe) waits for every call
of its owner that arrived before it, and later calls wait for it. Arrival order is the order
the connection delivered the requests; the scheduling middleware admits a call before anything
awaits. Cancellation (``notifications/cancelled``, the connection closing): the call's
``AbortSignal`` is aborted at once and the handler waits for the call (``core.signal.
run_abortable``): a mutation is never cut off between two syscalls.

For the stdio server (``stdio/``), :class:`SdkRoute` is the SDK as the connection's fallback:
every line the dispatcher does not serve itself is read here as the SDK path reads it
(:func:`parse_line`), given to ``Server.run``, and every message the SDK writes is encoded
(:func:`encode_message`) and written through the connection's one writer. :func:`result_line`
and :func:`raised_line` are the SDK's answers to a call the dispatcher ran, where
``wire.call_answer`` cannot prove its bytes.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import math
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Final, Protocol

import anyio
import mcp.types as types
import pydantic_core
from mcp.server import Server, ServerRequestContext
from mcp.server.context import CallNext, HandlerResult, ServerMiddleware
from mcp.shared.jsonrpc_dispatcher import handler_exception_to_error_data
from mcp.shared.message import ServerMessageMetadata, SessionMessage
from mcp_types import methods as sdk_methods
from pydantic import ValidationError

from .. import __version__
from ..core.context import Context
from ..core.jsonvalue import js_numbers, well_formed
from ..core.schedule import CallSchedulers
from ..core.session import Session
from ..core.signal import run_abortable
from ..core.tools import ToolResult
from ..fs_sandbox.tools import without_escalation
from .approval import REQUEST, ROUND, STATELESS_PROTOCOL, Round, can_elicit
from .roots import RootsProtocol
from .wire import (
    CANCELLED_REASON,
    HANDSHAKE_PROTOCOL_VERSIONS,
    MISSING,
    SERVER_NAME,
    call_result,
    coerce_id,
    offers_escalation,
    recover_id,
    scan_id,
    server_instructions,
    tool_entries,
)

__all__ = (
    "OwnerLookup",
    "SERVER_NAME",
    "SdkPeer",
    "SdkRoute",
    "build_server",
    "client_error",
    "encode_message",
    "handler_result",
    "keep_raw_arguments",
    "parse_line",
    "raised_line",
    "result_line",
    "roots_of",
    "schedule_calls",
)

logger = logging.getLogger(__name__)

OwnerLookup = Callable[[ServerRequestContext[Any, Any]], Session]
"""Maps a request to its connection's observation owner (may raise ``MCPError``)."""

_RESULT_TYPE: Any = types.CallToolResult.model_fields["result_type"].default
"""what a ``CallToolResult`` model dumps as its ``resultType`` (kept on 2026-era connections only)"""
_UNSET: Any = object()
_RAW_ARGUMENTS: contextvars.ContextVar[Any] = contextvars.ContextVar("dsh_fs_mcp_raw_arguments", default=_UNSET)


# -- the server -------------------------------------------------------------------------------------


async def keep_raw_arguments(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """Server middleware: carry a ``tools/call`` whose ``arguments`` is not an object past the
    SDK's params validation, to the handler, unchanged (for the registry's own error). The value
    travels in a context variable (the middleware chain and the handler run in one task); the
    params the SDK validates lose their ``arguments`` member."""
    params = ctx.params
    if (
        ctx.method != "tools/call"
        or not isinstance(params, Mapping)
        or "arguments" not in params
        or isinstance(params["arguments"], dict)
    ):
        return await call_next(ctx)
    token = _RAW_ARGUMENTS.set(params["arguments"])
    try:
        return await call_next(replace(ctx, params={k: v for k, v in params.items() if k != "arguments"}))
    finally:
        _RAW_ARGUMENTS.reset(token)


def schedule_calls(
    ctx: Context, owner_for: OwnerLookup, schedulers: CallSchedulers | None = None
) -> ServerMiddleware[Any]:
    """Server middleware: run each owner's ``tools/call`` requests in arrival order, as
    ``execute_batch`` runs one assistant message (module docstring). The call is admitted to
    its owner's ``CallScheduler`` before the middleware awaits anything, so it must run before
    any middleware that awaits ahead of ``call_next``; a call cancelled while it waits gives up
    its place.

    :param ctx: the deployment (``ctx.tools.is_parallel`` says which calls may overlap)
    :param owner_for: the observation owner of a request (may raise ``MCPError``)
    :param schedulers: the owners' schedulers (shared with the stdio dispatcher); a new set
        when ``None``
    """
    owned = schedulers if schedulers is not None else CallSchedulers()

    async def schedule(rctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if rctx.method != "tools/call":
            return await call_next(rctx)
        params = rctx.params if isinstance(rctx.params, Mapping) else {}
        name, arguments = params.get("name"), params.get("arguments", {})
        parallel = isinstance(name, str) and ctx.tools.is_parallel(name, arguments)
        async with owned.of(owner_for(rctx)).admit(parallel=parallel):
            return await call_next(rctx)

    return schedule


def handler_result(result: ToolResult) -> dict[str, Any]:
    """What the ``tools/call`` handler gives the SDK for ``result``: the wire dict
    (``wire.call_result``) with the ``resultType`` a ``CallToolResult`` model dumps. The SDK
    validates a handler's dict against the protocol version's result and dumps it exactly as it
    does a model's dump, so the bytes are those of the model (for every protocol version:
    ``tests/unit/mcp/test_mcp_result_dict.py``) with one pydantic pass less per call."""
    wire = call_result(result)
    wire["resultType"] = _RESULT_TYPE
    return wire


def build_server(
    ctx: Context,
    *,
    owner_for: OwnerLookup,
    middleware: Sequence[ServerMiddleware[Any]] = (),
    name: str = SERVER_NAME,
    client_roots: bool = True,
    schedulers: CallSchedulers | None = None,
    roots: RootsProtocol | None = None,
) -> Server[Any]:
    """An MCP ``Server`` serving ``ctx.tools`` with the tools' prompt sections as instructions.

    :param ctx: a loaded deployment (``ctx.tools`` and ``ctx.system_prompt`` are used)
    :param owner_for: the observation owner of a request's connection
    :param middleware: extra SDK server middleware, outermost first (run before ours); each must
        reach ``call_next`` without awaiting first (``schedule_calls`` takes the arrival order
        after them)
    :param name: the server name announced to clients
    :param client_roots: follow the MCP roots protocol (``roots.RootsProtocol``, DEVIATIONS M3):
        a client's roots narrow its owner's calls to their intersection with the provider's roots
    :param schedulers: the owners' call schedulers (the stdio dispatcher shares them); a new set
        when ``None``
    :param roots: with ``client_roots``, the roots protocol to follow (the stdio dispatcher
        shares it); a new one when ``None``
    """
    tools = ctx.tools
    if client_roots and roots is None:
        roots = RootsProtocol(ctx.fs)
    elif not client_roots:
        roots = None

    async def list_tools(
        rctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        schemas = tools.schemas()
        if not offers_escalation(ctx, can_elicit(rctx)):
            schemas = without_escalation(schemas)  # D37: nobody at this client can approve one
        return types.ListToolsResult(tools=[types.Tool.model_validate(e) for e in tool_entries(schemas)])

    async def call_tool(rctx: ServerRequestContext[Any, Any],
                        params: types.CallToolRequestParams) -> dict[str, Any] | types.InputRequiredResult:
        raw = _RAW_ARGUMENTS.get()
        if raw is _UNSET:
            raw = params.arguments if params.arguments is not None else {}
        session = owner_for(rctx)
        view = await roots.view_for(session, SdkPeer(rctx.session), rctx.request_id) if roots is not None else None
        token = REQUEST.set(rctx)  # a sandbox escalation asks the person through this request (approval.py)
        current = (Round(params.name, raw, params.input_responses, params.request_state)
                   if str(rctx.protocol_version) >= STATELESS_PROTOCOL else None)
        round_token = ROUND.set(current)  # 2026-07-28: the approval asks in rounds (approval.py)
        try:
            with ctx.scoped("fs", view) if view is not None else contextlib.nullcontext():
                result = await run_abortable(
                    lambda signal: tools.execute(params.name, raw, session=session, signal=signal),
                    reason=CANCELLED_REASON,
                )
        finally:
            ROUND.reset(round_token)
            REQUEST.reset(token)
        if current is not None and current.pending is not None:
            return current.pending  # type: ignore[no-any-return]  # nothing ran: the person is asked first
        return handler_result(result)

    async def roots_changed(rctx: ServerRequestContext[Any, Any], params: types.NotificationParams) -> None:
        assert roots is not None
        roots.changed(owner_for(rctx), SdkPeer(rctx.session))

    def input_schema(tool_name: str) -> Mapping[str, Any] | None:
        definition = tools.get(tool_name)
        return definition.schema()["parameters"] if definition is not None else None

    server: Server[Any] = Server(
        name,
        version=__version__,
        instructions=server_instructions(ctx),
        get_tool_input_schema=input_schema,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    server.middleware.extend([*middleware, schedule_calls(ctx, owner_for, schedulers), keep_raw_arguments])
    if roots is not None:  # not the deprecated on_roots_list_changed= (it warns), the same registration
        server.add_notification_handler("notifications/roots/list_changed", types.NotificationParams, roots_changed)
    return server


class SdkPeer:
    """The client as the SDK's session asks it (``roots.RootsPeer``)."""

    __slots__ = ("_session",)

    def __init__(self, session: Any) -> None:
        self._session = session

    @property
    def client_capabilities(self) -> Any:
        return getattr(self._session, "client_capabilities", None)

    @property
    def protocol_version(self) -> Any:
        return getattr(self._session, "protocol_version", None)

    async def list_roots(self, related_to: Any) -> list[str]:
        metadata = ServerMessageMetadata(related_request_id=related_to) if related_to is not None else None
        result = await self._session.send_request(types.ListRootsRequest(), types.ListRootsResult, metadata=metadata)
        return [str(root.uri) for root in result.roots]


def roots_of(result: Any, version: str) -> list[str]:
    """The URIs of a ``roots/list`` result as the SDK's session reads it at protocol ``version``
    (``ServerSession.send_request``: the version's result surface, then ``ListRootsResult``).

    :raises ValidationError: a malformed result (its text is what the SDK route logs)
    """
    try:
        sdk_methods.validate_client_result("roots/list", version, result)
    except KeyError:
        pass
    return [str(root.uri) for root in types.ListRootsResult.model_validate(result, by_name=False).roots]


def client_error(error: Any) -> Exception:
    """The exception the SDK's session raises for a client's error answer ``error`` (its
    ``error`` member): ``MCPError``, or the ``ValidationError`` of a malformed one."""
    from mcp.shared.exceptions import MCPError

    try:
        return MCPError.from_error_data(types.ErrorData.model_validate(error))
    except ValidationError as exc:
        return exc


# -- the SDK's reading and writing of a line ------------------------------------------------------------

_WHITESPACE: Final = " \t\n\r"
_BAD_ID: Final = "Invalid request: id must be a string or an integer"
_UNREADABLE: Final = "Internal error: the line could not be read"


def parse_line(line: str) -> SessionMessage | types.JSONRPCError | None:
    """One stdin line as a message to dispatch, an error reply to write, or ``None`` (no reply).

    The SDK's own stdio transport drops a line its parser refuses, and the client waits forever.
    Here: the SDK's parser first (every line it accepts is its message), then Python's
    ``json.loads`` with ``validate_python`` (lone surrogate escapes, nesting deeper than ~190
    levels under a key no schema declares). Number literals are first read as JavaScript's
    ``JSON.parse`` reads them (``core.jsonvalue.js_numbers``: ``-0``, integers beyond 2**53).

    * ``SessionMessage``: a JSON-RPC message.
    * ``JSONRPCError``: ``-32700`` (not JSON, or nested too deep to parse) or ``-32600`` (JSON
      that is not a JSON-RPC message; or a request whose ``id`` is neither a string, an integer
      nor ``null``, which the SDK would take for a notification), with the request's ``id`` if
      one can be recovered (``wire.recover_id``). A notification with ``"id": null`` is served
      as a notification.
    * ``None``: a blank line, or an invalid notification or response (never answered).

    :param line: one line of text (its line end, if any, is ignored)
    """
    if not line.strip(_WHITESPACE):
        return None
    line = js_numbers(line)  # -0 and huge integers as JSON.parse reads them (docs/JSON-NUMBERS.md)
    try:
        message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except Exception:
        pass  # refused by pydantic: try Python's parser
    else:
        found = scan_id(line) if isinstance(message, types.JSONRPCNotification) else None
        if found is not None and found is not MISSING:
            return _error_reply(types.INVALID_REQUEST, _BAD_ID, None)
        return SessionMessage(message)
    try:
        value = json.loads(line)
    except RecursionError:
        return _error_reply(types.PARSE_ERROR, "Parse error: JSON nested too deeply", recover_id(line))
    except ValueError as exc:  # JSONDecodeError; an integer with too many digits
        return _error_reply(types.PARSE_ERROR, f"Parse error: {exc}", recover_id(line))
    try:
        message = types.jsonrpc_message_adapter.validate_python(value, by_name=False)
    except Exception:  # ValidationError; RecursionError
        pass
    else:
        if isinstance(message, types.JSONRPCNotification) and value.get("id") is not None:
            return _error_reply(types.INVALID_REQUEST, _BAD_ID, None)
        return SessionMessage(message)
    if isinstance(value, dict) and (
        ("method" in value and value.get("id") is None)  # a notification
        or ("method" not in value and ("result" in value or "error" in value))  # a response
    ):
        logger.debug("ignoring an invalid JSON-RPC notification or response")
        return None
    request_id = value.get("id") if isinstance(value, dict) else None
    return _error_reply(types.INVALID_REQUEST, "Invalid request: not a JSON-RPC 2.0 message",
                        request_id if isinstance(request_id, str | int) and not isinstance(request_id, bool) else None)


def _error_reply(code: int, message: str, request_id: types.RequestId | None) -> types.JSONRPCError:
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message))


def encode_message(message: types.JSONRPCMessage) -> str:
    """One outgoing message as one line of JSON (no line end) that encodes as valid UTF-8: the
    SDK's serialization whenever it succeeds; else lone surrogates in texts become U+FFFD (as
    the registry's error texts do), an ``id`` keeps its lone surrogates, ASCII-escaped (the
    client can still match it), and a reply that cannot be serialized at all becomes a
    ``-32603`` error for its ``id``.

    :raises ValueError: a notification or a server request that cannot be serialized
    """
    try:
        return message.model_dump_json(by_alias=True, exclude_unset=True)
    except Exception:
        pass  # a lone surrogate, or a value nested too deep for pydantic
    try:
        # python mode: pydantic's JSON mode would garble a key's lone surrogate into three U+FFFD
        data = message.model_dump(by_alias=True, exclude_unset=True)
        wire = {key: value if key == "id" else _well_formed(value) for key, value in data.items()}
        text = _dumps(wire, escape=not _is_clean(wire.get("id")))
        text.encode("utf-8")  # a value that to_jsonable_python rendered with a lone surrogate
        return text
    except Exception as exc:  # ValueError, TypeError, RecursionError
        if not isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
            raise ValueError(f"cannot serialize a {type(message).__name__}") from exc
    reply = {
        "jsonrpc": "2.0",
        "id": message.id,
        "error": {"code": types.INTERNAL_ERROR, "message": "Internal error: the reply could not be serialized"},
    }
    return _dumps(reply, escape=True)


def _dumps(value: Any, *, escape: bool) -> str:
    return json.dumps(
        value, ensure_ascii=escape, allow_nan=False, separators=(",", ":"), default=pydantic_core.to_jsonable_python
    )


def _is_clean(value: Any) -> bool:
    if not isinstance(value, str):
        return True
    try:
        value.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def _well_formed(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings (keys too) replaced by U+FFFD, and
    non-finite floats as ``None`` (what pydantic writes for them)."""
    if isinstance(value, str):
        return well_formed(value)
    if isinstance(value, list | tuple):
        return [_well_formed(item) for item in value]
    if isinstance(value, dict):
        return {_well_formed(key): _well_formed(item) for key, item in value.items()}
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _line_of(message: types.JSONRPCMessage) -> bytes:
    return encode_message(message).encode("utf-8") + b"\n"


def result_line(request_id: types.RequestId, version: str, result: ToolResult) -> bytes:
    """The SDK's answer line to a ``tools/call`` whose handler returned ``result`` at ``version``:
    ``ServerRunner._serialize`` (the per-version result surface) and the dispatcher's
    ``JSONRPCResponse``, encoded; an invalid result is its ``-32603``, a serialization that
    raises (a lone surrogate in a key) the answer to a raising handler (:func:`raised_line`), as
    the SDK's runner gives them."""
    try:
        dumped = sdk_methods.serialize_server_result("tools/call", version, handler_result(result))
    except ValidationError:
        logger.exception("handler for %r returned an invalid result", "tools/call")
        error = types.ErrorData(code=types.INTERNAL_ERROR, message="Handler returned an invalid result")
        return _line_of(types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error))
    except Exception as exc:
        return raised_line(request_id, exc)
    return _line_of(types.JSONRPCResponse(jsonrpc="2.0", id=request_id, result=dumped))


def raised_line(request_id: types.RequestId, exc: Exception) -> bytes:
    """What the SDK's dispatcher answers a ``tools/call`` whose handler raised ``exc`` (an
    unexpected one logged, code 0 with its text)."""
    error = handler_exception_to_error_data(exc)
    if error is None:
        logger.error("handler for %r raised", "tools/call", exc_info=exc)
        error = types.ErrorData(code=0, message=str(exc))
    return _line_of(types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error))


# -- the SDK as the stdio connection's fallback ------------------------------------------------------------

PARSE_ON_LOOP_MAX: Final = 65536
"""bytes of a line parsed on the event loop thread; a longer line is parsed in a worker thread"""


class Ledger(Protocol):
    """What :class:`SdkRoute` tells the connection's bookkeeping (``stdio/dispatch.Ledger``)."""

    async def room(self) -> None: ...
    def sdk_took(self, key: tuple[bool, Any]) -> None: ...
    def sdk_settled(self, key: tuple[bool, Any]) -> None: ...


class Observer(Protocol):
    """What :class:`SdkRoute` tells the dispatcher (``stdio/dispatch.Dispatcher``)."""

    def sdk_took_request(self, key: Any, method: str) -> None: ...
    def sdk_roots_changed(self) -> None: ...
    def sdk_initialized(self, version: str, capabilities: Mapping[str, Any]) -> None: ...


class SdkRoute:
    """The SDK ``server`` serving one stdio connection's lines the dispatcher leaves to it.

    Every request given to the SDK is counted in ``ledger`` until it is answered (a response or
    an error for its id written) or the SDK says it never will be (``on_request_unanswered``:
    the client cancelled it, whatever form of its id the cancellation used). The lines the
    dispatcher consumed before the SDK was attached (the ``initialize`` it answered,
    ``notifications/initialized``) are given to it first (:meth:`replay`), so its session state
    is what it would have been; its reply to that ``initialize`` is compared with ours and
    dropped (a difference is logged as a warning: the codec has a bug).

    :param write: writes one line through the connection's writer (``False``: stdout broke)
    """

    def __init__(self, server: Server[Any], *, write: Callable[[bytes], Awaitable[bool]], ledger: Ledger,
                 observer: Observer) -> None:
        self._server = server
        self._write = write
        self._ledger = ledger
        self._observer = observer
        self._input, self._incoming = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        self._output, self._outgoing = anyio.create_memory_object_stream[SessionMessage](0)
        self._initializing: dict[Any, tuple[Any, anyio.Event]] = {}
        """``initialize`` requests given to the SDK, by coerced id: their capabilities, and an
        event set once answered"""
        self._answered: tuple[Any, bytes] | None = None
        """``(id, line)`` of the ``initialize`` answered already: the SDK's first reply is dropped"""
        self._first = True
        self._parser = anyio.CapacityLimiter(1)  # a thread of its own, never behind tool calls' threads

    async def run(self) -> None:
        """Serve until :meth:`close` (and every handler ended); writes everything the SDK wrote."""
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._pump_out)
            await self._server.run(self._incoming, self._output, self._server.create_initialization_options())

    def replay(self, line: bytes, *, answered: tuple[Any, bytes] | None = None) -> Awaitable[None]:
        """Give the SDK a line the dispatcher consumed before; ``answered``: ``(id, line)`` of
        the answer already written to it (an ``initialize``: the SDK's reply is dropped)."""
        if answered is not None:
            self._answered = answered
        return self.hand(line)

    async def hand(self, raw: bytes) -> None:
        """One stdin line for the SDK, read as the SDK path reads it (:func:`parse_line`): a
        message goes to the server (a request counted until settled), an error reply is written
        at once (it answers a line that was no message the server got, so it settles no request
        of the server's, even one with the same ``id``)."""
        if len(raw) <= PARSE_ON_LOOP_MAX:
            item = _item_of(raw)
        else:
            item = await anyio.to_thread.run_sync(_item_of, raw, limiter=self._parser)
        if item is None:
            return
        if isinstance(item, types.JSONRPCError):
            await self._write(_line_of(item))
            return
        message = item.message
        if isinstance(message, types.JSONRPCRequest):
            await self._ledger.room()  # the in-flight cap: stdin is read no further meanwhile
            key = (isinstance(message.id, str), message.id)
            self._ledger.sdk_took(key)
            self._observer.sdk_took_request(coerce_id(message.id), message.method)
            answered: anyio.Event | None = None
            if message.method == "initialize":
                params = message.params if isinstance(message.params, Mapping) else {}
                capabilities = params.get("capabilities")
                answered = anyio.Event()
                self._initializing[coerce_id(message.id)] = (
                    capabilities if isinstance(capabilities, Mapping) else {}, answered)

            async def unanswered() -> None:
                self._ledger.sdk_settled(key)
                self._initialized(message.id, None)

            item = SessionMessage(message, metadata=ServerMessageMetadata(on_request_unanswered=unanswered))
            await self._input.send(item)
            if answered is not None:  # the SDK serves it on its read loop, parked meanwhile: so does this
                await answered.wait()
            return
        if isinstance(message, types.JSONRPCNotification) and message.method == "notifications/roots/list_changed":
            self._observer.sdk_roots_changed()
        await self._input.send(item)

    def close(self) -> None:
        """The end of input: the server's input ends (once nothing it was given is unanswered)."""
        self._input.close()

    async def _pump_out(self) -> None:
        async with self._outgoing:
            async for session_message in self._outgoing:
                await self._put(session_message.message)

    async def _put(self, message: types.JSONRPCMessage) -> None:
        try:
            line = _line_of(message)
        except ValueError:
            logger.debug("dropping an outgoing message that cannot be serialized", exc_info=True)
            return
        reply = isinstance(message, types.JSONRPCResponse | types.JSONRPCError) and message.id is not None
        first, self._first = self._first, False
        if first and self._answered is not None:
            if not reply or message.id != self._answered[0]:  # type: ignore[union-attr]
                logger.warning("the SDK's first message is not its initialize reply: %s", line[:200])
            else:
                if line != self._answered[1]:
                    logger.warning("the early initialize answer differs from the SDK's: %s", line[:500])
                self._settled(message)
                return
        await self._write(line)
        if reply:
            self._settled(message)

    def _settled(self, message: Any) -> None:
        """The SDK answered ``message.id`` (written, or dropped: stdout broke, or it was ours)."""
        self._ledger.sdk_settled((isinstance(message.id, str), message.id))
        self._initialized(message.id, message if isinstance(message, types.JSONRPCResponse) else None)

    def _initialized(self, request_id: Any, response: types.JSONRPCResponse | None) -> None:
        """An ``initialize`` given to the SDK settled (``response``: its success)."""
        initializing = self._initializing.pop(coerce_id(request_id), None)
        if initializing is None:
            return
        capabilities, answered = initializing
        if response is not None:
            version = response.result.get("protocolVersion")
            if version in HANDSHAKE_PROTOCOL_VERSIONS:
                self._observer.sdk_initialized(version, capabilities)
        answered.set()


def _item_of(raw: bytes) -> SessionMessage | types.JSONRPCError | None:
    """What one stdin line is (:func:`parse_line`); a bug in it still answers the request."""
    text = raw.decode("utf-8", "replace")
    try:
        return parse_line(text)
    except Exception:  # a bug: still answer the request
        logger.warning("could not read a line", exc_info=True)
        return _error_reply(types.INTERNAL_ERROR, _UNREADABLE, recover_id(text))
