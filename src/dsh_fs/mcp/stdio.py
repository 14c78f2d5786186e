"""Our stdio transport for the MCP server: one JSON-RPC message per line, every request answered.

It replaces the SDK's ``mcp.server.stdio.stdio_server``. That transport parses each line with
pydantic's JSON parser and silently *drops* a line the parser rejects. The parser rejects JSON
that Python's parser accepts: lone surrogate escapes (``"\\ud800"``) and nesting deeper than
about 190 levels. The client then waits forever for the answer. ``stdio_transport`` yields the
same pair of streams to ``Server.run``, with these differences:

* **Reading.** A line goes through the SDK's parser first, so every line the SDK accepts is
  handled as before (but see the invalid ``id`` below). A line it rejects is parsed again with
  ``json.loads`` and modelled with ``validate_python``. So lone surrogates reach the tools
  (in the default profile, the tools reject them with their own error texts), and validation
  ignores a deep value under a key no schema declares. Blank lines are skipped. Lines end at ``\\n`` only.
  Number literals are first read as JavaScript's ``JSON.parse`` reads them (``-0`` is negative
  zero, integers beyond 2**53 are doubles: ``core.jsonvalue.js_numbers``), so the registry
  gives the reference's answer for them.
* **Lines that are not a message.** The transport answers these itself, through the same
  writer as the server's replies (one line each, never interleaved). The code is ``-32700``
  for a line that is not JSON, or that is nested too deep for Python's parser. The code is
  ``-32600`` for JSON that is not a JSON-RPC message, and for a request whose ``id`` is not a
  string, an integer or ``null`` (the SDK would take it for a notification and never answer
  it). The reply carries the request's ``id`` when one can be recovered (``recover_id`` finds
  it even past a value nested too deep to parse), and ``null`` otherwise. The transport never
  answers a notification or a response, as JSON-RPC forbids that.
* **Writing.** Every outgoing message is one line of valid UTF-8 JSON. A lone surrogate in a
  text becomes U+FFFD, as the registry does for its error texts. An ``id`` keeps its lone
  surrogates, ASCII-escaped, so the client can still match the reply. A reply that cannot be
  serialized at all becomes a ``-32603`` error for its ``id``.
* **The standard descriptors.** As with the SDK, while serving, fd 0 reads the null device
  and fd 1 goes to stderr. The wire is served from private duplicates, so stray output of a
  handler or a child process never corrupts it. Both descriptors are restored on exit.
* **Threads.** A pipe or a socket is read and written on the event loop thread with reads
  and writes that never block (``nowait.py``: ``RWF_NOWAIT``, Linux), so a round trip makes
  no thread hop (on asyncio stdin stays registered with the loop: ``nowait.Inbox``); a line
  longer than ``PARSE_INLINE_MAX`` is parsed in a thread of its own. What
  a full pipe does not take at once is written through a thread limiter of its own, and so
  is everything where ``RWF_NOWAIT`` is not available (a regular file, a terminal, another
  OS); such a stdin is read by a daemon thread of its own. Tool calls that hold every
  default worker thread cannot stall the wire, so a ``notifications/cancelled`` still gets
  through. A pending read of stdin never keeps the process alive.

* **The end of stdin.** The SDK cancels every request still in flight when its input ends,
  so a client that sends a request and closes stdin (``echo … | dsh-fs mcp``) would get no
  answer, or ``Connection closed``, for a call that may have written a file. The transport
  holds the end back until every request it handed over is settled: answered, or reported
  by the SDK as never to be answered (the client cancelled it), or stdout is broken.

If stdout breaks (the client has gone), replies are discarded until stdin ends.

* **A fast start** (``early``, DEVIATIONS M2). When ``dsh-fs mcp`` has already read the
  first lines itself and answered an ``initialize`` before the SDK was imported
  (``early.answer_first_line``), the transport serves those bytes first, as if it had read
  them: the SDK gets the ``initialize`` too, and the transport drops the SDK's reply to it
  (the first message the server writes), after checking it is the answer already given
  (a difference is logged as a warning: the early path has a bug).

* **The lean ``tools/call`` path** (``lean``, ``lean.py``). A request line ``LeanCalls``
  accepts (a ``tools/call`` of a registered tool on a connection the SDK initialized, with no
  request handed to the SDK still unanswered, nothing the SDK must serve: progress, a roots
  question, approval) is admitted, run and answered here, without the SDK's dispatcher; the answer is
  the SDK's bytes. It is counted as unanswered until written, and a ``notifications/cancelled``
  for it cancels it (and still reaches the SDK). ``DSH_FS_MCP_LEAN=0`` turns it off. A line
  ``fastwire.plain_call`` reads (the plain shape, no number pydantic might read otherwise) is
  not parsed by pydantic, and its call runs on the reader's own task (``inline.py``): a small
  local ``read`` is answered before the next line is read, with no task of its own; a call that
  suspends keeps that task, and a new reader task takes stdin over (``_Reading``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import os
import re
import sys
import threading
from collections import Counter
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager, suppress
from typing import IO, TYPE_CHECKING, Any, BinaryIO, Final

import anyio
import mcp.types as types
import pydantic_core
from anyio.from_thread import BlockingPortal
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import ServerMessageMetadata, SessionMessage

from ..core.jsonvalue import js_numbers, well_formed
from .early import EarlyStart
from .fastwire import plain_call
from .inline import Suspended, carry_on, first_step
from .nowait import Inbox, LineReader, Wire, lines_of

if TYPE_CHECKING:
    from .lean import LeanCalls

__all__ = ("IncomingStream", "OutgoingStream", "encode_message", "parse_line", "recover_id", "stdio_transport")

logger = logging.getLogger(__name__)

_WHITESPACE: Final = " \t\n\r"
_NESTING: Final = re.compile(r'[\[\]{}"]')
_SKIPPED: Final[Any] = object()
_MISSING: Final[Any] = object()
_BAD_ID: Final = "Invalid request: id must be a string or an integer"
_UNREADABLE: Final = "Internal error: the line could not be read"
_OWN: Final = ServerMessageMetadata()
"""the metadata marking one of the transport's own replies on the writer's stream (by identity)"""

IncomingStream = MemoryObjectReceiveStream[SessionMessage | Exception]
"""what ``Server.run`` reads: the client's messages"""
OutgoingStream = MemoryObjectSendStream[SessionMessage]
"""what ``Server.run`` writes to: the server's messages"""


