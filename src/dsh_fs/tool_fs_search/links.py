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

Cost: one ``lstat`` per distinct directory (a ``realpath`` for a link and for the top) and one verdict per distinct printed directory
(both kept for the search), so a printed path costs a dictionary look-up; for ``grep`` also one
``lstat`` per file with matches (and a ``realpath`` when it is a link). Only the local disk
needs it (the mirror of other providers has no links). Not here: how ripgrep is run or its
output parsed, or the look for links out before it runs (``linkwalk``).
"""

from __future__ import annotations

import os
import posixpath
import re
import stat

__all__ = ("LinkFilter", "exclude_globs", "walk_notices_only")

_GLOB_SPECIAL = re.compile(r"([*?\[\]{}!\\])")


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


_SHOW, _HIDE, _CHECK = 0, 1, 2
"""``LinkFilter``'s verdicts on a printed directory"""

_LOOP = re.compile(r"^rg: File system loop found: .+ points to an ancestor .+$")
_VANISHED = re.compile(r"^rg: .+: No such file or directory \(os error 2\)$")
_LINK_LOOP = re.compile(r"^rg: (.+): IO error for operation on \1: Too many levels of symbolic links \(os error 40\)$")
"""a symlink ripgrep was told to follow that resolves to itself (``a -> a``, ``a -> b -> a``)"""


def walk_notices_only(stderr: str, *, loops: bool, vanished: bool) -> bool:
    """``True`` when every line of ripgrep's ``stderr`` (there is one at least) is a notice of
    its walk that is no failure of the search, so that its exit status 2 is not one either:
    with ``loops``, a symlink loop it stopped at (S8); with ``vanished``, an entry that was not
    there when it reached it — a dangling symlink it was told to follow (S8's ``--follow``), or
    a file or directory removed during the walk (``rg: ./d: No such file or directory (os
    error 2)``, also in its ``IO error for operation on …`` form), or a symlink that resolves
    to itself (``rg: ./a: IO error for operation on ./a: Too many levels of symbolic links (os
    error 40)``: it leads nowhere, as a dangling one does; S15). Pure."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    return bool(lines) and all((loops and _LOOP.match(line))
                               or (vanished and (_VANISHED.match(line) or _LINK_LOOP.match(line)))
                               for line in lines)


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
        self._cwd_slash = self.cwd.rstrip("/") + "/"
        self.root = os.path.realpath(root) if root is not None else None
        self._tops = {self.cwd, posixpath.normpath(os.path.abspath(root))} if root is not None else set()
        self._below = tuple(top.rstrip("/") + "/" for top in self._tops)
        self._dirs: dict[str, bool] = {}
        self._heads: dict[str, int] = {}
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
        head = printed[:printed.rfind("/") + 1]  # "" (in cwd), "/" (at the top) or "dir/"
        kind = self._heads.get(head)
        if kind is None:
            kind = self._heads[head] = self._head_kind(self._host_dir(head))
        verdict = kind == _SHOW or (kind == _CHECK and (not self.check_files or self._file_ok(
            posixpath.normpath(posixpath.join(self.cwd, printed)))))
        self._last = (printed, verdict)
        return verdict

    def admit_many(self, printed: list[str]) -> list[str]:
        """The paths of ``printed`` that ``admit`` shows, in order. Without ``check_files``
        (``glob``) a verdict is one per directory: the distinct directories of the batch are
        judged once each, and the batch comes back as it is when none is hidden (the usual
        case)."""
        if self.root is None:
            return printed
        if self.check_files:
            return [path for path in printed if self.admit(path)]
        heads = self._heads
        hidden: set[str] = set()
        for head in {path[:path.rfind("/") + 1] for path in printed}:
            kind = heads.get(head)
            if kind is None:
                kind = heads[head] = self._head_kind(self._host_dir(head))
            if kind == _HIDE:
                hidden.add(head)
        if not hidden:
            return printed
        return [path for path in printed if path[:path.rfind("/") + 1] not in hidden]

    def _host_dir(self, head: str) -> str:
        """The host path of a printed directory part (``""``, ``"/"`` or ``"dir/"``):
        ``normpath(join(cwd, head))``, by concatenation when ``head`` is relative and already
        normal (no empty, ``.`` or ``..`` component: what ripgrep prints without a path argument)."""
        if not head:
            return self.cwd
        rooted = "/" + head
        if head[0] != "/" and "//" not in rooted and "/./" not in rooted and "/../" not in rooted:
            return self._cwd_slash + head[:-1]
        return posixpath.normpath(posixpath.join(self.cwd, head))

    def _head_kind(self, directory: str) -> int:
        """What a path printed in ``directory`` (a host path) gets: shown (not below the root
        lexically: a path argument containment checked), hidden (a link out on its way) or
        checked (a file there may still be a link out)."""
        if not (directory.rstrip("/") + "/").startswith(self._below):
            return _SHOW
        return _CHECK if self._dir_ok(directory) else _HIDE

    def _dir_ok(self, directory: str) -> bool:
        """``directory`` and every directory above it up to the working directory or the root
        (lexically) stay inside the root: the top's real path is inside, and each step below
        it is a plain directory or a link whose real path is inside."""
        known = self._dirs.get(directory)
        if known is not None:
            return known
        cut = directory.rfind("/")
        parent = directory[:cut] or "/" if cut >= 0 else ""  # posixpath.dirname of a normal path
        if directory in self._tops or parent == directory:
            ok = self._inside(os.path.realpath(directory))
        else:
            ok = self._dir_ok(parent) and self._step_ok(directory)
        self._dirs[directory] = ok
        return ok

    def _step_ok(self, directory: str) -> bool:
        """One step below a directory that stays inside: a plain directory stays inside too
        (one ``lstat``); a link (or a name gone since) only where its real path is inside."""
        try:
            if not stat.S_ISLNK(os.lstat(directory).st_mode):
                return True
        except OSError:
            pass
        return self._inside(os.path.realpath(directory))

    def _file_ok(self, host: str) -> bool:
        try:
            is_link = stat.S_ISLNK(os.lstat(host).st_mode)
        except OSError:
            return True  # gone since ripgrep printed it (not a link we could follow)
        return not is_link or self._inside(os.path.realpath(host))
