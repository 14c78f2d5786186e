"""``ChannelFileSystem``: a provider whose every primitive runs on the far side of a command
channel, in dsh-fs's own local provider (DEVIATIONS C1–C5; docs/CHANNELS.md).

The near side is thin: each method is one request to the helper (``client``), whose answer is
decoded into the seam's values (``codec``). What the guarantees rest on is done there, by the
far side's ``LocalFileSystem``: containment against the far root with symlinks resolved on
the far side, atomic durable writes, the far side's cross-process locks (two near-side
processes editing one far file serialize there), versions and the stale check under the
lock, read windows of huge files computed where the file is.

Identity: a target's key is the channel's identity followed by the far side's key (its real
path), ``docker://box/work/a.txt``, so two far sides never share a key; the display path is
the far path, ``/work/a.txt``.

Round trips (DEVIATIONS C5): ``resolve`` asks for the target's ``stat`` too and, for a text
file of at most ``prefetch_max`` bytes, its text of that version; the next ``stat`` of the
target is answered from it, and a read of that version (``read_window``, ``read_text``,
``read_text_at``) from the text, once each, unless a mutation through this provider began or
ended since the ``resolve`` was sent. So a ``read`` tool call of a small file costs one round
trip; other calls cost one per primitive, and requests side by side share the channel
(pipelined, answered in any order).

Lifecycle: the helper starts on first use (per event loop), is started again when it died,
and ends with ``aclose``. A read whose answer was lost with the channel is sent once more
over a new helper; a mutation never is (``errors.ChannelError``: the file is old or new).
"""

from __future__ import annotations

import asyncio
import posixpath
from collections import OrderedDict
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from ..fs.backend import (
    AbortSignal,
    DeleteIntent,
    DeleteOutcome,
    DirEntry,
    EditIntent,
    EditOutcome,
    EditRequest,
    FileSystem,
    FsError,
    Info,
    PathInfo,
    Profile,
    ReadWindow,
    RenameIntent,
    RenameOutcome,
    Stage,
    Target,
    TargetKey,
    Verb,
    Version,
    WalkEntry,
    WindowResult,
    WriteIntent,
    WriteOutcome,
    aborted,
    foreign_target,
    window_whole,
)
from ..fs.search_host import SearchHost
from . import codec, errors
from .bundle import bundle
from .channels import Channel
from .search import ChannelSearchHost
from ..fs.legacy_text import check_encodings
from .client import ABORT_GRACE_S, OPEN_OPTIONS, START_TIMEOUT_S, Aborted, Connection, settings_for
from .wire import ProtocolError

__all__ = ("ChannelFileSystem", "PREFETCH_MAX")

PREFETCH_MAX = 64 * 1024
"""the largest file (bytes) whose text ``resolve`` brings along (DEVIATIONS C5)"""

_FRESH_KEPT = 64
"""resolved targets whose prefetched stat and text are kept at most (oldest dropped first)"""


@dataclass(slots=True)
class _Fresh:
    """What one ``resolve`` brought along, usable until a mutation begins or ends."""

    epoch: int
    """the provider's mutation epoch when the ``resolve`` was sent"""
    info: Info | None
    """the target's ``stat``, until a ``stat`` takes it"""
    version: str | None
    """the version of ``text``"""
    text: str | None
    """the file's text (``read_text_at`` of ``version``), until a read takes it"""