# -- reading -------------------------------------------------------------------------------------


def parse_line(line: str) -> SessionMessage | types.JSONRPCError | None:
    """One stdin line as a message to dispatch, an error reply to write, or ``None`` (no reply).

    * ``SessionMessage``: a JSON-RPC message. The SDK's parser is tried first; Python's
      ``json.loads`` handles what it refuses (lone surrogate escapes, deep nesting).
    * ``JSONRPCError``: ``-32700`` (not JSON, or nested too deep to parse) or ``-32600`` (JSON
      that is not a JSON-RPC message; or a request whose ``id`` is neither a string, an integer
      nor ``null``, which the SDK would take for a notification), with the request's ``id`` if
      one can be recovered. (A notification with ``"id": null`` is served as a notification.)
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
        found = _scan_id(line) if isinstance(message, types.JSONRPCNotification) else None
        if found is not None and found is not _MISSING:
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
    return _error_reply(
        types.INVALID_REQUEST, "Invalid request: not a JSON-RPC 2.0 message", request_id if _is_id(request_id) else None
    )


def recover_id(text: str) -> types.RequestId | None:
    """The ``id`` member of the JSON object ``text`` if it is a string or an integer, found
    without parsing nested values (so even past a value too deep to parse). Returns ``None``
    when there is no such member, or when it comes after a syntax error.

    :param text: one JSON-RPC line, possibly malformed
    """
    value = _scan_id(text)
    return value if _is_id(value) else None


def _scan_id(text: str) -> Any:
    """The value of the last top-level ``id`` member of the JSON object ``text`` (``_SKIPPED``
    for an array or an object) before the end or a syntax error; ``_MISSING`` if there is none."""
    found: Any = _MISSING
    decoder = json.JSONDecoder()
    try:
        at = _skip_space(text, 0)
        if text[at] != "{":
            return found
        at = _skip_space(text, at + 1)
        while text[at] == '"':
            key, at = json.decoder.scanstring(text, at + 1)
            at = _skip_space(text, at)
            if text[at] != ":":
                return found
            at = _skip_space(text, at + 1)
            if text[at] in "[{":
                value, at = _SKIPPED, _skip_nested(text, at)
            else:
                value, at = decoder.raw_decode(text, at)
            if key == "id":
                found = value  # the last one wins, as in json.loads
            at = _skip_space(text, at)
            if text[at] != ",":
                return found
            at = _skip_space(text, at + 1)
    except (ValueError, IndexError):
        pass
    return found


def _skip_space(text: str, at: int) -> int:
    while at < len(text) and text[at] in _WHITESPACE:
        at += 1
    return at


def _skip_nested(text: str, at: int) -> int:
    """The index after the array or object that starts at ``text[at]`` (iterative: any depth).

    :raises ValueError: it does not end (or a string in it does not)
    """
    depth = 0
    while True:
        match = _NESTING.search(text, at)
        if match is None:
            raise ValueError("unterminated array or object")
        char, at = match.group(), match.end()
        if char == '"':
            at = json.decoder.scanstring(text, at, False)[1]
        elif char in "[{":
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return at


def _is_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _error_reply(code: int, message: str, request_id: types.RequestId | None) -> types.JSONRPCError:
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message))


# -- writing ---------------------------------------------------------------------------------------


def encode_message(message: types.JSONRPCMessage) -> str:
    """One outgoing message as one line of JSON (no line end) that encodes as valid UTF-8.

    The SDK's serialization is used as is whenever it succeeds. Otherwise lone surrogates in texts
    become U+FFFD, and an ``id`` keeps its lone surrogates, ASCII-escaped. A reply that cannot be
    serialized at all becomes a ``-32603`` error for its ``id``.

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


