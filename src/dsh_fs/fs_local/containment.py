"""Resolving and opening paths without escaping a workspace root (containment).

* ``real_path_in`` — ``os.path.realpath`` that never takes a step outside the root: every
  component (a symlink's target included) is looked at only while the path so far is inside;
  the first step out fails with ``Escape``, whatever lies outside, so no error can tell the
  model anything about the rest of the disk (no oracle: ``up -> /`` then ``up/etc/shadow/x``
  and ``up/etc/none/x`` fail alike).
* ``open_dir`` / ``open_in`` / ``stat_in`` / ``lstat_in`` — with a root, every open walks from
  the root's directory descriptor one component at a time with ``O_NOFOLLOW``, so a symlink
  swapped into the path after ``resolve`` checked it can never redirect the operation outside
  the root (the walk fails with ``Escape``).

The first step below the root is made by absolute path (``<root>/<name>`` with ``O_NOFOLLOW``)
rather than through a descriptor of the root opened just for it: the kernel resolves the root
by its path either way, and ``O_NOFOLLOW`` / ``AT_SYMLINK_NOFOLLOW`` refuse a symlink in that
one component as ``openat`` below the root's descriptor does. The same lookup, two system calls
fewer (the root's ``open`` and ``close``) on every walk.

Without a root, paths are resolved and opened as they are (the reference's behaviour).
"""

from __future__ import annotations

import errno
import os
import posixpath
import stat as stat_mod
from dataclasses import dataclass

__all__ = ("Escape", "NOWHERE", "Root", "inside", "lstat_in", "open_dir", "open_in", "real_path_in", "stat_in")

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC

_MAX_LINKS = 40
"""symlinks one resolution may follow (Linux's ``MAXSYMLINKS``), then ``ELOOP``"""


@dataclass(frozen=True, slots=True)
class Root:
    """A workspace root: where walks start, and how the containment message names it."""

    real: str
    """the root's real path (absolute, no symlinks)"""
    shown: str
    """the root as configured (absolute, lexically normalized; may differ from ``real`` when
    given through a symlink): display paths below it are inside too, and messages name it"""
    named: tuple[str, ...] = ()
    """how the containment refusal names the workspace when this root's walk is left: every
    root of the provider, as configured (DEVIATIONS D28); empty: this root alone (``shown``)"""
    anchor: "Root | None" = None
    """a view root (``LocalFileSystem.narrowed``, DEVIATIONS M3): the provider root it lies in.
    Its own path is then not trusted: every walk starts at the anchor and steps down to ``real``
    without following a symlink, so a view root swapped for a symlink leads nowhere (``Escape``)"""

    @property
    def names(self) -> tuple[str, ...]:
        """the roots the refusal names (``named``, or ``(shown,)``)"""
        return self.named or (self.shown,)

    def contains(self, path: str) -> bool:
        """Is the absolute normalized ``path`` inside the root, lexically (as ``real`` or ``shown``)?"""
        return inside(path, self.real) or inside(path, self.shown)


NOWHERE = Root("\0", "\0")
"""a root no path is inside (a NUL is in no path): the walk root of a key outside every root
of a confined provider, so every walk from it is an ``Escape``"""


class Escape(PermissionError):
    """The resolution or a walk would leave the root (a symlink pointing out, ``..`` above it,
    or a component changed into a symlink after resolution).

    :param root: the root that was left (``None`` where unknown); the message names ``root.shown``
    """

    def __init__(self, root: Root | None, where: str) -> None:
        super().__init__(13, "outside the workspace", where)
        self.root = root


def inside(path: str, root: str) -> bool:
    """Is the absolute normalized ``path`` the ``root`` itself or below it (no prefix tricks)?"""
    return path == root or path.startswith(root if root.endswith("/") else root + "/")


