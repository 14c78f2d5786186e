"""Which of the paths ripgrep printed under ``--follow`` are shown (DEVIATIONS S8).

With symlink following on, ripgrep lists what is behind a link (``symlink/*`` finds
``symlink/a.md``), stops at loops (it reports them on stderr and exits 2) and would also list
what a link leading out of the containment root points at, or reach one file again through a
loop. ``LinkFilter.admit`` keeps a printed path only when no link on its way leads out of the
containment root (when there is one): neither the file (a link to a file outside) nor any
directory above it (a link out, even one that comes back in, as ``up -> ..`` at the root
would: the loop's copies are dropped with it). ripgrep itself stops at a link to an ancestor,
so no file is listed twice under one path; a file behind two links inside the root is listed
under each name, as ``find -L`` does.

Cost: one ``realpath`` per distinct directory (cached); for ``grep`` also one ``lstat`` per
file with matches (and a ``realpath`` when it is a link). Only the local disk needs it (the mirror
of other providers has no links). Not here: how ripgrep is run or its output parsed.
"""

from __future__ import annotations

import os
import posixpath
import re
import stat

__all__ = ("LinkFilter", "exclude_globs", "loops_only", "outward_links")

_VCS = frozenset((".git", ".svn", ".hg", ".bzr", ".jj", ".sl"))
_GLOB_SPECIAL = re.compile(r"([*?\[\]{}!\\])")


def outward_links(top: str, root: str) -> list[str]:
    """The symlinks below the host directory ``top`` (not followed, VCS metadata directories
    skipped) whose target, resolved, is outside ``root`` or missing: the ones ripgrep must not
    descend into (``exclude_globs``). Blocking (run it in a worker thread); a directory that
    cannot be read is skipped, as ripgrep skips it.

    :return: host paths, in walk order
    """
    real_root = os.path.realpath(root).rstrip("/") + "/"
    found: list[str] = []
    stack = [top]
    while stack:
        directory = stack.pop()
        try:
            with os.scandir(directory) as entries:
                for entry in entries:
                    if entry.is_symlink():
                        real = os.path.realpath(entry.path)
                        if not (real + "/").startswith(real_root):
                            found.append(entry.path)
                    elif entry.is_dir(follow_symlinks=False) and entry.name not in _VCS:
                        stack.append(entry.path)
        except OSError:
            continue
    return found


def exclude_globs(links: list[str], cwd: str) -> list[str]:
    """ripgrep arguments that keep it out of ``links`` (host paths): ``--glob=!/<path>``
    anchored at ``cwd`` (where ripgrep runs), special characters escaped. A link that is not
    below ``cwd`` cannot be named so; ``LinkFilter`` still drops what ripgrep finds behind it."""
    prefix = posixpath.normpath(cwd).rstrip("/") + "/"
    globs: list[str] = []
    for link in links:
        if link.startswith(prefix):
            globs.append("--glob=!/" + _GLOB_SPECIAL.sub(r"\\\1", link[len(prefix):]))
    return globs


_LOOP = re.compile(r"^rg: File system loop found: .+ points to an ancestor .+$")


def loops_only(stderr: str) -> bool:
    """``True`` when every line of ripgrep's ``stderr`` reports a symlink loop it stopped at
    (its exit status 2 is then no failure of the search). Pure."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    return bool(lines) and all(_LOOP.match(line) for line in lines)


class LinkFilter:
    """Admits a printed path unless a link on its way leads out of ``root`` (host paths)."""

    def __init__(self, cwd: str, root: str | None, *, check_files: bool = True) -> None:
        """:param cwd: the host directory ripgrep runs in (relative printed paths are below it)
        :param root: the containment root (host path; its real path is taken), or ``None``:
            every path is admitted
        :param check_files: also ``lstat`` each printed file (a link to a file outside made
            after the walk): ``grep``, whose results show content; ``glob`` shows names only
            and checks the directories alone (the walk excluded the links it found)"""
        self.check_files = check_files
        self.cwd = posixpath.normpath(cwd)
        self.root = os.path.realpath(root) if root is not None else None
        self._tops = {self.cwd, posixpath.normpath(os.path.abspath(root))} if root is not None else set()
        self._dirs: dict[str, bool] = {}
        self._last: tuple[str, bool] | None = None

    def _inside(self, real: str) -> bool:
        root = self.root
        return root is None or real == root or real.startswith(root.rstrip("/") + "/")

    def admit(self, printed: str) -> bool:
        """Whether to show ``printed`` (a path as ripgrep printed it). A path repeated right
        after itself (the lines of one file in ``grep``) gets the same answer."""
        if self.root is None:
            return True
        if self._last is not None and self._last[0] == printed:
            return self._last[1]
        verdict = self._judge(posixpath.normpath(posixpath.join(self.cwd, printed)))
        self._last = (printed, verdict)
        return verdict

    def _dir_ok(self, directory: str) -> bool:
        """``directory`` and every directory above it up to the working directory or the root
        (lexically) stay inside the root."""
        known = self._dirs.get(directory)
        if known is not None:
            return known
        real = os.path.realpath(directory)
        parent = posixpath.dirname(directory)
        ok = self._inside(real) and (directory in self._tops or parent == directory or self._dir_ok(parent))
        self._dirs[directory] = ok
        return ok

    def _judge(self, host: str) -> bool:
        if not any(host.startswith(top.rstrip("/") + "/") for top in self._tops):
            return True  # not below the root lexically: a path argument containment checked
        if not self._dir_ok(posixpath.dirname(host)):
            return False
        if not self.check_files:
            return True
        try:
            is_link = stat.S_ISLNK(os.lstat(host).st_mode)
        except OSError:
            return True  # gone since ripgrep printed it (not a link we could follow)
        return not is_link or self._inside(os.path.realpath(host))
