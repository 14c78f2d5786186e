"""Mutation locks: in-process per target, across processes by OS advisory lock (DEVIATIONS A4).

In-process: ``dsh_fs.fs.locks.TargetLocks`` (REFERENCE-SPEC §2.9), shared with other providers.
Across processes: ``fcntl.flock`` on one of a fixed number of lock files (stripes) chosen by
a hash of the target key, in a per-user lock directory — so every dsh-fs process on the
machine (MCP servers, CLI runs) serializes mutations of one target, and the lock directory
never holds more than ``stripes`` files. Two targets that share a stripe merely serialize.

The default lock directory, in a shared ``/tmp``, must be private (a real directory of this
user, writable by nobody else, and so its parent; ``private``): another user could otherwise
pre-create it and hold the locks, or plant symlinks where the lock files go. When it is not
(another user made it first: a denial of service), the locks move to a private location —
``$XDG_RUNTIME_DIR/dsh-fs/locks``, else a fresh private directory (then the locks cover only
this process) — and a warning says so once per process (logger ``dsh_fs``). A directory
given explicitly is trusted (it may be shared by a group on purpose) and never replaced.
Lock files are opened ``O_NOFOLLOW`` either way.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import tempfile
import threading

from ..fs.errors import FsError, lock_dir_unusable, lock_unavailable
from ..fs.locks import TargetLocks as TargetLocks  # re-exported: the in-process half
from ..private_dirs import NotPrivate, ensure_private_dir, not_private

__all__ = ("LockWait", "ProcessLocks", "TargetLocks", "default_lock_dir")

DEFAULT_STRIPES = 1024

_STRIPES_KEPT = 4096
"""keys whose stripe a ``ProcessLocks`` remembers (then it forgets them all and starts over)"""


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
        self._may_move = not explicit  # the default location may be taken by someone else
        self._levels = 2  # directories that must be private, from the lock directory up
        self._stripes: dict[str, int] = {}  # key -> its stripe (a hash of the key: the same every time)

    def path_for(self, key: str) -> str:
        """The lock file that guards ``key``."""
        stripe = self._stripes.get(key)
        if stripe is None:
            digest = hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=8).digest()
            stripe = int.from_bytes(digest, "big") % self.stripes
            if len(self._stripes) >= _STRIPES_KEPT:
                self._stripes.clear()
            self._stripes[key] = stripe
        return f"{self.lock_dir}/{stripe:04d}.lock"

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
        try:
            if self.check_private:
                self._check()
            fd = os.open(self.path_for(key), _LOCK_FLAGS, 0o600)
        except FileNotFoundError:
            self._create()
            fd = self._open(self.path_for(key))
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

    def _check(self) -> None:
        """Is the lock directory (and its parent) private? If not and it is the default
        location, move to a private one (``_moved``).

        :raises FileNotFoundError: when it is missing (the caller creates it)
        :raises FsError: ``FS_IO_ERROR`` when it is not private and may not move
        """
        directory = self.lock_dir
        for _ in range(self._levels):
            reason = not_private(directory)
            if reason is not None:
                self._not_private(reason)
                return
            directory = os.path.dirname(directory)

    def _create(self) -> None:
        """Create the lock directory (and its parent), private.

        :raises FsError: ``FS_IO_ERROR``
        """
        try:
            ensure_private_dir(self.lock_dir, levels=self._levels if self.check_private else 0)
        except NotPrivate as exc:
            self._not_private(exc.reason)
        except OSError as exc:
            raise _unusable(self.lock_dir, exc) from exc

    def _not_private(self, reason: str) -> None:
        """The lock directory is not private: move (the default location), else refuse."""
        if not self._may_move:
            raise _unusable(self.lock_dir, NotPrivate(reason))
        self.lock_dir = _moved(self.lock_dir, reason)
        self._may_move = False
        self._levels = 1  # its parent was checked when it was chosen

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


_moves: dict[str, str] = {}
"""default lock directory found not private -> where this process keeps its locks instead"""
_moves_lock = threading.Lock()
_log = logging.getLogger("dsh_fs")


def _moved(lock_dir: str, reason: str) -> str:
    """The private lock directory that replaces the default ``lock_dir`` in this process
    (chosen once, so every provider of the process shares it): ``$XDG_RUNTIME_DIR/dsh-fs/locks``
    when that is private, else a fresh private directory. Logs one warning.

    :raises FsError: ``FS_IO_ERROR`` when no private directory can be made
    """
    with _moves_lock:
        moved = _moves.get(lock_dir)
        if moved is not None:
            return moved
        runtime = os.environ.get("XDG_RUNTIME_DIR", "")
        moved = None
        if os.path.isabs(runtime):
            candidate = os.path.join(runtime, "dsh-fs", "locks")
            try:
                ensure_private_dir(candidate, levels=3)
                moved = candidate
            except OSError:
                moved = None
        note = ""
        if moved is None:
            try:
                moved = tempfile.mkdtemp(prefix=f"dsh-fs-{os.geteuid()}-locks-")
            except OSError as exc:
                raise _unusable(lock_dir, exc) from exc
            note = " (its locks cover this process only: set DSH_FS_LOCK_DIR to a private directory to share them)"
        _log.warning("dsh-fs: the lock directory %s is not usable (%s); using %s instead%s",
                     lock_dir, reason, moved, note)
        _moves[lock_dir] = moved
        return moved


def _unusable(path: str, exc: OSError) -> FsError:
    return lock_dir_unusable(path, str(exc.strerror or exc), cause=exc)
