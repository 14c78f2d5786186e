"""The local provider's abort checkpoints and OS-error mapping (REFERENCE-SPEC §2; DEVIATIONS A2).

OS errors become coded ``FsError`` s: EACCES/EPERM → ``FS_PERMISSION_DENIED``
``cannot <verb> "<path>": permission denied``; others → ``FS_IO_ERROR``
``cannot <verb> "<path>": <strerror>``; a containment walk's ``Escape`` → the
``outside the workspace`` refusal.
"""

from __future__ import annotations

import errno
import os

from ..core.signal import AbortSignal
from ..fs.errors import FsError, FsErrorCode
from .beneath import Escape

__all__ = ("check_abort", "map_os_error", "outside_error")


def check_abort(signal: AbortSignal | None, message: str) -> None:
    """Raise ``FS_ABORTED`` with ``message`` when ``signal`` is aborted."""
    if signal is not None and signal.aborted:
        raise FsError(message, FsErrorCode.ABORTED)


def map_os_error(exc: OSError, verb: str, display: str) -> FsError:
    """An ``OSError`` as the coded ``FsError`` of DEVIATIONS A2."""
    if isinstance(exc, Escape):
        return outside_error(display, None)
    if exc.errno in (errno.EACCES, errno.EPERM):
        return FsError(f'cannot {verb} "{display}": permission denied', FsErrorCode.PERMISSION_DENIED, cause=exc)
    reason = os.strerror(exc.errno) if exc.errno else str(exc)
    return FsError(f'cannot {verb} "{display}": {reason}', FsErrorCode.IO_ERROR, cause=exc)


def outside_error(display: str, root_display: str | None) -> FsError:
    """``FS_PERMISSION_DENIED``: ``display`` is outside the workspace root ``root_display``
    (containment; the root is named when known)."""
    where = f' "{root_display}"' if root_display else ""
    return FsError(f'cannot resolve "{display}": outside the workspace{where}', FsErrorCode.PERMISSION_DENIED)
