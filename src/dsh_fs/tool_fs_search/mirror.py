"""A private host directory that stands for part of a provider without a host path (S3, the
in-memory provider), so ripgrep can answer ``glob`` and ``grep`` there with exactly its own
semantics (ARCHITECTURE "providers without a local path answer it through
their own listing and content reads").

The mirror root ``M`` (``mkdtemp``, 0700) holds the display path ``/a/b`` at ``M/a/b``:

* for ``glob``: every file of the searched tree as an empty file with the provider's
  modification time (S3: LastModified), made strictly increasing in a fixed tie order so
  that equal times sort by path (``tie_order``) wherever the walk found them;
* for ``grep``: the same tree with real bytes for the ignore files (``.gitignore``,
  ``.ignore``, ``.rgignore``, ``.git/info/exclude``, also those of the searched path's
  ancestors, and ``.git`` markers) and empty files otherwise; the files ripgrep would
  search get their bytes in batches of at most ``batch_bytes`` (``fill``), and are emptied
  again (``empty``) before the next batch, so disk use stays bounded.

Paths a local disk cannot hold (too long, a name below a file's own name) are left out.
``close`` removes the mirror. All blocking disk work runs in worker threads.
"""

from __future__ import annotations

import os
import posixpath
import shutil
import tempfile
from typing import Any

import anyio
import anyio.to_thread

from ..core.signal import AbortSignal
from ..fs.errors import FsError, by_path_rules
from ..fs.filesystem import FileSystem
from ..fs.types import Info, Target, WalkEntry

__all__ = ("FETCHES", "HELD_BYTES", "IGNORE_FILES", "Mirror")

IGNORE_FILES = (".gitignore", ".ignore", ".rgignore")
"""file names whose bytes ripgrep reads to decide what ``grep`` searches"""

_GIT_EXCLUDE = ".git/info/exclude"
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC
_FILL = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
"""a copy's open: no ``O_TRUNC`` (the mirror's files are empty until filled, and a longer one is
cut with ``ftruncate`` after the write): on ext4 a write after a truncation to zero makes
``close`` start the data's writeback (``auto_da_alloc``), which made each copy a disk write and
emptying the batch afterwards wait for it — about half of a grep's time over small objects"""
FETCHES = 16
"""provider reads in flight while filling a batch (``bench/search_bench.py`` uses the same for
the request floor it compares a grep with)"""
HELD_BYTES = 256 * 1024
"""bytes of one file's content held in memory before its copy starts writing: a file no bigger
is written with one open-write-close in a worker thread (at most ``FETCHES`` × this in memory)"""


def _is_ignore_file(display: str) -> bool:
    return posixpath.basename(display) in IGNORE_FILES or display.endswith("/" + _GIT_EXCLUDE)


