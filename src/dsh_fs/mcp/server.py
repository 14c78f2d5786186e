"""The MCP server over a ``Context``'s tool registry (mcp ≥ 2.3 low-level ``Server``).

* ``tools/list`` → ``wire.tool_entries(ctx.tools.schemas())``: our schemas verbatim.
* ``tools/call`` → ``ctx.tools.execute(name, arguments, session=<the connection's owner>,
  signal=…)`` → ``wire.call_result``: a tool failure (unknown tool and invalid arguments
  included) is an ``isError`` result with our exact ``Error: …`` text, never a protocol error.
  ``arguments`` that are not a JSON object reach the registry unchanged (the SDK would
  reject them before any handler runs), so the model sees the registry's ``INVALID_ARGS``
  text; absent ``arguments`` mean ``{}``.
* client roots (``roots.py``, DEVIATIONS M3): ``roots/list`` with an owner's first
  ``tools/call`` and its first after ``notifications/roots/list_changed``; each call runs
  through its owner's narrowed provider view (``Context.scoped``).
* ``instructions`` = the tools' own prompt sections (``wire.server_instructions``, rendered
  once, at construction): a tool server gives guidance for its
  tools, not the agent's identity or persona (those belong to the client's agent).

Calls sent together are scheduled as the registry schedules one assistant message
(REFERENCE-SPEC §5.5, ``core.schedule.CallScheduler``), per observation owner (one stdio
connection, one HTTP session, one authenticated principal): a ``read`` overlaps the reads
around it, a ``write``/``edit`` (or any call that is not concurrency-safe) waits for every
call of its owner that arrived before it, and later calls wait for it. So a client that sends
``read`` then ``edit`` without waiting gets the edit applied after the read, never refused
as unobserved. Arrival order is the order the SDK starts its request tasks, which is the
order the connection delivered the requests (stdio: line order; HTTP: the order the server
received the POSTs); the scheduling middleware admits a call before anything awaits.
Different owners are not ordered against each other: mutations of one target are serialized
by the provider's lock and checked against the caller's observed version.

Cancellation (``notifications/cancelled``, or the connection closing): the call's
``AbortSignal`` is aborted at once, and the handler waits for the call to finish
(``core.signal.run_abortable``); the call itself runs shielded, so a mutation is never cut off between two syscalls by a cancellation
(the provider's §2.12 checkpoints decide where it stops).

Not here: the stdio transport (``stdio.py``), streamable HTTP (``http.py``), per-session owners
(``sessions.py``), tool logic.
"""

from __future__ import annotations

import contextlib
import contextvars
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, BinaryIO

import mcp.types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.context import CallNext, HandlerResult, ServerMiddleware

from .. import __version__
from ..core.context import Context
from ..core.schedule import CallScheduler
from ..core.session import Session
from ..core.signal import run_abortable
from ..core.tools import ToolResult
from ..fs_sandbox.tools import without_escalation
from .approval import REQUEST, ROUND, STATELESS_PROTOCOL, Round, can_elicit
from .handshake import SERVER_NAME
from .roots import RootsProtocol
from .wire import call_result, offers_escalation, server_instructions, tool_entries

if TYPE_CHECKING:
    from .early import EarlyStart
    from .lean import LeanCalls
    from .percall import FirstCallHint

__all__ = (
    "CallSchedulers",
    "OwnerLookup",
    "SERVER_NAME",
    "build_server",
    "handler_result",
    "keep_raw_arguments",
    "schedule_calls",
    "serve_stdio",
)


OwnerLookup = Callable[[ServerRequestContext[Any, Any]], Session]
"""Maps a request to its connection's observation owner (may raise ``MCPError``)."""

_RESULT_TYPE: Any = types.CallToolResult.model_fields["result_type"].default
"""what a ``CallToolResult`` model dumps as its ``resultType`` (kept on 2026-era connections only)"""
_UNSET: Any = object()
_RAW_ARGUMENTS: contextvars.ContextVar[Any] = contextvars.ContextVar("dsh_fs_mcp_raw_arguments", default=_UNSET)