# -- the transport -----------------------------------------------------------------------------------


@asynccontextmanager
async def stdio_transport(
    stdin: BinaryIO | None = None,
    stdout: BinaryIO | None = None,
    *,
    early: EarlyStart | None = None,
    lean: LeanCalls | None = None,
) -> AsyncIterator[tuple[IncomingStream, OutgoingStream]]:
    """Serve MCP over stdin and stdout: yields ``(read_stream, write_stream)`` for ``Server.run``.

    Without explicit streams, fd 0 and fd 1 are claimed: the wire is served from private
    duplicates, and the descriptors point at the null device and at stderr until exit.

    :param stdin: read JSON-RPC lines from this binary stream instead of fd 0
    :param stdout: write JSON-RPC lines to this binary stream instead of fd 1
    :param early: what the fast start read and answered before (DEVIATIONS M2): its bytes
        are served before ``stdin``'s, and the server's reply to the ``initialize`` it
        answered is not written again
    :param lean: the lean ``tools/call`` path (``lean.LeanCalls``; ``None``: every request goes
        to the SDK)
    """
    restores: list[Callable[[], None]] = []
    fresh = stdin is None
    try:
        if stdin is None:
            stdin, restore = _claim(0, sys.stdin, "rb")
            restores.append(restore)
        if stdout is None:
            stdout, restore = _claim(1, sys.stdout, "wb")
            restores.append(restore)

        read_send, read_receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        write_send, write_receive = anyio.create_memory_object_stream[SessionMessage](0)
        replies = write_send.clone()  # our own error replies, through the server's writer
        unanswered = _Unanswered()
        preread = early.preread if early is not None else b""
        lines = lines_of(stdin, preread, fresh=fresh)
        source: Any = stdin if not preread else _Prefixed(preread, stdin)
        dropped = _AnsweredEarly(early) if early is not None and early.answered_id is not None else None
        async with anyio.create_task_group() as tg:
            writer = _Writer(stdout, unanswered, dropped, lean)
            tg.start_soon(_pump_out, write_receive, writer)
            router = _Router(read_send, replies, unanswered, lean, writer)
            reading = anyio.CancelScope()
            inbox = _Reading(lines, router) if isinstance(lines, Inbox) else None
            if inbox is not None:
                inbox.start()
            elif lines is not None:
                tg.start_soon(_read_lines, reading, lines, router)
            # the portal's cancel scope must not enclose the writer: stopping the portal cancels it
            async with BlockingPortal() as portal:
                if lines is None:
                    threading.Thread(
                        target=_pump_in, args=(source, portal, router),
                        name="dsh-fs mcp stdin", daemon=True,
                    ).start()
                try:
                    yield read_receive, write_send
                finally:
                    # normally all closed already (stdin ended, then the server); if not, stop
                    # reading; the writer drains what it was given, then ends
                    reading.cancel()
                    if inbox is not None:
                        await inbox.stop()
                    if lean is not None:
                        lean.stop()
                        await lean.drain()
                    read_send.close()
                    replies.close()
                    write_send.close()
                    await portal.stop(cancel_remaining=True)
    finally:
        for restore in reversed(restores):
            restore()


