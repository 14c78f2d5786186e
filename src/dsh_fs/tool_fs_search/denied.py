"""The deployment's path rules in a search on the host disk (docs/PATH-RULES.md, DEVIATIONS P4).

``glob``/``grep`` on the local disk run ripgrep on host paths, outside the seam, so they apply
the rules themselves, twice:

* before ripgrep runs, ``denied_below`` walks the searched directory as ripgrep would (through
  the symlinks it follows) and finds every denied entry: a file or directory whose path, or
  whose real path (a symlink's target, anything below a symlinked directory), is denied. They
  become ``--glob=!…`` arguments (``deny_globs``), so ripgrep never lists, reads or counts them;
* every path ripgrep prints is judged again (``HostRules.admit``: its path and its real path),
  so one made since the walk is still left out of the results, their counts and the saved
  complete result.

A name whose meaning depends on the process that resolves it (``/proc/self``,
``/proc/thread-self``, so ``/dev/fd`` and ``/dev/stdin`` too: ``process_relative``) means
ripgrep's own process to ripgrep and this one here: ``/proc/self/cwd`` is ripgrep's working
directory (the session's) but this process's here, so a walk and a judgment made here would
look at another directory than the one ripgrep searches. So a searched path that leads through
one is given to ripgrep as the real path found here, a symlink that leads through one is kept
from ripgrep like a denied entry, and a printed path that leads through one is never shown.

Blocking (run in a worker thread). Cost with rules: one ``scandir`` of every directory below
the searched one and one pattern test per entry before the search; one ``lstat`` per printed
path (a ``realpath`` per distinct directory, kept for the search).
"""

from __future__ import annotations

import os
import posixpath
import re
import stat
from collections.abc import Callable

from ..fs.path_rules import RuleView

__all__ = ("HostRules", "MAX_DENY_GLOBS", "denied_below", "deny_globs", "nothing_searched", "process_relative")

MAX_DENY_GLOBS = 10_000
"""denied entries given to ripgrep as globs (beyond: the rest are filtered from its output
only; the argument vector stays far below the system's limit)"""

_VCS = frozenset((".git", ".svn", ".hg", ".bzr", ".jj", ".sl"))
"""directories no search lists or walks (``commands.GLOB_VCS_EXCLUDES``)"""

_GLOB_SPECIAL = re.compile(r"([*?\[\]{}!\\])")

_REAL_DIRS_KEPT = 1 << 16
"""directories whose real path one ``HostRules`` keeps"""


_PROCESS_NAMES = frozenset(("self", "thread-self"))
"""names in a ``proc`` file system that stand for the process (thread) resolving them"""
_MAX_LINKS = 40
"""symlinks followed in one resolution (the kernel's own limit, ``ELOOP``)"""


def _on_proc(directory: str) -> bool:
    try:
        return os.stat(directory).st_dev == os.stat("/proc").st_dev
    except OSError:
        return False


def process_relative(path: str) -> bool:
    """Whether the kernel's resolution of the absolute host path ``path`` passes through
    ``self`` or ``thread-self`` of the ``proc`` file system (``/proc/self/cwd/x``, a symlink to
    ``/dev/fd/3``, a link chain ending in one): what it names depends on which process resolves
    it. Components are followed as the kernel follows them (symlinks, then ``..`` physically),
    at most ``_MAX_LINKS`` links; a missing component ends the look (``False``)."""
    pending = [part for part in path.split("/") if part and part != "."]
    done = ""
    links = 0
    while pending:
        part = pending.pop(0)
        if part == "..":
            done = done.rpartition("/")[0]
            continue
        current = done + "/" + part
        if part in _PROCESS_NAMES and _on_proc(done or "/"):
            return True
        try:
            target = os.readlink(current)
        except OSError:
            if not os.path.lexists(current):
                return False
            done = current
            continue
        links += 1
        if links > _MAX_LINKS:
            return False
        if target.startswith("/"):
            done = ""
        pending = [p for p in target.split("/") if p and p != "."] + pending
    return False


