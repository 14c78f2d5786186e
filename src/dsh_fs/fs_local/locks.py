"""Mutation locks: in-process per target, across processes by OS advisory lock (DEVIATIONS A4).

In-process: ``dsh_fs.fs.locks.TargetLocks`` (REFERENCE-SPEC §2.9), shared with other providers.
Across processes: ``fcntl.flock`` on one of a fixed number of lock files (stripes) chosen by
a hash of the target key, in a per-user lock directory — so every dsh-fs process on the
machine (MCP servers, CLI runs) serializes mutations of one target, and the lock directory
never holds more than ``stripes`` files. Two targets that share a stripe merely serialize.

The default lock directory, in a shared ``/tmp``, must be private (a real directory of this
user, writable by nobody else, and so its parent): another user could otherwise pre-create
it and hold the locks, or plant symlinks where the lock files go. A directory given
explicitly is trusted (it may be shared by a group on purpose). Lock files are opened
``O_NOFOLLOW`` either way.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import stat as stat_mod
import tempfile
import threading

from ..fs.errors import FsError, lock_dir_unusable, lock_unavailable
from ..fs.locks import TargetLocks as TargetLocks  # re-exported: the in-process half

__all__ = ("LockWait", "ProcessLocks", "TargetLocks", "default_lock_dir")

DEFAULT_STRIPES = 1024


def default_lock_dir() -> str:
    """``$DSH_FS_LOCK_DIR`` or ``<tmp>/dsh-fs-<uid>/locks``."""
    configured = os.environ.get("DSH_FS_LOCK_DIR")
    if configured:
        return configured
    return os.path.join(tempfile.gettempdir(), f"dsh-fs-{os.getuid()}", "locks")


class ProcessLocks:
    """Cross-process exclusive locks keyed by target key: ``try_acquire`` never blocks;
    ``acquire`` waits in the kernel's queue (call it from a worker thread; ``LockWait`` makes
    that wait abandonable).

    :param lock_dir: where the stripe files live (created 0700 on first use); default:
        ``default_lock_dir()``
    :param stripes: number of lock files
    :param check_private: check that the directory (and its per-user parent) is private to
        this user before using it; default: only for the default ``/tmp`` location (a
        directory given explicitly may be shared on purpose, e.g. by a group)
    """

    def __init__(self, lock_dir: str | None = None, *, stripes: int = DEFAULT_STRIPES,
                 check_private: bool | None = None) -> None:
        explicit = lock_dir is not None or bool(os.environ.get("DSH_FS_LOCK_DIR"))
        self.lock_dir = os.path.abspath(lock_dir or default_lock_dir())  # one place, whatever the cwd
        self.stripes = stripes
        self.check_private = not explicit if check_private is None else check_private

    def path_for(self, key: str) -> str:
        """The lock file that guards ``key``."""
        digest = hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=8).digest()
        return os.path.join(self.lock_dir, f"{int.from_bytes(digest, 'big') % self.stripes:04d}.lock")

    def try_acquire(self, key: str) -> int | None:
        """Take the lock of ``key`` if it is free: its descriptor (``release`` it), or ``None``
        when another open file holds it (another process, or another provider in this one).

        :raises FsError: ``FS_IO_ERROR`` when the lock directory or file cannot be used
        """
        return self._lock(key, blocking=False)

    def acquire(self, key: str) -> int:
        """Take the lock of ``key``, waiting for it (blocks the calling thread).

        :raises FsError: ``FS_IO_ERROR`` when the lock directory or file cannot be used
        """
        fd = self._lock(key, blocking=True)
        assert fd is not None
        return fd

    def _lock(self, key: str, *, blocking: bool) -> int | None:
        """Open the lock file of ``key`` and ``flock`` it. The directory is (re)created when
        missing, e.g. after a ``/tmp`` cleaner removed it, and checked on every call when
        ``check_private``."""
        path = self.path_for(key)
        try:
            if self.check_private:
                _check_private(self.lock_dir)
            fd = os.open(path, _LOCK_FLAGS, 0o600)
        except FileNotFoundError:
            _create(self.lock_dir)
            if self.check_private:
                _check_private(self.lock_dir)
            fd = self._open(path)
        except OSError as exc:
            raise self._failure(exc) from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if blocking else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        except OSError as exc:
            os.close(fd)
            raise self._failure(exc) from exc
        return fd

    def _open(self, path: str) -> int:
        try:
            return os.open(path, _LOCK_FLAGS, 0o600)
        except OSError as exc:
            raise self._failure(exc) from exc

    def _failure(self, exc: OSError) -> FsError:
        return lock_unavailable(self.lock_dir, str(exc.strerror or exc), cause=exc)

    @staticmethod
    def release(fd: int) -> None:
        """Release a lock ``try_acquire`` took (closing its descriptor releases the flock)."""
        os.close(fd)


_LOCK_FLAGS = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW


class LockWait:
    """One blocking wait for a cross-process lock, run in a worker thread (``wait``), that the
    event loop may give up on (``abandon``): a lock the thread gets after that is let go at
    once, and so is one it got but could not hand over. The kernel queues waiters, so a
    process that mutates back to back does not starve the others (polling would)."""

    def __init__(self, locks: ProcessLocks, key: str) -> None:
        self._locks, self._key = locks, key
        self._mutex = threading.Lock()
        self._abandoned = False
        self._fd: int | None = None  # got, not yet taken by the caller

    def wait(self) -> int | None:
        """Block until the lock is ours: its descriptor, or ``None`` when abandoned meanwhile."""
        fd = self._locks.acquire(self._key)
        with self._mutex:
            if self._abandoned:
                self._locks.release(fd)
                return None
            self._fd = fd
        return fd

    def taken(self) -> None:
        """The caller has the descriptor ``wait`` returned (and will release it)."""
        with self._mutex:
            self._fd = None

    def abandon(self) -> None:
        """Give up: release the lock if the thread got it, or as soon as it does."""
        with self._mutex:
            self._abandoned = True
            fd, self._fd = self._fd, None
        if fd is not None:
            self._locks.release(fd)


def _create(path: str) -> None:
    """Create the lock directory and any missing parents, each 0700 (whatever the umask
    would have given intermediate directories).

    :raises FsError: ``FS_IO_ERROR``
    """
    try:
        missing: list[str] = []
        at = path
        while at and not os.path.isdir(at):
            missing.append(at)
            at = os.path.dirname(at)
        for directory in reversed(missing):
            try:
                os.mkdir(directory, 0o700)
            except FileExistsError:
                pass  # made meanwhile by someone else: the privacy check decides
    except OSError as exc:
        raise _unusable(path, exc) from exc


def _check_private(path: str) -> None:
    """Refuse the lock directory unless it and its parent are real directories (no symlinks)
    of this user that nobody else may write — in a shared ``/tmp`` another user could have
    made them.

    :raises FileNotFoundError: when either is missing (the caller creates them)
    :raises FsError: ``FS_IO_ERROR``, naming the directory and ``DSH_FS_LOCK_DIR``
    """
    for directory in (os.path.dirname(path), path):
        st = os.lstat(directory)
        if not stat_mod.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022:
            raise _unusable(path, PermissionError(f"{directory} is not a directory private to this user"))


def _unusable(path: str, exc: OSError) -> FsError:
    return lock_dir_unusable(path, str(exc.strerror or exc), cause=exc)