class _Prefixed:
    """``readline`` over bytes already read (``preread``), then over ``stream``."""

    def __init__(self, preread: bytes, stream: IO[bytes]) -> None:
        self._buffer = preread
        self._stream = stream

    def readline(self) -> bytes:
        if self._buffer:
            end = self._buffer.find(b"\n")
            if end >= 0:
                line, self._buffer = self._buffer[: end + 1], self._buffer[end + 1 :]
                return line
            rest, self._buffer = self._buffer, b""
            return rest + self._stream.readline()
        return self._stream.readline()


class _AnsweredEarly:
    """The reply the fast start already wrote: the server's first message, if it answers that
    id, is dropped (and compared)."""

    def __init__(self, early: EarlyStart) -> None:
        self.early = early
        self.pending = True

    def drops(self, message: Any, line: bytes) -> bool:
        """Whether ``message`` (encoded as ``line``) is the server's reply to the request
        answered early; only the server's first message can be."""
        if not self.pending:
            return False
        self.pending = False
        if not isinstance(message, types.JSONRPCResponse | types.JSONRPCError) or message.id != self.early.answered_id:
            logger.warning("the SDK's first message is not its initialize reply: %s", line[:200])
            return False
        if line.decode("utf-8").rstrip("\n") != self.early.answer:
            logger.warning("the early initialize answer differs from the SDK's: %s", line[:500])
        return True


class _Unanswered:
    """The requests handed to the server and not settled yet: a response or an error written
    for their id, or the SDK's word that none will come (``on_request_unanswered``: the client
    cancelled it, whatever form of its id the cancellation used). Event loop thread only."""

    def __init__(self) -> None:
        self._ids: Counter[tuple[bool, Any]] = Counter()
        self._lean = 0  # lean calls not answered yet (``lean.py``)
        self._idle: anyio.Event | None = None  # made by ``wait`` only: set once nothing is left
        self._gave_up = False
        self._count = 0  # requests handed over and lean calls, not settled yet
        self._room = anyio.Event()
        self._room.set()

    @property
    def has_room(self) -> bool:
        """Fewer than ``IN_FLIGHT_MAX`` requests are unsettled (``room`` would return at once)."""
        return self._count < IN_FLIGHT_MAX

    async def room(self) -> None:
        """Return once fewer than ``IN_FLIGHT_MAX`` requests are unsettled."""
        while self._count >= IN_FLIGHT_MAX:
            await self._room.wait()

    def _more(self) -> None:
        self._count += 1
        if self._count >= IN_FLIGHT_MAX and self._room.is_set():
            self._room = anyio.Event()

    def _fewer(self) -> None:
        self._count -= 1
        if self._count < IN_FLIGHT_MAX:
            self._room.set()

    @property
    def busy(self) -> bool:
        """A request handed to the server is not settled yet (or stdout broke): a lean call
        must not be admitted ahead of it."""
        return bool(self._ids) or self._gave_up

    def begin_lean(self) -> None:
        """Count one lean call until ``end_lean``."""
        if self._gave_up:
            return
        self._lean += 1
        self._more()

    def end_lean(self) -> None:
        """A lean call is answered (or will never be)."""
        if self._gave_up:
            return
        self._lean -= 1
        self._fewer()
        if not self._lean and not self._ids:
            self._now_idle()

    def hand_over(self, item: SessionMessage) -> SessionMessage:
        """``item`` as the server must get it: a request is counted, and carries the hook by
        which the SDK says it settled without an answer."""
        message = item.message
        if self._gave_up or not isinstance(message, types.JSONRPCRequest):
            return item
        key = (isinstance(message.id, str), message.id)
        self._ids[key] += 1
        self._more()

        async def unanswered() -> None:
            self._settle(key)

        return SessionMessage(message, metadata=ServerMessageMetadata(on_request_unanswered=unanswered))

    def answered(self, message: Any) -> None:
        """Note a message the server wrote: a response or an error settles its request (the
        SDK answers with the request's own ``id``)."""
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError) and message.id is not None:
            self._settle((isinstance(message.id, str), message.id))

    def give_up(self) -> None:
        """Stop waiting for answers, for good: nobody can read them any more."""
        self._gave_up = True
        self._ids.clear()
        self._lean = 0
        self._now_idle()
        self._count = 0
        self._room.set()

    async def wait(self) -> None:
        """Return once nothing is left unanswered."""
        while self._ids or self._lean:
            if self._idle is None:
                self._idle = anyio.Event()
            await self._idle.wait()

    def _now_idle(self) -> None:
        idle, self._idle = self._idle, None
        if idle is not None:
            idle.set()

    def _settle(self, key: tuple[bool, Any]) -> None:
        held = self._ids.get(key, 0)
        if not held:
            return
        self._fewer()
        if held > 1:
            self._ids[key] -= 1
        else:
            del self._ids[key]
            if not self._ids and not self._lean:
                self._now_idle()


