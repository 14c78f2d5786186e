"""The provider seam (``ctx.fs``): the ``FileSystem`` ABC, its vocabulary, ``FsError`` and
the three ``fs/*`` event names. No I/O here; the text rules in ``text``, ``literal_edit``
and ``paths`` are pure and shared by every provider."""

from .errors import FsError as FsError, FsErrorCode as FsErrorCode
from .events import FS_EDIT_INTENT as FS_EDIT_INTENT, FS_OBSERVED as FS_OBSERVED, FS_WRITE_INTENT as FS_WRITE_INTENT
from .filesystem import FileSystem as FileSystem
from .types import (
    CreateIfAbsent as CreateIfAbsent,
    DirEntry as DirEntry,
    EditIntent as EditIntent,
    EditOutcome as EditOutcome,
    EditRequest as EditRequest,
    FileType as FileType,
    Info as Info,
    PathInfo as PathInfo,
    PathType as PathType,
    ReplaceIfVersion as ReplaceIfVersion,
    Target as Target,
    TargetKey as TargetKey,
    Version as Version,
    WalkEntry as WalkEntry,
    WriteIntent as WriteIntent,
    WriteOutcome as WriteOutcome,
)

__all__ = (
    "CreateIfAbsent",
    "DirEntry",
    "EditIntent",
    "EditOutcome",
    "EditRequest",
    "FS_EDIT_INTENT",
    "FS_OBSERVED",
    "FS_WRITE_INTENT",
    "FileSystem",
    "FileType",
    "FsError",
    "FsErrorCode",
    "Info",
    "PathInfo",
    "PathType",
    "ReplaceIfVersion",
    "Target",
    "TargetKey",
    "Version",
    "WalkEntry",
    "WriteIntent",
    "WriteOutcome",
)