class Mirror:
    """One search's private stand-in directory (see the module docstring).

    :param fs: the provider mirrored
    :param signal: the call's abort signal, handed to every provider call
    """

    def __init__(self, fs: FileSystem, *, signal: AbortSignal | None) -> None:
        self.fs = fs
        self.signal = signal
        self.root = os.path.realpath(tempfile.mkdtemp(prefix="dsh-fs-search-"))
        self.files: dict[str, tuple[Target, int]] = {}
        """host path → (target, size) of the files whose bytes ``fill`` may copy (grep)"""

    # -- paths -----------------------------------------------------------------------------
    def host(self, display: str) -> str:
        """The mirror path of the absolute display path ``display``."""
        return self.root + display if display != "/" else self.root + "/"

    def unmap(self, printed: str) -> str:
        """A path ripgrep printed, with the mirror root turned back into the display root."""
        if printed == self.root or printed == self.root + "/":
            return "/"
        if printed.startswith(self.root + "/"):
            return printed[len(self.root) :]
        return printed

    def scrub(self, text: str) -> str:
        """``text`` (ripgrep's stderr) with mirror paths shown as display paths."""
        return text.replace(self.root + "/", "/").replace(self.root, "/")

    # -- building ----------------------------------------------------------------------------
    async def add_directory(self, display: str) -> None:
        """Make the (empty) directory ``display`` and its parents."""
        await anyio.to_thread.run_sync(lambda: os.makedirs(self.host(display), exist_ok=True))

    async def add_tree(self, target: Target, info: Info, *, contents: bool, newest_first: bool = False) -> None:
        """Mirror ``target`` (a file or a directory tree).

        :param contents: ``grep``: real bytes for ignore files now, and remember every file
            for ``fill``; ``glob``: empty files with strictly increasing modification times
        :param newest_first: the tie order of equal modification times (paths ascending in
            the order ripgrep will list: ``--sortr=modified`` when true)
        """
        if info.type == "file":
            entries = [WalkEntry(rel=posixpath.basename(target.display_path), type="file", target=target,
                                 size=info.size, mtime_ns=None)]
            await self.add_directory(posixpath.dirname(target.display_path))
        else:
            entries = [entry async for entry in self.fs.walk(target, signal=self.signal)]
            await self.add_directory(target.display_path)
        files = [e for e in entries if e.type == "file"]
        dirs = [self.host(e.target.display_path) for e in entries if e.type == "directory"]
        times: list[int] = []
        if not contents:
            # equal times would list in directory order: make them distinct so that ties list
            # by path ascending whichever way ripgrep sorts (oldest or newest first)
            files.sort(key=lambda e: e.target.display_path, reverse=newest_first)
            files.sort(key=lambda e: e.mtime_ns or 0)
            last: int | None = None
            for entry in files:
                stamp = entry.mtime_ns or 0
                last = stamp if last is None or stamp > last else last + 1
                times.append(last)
        hosts = [self.host(e.target.display_path) for e in files]
        made = await anyio.to_thread.run_sync(_make_tree, dirs, hosts, times)
        if contents:
            for entry, host, ok in zip(files, hosts, made):
                if not ok:
                    continue
                if _is_ignore_file(entry.target.display_path):
                    await self._copy_present(entry.target, host)
                else:
                    self.files[host] = (entry.target, entry.size or 0)

    async def add_ancestor_rules(self, display: str) -> None:
        """Copy the ignore files and ``.git`` markers of the ancestors of ``display`` up to
        the provider's root (ripgrep reads its parents' ignore rules)."""
        parent = display
        while parent != "/":
            parent = posixpath.dirname(parent)
            try:
                here = await self.fs.resolve(parent, signal=self.signal)
            except FsError:
                return  # above the provider's root
            for name in (*IGNORE_FILES, ".git"):
                try:
                    child = await self.fs.resolve(name, cwd=here.display_path, signal=self.signal)
                except FsError as exc:
                    if by_path_rules(exc):  # P4: a denied ignore file is not read, as if absent
                        continue
                    raise
                found = await self.fs.stat(child, signal=self.signal)
                if found is None:
                    continue
                if found.type == "file":
                    await self._copy_present(child, self.host(child.display_path))
                elif found.type == "directory":
                    await self.add_directory(child.display_path)
                    try:
                        exclude = await self.fs.resolve(_GIT_EXCLUDE, cwd=parent, signal=self.signal)
                    except FsError as exc:
                        if by_path_rules(exc):
                            continue
                        raise
                    excluded = await self.fs.stat(exclude, signal=self.signal)
                    if name == ".git" and excluded is not None and excluded.type == "file":
                        await self.add_directory(posixpath.dirname(exclude.display_path))
                        await self._copy_present(exclude, self.host(exclude.display_path))

    async def _copy(self, target: Target, host: str) -> int:
        """Write the provider's bytes of ``target`` to ``host`` (replacing what it held);
        returns the byte count. The first ``HELD_BYTES`` are gathered in memory, so a small
        file costs one worker-thread call; a bigger one is then written chunk by chunk as it
        streams (memory stays bounded whatever the size)."""
        held: list[bytes] = []
        size = 0
        fd: int | None = None
        try:
            async for chunk in self.fs.stream_bytes(target, signal=self.signal):
                size += len(chunk)
                if fd is None and size <= HELD_BYTES:
                    held.append(chunk)
                    continue
                if fd is None:
                    fd = await anyio.to_thread.run_sync(_open_writing, host, [*held, chunk])
                    held = []
                else:
                    await anyio.to_thread.run_sync(_write_all, fd, chunk)
            if fd is None:
                await anyio.to_thread.run_sync(_write_file, host, held)
            else:
                await anyio.to_thread.run_sync(_cut, fd, size)
        finally:
            if fd is not None:
                os.close(fd)
        return size

    async def _copy_present(self, target: Target, host: str) -> None:
        """``_copy``, where a file deleted (or replaced by a directory) since the walk or
        ``stat`` saw it stays empty: another process's change is no failure of the search."""
        try:
            await self._copy(target, host)
        except FsError as exc:
            if exc.code not in ("FS_NOT_FOUND", "FS_NOT_REGULAR_FILE"):
                raise

    # -- grep batches ----------------------------------------------------------------------
    def batches(self, hosts: list[str], batch_bytes: int) -> list[list[str]]:
        """``hosts`` (known files, in order) cut into runs of at most ``batch_bytes`` bytes
        (a bigger file makes a batch of its own)."""
        out: list[list[str]] = []
        current: list[str] = []
        size = 0
        for host in hosts:
            known = self.files.get(host)
            if known is None:
                continue
            if current and size + known[1] > batch_bytes:
                out.append(current)
                current, size = [], 0
            current.append(host)
            size += known[1]
        if current:
            out.append(current)
        return out

    async def fill(self, hosts: list[str]) -> None:
        """Copy the bytes of the files ``hosts`` from the provider (a few at a time). A file
        that vanished meanwhile stays empty."""
        limiter = anyio.CapacityLimiter(FETCHES)

        async def fetch(host: str) -> None:
            async with limiter:
                await self._copy_present(self.files[host][0], host)

        async with anyio.create_task_group() as tg:
            for host in hosts:
                tg.start_soon(fetch, host)

    async def empty(self, hosts: list[str]) -> None:
        """Give the disk space of ``hosts`` back (truncate them to zero bytes)."""
        await anyio.to_thread.run_sync(_truncate_all, hosts)

    async def close(self) -> None:
        """Remove the mirror (shielded: always finishes)."""
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(shutil.rmtree, self.root, True)

    async def __aenter__(self) -> "Mirror":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()