class _Router:
    """Where each message read goes: the lean path (``lean.py``) when it takes it, else the
    server. Event loop thread only."""

    def __init__(self, messages: MemoryObjectSendStream[SessionMessage | Exception],
                 replies: MemoryObjectSendStream[SessionMessage], unanswered: _Unanswered,
                 lean: LeanCalls | None, writer: _Writer) -> None:
        self.messages = messages
        self.replies = replies
        self.unanswered = unanswered
        self._lean = lean
        self._writer = writer

    async def route(self, item: SessionMessage) -> None:
        """Serve ``item`` lean (admitted before this returns), or hand it to the server. A
        request waits for room first (``IN_FLIGHT_MAX``): stdin is read no further meanwhile."""
        if isinstance(item.message, types.JSONRPCRequest):
            await self.unanswered.room()
        lean = self._lean
        if lean is not None:
            message = item.message
            if isinstance(message, types.JSONRPCRequest) and not self.unanswered.busy and lean.accepts(message):
                self.unanswered.begin_lean()
                lean.start(message, self._deliver, self.unanswered.end_lean)
                return
            lean.observe(message)
        await self.messages.send(self.unanswered.hand_over(item))

    def lean_now(self, raw: bytes) -> Coroutine[Any, Any, None] | None:
        """The body of the lean call ``raw`` is (admitted already: run it at once, on the
        reader's task, ``inline.first_step``), or ``None``: ``raw`` goes the way of every
        line (``_item_of``, ``route``). Only a line ``fastwire.plain_call`` reads, while there
        is room, nothing handed to the server is unanswered and ``LeanCalls`` accepts it:
        what ``route`` would serve lean, in the same order."""
        lean = self._lean
        unanswered = self.unanswered
        if lean is None or unanswered.busy or not unanswered.has_room:
            return None
        plain = plain_call(raw)
        if plain is None or not lean.accepts_params(plain[1]):
            return None
        unanswered.begin_lean()
        return lean.prepare(plain[0], plain[1], self._deliver, unanswered.end_lean)

    def finished_inline(self) -> None:
        """A body ``lean_now`` gave finished without suspending (``LeanCalls.inline`` counts it)."""
        if self._lean is not None:
            self._lean.inline += 1

    def adopt(self, task: asyncio.Task[Any]) -> None:
        """``task`` (a reader) now carries a lean call that suspended: ``drain`` waits for it."""
        if self._lean is not None:
            self._lean.adopt(task)

    async def reply(self, item: SessionMessage) -> None:
        """Write one of the transport's own error replies (through the writer task, marked
        ``_OWN``: it answers a line that was no message the server got, so it settles no
        request handed to the server, even one with the same ``id`` (a client reusing ids),
        and is never taken for the server's reply to an ``initialize`` answered early)."""
        await self.replies.send(SessionMessage(item.message, metadata=_OWN))

    async def _deliver(self, message: bytes | types.JSONRPCMessage) -> None:
        """A lean call's answer: written from the call's own task (no hop to the writer's);
        ``bytes``: its line, encoded already."""
        if isinstance(message, bytes):
            await self._writer.put_line(message)
        else:
            await self._writer.put(message, own=True)

    async def end_of_input(self) -> None:
        await _end_of_input(self.unanswered, self.messages, self.replies)


async def _end_of_input(unanswered: _Unanswered, *streams: MemoryObjectSendStream[Any]) -> None:
    """The end of stdin: once every request handed over is settled, close the server's input
    (and our error replies)."""
    await unanswered.wait()
    await _close(*streams)


