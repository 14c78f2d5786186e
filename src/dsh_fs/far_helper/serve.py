"""The helper: dsh-fs's local provider behind the channel protocol, on the far side
(DEVIATIONS C1).

It runs in the far side's ``python3``, loaded by the bootstrap program (``fs_channel.boot``) from the
bundle the near side sent (``fs_channel.bundle``), and serves one near-side ``ChannelFileSystem`` over
its stdin and stdout until stdin ends. Every request is a frame ``{"id": n, "op": name, …}``
answered by ``{"id": n, "r": result}`` or ``{"id": n, "e": error}`` (``codec``); requests run
side by side (each its own task), so a slow one never holds up the others and the near side
can send the next before the answer to the last (pipelining). Control frames: ``{"abort": n}``
raises request ``n``'s abort signal; ``{"cancel": n}`` cancels it (a mutation, once its
critical section started, still finishes: the local provider never abandons one); ``{"more":
n, "n": k}`` lets stream ``n`` send ``k`` more chunks (``{"id": n, "c": chunk}`` each, then
``{"id": n, "r": null}``).

The provider is ``LocalFileSystem`` with the root, cwd, profile and options of the ``open``
frame, so containment (symlinks resolved here), atomic durable writes, the cross-process
locks of this machine, versions and read windows are its own. Stdin and stdout are moved to
private descriptors first: nothing else the process runs (ripgrep) or prints can reach the
protocol stream.
"""

from __future__ import annotations

import asyncio
import os
import signal as signals
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from ..core.signal import AbortSignal
from ..fs.errors import FsError
from ..fs.filesystem import FileSystem
from ..fs.types import DeleteIntent, EditIntent, RenameIntent, Version
from ..fs_channel import codec
from ..fs_channel.client import OPEN_OPTIONS
from ..fs_channel.wire import FrameReader, ProtocolError, encode_frame
from .search import SearchOps

__all__ = ("Helper", "main", "open_provider_for", "serve", "start")

_READ_SIZE = 1 << 20


def open_provider_for(message: dict[str, Any]) -> FileSystem:
    """The far side's ``LocalFileSystem`` for an ``open`` frame's settings.

    :param message: ``{"root": str | None, "roots": [str] | None, "cwd": str | None,
        "profile": str, "options": {…}}`` (options: ``OPEN_OPTIONS`` only)
    :raises ValueError: what ``LocalFileSystem`` refuses (a root that is not a directory, …),
        an option it does not take
    """
    from ..fs_local import LocalFileSystem

    options = message.get("options") or {}
    if not isinstance(options, dict) or not set(options) <= OPEN_OPTIONS:
        raise ValueError(f"ChannelFileSystem: unknown options {sorted(set(options) - OPEN_OPTIONS)}")
    roots = message.get("roots")
    root = message.get("root")
    return LocalFileSystem(cwd=message.get("cwd") or None, profile=message.get("profile"),
                           root=root if roots is None else None, roots=roots, **options)


