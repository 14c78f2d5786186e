"""The lean ``tools/call`` path of the stdio transport: a call answered without the SDK's dispatcher.

Over stdio, a ``tools/call`` costs the server about 1,150 interpreter calls of the SDK's
dispatch (a task per request, the middleware chain, params validation twice, the per-version
result surface, several event loop iterations) around the 190 of the registry's ``read``
(bench/README.md, "The MCP stdio round trip"). The transport (``stdio.py``) hands a request
line to :class:`LeanCalls` first; when :meth:`LeanCalls.accepts` it, the call is admitted to
its owner's scheduler at once, run through the registry (on the transport's reader task until
it suspends, ``inline.py``, else in a task of its own) and answered through the transport's
writer, as its line already encoded when ``fastwire.response_line`` can write it; everything
else goes to the SDK as before. What the client reads is what the SDK
would have written, byte for byte (``tests/unit/mcp/test_mcp_lean.py`` sends the same requests
through both paths, for every handshake protocol version), because the answer is built with
the SDK's own pieces: our handler's dict (``server.handler_result``), the SDK's per-version
result surface (``mcp_types.methods.serialize_server_result``), a ``JSONRPCResponse`` and the
transport's ``encode_message``.

A request is served lean only when nothing it needs is the SDK's (else it goes to the SDK):

* the connection was initialized by an ``initialize`` the SDK answered (a handshake version:
  the 2026-07-28 per-request envelope stays on the SDK), and no request handed to the SDK is
  still unanswered (so every earlier call the SDK serves is already admitted to the owner's
  scheduler, shared with ``server.schedule_calls``: arrival order holds across both paths);
* ``params`` has only ``name`` (a registered tool) and ``arguments``: no ``_meta`` (progress
  tokens, trace context, the 2026 envelope);
* a client that declared ``roots`` (M3) has its answer settled and no
  ``notifications/roots/list_changed`` since (``RootsProtocol.settled_view``): the call runs
  through that view, as the SDK path's would; its first call (which asks), and the first
  after a change, go to the SDK;
* under a sandbox, the client did not declare ``elicitation`` (an escalation asks the person
  through the request).

What the SDK does for a call and the lean path keeps: ``run_abortable``'s contract (the
call is never cut off: a cancellation aborts its ``AbortSignal`` and the call's answer is
waited for, then dropped; here without its extra task, since the call has a task of its own
(or the reader's task, which then carries only it) that nothing else cancels);
``notifications/cancelled`` for it (its id coerced as the SDK coerces it) leaves it
unanswered, whether it waits for its turn (it gives the turn up) or runs; a call the
registry raises from is answered with the SDK's error (code 0, the exception's text;
logged); the transport's end-of-input accounting counts it until answered.
The notification itself still reaches the SDK. Asyncio only (another backend: every call goes
to the SDK). Not kept: the SDK's OpenTelemetry span (a no-op unless an exporter is installed).

The path is on by default; ``DSH_FS_MCP_LEAN=0`` (or ``off``, ``false``, ``no``) turns it off.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from contextlib import nullcontext
from typing import Any, Final

import anyio
import mcp.types as types
from mcp.shared.dispatcher import coerce_request_id
from mcp.shared.jsonrpc_dispatcher import cancelled_request_id_from_params, handler_exception_to_error_data
from mcp_types import methods as sdk_methods
from pydantic import ValidationError

from ..core.context import Context
from ..core.schedule import Turn
from ..core.session import Session
from ..core.signal import AbortSignal
from ..fs_sandbox.filesystem import SandboxedFileSystem
from .fastwire import response_line
from .handshake import HANDSHAKE_PROTOCOL_VERSIONS
from .leanenv import ENV_VAR, lean_from_env
from .roots import RootsProtocol
from .server import CallSchedulers, handler_result

__all__ = ("ENV_VAR", "LeanCalls", "lean_from_env", "raised_answer", "result_answer")

logger = logging.getLogger(__name__)

_PARAMS: Final = frozenset({"name", "arguments"})
_UNSETTLED: Final[Any] = object()
_CANCELLED: Final = "the client cancelled the request"
"""the abort reason of a cancelled call (the SDK path's, ``server.call_tool``)"""

Deliver = Callable[[bytes | types.JSONRPCResponse | types.JSONRPCError], Awaitable[None]]
"""how a lean call's answer reaches the transport's writer (``bytes``: the line, encoded
already by ``fastwire.response_line``)"""


class LeanCalls:
    """The lean path of one stdio connection (module docstring). Event loop thread only.

    :param ctx: the deployment (``ctx.tools``; ``ctx.fs`` says whether a sandbox asks for approval)
    :param owner: the connection's observation owner (every call's ``session``)
    :param schedulers: the owners' schedulers the SDK path's ``schedule_calls`` uses
    :param roots: the roots protocol the server follows (``build_server(roots=)``; ``None``:
        none, a client's roots are never asked)

    Made on the event loop that serves the connection (it keeps that loop).
    """

    def __init__(self, ctx: Context, *, owner: Session, schedulers: CallSchedulers,
                 roots: RootsProtocol | None = None) -> None:
        self._ctx = ctx
        self._tools = ctx.tools
        self._owner = owner
        self._scheduler = schedulers.of(owner)
        self._roots = roots
        self._roots_changed = False
        """a ``notifications/roots/list_changed`` went to the SDK, and no call since"""
        self._asks_approval = isinstance(ctx.fs, SandboxedFileSystem)
        self._version: str | None = None
        """the protocol version of the last ``initialize`` the SDK answered (``None``: none yet)"""
        self._capabilities: Mapping[str, Any] = {}
        self._initializing: dict[Any, Mapping[str, Any]] = {}
        """``initialize`` requests handed to the SDK, by coerced id: their params"""
        self._running: dict[Any, _Call] = {}
        """the lean calls in flight, by coerced id (the latest one of an id, as the SDK keeps it)"""
        self._tasks: set[asyncio.Task[None]] = set()
        self._loop = _running_loop()
        """the asyncio loop the connection is served on (``None``: another backend: nothing lean)"""
        self.served = 0
        """how many calls were served lean (for tests and counts)"""
        self.inline = 0
        """how many of them finished on the stdio reader's task without suspending (``inline.py``)"""

    # -- what the transport tells us ---------------------------------------------------------

    def observe(self, message: types.JSONRPCMessage) -> None:
        """A message the transport hands to the SDK: note an ``initialize``; a
        ``notifications/cancelled`` for a lean call cancels it (as the SDK's dispatcher would)."""
        if isinstance(message, types.JSONRPCRequest):
            if message.method == "tools/call":
                self._roots_changed = False  # the SDK serves this call after the change: it asks
            elif message.method == "initialize":
                params = message.params if isinstance(message.params, Mapping) else {}
                self._initializing[coerce_request_id(message.id)] = params
        elif isinstance(message, types.JSONRPCNotification) and message.method == "notifications/roots/list_changed":
            self._roots_changed = True
        elif isinstance(message, types.JSONRPCNotification) and message.method == "notifications/cancelled":
            request_id = cancelled_request_id_from_params(message.params)
            call = self._running.get(coerce_request_id(request_id)) if request_id is not None else None
            if call is not None:
                self._cancel(call)

    def written(self, message: types.JSONRPCMessage) -> None:
        """A message the SDK wrote: its answer to an ``initialize`` sets the protocol version."""
        if not isinstance(message, types.JSONRPCResponse | types.JSONRPCError) or message.id is None:
            return
        params = self._initializing.pop(coerce_request_id(message.id), None)
        if params is None or not isinstance(message, types.JSONRPCResponse):
            return
        version = message.result.get("protocolVersion")
        if version in HANDSHAKE_PROTOCOL_VERSIONS:
            self._version = version
            capabilities = params.get("capabilities")
            self._capabilities = capabilities if isinstance(capabilities, Mapping) else {}

    def stop(self) -> None:
        """The transport is closing: cancel every lean call still in flight (unanswered)."""
        for call in list(self._running.values()):
            self._cancel(call)

    # -- serving ---------------------------------------------------------------------------

    def accepts(self, message: types.JSONRPCRequest) -> bool:
        """Whether ``message`` may be served lean (module docstring); the caller has checked
        that no request handed to the SDK is unanswered."""
        if message.method != "tools/call":
            return False
        return self.accepts_params(message.params)

    def accepts_params(self, params: Any) -> bool:
        """Whether a ``tools/call`` with these ``params`` may be served lean now (``accepts``;
        for a line read by ``fastwire.plain_call``)."""
        if self._version is None or self._initializing or self._loop is None:
            return False
        if not isinstance(params, dict) or not params.keys() <= _PARAMS:
            return False
        name = params.get("name")
        if type(name) is not str or self._tools.get(name) is None:
            return False
        capabilities = self._capabilities
        if self._asks_approval and capabilities.get("elicitation") is not None:
            return False
        return self._view() is not _UNSETTLED

    def _view(self) -> Any:
        """The provider view this connection's next call runs through (``None``: the provider
        itself), or ``_UNSETTLED`` when the SDK must serve it (it asks for roots, or waits)."""
        if self._roots is None or self._capabilities.get("roots") is None:
            return None
        if self._roots_changed:
            return _UNSETTLED
        ready, view = self._roots.settled_view(self._owner)
        return view if ready else _UNSETTLED

    def start(self, message: types.JSONRPCRequest, deliver: Deliver, finished: Callable[[], None]) -> None:
        """Admit the accepted ``message`` to its owner's scheduler now (synchronously, in
        arrival order) and run it in a task of its own: its answer goes to ``deliver``
        (nothing when it was cancelled); ``finished()`` is called once it is settled, however.
        Needs asyncio (``accepts`` says ``False`` elsewhere)."""
        body = self.prepare(message.id, message.params, deliver, finished)
        assert self._loop is not None
        self.adopt(self._loop.create_task(body))

    def prepare(self, request_id: types.RequestId, params: Any, deliver: Deliver,
                finished: Callable[[], None]) -> Coroutine[Any, Any, None]:
        """Admit the accepted call (``accepts_params``) to its owner's scheduler now
        (synchronously, in arrival order) and return its body, not started: the caller runs
        it, in a task of its own (``start``) or on the reader's task (``inline.first_step``,
        and ``adopt`` that task when it suspends). Its answer goes to ``deliver`` (nothing when
        it was cancelled); ``finished()`` is called once it is settled, however."""
        name: str = params["name"]
        raw = params["arguments"] if "arguments" in params else {}
        call = _Call(self._scheduler.admit(parallel=self._tools.is_parallel(name, raw)), self._view())
        key = coerce_request_id(request_id)
        self._running[key] = call
        self.served += 1
        version = self._version
        assert version is not None
        return self._body(call, key, request_id, version, name, raw, deliver, finished)

    def adopt(self, task: asyncio.Task[Any]) -> None:
        """Count ``task`` (one running a lean call's body) among the calls ``drain`` waits for."""
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _body(self, call: _Call, key: Any, request_id: types.RequestId, version: str, name: str, raw: Any,
                    deliver: Deliver, finished: Callable[[], None]) -> None:
        """One lean call: its turn, the registry, the SDK's answer (``run_abortable``'s
        contract without its extra task: a cancellation while the call runs aborts its signal
        and waits for it to return; while it waits for its turn, it gives the turn up). Runs
        without suspending when nothing in it has to wait (``inline.py``)."""
        call.task = asyncio.current_task()
        try:
            if call.cancelled:  # cancelled before it started
                call.turn.leave()
                return
            answer: bytes | types.JSONRPCResponse | types.JSONRPCError
            try:
                call.waiting = True
                async with call.turn:
                    call.waiting = False
                    try:
                        with self._ctx.scoped("fs", call.view) if call.view is not None else nullcontext():
                            result = await self._tools.execute(name, raw, session=self._owner, signal=call.signal)
                        answer = result_answer(request_id, version, result)
                    except Exception as exc:
                        answer = raised_answer(request_id, exc)
                    finally:
                        if self._running.get(key) is call:
                            del self._running[key]
            except asyncio.CancelledError:
                if not call.cancelled:
                    raise
                return  # cancelled while waiting for its turn (given up)
            if not call.cancelled:  # a cancelled call is never answered (as the SDK)
                await deliver(answer)
        finally:
            if self._running.get(key) is call:
                del self._running[key]
            finished()

    def _cancel(self, call: _Call) -> None:
        call.cancelled = True
        if call.waiting and call.task is not None:
            call.task.cancel()
        else:
            call.signal.abort(_CANCELLED)

    async def drain(self) -> None:
        """Wait (shielded) for every lean call's task to end."""
        if self._tasks:
            with anyio.CancelScope(shield=True):
                await asyncio.wait(list(self._tasks))


class _Call:
    """One lean call in flight."""

    __slots__ = ("cancelled", "signal", "task", "turn", "view", "waiting")

    def __init__(self, turn: Turn, view: Any) -> None:
        self.turn = turn
        self.view = view
        """the client roots' provider view the call runs through (``None``: the provider)"""
        self.signal = AbortSignal()
        self.task: asyncio.Task[None] | None = None
        self.waiting = False
        """waiting for its turn (a cancellation cancels the task) rather than running (it
        aborts the signal)"""
        self.cancelled = False


def result_answer(request_id: types.RequestId, version: str,
                  result: Any) -> bytes | types.JSONRPCResponse | types.JSONRPCError:
    """The SDK's answer to a ``tools/call`` whose handler returned ``result`` (a ``ToolResult``)
    at ``version``: ``ServerRunner._serialize`` (the per-version result surface) and the
    dispatcher's ``JSONRPCResponse``, as its line when ``fastwire.response_line`` can write it
    (the SDK's bytes), else the message; an invalid result is its ``-32603``. Also the early
    phase's, for the answers it leaves to the SDK's encoding.

    :raises Exception: what else the serialization raised (a lone surrogate in a key: the
        caller answers it as a raising handler, ``raised_answer``, as the SDK's runner does)
    """
    try:
        dumped = sdk_methods.serialize_server_result("tools/call", version, handler_result(result))
    except ValidationError:
        logger.exception("handler for %r returned an invalid result", "tools/call")
        error = types.ErrorData(code=types.INTERNAL_ERROR, message="Handler returned an invalid result")
        return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error)
    line = response_line(request_id, dumped)
    if line is not None:
        return line
    return types.JSONRPCResponse(jsonrpc="2.0", id=request_id, result=dumped)


def raised_answer(request_id: types.RequestId, exc: Exception) -> types.JSONRPCError:
    """What the SDK's dispatcher answers a ``tools/call`` whose handler raised ``exc`` (an
    unexpected one logged, code 0 with its text)."""
    error = handler_exception_to_error_data(exc)
    if error is None:
        logger.error("handler for %r raised", "tools/call", exc_info=exc)
        error = types.ErrorData(code=0, message=str(exc))
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error)


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:  # another event loop (trio), or none
        return None
