"""The stdio connection's dispatcher: each line served by us or by the SDK, in arrival order.

No SDK import at load time: the SDK (``server.py``) is imported in a background thread
(:class:`SdkLoader`) and attached as the connection's fallback the first time a line needs it
(``server.SdkRoute``, as anyio loads its backends and as the SDK's own ``DirectDispatcher`` is a
second implementation of its ``Dispatcher``). Every line goes through ``wire.classify``, then
one of two routes:

* **ours**: a plain ``initialize`` the SDK has not been attached for (answered with the SDK's
  bytes, ``wire.initialize_answer``; DEVIATIONS M2), ``notifications/initialized`` before the
  SDK is attached (both kept to be given to the SDK first if it is ever attached), and, when
  :meth:`Dispatcher.serves` says so (the one gate), a plain ``tools/call`` of a registered tool
  and a ``tools/list`` without ``params``: run through the registry and answered with the SDK
  path's bytes (``wire.call_answer``/``list_answer``; where those cannot be proven, the SDK's
  own serializer, ``server.result_line``, once it is loaded). A client that declared ``roots``
  (M3) is asked ``roots/list`` by a call of ours as the SDK's handler asks it (``roots.py``
  over :class:`ClientPeer`: the question written here, its answer read here, its URIs read as
  the SDK reads them, ``wire.plain_roots``); ``notifications/roots/list_changed`` is ours too;
* **the SDK's**: everything else, and every line while the SDK has a request unanswered (so a
  call it serves is admitted to the owner's scheduler before a later one of ours: arrival order
  holds across the routes, ``core.schedule.CallSchedulers`` being shared).

The gate (:meth:`Dispatcher.serves`): the connection negotiated a handshake version (by our
``initialize`` answer or the SDK's), the SDK has nothing unanswered, ``params`` holds only
``name`` and ``arguments`` (no ``_meta``: progress, the 2026-07-28 envelope), the tool is
registered, and, under a sandbox, the client did not declare ``elicitation`` (an escalation
asks through the request).

Cancellation, one table for the connection (:attr:`Dispatcher.running`, by the id as the SDK
correlates it, ``wire.coerce_id``; the latest request of an id, a request the SDK takes
included): a ``notifications/cancelled`` is looked at when its line is dispatched, in order,
never read ahead. A call waiting for its turn gives it up; a running call has its
``AbortSignal`` aborted (``run_abortable``'s contract: it is never cut off) and is not answered;
an answer is not written while the next :data:`HOLD_LINES` lines after its request, already
read, are not dispatched yet (the SDK path's dispatcher answers a quick call after as many turns
of its read loop), so a cancellation right behind its request reaches a call on either route
alike, and one sent later finds the call answered on both (``tests/e2e/mcp/test_mcp_cancel_routes.py``;
``tests/integration/mcp/test_mcp_stdio_routes.py`` sends the same bytes both ways).

``DSH_FS_MCP_SDK_ONLY=1`` sends every line to the SDK (the oracle the tests compare with).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import os
import threading
import json
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass
from types import ModuleType, SimpleNamespace
from typing import Any, Final

import anyio

from ...core.context import Context
from ...core.schedule import CallSchedulers, Turn
from ...core.session import Session
from ...core.signal import AbortSignal
from ...fs_sandbox.tools import confines
from ...fs_sandbox.tools import without_escalation
from ..roots import RootsProtocol
from ..wire import (
    BLANK,
    CALL,
    CANCEL,
    CANCELLED_REASON,
    INITIALIZE,
    INITIALIZED,
    LIST,
    call_answer,
    call_result,
    classify,
    coerce_id,
    error_line,
    initialize_answer,
    RESPONSE,
    ROOTS_CHANGED,
    list_answer,
    negotiate,
    offers_escalation,
    plain_roots,
    recover_id,
    tool_entries,
)

__all__ = ("ClientPeer", "Counts", "Dispatcher", "HOLD_LINES", "IN_FLIGHT_MAX", "Ledger", "SDK_ONLY_ENV_VAR", "SdkLoader",
           "TOO_LARGE", "sdk_only_from_env")

logger = logging.getLogger(__name__)

IN_FLIGHT_MAX: Final = 64
"""requests read and not answered yet, at most: beyond, stdin is read no further until one is
settled, so a client that sends calls without reading the answers makes the server hold at most
this many results, and its own writes block (backpressure)"""

HOLD_LINES: Final = 2
"""lines (blank ones aside) dispatched after a request before our answer to it is written, when
they are read already (module docstring; the SDK path's count, measured by the routes test)"""

TOO_LARGE: Final = "Request body too large"
"""the error message for a line over the limit (the SDK's text for an oversized request body:
``mcp.server.transport_security``; code ``-32600``, DEVIATIONS M4)"""

SDK_ONLY_ENV_VAR: Final = "DSH_FS_MCP_SDK_ONLY"
"""``1`` (``true``, ``yes``, ``on``): every line goes to the SDK"""

HOLD_ENV_VAR: Final = "DSH_FS_MCP_TEST_HOLD_IMPORT"
"""a test hook: while the file this names exists, the background SDK import does not start (so a
test can prove an answer was given before the SDK was loaded)"""

_SDK_MODULE: Final = "dsh_fs.mcp.server"
_PARAMS: Final = frozenset({"name", "arguments"})
_INVALID_REQUEST: Final = -32600


def sdk_only_from_env(environ: Mapping[str, str] | None = None) -> bool:
    """Whether ``$DSH_FS_MCP_SDK_ONLY`` asks for every line to go to the SDK (``1``, ``true``,
    ``yes``, ``on``; any case, blanks ignored)."""
    value = (os.environ if environ is None else environ).get(SDK_ONLY_ENV_VAR, "")
    return value.strip().lower() in {"1", "true", "yes", "on"}


@dataclass(slots=True)
class Counts:
    """What one connection's dispatcher did (for tests and the bench)."""

    calls: int = 0
    """``tools/call`` requests served on our route"""
    lists: int = 0
    """``tools/list`` requests answered on our route"""
    sdk: bool = False
    """the SDK was attached"""


class SdkLoader:
    """The SDK side (``server.py``) imported in a daemon thread from the start (its import is
    most of a start-up), waited for only when a line or an answer needs it."""

    def __init__(self) -> None:
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start the import (``$DSH_FS_MCP_TEST_HOLD_IMPORT``: it waits while that file exists).
        An import error is left to :meth:`module` to raise."""
        hold = os.environ.get(HOLD_ENV_VAR)

        def run() -> None:
            while hold and os.path.exists(hold):
                time.sleep(0.01)
            try:
                importlib.import_module("pydantic_core")  # the first answer's serializer
                importlib.import_module(_SDK_MODULE)
            except Exception:  # ImportError without the [mcp] extra: raised again by module()
                logger.debug("background import of the SDK failed", exc_info=True)

        self._thread = threading.Thread(target=run, name="dsh-fs mcp sdk import", daemon=True)
        self._thread.start()

    async def module(self) -> ModuleType:
        """``dsh_fs.mcp.server``, once imported (waiting for the background import).

        :raises ImportError: the SDK is not installed
        """
        thread = self._thread
        if thread is not None and thread.is_alive():
            await _joined(thread)
        if thread is None:
            return await anyio.to_thread.run_sync(importlib.import_module, _SDK_MODULE)
        return importlib.import_module(_SDK_MODULE)


async def _joined(thread: threading.Thread) -> None:
    """Wait for ``thread`` to end, watched by a daemon thread of its own (not the loop's
    executor, which the loop's shutdown would wait for)."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()

    def settle() -> None:
        if not done.done():
            done.set_result(None)

    def watch() -> None:
        thread.join()
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits any more
            loop.call_soon_threadsafe(settle)

    threading.Thread(target=watch, name="dsh-fs mcp sdk import watcher", daemon=True).start()
    await done


class Ledger:
    """The requests read and not settled yet: ours (answered, or dropped once cancelled) and the
    SDK's (a response or an error written for their id, or the SDK's word that none will come).
    Event loop thread only."""

    def __init__(self) -> None:
        self._sdk: Counter[tuple[bool, Any]] = Counter()
        self._ours = 0
        self._count = 0
        self._room = anyio.Event()
        self._room.set()
        self._idle: anyio.Event | None = None
        self.gave_up = False
        """stdout broke: nothing more is waited for"""

    @property
    def sdk_busy(self) -> bool:
        """A request given to the SDK is not settled (or stdout broke): ours must not pass it."""
        return bool(self._sdk) or self.gave_up

    async def room(self) -> None:
        """Return once fewer than :data:`IN_FLIGHT_MAX` requests are unsettled."""
        while self._count >= IN_FLIGHT_MAX:
            await self._room.wait()

    def begin(self) -> None:
        """One request of ours, until :meth:`end`."""
        if not self.gave_up:
            self._ours += 1
            self._more()

    def end(self) -> None:
        if not self.gave_up:
            self._ours -= 1
            self._fewer()

    def sdk_took(self, key: tuple[bool, Any]) -> None:
        """A request given to the SDK (``key``: whether its id is a string, and the id)."""
        if not self.gave_up:
            self._sdk[key] += 1
            self._more()

    def sdk_settled(self, key: tuple[bool, Any]) -> None:
        held = self._sdk.get(key, 0)
        if not held:
            return
        if held > 1:
            self._sdk[key] -= 1
        else:
            del self._sdk[key]
        self._fewer()

    def give_up(self) -> None:
        """Stop waiting for answers, for good: nobody can read them any more."""
        self.gave_up = True
        self._sdk.clear()
        self._ours = self._count = 0
        self._room.set()
        self._now_idle()

    async def wait_idle(self) -> None:
        """Return once nothing is left unsettled."""
        while self._count:
            if self._idle is None:
                self._idle = anyio.Event()
            await self._idle.wait()

    def _more(self) -> None:
        self._count += 1
        if self._count >= IN_FLIGHT_MAX and self._room.is_set():
            self._room = anyio.Event()

    def _fewer(self) -> None:
        self._count -= 1
        if self._count < IN_FLIGHT_MAX:
            self._room.set()
        if not self._count:
            self._now_idle()

    def _now_idle(self) -> None:
        idle, self._idle = self._idle, None
        if idle is not None:
            idle.set()


class _Call:
    """One request on our route, from its line until its answer is written or dropped."""

    __slots__ = ("cancelled", "key", "line", "release", "settled", "signal", "task", "turn", "waiting")

    def __init__(self, key: Any, line: int, turn: Turn | None) -> None:
        self.key = key
        self.line = line
        """the number of its request line among the lines dispatched"""
        self.turn = turn
        self.signal = AbortSignal()
        self.task: asyncio.Task[None] | None = None
        self.waiting = False
        """waiting for its turn or the client's roots (a cancellation cancels the task) rather
        than running (it aborts the signal)"""
        self.cancelled = False
        self.release: asyncio.Future[bool] | None = None
        """while its answer is held (:data:`HOLD_LINES`): set to whether it is to be written"""
        self.settled = False
        """answered or dropped: no longer counted in the ledger"""


class ClientPeer:
    """The client as our calls ask it for its roots (``roots.RootsPeer``), without the SDK."""

    __slots__ = ("_dispatcher",)

    def __init__(self, dispatcher: Dispatcher) -> None:
        self._dispatcher = dispatcher

    @property
    def client_capabilities(self) -> Any:
        return SimpleNamespace(roots=self._dispatcher._capabilities.get("roots"))

    @property
    def protocol_version(self) -> Any:
        return self._dispatcher._version

    async def list_roots(self, related_to: Any) -> list[str]:
        return await self._dispatcher.ask_roots()


class Dispatcher:
    """One stdio connection's dispatcher (module docstring). Event loop thread only, apart from
    :meth:`first_line` (before the loop).

    :param ctx: the deployment (``ctx.tools``; ``ctx.fs`` says whether a sandbox asks for approval)
    :param owner: the connection's observation owner (every call's ``session``)
    :param write: writes one line through the connection's writer (``False``: stdout broke)
    :param write_blocking: the same before the event loop runs (raises ``OSError``)
    :param has_line: whether a whole line is read and not dispatched yet
    :param spawn: starts a task in the connection's task group (the SDK's server)
    :param version: ``serverInfo.version``
    :param sdk_only: every line to the SDK
    :param client_roots: a client's declared roots narrow its calls (M3); ``False``: every
        root is served whatever it declares (``dsh-fs mcp --ignore-client-roots``, D36)
    """

    def __init__(self, ctx: Context, *, owner: Session, loader: SdkLoader, version: str, instructions: str | None,
                 write: Callable[[bytes], Awaitable[bool]], write_blocking: Callable[[bytes], None],
                 has_line: Callable[[], bool], sdk_only: bool = False, client_roots: bool = True) -> None:
        self._ctx = ctx
        self._tools = ctx.tools
        self._owner = owner
        self._loader = loader
        self._server_version = version
        self._instructions = instructions
        self._write = write
        self._write_blocking = write_blocking
        self._has_line = has_line
        self._sdk_only = sdk_only
        self.spawn: Callable[[Callable[[], Awaitable[Any]]], None] | None = None
        """starts a task in the connection's task group (set by the transport)"""
        self.schedulers = CallSchedulers()
        self._scheduler = self.schedulers.of(owner)
        self.roots = RootsProtocol(ctx.fs) if client_roots else None
        self.ledger = Ledger()
        self.counts = Counts()
        self.running: dict[Any, _Call] = {}
        """the cancellation table: our requests in flight by coerced id (the latest of an id)"""
        self._held: list[_Call] = []
        self._tasks: dict[asyncio.Task[None], _Call] = {}
        self._dispatched = 0
        self._version: str | None = None
        """the handshake version negotiated (``None``: none yet)"""
        self._capabilities: Mapping[str, Any] = {}
        self._answered_initialize = False
        self._replay: list[tuple[bytes, tuple[Any, bytes] | None]] = []
        """lines consumed before the SDK was attached, for it to read first"""
        self.peer = ClientPeer(self)
        """the client as our calls ask it for its roots"""
        self._asked = 0
        self._answers: dict[str, asyncio.Future[dict[str, Any]]] = {}
        """our requests to the client (``roots/list``) waiting for their answer, by id"""
        self._asks_approval = confines(ctx.fs)  # a sandbox below any wrapper (history, rules)
        self._sdk: Any = None
        self._sdk_done: anyio.Event | None = None

    # -- the lines ---------------------------------------------------------------------------------

    def first_line(self, raw: bytes) -> bool:
        """Before the event loop: answer ``raw`` (the first line) if it is a plain
        ``initialize``; whether it was consumed (else it is dispatched as usual)."""
        if self._sdk_only:
            return False
        line = classify(raw)
        if line.kind != INITIALIZE:
            return False
        answer = self._initialize(raw, line.id, line.params)
        if answer is None:
            return False
        try:
            self._write_blocking(answer)
        except OSError:  # dispatched again on the loop, where the broken stdout is met
            logger.debug("could not write the initialize answer", exc_info=True)
            self._replay.pop()
            self._answered_initialize = False
            self._version = None
            self._capabilities = {}
            return False
        self._dispatched += 1
        return True

    async def dispatch(self, raw: bytes) -> None:
        """Serve one line read from stdin (its line end included), in arrival order."""
        line = classify(raw) if not self._sdk_only else None
        kind = line.kind if line is not None else None
        if kind == BLANK:
            return
        self._dispatched += 1
        if line is None:
            await self._to_sdk(raw)
        elif kind == CALL and self.serves(line.params):
            await self.ledger.room()
            await self._start(line.id, line.params)
        elif kind == LIST and self._version is not None and not self.ledger.sdk_busy:
            schemas = self._tools.schemas()
            if not offers_escalation(self._ctx, self._capabilities.get("elicitation") is not None):
                schemas = without_escalation(schemas)  # D37: nobody at this client can approve one
            answer = list_answer(line.id, tool_entries(schemas))
            if answer is None:
                await self._to_sdk(raw)
            else:
                await self.ledger.room()
                self.counts.lists += 1
                call = self._admit(line.id, None)
                self._spawn(call, self._answer(call, answer))
        elif kind == INITIALIZE and self._sdk is None and not self._answered_initialize:
            answer = self._initialize(raw, line.id, line.params)
            if answer is None:
                await self._to_sdk(raw)
            elif not await self._write(answer):
                self._version = None
        elif kind == INITIALIZED and self._sdk is None:
            self._replay.append((raw, None))
        elif kind == CANCEL and self._cancel(line.id):
            pass
        elif kind == RESPONSE and self._answered(line.id, line.params):
            pass
        elif kind == ROOTS_CHANGED and self._version is not None:
            if self.roots is not None:  # (--ignore-client-roots: nothing to do, as on the SDK route)
                self.roots.changed(self._owner, self.peer)  # the next call asks again (M3)
        elif kind == CANCEL and self._sdk is None:
            pass  # names no request in flight: the SDK would do nothing with it either
        else:
            await self._to_sdk(raw)
        self._release()

    async def oversized(self, prefix: bytes) -> None:
        """A line over the limit (its first bytes): answered ``-32600`` :data:`TOO_LARGE` with
        the id found in ``prefix`` (``null`` when it is not there), DEVIATIONS M4."""
        self._dispatched += 1
        await self._write(error_line(recover_id(prefix.decode("utf-8", "replace")), _INVALID_REQUEST, TOO_LARGE))
        self._release()

    def idle(self) -> None:
        """No whole line is waiting: every answer held is written now."""
        if self._held:
            self._release(everything=True)

    def serves(self, params: Any) -> bool:
        """The gate: may this ``tools/call`` (its ``params``) skip the SDK (module docstring)?"""
        if self._version is None or self.ledger.sdk_busy or self._sdk_only:
            return False
        if type(params) is not dict or not params.keys() <= _PARAMS:
            return False
        name = params.get("name")
        if type(name) is not str or self._tools.get(name) is None:
            return False
        return not (self._asks_approval and self._capabilities.get("elicitation") is not None)

    def _initialize(self, raw: bytes, request_id: Any, params: Any) -> bytes | None:
        found = initialize_answer(raw, version=self._server_version, instructions=self._instructions)
        if found is None:
            return None
        answer = found[1].encode("utf-8") + b"\n"
        self._answered_initialize = True
        self._version = negotiate(params["protocolVersion"])
        capabilities = params.get("capabilities")
        self._capabilities = capabilities if isinstance(capabilities, Mapping) else {}
        self._replay.append((raw, (request_id, answer)))
        return answer

    # -- our calls ----------------------------------------------------------------------------------

    def _admit(self, request_id: Any, turn: Turn | None) -> _Call:
        key = coerce_id(request_id)
        call = _Call(key, self._dispatched, turn)
        self.running[key] = call
        self.ledger.begin()
        return call

    async def _start(self, request_id: Any, params: dict[str, Any]) -> None:
        """Admit the call to its owner's scheduler now (arrival order) and start it; it takes
        its first step before the next line is dispatched (as the SDK's request task does)."""
        name: str = params["name"]
        raw = params["arguments"] if "arguments" in params else {}
        call = self._admit(request_id, self._scheduler.admit(parallel=self._tools.is_parallel(name, raw)))
        self.counts.calls += 1
        self._spawn(call, self._run(call, request_id, name, raw))
        if self._has_line():  # the next line is read already: the call takes its first step first
            await asyncio.sleep(0)

    def _spawn(self, call: _Call, body: Coroutine[Any, Any, None]) -> None:
        """Run ``body`` (``_run`` or ``_answer``: each ends by settling ``call``, which forgets the
        task) in a task of its own."""
        task = asyncio.get_running_loop().create_task(body)
        call.task = task
        self._tasks[task] = call

    async def _answer(self, call: _Call, answer: bytes) -> None:
        """A list answer's task."""
        try:
            await self._deliver(call, answer)
        finally:
            self._settle(call)

    async def _run(self, call: _Call, request_id: Any, name: str, raw: Any) -> None:
        """One call: its turn, the registry, the SDK path's answer. A cancellation while it waits
        for its turn gives the turn up; while it runs, it aborts the signal and the call ends as
        it decides (never cut off); a cancelled call is never answered. Counted in the ledger
        until its answer is written."""
        assert call.turn is not None and self._version is not None
        version = self._version
        outcome: Any
        try:
            if call.cancelled:  # cancelled before it started
                call.turn.leave()
                return
            call.waiting = True
            try:
                async with call.turn:
                    view = None
                    if self.roots is not None and self._capabilities.get("roots") is not None:  # M3: asked first
                        view = await self.roots.view_for(self._owner, self.peer, request_id)
                    call.waiting = False
                    try:
                        with self._ctx.scoped("fs", view) if view is not None else contextlib.nullcontext():
                            outcome = await self._tools.execute(name, raw, session=self._owner, signal=call.signal)
                    except Exception as exc:
                        outcome = exc
            except asyncio.CancelledError:
                if call.cancelled:
                    return  # given up while waiting for its turn or the client's roots
                raise
            if call.cancelled:
                return
            answer = None if isinstance(outcome, Exception) else call_answer(request_id, call_result(outcome))
            if answer is None:  # the SDK's serializer (a float, a lone surrogate; a registry that raised)
                try:
                    sdk = await self._loader.module()
                    answer = (sdk.raised_line(request_id, outcome) if isinstance(outcome, Exception)
                              else sdk.result_line(request_id, version, outcome))
                except Exception:  # a bug; the SDK not installed
                    logger.exception("could not answer a call")
                    return
            await self._deliver(call, answer)
        finally:
            self._settle(call)

    async def _deliver(self, call: _Call, answer: bytes) -> None:
        """Write ``answer``, once the lines right behind its request that are read already have
        been dispatched (:data:`HOLD_LINES`; the dispatcher releases it); a cancelled call's
        answer is dropped."""
        if call.cancelled:
            return
        if self._dispatched < call.line + HOLD_LINES and self._has_line():
            release = call.release = asyncio.get_running_loop().create_future()
            self._held.append(call)
            try:
                if not await release:
                    return
            finally:
                call.release = None
        else:
            self._unname(call)
        await self._write(answer)

    def _release(self, *, everything: bool = False) -> None:
        """Release the held answers whose lines are behind (all of them with ``everything``):
        too late to cancel them from now on."""
        if not self._held:
            return
        due = [call for call in self._held if everything or self._dispatched >= call.line + HOLD_LINES]
        if not due:
            return
        self._held = [call for call in self._held if call not in due]
        for call in due:
            self._unname(call)
            if call.release is not None and not call.release.done():
                call.release.set_result(True)

    def _unname(self, call: _Call) -> None:
        """``call`` leaves the cancellation table (its answer is on its way: too late to cancel)."""
        if self.running.get(call.key) is call:
            del self.running[call.key]

    def _settle(self, call: _Call) -> None:
        """``call`` is answered or will never be: out of the table, the ledger and the tasks
        :meth:`stop` waits for (once; its task's last step, so no done callback costs the loop
        another turn per call)."""
        self._unname(call)
        if call.task is not None:
            self._tasks.pop(call.task, None)
        if not call.settled:
            call.settled = True
            self.ledger.end()

    def _cancel(self, target: Any) -> bool:
        """``notifications/cancelled`` for ``target``: whether it named one of our requests (the
        call then gives its turn up, has its signal aborted, or its held answer dropped; it is
        never answered)."""
        call = self.running.pop(coerce_id(target), None)
        if call is None:
            return False
        call.cancelled = True
        if call.release is not None:  # held: never written
            self._held.remove(call)
            if not call.release.done():
                call.release.set_result(False)
        elif call.task is None or call.turn is None:  # a list answer on its way out
            pass
        elif call.waiting:
            call.task.cancel()
        else:  # on the loop's next turn, as the SDK's cancel scope reaches its handler
            asyncio.get_running_loop().call_soon(call.signal.abort, CANCELLED_REASON)
        return True

    # -- the SDK --------------------------------------------------------------------------------------

    async def _to_sdk(self, raw: bytes) -> None:
        route = await self._attach()
        await route.hand(raw)

    async def _attach(self) -> Any:
        """The SDK route, attached now if it is not yet: the lines kept for it go first."""
        if self._sdk is None:
            module = await self._loader.module()
            server = module.build_server(self._ctx, owner_for=lambda _rctx: self._owner, schedulers=self.schedulers,
                                         roots=self.roots, client_roots=self.roots is not None)
            route = module.SdkRoute(server, write=self._write, ledger=self.ledger, observer=self)
            done = self._sdk_done = anyio.Event()

            async def run() -> None:
                try:
                    await route.run()
                finally:
                    done.set()

            assert self.spawn is not None
            self.spawn(run)
            self._sdk = route
            self.counts.sdk = True
            replay, self._replay = self._replay, []
            for line, answered in replay:
                await route.replay(line, answered=answered)
        return self._sdk

    def sdk_took_request(self, key: Any, method: str) -> None:
        """The SDK took a request: it is now the latest of its id (a cancellation is its own;
        a call of ours with that id runs on, no longer named by it)."""
        self.running.pop(key, None)

    def sdk_roots_changed(self) -> None:
        """A ``notifications/roots/list_changed`` went to the SDK (not of the plain shape): the
        next call asks again at once, before the SDK's handler has run."""
        if self.roots is not None:
            self.roots.changed(self._owner, self.peer)

    # -- our questions to the client ---------------------------------------------------------------

    def _answered(self, request_id: Any, message: dict[str, Any]) -> bool:
        """The client's answer to one of our requests: whether it was one (else the SDK's)."""
        answer = self._answers.get(request_id) if type(request_id) is str else None
        if answer is None or answer.done():
            return False
        answer.set_result(message)
        return True

    async def ask_roots(self) -> list[str]:
        """Send ``roots/list`` and return the answer's URIs as the SDK's session reads them.

        :raises Exception: an error answer (the SDK's ``MCPError``), a malformed result (its
            ``ValidationError``), a broken stdout
        """
        self._asked += 1
        request_id = f"dsh-fs-{self._asked}"  # never one of the SDK's (integers)
        answer = self._answers[request_id] = asyncio.get_running_loop().create_future()
        try:
            if not await self._write(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "roots/list"},
                                                separators=(",", ":")).encode() + b"\n"):
                raise ConnectionError("stdout is broken")
            message = await answer
        except BaseException:  # given up (a timeout, the call cancelled): the SDK's courtesy cancel
            if not answer.done():
                with anyio.CancelScope(shield=True):
                    await self._write(json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {
                        "requestId": request_id, "reason": "caller cancelled"}}, separators=(",", ":")).encode() + b"\n")
            raise
        finally:
            del self._answers[request_id]
        if "error" in message:
            raise (await self._loader.module()).client_error(message["error"])
        uris = plain_roots(message["result"])
        if uris is None:
            uris = (await self._loader.module()).roots_of(message["result"], self._version or "")
        return uris

    def sdk_initialized(self, version: str, capabilities: Mapping[str, Any]) -> None:
        """The SDK answered an ``initialize`` with a handshake ``version``."""
        self._version = version
        self._capabilities = capabilities

    # -- the end ----------------------------------------------------------------------------------------

    async def end_of_input(self) -> None:
        """stdin ended: once every request read is settled, the SDK's input ends too."""
        self._release(everything=True)
        await self.ledger.wait_idle()
        if self._sdk is not None:
            self._sdk.close()
            assert self._sdk_done is not None
            await self._sdk_done.wait()

    def give_up(self) -> None:
        """stdout broke: no answer will be written."""
        self.ledger.give_up()
        held, self._held = self._held, []
        for call in held:
            if call.release is not None and not call.release.done():
                call.release.set_result(False)

    async def stop(self) -> None:
        """The connection is closing early: every call of ours still running has its signal
        aborted, and is waited for (shielded): a mutation is never cut off."""
        for answer in self._answers.values():
            answer.cancel()
        for task, call in self._tasks.items():
            call.cancelled = True
            if call.waiting:
                task.cancel()
            else:
                call.signal.abort(CANCELLED_REASON)
        if self._tasks:
            with anyio.CancelScope(shield=True):
                await asyncio.wait(list(self._tasks))
        if self._sdk is not None:
            self._sdk.close()
