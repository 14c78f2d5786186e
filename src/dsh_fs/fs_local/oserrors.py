"""The local provider's OS-error mapping (DEVIATIONS A2), with the catalog's messages.

OS errors become coded ``FsError`` s: EACCES/EPERM → ``FS_PERMISSION_DENIED``
``cannot <verb> "<path>": permission denied``; others → ``FS_IO_ERROR``
``cannot <verb> "<path>": <strerror>``; a containment walk's ``Escape`` → the
``outside the workspace`` refusal. Abort checkpoints are ``dsh_fs.fs.errors.check_abort``.
"""

from __future__ import annotations

import errno
import os

from ..fs.errors import FsError, Verb, io_error, not_found, outside_workspace, permission_denied
from .containment import NOWHERE, Escape

__all__ = ("list_error", "map_os_error")


def map_os_error(exc: OSError, verb: Verb, display: str) -> FsError:
    """An ``OSError`` as the coded ``FsError`` of DEVIATIONS A2."""
    if isinstance(exc, Escape):
        named = exc.root.names if exc.root is not None and exc.root is not NOWHERE else None
        return outside_workspace(display, named, cause=exc)
    if exc.errno in (errno.EACCES, errno.EPERM):
        return permission_denied(verb, display, cause=exc)
    return io_error(verb, display, os.strerror(exc.errno) if exc.errno else str(exc), cause=exc)


def list_error(exc: BaseException, display: str) -> FsError:
    """A failure while listing ``display`` (§2.6): a vanished or non-directory parent is
    ``FS_NOT_FOUND`` ``cannot list "<dp>": not found``; EACCES/EPERM ``FS_PERMISSION_DENIED``;
    any other error ``FS_IO_ERROR`` with its strerror (A2)."""
    if isinstance(exc, FsError):
        return exc
    if isinstance(exc, (FileNotFoundError, NotADirectoryError)):
        return not_found("list", display)
    if isinstance(exc, OSError) and exc.errno in (errno.EACCES, errno.EPERM):
        return permission_denied("list", display, cause=exc)
    if isinstance(exc, OSError):
        return io_error("list", display, os.strerror(exc.errno) if exc.errno else str(exc), cause=exc)
    return io_error("list", display, str(exc), cause=exc)
