"""Mutation locks: in-process per target, across processes by OS advisory lock (DEVIATIONS A4).

In-process: ``dsh_fs.fs.locks.TargetLocks`` (REFERENCE-SPEC §2.9), shared with other providers.
Across processes: ``fcntl.flock`` on one of a fixed number of lock files (stripes) chosen by
a hash of the target key, in a per-user lock directory — so every dsh-fs process on the
machine (MCP servers, CLI runs) serializes mutations of one target, and the lock directory
never holds more than ``stripes`` files. Two targets that share a stripe merely serialize.

The lock directory must be private (owned by this user, writable by nobody else, no symlink
on the way): in a shared ``/tmp`` another user could otherwise pre-create it and hold the
locks, or plant symlinks where the lock files go. Lock files are opened ``O_NOFOLLOW``.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import stat as stat_mod
import tempfile
from collections.abc import Iterator

from ..fs.errors import FsError, FsErrorCode
from ..fs.locks import TargetLocks as TargetLocks  # re-exported: the in-process half

__all__ = ("ProcessLocks", "TargetLocks", "default_lock_dir")

DEFAULT_STRIPES = 1024


def default_lock_dir() -> str:
    """``$DSH_FS_LOCK_DIR`` or ``<tmp>/dsh-fs-<uid>/locks``."""
    configured = os.environ.get("DSH_FS_LOCK_DIR")
    if configured:
        return configured
    return os.path.join(tempfile.gettempdir(), f"dsh-fs-{os.getuid()}", "locks")


class ProcessLocks:
    """Cross-process exclusive locks keyed by target key (blocking; call from a worker thread).

    :param lock_dir: where the stripe files live (created 0700 on first use)
    :param stripes: number of lock files
    """

    def __init__(self, lock_dir: str | None = None, *, stripes: int = DEFAULT_STRIPES) -> None:
        self.lock_dir = lock_dir or default_lock_dir()
        self.stripes = stripes
        self._ready = False

    def path_for(self, key: str) -> str:
        """The lock file that guards ``key``."""
        digest = hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=8).digest()
        return os.path.join(self.lock_dir, f"{int.from_bytes(digest, 'big') % self.stripes:04d}.lock")

    @contextlib.contextmanager
    def hold(self, key: str, *, blocking: bool = True) -> Iterator[bool]:
        """Hold the lock of ``key`` for the ``with`` body, which receives True.

        :param blocking: False: never wait; when another holder has it, the body receives
            False and runs without the lock (the caller must then not mutate)
        """
        if not self._ready:
            _make_private_dir(self.lock_dir)
            self._ready = True
        try:
            fd = os.open(self.path_for(key), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
        except OSError as exc:
            raise FsError(f"cannot take the cross-process lock in {self.lock_dir}: {exc.strerror or exc}",
                          FsErrorCode.IO_ERROR, cause=exc) from exc
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX if blocking else fcntl.LOCK_EX | fcntl.LOCK_NB)
                held = True
            except BlockingIOError:
                held = False
            yield held
        finally:
            os.close(fd)  # closing releases the flock


def _make_private_dir(path: str) -> None:
    """Create ``path`` (0700) or check the existing one, and the per-user parent of the default
    directory: a directory owned by this user that nobody else may write (one of ours with
    looser bits is tightened).

    :raises FsError: ``FS_IO_ERROR`` when it is not private (e.g. made by another user)
    """
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        checked = [path]
        parent = os.path.dirname(path)  # the per-user parent of the default directory, too
        if os.path.basename(parent).startswith("dsh-fs-"):
            checked.append(parent)
        for directory in checked:
            st = os.stat(directory)  # a symlink is fine if what it names passes the checks
            if not stat_mod.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
                raise PermissionError(f"{directory} is not a directory owned by this user")
            if st.st_mode & 0o022:
                os.chmod(directory, stat_mod.S_IMODE(st.st_mode) & ~0o022)
    except OSError as exc:
        raise FsError(f"cannot use the lock directory {path}: {exc.strerror or exc} "
                      "(set DSH_FS_LOCK_DIR to a private directory)", FsErrorCode.IO_ERROR, cause=exc) from exc