def _item_of(raw: bytes) -> SessionMessage | types.JSONRPCError | None:
    """What one stdin line is (``parse_line``); a bug in it still answers the request."""
    text = raw.decode("utf-8", "replace")
    try:
        return parse_line(text)
    except Exception:  # a bug: still answer the request
        logger.warning("could not read a line", exc_info=True)
        return _error_reply(types.INTERNAL_ERROR, _UNREADABLE, recover_id(text))


IN_FLIGHT_MAX: Final = 64
"""requests read and not answered yet, at most: beyond, stdin is read no further until one is
settled, so a client that sends calls without reading the answers (its stdout pipe full) makes
the server hold at most this many results, and its own writes block (backpressure)"""

PARSE_INLINE_MAX: Final = 65536
"""bytes of a line parsed on the event loop thread; a longer line is parsed in a worker thread"""


async def _read_lines(scope: anyio.CancelScope, lines: LineReader, router: _Router) -> None:
    """``_pump_in`` on the event loop thread, for a pipe or socket (``nowait.LineReader``):
    the same items, handed over in line order, each taken before the next line is read;
    ``scope`` stops it when the transport closes."""
    with scope:
        await _serve_lines(lines, router, None)


async def _serve_lines(lines: LineReader, router: _Router, reading: _Reading | None) -> None:
    """Read and route lines until the end of input (then ``end_of_input``). With ``reading``
    (an ``Inbox`` on asyncio), a line ``router.lean_now`` takes is run right here
    (``inline.first_step``); if it suspends, this task carries it on alone and ``reading``
    starts another reader (``_Reading.hand_over``)."""
    parser = anyio.CapacityLimiter(1)  # a thread of its own: never behind tool calls holding the default ones
    try:
        while raw := await lines.readline():
            if reading is not None and len(raw) <= PARSE_INLINE_MAX:
                body = router.lean_now(raw)
                if body is not None:
                    try:
                        suspended = first_step(body)
                    except Exception:  # a bug (the body answers its own errors)
                        logger.exception("a lean call failed")
                        continue
                    if suspended is not None:
                        await reading.hand_over(suspended)
                        return
                    router.finished_inline()
                    continue
            if len(raw) <= PARSE_INLINE_MAX:
                item = _item_of(raw)
            else:
                item = await anyio.to_thread.run_sync(_item_of, raw, limiter=parser)
            if isinstance(item, SessionMessage):
                await router.route(item)
            elif item is not None:
                await router.reply(SessionMessage(item))
    except Exception:  # the server closed its stream, stdin failed
        logger.debug("stopped reading stdin", exc_info=True)
    await router.end_of_input()


class _Reading:
    """stdin read by one reader task at a time on asyncio (an ``Inbox``): a reader whose lean
    call suspended keeps the call and hands the reading to a new task. ``stop`` ends the
    reader (never a task carrying a call: the lean path settles those, ``LeanCalls.stop``)."""

    def __init__(self, lines: Inbox, router: _Router) -> None:
        self._lines = lines
        self._router = router
        self._loop = asyncio.get_running_loop()
        self._reader: asyncio.Task[None] | None = None
        self._stopped = False

    def start(self) -> None:
        """Start a reader task (in a context of its own, as ``create_task`` makes one)."""
        if not self._stopped:
            self._reader = self._loop.create_task(_serve_lines(self._lines, self._router, self))

    async def hand_over(self, suspended: Suspended) -> None:
        """Called by the reader whose lean call suspended: a new reader takes stdin over, and
        this task carries the call on to its end."""
        task = asyncio.current_task()
        assert task is not None
        self._router.adopt(task)
        self.start()
        try:
            await carry_on(suspended)
        except asyncio.CancelledError:
            raise
        except Exception:  # a bug (the body answers its own errors)
            logger.exception("a lean call failed")

    async def stop(self) -> None:
        """Stop reading: unregister stdin, cancel the reader, wait for it to end."""
        self._stopped = True
        self._lines.close()
        reader = self._reader
        if reader is not None and not reader.done():
            reader.cancel()
            with anyio.CancelScope(shield=True):
                await asyncio.wait([reader])