class Helper(SearchOps):
    """Answers the requests of one connection with ``fs`` (and the search tools' host
    operations, ``search.SearchOps``).

    :param fs: the far side's provider
    :param send: writes one frame (``encode_frame``'s bytes) to the near side, in order
    """

    def __init__(self, fs: FileSystem, send: Callable[[bytes], Awaitable[None]]) -> None:
        self.fs = fs
        self.send = send
        self.tasks: dict[int, asyncio.Task[None]] = {}
        self.signals: dict[int, AbortSignal] = {}
        self.credit: dict[int, asyncio.Queue[int]] = {}
        SearchOps.__init__(self)

    async def stop(self) -> None:
        """The near side is gone (stdin ended): reads are dropped, a mutation under way
        finishes first (the local provider never abandons one), then the provider is closed."""
        for task in list(self.tasks.values()):
            task.cancel()
        if self.tasks:
            await asyncio.wait(list(self.tasks.values()))
        await self.fs.aclose()

    async def answer(self, request: int, result: Any = None, body: bytes = b"") -> None:
        await self.send(encode_frame({"id": request, "r": result}, body))

    def dispatch(self, message: dict[str, Any], body: bytes) -> None:
        """Handle one frame from the near side: start a request's task, or apply a control frame.

        :raises ProtocolError: a frame that is neither
        """
        if "op" in message:
            request = codec.integer(message.get("id"), "a request id")
            signal = AbortSignal()
            if message.get("aborted"):
                signal.abort()
            self.signals[request] = signal
            self.tasks[request] = asyncio.ensure_future(self._run(request, message, body, signal))
        elif "abort" in message:
            found = self.signals.get(message["abort"])
            if found is not None:
                found.abort()
        elif "cancel" in message:
            task = self.tasks.get(message["cancel"])
            if task is not None:
                task.cancel()
        elif "more" in message:
            queue = self.credit.get(message["more"])
            if queue is not None:
                queue.put_nowait(codec.integer(message.get("n"), "a credit"))
        else:
            raise ProtocolError("a frame is neither a request nor a control frame")

    async def _run(self, request: int, message: dict[str, Any], body: bytes, signal: AbortSignal) -> None:
        try:
            op = message["op"]
            handler = getattr(self, "op_" + op, None) if isinstance(op, str) else None
            if handler is None:
                raise ProtocolError(f"unknown operation {op!r}")
            await handler(request, message.get("a") or {}, body, signal)
        except asyncio.CancelledError:
            pass  # the near side gave up on it: nobody waits for an answer
        except ProtocolError as exc:
            await self._failed(request, ValueError(str(exc)))
        except Exception as exc:  # every failure is the near side's to see, as the provider raised it
            await self._failed(request, exc)
        finally:
            self.tasks.pop(request, None)
            self.signals.pop(request, None)
            self.credit.pop(request, None)

    async def _failed(self, request: int, exc: BaseException) -> None:
        try:
            await self.send(encode_frame({"id": request, "e": codec.encode_error(exc)}))
        except (ConnectionError, OSError):
            pass  # the near side is gone

    async def _stream(self, request: int, chunks: AsyncIterator[Any], initial: int,
                      encode: Callable[[Any], tuple[Any, bytes]]) -> None:
        """Send ``chunks`` as ``{"id": n, "c": …}`` frames, never more than the near side's credit
        ahead, then the end (``{"id": n, "r": null}``)."""
        queue: asyncio.Queue[int] = asyncio.Queue()
        self.credit[request] = queue
        credit = max(1, initial)
        try:
            async for chunk in chunks:
                while credit <= 0:
                    credit += await queue.get()
                value, body = encode(chunk)
                await self.send(encode_frame({"id": request, "c": value}, body))
                credit -= 1
        finally:
            await chunks.aclose()  # type: ignore[attr-defined]
        await self.answer(request)

    # -- operations: one method per request, ``op_<name>(request, args, body, signal)`` ------------
    async def op_ping(self, request: int, args: dict[str, Any], body: bytes, signal: AbortSignal) -> None:
        await self.answer(request, None, body)

    async def op_resolve(self, request: int, args: dict[str, Any], body: bytes, signal: AbortSignal) -> None:
        """``resolve``, and with it (``pf`` > 0) the target's ``stat`` and, for a text file of at
        most ``pf`` bytes, its text as ``read_text_at`` gives it for that stat's version (the
        near side serves the next ``stat``/read from them: DEVIATIONS C5)."""
        target = await self.fs.resolve(codec.string(args.get("p"), "a path"),
                                       cwd=codec.optional_string(args.get("cwd"), "a cwd"), signal=signal)
        limit = codec.integer(args.get("pf", 0), "a prefetch size")
        result: list[Any] = [codec.encode_target(target)]
        if limit > 0:
            try:
                info = await self.fs.stat(target, signal=signal)
            except FsError:
                info = None  # the stat itself says why, when it is asked
            else:
                result.append(codec.encode_info(info))
                if info is not None and info.type == "file" and info.size is not None and info.size <= limit:
                    try:
                        text = await self.fs.read_text_at(target, info.version, info=info, signal=signal)
                    except FsError:
                        text = None  # not text, gone, …: the read itself says so
                    if text is not None:
                        result.append(text)
        await self.answer(request, result)

    async def op_stat(self, request: int, args: dict[str, Any], body: bytes, signal: AbortSignal) -> None:
        info = await self.fs.stat(codec.decode_target(args.get("t")), signal=signal)
        await self.answer(request, codec.encode_info(info))

    async def op_lstat(self, request: int, args: dict[str, Any], body: bytes, signal: AbortSignal) -> None:
        info = await self.fs.lstat(codec.string(args.get("p"), "a path"),
                                   cwd=codec.optional_string(args.get("cwd"), "a cwd"), signal=signal)
        await self.answer(request, codec.encode_path_info(info))

    async def op_real_place(self, request: int, args: dict[str, Any], body: bytes, signal: AbortSignal) -> None:
        await self.answer(request, await self.fs.real_place(codec.decode_target(args.get("t")), signal=signal))

    async def op_read_text(self, request: int, args: dict[str, Any], body: bytes, signal: AbortSignal) -> None:
        await self.answer(request, await self.fs.read_text(codec.decode_target(args.get("t")), signal=signal))

    async def op_read_text_at(self, request: int, args: dict[str, Any], body: bytes, signal: AbortSignal) -> None:
        info = codec.decode_info(args.get("i"))
        text = await self.fs.read_text_at(codec.decode_target(args.get("t")), codec.decode_version(args.get("v")),
                                          info=info, signal=signal)
        await self.answer(request, text)

    async def op_read_window(self, request: int, args: dict[str, Any], body: bytes, signal: AbortSignal) -> None:
        info = codec.decode_info(args.get("i"))
        if info is None:
            raise ProtocolError("read_window needs the caller's info")
        result = await self.fs.read_window(codec.decode_target(args.get("t")), codec.decode_window(args.get("w")),
                                           info=info, streamed=bool(args.get("s")), signal=signal)
        await self.answer(request, codec.encode_window_result(result))

    async def op_read_bytes(self, request: int, args: dict[str, Any], body: bytes, signal: AbortSignal) -> None:
        data = await self.fs.read_bytes(codec.decode_target(args.get("t")),
                                        max_bytes=codec.integer(args.get("m"), "a byte cap"),
                                        size=codec.optional_integer(args.get("size"), "a size"), signal=signal)
        await self.answer(request, None, data)

    async def op_stream_text(self, request: int, args: dict[str, Any], body: bytes, signal: AbortSignal) -> None:
        chunks = self.fs.stream_text(codec.decode_target(args.get("t")), signal=signal)
        await self._stream(request, chunks, codec.integer(args.get("n", 1), "a credit"), lambda text: (text, b""))

    async def op_stream_bytes(self, request: int, args: dict[str, Any], body: bytes, signal: AbortSignal) -> None:
        chunks = self.fs.stream_bytes(codec.decode_target(args.get("t")), signal=signal)
        await self._stream(request, chunks, codec.integer(args.get("n", 1), "a credit"), lambda data: (None, data))

    async def op_walk(self, request: int, args: dict[str, Any], body: bytes, signal: AbortSignal) -> None:
        entries = self.fs.walk(codec.decode_target(args.get("t")), signal=signal)
        await self._stream(request, _batched(entries, 512), codec.integer(args.get("n", 1), "a credit"),
                           lambda batch: (codec.encode_walk_entries(batch), b""))

    async def op_list_dir(self, request: int, args: dict[str, Any], body: bytes, signal: AbortSignal) -> None:
        entries = await self.fs.list_dir(codec.decode_target(args.get("t")), signal=signal)
        await self.answer(request, codec.encode_dir_entries(entries))

    async def op_iter_dir(self, request: int, args: dict[str, Any], body: bytes, signal: AbortSignal) -> None:
        batches = self.fs.iter_dir(codec.decode_target(args.get("t")), signal=signal)
        await self._stream(request, batches, codec.integer(args.get("n", 1), "a credit"),
                           lambda batch: (codec.encode_dir_entries(batch), b""))

    async def op_write_text(self, request: int, args: dict[str, Any], body: bytes, signal: AbortSignal) -> None:
        outcome = await self.fs.write_text(codec.decode_target(args.get("t")), codec.string(args.get("s"), "content"),
                                           codec.decode_write_intent(args.get("x")), signal=signal)
        await self.answer(request, codec.encode_write_outcome(outcome))

    async def op_edit_text(self, request: int, args: dict[str, Any], body: bytes, signal: AbortSignal) -> None:
        version = codec.optional_string(args.get("x"), "a version")
        outcome = await self.fs.edit_text(codec.decode_target(args.get("t")), codec.decode_edit(args.get("e")),
                                          EditIntent(Version(version)) if version is not None else None, signal=signal)
        await self.answer(request, codec.encode_edit_outcome(outcome))

    async def op_delete(self, request: int, args: dict[str, Any], body: bytes, signal: AbortSignal) -> None:
        version = codec.optional_string(args.get("x"), "a version")
        outcome = await self.fs.delete(codec.decode_target(args.get("t")),
                                       DeleteIntent(Version(version)) if version is not None else None, signal=signal)
        await self.answer(request, outcome.version)

    async def op_rename(self, request: int, args: dict[str, Any], body: bytes, signal: AbortSignal) -> None:
        version = codec.optional_string(args.get("x"), "a version")
        outcome = await self.fs.rename(codec.decode_target(args.get("t")), codec.decode_target(args.get("d")),
                                       RenameIntent(Version(version)) if version is not None else None, signal=signal)
        await self.answer(request, outcome.version)

    async def op_is_current(self, request: int, args: dict[str, Any], body: bytes, signal: AbortSignal) -> None:
        found = await self.fs.is_current(codec.decode_target(args.get("t")), codec.decode_version(args.get("v")),
                                         signal=signal)
        await self.answer(request, found)

    async def op_check_replaceable(self, request: int, args: dict[str, Any], body: bytes, signal: AbortSignal) -> None:
        await self.fs.check_replaceable(codec.decode_target(args.get("t")), codec.string(args.get("verb"), "a verb"),  # type: ignore[arg-type]
                                        size=codec.optional_integer(args.get("size"), "a size"), signal=signal)
        await self.answer(request)

    async def op_check_creatable(self, request: int, args: dict[str, Any], body: bytes, signal: AbortSignal) -> None:
        await self.fs.check_creatable(codec.decode_target(args.get("t")),
                                      size=codec.optional_integer(args.get("size"), "a size"), signal=signal)
        await self.answer(request)

    async def op_check_renamable(self, request: int, args: dict[str, Any], body: bytes, signal: AbortSignal) -> None:
        await self.fs.check_renamable(codec.decode_target(args.get("t")), codec.decode_target(args.get("d")),
                                      signal=signal)
        await self.answer(request)