def _make_tree(dirs: list[str], files: list[str], times: list[int]) -> list[bool]:
    """Create ``dirs`` and empty ``files`` (with ``times`` as mtimes when given); returns
    which files exist now."""
    present: set[str] = set()
    for directory in dirs:
        try:
            os.makedirs(directory, exist_ok=True)
            present.add(directory)
        except OSError:
            continue
    made: list[bool] = []
    for index, path in enumerate(files):
        try:
            parent = os.path.dirname(path)
            if parent not in present:  # one makedirs per directory, not per file
                os.makedirs(parent, exist_ok=True)
                present.add(parent)
            os.close(os.open(path, _CREATE, 0o600))
            if times:
                os.utime(path, ns=(times[index], times[index]), follow_symlinks=False)
            made.append(True)
        except OSError:
            made.append(False)
    return made


def _truncate_all(paths: list[str]) -> None:
    for path in paths:
        try:
            os.truncate(path, 0)
        except OSError:
            pass



def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _open_writing(path: str, chunks: list[bytes]) -> int:
    """Open ``path`` for the copy (created if missing, not truncated: see ``_FILL``) and write
    ``chunks`` from its start; returns the descriptor (the caller closes it)."""
    fd = os.open(path, _FILL, 0o600)
    try:
        for chunk in chunks:
            _write_all(fd, chunk)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _cut(fd: int, size: int) -> None:
    """Drop what a file held beyond the ``size`` bytes just written (only when it was longer)."""
    if os.fstat(fd).st_size > size:
        os.ftruncate(fd, size)


def _write_file(path: str, chunks: list[bytes]) -> None:
    """``path`` holds exactly ``chunks`` afterwards (one open, write, close)."""
    fd = _open_writing(path, chunks)
    try:
        _cut(fd, sum(map(len, chunks)))
    finally:
        os.close(fd)
