"""The local provider's OS-error mapping (DEVIATIONS A2), with the catalog's messages.

OS errors become coded ``FsError`` s: EACCES/EPERM → ``FS_PERMISSION_DENIED``
``cannot <verb> "<path>": permission denied``; others → ``FS_IO_ERROR``
``cannot <verb> "<path>": <strerror>``; a containment walk's ``Escape`` → the
``outside the workspace`` refusal. Abort checkpoints are ``dsh_fs.fs.errors.check_abort``.
"""

from __future__ import annotations

import errno
import os

from ..fs.errors import FsError, Verb, io_error, outside_workspace, permission_denied
from .beneath import Escape

__all__ = ("map_os_error",)


def map_os_error(exc: OSError, verb: Verb, display: str) -> FsError:
    """An ``OSError`` as the coded ``FsError`` of DEVIATIONS A2."""
    if isinstance(exc, Escape):
        return outside_workspace(display, exc.root.shown if exc.root is not None else None, cause=exc)
    if exc.errno in (errno.EACCES, errno.EPERM):
        return permission_denied(verb, display, cause=exc)
    return io_error(verb, display, os.strerror(exc.errno) if exc.errno else str(exc), cause=exc)
