"""A byte-level snapshot of a directory tree, to prove that a call changed nothing (or only
its target): two equal snapshots mean no entry was created, removed or changed.
"""

from __future__ import annotations

import os
import stat as stat_mod
from typing import Any

__all__ = ("snapshot",)


def snapshot(root: str, *, dir_times: bool = True) -> dict[str, tuple[Any, ...]]:
    """Every entry below ``root`` (``root`` itself as ``"."``), by path relative to it:

    * a directory: ``("dir", mode, inode, mtime_ns or None)``
    * a regular file: ``("file", bytes, mode, inode, mtime_ns, uid, gid)``
    * a symlink: ``("link", target)``; anything else: ``("other", file type, inode)``

    :param dir_times: include directories' mtimes (a failed write that made and removed a
        named temp file changes its parent's mtime, and nothing else)
    """
    def entry(path: str) -> tuple[Any, ...]:
        st = os.lstat(path)
        if stat_mod.S_ISLNK(st.st_mode):
            return ("link", os.readlink(path))
        if stat_mod.S_ISDIR(st.st_mode):
            return ("dir", stat_mod.S_IMODE(st.st_mode), st.st_ino, st.st_mtime_ns if dir_times else None)
        if stat_mod.S_ISREG(st.st_mode):
            with open(path, "rb") as handle:
                data = handle.read()
            return ("file", data, stat_mod.S_IMODE(st.st_mode), st.st_ino, st.st_mtime_ns, st.st_uid, st.st_gid)
        return ("other", stat_mod.S_IFMT(st.st_mode), st.st_ino)

    out = {".": entry(root)}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in sorted(dirnames + filenames):
            path = os.path.join(dirpath, name)
            out[os.path.relpath(path, root)] = entry(path)
    return out
