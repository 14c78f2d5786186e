"""``HistoryFileSystem``: the recording wrapper over any provider (as ``fs_sandbox`` and
``fs_rules`` wrap one), docs/HISTORY.md "How it is stored".

Reads pass through. A mutation made through a *per-call view* (``for_tool_call``: what
``fs_sandbox.tools.call_fs`` binds for every mutating tool call of a session) is recorded as a
change of that call's step, in three moves:

1. the before-state: the file's version and bytes (``read_bytes``, at most ``max_file_bytes``;
   over that a literal edit is kept as its reversible replacement and anything else as not
   restorable), or its absence; the bytes and a *pending* change are stored (``HistoryStore.begin``).
   A provider that witnesses the mutation (``FileSystem.witnessed_mutations``, ``fs.witness``:
   the S3 provider's ``write_text``/``edit_text``) hands over the bytes its own read fetched and
   the digest of those it is about to put, right before it commits: the file is read once, and
   a retry on fresher content replaces the change begun for the earlier attempt;
2. the mutation, delegated unchanged (guards, locks and atomic write are the provider's);
3. the version after it (``complete``); a mutation refused with ``FsError`` changed nothing and
   its change is removed (``abandon``). A store that cannot record the intent refuses the
   mutation (``FS_IO_ERROR`` ``cannot write "<dp>": the history could not record the change
   (<why>)``): a change is never made without its entry. Any other end (a crash, a cancellation) leaves the change
   pending: a rewind accepts the file in either of its states.

A mutation through the wrapper itself (not a call's view: the host program's own writes) is
not recorded: it is someone else's change, which a rewind never overwrites.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import anyio

from ..fs.errors import FsError, Verb, io_error
from ..fs.filesystem import FileSystem
from ..fs.types import (
    DeleteIntent,
    DeleteOutcome,
    DirEntry,
    EditIntent,
    EditOutcome,
    EditRequest,
    Info,
    PathInfo,
    RenameIntent,
    RenameOutcome,
    Target,
    Version,
    WalkEntry,
    WriteIntent,
    WriteOutcome,
)
from ..fs.witness import witnessing
from .model import Before, digest_of
from .store import DEFAULT_MAX_FILE_BYTES, CallMeta, HistoryStore, Intent

if TYPE_CHECKING:
    from ..core.context import Scope
    from ..core.signal import AbortSignal
    from ..fs.path_rules import RuleView
    from ..fs.search_host import SearchHost
    from ..fs.window import ReadWindow, WindowResult

__all__ = ("HistoryFileSystem", "KINDS")

T = TypeVar("T")

Kind = Literal["read", "mutate", "lifecycle"]

KINDS: dict[str, Kind] = {
    "name": "lifecycle",
    "apply": "lifecycle",
    "aclose": "lifecycle",
    "resolve": "read",
    "stat": "read",
    "lstat": "read",
    "read_text": "read",
    "stream_text": "read",
    "read_window": "read",
    "is_current": "read",
    "read_text_at": "read",
    "host_path": "read",
    "real_place": "read",
    "walk": "read",
    "stream_bytes": "read",
    "read_bytes": "read",
    "list_dir": "read",
    "iter_dir": "read",
    "workspace_roots": "read",
    "sandbox_mode": "read",
    "text_encodings": "read",
    "witnessed_mutations": "read",
    "root": "read",
    "cwd": "read",
    "write_text": "mutate",
    "write_bytes": "mutate",
    "edit_text": "mutate",
    "delete": "mutate",
    "rename": "mutate",
    "check_replaceable": "read",
    "check_creatable": "read",
    "check_renamable": "read",
    "narrowed": "read",
    "path_rules": "read",
    "search_host": "read",
}
"""every public member of ``FileSystem``, classified: a ``mutate`` member is recorded here (the
history tests fail for a seam member missing from this table); the ``check_*`` members change
nothing and pass through"""


class _Call:
    """The tool call a view records for: its step (one per call) and its metadata."""

    __slots__ = ("call_id", "owner", "step_key", "time", "tool")

    def __init__(self, owner: str, tool: str, call_id: str | None) -> None:
        self.owner = owner
        self.tool = tool
        self.call_id = call_id
        self.step_key = uuid.uuid4().hex
        self.time = time.time()

    def meta(self) -> CallMeta:
        return CallMeta(owner=self.owner, step_key=self.step_key, tool=self.tool, call_id=self.call_id,
                        time=self.time)


class HistoryFileSystem(FileSystem):
    """``HistoryFileSystem(inner, store)``: records the mutations of per-call views in ``store``.

    :param inner: the provider (owned: ``aclose`` closes it, and the store)
    :param store: where the history is kept (``MemoryHistoryStore``, ``SqliteHistoryStore``, …)
    :param max_file_bytes: files bigger than this are recorded without a copy
        (``store.DEFAULT_MAX_FILE_BYTES``)
    """

    name = "fs-history"

    def __init__(self, inner: FileSystem, store: HistoryStore, *, max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
                 _call: _Call | None = None, _owns: bool = True) -> None:
        if max_file_bytes < 0:
            raise ValueError("max_file_bytes must not be negative")
        self._inner = inner
        self._store = store
        self._max_file_bytes = max_file_bytes
        self._call = _call
        self._owns = _owns

    @classmethod
    def apply(cls, scope: "Scope", /, **config: Any) -> None:
        """Plugin entry: ``ctx.plugin(HistoryFileSystem, inner=provider, store=store)`` provides
        the wrapper as ``fs``; the scope's disposal closes it."""
        provider = cls(**config)
        scope.provide("fs", provider)
        scope.effect(provider.aclose)

    def __repr__(self) -> str:
        return f"HistoryFileSystem({self._inner!r})"

    # -- the wrapper's own members --------------------------------------------------------
    @property
    def inner(self) -> FileSystem:
        """The recorded provider."""
        return self._inner

    @property
    def store(self) -> HistoryStore:
        """Where the history is kept."""
        return self._store

    @property
    def max_file_bytes(self) -> int:
        """Files bigger than this are recorded without a copy."""
        return self._max_file_bytes

    def _view(self, inner: FileSystem, call: _Call | None) -> "HistoryFileSystem":
        return HistoryFileSystem(inner, self._store, max_file_bytes=self._max_file_bytes, _call=call, _owns=False)

    def for_tool_call(self, tool: str, owner: str | None, call_id: str | None = None) -> "HistoryFileSystem":
        """A view recording every mutation it makes as one step of ``owner`` (``tool``,
        ``call_id``); ``self`` when ``owner`` is ``None`` (a call with no session is recorded
        nowhere: no owner, no history)."""
        if owner is None:
            return self
        return self._view(self._inner, _Call(owner, tool, call_id))

    @property
    def recording_for(self) -> str | None:
        """The owner this view records for, or ``None`` (the wrapper itself)."""
        return self._call.owner if self._call is not None else None

    # the sandbox's per-call members, passed on when the inner provider confines
    @property
    def sandbox_mode(self) -> str | None:
        return self._inner.sandbox_mode

    @property
    def approval(self) -> Any:
        """The inner sandbox's approval callback, if any."""
        return getattr(self._inner, "approval", None)

    def for_call(self, mode: str, *, cwd: str | None = None, base: str | None = None) -> "HistoryFileSystem":
        """The inner sandbox's per-call view (``SandboxedFileSystem.for_call``), recorded as this
        wrapper records."""
        return self._view(self._inner.for_call(mode, cwd=cwd, base=base), self._call)  # type: ignore[attr-defined]

    async def canonical_base(self, cwd: str | None, *, signal: "AbortSignal | None" = None) -> str | None:
        """The inner sandbox's ``canonical_base``."""
        return await self._inner.canonical_base(cwd, signal=signal)  # type: ignore[attr-defined,no-any-return]

    @property
    def root(self) -> str | None:
        return getattr(self._inner, "root", None)

    @property
    def cwd(self) -> str | None:
        return getattr(self._inner, "cwd", None)

    async def aclose(self) -> None:
        if self._owns:
            try:
                await self._inner.aclose()
            finally:
                await self._store.aclose()

    # -- recording ------------------------------------------------------------------------
    def _mode(self, target: Target) -> int | None:
        host = self._inner.host_path(target)
        if host is None:
            return None
        try:
            return os.stat(host).st_mode & 0o7777
        except OSError:
            return None

    async def _before(self, target: Target, edit: EditRequest | None,
                      signal: "AbortSignal | None") -> tuple[Before, str | None, bytes | None] | None:
        """The before-state of ``target``, its version and bytes; ``None``: not a regular file
        (the mutation will refuse it)."""
        info = await self._inner.stat(target, signal=signal)
        if info is None:
            return Before.absent(), None, None
        if info.type != "file":
            return None
        cap = self._max_file_bytes
        over = f"{info.size if info.size is not None else 'more than ' + str(cap)} bytes, over the {cap}-byte cap"
        if info.size is None or info.size <= cap:
            try:
                data = await self._inner.read_bytes(target, max_bytes=cap, size=info.size, info=info, signal=signal)
            except NotImplementedError:
                return Before.unrestorable("the provider cannot read raw bytes"), info.version, None
            except FsError as err:
                if not str(err).endswith("-byte limit"):  # grew past the cap since the stat: as over it
                    return Before.unrestorable(str(err)), info.version, None
            else:
                mode = await anyio.to_thread.run_sync(self._mode, target) if self._inner.host_path(target) else None
                return Before.blob(digest_of(data), len(data), mode), info.version, data
        if edit is not None and not edit.replace_all:
            return Before.replacement(edit.old_string, edit.new_string), info.version, None
        return Before.unrestorable(over), info.version, None

    async def _kept(self, target: Target, edit: EditRequest | None,
                    data: bytes | None) -> tuple[Before, bytes | None]:
        """What restores ``data`` (the bytes a witnessed mutation replaces; ``None``: no file),
        and the copy to keep: the bytes up to ``max_file_bytes``, a literal edit's replacement
        over it, else not restorable."""
        if data is None:
            return Before.absent(), None
        cap = self._max_file_bytes
        if len(data) <= cap:
            mode = await anyio.to_thread.run_sync(self._mode, target) if self._inner.host_path(target) else None
            return Before.blob(digest_of(data), len(data), mode), data
        if edit is not None and not edit.replace_all:
            return Before.replacement(edit.old_string, edit.new_string), None
        return Before.unrestorable(f"{len(data)} bytes, over the {cap}-byte cap"), None

    async def _begin(self, meta: CallMeta, intent: Intent, blob: bytes | None) -> int:
        """``store.begin``; a store that cannot record refuses the mutation (``FS_IO_ERROR``)."""
        try:
            return await self._store.begin(meta, intent, blob)
        except Exception as exc:  # not recorded: not made either (a store's failure, whatever its kind)
            verb: Verb = "delete" if intent.op == "delete" else "rename" if intent.op == "rename" else "write"
            raise io_error(verb, intent.path, f"the history could not record the change ({exc})", cause=exc) from exc

    async def _settle(self, ids: list[int], run: Callable[[], Awaitable[T]],
                      after: Callable[[T], tuple[str, str | None]]) -> T:
        """Run the mutation whose changes ``ids`` were begun; complete them, or abandon them
        when it is refused (``FsError``: it changed nothing)."""
        call = self._call
        assert call is not None
        try:
            result = await run()
        except FsError:
            with anyio.CancelScope(shield=True):
                for change_id in ids:
                    await self._store.abandon(call.owner, change_id)
            raise
        version, digest = after(result)
        with anyio.CancelScope(shield=True):
            for change_id in ids:
                await self._store.complete(call.owner, change_id, version, digest)
        return result

    async def _witnessed(self, op: str, target: Target, edit: EditRequest | None, run: Callable[[], Awaitable[T]],
                         after: Callable[[T], tuple[str, str | None]]) -> T:
        """A mutation of a provider that witnesses it (``fs.witness``): the change is begun with
        the bytes the provider read and is about to replace, and the digest of those it puts."""
        call = self._call
        assert call is not None
        meta = call.meta()
        ids: list[int] = []

        async def seen(data: bytes | None, before_version: str | None, written: bytes) -> None:
            if ids:  # a retry on fresher content: the earlier attempt replaced nothing
                with anyio.CancelScope(shield=True):
                    await self._store.abandon(call.owner, ids.pop())
            before, blob = await self._kept(target, edit, data)
            ids.append(await self._begin(meta, Intent(op=op, key=target.key, path=target.display_path, before=before,
                                                      before_version=before_version,
                                                      after_digest=digest_of(written)), blob))

        with witnessing(seen):
            return await self._settle(ids, run, after)

    async def _one(self, op: str, target: Target, edit: EditRequest | None, signal: "AbortSignal | None",
                   run: Callable[[], Awaitable[T]], after: Callable[[T], tuple[str, str | None]], member: str) -> T:
        if self._call is None:
            return await run()
        if member in self._inner.witnessed_mutations:
            return await self._witnessed(op, target, edit, run, after)
        found = await self._before(target, edit, signal)
        if found is None:
            return await run()
        before, version, blob = found
        intent = Intent(op=op, key=target.key, path=target.display_path, before=before, before_version=version)
        return await self._settle([await self._begin(self._call.meta(), intent, blob)], run, after)

    # -- recorded mutations -----------------------------------------------------------------
    async def write_text(self, target: Target, content: str, expected: WriteIntent | None = None, *,
                         signal: "AbortSignal | None" = None) -> WriteOutcome:
        return await self._one("write", target, None, signal,
                               lambda: self._inner.write_text(target, content, expected, signal=signal),
                               lambda out: (out.version, None), "write_text")

    async def write_bytes(self, target: Target, data: bytes, expected: WriteIntent | None = None, *,
                          mode: int | None = None, signal: "AbortSignal | None" = None) -> Version:
        return await self._one("write", target, None, signal,
                               lambda: self._inner.write_bytes(target, data, expected, mode=mode, signal=signal),
                               lambda version: (version, digest_of(data)), "write_bytes")

    async def edit_text(self, target: Target, edit: EditRequest, expected: EditIntent | None = None, *,
                        signal: "AbortSignal | None" = None) -> EditOutcome:
        return await self._one("edit", target, edit, signal,
                               lambda: self._inner.edit_text(target, edit, expected, signal=signal),
                               lambda out: (out.version, None), "edit_text")

    async def delete(self, target: Target, expected: DeleteIntent | None = None, *,
                     signal: "AbortSignal | None" = None) -> DeleteOutcome:
        return await self._one("delete", target, None, signal,
                               lambda: self._inner.delete(target, expected, signal=signal),
                               lambda out: (out.version, None), "delete")

    async def rename(self, source: Target, dest: Target, expected: RenameIntent | None = None, *,
                     signal: "AbortSignal | None" = None) -> RenameOutcome:
        def run() -> Awaitable[RenameOutcome]:
            return self._inner.rename(source, dest, expected, signal=signal)

        if self._call is None:
            return await run()
        found = await self._before(source, None, signal)
        if found is None:
            return await run()
        before, version, blob = found
        intent = Intent(op="rename", key=source.key, path=source.display_path, before=before, before_version=version,
                        dest_key=dest.key, dest_path=dest.display_path)
        return await self._settle([await self._begin(self._call.meta(), intent, blob)], run,
                                  lambda out: (out.version, None))

    # -- passed on ------------------------------------------------------------------------
    async def check_replaceable(self, target: Target, verb: "Verb", *, size: int | None = None,
                                signal: "AbortSignal | None" = None) -> None:
        await self._inner.check_replaceable(target, verb, size=size, signal=signal)

    async def check_creatable(self, target: Target, *, size: int | None = None,
                              signal: "AbortSignal | None" = None) -> None:
        await self._inner.check_creatable(target, size=size, signal=signal)

    async def check_renamable(self, source: Target, dest: Target, *, signal: "AbortSignal | None" = None) -> None:
        await self._inner.check_renamable(source, dest, signal=signal)

    def workspace_roots(self) -> tuple[str, ...]:
        return self._inner.workspace_roots()

    @property
    def text_encodings(self) -> tuple[str, ...]:
        return self._inner.text_encodings

    @property
    def witnessed_mutations(self) -> frozenset[str]:
        """None: this wrapper takes its inner provider's witness itself (``fs.witness``)."""
        return frozenset()

    def narrowed(self, roots: Sequence[str]) -> "HistoryFileSystem | None":
        """``inner``'s narrowed view (DEVIATIONS M3), recorded into the same store."""
        view = self._inner.narrowed(roots)
        return None if view is None else self._view(view, self._call)

    async def resolve(self, path: str, *, cwd: str | None = None, signal: "AbortSignal | None" = None) -> Target:
        return await self._inner.resolve(path, cwd=cwd, signal=signal)

    async def stat(self, target: Target, *, signal: "AbortSignal | None" = None) -> Info | None:
        return await self._inner.stat(target, signal=signal)

    async def lstat(self, path: str, *, cwd: str | None = None, signal: "AbortSignal | None" = None) -> PathInfo | None:
        return await self._inner.lstat(path, cwd=cwd, signal=signal)

    async def read_text(self, target: Target, *, signal: "AbortSignal | None" = None) -> str:
        return await self._inner.read_text(target, signal=signal)

    def stream_text(self, target: Target, *, signal: "AbortSignal | None" = None) -> AsyncIterator[str]:
        return self._inner.stream_text(target, signal=signal)

    async def read_window(self, target: Target, window: "ReadWindow", *, info: Info, streamed: bool = False,
                          signal: "AbortSignal | None" = None) -> "WindowResult | None":
        return await self._inner.read_window(target, window, info=info, streamed=streamed, signal=signal)

    async def is_current(self, target: Target, version: Version, *, signal: "AbortSignal | None" = None) -> bool:
        return await self._inner.is_current(target, version, signal=signal)

    async def read_text_at(self, target: Target, version: Version, *, info: Info | None = None,
                           signal: "AbortSignal | None" = None) -> str | None:
        return await self._inner.read_text_at(target, version, info=info, signal=signal)

    def host_path(self, target: Target) -> str | None:
        return self._inner.host_path(target)

    async def real_place(self, target: Target, *, signal: "AbortSignal | None" = None) -> str:
        return await self._inner.real_place(target, signal=signal)

    async def path_rules(self, *, signal: "AbortSignal | None" = None) -> "RuleView | None":
        return await self._inner.path_rules(signal=signal)

    def search_host(self) -> "SearchHost | None":
        return self._inner.search_host()

    def walk(self, target: Target, *, signal: "AbortSignal | None" = None) -> AsyncIterator[WalkEntry]:  # type: ignore[override]
        return self._inner.walk(target, signal=signal)

    def stream_bytes(self, target: Target, *, signal: "AbortSignal | None" = None) -> AsyncIterator[bytes]:
        return self._inner.stream_bytes(target, signal=signal)

    async def read_bytes(self, target: Target, *, max_bytes: int, size: int | None = None, info: Info | None = None,
                         signal: "AbortSignal | None" = None) -> bytes:
        return await self._inner.read_bytes(target, max_bytes=max_bytes, size=size, info=info, signal=signal)

    async def list_dir(self, target: Target, *, signal: "AbortSignal | None" = None) -> list[DirEntry]:
        return await self._inner.list_dir(target, signal=signal)

    def iter_dir(self, target: Target, *, signal: "AbortSignal | None" = None) -> AsyncIterator[list[DirEntry]]:  # type: ignore[override]
        return self._inner.iter_dir(target, signal=signal)
