"""``LocalFileSystem``: the host-disk provider (REFERENCE-SPEC §2), an async shell over ``fsio``.

Blocking I/O runs in worker threads under a dedicated capacity limiter. A mutation holds
the target's in-process lock and its cross-process lock (A4) for the whole critical
section, which runs in one worker thread; once started it is never abandoned (a cancelled
caller waits for it), so an abort never hides a half-done write.
"""

from __future__ import annotations

import os
import threading
from collections.abc import AsyncIterator
from typing import ClassVar

import anyio
import anyio.to_thread

from ..core.profile import Profile
from ..core.signal import AbortSignal
from ..fs.filesystem import FileSystem
from ..fs.paths import is_blank, node_resolve
from ..fs.errors import FsError, FsErrorCode
from ..fs.types import DirEntry, EditIntent, EditOutcome, EditRequest, Info, PathInfo, Target, WriteIntent, WriteOutcome
from . import fsio
from .locks import ProcessLocks, TargetLocks

__all__ = ("LocalFileSystem", "current_umask")

_umask_lock = threading.Lock()


def current_umask() -> int:
    """The process umask, read without changing it where Linux allows (``/proc/self/status``)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    with _umask_lock:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


class LocalFileSystem(FileSystem):
    """The host filesystem as a ``FileSystem`` provider.

    :param cwd: default base for relative paths (absolute; default: the process cwd at
        construction). A resolution default, not a sandbox.
    :param profile: ``default`` turns on D1–D4, D6, D12; ``reference`` is byte-exact
    :param root: containment: every path must stay inside this directory, lexically and after
        resolving symlinks, or the call fails ``FS_PERMISSION_DENIED``; operations walk from
        the root with ``O_NOFOLLOW`` so a symlink swapped in later cannot escape. ``None``
        (default): no containment, as in the reference.
    :param lock_dir: directory of the cross-process lock files (A4); default per user
    :param max_threads: worker threads this provider may use at once
    """

    name: ClassVar[str] = "fs-local"

    def __init__(
        self,
        *,
        cwd: str | os.PathLike[str] | None = None,
        profile: Profile | str | None = None,
        root: str | os.PathLike[str] | None = None,
        lock_dir: str | None = None,
        max_threads: int = 16,
    ) -> None:
        self.root = os.path.abspath(os.fspath(root)) if root is not None else None
        default_cwd = self.root if self.root is not None else os.getcwd()
        self.cwd = os.path.abspath(os.fspath(cwd)) if cwd is not None else default_cwd
        self.profile = Profile.parse(profile)
        better = self.profile.is_default
        self.rules = fsio.LocalRules(
            keep_bom=better,
            keep_line_endings=better,
            umask_mode=better,
            detailed_errors=better,
            follow_dangling=better,
            umask=current_umask(),
            root=os.path.realpath(self.root) if self.root is not None else None,
            root_display=self.root,
        )
        self._limiter = anyio.CapacityLimiter(max_threads)
        self.locks = TargetLocks()
        self.process_locks = ProcessLocks(lock_dir)

    async def _run(self, func, *args, **kwargs):  # type: ignore[no-untyped-def]
        return await anyio.to_thread.run_sync(lambda: func(*args, **kwargs), limiter=self._limiter)

    async def resolve(self, path: str, *, cwd: str | None = None, signal: AbortSignal | None = None) -> Target:
        fsio.check_abort(signal, "resolve aborted")
        return await self._run(fsio.resolve_target, path, cwd or self.cwd, signal=signal, rules=self.rules)

    async def stat(self, target: Target, *, signal: AbortSignal | None = None) -> Info | None:
        fsio.check_abort(signal, "stat aborted")
        found = await self._run(lambda: _info(fsio.probe(target.key, "stat", target.display_path)))
        fsio.check_abort(signal, "stat aborted")
        return found

    async def lstat(self, path: str, *, cwd: str | None = None, signal: AbortSignal | None = None) -> PathInfo | None:
        fsio.check_abort(signal, "lstat aborted")
        if is_blank(path):
            raise FsError("file_path must be a non-empty string", FsErrorCode.NOT_FOUND)
        display = node_resolve(cwd or self.cwd, path)
        if not fsio.contained(display, self.rules):
            raise fsio.outside_error(display, self.rules)
        found = await self._run(fsio.probe_no_follow, display, display)
        fsio.check_abort(signal, "lstat aborted")
        return found

    async def read_text(self, target: Target, *, signal: AbortSignal | None = None) -> str:
        return await self._run(fsio.read_text, target.key, target.display_path, signal=signal, rules=self.rules)

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

    async def list_dir(self, target: Target, *, signal: AbortSignal | None = None) -> list[DirEntry]:
        return await self._run(fsio.list_directory, target, signal=signal, rules=self.rules)

    async def write_text(
        self,
        target: Target,
        content: str,
        expected: WriteIntent | None = None,
        *,
        signal: AbortSignal | None = None,
    ) -> WriteOutcome:
        async with self.locks.hold(target.key):
            return await self._run(self._locked, fsio.write_file, target, content, expected, signal)

    async def edit_text(
        self,
        target: Target,
        edit: EditRequest,
        expected: EditIntent | None = None,
        *,
        signal: AbortSignal | None = None,
    ) -> EditOutcome:
        async with self.locks.hold(target.key):
            return await self._run(self._locked, fsio.edit_file, target, edit, expected, signal)

    def _locked(self, operation, target: Target, payload, expected, signal):  # type: ignore[no-untyped-def]
        with self.process_locks.hold(target.key):
            return operation(target, payload, expected, signal=signal, rules=self.rules)


def _info(found: fsio.Probe | None) -> Info | None:
    return found.info() if found is not None else None
