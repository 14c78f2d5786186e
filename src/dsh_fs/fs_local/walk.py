"""Raw listings and raw reads for search tools (``FileSystem.walk`` / ``stream_bytes``),
synchronous. With a root, directories are opened from the root's descriptor one component at
a time (``containment``) and children relative to their parent's descriptor with ``O_NOFOLLOW``,
so a symlink swapped in meanwhile is never followed. Symlinks and special files are not
reported (a walk never follows a link). Not here: text rules, versions, locks.
"""

from __future__ import annotations

import os
import posixpath
import stat as stat_mod
from collections.abc import Iterator

from ..core.signal import AbortSignal
from ..fs.errors import check_abort, not_directory
from ..fs.types import Target, TargetKey, WalkEntry
from . import containment
from .files import open_regular
from .oserrors import list_error, map_os_error

__all__ = ("BYTES_CHUNK", "RawReader", "WALK_BATCH", "walk_batches")

WALK_BATCH = 4096
"""entries handed over per worker-thread hop"""

BYTES_CHUNK = 1024 * 1024
"""bytes per ``RawReader.next_chunk``"""

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC | os.O_NOFOLLOW


def _children(fd: int, key: str, display: str, prefix: str,
              pending: list[tuple[int, str, str, str]]) -> Iterator[WalkEntry]:
    """The entries of the open directory ``fd``; subdirectories are opened and queued."""
    with os.scandir(fd) as listing:
        for item in sorted(listing, key=lambda e: e.name):
            try:
                st = item.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue  # vanished meanwhile
            rel = prefix + item.name
            child = Target(key=TargetKey(posixpath.join(key, item.name)), display_path=posixpath.join(display, item.name))
            if stat_mod.S_ISREG(st.st_mode):
                yield WalkEntry(rel=rel, type="file", target=child, size=st.st_size, mtime_ns=st.st_mtime_ns)
            elif stat_mod.S_ISDIR(st.st_mode):
                try:
                    sub = os.open(item.name, _DIR_FLAGS, dir_fd=fd)
                except FileNotFoundError:
                    continue
                except OSError as exc:
                    raise list_error(exc, child.display_path) from exc
                yield WalkEntry(rel=rel, type="directory", target=child, mtime_ns=st.st_mtime_ns)
                pending.append((sub, child.key, child.display_path, rel + "/"))


def walk_batches(target: Target, *, root: containment.Root | None, signal: AbortSignal | None,
                 batch: int = WALK_BATCH) -> Iterator[list[WalkEntry]]:
    """The walk below the directory ``target`` in batches of about ``batch`` entries (each
    ``next`` is one worker-thread call). Directory descriptors are closed however it ends.

    :raises FsError: FS_NOT_FOUND / FS_NOT_DIRECTORY for ``target``, FS_PERMISSION_DENIED,
        FS_IO_ERROR, FS_ABORTED ``list aborted``
    """
    display = target.display_path
    check_abort(signal, "list")
    try:
        st = containment.stat_in(target.key, root=root)
        if not stat_mod.S_ISDIR(st.st_mode):
            raise not_directory(display)
        first = containment.open_dir(target.key, root=root)
    except OSError as exc:
        raise list_error(exc, display) from exc
    pending: list[tuple[int, str, str, str]] = [(first, target.key, display, "")]
    out: list[WalkEntry] = []
    try:
        while pending:
            fd, key, shown, prefix = pending.pop()
            try:
                check_abort(signal, "list")
                out.extend(_children(fd, key, shown, prefix, pending))
            except OSError as exc:
                raise list_error(exc, shown) from exc
            finally:
                os.close(fd)
            if len(out) >= batch:
                yield out
                out = []
        if out:
            yield out
    finally:
        for fd, *_ in pending:
            os.close(fd)


class RawReader:
    """``stream_bytes`` mechanics: one ``next_chunk`` call per chunk, ``b""`` at the end."""

    def __init__(self, target: Target, *, root: containment.Root | None, signal: AbortSignal | None) -> None:
        self._target = target
        self._root = root
        self._signal = signal
        self._fd: int | None = None

    def next_chunk(self) -> bytes:
        display = self._target.display_path
        check_abort(self._signal, "read")
        if self._fd is None:
            self._fd = open_regular(self._target.key, "read", display, self._root)
        try:
            chunk = os.read(self._fd, BYTES_CHUNK)
        except OSError as exc:
            raise map_os_error(exc, "read", display) from exc
        if not chunk:
            self.close()
        return chunk

    def close(self) -> None:
        """Release the descriptor (idempotent)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
