"""Atomic, durable replacement of one file (REFERENCE-SPEC §2.10; DEVIATIONS A2, A3).

The new content goes into a temp file in the target's directory, takes what the replaced
file had (owner and group when asked; its access ACL, ``acl``; its permission bits), is
fsynced and renamed over the target; then the directory is fsynced (A3), so a reported write
survives a crash. Every step runs relative to a descriptor of the parent directory, opened
beneath the workspace root when there is one.

Access never widens (DEVIATIONS D21): a replace keeps the old file's access ACL (or
is refused); when the owner cannot be kept the group still is (``fchown(fd, -1, gid)``), and
when the group cannot be kept either, the new group gets no more than others had. A new file
in the default profile (D3) is made as ``creat(path, 0o666)`` makes it: the umask, or the
directory's default ACL, decides its permissions.

Where we differ from §2.10: the reference makes a private staging
directory per call (``mkdir`` 0o700, temp file inside, ``rm -rf`` after). Here the temp file
is, on Linux, an anonymous inode (``O_TMPFILE``, never visible under any name while it is
written, so a killed writer leaves nothing behind) that is linked as
``.<name>.<pid>.<32 hex>.dsh-fs.tmp`` only just before the rename; elsewhere that name is created
directly (``O_EXCL``, mode 0o600, so no one else can open it and nothing existing is ever
reused). Same guarantees, no staging directory's disk I/O (a third of a small edit's cost).
A failed write removes its own temp file; one left by a killed writer is removed by a later
mutation in that directory once it is clearly abandoned (``sweep_stale``).
"""

from __future__ import annotations

import errno
import os
import posixpath
import re
import stat as stat_mod
import threading
import time
from collections.abc import Callable

from ..core.signal import AbortSignal
from ..fs.errors import Verb, check_abort, io_error, write_cleanup_failed
from . import acl, containment
from .oserrors import map_os_error

__all__ = ("ANONYMOUS_TEMP", "STALE_AFTER_S", "SWEEP_INTERVAL_S", "TEMP_NAME", "atomic_write", "sweep_stale")

WRITE_CHUNK = 8 * 1024 * 1024
"""bytes per ``os.write`` (the abort signal is checked between chunks)"""

TEMP_NAME = re.compile(r"\..*\.([0-9]{1,10})\.[0-9a-f]{32}\.dsh-fs\.tmp", re.DOTALL)
"""names of temp files, ``.<name>.<pid>.<32 hex>.dsh-fs.tmp`` (``fullmatch``; group 1: the
writing process's pid)"""

STALE_AFTER_S = 600.0
"""a temp file untouched this long (seconds), of a writer that does not run here, is litter"""

SWEEP_INTERVAL_S = 60.0
"""one process scans one directory for litter at most this often (seconds)"""

PID_MAX = 1 << 22
"""no live pid is larger (Linux's ``pid_max`` limit)"""

_BASE_MAX = 64
"""bytes of the target's name kept in a temp name (whole characters; the rest is ≤ 53 bytes)"""

ANONYMOUS_TEMP: bool = hasattr(os, "O_TMPFILE") and os.path.isdir("/proc/self/fd")
"""write through an ``O_TMPFILE`` inode (linked by its ``/proc/self/fd`` path) when the file
system supports it; tests set it to False to exercise the named-temp path"""

_NO_TMPFILE = {errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL}
"""``O_TMPFILE`` errors that mean "not supported here" (fall back to a named temp file)"""

_swept: dict[tuple[int, int], tuple[int | None, float]] = {}
"""directory (dev, ino) -> (its mtime after our last write when known clean, else None; when
it was last scanned, ``time.monotonic()``)"""
_swept_lock = threading.Lock()


KEEP_ACL: bytes | None | object = object()
"""``atomic_write(old_acl=…)`` default: read the replaced file's access ACL by its name"""


