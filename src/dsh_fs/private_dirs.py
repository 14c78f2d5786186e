"""User-private directories: one check for every place dsh-fs keeps
per-user state in a location others might reach first — the cross-process lock directory
(``fs_local.locks``), the session store (``dsh_fs.session_store``).

A directory is *private* when it is a real directory (not a symlink, not even one to a
directory), owned by this process's effective user, and writable by nobody else. In a shared
``/tmp`` another user could otherwise pre-create it (and hold the locks, or read and plant
files), or plant a symlink where it goes. Synchronous, no dsh-fs imports: below the providers
(``fs_local.locks``) and the stores above them (``session_store``).
"""

from __future__ import annotations

import os
import stat as stat_mod

__all__ = ("NotPrivate", "ensure_private_dir", "not_private")


class NotPrivate(PermissionError):
    """A directory that must be private to this user is not; ``str(exc)`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason

    def __str__(self) -> str:
        return self.reason


def not_private(directory: str) -> str | None:
    """Why ``directory`` is not private to this user (``None`` when it is).

    :raises FileNotFoundError: when it does not exist
    :raises OSError: when it cannot be looked at
    """
    st = os.lstat(directory)
    if stat_mod.S_ISLNK(st.st_mode):
        return f"{directory} is a symbolic link, not a directory"
    if not stat_mod.S_ISDIR(st.st_mode):
        return f"{directory} is not a directory"
    if st.st_uid != os.geteuid():
        return f"{directory} belongs to another user (uid {st.st_uid})"
    if st.st_mode & 0o022:
        return f"{directory} may be written by others (mode {stat_mod.S_IMODE(st.st_mode):04o})"
    return None


def ensure_private_dir(path: str, *, levels: int = 1) -> None:
    """Create ``path`` and any missing parents (each ``0o700``, whatever the umask), then check
    that it and its ``levels - 1`` nearest parents are private to this user.

    :param path: an absolute directory path
    :param levels: how many directories, from ``path`` up, must be private (``2``: also its
        parent, e.g. ``/tmp/dsh-fs-<uid>`` of ``/tmp/dsh-fs-<uid>/locks``)
    :raises NotPrivate: when one of them is not (made by someone else meanwhile, a symlink, …)
    :raises OSError: when a directory cannot be created or looked at
    """
    chain = [path]  # the directories to check, from path up
    while len(chain) < levels and os.path.dirname(chain[-1]) != chain[-1]:
        chain.append(os.path.dirname(chain[-1]))
    missing: list[str] = []  # unchecked ancestors to make
    at = os.path.dirname(chain[-1])
    while at and not os.path.lexists(at):
        missing.append(at)
        if os.path.dirname(at) == at:
            break
        at = os.path.dirname(at)
    for directory in reversed(missing):
        _make(directory)
    for index, directory in enumerate(reversed(chain)):  # top down: nothing is made in a foreign one
        _make(directory)
        if index >= len(chain) - levels:
            reason = not_private(directory)
            if reason is not None:
                raise NotPrivate(reason)


def _make(directory: str) -> None:
    try:
        os.mkdir(directory, 0o700)
    except FileExistsError:
        pass  # made before, or meanwhile by someone else: the check decides
