"""``FsError`` and its eleven codes (REFERENCE-SPEC §1.2, message catalog §1.5).

::

    FS_NOT_FOUND          <- resolve (blank path, file-valued parent), read, list, read tool offset
    FS_NOT_DIRECTORY      <- list_dir on a non-directory
    FS_NOT_TEXT           <- read/edit of binary (NUL) or non-UTF-8 bytes
    FS_NOT_REGULAR_FILE   <- read/write/edit of a directory, FIFO, socket, device
    FS_PERMISSION_DENIED  <- EACCES/EPERM (A2), containment violations
    FS_IO_ERROR           <- any other OS error (A2)
    FS_STALE_VERSION      <- guarded write/edit whose target changed or vanished
    FS_NOT_OBSERVED       <- createIfAbsent over an existing file; the policy's edit gate
    FS_AMBIGUOUS_EDIT     <- old_string matched more than once without replace_all
    FS_EDIT_NOT_FOUND     <- old_string not found (or empty)
    FS_ABORTED            <- the abort signal fired at a checkpoint
"""

from __future__ import annotations

import enum

from ..core.errors import HarnessError

__all__ = ("FsError", "FsErrorCode")


class FsErrorCode(str, enum.Enum):
    """The stable codes of ``FsError`` (exactly these eleven)."""

    NOT_FOUND = "FS_NOT_FOUND"
    NOT_DIRECTORY = "FS_NOT_DIRECTORY"
    NOT_TEXT = "FS_NOT_TEXT"
    NOT_REGULAR_FILE = "FS_NOT_REGULAR_FILE"
    PERMISSION_DENIED = "FS_PERMISSION_DENIED"
    IO_ERROR = "FS_IO_ERROR"
    STALE_VERSION = "FS_STALE_VERSION"
    NOT_OBSERVED = "FS_NOT_OBSERVED"
    AMBIGUOUS_EDIT = "FS_AMBIGUOUS_EDIT"
    EDIT_NOT_FOUND = "FS_EDIT_NOT_FOUND"
    ABORTED = "FS_ABORTED"

    def __str__(self) -> str:
        return self.value


class FsError(HarnessError):
    """A filesystem failure with a stable code; ``str(err)`` is the exact §1.5 message.

    :param message: the model-facing message
    :param code: an ``FsErrorCode`` (or its string value)
    :param cause: the underlying exception, if any
    :param searched_text: for ``FS_EDIT_NOT_FOUND``, the LF-normalized text that was searched,
        so the tool layer can look for a near match (DEVIATIONS D5); ``None`` when not kept
    :param needle: for ``FS_EDIT_NOT_FOUND``, the LF-normalized ``old_string``
    """

    def __init__(
        self,
        message: str,
        code: FsErrorCode | str,
        *,
        cause: BaseException | None = None,
        searched_text: str | None = None,
        needle: str | None = None,
    ) -> None:
        super().__init__(message, str(FsErrorCode(code)), cause=cause)
        self.searched_text = searched_text
        self.needle = needle

    @property
    def fs_code(self) -> FsErrorCode:
        """``code`` as an ``FsErrorCode``."""
        return FsErrorCode(self.code)