class HostRules:
    """The rules of a provider whose files are host files, judged on host paths.

    :param view: the provider's ``FileSystem.path_rules()``
    :param cwd: the host directory ripgrep runs in (relative printed paths are below it)
    """

    def __init__(self, view: RuleView, cwd: str) -> None:
        self.view = view
        self.cwd = posixpath.normpath(cwd)
        self._cwd_slash = self.cwd.rstrip("/") + "/"
        self.same_bases = view.display.bases == view.real.bases
        """the bases' real paths are their paths: a path that is its own real path is judged once"""
        self._real_dirs: dict[str, str] = {}
        self._process_dirs: dict[str, bool] = {}
        self._last: tuple[str, bool] | None = None

    def _process_dir(self, directory: str) -> bool:
        relative = self._process_dirs.get(directory)
        if relative is None:
            if len(self._process_dirs) >= _REAL_DIRS_KEPT:
                self._process_dirs.clear()
            relative = self._process_dirs[directory] = process_relative(directory)
        return relative

    def _real_dir(self, directory: str) -> str:
        real = self._real_dirs.get(directory)
        if real is None:
            if len(self._real_dirs) >= _REAL_DIRS_KEPT:
                self._real_dirs.clear()
            real = self._real_dirs[directory] = os.path.realpath(directory)
        return real

    def denied(self, host: str) -> bool:
        """Whether the absolute, normalized host path ``host`` is denied: by its path, or by its
        real path (its directory's real path and its name; a symlink's target); or whether it
        leads through a process's own name (``process_relative``: ripgrep's real path is not
        this process's)."""
        if self.view.display.verdict(host) == "deny":
            return True
        parent, _, name = host.rpartition("/")
        if self._process_dir(parent or "/"):
            return True
        real = self._real_dir(parent or "/").rstrip("/") + "/" + name
        try:
            if stat.S_ISLNK(os.lstat(host).st_mode):
                if process_relative(host):
                    return True
                real = os.path.realpath(host)
        except OSError:
            pass  # gone since it was printed: judged by its name
        return not (real == host and self.same_bases) and self.view.real.verdict(real) == "deny"

    def judged(self, path: str, real: str) -> bool:
        """Whether ``path`` (its real path ``real``) is denied, judging it once when both are one."""
        view = self.view
        return view.display.verdict(path) == "deny" or (
            not (real == path and self.same_bases) and view.real.verdict(real) == "deny")

    def admit(self, printed: str) -> bool:
        """Whether to show a path ripgrep printed (relative to ``cwd``, or absolute). A path
        repeated right after itself (the lines of one file in ``grep``) gets the same answer."""
        last = self._last
        if last is not None and last[0] == printed:
            return last[1]
        verdict = not self.denied(self._host(printed))
        self._last = (printed, verdict)
        return verdict

    def _host(self, printed: str) -> str:
        """The normalized host path of a printed path: by concatenation when it is relative and
        already normal (what ripgrep prints without a path argument)."""
        if printed[:1] != "/" and "//" not in printed and "/./" not in printed and "/../" not in printed \
                and not printed.startswith(("./", "../")) and not printed.endswith(("/.", "/..")) \
                and printed not in (".", ".."):
            return self._cwd_slash + printed
        return posixpath.normpath(posixpath.join(self.cwd, printed))

    def admit_many(self, printed: list[str]) -> list[str]:
        """The paths of ``printed`` that ``admit`` shows, in order."""
        return [path for path in printed if self.admit(path)]


