"""Guarded delete and rename on the local disk, synchronous (docs/design/EDITING-FACES-DESIGN.md §6.1;
DEVIATIONS A2, A3, A5).

* ``delete_file`` — unlink a regular file at its probed version, then fsync its directory.
* ``rename_file`` — give a regular file a new name that must be free: one
  ``renameat2(RENAME_NOREPLACE)`` (the kernel refuses an existing destination atomically), or,
  where the call or the file system lacks it, ``link`` + ``unlink`` (``link`` refuses an
  existing destination atomically too; a crash in between leaves both names on the one
  file, never a lost file); then both directories are fsynced (A3).

Both run with the targets' locks held (``filesystem``), open every directory beneath the
workspace root when there is one (``containment``: a symlink swapped in cannot redirect them),
check the guards first and then the abort signal, before changing anything (§2.12 order), and
refuse a target whose own name is a
symbolic link (what to remove or move would be ambiguous: the link or the file).
"""

from __future__ import annotations

import ctypes
import errno
import os
import posixpath
import stat as stat_mod
from typing import Literal

from ..core.signal import AbortSignal
from ..fs.errors import (
    FsError,
    check_abort,
    gone,
    not_found,
    not_regular_file,
    outside_workspace_rename,
    rename_destination_exists,
    stale,
)
from ..fs.types import DeleteIntent, DeleteOutcome, RenameIntent, RenameOutcome, Target, Version
from . import containment, files, versions
from .oserrors import map_os_error
from .rules import LocalRules

__all__ = ("RENAME_NOREPLACE", "delete_file", "refuse_symlinked_name", "rename_file", "rename_noreplace")

RENAME_NOREPLACE = 1
"""``renameat2`` flag (``<linux/fs.h>``): fail with ``EEXIST`` instead of replacing"""

_Verb = Literal["delete", "rename"]

_NO_RENAMEAT2 = {errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP}
"""``renameat2`` errors that mean "not supported here" (fall back to link + unlink)"""


def _libc_renameat2() -> object | None:
    try:
        func = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return None
    func.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint)
    func.restype = ctypes.c_int
    return func


_RENAMEAT2 = _libc_renameat2()


def rename_noreplace(src_dir: int, src: str, dst_dir: int, dst: str, *, use_renameat2: bool = True) -> None:
    """Rename ``src`` (in directory ``src_dir``) to ``dst`` (in ``dst_dir``) unless ``dst``
    exists. Names are single components.

    :param use_renameat2: ``False`` forces the ``link`` + ``unlink`` fallback (tests)
    :raises FileExistsError: ``dst`` exists (nothing changed)
    :raises OSError: as ``renameat2``/``link``/``unlink``
    """
    if use_renameat2 and _RENAMEAT2 is not None:
        if _RENAMEAT2(src_dir, os.fsencode(src), dst_dir, os.fsencode(dst), RENAME_NOREPLACE) == 0:  # type: ignore[operator]
            return
        code = ctypes.get_errno()
        if code not in _NO_RENAMEAT2:
            raise OSError(code, os.strerror(code), src)
    os.link(src, dst, src_dir_fd=src_dir, dst_dir_fd=dst_dir, follow_symlinks=False)
    try:
        os.unlink(src, dir_fd=src_dir)
    except OSError:
        os.unlink(dst, dir_fd=dst_dir)  # undo: the file keeps its old name only
        raise


def refuse_symlinked_name(display: str, verb: _Verb) -> None:
    """E17: a delete or rename acts on the file a name resolves to, so a name that is itself a
    symbolic link is refused (``FS_NOT_REGULAR_FILE``): "delete" would be ambiguous."""
    named = files.probe_no_follow(display, display)
    if named is not None and named.type == "symlink":
        raise not_regular_file(verb, display)