def _below(parts: list[str], root: Root) -> list[str] | None:
    """The components of an absolute path (``parts``, split on ``/``) below ``root`` (real or
    shown), or ``None`` when it is not lexically inside it."""
    parts = [p for p in parts if p]
    for base in (root.real, root.shown):
        head = [p for p in base.split("/") if p]
        if parts[: len(head)] == head:
            return parts[len(head):]
    return None


def _moved(root: Root) -> bool:
    """A view root (``anchor`` set) whose path is a symlink now, or lies below one."""
    if root.anchor is None:
        return False
    try:
        return real_path_in(root.real, root.anchor, strict=False) != root.real
    except Escape:
        return True


def _ancestor_of(path: str, roots: tuple[Root, ...]) -> bool:
    """Is ``path`` a strict ancestor of a root's real path (so itself a real directory)?"""
    return any(inside(r.real, path) and r.real != path for r in roots)


def _entered(path: str, roots: tuple[Root, ...]) -> Root | None:
    """The root whose real path ``path`` is, if any."""
    return next((r for r in roots if r.real == path), None)


def real_path_in(path: str, root: Root, *, strict: bool, others: tuple[Root, ...] = ()) -> str:
    """``os.path.realpath(path, strict=strict)`` for a ``path`` lexically inside ``root``,
    resolved one component at a time from ``root.real`` without ever stepping outside it.

    A symlink's relative target continues from where it is; an absolute one must lie lexically
    inside the root (as ``real`` or ``shown``). ``..`` never climbs above the root. Non-strict,
    a missing component and everything after it are kept as written (``..`` after it is lexical).

    :param others: the provider's other roots (several roots, DEVIATIONS D28/D36): a symlink
        that leads out of ``root`` into one of them is followed there. Between roots nothing is
        looked at: from the root's real path only ``..`` and names that lead to another root's
        real path (ancestors of real paths are real directories) are taken, lexically; any other
        step out (back into the root left, too) is the usual ``Escape``, so nothing is learnt
        about the rest of the disk
    :raises Escape: at the first step that would leave the roots (before looking at anything there)
    :raises OSError: strict: as ``os.lstat`` of a component inside the root (``FileNotFoundError``,
        ``NotADirectoryError``, ``PermissionError``, …); ``ELOOP`` after ``_MAX_LINKS`` symlinks
    """
    if root.anchor is None:
        parent, _, name = path.rpartition("/")
        if (parent or "/") == root.real and name not in ("", ".", ".."):
            # directly below the root (most paths an agent reads): the walk's one step, on this thread
            try:
                if not stat_mod.S_ISLNK(os.lstat(path).st_mode):
                    return path
            except OSError:
                if strict:
                    raise
                return path  # as realpath: a missing component is kept as written
            # a symlink: the walk below follows it
    below = _below(path.split("/"), root)
    if below is None or _moved(root):
        raise Escape(root, path)
    roots = (root, *(r for r in others if r is not root))
    pending = below[::-1]
    current = root.real
    links = 0
    missing = False
    between = False  # D36: lexically between roots (on an ancestor of a root's real path)
    while pending:
        name = pending.pop()
        if name in ("", "."):
            continue
        if between:
            current = posixpath.dirname(current) if name == ".." else posixpath.join(current, name)
            entered = _entered(current, roots)
            if entered is not None:
                if entered is root or _moved(entered):  # out of a root and back in: refused too
                    raise Escape(root, path)
                root, between = entered, False
            elif not _ancestor_of(current, roots):
                raise Escape(root, path)
            continue
        if name == "..":
            if current == root.real:
                if len(roots) == 1 or missing:
                    raise Escape(root, path)
                between = True  # D36: on towards another root, looking at nothing on the way
            current = posixpath.dirname(current)
            continue
        candidate = posixpath.join(current, name)
        if missing:
            current = candidate
            continue
        try:
            st = os.lstat(candidate)
        except OSError:
            if strict:
                raise
            missing = True  # as realpath: the rest is kept as written
            current = candidate
            continue
        if not stat_mod.S_ISLNK(st.st_mode):
            current = candidate
            continue
        links += 1
        if links > _MAX_LINKS:
            raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), path)
        link = os.readlink(candidate)
        if link.startswith("/"):
            into = next(((r, rest) for r in roots if (rest := _below(link.split("/"), r)) is not None), None)
            if into is None or _moved(into[0]):
                raise Escape(root, path)
            root, rest = into
            current = root.real
            pending.extend(rest[::-1])
        else:
            pending.extend(link.split("/")[::-1])
    if between:
        raise Escape(root, path)
    return current