class ChannelFileSystem(FileSystem):
    """The far side's files, through ``channel`` (see the module docstring).

    :param channel: how to reach the far side (``channels``)
    :param root: the far-side directory no path may leave (absolute); ``None``: no
        containment (the whole far disk, as the reference's local provider)
    :param roots: several far-side roots instead (DEVIATIONS D28)
    :param cwd: the far-side base of relative paths (default: the root)
    :param profile: ``default`` or ``reference``, applied on the far side
    :param python: the far side's interpreter (a command name or an absolute path)
    :param prefetch_max: see ``PREFETCH_MAX`` (0: ``resolve`` brings nothing along)
    :param start_timeout: seconds the helper may take to start (``client.START_TIMEOUT_S``)
    :param abort_grace: seconds an aborted mutation's answer is awaited (``client.ABORT_GRACE_S``)
    :param options: ``LocalFileSystem`` keywords for the far side (``client.OPEN_OPTIONS``:
        ``write_max_size``, ``lock_dir``, …)
    :raises ValueError: a root or cwd that is not absolute, both ``root`` and ``roots``, an
        unknown option
    """

    name: ClassVar[str] = "fs-channel"

    def __init__(
        self,
        channel: Channel,
        *,
        root: str | None = "/",
        roots: Sequence[str] | None = None,
        cwd: str | None = None,
        profile: Profile | str | None = None,
        python: str = "python3",
        prefetch_max: int = PREFETCH_MAX,
        start_timeout: float = START_TIMEOUT_S,
        abort_grace: float = ABORT_GRACE_S,
        **options: Any,
    ) -> None:
        if roots is not None and root not in (None, "/"):
            raise ValueError("ChannelFileSystem: give root= or roots=, not both")
        unknown = sorted(set(options) - OPEN_OPTIONS)
        if unknown:
            raise TypeError(f"ChannelFileSystem: unknown options {unknown}")
        given = list(roots) if roots is not None else [root] if root is not None else []
        for path in [*given, *([cwd] if cwd else [])]:
            if not isinstance(path, str) or not path.startswith("/"):
                raise ValueError(f"ChannelFileSystem: {path!r} is not an absolute far-side path")
        self.channel = channel
        self.identity = channel.identity.rstrip("/")
        self.roots: tuple[str, ...] = tuple(posixpath.normpath(p) for p in given)
        self.root = self.roots[0] if self.roots else None
        self.cwd = posixpath.normpath(cwd) if cwd else (self.root or "/")
        self.profile = Profile.parse(profile)
        self.python = python
        self.prefetch_max = max(0, prefetch_max)
        self.start_timeout = start_timeout
        self.abort_grace = abort_grace
        if "encodings" in options:
            options["encodings"] = list(check_encodings(options["encodings"]))
        self.options = dict(options)
        self._settings = settings_for(None if roots is not None else self.root,
                                      list(self.roots) if roots is not None else None,
                                      self.cwd, self.profile.value, self.options)
        self._connections: dict[asyncio.AbstractEventLoop, Connection] = {}
        self._opening: dict[asyncio.AbstractEventLoop, asyncio.Lock] = {}
        self._fresh: OrderedDict[str, _Fresh] = OrderedDict()
        self._epoch = 0
        self.starts = 0
        """helpers started by this provider (a restart after the helper died counts again)"""

    # -- connection -----------------------------------------------------------------------------
    async def connection(self) -> Connection:
        """The live helper connection of the running event loop, started if there is none.

        :raises errors.ChannelError: the helper could not start
        """
        loop = asyncio.get_running_loop()
        found = self._connections.get(loop)
        if found is not None and found.alive:
            return found
        lock = self._opening.setdefault(loop, asyncio.Lock())
        async with lock:
            found = self._connections.get(loop)
            if found is not None and found.alive:
                return found
            if found is not None:
                await found.aclose()
            for other in [lp for lp in self._connections if lp is not loop and lp.is_closed()]:
                self._connections.pop(other, None)
                self._opening.pop(other, None)
            found = await Connection.open(self.channel, self._settings, bundle(), python=self.python,
                                          start_timeout=self.start_timeout, abort_grace=self.abort_grace)
            self.starts += 1
            self._connections[loop] = found
            return found

    async def start(self) -> dict[str, Any]:
        """Start the helper now (else it starts on first use); its ``ready`` answer.

        :raises FsError: ``FS_IO_ERROR`` when it cannot start (``cannot resolve "<root>": …``)
        """
        try:
            return (await self.connection()).ready
        except errors.ChannelError as exc:
            raise exc.as_fs_error("resolve", self.cwd) from None

    async def aclose(self) -> None:
        """End the helper of the running event loop (those of closed loops are dropped)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        found = self._connections.pop(loop, None)
        if found is not None:
            await found.aclose()
        for other in [lp for lp in self._connections if lp.is_closed()]:
            self._connections.pop(other, None)

    @property
    def round_trips(self) -> int:
        """Requests sent over this event loop's connection (each one round trip)."""
        try:
            found = self._connections.get(asyncio.get_running_loop())
        except RuntimeError:
            return 0
        return found.round_trips if found is not None else 0

    async def _request(self, op: str, args: dict[str, Any], *, verb: Verb, display: str, stage: Stage,
                       signal: AbortSignal | None, mutation: bool = False, body: bytes = b"") -> tuple[Any, bytes]:
        for attempt in (0, 1):
            try:
                connection = await self.connection()
                return await connection.call(op, args, body=body, signal=signal, mutation=mutation)
            except Aborted:
                raise aborted(stage) from None
            except errors.ChannelError as exc:
                if mutation or attempt or exc.before_sent:
                    raise exc.as_fs_error(verb, display) from None
                # a read whose answer was lost with the channel: once more, over a new helper
            except ProtocolError as exc:
                raise errors.garbled(self.channel.describe(), str(exc)).as_fs_error(verb, display) from None
        raise AssertionError("unreachable")

    def _decoded(self, decode: Any, value: Any, verb: Verb, display: str) -> Any:
        try:
            return decode(value)
        except ProtocolError as exc:
            raise errors.garbled(self.channel.describe(), str(exc)).as_fs_error(verb, display) from None

    # -- keys -------------------------------------------------------------------------------------
    def _far(self, target: Target) -> list[str]:
        key = target.key
        if not key.startswith(self.identity + "/"):
            raise foreign_target(target.display_path, f"not a target of {self.identity}")
        return [key[len(self.identity):], target.display_path]

    def _near(self, far: Target) -> Target:
        return Target(key=TargetKey(self.identity + far.key), display_path=far.display_path)

    def _mutating(self) -> None:
        """A mutation begins or ends: what ``resolve`` brought along may be older than it."""
        self._epoch += 1
        self._fresh.clear()

    # -- the seam ---------------------------------------------------------------------------------
    async def resolve(self, path: str, *, cwd: str | None = None, signal: AbortSignal | None = None) -> Target:
        epoch = self._epoch
        args: dict[str, Any] = {"p": path, "cwd": cwd, "pf": self.prefetch_max}
        result, _ = await self._request("resolve", args, verb="resolve", display=path, stage="resolve", signal=signal)
        if not isinstance(result, list) or not 1 <= len(result) <= 3:
            raise errors.garbled(self.channel.describe(), "a resolve answer").as_fs_error("resolve", path)
        target = self._near(self._decoded(codec.decode_target, result[0], "resolve", path))
        if len(result) > 1:
            info = self._decoded(codec.decode_info, result[1], "resolve", path)
            text = self._decoded(lambda v: codec.optional_string(v, "a text"), result[2], "resolve", path) \
                if len(result) > 2 else None
            if epoch == self._epoch:
                self._fresh[target.key] = _Fresh(epoch, info, info.version if info is not None else None, text)
                self._fresh.move_to_end(target.key)
                while len(self._fresh) > _FRESH_KEPT:
                    self._fresh.popitem(last=False)
        return target

    async def stat(self, target: Target, *, signal: AbortSignal | None = None) -> Info | None:
        far = self._far(target)
        if signal is None or not signal.aborted:
            fresh = self._fresh.get(target.key)
            if fresh is not None and fresh.epoch == self._epoch and fresh.info is not None:
                found, fresh.info = fresh.info, None
                return found
        result, _ = await self._request("stat", {"t": far}, verb="stat", display=target.display_path, stage="stat",
                                        signal=signal)
        return self._decoded(codec.decode_info, result, "stat", target.display_path)  # type: ignore[no-any-return]

    async def lstat(self, path: str, *, cwd: str | None = None, signal: AbortSignal | None = None) -> PathInfo | None:
        result, _ = await self._request("lstat", {"p": path, "cwd": cwd}, verb="stat", display=path, stage="lstat",
                                        signal=signal)
        return self._decoded(codec.decode_path_info, result, "stat", path)  # type: ignore[no-any-return]

    def _prefetched_text(self, target: Target, version: str | None, signal: AbortSignal | None) -> str | None:
        if signal is not None and signal.aborted:
            return None  # the far side says how it is aborted
        fresh = self._fresh.get(target.key)
        if fresh is None or fresh.epoch != self._epoch or fresh.text is None:
            return None
        if version is not None and fresh.version != version:
            return None
        found, fresh.text = fresh.text, None
        return found

    async def read_text(self, target: Target, *, signal: AbortSignal | None = None) -> str:
        far = self._far(target)
        found = self._prefetched_text(target, None, signal)
        if found is not None:
            return found
        result, _ = await self._request("read_text", {"t": far}, verb="read", display=target.display_path,
                                        stage="read", signal=signal)
        return self._decoded(lambda v: codec.string(v, "a text"), result, "read", target.display_path)  # type: ignore[no-any-return]

    async def read_text_at(self, target: Target, version: Version, *, info: Info | None = None,
                           signal: AbortSignal | None = None) -> str | None:
        far = self._far(target)
        found = self._prefetched_text(target, version, signal)
        if found is not None:
            return found
        args = {"t": far, "v": version, "i": codec.encode_info(info)}
        result, _ = await self._request("read_text_at", args, verb="read", display=target.display_path,
                                        stage="read", signal=signal)
        return self._decoded(lambda v: codec.optional_string(v, "a text"), result, "read", target.display_path)  # type: ignore[no-any-return]

    async def read_window(self, target: Target, window: ReadWindow, *, info: Info, streamed: bool = False,
                          signal: AbortSignal | None = None) -> WindowResult | None:
        """The far side's window (its line index for big files; only the window travels), or,
        for a small file whose text ``resolve`` brought along for exactly ``info.version``,
        that text windowed here (``window_whole``: the result the far side's own
        ``read_window`` must equal, REFERENCE-SPEC §2.5)."""
        far = self._far(target)
        if not streamed:
            found = self._prefetched_text(target, info.version, signal)
            if found is not None:
                return window_whole(found, window, target.display_path)
        args = {"t": far, "w": codec.encode_window(window), "i": codec.encode_info(info), "s": streamed}
        result, _ = await self._request("read_window", args, verb="read", display=target.display_path, stage="read",
                                        signal=signal)
        return self._decoded(codec.decode_window_result, result, "read", target.display_path)  # type: ignore[no-any-return]

    async def _stream(self, op: str, target: Target, verb: Verb, stage: Stage,
                      signal: AbortSignal | None) -> AsyncIterator[tuple[Any, bytes]]:
        far = self._far(target)
        try:
            connection = await self.connection()
            async for item in connection.stream(op, {"t": far}, signal=signal):
                yield item
        except Aborted:
            raise aborted(stage) from None
        except errors.ChannelError as exc:
            raise exc.as_fs_error(verb, target.display_path) from None

    async def stream_text(self, target: Target, *, signal: AbortSignal | None = None) -> AsyncIterator[str]:
        chunks = self._stream("stream_text", target, "read", "read", signal)
        try:
            async for value, _ in chunks:
                yield self._decoded(lambda v: codec.string(v, "a text chunk"), value, "read", target.display_path)
        finally:
            await chunks.aclose()  # type: ignore[attr-defined]

    async def stream_bytes(self, target: Target, *, signal: AbortSignal | None = None) -> AsyncIterator[bytes]:
        chunks = self._stream("stream_bytes", target, "read", "read", signal)
        try:
            async for _, body in chunks:
                yield body
        finally:
            await chunks.aclose()  # type: ignore[attr-defined]

    async def walk(self, target: Target, *, signal: AbortSignal | None = None) -> AsyncIterator[WalkEntry]:
        batches = self._stream("walk", target, "list", "list", signal)
        try:
            async for value, _ in batches:
                for entry in self._decoded(codec.decode_walk_entries, value, "list", target.display_path):
                    yield WalkEntry(rel=entry.rel, type=entry.type, target=self._near(entry.target), size=entry.size,
                                    mtime_ns=entry.mtime_ns)
        finally:
            await batches.aclose()  # type: ignore[attr-defined]

    async def read_bytes(self, target: Target, *, max_bytes: int, size: int | None = None, info: Info | None = None,
                         signal: AbortSignal | None = None) -> bytes:
        """One request: the far side's ``read_bytes`` (its limits and texts)."""
        far = self._far(target)
        _, body = await self._request("read_bytes", {"t": far, "m": max_bytes, "size": size}, verb="read",
                                      display=target.display_path, stage="read", signal=signal)
        return body

    async def list_dir(self, target: Target, *, signal: AbortSignal | None = None) -> list[DirEntry]:
        far = self._far(target)
        result, _ = await self._request("list_dir", {"t": far}, verb="list", display=target.display_path,
                                        stage="list", signal=signal)
        entries = self._decoded(codec.decode_dir_entries, result, "list", target.display_path)
        return [DirEntry(name=e.name, type=e.type, target=self._near(e.target), version=e.version, size=e.size)
                for e in entries]

    async def iter_dir(self, target: Target, *, signal: AbortSignal | None = None) -> AsyncIterator[list[DirEntry]]:
        """The far side's ``iter_dir`` batches (its provider reads the directory 512 entries at a
        time), streamed under the channel's credit: a ``list`` page or a clipped ``view`` of a
        huge far directory never holds it whole on either side (DEVIATIONS L5)."""
        batches = self._stream("iter_dir", target, "list", "list", signal)
        try:
            async for value, _ in batches:
                entries = self._decoded(codec.decode_dir_entries, value, "list", target.display_path)
                yield [DirEntry(name=e.name, type=e.type, target=self._near(e.target), version=e.version, size=e.size)
                       for e in entries]
        finally:
            await batches.aclose()  # type: ignore[attr-defined]

    async def _mutate(self, op: str, args: dict[str, Any], verb: Verb, display: str,
                      signal: AbortSignal | None) -> Any:
        self._mutating()
        try:
            result, _ = await self._request(op, args, verb=verb, display=display, stage=verb, signal=signal,
                                            mutation=True)
            return result
        finally:
            self._mutating()

    async def write_text(self, target: Target, content: str, expected: WriteIntent | None = None, *,
                         signal: AbortSignal | None = None) -> WriteOutcome:
        args = {"t": self._far(target), "s": content, "x": codec.encode_write_intent(expected)}
        result = await self._mutate("write_text", args, "write", target.display_path, signal)
        return self._decoded(codec.decode_write_outcome, result, "write", target.display_path)  # type: ignore[no-any-return]

    async def edit_text(self, target: Target, edit: EditRequest, expected: EditIntent | None = None, *,
                        signal: AbortSignal | None = None) -> EditOutcome:
        args = {"t": self._far(target), "e": codec.encode_edit(edit), "x": codec.guard_version(expected)}
        result = await self._mutate("edit_text", args, "edit", target.display_path, signal)
        return self._decoded(codec.decode_edit_outcome, result, "edit", target.display_path)  # type: ignore[no-any-return]

    async def delete(self, target: Target, expected: DeleteIntent | None = None, *,
                     signal: AbortSignal | None = None) -> DeleteOutcome:
        args = {"t": self._far(target), "x": codec.guard_version(expected)}
        result = await self._mutate("delete", args, "delete", target.display_path, signal)
        return self._decoded(codec.decode_delete_outcome, result, "delete", target.display_path)  # type: ignore[no-any-return]

    async def rename(self, source: Target, dest: Target, expected: RenameIntent | None = None, *,
                     signal: AbortSignal | None = None) -> RenameOutcome:
        args = {"t": self._far(source), "d": self._far(dest), "x": codec.guard_version(expected)}
        result = await self._mutate("rename", args, "rename", source.display_path, signal)
        return self._decoded(codec.decode_rename_outcome, result, "rename", source.display_path)  # type: ignore[no-any-return]

    async def is_current(self, target: Target, version: Version, *, signal: AbortSignal | None = None) -> bool:
        result, _ = await self._request("is_current", {"t": self._far(target), "v": version}, verb="stat",
                                        display=target.display_path, stage="stat", signal=signal)
        if not isinstance(result, bool):
            raise errors.garbled(self.channel.describe(), "is_current").as_fs_error("stat", target.display_path)
        return result

    async def check_replaceable(self, target: Target, verb: Verb, *, size: int | None = None,
                                signal: AbortSignal | None = None) -> None:
        await self._request("check_replaceable", {"t": self._far(target), "verb": verb, "size": size}, verb="stat",
                            display=target.display_path, stage="stat", signal=signal)

    async def check_creatable(self, target: Target, *, size: int | None = None,
                              signal: AbortSignal | None = None) -> None:
        await self._request("check_creatable", {"t": self._far(target), "size": size}, verb="stat",
                            display=target.display_path, stage="stat", signal=signal)

    async def check_renamable(self, source: Target, dest: Target, *, signal: AbortSignal | None = None) -> None:
        await self._request("check_renamable", {"t": self._far(source), "d": self._far(dest)}, verb="stat",
                            display=source.display_path, stage="stat", signal=signal)

    async def ping(self, payload: bytes = b"") -> bytes:
        """One round trip doing nothing on the far side (the channel's floor): ``payload`` back."""
        connection = await self.connection()
        _, body = await connection.call("ping", {}, body=payload)
        return body

    async def real_place(self, target: Target, *, signal: AbortSignal | None = None) -> str:
        """The far side's real path of ``target``: its provider's ``real_place`` (the real path
        the far side's containment walk found, every symlink resolved there), one round trip.
        A far ``docs -> .git`` makes ``/ws/docs/config`` the real place ``/ws/.git/config``.

        :raises FsError: as ``stat`` (FS_IO_ERROR when the channel fails, FS_ABORTED)
        """
        result, _ = await self._request("real_place", {"t": self._far(target)}, verb="resolve",
                                        display=target.display_path, stage="resolve", signal=signal)
        return self._decoded(lambda v: codec.string(v, "a real place"), result, "resolve",  # type: ignore[no-any-return]
                             target.display_path)

    def search_host(self) -> SearchHost:
        """The far side, where ``glob``/``grep`` run ripgrep (``search.ChannelSearchHost``, C4)."""
        return ChannelSearchHost(self)

    def workspace_roots(self) -> tuple[str, ...]:
        """The far-side roots as configured (display paths), in order; empty without containment."""
        return self.roots

    @property
    def text_encodings(self) -> tuple[str, ...]:
        """The far side's legacy encodings (the ``encodings`` option, DEVIATIONS F7): it reads,
        edits and writes them; a read's text comes back without its encoding's name."""
        return tuple(self.options.get("encodings") or ())

    def __repr__(self) -> str:
        return f"ChannelFileSystem({self.channel.describe()}, root={self.root!r})"
