"""The writable places of ``workspace-write`` on the host disk: the platform temp areas, canonical
paths and containment by path or by directory identity (docs/design/SANDBOX.md §1.2–§1.3).

Host I/O (``realpath``, ``stat``): run it off the event loop. Follows the reference's
``fs-sandbox/src/containment.ts`` and ``sandbox/src/roots.ts`` (``toninfo/deepseek-harness`` at
``48fb3b528b91c94ef429fc2bbc6b8e8f5157e7bb``).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Mapping

__all__ = ("canonical", "granted_temp_areas", "is_under", "lexically_under", "temp_area_refused", "temp_areas")


def canonical(path: str) -> str:
    """``path`` with every symlink resolved (``realpathSync.native``); ``path`` as written when
    that fails (a missing root then matches nothing until it exists)."""
    try:
        return os.path.realpath(path, strict=True)
    except (OSError, ValueError):
        return path


def temp_areas(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """``/tmp`` and ``os.tmpdir()`` (``$TMPDIR``, else ``$TMP``, else ``$TEMP``, else ``/tmp``,
    one trailing ``/`` dropped), each canonical, without duplicates.

    Not ``tempfile.gettempdir()``: that one probes each candidate for writability and may fall
    back to the process cwd.

    :param environ: the environment to read (default ``os.environ``)
    """
    env = os.environ if environ is None else environ
    tmp = env.get("TMPDIR") or env.get("TMP") or env.get("TEMP") or "/tmp"
    if len(tmp) > 1 and tmp.endswith("/"):
        tmp = tmp[:-1]
    out: list[str] = []
    for area in ("/tmp", tmp):
        real = canonical(area)
        if real not in out:
            out.append(real)
    return tuple(out)


def temp_area_refused(area: str) -> str:
    """The stderr line for a temp area ``workspace-write`` does not grant (DEVIATIONS X5)."""
    return (f"dsh-fs: temp area {area} is not writable under workspace-write: it is the filesystem root"
            " (set TMPDIR to a temp directory)")


_REPORTED: set[str] = set()
_REPORTED_LOCK = threading.Lock()


def _report_once(line: str) -> None:
    """Print ``line`` on stderr the first time this process sees it."""
    with _REPORTED_LOCK:
        if line in _REPORTED:
            return
        _REPORTED.add(line)
    print(line, file=sys.stderr, flush=True)


def granted_temp_areas(environ: Mapping[str, str] | None = None, *,
                       report: Callable[[str], None] | None = None) -> tuple[str, ...]:
    """The temp areas ``workspace-write`` grants: ``temp_areas`` without one that is the
    filesystem root (``TMPDIR=/``, or ``/tmp`` a link to ``/``), which would let the fence allow
    every path (DEVIATIONS X5; the reference takes it as given). Each one left out is reported
    (``temp_area_refused``): by default on stderr, once per process.

    :param environ: as ``temp_areas``
    :param report: where the line goes (default: stderr, once per process)
    """
    out: list[str] = []
    for area in temp_areas(environ):
        if area == "/":
            (report or _report_once)(temp_area_refused(area))
            continue
        out.append(area)
    return tuple(out)


def lexically_under(path: str, root: str) -> bool:
    """``path`` is ``root`` or below it, by spelling alone (case-sensitive; ``/w`` does not
    contain ``/wx``; a root ending in ``/``, the filesystem root, contains every absolute path)."""
    if path == root:
        return True
    if root.endswith("/"):
        return path.startswith(root)
    return path.startswith(root + "/")


def is_under(path: str, root: str) -> bool:
    """The reference's ``isPathUnder``: ``lexically_under``, else whether ``path`` or one of its
    existing ancestors is the very directory ``root`` names (same ``st_dev``/``st_ino``: a bind
    mount or another spelling of it). A missing ``root`` contains nothing."""
    if lexically_under(path, root):
        return True
    try:
        st = os.stat(root)
    except (OSError, ValueError):
        return False
    identity = (st.st_dev, st.st_ino)
    current = path
    while True:
        try:
            here = os.stat(current)
        except (OSError, ValueError):
            pass
        else:
            if (here.st_dev, here.st_ino) == identity:
                return True
        parent = os.path.dirname(current)
        if parent == current:
            return False
        current = parent