_PATH_MAX = 4096
"""Linux ``PATH_MAX`` (bytes, NUL included): descriptor walks could go deeper, but a path no
other program can open is refused, as it is without a root (``ENAMETOOLONG``)"""


def _parts(path: str, root: Root) -> list[str]:
    if not inside(path, root.real):
        raise Escape(root, path)
    if len(path.encode("utf-8", "surrogateescape")) >= _PATH_MAX:
        raise OSError(errno.ENAMETOOLONG, os.strerror(errno.ENAMETOOLONG), path)
    rel = path[len(root.real):].lstrip("/")
    return [p for p in rel.split("/") if p]


def _is_link(name: str, dir_fd: int | None) -> bool:
    try:
        return stat_mod.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _below_root(root: Root, name: str) -> str:
    """The absolute path of ``name``, one component directly below the root."""
    return root.real + name if root.real.endswith("/") else root.real + "/" + name


def _step(where: str, dir_fd: int | None, root: Root, part: str, *, create: bool) -> int:
    """Open the directory ``where`` (a name below ``dir_fd``, or the absolute path of a
    component directly below the root when ``dir_fd`` is ``None``) without following a symlink.

    :raises Escape: ``part`` is ``.``/``..`` or a symlink now
    """
    if part in (".", ".."):
        raise Escape(root, part)
    try:
        return _open_subdir(where, dir_fd, root, part)
    except FileNotFoundError:
        if not create:
            raise
        try:
            os.mkdir(where, 0o777, dir_fd=dir_fd)
        except FileExistsError:
            pass
        return _open_subdir(where, dir_fd, root, part)  # a symlink planted since the mkdir: Escape too


def _open_subdir(where: str, dir_fd: int | None, root: Root, part: str) -> int:
    """``where`` (see ``_step``) as a directory, never through a symlink (``Escape`` then)."""
    try:
        return os.open(where, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=dir_fd)
    except OSError as exc:
        # a symlink: ELOOP, or ENOTDIR (Linux checks O_DIRECTORY before O_NOFOLLOW)
        if exc.errno == errno.ELOOP or (exc.errno == errno.ENOTDIR and _is_link(where, dir_fd)):
            raise Escape(root, part) from exc
        raise


def _anchored(root: Root, parts: list[str]) -> tuple[Root, list[str]]:
    """``(root, parts)`` as a walk from the provider root when ``root`` is a view root
    (``Root.anchor``): the components down to the view root come first."""
    if root.anchor is None:
        return root, parts
    return root.anchor, _parts(root.real, root.anchor) + parts


def _walk(parts: list[str], root: Root, *, create: bool) -> int:
    if root.anchor is not None:
        outer, steps = _anchored(root, parts)
        try:
            return _walk(steps, outer, create=create)
        except Escape as exc:
            raise Escape(root, exc.filename) from exc
    if not parts:
        return os.open(root.real, _DIR_FLAGS)
    fd = _step(_below_root(root, parts[0]), None, root, parts[0], create=create)
    try:
        for part in parts[1:]:
            nxt = _step(part, fd, root, part, create=create)
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd


def _direct(path: str, name: str) -> bool:
    """May ``path``, directly below the root, be used as an absolute path? (a real name, and
    short enough that the kernel resolves it as it would ``name`` below the root's descriptor)"""
    return name not in ("", ".", "..") and (len(path) < _PATH_MAX // 4 or len(path.encode("utf-8", "surrogateescape")) < _PATH_MAX)


def _split(path: str) -> tuple[str, str]:
    """``(posixpath.dirname(path), posixpath.basename(path))`` of an absolute normalized path."""
    parent, _, name = path.rpartition("/")
    return parent or "/", name


def open_dir(path: str, *, root: Root | None, create: bool = False) -> int:
    """A directory descriptor for ``path`` (created with parents when ``create``).

    :raises Escape: the walk met a symlink or left ``root``
    :raises OSError: as ``os.open`` (``FileNotFoundError`` when missing and not ``create``)
    """
    if root is None:
        if create:
            os.makedirs(path, exist_ok=True)
        return os.open(path, _DIR_FLAGS)
    return _walk(_parts(path, root), root, create=create)


def open_in(path: str, flags: int, mode: int = 0o777, *, root: Root | None) -> int:
    """``os.open(path, flags, mode)``, beneath ``root`` when given (final component not followed)."""
    if root is None:
        return os.open(path, flags, mode)
    if root.anchor is not None and not inside(path, root.real):
        raise Escape(root, path)
    if path == root.real and root.anchor is None:  # the root itself (the caller's fstat says what it is)
        return os.open(root.real, flags, mode)
    parent_path, name = _split(path)
    if path == root.real:  # a view root: opened from its parent, reached from the anchor
        parent = _walk(_parts(parent_path, root.anchor), root.anchor, create=False)  # type: ignore[arg-type]
    elif parent_path == root.real and root.anchor is None and _direct(path, name):
        # directly below the root: by absolute path (see the module docstring)
        return _open_final(path, flags, mode, None, root, path)
    else:
        parent = open_dir(parent_path, root=root)
    try:
        return _open_final(name, flags, mode, parent, root, path)
    finally:
        os.close(parent)


def _open_final(name: str, flags: int, mode: int, parent: int | None, root: Root, path: str) -> int:
    """Open the final component ``name`` (in directory ``parent``, or as an absolute path)
    without following it; a symlink there is an ``Escape`` of ``path``."""
    try:
        return os.open(name, flags | os.O_NOFOLLOW, mode, dir_fd=parent)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Escape(root, path) from exc
        raise


def stat_in(path: str, *, root: Root | None) -> os.stat_result:
    """``os.stat(path)`` of a resolved path; beneath ``root`` the final component is not
    followed (a symlink swapped in shows as a symlink, i.e. type ``other``)."""
    if root is None:
        return os.stat(path)
    if root.anchor is not None:
        if not inside(path, root.real):
            raise Escape(root, path)
        try:
            return stat_in(path, root=root.anchor)
        except Escape as exc:
            raise Escape(root, exc.filename) from exc
    if path == root.real:
        return os.stat(root.real)
    parent_path, name = _split(path)
    if parent_path == root.real and _direct(path, name):
        return os.stat(path, follow_symlinks=False)  # directly below the root (module docstring)
    parent = open_dir(parent_path, root=root)
    try:
        return os.stat(name, dir_fd=parent, follow_symlinks=False)
    finally:
        os.close(parent)


def lstat_in(path: str, *, root: Root | None) -> os.stat_result:
    """``os.lstat(path)`` of an unresolved absolute normalized ``path``; beneath ``root`` its
    parent is resolved with ``real_path_in`` (so nothing outside the root is looked at).

    :raises Escape: the parent's resolution leaves the root
    :raises OSError: as ``os.lstat``
    """
    if root is None:
        return os.lstat(path)
    below = _below(path.split("/"), root)
    if below is None:
        raise Escape(root, path)
    if not below:
        return os.lstat(root.real) if root.anchor is None else lstat_in(root.real, root=root.anchor)
    parent = real_path_in(posixpath.dirname(path), root, strict=True)
    return stat_in(posixpath.join(parent, below[-1]), root=root)