async def _batched(entries: AsyncIterator[Any], size: int) -> AsyncIterator[list[Any]]:
    batch: list[Any] = []
    try:
        async for entry in entries:
            batch.append(entry)
            if len(batch) >= size:
                yield batch
                batch = []
        if batch:
            yield batch
    finally:
        await entries.aclose()  # type: ignore[attr-defined]


def _private_streams() -> tuple[int, int]:
    """Move the protocol's stdin and stdout to private descriptors; fd 0 becomes ``/dev/null``
    and fd 1 the process's stderr, so a child process or a stray print cannot touch them."""
    inp, out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    for fd in (inp, out):
        os.set_inheritable(fd, False)
    return inp, out


async def start(opened: dict[str, Any], send: Callable[[bytes], Awaitable[None]]) -> Helper | None:
    """The helper for an ``open`` frame, its ``ready`` answer sent; ``None`` (its ``fail``
    answer sent) when the far side's provider refuses the settings."""
    try:
        fs = open_provider_for(opened.get("open") or {})
    except (ValueError, TypeError) as exc:
        await send(encode_frame({"fail": str(exc)}))
        return None
    ready = {"root": getattr(fs, "root", None), "roots": list(fs.workspace_roots()), "cwd": getattr(fs, "cwd", None),
             "python": ".".join(map(str, sys.version_info[:3])), "pid": os.getpid()}
    await send(encode_frame({"ready": ready}))
    return Helper(fs, send)


