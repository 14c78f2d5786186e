"""``LocalFileSystem``: the host-disk provider (REFERENCE-SPEC §2), an async shell over ``fsio``.

Blocking I/O runs in worker threads under a dedicated capacity limiter. A mutation holds
the target's in-process lock and its cross-process lock (A4) for the whole critical
section, which runs in one go; once started it is never abandoned (a cancelled caller
waits for it), so an abort never hides a half-done write. A cross-process lock held by
another process is waited for in the kernel's queue (fair to a process that mutates back to
back) from threads of their own (never the I/O threads), and an abort or a cancellation
ends the wait before anything changed.

Cheap calls: a worker-thread hop costs far more than a metadata system
call, so by default ``resolve``, ``stat``, ``is_current`` and the up-front checks
(``check_replaceable``, ``check_creatable``) run on the event loop thread (a
version that needs a content digest of a file above ``inline_read_max`` bytes still goes to
a thread), and so do ``read_window`` and ``read_text`` for files of at most
``inline_read_max`` bytes.
Mutations of at most ``inline_write_max`` bytes (old size and a bound on the new one) run
there too while the disk is fast and no other mutation is under way: the critical section of
one is two ``fsync`` s and a rename, and the hop would add about a third to it; mutations side by
side go to worker threads, where their ``fsync`` s overlap (a journaling filesystem commits them
together). After a mutation that took
``SLOW_MUTATION_S`` or longer (a slow or busy disk), mutations run in worker threads for
``SLOW_DISK_COOLDOWN_S``. Set ``inline_probes=False``, ``inline_read_max=0`` and
``inline_write_max=0`` to run everything in threads (for slow or network filesystems whose
metadata calls may block).

Windowed reads (``read_window``) scan bytes (``scan``) and keep a small LRU of line indexes
(``line_index``) for files of at least ``index_min_size`` bytes, so paging through a huge
unchanged file costs about one scan in total.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import os
import stat as stat_mod
import time
from collections.abc import AsyncIterator, Callable, Sequence
from typing import ClassVar

import anyio
import anyio.lowlevel
import anyio.to_thread

from ..core.signal import run_under_signal
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
    Verb,
    Version,
    WRITE_MAX_SIZE,
    WalkEntry,
    WindowResult,
    WriteIntent,
    WriteOutcome,
    aborted,
    check_abort,
    check_size,
    outside_workspace_rename,
    permission_denied,
)
from ..fs.legacy_text import check_encodings
from . import containment, files, fsio, moves, versions
from .line_index import DEFAULT_CACHED_FILES, IndexCache
from .recent_writes import RecentWrites
from .locks import LockWait, ProcessLocks, TargetLocks
from .reads import read_window_file
from .roots import MAX_ROOTS, containment_roots, disjoint
from .rules import STREAM_EDIT_MIN_SIZE, LocalRules
from .walk import RawReader, walk_batches

__all__ = (
    "LocalFileSystem",
    "MAX_ROOTS",
    "SLOW_DISK_COOLDOWN_S",
    "SLOW_MUTATION_S",
)

SLOW_MUTATION_S = 0.005
"""a mutation that took at least this long (seconds) sends the next ones to worker threads"""

SLOW_DISK_COOLDOWN_S = 30.0
"""for this long (seconds) after a slow mutation, mutations run in worker threads"""

_ABORT_POLL_S = 0.01
"""how often a wait for a cross-process lock held elsewhere looks at the abort signal"""


def _may_change_names_in(directory: str) -> bool:
    """Whether the caller may add or remove names in ``directory`` (the kernel's answer for the
    caller's effective ids: root may, others need write and search permission)."""
    return os.access(directory, os.W_OK | os.X_OK, effective_ids=os.access in os.supports_effective_ids)

class LocalFileSystem(FileSystem):
    """The host filesystem as a ``FileSystem`` provider.

    :param cwd: default base for relative paths (absolute; default: the process cwd at
        construction). A resolution default, not a sandbox.
    :param profile: ``default`` keeps a file's BOM and line endings (DEVIATIONS D1, D2, D4),
        gives new files the process's default mode (D3), says where a file stops being text
        (D6) and writes through a dangling symlink to its target (D12); ``reference`` is
        byte-exact
    :param root: containment: every path must stay inside this directory, lexically and after
        resolving symlinks, or the call fails ``FS_PERMISSION_DENIED``; operations walk from
        the root with ``O_NOFOLLOW`` so a symlink swapped in later cannot escape. ``None``
        (default): no containment, as in the reference. It must be an existing directory
        (its real path is taken here). The one-root spelling of ``roots=[root]``.
    :param roots: containment to several directories (DEVIATIONS D28), at most ``MAX_ROOTS``,
        none inside another (nor equal, also through a symlinked spelling): a path must stay
        inside one of them, and each resolution is confined to the root it starts in (a
        symlink from one root into another resolves in that root, D36); a rename
        never crosses roots. The default ``cwd`` is the first root; a ``cwd`` outside every
        root is refused. Refusals name every root, in this order.
    :param lock_dir: directory of the cross-process lock files (A4); default per user
    :param max_threads: worker threads this provider may use at once
    :param inline_probes: run ``resolve``, ``stat``, ``is_current``, ``check_replaceable``
        and ``check_creatable`` on the event loop thread (metadata system calls only; see the
        module docstring)
    :param inline_read_max: ``read_window`` of a file of at most this many bytes (by the
        caller's stat), and ``read_text`` of one (by its descriptor's ``fstat``), run on the
        event loop thread; 0: always in a worker thread
    :param inline_write_max: a write or edit of a file of at most this many bytes (its old
        size, and a bound on its new size) runs on the event loop thread while the disk is
        fast (see the module docstring); 0: always in a worker thread
    :param index_min_size: files of at least this many bytes get a line index
    :param index_files: how many files' line indexes are kept (LRU; 0 disables indexing)
    :param stream_edit_min_size: edits of files of at least this many bytes stream through
        the matcher in bounded memory and return no diff basis (``before``/``after`` are
        ``None``)
    :param write_max_size: the largest file (bytes) a write or an edit may store; a bigger
        result fails ``FS_IO_ERROR`` before it is built (DEVIATIONS D16)
    :param encodings: legacy encodings besides UTF-8 (DEVIATIONS F7, docs/ENCODINGS.md): files
        below ``stream_edit_min_size`` are edited and rewritten in them, byte for byte outside
        what changes
    :raises ValueError: a root is not an existing directory (``LocalFileSystem: root <p> is not a
        directory``); both ``root`` and ``roots``; no root in ``roots``; more than ``MAX_ROOTS``
        (``LocalFileSystem: at most 64 roots``); two roots overlap (``LocalFileSystem: roots <A>
        and <B> overlap``); several roots and a ``cwd`` outside all of them
        (``LocalFileSystem: cwd <c> is outside every root``)
    """

    name: ClassVar[str] = "fs-local"

    def __init__(
        self,
        *,
        cwd: str | os.PathLike[str] | None = None,
        profile: Profile | str | None = None,
        root: str | os.PathLike[str] | None = None,
        roots: Sequence[str | os.PathLike[str]] | None = None,
        lock_dir: str | None = None,
        max_threads: int = 16,
        inline_probes: bool = True,
        inline_read_max: int = 128 * 1024,
        inline_write_max: int = 128 * 1024,
        index_min_size: int = files.STREAM_CHUNK,
        index_files: int = DEFAULT_CACHED_FILES,
        stream_edit_min_size: int = STREAM_EDIT_MIN_SIZE,
        write_max_size: int = WRITE_MAX_SIZE,
        encodings: Sequence[str] = (),
    ) -> None:
        if root is not None and roots is not None:
            raise ValueError("LocalFileSystem: give root= or roots=, not both")
        given = list(roots) if roots is not None else [root] if root is not None else []
        shown = [os.path.abspath(os.fspath(r)) for r in given]
        if roots is not None and not shown:
            raise ValueError("LocalFileSystem: roots= names no root (root=None serves the whole disk)")
        self.roots: tuple[str, ...] = tuple(shown)
        """the containment roots as configured (absolute), in order; empty: no containment"""
        self.root = shown[0] if shown else None
        """the first containment root as configured (``None`` without containment)"""
        self.cwd = os.path.abspath(os.fspath(cwd)) if cwd is not None else self.root or os.getcwd()
        walk_roots = containment_roots(shown) if roots is not None or root is not None else None
        if walk_roots is not None and len(walk_roots) > 1 and not any(r.contains(self.cwd) for r in walk_roots):
            raise ValueError(f"LocalFileSystem: cwd {self.cwd} is outside every root")
        self.profile = Profile.parse(profile)
        self.rules = LocalRules.for_profile(
            self.profile,
            roots=walk_roots,
            stream_edit_min_size=stream_edit_min_size,
            write_max_size=write_max_size,
            encodings=check_encodings(encodings),
        )
        self._limiter = anyio.CapacityLimiter(max_threads)
        self.locks = TargetLocks()
        self.process_locks = ProcessLocks(lock_dir)
        self._lock_waits = anyio.CapacityLimiter(max(64, max_threads))  # threads blocked on a flock
        self.inline_probes = inline_probes
        self.inline_read_max = max(0, inline_read_max)
        self.inline_write_max = max(0, inline_write_max)
        self._inline_after = 0.0  # time.monotonic() before which mutations stay off this thread
        self._mutating = 0  # mutations holding their locks (more than one: each in a worker thread)
        self.index_min_size = index_min_size
        self.indexes = IndexCache(index_files)
        self.recent = RecentWrites(max_size=min(self.inline_write_max, 128 * 1024))
        """the bytes of the last small writes, under the versions reported (A5: ``recent``)"""
        self._narrowed = False  # a view of ``narrowed``

    async def _run(self, func, *args, **kwargs):  # type: ignore[no-untyped-def]
        return await anyio.to_thread.run_sync(lambda: func(*args, **kwargs), limiter=self._limiter)

    async def resolve(self, path: str, *, cwd: str | None = None, signal: AbortSignal | None = None) -> Target:
        check_abort(signal, "resolve")
        base = self._base(cwd)
        if self.inline_probes:
            return fsio.resolve_target(path, base, signal=signal, rules=self.rules)
        return await self._run(fsio.resolve_target, path, base, signal=signal, rules=self.rules)

    def _base(self, cwd: str | None) -> str:
        """The base of relative paths: ``cwd``, else the provider's; in a narrowed view, a
        ``cwd`` outside the view's roots (the session's, set before the client narrowed it)
        gives way to the view's own, its first root (DEVIATIONS M3)."""
        if not cwd:
            return self.cwd
        if self._narrowed and not self.rules.contains(cwd):
            return self.cwd
        return cwd

    async def stat(self, target: Target, *, signal: AbortSignal | None = None) -> Info | None:
        check_abort(signal, "stat")
        if self.inline_probes:
            probed = files.probe(target.key, "stat", target.display_path, root=self.rules.root_for(target.key))
            if probed is None:
                found = None
            elif self._digest_is_costly(probed.st):
                found = await self._run(probed.info)
            else:
                found = probed.info()
        else:
            found = await self._run(
                lambda: _info(files.probe(target.key, "stat", target.display_path, root=self.rules.root_for(target.key)))
            )
        check_abort(signal, "stat")
        return found

    def _digest_is_costly(self, st: os.stat_result) -> bool:
        """Would minting this file's version read more than ``inline_read_max`` bytes (a
        racily-clean version carries a content digest, DEVIATIONS A5)?"""
        return (
            stat_mod.S_ISREG(st.st_mode)
            and st.st_size > self.inline_read_max
            and time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) < versions.RACY_WINDOW_NS
        )

    async def lstat(self, path: str, *, cwd: str | None = None, signal: AbortSignal | None = None) -> PathInfo | None:
        check_abort(signal, "lstat")
        display = fsio.display_path(path, self._base(cwd), self.rules)
        found = await self._run(files.probe_no_follow, display, display, root=self.rules.root_for(display))
        check_abort(signal, "lstat")
        return found

    async def read_text(self, target: Target, *, signal: AbortSignal | None = None) -> str:
        """§2.5 ``readText`` (``fsio.read_text``): a file of at most ``inline_read_max`` bytes
        (by the descriptor's ``fstat``) is read on the event loop thread, a bigger one in a
        worker thread. See ``FileSystem.read_text``."""
        if self.inline_read_max > 0:
            text = fsio.read_text_within(target.key, target.display_path, signal=signal, rules=self.rules,
                                         max_size=self.inline_read_max)
            if text is not None:
                return text
        return await self._run(fsio.read_text, target.key, target.display_path,  # type: ignore[no-any-return]
                               signal=signal, rules=self.rules)

    async def read_text_at(self, target: Target, version: Version, *, info: Info | None = None,
                           signal: AbortSignal | None = None) -> str | None:
        """The text of exactly ``version`` or ``None`` (``fsio.read_text_at``: the version is
        checked on the descriptor the bytes are read through, so no ``is_current`` stat
        follows); on the event loop thread for a file of at most ``inline_read_max`` bytes, as
        ``read_text``. See ``FileSystem.read_text_at``."""
        if self.inline_read_max > 0:
            found = fsio.read_text_at(target.key, target.display_path, version, signal=signal, rules=self.rules,
                                      max_size=self.inline_read_max)
            if found is not fsio.BIGGER:
                return found  # type: ignore[return-value]
        return await self._run(fsio.read_text_at, target.key, target.display_path,  # type: ignore[no-any-return]
                               version, signal=signal, rules=self.rules)

    async def stream_text(self, target: Target, *, signal: AbortSignal | None = None) -> AsyncIterator[str]:
        reader = fsio.StreamReader(target.key, target.display_path, signal=signal, rules=self.rules)
        try:
            while True:
                chunk = await self._run(reader.next_chunk)
                if chunk is None:
                    return
                yield chunk
        finally:
            reader.close()

    async def read_window(
        self,
        target: Target,
        window: ReadWindow,
        *,
        info: Info,
        streamed: bool = False,
        signal: AbortSignal | None = None,
    ) -> WindowResult:
        """Window the file on bytes (``scan``), with a line index for big files; on the event
        loop thread for files of at most ``inline_read_max`` bytes. See ``FileSystem.read_window``."""
        indexes = self.indexes if self.indexes.capacity > 0 else None
        size = info.size if info.size is not None else -1
        if 0 <= size <= self.inline_read_max:
            return read_window_file(target, window, info, streamed=streamed, signal=signal, rules=self.rules,
                                    indexes=indexes, index_min_size=self.index_min_size)
        return await self._run(read_window_file, target, window, info, streamed=streamed,  # type: ignore[no-any-return]
                               signal=signal, rules=self.rules, indexes=indexes, index_min_size=self.index_min_size)

    async def list_dir(self, target: Target, *, signal: AbortSignal | None = None) -> list[DirEntry]:
        return await self._run(fsio.list_directory, target, signal=signal, rules=self.rules)

    @property
    def text_encodings(self) -> tuple[str, ...]:
        """The deployment's legacy encodings (``TextRules.encodings``, F7). See
        ``FileSystem.text_encodings``."""
        return self.rules.encodings

    async def iter_dir(self, target: Target, *, signal: AbortSignal | None = None) -> AsyncIterator[list[DirEntry]]:
        """``fsio.scan_directory``'s batches, each read and stat'ed in a worker thread while
        the directory is read: one batch held at a time. See ``FileSystem.iter_dir``."""
        batches = fsio.scan_directory(target, signal=signal, rules=self.rules)
        try:
            while True:
                batch = await self._run(next, batches, None)
                if batch is None:
                    return
                yield batch
        finally:
            await self._run(batches.close)

    def workspace_roots(self) -> tuple[str, ...]:
        """Every containment root as configured, in order (DEVIATIONS D28); empty without
        containment. See ``FileSystem.workspace_roots``."""
        return tuple(root.shown for root in self.rules.roots or ())

    def narrowed(self, roots: Sequence[str]) -> LocalFileSystem:
        """A view confined to ``roots`` (display paths inside this provider's roots), sharing
        the locks, threads, cross-process locks and line indexes; each root's real path is
        found without leaving the provider root it lies in (``containment.real_path_in``), so a
        symlink out cannot widen the view, and each view root keeps the provider root as its
        anchor (``containment.Root.anchor``): one swapped for a symlink later leads nowhere. Its ``cwd`` stays, or is the first root when
        outside them. See ``FileSystem.narrowed``.

        A provider without containment narrows to any directories: each root's real path is
        its ``realpath`` now, and the view's walks start there (the sandbox fence confines a
        mutation to the writable place that holds it this way, ``fs_sandbox.filesystem``).

        :raises ValueError: ``LocalFileSystem: root <p> is outside every root`` (also through a
            symlink out of its provider root), ``… is not found``, ``… is not a directory``;
            roots that overlap (``roots.disjoint``)
        """
        found = self._view_roots_anywhere(roots) if self.rules.roots is None else self._view_roots_within(roots)
        named = tuple(path for _real, path, _anchor in found) if len(found) > 1 else ()
        view_roots = tuple(containment.Root(real, path, named, anchor) for real, path, anchor in found)
        disjoint(view_roots)
        view = copy.copy(self)
        view._narrowed = True
        view.rules = dataclasses.replace(self.rules, roots=view_roots)
        view.roots = tuple(roots)
        view.root = view.roots[0] if view.roots else None
        if view_roots and not any(root.contains(self.cwd) for root in view_roots):
            view.cwd = view_roots[0].shown
        return view

    def _view_roots_within(self, roots: Sequence[str]) -> list[tuple[str, str, containment.Root | None]]:
        """``(real, shown, anchor)`` of each view root inside this provider's roots (``narrowed``)."""
        found: list[tuple[str, str, containment.Root | None]] = []
        for path in roots:
            within = self.rules.root_for(path)
            if within is None or not within.contains(path):
                raise ValueError(f"LocalFileSystem: root {path} is outside every root")
            try:
                real = containment.real_path_in(path, within, strict=True)
                is_dir = stat_mod.S_ISDIR(containment.stat_in(real, root=within).st_mode)
            except containment.Escape:
                raise ValueError(f"LocalFileSystem: root {path} is outside every root") from None
            except (FileNotFoundError, NotADirectoryError):
                raise ValueError(f"LocalFileSystem: root {path} is not found") from None
            except OSError as exc:
                raise ValueError(f"LocalFileSystem: root {path} is not usable: {os.strerror(exc.errno or 0)}") from None
            if not is_dir:
                raise ValueError(f"LocalFileSystem: root {path} is not a directory")
            found.append((real, path, within.anchor or within))
        return found

    @staticmethod
    def _view_roots_anywhere(roots: Sequence[str]) -> list[tuple[str, str, containment.Root | None]]:
        """``(real, shown, None)`` of each view root of a provider without containment: its
        ``realpath`` now (``narrowed``)."""
        found: list[tuple[str, str, containment.Root | None]] = []
        for path in roots:
            try:
                real = os.path.realpath(path, strict=True)
                is_dir = stat_mod.S_ISDIR(os.stat(real).st_mode)
            except (FileNotFoundError, NotADirectoryError):
                raise ValueError(f"LocalFileSystem: root {path} is not found") from None
            except OSError as exc:
                raise ValueError(f"LocalFileSystem: root {path} is not usable: {os.strerror(exc.errno or 0)}") from None
            if not is_dir:
                raise ValueError(f"LocalFileSystem: root {path} is not a directory")
            found.append((real, path, None))
        return found

    def host_path(self, target: Target) -> str:
        """The target's real path on this disk (its key). See ``FileSystem.host_path``."""
        return target.key

    async def walk(self, target: Target, *, signal: AbortSignal | None = None) -> AsyncIterator[WalkEntry]:
        """Files and directories below ``target`` with ``st_mtime_ns``, never following a
        symlink (``walk.walk_batches``). See ``FileSystem.walk``."""
        batches = walk_batches(target, root=self.rules.root_for(target.key), signal=signal)
        try:
            while True:
                batch = await self._run(next, batches, None)
                if batch is None:
                    return
                for entry in batch:
                    yield entry
        finally:
            await self._run(batches.close)

    async def stream_bytes(self, target: Target, *, signal: AbortSignal | None = None) -> AsyncIterator[bytes]:
        """The file's raw bytes in 1 MiB chunks (opened beneath the root, never a FIFO's
        blocking open). See ``FileSystem.stream_bytes``."""
        reader = RawReader(target, root=self.rules.root_for(target.key), signal=signal)
        try:
            while True:
                chunk = await self._run(reader.next_chunk)
                if not chunk:
                    return
                yield chunk
        finally:
            reader.close()

    async def write_text(
        self,
        target: Target,
        content: str,
        expected: WriteIntent | None = None,
        *,
        signal: AbortSignal | None = None,
    ) -> WriteOutcome:
        async with self.locks.hold(target.key):
            return await self._mutate(fsio.write_file, target, content, expected, signal,
                                      new_size=lambda _old: 4 * len(content), stage="write")

    async def write_bytes(self, target: Target, data: bytes, expected: WriteIntent | None = None, *,
                          mode: int | None = None, signal: AbortSignal | None = None) -> Version:
        """``FileSystem.write_bytes``: ``write_text``'s guards, lock and atomic durable write
        (``fsio.write_raw``), of exactly ``data``."""
        async with self.locks.hold(target.key):
            return await self._mutate(fsio.write_raw, target, (data, mode), expected, signal,  # type: ignore[no-any-return]
                                      new_size=lambda _old: len(data), stage="write")

    async def edit_text(
        self,
        target: Target,
        edit: EditRequest,
        expected: EditIntent | None = None,
        *,
        signal: AbortSignal | None = None,
    ) -> EditOutcome:
        async with self.locks.hold(target.key):
            return await self._mutate(fsio.edit_file, target, edit, expected, signal,
                                      new_size=_edit_size_bound(edit), stage="edit")

    async def delete(
        self,
        target: Target,
        expected: DeleteIntent | None = None,
        *,
        signal: AbortSignal | None = None,
    ) -> DeleteOutcome:
        """Unlink the file under its locks, then fsync its directory (``moves.delete_file``);
        see ``FileSystem.delete``. A name that is a symbolic link is refused."""
        async with self._holding([target.key], signal, "delete"):
            return await self._run(moves.delete_file, target, expected, signal=signal,  # type: ignore[no-any-return]
                                   rules=self.rules)

    async def rename(
        self,
        source: Target,
        dest: Target,
        expected: RenameIntent | None = None,
        *,
        signal: AbortSignal | None = None,
    ) -> RenameOutcome:
        """``renameat2(RENAME_NOREPLACE)`` (or link + unlink) under both targets' locks, then
        fsync both directories (``moves.rename_file``); see ``FileSystem.rename``."""
        async with self._holding([source.key, dest.key], signal, "rename"):
            return await self._run(moves.rename_file, source, dest, expected, signal=signal,  # type: ignore[no-any-return]
                                   rules=self.rules)

    async def is_current(self, target: Target, version: Version, *, signal: AbortSignal | None = None) -> bool:
        """The A5-aware comparison the guards make (a token minted in the racy window carries a
        content digest, so the same unchanged file may have two token strings)."""
        check_abort(signal, "stat")

        def current() -> bool:
            found = files.probe(target.key, "stat", target.display_path, root=self.rules.root_for(target.key))
            return found is not None and found.type == "file" and found.matches(version, content=self.rules.same_bytes)

        if self.inline_probes and versions.split_token(version)[1] is None:
            return current()  # stat fields only: no read
        return await self._run(current)  # type: ignore[no-any-return]

    async def check_replaceable(self, target: Target, verb: Verb, *, size: int | None = None,
                                signal: AbortSignal | None = None) -> None:
        """The refusals of ``moves`` and ``fsio`` that do not depend on the content, with their
        texts: a delete or rename of a name that is a symlink (E17, both profiles), or out of a
        directory the caller may not write (``access(W_OK | X_OK)``); a write, edit or delete
        of a read-only file (D17, default profile); a ``size`` over ``write_max_size`` (D16). A
        missing or non-regular file passes: the mutation says what that means."""
        check_abort(signal, "stat")
        display = target.display_path
        check_size(size, display, self.rules.write_max_size)
        names = verb in ("delete", "rename")
        contents = self.rules.keep_read_only and verb in ("write", "edit", "delete")
        if not names and not contents:
            return

        def check() -> None:
            if names:
                moves.refuse_symlinked_name(display, verb)  # type: ignore[arg-type]
                if not _may_change_names_in(os.path.dirname(target.key)):
                    raise permission_denied(verb, display)
            found = files.probe(target.key, "stat", display, root=self.rules.root_for(target.key)) if contents else None
            if found is not None and found.type == "file":
                files.keep_read_only(found, verb, display, self.rules)  # type: ignore[arg-type]

        if self.inline_probes:
            check()  # metadata system calls only, as ``stat``
        else:
            await self._run(check)

    async def check_creatable(self, target: Target, *, size: int | None = None,
                              signal: AbortSignal | None = None) -> None:
        """D16 (``size``) and the nearest existing directory above ``target``: the caller must
        be able to add a name to it (``access(W_OK | X_OK)``), else ``cannot write "<dp>":
        permission denied``, as the write would fail (see ``FileSystem.check_creatable``)."""
        check_abort(signal, "stat")
        display = target.display_path
        check_size(size, display, self.rules.write_max_size)

        def check() -> None:
            directory = os.path.dirname(target.key)
            while not os.path.lexists(directory) and os.path.dirname(directory) != directory:
                directory = os.path.dirname(directory)  # the write makes the missing ones
            if os.path.isdir(directory) and not _may_change_names_in(directory):
                raise permission_denied("write", display)

        if self.inline_probes:
            check()  # metadata system calls only, as ``stat``
        else:
            await self._run(check)

    async def check_renamable(self, source: Target, dest: Target, *, signal: AbortSignal | None = None) -> None:
        """A rename never crosses roots (DEVIATIONS D28): the error ``rename`` would raise,
        without I/O. See ``FileSystem.check_renamable``."""
        check_abort(signal, "stat")
        root = self.rules.root_for(source.key)
        if root is not None and self.rules.root_for(dest.key) is not root:
            raise outside_workspace_rename(source.display_path, dest.display_path, root.shown)

    @contextlib.asynccontextmanager
    async def _holding(self, keys: list[str], signal: AbortSignal | None, stage: Stage):  # type: ignore[no-untyped-def]
        """Hold the in-process locks of ``keys`` (in key order) and their cross-process locks
        (in lock-file order, each lock file once), so two multi-target mutations never wait
        for each other in a cycle."""
        async with contextlib.AsyncExitStack() as stack:
            for key in sorted(set(keys)):
                await stack.enter_async_context(self.locks.hold(key))
            stripes = {self.process_locks.path_for(key): key for key in keys}
            for path in sorted(stripes):
                fd = await self._acquire(stripes[path], signal, stage)
                stack.callback(self.process_locks.release, fd)
            yield

    async def _mutate(self, operation, target: Target, payload, expected, signal, *,  # type: ignore[no-untyped-def]
                      new_size: Callable[[int], int], stage: Stage):
        """Run ``operation`` (``fsio.write_file`` / ``edit_file``) holding the cross-process
        lock: on this thread when small, the disk fast and no other mutation of this provider
        under way, else in a worker thread (mutations side by side — a patch's updates, several
        agents' edits — overlap there, and the disk commits their ``fsync`` s together).

        :param new_size: a bound on the new content's size in bytes, given the old size
        """
        fd = await self._acquire(target.key, signal, stage)
        self._mutating += 1
        try:
            # the operation's first step, made here under its locks: its size says where it runs
            existing = self._probe(target, stage)
            small = self._small(target, existing, new_size)  # only small mutations tell how fast the disk is
            if small and time.monotonic() >= self._inline_after:
                # Calls started together must all reach their intent before one of them mutates,
                # as they do around a thread hop: concurrent edits are one-wins/one-stale (§2.9).
                await anyio.lowlevel.checkpoint()
                if self._mutating == 1:  # alone: side by side ones go to threads, their fsyncs overlap
                    started = time.monotonic()
                    try:
                        return operation(target, payload, expected, signal=signal, rules=self.rules,
                                         existing=existing, recent=self.recent)
                    finally:
                        self._note(time.monotonic() - started)
            alone = self._mutating == 1  # a mutation beside others does not time the disk alone
            started = time.monotonic()
            try:
                return await self._run(operation, target, payload, expected, signal=signal, rules=self.rules,
                                       existing=existing, recent=self.recent)
            finally:
                if small and alone:
                    self._note(time.monotonic() - started)
        finally:
            self._mutating -= 1
            self.process_locks.release(fd)

    async def _acquire(self, key: str, signal: AbortSignal | None, stage: Stage) -> int:
        """The cross-process lock of ``key`` (A4). Free: taken at once, on this thread. Held
        elsewhere: waited for in the kernel's queue from a thread of ``_lock_waits`` (not the I/O
        threads, so waits never starve reads); an abort (``FS_ABORTED``) or the caller's
        cancellation abandons the wait before anything changed."""
        fd = self.process_locks.try_acquire(key)
        if fd is not None:
            return fd
        waiter = LockWait(self.process_locks, key)
        try:
            outcome = await run_under_signal(
                lambda: anyio.to_thread.run_sync(waiter.wait, abandon_on_cancel=True, limiter=self._lock_waits),
                signal=signal, poll=_ABORT_POLL_S,
            )
        except BaseException:  # the caller's cancellation
            waiter.abandon()
            raise
        failure = outcome.error
        if failure is not None and not isinstance(failure, FsError):
            waiter.abandon()
            raise failure
        if not outcome.returned or outcome.value is None:
            waiter.abandon()
            raise failure if failure is not None else aborted(stage)
        waiter.taken()
        return outcome.value

    def _note(self, elapsed: float) -> None:
        """A mutation took ``elapsed`` seconds: a slow one keeps mutations off this thread for
        ``SLOW_DISK_COOLDOWN_S``."""
        if elapsed >= SLOW_MUTATION_S:
            self._inline_after = time.monotonic() + SLOW_DISK_COOLDOWN_S

    def _probe(self, target: Target, stage: Stage) -> files.Probe | None | object:
        """The probe ``fsio.write_file`` / ``edit_file`` start with (``files.probe``, verb
        ``stage``), made for them when probes run on this thread (``inline_probes``);
        ``files.UNPROBED`` when they do not, or when it fails (the operation probes again, from
        a worker thread, and says what is wrong)."""
        if not self.inline_probes:
            return files.UNPROBED
        try:
            return files.probe(target.key, stage, target.display_path,  # type: ignore[arg-type]
                               root=self.rules.root_for(target.key))
        except FsError:
            return files.UNPROBED

    def _small(self, target: Target, existing: files.Probe | None | object, new_size: Callable[[int], int]) -> bool:
        """Is this mutation small enough for the event loop thread (``inline_write_max``)?
        The old size is the probe's (``None``: a new file); without one, a hint from ``stat``
        (the operation itself checks the file)."""
        if isinstance(existing, files.Probe) or existing is None:
            old_size = existing.st.st_size if existing is not None else 0
        elif self.inline_probes:
            return False  # the probe failed: the operation will say why, from a worker thread
        else:
            try:
                old_size = os.stat(target.key).st_size
            except FileNotFoundError:
                old_size = 0  # a new file
            except OSError:
                return False  # the operation will say what is wrong, from a worker thread
        return max(old_size, new_size(old_size)) <= self.inline_write_max


def _edit_size_bound(edit: EditRequest) -> Callable[[int], int]:
    """A bound on an edit's result size, given the old size: each match (at most
    ``old_size / len(old_string)`` of them with ``replace_all``, else one) grows the text by
    at most ``len(new_string) - len(old_string)`` characters (a character is at most 4 bytes
    in either)."""
    growth = max(0, len(edit.new_string) - len(edit.old_string))

    def bound(old_size: int) -> int:
        matches = old_size // max(1, len(edit.old_string)) if edit.replace_all else 1
        return old_size + 4 * matches * growth

    return bound


def _info(found: files.Probe | None) -> Info | None:
    return found.info() if found is not None else None
