"""The early phase over stdio (DEVIATIONS M2): plain ``tools/call`` requests answered while
the MCP SDK is still being imported.

A client that starts one ``dsh-fs mcp`` per tool call (M1) sends ``initialize`` (answered
early: ``early.py``), ``notifications/initialized``, one ``tools/call``, and closes stdin.
Without this phase the call waits for the SDK import (about 0.5 s on the bench VM). Here,
once the early path answered ``initialize`` (``EarlyStart.answered_id``), ``dsh-fs mcp``
(``cli/mcp_cmd.py``) keeps reading stdin itself on the event loop, before anything imports
the SDK, until the background import is done (``early.import_sdk_in_background``) or a line
arrives that is not plainly servable. Then every byte not served goes to the SDK path
(``stdio.stdio_transport(early=...)``) as if it had been read there, in order.

Served here, in arrival order, one at a time (each done before the next line is read, and
all before anything reaches the SDK: the owner's ``CallScheduler`` order holds):

* a line ``fastwire.plain_call`` reads as a ``tools/call`` of a registered tool, after
  ``notifications/initialized``; run as the SDK path runs it (the connection's observation
  owner, the ``percall.FirstCallHint`` registry, ``core.signal.run_abortable``'s contract:
  while it runs stdin is read on, and a ``notifications/cancelled`` for it aborts its
  signal, the call is waited for and never answered) and answered with the SDK path's bytes
  (``earlywire.call_answer``; a result of another shape, or a call that raised, is answered
  once the SDK is loaded, with its functions). Its line is not given to the SDK;
* a ``tools/list`` request without ``params`` (a per-call client on the ``mcp<2`` SDK, as
  LangChain's adapter uses, lists the tools after each call to check its result), answered
  with the SDK path's bytes (``earlywire.list_answer``) when the tools are of the plain shape
  ours are (else it ends the phase). Its line is not given to the SDK;
* ``notifications/initialized`` and blank lines: recorded, given to the SDK later.

When stdin ends with every line served here, the SDK path is not run at all (it would write
nothing: ``EarlyCalls.finished``). Anything else ends the phase with that line (``ping``, any
other notification,
``notifications/cancelled``, a line that is not strict UTF-8 or longer than
:data:`LINE_LIMIT`, a partial line at the end of input). The phase is not entered at all
(:func:`early_calls_allowed`) unless the client declared no ``roots`` capability (M3 asks
them with the first call) and, under a sandbox, no ``elicitation``; nor when the lean path is
off (``DSH_FS_MCP_LEAN``) or stdin is not a pipe or a socket.

``tests/unit/mcp/test_mcp_earlywire.py`` holds the answers to the SDK's;
``tests/e2e/mcp/test_mcp_early_calls.py`` runs real servers. No SDK import here (until the
import is done).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import stat
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from ..core.context import Context
from ..core.jsonvalue import may_rewrite
from ..core.session import Session
from ..core.signal import AbortSignal
from ..core.tools import ToolResult
from ..fs_sandbox.filesystem import SandboxedFileSystem
from ..fs_sandbox.tools import without_escalation
from .early import EarlyStart
from .earlywire import call_answer, list_answer
from .fastwire import plain_call
from .fdio import write_all
from .leanenv import lean_from_env
from .wire import call_result, offers_escalation, tool_entries

__all__ = ("EarlyCalls", "LINE_LIMIT", "early_calls_allowed", "serve_early_calls")

logger = logging.getLogger(__name__)

LINE_LIMIT: Final = 65536
"""bytes of one line served early at most (``stdio.PARSE_INLINE_MAX``); a longer line ends
the phase (the SDK path reads it)"""

_INITIALIZED: Final = "notifications/initialized"
_BLANK: Final = b" \t\n\r"
"""what a blank line may hold (``stdio.parse_line``'s whitespace; a form feed is a parse
error there)"""
_CANCELLED: Final = "the client cancelled the request"
"""the abort reason of a cancelled call (the SDK path's, ``server.call_tool``)"""


@dataclass(slots=True)
class EarlyCalls:
    """What the early phase did, for the SDK path to carry on from."""

    start: EarlyStart
    """the bytes the SDK path is to read first (the ``initialize`` and every line not served
    here, in order), and the ``initialize`` answered early"""
    served: int = 0
    """how many ``tools/call`` requests were answered here"""
    listed: int = 0
    """how many ``tools/list`` requests were answered here"""
    finished: bool = False
    """stdin ended with every line served here: nothing is left for the SDK path (the
    ``initialize`` and ``notifications/initialized`` change nothing it would write)"""
    deferred: list[tuple[int | str, Any]] = field(default_factory=list)
    """calls run here whose answer waits for the SDK's encoding: ``(id, ToolResult or the
    exception raised)``"""


def early_calls_allowed(ctx: Context, early: EarlyStart | None, *, stdin_fd: int = 0) -> bool:
    """Whether the early phase may serve calls on this connection (module docstring).

    :param ctx: the deployment (``ctx.fs`` says whether a sandbox asks for approval)
    :param early: what ``early.answer_first_line`` did
    """
    if early is None or early.answered_id is None or early.answer is None or not lean_from_env():
        return False
    try:
        mode = os.fstat(stdin_fd).st_mode
    except OSError:
        return False
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
        return False
    capabilities = _client_capabilities(early.preread)
    if capabilities is None or capabilities.get("roots") is not None:
        return False
    return not (isinstance(ctx.fs, SandboxedFileSystem) and capabilities.get("elicitation") is not None)


def _client_capabilities(preread: bytes) -> Mapping[str, Any] | None:
    end = preread.find(b"\n")
    try:
        params = json.loads(preread[:end])["params"]
        capabilities = params["capabilities"]
    except (ValueError, KeyError, TypeError):
        return None
    return capabilities if isinstance(capabilities, dict) else None


async def serve_early_calls(ctx: Context, early: EarlyStart, *, owner: Session, importing: threading.Thread,
                            stdin_fd: int = 0, stdout_fd: int = 1) -> EarlyCalls:
    """Serve plain calls from ``stdin_fd`` until ``importing`` (the background SDK import)
    ends or a line arrives that is not plainly servable (module docstring); the calls whose
    answer needs the SDK are answered once it is loaded. Never raises for what the client
    sends; stdin ending ends the phase (every call read is answered).

    :param ctx: the deployment whose ``ctx.tools`` serves the calls (the ``FirstCallHint``
        the SDK path will use, when there is one)
    :param early: the ``initialize`` answered early (``early_calls_allowed`` said yes)
    :param owner: the connection's observation owner, the SDK path's too
    :param importing: the thread importing the SDK (``early.import_sdk_in_background``)
    :return: what the SDK path is to read first, and counts
    """
    loop = asyncio.get_running_loop()
    first_end = early.preread.find(b"\n") + 1
    kept = bytearray(early.preread[:first_end])  # the initialize: the SDK gets it (stdio._AnsweredEarly)
    stdin = _Stdin(loop, stdin_fd, early.preread[first_end:])
    buffer = stdin.buffer
    outcome = EarlyCalls(EarlyStart(b""))
    version = _negotiated(early.answer)
    imported = _when_done(loop, importing)
    initialized = False
    try:
        while True:
            end = buffer.find(b"\n")
            if end < 0:
                if stdin.at_end or stdin.failed or len(buffer) > LINE_LIMIT or imported.done():
                    break
                if not await stdin.read(imported):  # the SDK is loaded: it takes over
                    break
                continue
            if end >= LINE_LIMIT:
                break
            line = bytes(buffer[: end + 1])
            if not line.strip(_BLANK):
                kept += line
                del buffer[: end + 1]
                continue
            if not initialized:
                if not _is_initialized(line):
                    break
                initialized = True
                kept += line
                del buffer[: end + 1]
                continue
            listing = _list_request(line)
            if listing is not None:  # the mcp<2 client lists the tools after each call
                schemas = ctx.tools.schemas()  # served here only to a client without elicitation
                if not offers_escalation(ctx, False):
                    schemas = without_escalation(schemas)  # D37
                answer = list_answer(listing, tool_entries(schemas))
                if answer is None:
                    break
                del buffer[: end + 1]
                outcome.listed += 1
                if not await _write(stdout_fd, answer) or imported.done():
                    break
                continue
            plain = plain_call(line)
            if plain is None or not _callable(ctx, plain[1]):
                break
            del buffer[: end + 1]
            if not await _serve(ctx, owner, plain[0], plain[1], outcome, stdin, stdout_fd):
                break  # stdout broke: the SDK path meets it again
            if imported.done():
                break
        if outcome.deferred:
            await imported
            await _answer_deferred(outcome.deferred, version, stdout_fd)
    finally:
        if not imported.done():
            imported.cancel()  # its watcher ends with the import; nothing waits for it
    outcome.start = EarlyStart(bytes(kept + buffer), early.answered_id, early.answer)
    outcome.finished = stdin.at_end and not buffer
    return outcome


class _Stdin:
    """stdin as the early phase reads it: the bytes read and not served yet (``buffer``),
    whether it ended; read only when the loop says it is readable (never blocks)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, fd: int, preread: bytes) -> None:
        self.loop = loop
        self.fd = fd
        self.buffer = bytearray(preread)
        self.at_end = False
        self.failed = False
        """a read failed (``ECONNRESET`` on a socket whose peer left answers unread): nothing
        more is read here; the SDK path reads on and meets what follows (as it would have)"""

    async def read(self, other: asyncio.Future[Any]) -> bool:
        """Read what stdin has into ``buffer`` once it is readable (``at_end`` at its end);
        ``False`` when ``other`` was done first or the read failed (``failed``: nothing read).
        A readable stdin with nothing to read (``EAGAIN``: another reader was first) is
        waited on again."""
        readable: asyncio.Future[None] = self.loop.create_future()
        self.loop.add_reader(self.fd, lambda: readable.done() or readable.set_result(None))
        try:
            await asyncio.wait([readable, other], return_when=asyncio.FIRST_COMPLETED)
        finally:
            self.loop.remove_reader(self.fd)
        if not readable.done():
            readable.cancel()
            return False
        try:
            chunk = os.read(self.fd, LINE_LIMIT)
        except BlockingIOError:
            return True
        except OSError:
            logger.debug("stdin read failed in the early phase", exc_info=True)
            self.failed = True
            return False
        if not chunk:
            self.at_end = True
        self.buffer += chunk
        return True

    async def watch(self, call: asyncio.Future[Any], request_id: int | str, signal: AbortSignal) -> bool:
        """Read stdin while ``call`` runs, up to :data:`LINE_LIMIT` bytes ahead, and look at
        every line after the call's (those read before it started first) as the SDK's
        dispatcher would at that point: a ``notifications/cancelled`` for ``request_id``
        aborts ``signal`` while the call runs (once it is done, the cancellation came too
        late: it is answered); a request with the same id before it takes the id over (the
        dispatcher keeps the latest request of an id: a later cancellation is that one's).
        Returns once ``call`` is done: whether it was cancelled (the SDK never answers it)."""
        key = _coerced(request_id)
        scanned = 0
        while True:
            while (end := self.buffer.find(b"\n", scanned)) >= 0:
                line = bytes(self.buffer[scanned : end + 1])
                scanned = end + 1
                if _cancels(line, key):
                    if call.done():
                        return False
                    signal.abort(_CANCELLED)
                    await asyncio.wait([call])
                    return True
                if _request_key(line) == key:
                    await asyncio.wait([call])
                    return False
            if call.done():
                return False
            if self.at_end or self.failed or len(self.buffer) > LINE_LIMIT:
                await asyncio.wait([call])
                return False
            await self.read(call)


def _when_done(loop: asyncio.AbstractEventLoop, thread: threading.Thread) -> asyncio.Future[None]:
    """A future set once ``thread`` has ended, watched by a daemon thread of its own (not the
    loop's executor, which the loop's shutdown would wait for)."""
    done: asyncio.Future[None] = loop.create_future()

    def settle() -> None:
        if not done.done():
            done.set_result(None)

    def watch() -> None:
        thread.join()
        try:
            loop.call_soon_threadsafe(settle)
        except RuntimeError:  # the loop is closed: nobody waits any more
            pass

    threading.Thread(target=watch, name="dsh-fs mcp sdk import watcher", daemon=True).start()
    return done


def _negotiated(answer: str | None) -> str | None:
    try:
        return json.loads(answer or "")["result"]["protocolVersion"]  # type: ignore[no-any-return]
    except (ValueError, KeyError, TypeError):
        return None


def _json_line(line: bytes, *, plain_numbers: bool = False) -> Any:
    """``line`` as the SDK path's reader takes it, or ``None`` when it may not: strict UTF-8
    then ``json.loads`` of the text (a BOM, which ``json.loads`` of bytes skips, and encoded
    surrogates, which it lets through, are parse errors there: ``stdio.parse_line``).
    ``plain_numbers``: also ``None`` for a line whose numbers the SDK path may read otherwise
    (``core.jsonvalue.may_rewrite``)."""
    try:
        text = line.decode("utf-8")
        if plain_numbers and may_rewrite(text):
            return None
        return json.loads(text)
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        return None


def _is_initialized(line: bytes) -> bool:
    """Whether ``line`` is exactly the ``notifications/initialized`` notification."""
    value = _json_line(line)
    return (
        type(value) is dict
        and value.get("jsonrpc") == "2.0"
        and value.get("method") == _INITIALIZED
        and value.keys() <= {"jsonrpc", "method", "params"}
        and value.get("params", {}) == {}
    )


def _list_request(line: bytes) -> int | str | None:
    """The id of ``line`` when it is exactly a ``tools/list`` request with no ``params`` (or
    ``{}``) and a string or integer id the SDK path reads as this one; else ``None``."""
    value = _json_line(line, plain_numbers=True)
    if type(value) is not dict or value.get("jsonrpc") != "2.0" or value.get("method") != "tools/list":
        return None
    if not value.keys() <= {"jsonrpc", "id", "method", "params"} or value.get("params", {}) != {}:
        return None
    request_id = value.get("id")
    return request_id if type(request_id) is int or type(request_id) is str else None


def _callable(ctx: Context, params: dict[str, Any]) -> bool:
    name = params["name"]
    return ctx.tools.get(name) is not None


async def _serve(ctx: Context, owner: Session, request_id: int | str, params: dict[str, Any],
                 outcome: EarlyCalls, stdin: _Stdin, stdout_fd: int) -> bool:
    """Run one call as ``server.call_tool`` does (``run_abortable``'s contract: a
    cancellation aborts its signal and waits for it; a cancelled call is not answered) and
    write its answer; ``False`` when stdout is broken."""
    name: str = params["name"]
    raw = params["arguments"] if "arguments" in params else {}
    signal = AbortSignal()
    call = stdin.loop.create_task(ctx.tools.execute(name, raw, session=owner, signal=signal))
    outcome.served += 1
    try:
        cancelled = await stdin.watch(call, request_id, signal)
    except asyncio.CancelledError:  # the process is stopping: the call is never cut off
        signal.abort(_CANCELLED)
        await asyncio.shield(asyncio.wait([call]))
        raise
    if cancelled:
        return True
    try:
        result: ToolResult = call.result()
    except Exception as exc:  # the SDK's answer to a raising handler: written once it is loaded
        outcome.deferred.append((request_id, exc))
        return True
    line = call_answer(request_id, call_result(result))
    if line is None:
        outcome.deferred.append((request_id, result))
        return True
    return await _write(stdout_fd, line)


def _coerced(request_id: Any) -> Any:
    """A request id as the SDK's dispatcher correlates it (``coerce_request_id``: a string
    of an integer is that integer)."""
    if isinstance(request_id, str):
        try:
            return int(request_id)
        except ValueError:
            pass
    return request_id


def _cancels(line: bytes, key: Any) -> bool:
    """Whether ``line`` is a ``notifications/cancelled`` whose ``requestId`` (a string or an
    integer, not a ``bool``: ``as_request_id``) correlates with ``key``. A line whose numbers
    the SDK path may read otherwise (``fastwire``) is not taken for one (the call then runs
    to its end and is answered, as a cancellation that came too late)."""
    value = _json_line(line, plain_numbers=True)
    if type(value) is not dict or "id" in value or value.get("jsonrpc") != "2.0":
        return False
    params = value.get("params")
    if value.get("method") != "notifications/cancelled" or type(params) is not dict:
        return False
    cancelled = params.get("requestId")
    if type(cancelled) is not int and type(cancelled) is not str:
        return False
    return _coerced(cancelled) == key


def _request_key(line: bytes) -> Any:
    """The id of the request ``line`` as the SDK's dispatcher keys it (``coerce_request_id``),
    or ``None`` when it is no JSON-RPC request (``jsonrpc: "2.0"``, a ``method`` string,
    ``params`` an object if given) with a string or integer id (a line whose numbers the
    SDK path may read otherwise is taken for none, as in ``_cancels``)."""
    value = _json_line(line, plain_numbers=True)
    if type(value) is not dict or value.get("jsonrpc") != "2.0" or type(value.get("method")) is not str:
        return None
    if type(value.get("params", {})) is not dict:
        return None
    request_id = value.get("id")
    return _coerced(request_id) if type(request_id) is int or type(request_id) is str else None


async def _write(fd: int, data: bytes) -> bool:
    """Write all of ``data`` to ``fd`` off the loop (a non-blocking stdout that is full is
    waited on: ``fdio.write_all``); ``False`` when stdout is broken."""
    try:
        await asyncio.get_running_loop().run_in_executor(None, write_all, fd, data)
    except OSError:
        logger.debug("stdout is broken", exc_info=True)
        return False
    return True


async def _answer_deferred(deferred: list[tuple[int | str, Any]], version: str | None, stdout_fd: int) -> None:
    """The answers that need the SDK's encoding (it is loaded now), as the lean path writes
    them (``lean.result_answer``; a raising call: ``lean.raised_answer``)."""
    from .lean import raised_answer, result_answer
    from .stdio import encode_message

    for request_id, outcome in deferred:
        answer: Any
        if isinstance(outcome, Exception):
            answer = raised_answer(request_id, outcome)
        else:
            try:  # as the lean path's call body
                answer = result_answer(request_id, version or "", outcome)
            except Exception as exc:
                answer = raised_answer(request_id, exc)
        line = answer if isinstance(answer, bytes) else encode_message(answer).encode("utf-8") + b"\n"
        if not await _write(stdout_fd, line):
            return
