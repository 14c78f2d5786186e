"""The look for symlinks that lead out of the containment root, before ripgrep follows links
(DEVIATIONS S8): ``outward_links``, and ``DirCache``, which lets a repeated look skip reading
the directories that have not changed.

A link is a directory entry: making, removing, renaming or replacing one (or a subdirectory)
changes its directory's ``st_ctime``, which no process can set back (``utime`` sets the
modification time, and stamps the change time with the clock). So a directory whose
``(st_dev, st_ino, st_ctime_ns, st_mtime_ns)`` is what it was when it was read still has the
subdirectories and links it had then, and the look reads only the directories whose stamp
moved. As for the A5 versions (``fs_local/versions.py``), a directory changed less than
``racy_ns`` before it was read is not kept: file times come from a coarse clock, so a change
made right after the read could carry the same stamp. Every link found, kept or read anew, is
resolved again on every look (what it leads to can change with no change to its directory).

Blocking (run it in a worker thread); memory bounded by ``DirCache.max_names``.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from collections.abc import Callable

__all__ = ("DirCache", "RACY_NS", "outward_links")

VCS_NAMES = frozenset((".git", ".svn", ".hg", ".bzr", ".jj", ".sl"))
"""directories never walked (ripgrep is told not to list or search them: ``commands``)"""

RACY_NS = 3_000_000_000
"""a directory changed this recently (ns, against the wall clock) is read again next time"""

_Stamp = tuple[int, int, int, int]
_Entry = tuple[_Stamp, tuple[str, ...], tuple[str, ...]]


class DirCache:
    """What the walk read in each directory (its subdirectories to walk and its symlinks),
    under the directory's stamp. Shared by the searches of one context; thread-safe (the
    looks run in worker threads, several at once)."""

    def __init__(self, max_names: int = 1 << 20, racy_ns: int = RACY_NS) -> None:
        """:param max_names: names (subdirectories plus links) kept over all directories; past
            it the oldest directories are dropped first (0: keep nothing)
        :param racy_ns: a directory changed less than this many nanoseconds before it was read
            is not kept"""
        self.max_names = max_names
        self.racy_ns = racy_ns
        self._entries: dict[str, _Entry] = {}
        self._names = 0
        self._lock = threading.Lock()

    def get(self, directory: str, stamp: _Stamp) -> _Entry | None:
        """The kept entry of ``directory`` (a host path) if it was kept under ``stamp``."""
        entry = self._entries.get(directory)
        return entry if entry is not None and entry[0] == stamp else None

    def put(self, directory: str, stamp: _Stamp, subdirs: tuple[str, ...], links: tuple[str, ...],
            read_at_ns: int) -> None:
        """Keep what a read of ``directory`` found, unless it changed within ``racy_ns`` of
        ``read_at_ns`` (the wall clock before the read) or the bound is reached."""
        if read_at_ns - max(stamp[2], stamp[3]) < self.racy_ns:
            return
        size = len(subdirs) + len(links) + 1
        if size > self.max_names:
            return
        with self._lock:
            old = self._entries.pop(directory, None)
            if old is not None:
                self._names -= len(old[1]) + len(old[2]) + 1
            while self._entries and self._names + size > self.max_names:
                gone = self._entries.pop(next(iter(self._entries)))
                self._names -= len(gone[1]) + len(gone[2]) + 1
            self._entries[directory] = (stamp, subdirs, links)
            self._names += size

    def __len__(self) -> int:
        return len(self._entries)


def _read(directory: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The subdirectories (VCS metadata left out) and the symlinks directly in ``directory``
    (names), from the directory entries' types alone. :raises OSError: unreadable"""
    subdirs: list[str] = []
    links: list[str] = []
    with os.scandir(directory) as entries:
        for entry in entries:
            if entry.is_file(follow_symlinks=False):  # most entries: one type test
                continue
            if entry.is_symlink():
                links.append(entry.name)
            elif entry.is_dir(follow_symlinks=False) and entry.name not in VCS_NAMES:
                subdirs.append(entry.name)
    return tuple(subdirs), tuple(links)


def _read_kept(directory: str, cache: DirCache) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``_read`` through ``cache``: the kept names while the directory's stamp is unchanged.
    ``directory`` is a real path; one that is no directory (any more) is read, never kept:
    its stamp would be a link's. :raises OSError: unreadable"""
    st = os.lstat(directory)
    if not stat.S_ISDIR(st.st_mode):
        return _read(directory)
    stamp = (st.st_dev, st.st_ino, st.st_ctime_ns, st.st_mtime_ns)
    kept = cache.get(directory, stamp)
    if kept is not None:
        return kept[1], kept[2]
    read_at = time.time_ns()
    subdirs, links = _read(directory)
    cache.put(directory, stamp, subdirs, links, read_at)
    return subdirs, links


def outward_links(top: str, root: str, *, cache: DirCache | None = None,
                  stopped: Callable[[], bool] = lambda: False) -> list[str]:
    """The symlinks that ripgrep, following links from the host directory ``top``, would reach
    (VCS metadata directories skipped) and whose target, resolved, is outside ``root``: the
    ones it must not descend into (``links.exclude_globs``), each under every name it is
    reached by. The look follows links to directories inside the root as ripgrep does (a link
    to a directory on its own way is a loop: not followed), so a link out behind a link in
    (``in -> sub``, ``sub/out -> /etc``) is also found as ``in/out``. A directory that cannot
    be read is skipped, as ripgrep skips it. Blocking (run it in a worker thread).

    :param cache: directories read by earlier looks; those unchanged since are not read again
        (one ``lstat`` each instead of a read of all their entries)
    :param stopped: asked before each directory; ``True`` ends the look early with what was
        found so far (for a caller that gave up on the search: the answer is incomplete)
    :return: host paths below ``top``, in walk order
    """
    real_root = os.path.realpath(root).rstrip("/") + "/"
    found: list[str] = []
    real_top = os.path.realpath(top)
    stack: list[tuple[str, str, frozenset[str]]] = [(top, real_top, frozenset((real_top,)))]
    while stack:
        if stopped():
            break
        shown, real, way = stack.pop()  # the name walked, its real path, the real paths on its way
        try:
            subdirs, links = _read(real) if cache is None else _read_kept(real, cache)
        except OSError:
            continue
        shown_prefix, real_prefix = shown.rstrip("/") + "/", real.rstrip("/") + "/"
        for name in links:
            target = os.path.realpath(real_prefix + name)
            if not (target + "/").startswith(real_root):
                found.append(shown_prefix + name)
            elif name not in VCS_NAMES and target not in way and os.path.isdir(target):
                stack.append((shown_prefix + name, target, way | {target}))
        for name in subdirs:
            stack.append((shown_prefix + name, real_prefix + name, way | {real_prefix + name}))
    return found
