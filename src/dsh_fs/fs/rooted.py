"""Model paths inside a rooted namespace (providers whose files live under one workspace root:
the in-memory provider, S3 under a key prefix). Pure: no I/O.

The model sees absolute POSIX display paths under a *display root* (``/`` by default). A
path resolves lexically against the session cwd exactly as the local provider resolves it
(``fs.paths.node_resolve``: ``.``/``..`` collapsed, ``/..`` is ``/``, duplicate and trailing
slashes dropped); the result must stay inside the root, or the call fails with the one
containment error of every provider, ``FS_PERMISSION_DENIED`` ``cannot resolve "<display>":
outside the workspace "<root>"`` (the resolved display path, as the local provider shows it).

The *relative key* of a display path is the part below the root (``""`` for the root itself),
segments joined by ``/``. The display path of a relative key is ``root + "/" + key``.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import blank_path, no_home, nul_in_path, outside_workspace
from .paths import is_blank, names_home, node_resolve

__all__ = ("RootedPath", "check_root", "display_of", "resolve_rooted")


@dataclass(frozen=True, slots=True)
class RootedPath:
    """A resolved path inside the root."""

    display: str
    """absolute display path (``root`` itself for the workspace root)"""
    rel: str
    """the path below the root, ``/``-separated, no leading or trailing slash; ``""`` = root"""


def check_root(root: str) -> str:
    """Normalize a display root: absolute, no trailing slash except for ``/`` itself.

    :raises ValueError: when ``root`` is not absolute or has ``.``/``..`` segments
    """
    if not isinstance(root, str) or not root.startswith("/"):
        raise ValueError(f"display root must be an absolute path, not {root!r}")
    parts = [p for p in root.split("/") if p]
    if any(p in (".", "..") for p in parts):
        raise ValueError(f"display root must be normalized, not {root!r}")
    return "/" + "/".join(parts)


def display_of(root: str, rel: str) -> str:
    """The display path of relative key ``rel`` under ``root``."""
    if not rel:
        return root
    return ("" if root == "/" else root) + "/" + rel


def resolve_rooted(path: str, base: str, root: str, *, home_tilde: bool = False) -> RootedPath:
    """Resolve the model path ``path`` against ``base`` (an absolute display path) inside ``root``.

    :param path: the model's path (relative or absolute); never trimmed
    :param base: the session cwd (absolute); ignored for an absolute ``path``
    :param root: a display root as returned by :func:`check_root`
    :param home_tilde: DEVIATIONS D20: a leading ``~``/``~/`` names a home directory, which a
        rooted workspace does not have: refused (else ``~`` is a literal name)
    :raises FsError: ``FS_NOT_FOUND`` ``file_path must be a non-empty string`` for a blank
        path (JS ``trim`` semantics, §2.2 step 3), ``no_home`` (D20); ``FS_PERMISSION_DENIED``
        ``cannot resolve "<dp>": path contains a NUL byte``, and ``… outside the workspace "<root>"``
    """
    if is_blank(path):
        raise blank_path()
    if home_tilde and names_home(path):
        raise no_home(path)
    display = node_resolve(base if base.startswith("/") else "/" + base, path)
    if "\0" in path:
        raise nul_in_path(display)
    segments = [p for p in display.split("/") if p]
    root_parts = [p for p in root.split("/") if p]
    if segments[: len(root_parts)] != root_parts:
        raise outside_workspace(display, root)
    rel = "/".join(segments[len(root_parts):])
    return RootedPath(display=display_of(root, rel), rel=rel)