async def serve(inp: int, out: int, first: list[tuple[dict[str, Any], bytes]], leftover: bytes = b"") -> None:
    """Serve one near side: the ``open`` frame (first of ``first``), then requests until stdin ends.

    :param inp: the protocol's input descriptor
    :param out: the protocol's output descriptor
    :param first: frames the bootstrap program already read (the ``open`` frame first)
    :param leftover: bytes it read past them
    """
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 16)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(inp, "rb", buffering=0))
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, os.fdopen(out, "wb", buffering=0))
    writer = asyncio.StreamWriter(transport, protocol, reader, loop)
    lock = asyncio.Lock()

    async def send(frame: bytes) -> None:
        async with lock:
            writer.write(frame)
            await writer.drain()

    opened, _ = first[0]
    helper = await start(opened, send)
    if helper is None:
        return
    frames = FrameReader()
    pending = list(first[1:]) + frames.feed(leftover)
    try:
        while True:
            for message, body in pending:
                helper.dispatch(message, body)
            data = await reader.read(_READ_SIZE)
            if not data:
                break
            pending = frames.feed(data)
    finally:
        await helper.stop()


def main(first: list[tuple[dict[str, Any], bytes]], leftover: bytes = b"") -> None:
    """The helper process's entry (called by the bootstrap program with the frames it read):
    serve on private copies of stdin and stdout; a hang-up of the channel does not kill a
    mutation under way (``SIGHUP`` ignored: stdin's end stops the helper)."""
    signals.signal(signals.SIGHUP, signals.SIG_IGN)
    inp, out = _private_streams()
    try:
        asyncio.run(serve(inp, out, first, leftover))
    except ProtocolError as exc:
        print(f"dsh-fs helper: {exc}", file=sys.stderr)
        sys.exit(3)