def atomic_write(path: str, data: bytes | Callable[[int], None], *, mode: int | None,
                 owner: tuple[int, int] | None, signal: AbortSignal | None, verb: Verb, display: str,
                 root: containment.Root | None = None, old_acl: bytes | None | object = KEEP_ACL) -> None:
    """Replace (or create) the file at ``path`` with ``data``, atomically and durably.

    :param path: absolute path of the target; missing parent directories are created
    :param data: the content, or a function that writes it to the descriptor it is given
        (checking ``signal`` as it goes: ``write aborted``) — for content streamed from elsewhere
    :param mode: permission bits of the new file (the old file's, or the reference's 0o600 for
        a new one), which also gets the old file's access ACL or none; ``None``: a new file
        made as ``creat(path, 0o666)`` makes it (umask or the directory's default ACL; D3)
    :param owner: ``(uid, gid)`` to give the new inode, or None to keep ours; when only the
        group can be given, it is; when neither, the group bits are cut to the others' bits
    :param verb: / display: for error messages (``cannot <verb> "<display>": ...``)
    :param root: when given, the parent directory is opened beneath it (containment)
    :param old_acl: the access ACL of the file being replaced (``None``: it has none), when the
        caller read it from the descriptor it read the file through, under the same locks
        (``acl.access_acl_of``); by default it is read here, by the file's name
    :raises FsError: ``FS_ABORTED`` ``write aborted`` before the rename; OS errors mapped by
        DEVIATIONS A2; ``FS_IO_ERROR`` ``cannot <verb> "<dp>": its access ACL cannot be kept
        (<reason>)``; ``write failed (<error>) and temp close|cleanup failed (<error>)``
        (``FS_IO_ERROR``) when even the cleanup fails (§2.10 failure handling). On any error
        the target is untouched and no temp file is left.
    """
    check_abort(signal, "write")
    name = posixpath.basename(path)
    try:
        try:  # the parent almost always exists: open it without the mkdir probes
            parent = containment.open_dir(posixpath.dirname(path), root=root)
        except FileNotFoundError:
            parent = containment.open_dir(posixpath.dirname(path), root=root, create=True)
    except OSError as exc:
        raise map_os_error(exc, verb, display) from exc
    try:
        check_abort(signal, "write")
        clean = sweep_stale(parent)
        _write_and_rename(parent, name, data, mode=mode, owner=owner, signal=signal, verb=verb, display=display,
                          path=path, old_acl=old_acl)
        try:
            os.fsync(parent)
        except OSError:
            pass  # a file system without directory fsync: the rename is as durable as it gets
        _remember(parent, clean)
    finally:
        os.close(parent)


def _temp_name(name: str) -> str:
    base = name[:_BASE_MAX]
    while len(os.fsencode(base)) > _BASE_MAX:
        base = base[:-1]
    return f".{base}.{os.getpid()}.{_unique()}.dsh-fs.tmp"


def _unique() -> str:
    """32 random hex digits (a temp name never collides with a live one)."""
    return os.urandom(16).hex()


def _open_temp(parent: int, name: str, create_mode: int) -> tuple[int, str | None]:
    """A descriptor of a new, empty file in ``parent`` made with ``create_mode`` (subject to
    the umask or the directory's default ACL), and its temp name (None while it is anonymous)."""
    if ANONYMOUS_TEMP:
        try:
            return os.open(".", os.O_WRONLY | os.O_TMPFILE | os.O_CLOEXEC, create_mode, dir_fd=parent), None
        except OSError as exc:
            if exc.errno not in _NO_TMPFILE:
                raise
    temp = _temp_name(name)
    return os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, create_mode,
                   dir_fd=parent), temp


def _give_owner(fd: int, owner: tuple[int, int], mode: int) -> int:
    """Give the new inode ``owner`` (uid, gid), or at least the gid; the permission bits to
    set: ``mode``, with the group bits cut to the others' when the group could not be kept
    either (the new inode's group, ours, must not get what the old group had)."""
    uid, gid = owner
    try:
        os.fchown(fd, uid, gid)
        return mode
    except OSError:
        pass  # not ours to give away: keep at least the group
    try:
        os.fchown(fd, -1, gid)
        return mode
    except OSError:
        return (mode & ~0o070) | (mode & ((mode & 0o007) << 3))