def _regular(target: Target, verb: _Verb, expected: Version | None, rules: LocalRules) -> files.Probe:
    """The probed file ``target`` names, checked for a delete or rename (``verb``)."""
    display = target.display_path
    refuse_symlinked_name(display, verb)
    existing = files.probe(target.key, verb, display, root=rules.root_for(target.key))
    if existing is None:
        if expected is not None:
            raise gone(display, verb)
        raise not_found(verb, display)
    if existing.type != "file":
        raise not_regular_file(verb, display)
    if expected is not None and not existing.matches(expected, content=rules.same_bytes):
        raise stale(verb, display)
    return existing


def _still(parent: int, name: str, existing: files.Probe, verb: _Verb, display: str) -> None:
    """The name in ``parent`` still is the probed file (not replaced since the guard)."""
    try:
        st = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        raise gone(display, verb) from None
    if (st.st_dev, st.st_ino) != (existing.st.st_dev, existing.st.st_ino) or not stat_mod.S_ISREG(st.st_mode):
        raise stale(verb, display)


def _fsync(fd: int) -> None:
    try:
        os.fsync(fd)
    except OSError:
        pass  # a file system without directory fsync: as durable as it gets


def delete_file(target: Target, expected: DeleteIntent | None, *, signal: AbortSignal | None,
                rules: LocalRules) -> DeleteOutcome:
    """Remove the regular file ``target`` (call with its locks held)."""
    display = target.display_path
    existing = _regular(target, "delete", expected.version if expected else None, rules)
    files.keep_read_only(existing, "delete", display, rules)
    version = existing.version  # minted while the file is there (a racy token digests it)
    check_abort(signal, "delete")
    try:
        parent = containment.open_dir(posixpath.dirname(target.key), root=rules.root_for(target.key))
        try:
            name = posixpath.basename(target.key)
            _still(parent, name, existing, "delete", display)
            os.unlink(name, dir_fd=parent)
            _fsync(parent)
        finally:
            os.close(parent)
    except FsError:
        raise
    except OSError as exc:
        raise map_os_error(exc, "delete", display) from exc
    return DeleteOutcome(version=version)


def rename_file(source: Target, dest: Target, expected: RenameIntent | None, *, signal: AbortSignal | None,
                rules: LocalRules, use_renameat2: bool = True) -> RenameOutcome:
    """Rename the regular file ``source`` to the free name ``dest`` (call with both targets'
    locks held); missing parent directories of ``dest`` are created (beneath the root)."""
    display = source.display_path
    root = rules.root_for(source.key)
    if root is not None and rules.root_for(dest.key) is not root:
        raise outside_workspace_rename(display, dest.display_path, root.shown)  # D28: never across roots
    existing = _regular(source, "rename", expected.version if expected else None, rules)
    taken = rename_destination_exists(display, dest.display_path)
    if dest.key == source.key or os.path.lexists(dest.key) or os.path.lexists(dest.display_path):
        raise taken
    check_abort(signal, "rename")
    try:
        src_parent = containment.open_dir(posixpath.dirname(source.key), root=root)
        try:
            dst_dir = posixpath.dirname(dest.key)
            try:
                dst_parent = containment.open_dir(dst_dir, root=root)
            except FileNotFoundError:
                dst_parent = containment.open_dir(dst_dir, root=root, create=True)
            try:
                name, dest_name = posixpath.basename(source.key), posixpath.basename(dest.key)
                _still(src_parent, name, existing, "rename", display)
                try:
                    rename_noreplace(src_parent, name, dst_parent, dest_name, use_renameat2=use_renameat2)
                except FileExistsError:
                    raise taken from None
                _fsync(dst_parent)
                _fsync(src_parent)
                st = os.stat(dest_name, dir_fd=dst_parent, follow_symlinks=False)
            finally:
                os.close(dst_parent)
        finally:
            os.close(src_parent)
    except FsError:
        raise
    except OSError as exc:
        raise map_os_error(exc, "rename", display) from exc
    return RenameOutcome(version=Version(versions.mint(st, dest.key, root=root)))
