"""POSIX access ACLs across an atomic replace (DEVIATIONS D21), synchronous.

A replace makes a new inode, which would lose the old file's access ACL and get the ACL
mask as its group bits (a group the ACL shut out could then read the file), or inherit the
directory's default ACL although the old file had none. So the new inode gets exactly the
old file's access ACL (``system.posix_acl_access``, copied byte for byte: the kernel's own
format, named users and groups by id), or none; when that cannot be done the replace is
refused. A file system without ACLs (``EOPNOTSUPP``) has nothing to keep.

Not here: new files, which get the directory's default ACL from the kernel as ``creat``
gives it (``atomic``), and the permission bits (``fchmod``, after the ACL).
"""

from __future__ import annotations

import errno
import os

__all__ = ("ACCESS_ACL", "AclError", "access_acl", "access_acl_of", "set_access_acl")

ACCESS_ACL = "system.posix_acl_access"
"""the extended attribute that holds a file's access ACL (absent for a minimal ACL)"""

_ABSENT = {errno.ENODATA, errno.EOPNOTSUPP, errno.ENOTSUP}
"""errors that mean "no access ACL here" (none set, or no ACLs on this file system)"""

_PROC_FD = os.path.isdir("/proc/self/fd")


class AclError(OSError):
    """The new inode cannot be given the old file's access ACL (the replace is refused)."""


def access_acl(parent_fd: int, name: str, path: str) -> bytes | None:
    """The access ACL of the file ``name`` in directory ``parent_fd`` (``path``: its absolute
    path, used only where ``/proc`` is not mounted), not followed if a symlink; ``None`` when
    it has none or is missing.

    :raises OSError: when the file exists but its ACL cannot be read
    """
    try:
        if not _PROC_FD:
            return os.getxattr(path, ACCESS_ACL, follow_symlinks=False)
        fd = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent_fd)
        try:
            # an O_PATH descriptor has no xattr calls of its own; its /proc link reaches the inode
            return os.getxattr(f"/proc/self/fd/{fd}", ACCESS_ACL)
        finally:
            os.close(fd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno in _ABSENT:
            return None
        raise


def access_acl_of(fd: int) -> bytes | None:
    """The access ACL of the open file ``fd`` (``fgetxattr``: one system call, where
    ``access_acl`` opens the name, reads through ``/proc`` and closes); ``None`` when it has
    none.

    :raises OSError: when it cannot be read
    """
    try:
        return os.getxattr(fd, ACCESS_ACL)
    except OSError as exc:
        if exc.errno in _ABSENT:
            return None
        raise


def set_access_acl(fd: int, acl: bytes | None) -> None:
    """Give the open file ``fd`` exactly the access ACL ``acl`` (``None``: none, e.g. drop
    the one it inherited from its directory's default ACL). Set it before ``fchmod``: the
    kernel derives the group bits from the ACL's mask.

    :raises AclError: when it cannot be set or removed
    """
    try:
        if acl is not None:
            os.setxattr(fd, ACCESS_ACL, acl)
        else:
            os.removexattr(fd, ACCESS_ACL)
    except OSError as exc:
        if acl is None and exc.errno in _ABSENT:
            return
        raise AclError(exc.errno, f"its access ACL cannot be kept ({os.strerror(exc.errno or 0)})") from exc