def denied_below(top: str, rules: HostRules, *, follow: bool, root: str | None = None,
                 stopped: Callable[[], bool] = lambda: False) -> list[str]:
    """The denied entries below the host directory ``top`` that ripgrep would reach: files and
    directories whose path or real path is denied, and symlinks leading to a denied place
    (under ``follow``, as ripgrep follows them; without it ripgrep skips symlinks). Nothing
    below a denied directory is looked at. VCS metadata directories are not walked.

    :param root: a containment root (host path): a symlink whose target lies outside it is not
        walked through (S8 keeps ripgrep out of it)
    :param stopped: asked before each directory; ``True`` ends the walk early
    :return: host paths (as reached: below ``top``, not resolved), in walk order
    """
    found: list[str] = []
    real_top = os.path.realpath(top)
    inside = os.path.realpath(root).rstrip("/") + "/" if root is not None else None
    stack: list[tuple[str, str, frozenset[str]]] = [(top.rstrip("/") or "/", real_top, frozenset((real_top,)))]
    while stack:
        if stopped():
            break
        shown, real, way = stack.pop()
        try:
            with os.scandir(real) as scanned:
                entries = [(e.name, e.is_symlink(), e.is_dir(follow_symlinks=False)) for e in scanned]
        except OSError:
            continue  # unreadable: ripgrep skips it too
        shown_prefix, real_prefix = shown.rstrip("/") + "/", real.rstrip("/") + "/"
        for name, is_link, is_dir in entries:
            path = shown_prefix + name
            if is_link:
                if not follow:
                    continue
                target = os.path.realpath(real_prefix + name)
                if rules.judged(path, target) or process_relative(real_prefix + name):
                    found.append(path)
                elif (name not in _VCS and target not in way and os.path.isdir(target)
                      and (inside is None or (target + "/").startswith(inside))):
                    stack.append((path, target, way | {target}))
                continue
            if rules.judged(path, real_prefix + name):
                found.append(path)
            elif is_dir and name not in _VCS:
                stack.append((path, real_prefix + name, way | {real_prefix + name}))
    return found


_NOTHING_SEARCHED = ("rg: No files were searched, which means ripgrep probably applied a filter you didn't expect.",
                     "Running with --debug will show why files are being skipped.")


def nothing_searched(stderr: str) -> bool:
    """Whether ripgrep's ``stderr`` is only its "No files were searched" notice (exit 2), which
    it gives when its filters left no file: with denied entries excluded, a search of only
    denied files finds nothing, and says nothing of them. Pure."""
    return tuple(line for line in stderr.splitlines() if line.strip()) == _NOTHING_SEARCHED


def _escaped(path: str) -> str:
    return _GLOB_SPECIAL.sub(r"\\\1", path)


def deny_globs(found: list[str], cwd: str, path_arg: str | None) -> list[str]:
    """ripgrep arguments that keep it out of the host paths ``found`` (``denied_below``'s,
    reached from ``path_arg`` or the working directory ``cwd``): for each, ``--glob=!/<path
    below cwd>`` (what ripgrep matches for a path it prints relative to ``cwd``, or absolute
    below it), and, for a search of ``path_arg``, the path as ripgrep prints it from there
    (``--glob=!../x`` for a path argument reaching out of ``cwd``, ``--glob=!**/abs/x`` for an
    absolute one). At most ``MAX_DENY_GLOBS`` entries; special characters escaped."""
    base = posixpath.normpath(cwd).rstrip("/") + "/"
    top = posixpath.normpath(posixpath.join(cwd, path_arg)) if path_arg is not None else None
    out: list[str] = []
    for path in found[:MAX_DENY_GLOBS]:
        if path.startswith(base):
            out.append("--glob=!/" + _escaped(path[len(base):]))
        if top is None or not (path == top or path.startswith(top.rstrip("/") + "/")):
            continue
        rel = path[len(top.rstrip("/")) + 1:]
        printed = (path_arg.rstrip("/") or "/").rstrip("/") + "/" + rel if path_arg else rel
        out.append(("--glob=!**" if printed.startswith("/") else "--glob=!") + _escaped(printed))
    return out
