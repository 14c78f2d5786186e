"""The provider seam (``ctx.fs``): the ``FileSystem`` ABC, its vocabulary, ``FsError`` and the
three ``fs/*`` event names (REFERENCE-SPEC §1). Nothing in this package does I/O.

| module | owns |
|---|---|
| ``filesystem`` | ``FileSystem``: the eight primitives, ``delete``/``rename``, the optional ``read_window``/``is_current``/``read_text_at``/``workspace_roots``, the lifecycle (``aclose``) |
| ``types`` | targets, ``Info``/``PathInfo``/``DirEntry``, intents, outcomes |
| ``errors`` | ``FsError``, ``FsErrorCode`` and the message catalog (one builder per message, ``check_abort``) |
| ``events`` | the ``fs/*`` event names and their listener contracts |
| ``text``, ``byte_text`` | strict UTF-8, BOM, NUL and line-ending rules (on text; on raw bytes) |
| ``legacy_text`` | legacy encodings byte-exact: the list, detection, unencodable characters, the proven edit (F7–F9) |
| ``literal_edit``, ``literal_edit_stream`` | literal matching on decoded text; the same over a byte stream |
| ``occurrences`` | counting occurrences at C speed: the reference's scan, and with overlaps (D15) |
| ``provider_rules`` | ``TextRules`` (profile switches, ``write_max_size``) and the whole-object read/rewrite/edit rules |
| ``window`` | read windows (``ReadWindow``, ``WindowBuilder``) |
| ``media`` | the image media type a path's extension declares (the reference's ``IMAGE_EXTENSIONS``) |
| ``image_header`` | an image file's format and size from its header alone (PNG/GIF/JPEG/WebP) |
| ``paths``, ``rooted`` | Node-style path resolution; lexical resolution inside a display root |
| ``locks`` | the in-process per-target mutation lock every provider shares |
| ``search_host`` | ``SearchHost``: the optional capability of a provider whose files are another machine's, where ripgrep runs (DEVIATIONS C4) |
| ``sandbox`` | sandbox modes: the vocabulary the fence and the message catalog share, the fence's text (docs/SANDBOX.md) |
| ``path_rules`` | path rules: deny / read-only gitignore patterns, how a path is judged, the rules file, the prompt text (docs/PATH-RULES.md) |
| ``witness`` | the commit witness: how a provider hands a recorder the bytes a mutation replaces and commits (``FileSystem.witnessed_mutations``, docs/HISTORY.md) |
| ``backend`` | the seam's vocabulary in one import, for a provider author (re-exports only) |

Only the vocabulary is re-exported here; import the rule modules by name.
"""

from .errors import FsError as FsError, FsErrorCode as FsErrorCode
from .events import FS_EDIT_INTENT as FS_EDIT_INTENT, FS_OBSERVED as FS_OBSERVED, FS_WRITE_INTENT as FS_WRITE_INTENT
from .filesystem import FileSystem as FileSystem
from .types import (
    CreateIfAbsent as CreateIfAbsent,
    DeleteIntent as DeleteIntent,
    DeleteOutcome as DeleteOutcome,
    DirEntry as DirEntry,
    EditIntent as EditIntent,
    EditOutcome as EditOutcome,
    EditRequest as EditRequest,
    FileType as FileType,
    Info as Info,
    PathInfo as PathInfo,
    PathType as PathType,
    RenameIntent as RenameIntent,
    RenameOutcome as RenameOutcome,
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
    "DeleteIntent",
    "DeleteOutcome",
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
    "RenameIntent",
    "RenameOutcome",
    "ReplaceIfVersion",
    "Target",
    "TargetKey",
    "Version",
    "WalkEntry",
    "WriteIntent",
    "WriteOutcome",
)
