"""The fixed ripgrep argument vectors of ``glob`` and ``grep`` (REFERENCE-SPEC §6.1, §6.2). Pure.

The reference builds one shell command string with every model value single-quoted; we run
ripgrep without a shell, so the same words go into ``argv`` unquoted (nothing to inject).
Differences, all deliberate:

* ``--no-config`` first: a user's ``RIPGREP_CONFIG_PATH`` file cannot add flags (``--pre``
  would run a program per file; others would change the results);
* ``default`` profile: ``glob`` lists newest first (``--sortr=modified``, DEVIATIONS S1) and
  ``grep`` reports files in path order (``--sort=path``, S2); the ``reference`` profile keeps
  ``--sort=modified`` (oldest first) and ripgrep's parallel, unordered ``grep``.

Model values ride in ``--flag=value`` form and the search root behind ``--``, so a leading
``-`` is never an option.
"""

from __future__ import annotations

__all__ = ("GLOB_VCS_EXCLUDES", "glob_argv", "grep_argv", "grep_files_argv")

GLOB_VCS_EXCLUDES = (".git", ".svn", ".hg", ".bzr", ".jj", ".sl")
"""VCS metadata directories ``glob`` never lists (two negated globs each: one prunes the
directory during the walk, one excludes its contents when the search root is inside it)"""


def _tail(path: str | None) -> list[str]:
    return ["--", path] if path is not None else []


def _follow(follow: bool) -> list[str]:
    return ["--follow"] if follow else []


def glob_argv(pattern: str, path: str | None, *, newest_first: bool, follow: bool = False,
              also: tuple[str, ...] = ()) -> list[str]:
    """``rg --files --glob=<pattern> --sort=modified --no-ignore --hidden <VCS excludes> [-- <path>]``
    (without the program name); ``follow``: ``--follow`` after ``--files`` (S8); ``also``:
    more globs after the pattern's, a path matching any is listed (S10)."""
    argv = ["--no-config", "--files", *_follow(follow), f"--glob={pattern}", *(f"--glob={g}" for g in also),
            "--sortr=modified" if newest_first else "--sort=modified", "--no-ignore", "--hidden"]
    for name in GLOB_VCS_EXCLUDES:
        argv += [f"--glob=!**/{name}", f"--glob=!**/{name}/**"]
    return argv + _tail(path)


def grep_argv(pattern: str, path: str | None, include: str | None, *, sorted_by_path: bool,
              follow: bool = False, text: bool = False) -> list[str]:
    """``rg --json --regexp=<pattern> [--glob=<include>] [-- <path>]`` (without the program name);
    ``follow``: ``--follow`` after ``--json`` (S8); ``text``: ``--text`` after that, so a file
    with a NUL byte is searched rather than dropped as binary (S14)."""
    argv = ["--no-config", "--json", *_follow(follow), *(["--text"] if text else [])]
    if sorted_by_path:
        argv.append("--sort=path")
    argv.append(f"--regexp={pattern}")
    if include is not None:
        argv.append(f"--glob={include}")
    return argv + _tail(path)


def grep_files_argv(include: str | None, path: str | None) -> list[str]:
    """The files a ``grep`` over ``path`` would search (same ignore rules, hidden-file rule
    and ``include`` filter), in path order, each ended by a NUL (a name may hold a line break:
    D22): ``rg --files --null --sort=path [--glob=<include>] [-- <path>]``. Used to copy only
    those files from a provider without a host path."""
    argv = ["--no-config", "--files", "--null", "--sort=path"]
    if include is not None:
        argv.append(f"--glob={include}")
    return argv + _tail(path)

