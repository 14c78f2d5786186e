"""The near side of one helper connection: start the helper, send requests without waiting for
earlier answers (pipelined), match answers to requests, and carry abort signals over
(DEVIATIONS C1–C3).

``Connection.open`` starts the far command (``python3 -I -c <boot>``), sends the ``boot`` and
``open`` frames, the bundle when the far side asks for it, and waits for ``ready``. Then
``call`` sends one request and awaits its answer; ``stream`` yields a streamed answer's chunks,
granting the far side a few chunks of credit at a time (memory on both sides stays bounded by
the credit). One reader task matches answers to requests by id; one watcher task carries
abort signals over while requests that have one are unanswered:

* a read whose signal is raised ends at once with ``Aborted`` (the far side is told to stop;
  nothing it does can change a file);
* a mutation's abort is sent to the far side, which honours it at its checkpoints or finishes;
  the answer is awaited for at most ``abort_grace`` seconds, then the call ends with
  ``no_answer_after_abort`` (the file is old or new: the far side's write is atomic).

When the channel ends, every unanswered request fails with ``errors.lost`` (the reason: the
command's exit status and the end of its stderr); the connection is then dead and the
provider opens a new one for its next request.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any

from ..core.signal import AbortSignal
from . import codec, errors
from .bundle import Bundle, boot_program
from .channels import Channel, Transport
from .wire import FrameReader, ProtocolError, encode_frame

__all__ = (
    "ABORT_GRACE_S",
    "Aborted",
    "CODE_HINTS",
    "Connection",
    "HINTS_KEPT",
    "OPEN_OPTIONS",
    "START_TIMEOUT_S",
    "WATCH_POLL_S",
    "hints_file",
    "remember",
    "remembered",
    "settings_for",
)

OPEN_OPTIONS = frozenset({
    "write_max_size", "stream_edit_min_size", "index_min_size", "index_files", "max_threads", "lock_dir",
    "inline_probes", "inline_read_max", "inline_write_max", "encodings",
})
"""``LocalFileSystem`` keywords the near side may pass to the far side (``ChannelFileSystem(**options)``)"""

START_TIMEOUT_S = 60.0
"""how long the helper may take to start (the channel's own connection included), seconds"""

ABORT_GRACE_S = 5.0
"""how long an aborted mutation's answer is awaited before the call ends unanswered, seconds"""

WATCH_POLL_S = 0.01
"""how often the abort signals of unanswered requests are looked at, seconds"""

_END = object()

CODE_HINTS: dict[tuple[str, str, str], dict[str, str]] = {}
"""(channel identity, interpreter, bundle hash) → the SHA-256 of the compiled code an earlier
start kept there (``boot.compiled``): the far side uses its cached code only when it matches.
Kept in this process, and in ``hints_file()`` for the next processes (the tool commands start
one helper each)."""

HINTS_KEPT = 64
"""code hashes kept in the hints file at most (the newest)"""


def hints_file() -> str:
    """This user's file of remembered code hashes: ``$XDG_CACHE_HOME/dsh-fs/channel-code.json``
    (else ``~/.cache/…``)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "dsh-fs", "channel-code.json")


def _hint_name(key: tuple[str, str, str]) -> str:
    return "\0".join(key)


def remembered(key: tuple[str, str, str]) -> dict[str, str] | None:
    """The code hash an earlier start reported for ``key``: this process's, else the file's."""
    found = CODE_HINTS.get(key)
    if found is not None:
        return found
    try:
        with open(hints_file(), encoding="utf-8") as handle:
            stored = json.load(handle)
    except (OSError, ValueError):
        return None
    hint = stored.get(_hint_name(key)) if isinstance(stored, dict) else None
    if isinstance(hint, dict) and all(isinstance(hint.get(k), str) for k in ("magic", "hash")):
        CODE_HINTS[key] = hint
        return hint
    return None


def remember(key: tuple[str, str, str], hint: dict[str, str]) -> None:
    """Keep ``hint`` for ``key`` here and in the hints file (best effort: a file that cannot be
    written costs the next process a compile on the far side)."""
    CODE_HINTS[key] = hint
    path = hints_file()
    try:
        with open(path, encoding="utf-8") as handle:
            stored = json.load(handle)
        if not isinstance(stored, dict):
            stored = {}
    except (OSError, ValueError):
        stored = {}
    stored.pop(_hint_name(key), None)
    stored[_hint_name(key)] = hint
    kept = dict(list(stored.items())[-HINTS_KEPT:])
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        temp = f"{path}.{os.getpid()}.tmp"
        with open(temp, "w", encoding="utf-8") as handle:
            json.dump(kept, handle)
        os.replace(temp, path)
    except OSError:
        pass


class Aborted(Exception):
    """A read's abort signal was raised while its answer was awaited."""


class _Watched:
    __slots__ = ("signal", "mutation", "sent_at", "fail")

    def __init__(self, signal: AbortSignal, mutation: bool, fail: Any) -> None:
        self.signal = signal
        self.mutation = mutation
        self.sent_at: float | None = None
        self.fail = fail


class Connection:
    """One started helper (see the module docstring). Build with ``Connection.open``.

    :param transport: the running far command
    :param name: the channel's name for messages
    """

    def __init__(self, transport: Transport, name: str, *, abort_grace: float = ABORT_GRACE_S) -> None:
        self.transport = transport
        self.name = name
        self.abort_grace = abort_grace
        self.ready: dict[str, Any] = {}
        """the helper's ``ready`` answer: ``root``, ``roots``, ``cwd``, ``python``, ``pid``"""
        self.failure: errors.ChannelError | None = None
        """why the connection is dead (``None`` while it lives)"""
        self.round_trips = 0
        """requests sent (each costs one round trip; pipelined ones overlap)"""
        self.bytes_sent = 0
        """bytes this side wrote to the channel since the start (frames; the start-up's too)"""
        self.bytes_received = 0
        """bytes this side read from the channel since the start"""
        self.notes: dict[str, Any] = {}
        """what users of the connection learnt about its far side (``search``: which ripgrep)"""
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any] | asyncio.Queue[Any]] = {}
        self._watched: dict[int, _Watched] = {}
        self._frames = FrameReader()
        self._start_frames: list[tuple[dict[str, Any], bytes]] = []  # read, not yet taken (start)
        self._reader: asyncio.Task[None] | None = None
        self._watcher: asyncio.Task[None] | None = None
        self._unanswered = 0
        self.loop = asyncio.get_running_loop()

    @property
    def alive(self) -> bool:
        return self.failure is None

    # -- start ----------------------------------------------------------------------------------
    @classmethod
    async def open(cls, channel: Channel, settings: dict[str, Any], bundle: Bundle, *, python: str = "python3",
                   start_timeout: float = START_TIMEOUT_S, abort_grace: float = ABORT_GRACE_S) -> Connection:
        """Start the helper over ``channel`` with the ``open`` frame's ``settings``.

        :raises errors.ChannelError: it could not start (the channel's program, no ``python``,
            one too old, a refused setting, no answer within ``start_timeout``)
        """
        name = channel.describe()
        try:
            transport = await channel.start([python, "-I", "-S", "-c", boot_program()])
        except OSError as exc:
            if isinstance(exc, FileNotFoundError) and exc.filename == python:
                raise errors.no_python(name, python) from exc  # the channel runs it here
            raise errors.could_not_start(name, f"{exc.strerror or exc}") from exc
        connection = cls(transport, name, abort_grace=abort_grace)
        try:
            transport.busy(True)
            await asyncio.wait_for(connection._start(settings, bundle, python, channel.identity), start_timeout)
            transport.busy(False)
        except asyncio.TimeoutError:
            await transport.aclose()
            raise errors.could_not_start(name, f"no answer within {start_timeout:g} s") from None
        except BaseException:
            await transport.aclose()
            raise
        connection._reader = asyncio.ensure_future(connection._read())
        return connection

    async def _start(self, settings: dict[str, Any], bundle: Bundle, python: str, identity: str) -> None:
        hint_key = (identity, python, bundle.digest)
        boot = {"hash": bundle.digest, "code": remembered(hint_key)}
        await self._send_start(encode_frame({"boot": boot}) + encode_frame({"open": settings}))
        while True:
            message, _ = await self._next_start_frame(python)
            if ("need" in message or "ready" in message) and self._start_frames:
                # nothing follows these before the next request ("code" is followed by the
                # helper's own answer: the two may come in one read)
                raise errors.could_not_start(self.name, "it answered outside the protocol")
            if message.get("need"):
                await self._send_start(encode_frame({}, bundle.data))
            elif "code" in message:
                if isinstance(message["code"], dict):
                    remember(hint_key, message["code"])
            elif "ready" in message:
                self.ready = message["ready"] if isinstance(message["ready"], dict) else {}
                return
            elif "fail" in message:
                raise errors.could_not_start(self.name, str(message["fail"]))
            elif "old" in message:
                raise errors.python_too_old(self.name, python, str(message["old"]))
            elif "bad" in message:
                raise errors.could_not_start(self.name, str(message["bad"]))
            else:
                raise errors.could_not_start(self.name, "it answered outside the protocol")

    async def _send_start(self, data: bytes) -> None:
        self.bytes_sent += len(data)
        try:
            await self.transport.send(data)
        except (ConnectionError, OSError):
            pass  # the command ended: the next read says why

    async def _next_start_frame(self, python: str) -> tuple[dict[str, Any], bytes]:
        while not self._start_frames:
            data = await self.transport.receive()
            self.bytes_received += len(data)
            if not data:
                await self.transport.aclose()
                why = await self.transport.reason()
                if self.transport.exit_status in (126, 127) and python in why or "not found" in why and python in why:
                    raise errors.no_python(self.name, python)
                raise errors.could_not_start(self.name, why)
            try:
                self._start_frames.extend(self._frames.feed(data))
            except ProtocolError as exc:
                raise errors.could_not_start(self.name, f"it answered outside the protocol ({exc})") from None
        return self._start_frames.pop(0)

    # -- answers --------------------------------------------------------------------------------
    async def _read(self) -> None:
        try:
            while True:
                data = await self.transport.receive()
                if not data:
                    break
                self.bytes_received += len(data)
                for message, body in self._frames.feed(data):
                    self._deliver(message, body)
            self._fail(errors.lost(self.name, await self.transport.reason()))
        except ProtocolError as exc:
            self._fail(errors.garbled(self.name, str(exc)))
            await self.transport.aclose()
        except asyncio.CancelledError:
            self._fail(errors.lost(self.name, "the connection was closed"))
            raise
        except Exception as exc:  # a bug on this side must not leave callers waiting forever
            self._fail(errors.garbled(self.name, f"{type(exc).__name__}: {exc}"))
            await self.transport.aclose()

    def _deliver(self, message: dict[str, Any], body: bytes) -> None:
        request = message.get("id")
        waiter = self._pending.get(request) if isinstance(request, int) else None
        if waiter is None:
            return  # an answer to a request given up on
        if isinstance(waiter, asyncio.Queue):
            if "c" in message:
                waiter.put_nowait((message["c"], body))
            elif "e" in message:
                waiter.put_nowait(_error(message["e"]))
            else:
                waiter.put_nowait((_END, message.get("r")))
            return
        if waiter.done():
            return
        if "e" in message:
            waiter.set_exception(_error(message["e"]))
        elif "r" in message:
            waiter.set_result((message["r"], body))
        else:
            waiter.set_exception(ProtocolError("an answer has neither a result nor an error"))

    def _fail(self, failure: errors.ChannelError) -> None:
        if self.failure is None:
            self.failure = failure
        for waiter in self._pending.values():
            if isinstance(waiter, asyncio.Queue):
                waiter.put_nowait(failure)
            elif not waiter.done():
                waiter.set_exception(failure)

    # -- requests -------------------------------------------------------------------------------
    def _post(self, message: dict[str, Any], body: bytes = b"") -> None:
        """Queue a control frame without waiting (from a cancelled task too)."""
        if self.failure is None:
            asyncio.ensure_future(self._quiet_send(encode_frame(message, body)))

    async def _quiet_send(self, frame: bytes) -> None:
        self.bytes_sent += len(frame)
        try:
            await self.transport.send(frame)
        except (ConnectionError, OSError):
            pass  # the reader sees the end and says why

    async def _send(self, frame: bytes) -> None:
        if self.failure is not None:
            raise self.failure
        self.round_trips += 1
        self.bytes_sent += len(frame)
        try:
            await self.transport.send(frame)
        except (ConnectionError, OSError):
            # the command ended: the reader will say why; wait for it
            await asyncio.wait([self._reader], timeout=5.0) if self._reader is not None else None
            raise self.failure or errors.lost(self.name, "its stdin is closed") from None

    def _waiting(self, change: int) -> None:
        """One more (``+1``) or one fewer (``-1``) request awaits its answer."""
        before = self._unanswered
        self._unanswered += change
        if (before == 0) != (self._unanswered == 0):
            self.transport.busy(self._unanswered > 0)

    def _watch(self, request: int, signal: AbortSignal | None, mutation: bool, fail: Any) -> None:
        if signal is None:
            return
        self._watched[request] = _Watched(signal, mutation, fail)
        if self._watcher is None or self._watcher.done():
            self._watcher = asyncio.ensure_future(self._watch_signals())

    async def _watch_signals(self) -> None:
        while self._watched:
            await asyncio.sleep(WATCH_POLL_S)
            now = time.monotonic()
            for request, watched in list(self._watched.items()):
                if not watched.signal.aborted:
                    continue
                if watched.sent_at is None:
                    watched.sent_at = now
                    self._post({"abort": request})
                    if not watched.mutation:
                        self._post({"cancel": request})
                        self._watched.pop(request, None)
                        watched.fail(Aborted())
                elif now - watched.sent_at >= self.abort_grace:
                    self._watched.pop(request, None)
                    watched.fail(errors.no_answer_after_abort(self.name, self.abort_grace))

    async def call(self, op: str, args: dict[str, Any], *, body: bytes = b"", signal: AbortSignal | None = None,
                   mutation: bool = False) -> tuple[Any, bytes]:
        """Send request ``op`` and await its answer: ``(result, body)``.

        :param mutation: the request may change a file: once sent it is never cancelled, only
            aborted (see the module docstring)
        :raises FsError: what the far side's provider raised (any exception it raised, with
            its type when ``codec.decode_error`` keeps it)
        :raises Aborted: a read's ``signal`` was raised
        :raises errors.ChannelError: the channel failed
        """
        request = next(self._ids)
        waiter: asyncio.Future[Any] = self.loop.create_future()
        self._pending[request] = waiter
        message: dict[str, Any] = {"id": request, "op": op, "a": args}
        if signal is not None and signal.aborted:
            message["aborted"] = True

        def fail(exc: BaseException) -> None:
            if not waiter.done():
                waiter.set_exception(exc)

        self._waiting(1)
        try:
            await self._send(encode_frame(message, body))
            self._watch(request, signal, mutation, fail)
            try:
                return await asyncio.shield(waiter)  # a cancelled caller leaves the answer to come
            except asyncio.CancelledError:
                if not mutation:
                    self._post({"cancel": request})
                    raise
                # the caller gave up: the far side is told to abort, and its answer awaited a
                # little so that the mutation is known done or not started before the caller goes
                self._post({"abort": request})
                await asyncio.wait([waiter], timeout=self.abort_grace)
                raise
        finally:
            self._waiting(-1)
            self._pending.pop(request, None)
            self._watched.pop(request, None)
            if waiter.done() and not waiter.cancelled():
                waiter.exception()  # retrieved: never "exception was never retrieved"

    async def stream(self, op: str, args: dict[str, Any], *, signal: AbortSignal | None = None,
                     credit: int = 4, end: bool = False) -> AsyncIterator[tuple[Any, bytes]]:
        """Send the streamed request ``op``; yield its chunks ``(value, body)`` as they come.

        :param credit: chunks the far side may send ahead (granted again as they are taken)
        :param end: also yield the stream's final answer, as ``({"end": result}, b"")``
        :raises: as ``call``
        """
        request = next(self._ids)
        queue: asyncio.Queue[Any] = asyncio.Queue()
        self._pending[request] = queue
        message: dict[str, Any] = {"id": request, "op": op, "a": {**args, "n": credit}}
        if signal is not None and signal.aborted:
            message["aborted"] = True
        ended = False
        self._waiting(1)
        try:
            await self._send(encode_frame(message))
            self._watch(request, signal, False, queue.put_nowait)
            taken = 0
            while True:
                item = await queue.get()
                if isinstance(item, tuple) and item[0] is _END:
                    ended = True
                    if end:
                        yield {"end": item[1]}, b""
                    return
                if isinstance(item, BaseException):
                    ended = True
                    raise item
                yield item
                taken += 1
                if taken * 2 >= credit:
                    self._post({"more": request, "n": taken})
                    taken = 0
        finally:
            self._waiting(-1)
            self._pending.pop(request, None)
            self._watched.pop(request, None)
            if not ended:
                self._post({"cancel": request})

    async def aclose(self) -> None:
        """End the helper (its stdin closes; a mutation under way finishes) and the tasks."""
        await self.transport.aclose()
        for task in (self._reader, self._watcher):
            if task is not None and not task.done():
                task.cancel()
                await asyncio.wait([task])
        self._fail(errors.lost(self.name, "the provider was closed"))


def _error(value: Any) -> Exception:
    try:
        return codec.decode_error(value)
    except ProtocolError as exc:
        return exc


def settings_for(root: str | None, roots: Sequence[str] | None, cwd: str | None, profile: str,
                 options: dict[str, Any]) -> dict[str, Any]:
    """The ``open`` frame's settings (``far_helper.serve.open_provider_for`` reads them)."""
    return {"root": root, "roots": list(roots) if roots is not None else None, "cwd": cwd, "profile": profile,
            "options": options}