def _pump_in(stdin: IO[bytes], portal: BlockingPortal, router: _Router) -> None:
    """The stdin thread: parse each line; hand messages to the server and error replies to the
    writer (through ``portal``, waiting for each to be taken); at the end of input, close both
    once the server has answered every request (``_Unanswered``)."""
    try:
        while raw := stdin.readline():
            item = _item_of(raw)
            if isinstance(item, SessionMessage):
                portal.call(router.route, item)
            elif item is not None:
                portal.call(router.reply, SessionMessage(item))
    except BaseException:  # the portal stopped, the server closed its stream, stdin failed
        logger.debug("stopped reading stdin", exc_info=True)
    finally:
        with suppress(BaseException):
            portal.call(router.end_of_input)


async def _close(*streams: MemoryObjectSendStream[Any]) -> None:
    for stream in streams:
        stream.close()


class _Writer:
    """Everything written to stdout goes through ``put``: the server's messages and the
    transport's error replies (from the writer task, ``_pump_out``) and the lean path's
    answers (from each call's task). Lines
    never interleave (``nowait.Wire``); once stdout broke, nothing more is written."""

    def __init__(self, stdout: IO[bytes], unanswered: _Unanswered, dropped: _AnsweredEarly | None,
                 lean: LeanCalls | None) -> None:
        self._wire = Wire(stdout)
        self._unanswered = unanswered
        self._dropped = dropped
        self._lean = lean
        self._broken = False

    async def put_line(self, data: bytes) -> None:
        """Write a lean answer encoded already (``fastwire.response_line``): ``put(own=True)``."""
        await self._send(data)

    async def _send(self, data: bytes) -> bool:
        """Write one line; ``False`` once stdout is broken (the client has gone: replies are
        discarded until stdin ends)."""
        if self._broken:
            return False
        try:
            await self._wire.write(data)
        except OSError:
            logger.debug("stdout is broken", exc_info=True)
            self._broken = True
            self._unanswered.give_up()
            return False
        return True

    async def put(self, message: types.JSONRPCMessage, *, own: bool = False) -> None:
        """Write ``message`` as one line. ``own``: the transport's own (a lean answer, an error
        reply to a line that was no message), which settles nothing the server was handed; the
        server's messages are shown to ``lean`` (``LeanCalls.written``),
        and its reply to a request answered early is dropped (``dropped``)."""
        try:
            data = encode_message(message).encode("utf-8") + b"\n"
        except ValueError:
            logger.debug("dropping an outgoing message that cannot be serialized", exc_info=True)
            return
        if self._broken:
            return
        if not own:
            if self._lean is not None:
                self._lean.written(message)
            if self._dropped is not None and self._dropped.drops(message, data):
                self._unanswered.answered(message)
                return
        if await self._send(data) and not own:
            self._unanswered.answered(message)


async def _pump_out(receive: MemoryObjectReceiveStream[SessionMessage], writer: _Writer) -> None:
    """The writer task: each message as one line, in order, until every sender has closed."""
    async with receive:
        async for session_message in receive:
            await writer.put(session_message.message, own=session_message.metadata is _OWN)


def _claim(fd: int, stream: Any, mode: str) -> tuple[BinaryIO, Callable[[], None]]:
    """The wire of standard descriptor ``fd``, served from a private duplicate, with ``fd``
    pointed at the null device (stdin) or at stderr (stdout). Returns the binary stream and a
    function that restores ``fd``. Best effort: when anything fails, the wire is served in place.
    """
    buffer = getattr(stream, "buffer", None)
    try:
        backed = buffer is not None and buffer.fileno() == fd
    except (AttributeError, OSError, ValueError):
        backed = False
    if not backed:
        in_place = buffer if buffer is not None else os.fdopen(fd, mode, closefd=False)
        return in_place, lambda: None
    try:
        import fcntl  # POSIX only

        private = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    except (ImportError, OSError):
        return buffer, lambda: None
    try:
        diversion = _diversion(fd)
        try:
            os.dup2(diversion, fd)
        finally:
            os.close(diversion)
    except OSError:
        with suppress(OSError):
            os.dup2(private, fd)  # a failed dup2 may have closed fd
        os.close(private)
        return buffer, lambda: None

    def restore() -> None:
        with suppress(OSError):
            os.dup2(private, fd)

    # never closed: the stdin thread may still be blocked on it after exit
    return os.fdopen(private, mode, closefd=False), restore


def _diversion(fd: int) -> int:
    if fd == 0:
        return os.open(os.devnull, os.O_RDONLY)
    try:
        return os.dup(2)
    except OSError:
        return os.open(os.devnull, os.O_WRONLY)