def _write_and_rename(parent: int, name: str, data: bytes | Callable[[int], None], *, mode: int | None,
                      owner: tuple[int, int] | None, signal: AbortSignal | None, verb: Verb, display: str,
                      path: str, old_acl: bytes | None | object = KEEP_ACL) -> None:
    fd: int | None = None
    temp: str | None = None
    try:
        # the old file's access ACL (read before anything is made: a failure changes nothing)
        if mode is None:
            old_acl = None
        elif old_acl is KEEP_ACL:
            old_acl = acl.access_acl(parent, name, path)
        fd, temp = _open_temp(parent, name, 0o600 if mode is not None else 0o666)
        if callable(data):
            data(fd)
        else:
            view = memoryview(data)
            written = 0
            while written < len(view):
                check_abort(signal, "write")
                written += os.write(fd, view[written : written + WRITE_CHUNK])
        if mode is not None:
            if owner is not None:
                mode = _give_owner(fd, owner, mode)
            acl.set_access_acl(fd, old_acl)  # type: ignore[arg-type]  # before fchmod: the ACL mask becomes the group bits
            os.fchmod(fd, mode)
        os.fsync(fd)  # the content and the metadata
        check_abort(signal, "write")
        if temp is None:  # give the anonymous inode a name, in the same directory
            linked = _temp_name(name)
            os.link(f"/proc/self/fd/{fd}", linked, dst_dir_fd=parent, follow_symlinks=True)
            temp = linked
        os.close(fd)
        fd = None
        check_abort(signal, "write")
        os.rename(temp, name, src_dir_fd=parent, dst_dir_fd=parent)
    except BaseException as exc:
        if isinstance(exc, acl.AclError):
            primary: BaseException = io_error(verb, display, str(exc.strerror), cause=exc)
        elif isinstance(exc, OSError):
            primary = map_os_error(exc, verb, display)
        else:
            primary = exc
        if fd is not None:
            try:
                os.close(fd)
            except OSError as close_exc:
                raise write_cleanup_failed(primary, "close", close_exc, cause=exc) from exc
        if temp is not None:
            try:
                os.unlink(temp, dir_fd=parent)
            except FileNotFoundError:
                pass
            except OSError as rm_exc:
                raise write_cleanup_failed(primary, "cleanup", rm_exc, cause=exc) from exc
        if primary is exc:
            raise
        raise primary from exc


def _process_alive(pid: int) -> bool:
    if not 0 < pid <= PID_MAX:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OSError, OverflowError):
        return True  # exists, owned by someone else
    return True


def sweep_stale(parent_fd: int) -> bool:
    """Remove temp files a killed writer left in this directory; is it now known to hold none?

    A temp file is removed when all of these hold: its name matches ``TEMP_NAME``; it is a
    regular file of this user; nobody wrote it for ``STALE_AFTER_S`` (so a live writer in
    another pid namespace, container or host, whose pid means nothing here, keeps its file);
    and its pid is not a live process here (nor ours). Cheap: the directory is scanned only
    when it changed since this process's last write there left it clean, and at most every
    ``SWEEP_INTERVAL_S``.
    """
    st = os.fstat(parent_fd)
    ident = (st.st_dev, st.st_ino)
    now = time.monotonic()
    with _swept_lock:
        clean_mtime, scanned = _swept.get(ident, (None, -SWEEP_INTERVAL_S))
        if clean_mtime == st.st_mtime_ns:
            return True
        if now - scanned < SWEEP_INTERVAL_S:
            return False
        _swept[ident] = (None, now)
    pending = False
    try:
        with os.scandir(parent_fd) as entries:
            candidates = [e for e in entries if e.name.endswith(".dsh-fs.tmp") and TEMP_NAME.fullmatch(e.name)]
        me, uid, wall = os.getpid(), os.geteuid(), time.time()
        for entry in candidates:
            found = entry.stat(follow_symlinks=False)
            if not stat_mod.S_ISREG(found.st_mode) or found.st_uid != uid:
                continue
            pid = int(TEMP_NAME.fullmatch(entry.name).group(1))  # type: ignore[union-attr]
            if pid == me or _process_alive(pid) or wall - found.st_mtime < STALE_AFTER_S:
                pending = True  # a live writer's, or maybe: look again later
                continue
            os.unlink(entry.name, dir_fd=parent_fd)
    except OSError:
        pending = True
    with _swept_lock:
        _swept[ident] = (None if pending else st.st_mtime_ns, now)
    return not pending


def _remember(parent_fd: int, clean: bool) -> None:
    """After our write: the directory is clean now if it was just before (``sweep_stale``)."""
    st = os.fstat(parent_fd)
    ident = (st.st_dev, st.st_ino)
    with _swept_lock:
        if len(_swept) > 4096:
            _swept.clear()
        scanned = _swept.get(ident, (None, -SWEEP_INTERVAL_S))[1]
        _swept[ident] = (st.st_mtime_ns if clean else None, scanned)
