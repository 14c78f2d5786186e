"""Where a ``glob`` pattern is matched from (DEVIATIONS S9, S10). Pure.

ripgrep matches a ``--glob`` with a directory part against paths relative to the directory it
runs in (the session workspace), never against the searched ``path`` or as an absolute path:

* S9: ``glob '<root>/folder/*.md'`` finds nothing. An absolute pattern is split into its
  literal directory (resolved by the caller: outside the root it is the containment error)
  and the rest; when that directory is the workspace or below it, the pattern becomes the
  same one anchored there (``/folder/*.md``, leading ``/`` = from where ripgrep runs) and the
  directory is searched.
* S10: ``glob(pattern="testbooks/*.md", path="docs")`` finds nothing. A pattern with a
  directory part is also matched from ``path``: ``/docs/testbooks/*.md`` is added beside it
  (a path matching either is listed), so a pattern written from the workspace still works.

A directory outside the workspace (``path="../x"``) cannot be expressed so; such calls are
left as they are.
"""

from __future__ import annotations

import posixpath
import re

__all__ = ("anchored", "from_path", "split_absolute")

_GLOB_CHARS = re.compile(r"[*?\[\]{}\\!]")
_SPECIAL = re.compile(r"([*?\[\]{}\\!])")


def _escape(literal: str) -> str:
    return _SPECIAL.sub(r"\\\1", literal)


def split_absolute(pattern: str) -> tuple[str, str] | None:
    """``(directory, rest)`` of an absolute ``pattern``: the leading components without glob
    characters (at least ``/``; never the last component) and the remaining pattern; ``None``
    for a relative pattern or one that climbs (``..``)."""
    if not pattern.startswith("/"):
        return None
    parts = [p for p in pattern.split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        return None
    literal = 0
    while literal < len(parts) - 1 and not _GLOB_CHARS.search(parts[literal]):
        literal += 1
    return "/" + "/".join(parts[:literal]), "/".join(parts[literal:])


def _below(directory: str, workspace: str) -> str | None:
    """``directory`` relative to ``workspace`` (display paths): ``""`` for itself, ``None``
    when it is not below it."""
    rel = posixpath.relpath(posixpath.normpath(directory), posixpath.normpath(workspace))
    if rel == ".":
        return ""
    return None if rel == ".." or rel.startswith("../") else rel


def anchored(directory: str, rest: str, workspace: str) -> str | None:
    """S9: the glob matching ``rest`` below the display directory ``directory``, anchored at
    the ``workspace`` ripgrep runs in (``/<dir>/<rest>``, the directory escaped); ``None``
    when ``directory`` is not the workspace or below it."""
    rel = _below(directory, workspace)
    if rel is None:
        return None
    return "/" + (_escape(rel) + "/" if rel else "") + rest


def from_path(pattern: str, searched: str, workspace: str) -> str | None:
    """S10: the second glob for ``pattern`` when it has a directory part and ``path`` names
    the display directory ``searched`` below ``workspace``; ``None`` when nothing is to add
    (no directory part, a ``**/`` start, an absolute pattern, ``path`` is the workspace or
    outside it)."""
    if pattern.startswith(("/", "**")) or "/" not in pattern.rstrip("/"):
        return None
    rel = _below(searched, workspace)
    if not rel:
        return None
    return "/" + _escape(rel) + "/" + pattern