async def keep_raw_arguments(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """Server middleware: carry a ``tools/call`` whose ``arguments`` is not an object past
    the SDK's params validation, to the handler, unchanged (for the registry's own error).

    The value travels in a context variable (the middleware chain and the handler run in
    one task); the params the SDK validates lose their ``arguments`` member.
    """
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


class CallSchedulers:
    """Each observation owner's ``CallScheduler``, made on first use and held as long as its
    owner (weakly). One instance is shared by ``schedule_calls`` and the lean ``tools/call``
    path of the stdio transport (``lean.py``), so calls served by either are ordered together."""

    __slots__ = ("_schedulers",)

    def __init__(self) -> None:
        self._schedulers: weakref.WeakKeyDictionary[Session, CallScheduler] = weakref.WeakKeyDictionary()

    def of(self, owner: Session) -> CallScheduler:
        """``owner``'s scheduler (made now if it has none)."""
        scheduler = self._schedulers.get(owner)
        if scheduler is None:
            scheduler = self._schedulers[owner] = CallScheduler()
        return scheduler


def schedule_calls(
    ctx: Context, owner_for: OwnerLookup, schedulers: CallSchedulers | None = None
) -> ServerMiddleware[Any]:
    """Server middleware: run each owner's ``tools/call`` requests in arrival order, as
    ``execute_batch`` runs one assistant message (see the module docstring).

    The call is admitted to its owner's ``CallScheduler`` before the middleware awaits
    anything, so it must run before any middleware that awaits ahead of ``call_next``. A
    call cancelled while it waits gives up its place. Owners are held weakly: a scheduler
    lives as long as its owner.

    :param ctx: the deployment (``ctx.tools.is_parallel`` says which calls may overlap)
    :param owner_for: the observation owner of a request (may raise ``MCPError``)
    :param schedulers: the owners' schedulers (shared with the lean stdio path); a new set
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
    validates a handler's dict against the protocol version's result and dumps it exactly
    as it does a model's dump, so the bytes are those of the model (for every protocol
    version: ``tests/unit/mcp/test_mcp_result_dict.py``) with one pydantic pass less per call."""
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
    :param middleware: extra SDK server middleware, outermost first (run before ours); each
        must reach ``call_next`` without awaiting first (``schedule_calls`` takes the
        arrival order after them)
    :param name: the server name announced to clients
    :param client_roots: follow the MCP roots protocol (``roots.RootsProtocol``, DEVIATIONS
        M3): a client's roots narrow its owner's calls to their intersection with the
        provider's roots
    :param schedulers: the owners' call schedulers (``serve_stdio`` shares them with the lean
        ``tools/call`` path); a new set when ``None``
    :param roots: with ``client_roots``, the roots protocol to follow (``serve_stdio`` shares
        it with the lean path); a new one when ``None``
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

    async def call_tool(rctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams) -> dict[str, Any] | types.InputRequiredResult:
        raw = _RAW_ARGUMENTS.get()
        if raw is _UNSET:
            raw = params.arguments if params.arguments is not None else {}
        session = owner_for(rctx)
        view = await roots.view_for(session, rctx.session, rctx.request_id) if roots is not None else None
        token = REQUEST.set(rctx)  # a sandbox escalation asks the person through this request (approval.py)
        current = (Round(params.name, raw, params.input_responses, params.request_state)
                   if str(rctx.protocol_version) >= STATELESS_PROTOCOL else None)
        round_token = ROUND.set(current)  # 2026-07-28: the approval asks in rounds (approval.py)
        try:
            with ctx.scoped("fs", view) if view is not None else contextlib.nullcontext():
                result = await run_abortable(
                    lambda signal: tools.execute(params.name, raw, session=session, signal=signal),
                    reason="the client cancelled the request",
                )
        finally:
            ROUND.reset(round_token)
            REQUEST.reset(token)
        if current is not None and current.pending is not None:
            return current.pending  # type: ignore[no-any-return]  # nothing ran: the person is asked first
        return handler_result(result)

    async def roots_changed(rctx: ServerRequestContext[Any, Any], params: types.NotificationParams) -> None:
        assert roots is not None
        roots.changed(owner_for(rctx), rctx.session)

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


async def serve_stdio(
    ctx: Context,
    *,
    root: str,
    owner: Session | None = None,
    early: EarlyStart | None = None,
    hint: FirstCallHint | None = None,
    lean: bool | None = None,
    stdin: BinaryIO | None = None,
    stdout: BinaryIO | None = None,
    client_roots: bool = True,
) -> LeanCalls | None:
    """Serve ``ctx`` on stdin/stdout until the client closes the connection.

    One process serves one client: every call's observation owner is ``owner`` (``dsh-fs
    mcp --session NAME``: the ``Session`` bound to the persistent store, DEVIATIONS M1), or
    else one ``Session(cwd=root)`` for the process's lifetime. The transport is ours
    (``stdio.stdio_transport``), not the SDK's: every request line is answered, even one the
    SDK's parser would drop (lone surrogate escapes, deep nesting, malformed JSON-RPC).

    :param early: what ``early.answer_first_line`` read and answered before the SDK was
        imported (DEVIATIONS M2); served first, the answered ``initialize`` not answered twice
    :param hint: the registry wrapper that says the per-call hint (``percall.FirstCallHint``)
        the early phase served calls through (``prelude.py``: its count of answered calls
        carries on); ``None``: one is made when ``owner`` is ``None``
    :param lean: serve plain ``tools/call`` requests on the transport's lean path (``lean.py``:
        the SDK's bytes without its dispatcher); ``None``: unless ``DSH_FS_MCP_LEAN=0``
    :param stdin: read from this binary stream instead of fd 0 (``stdio.stdio_transport``)
    :param stdout: write to this binary stream instead of fd 1
    :param client_roots: a client's roots narrow its calls (M3); ``False``: every root is
        served whatever roots the client declares (``dsh-fs mcp --ignore-client-roots``, D36)
    :return: the lean path that served (``None`` when it was off), to count what it served
    """
    from .lean import LeanCalls, lean_from_env
    from .stdio import stdio_transport

    from .percall import FirstCallHint

    session = owner if owner is not None else Session(root)
    schedulers = CallSchedulers()
    roots = RootsProtocol(ctx.fs) if client_roots else None
    # without --session, a refusal for want of a read in a fresh process is said on stderr
    if hint is None and owner is None:
        hint = FirstCallHint(ctx.tools)
    with ctx.scoped("tools", hint) if hint is not None else contextlib.nullcontext():
        server = build_server(ctx, owner_for=lambda _rctx: session, schedulers=schedulers, roots=roots,
                              client_roots=client_roots)
        on = lean_from_env() if lean is None else lean
        fast = (LeanCalls(ctx, owner=session, schedulers=schedulers, roots=roots)
                if on and "tools/call" not in server.cache_hints else None)
    async with stdio_transport(stdin, stdout, early=early, lean=fast) as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
    return fast
