"""Opening paths without escaping a workspace root (tracker issue "Never lose a byte", containment).

With a root, every open walks from the root's directory descriptor one component at a
time with ``O_NOFOLLOW``, so a symlink swapped into the path after ``resolve`` checked it
can never redirect the operation outside the root (the walk fails with ``Escape``).
Without a root, paths are opened as they are (the reference's behaviour).
"""

from __future__ import annotations

import errno
import os
import posixpath
import stat as stat_mod

__all__ = ("Escape", "inside", "open_dir", "open_in", "stat_in")

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC


class Escape(PermissionError):
    """A path component changed into a symlink (or otherwise left the root) after resolution."""


def inside(path: str, root: str) -> bool:
    """Is the absolute normalized ``path`` the ``root`` itself or below it (no prefix tricks)?"""
    return path == root or path.startswith(root if root.endswith("/") else root + "/")


_PATH_MAX = 4096
"""Linux ``PATH_MAX`` (bytes, NUL included): descriptor walks could go deeper, but a path no
other program can open is refused, as it is without a root (``ENAMETOOLONG``)"""


def _parts(path: str, root: str) -> list[str]:
    if not inside(path, root):
        raise Escape(13, "outside the workspace", path)
    if len(path.encode("utf-8", "surrogateescape")) >= _PATH_MAX:
        raise OSError(errno.ENAMETOOLONG, os.strerror(errno.ENAMETOOLONG), path)
    rel = path[len(root):].lstrip("/")
    return [p for p in rel.split("/") if p]


def _is_link(name: str, dir_fd: int) -> bool:
    try:
        return stat_mod.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _walk(parts: list[str], root: str, *, create: bool) -> int:
    fd = os.open(root, _DIR_FLAGS)
    try:
        for part in parts:
            if part in (".", ".."):
                raise Escape(13, "outside the workspace", part)
            try:
                nxt = os.open(part, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                try:
                    os.mkdir(part, 0o777, dir_fd=fd)
                except FileExistsError:
                    pass
                nxt = os.open(part, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=fd)
            except OSError as exc:
                # a symlink now: ELOOP, or ENOTDIR (Linux checks O_DIRECTORY before O_NOFOLLOW)
                if exc.errno == errno.ELOOP or (exc.errno == errno.ENOTDIR and _is_link(part, fd)):
                    raise Escape(13, "outside the workspace", part) from exc
                raise
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_dir(path: str, *, root: str | None, create: bool = False) -> int:
    """A directory descriptor for ``path`` (created with parents when ``create``).

    :raises Escape: the walk met a symlink or left ``root``
    :raises OSError: as ``os.open`` (``FileNotFoundError`` when missing and not ``create``)
    """
    if root is None:
        if create:
            os.makedirs(path, exist_ok=True)
        return os.open(path, _DIR_FLAGS)
    return _walk(_parts(path, root), root, create=create)


def open_in(path: str, flags: int, mode: int = 0o777, *, root: str | None) -> int:
    """``os.open(path, flags, mode)``, beneath ``root`` when given (final component not followed)."""
    if root is None:
        return os.open(path, flags, mode)
    parent = open_dir(posixpath.dirname(path), root=root)
    try:
        return os.open(posixpath.basename(path), flags | os.O_NOFOLLOW, mode, dir_fd=parent)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Escape(13, "outside the workspace", path) from exc
        raise
    finally:
        os.close(parent)


def stat_in(path: str, *, root: str | None) -> os.stat_result:
    """``os.stat(path)``; beneath ``root`` the final component is not followed (a symlink
    swapped in shows as a symlink, i.e. type ``other``)."""
    if root is None:
        return os.stat(path)
    if path == root:
        return os.stat(root)
    parent = open_dir(posixpath.dirname(path), root=root)
    try:
        return os.stat(posixpath.basename(path), dir_fd=parent, follow_symlinks=False)
    finally:
        os.close(parent)
