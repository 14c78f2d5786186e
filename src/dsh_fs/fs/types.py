"""The seam's vocabulary (REFERENCE-SPEC §1.1): targets, metadata, intents and outcomes.

Opaque identifiers (``TargetKey``, ``Version``) are compared, never parsed, by consumers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, NewType

__all__ = (
    "CreateIfAbsent",
    "DeleteIntent",
    "DeleteOutcome",
    "DirEntry",
    "EditIntent",
    "EditOutcome",
    "EditRequest",
    "FileType",
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

TargetKey = NewType("TargetKey", str)
"""Stable identity of a target (local: a realpath). Lock and observation key; never parse it."""

Version = NewType("Version", str)
"""Freshness token minted by a provider; only ever compared for equality by consumers."""

FileType = Literal["file", "directory", "other"]
PathType = Literal["file", "directory", "symlink", "other"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Target:
    """A resolved path; produced only by ``FileSystem.resolve``."""

    key: TargetKey
    """identity: the same file through any path (symlink, ``..``) has the same key"""
    display_path: str
    """what the model sees: absolute, lexically normalized, symlinks not resolved"""


@dataclass(frozen=True, slots=True, kw_only=True)
class Info:
    """``stat`` metadata of a target (symlinks followed)."""

    version: Version
    """freshness token right now"""
    type: FileType
    """``other`` = FIFO, socket, device, …"""
    size: int | None = None
    """size in bytes (the local provider always fills it)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class PathInfo:
    """``lstat`` metadata of a path (final symlink not followed)."""

    version: Version
    type: PathType
    size: int | None = None
    """size in bytes; for a symlink, the length of its target string"""


@dataclass(frozen=True, slots=True, kw_only=True)
class DirEntry:
    """One direct child from ``list_dir``."""

    name: str
    """basename inside the listed directory"""
    type: FileType
    """by a following stat; broken or vanished children are ``other``"""
    target: Target
    version: Version | None = None
    """present iff the child's metadata could be read"""
    size: int | None = None
    """present iff the child is a regular file (bytes)"""

    def as_dict(self) -> dict[str, object]:
        """The reference's entry shape: absent fields are omitted, never ``None`` (§1.1)."""
        out: dict[str, object] = {
            "name": self.name,
            "type": self.type,
            "target": {"targetKey": self.target.key, "displayPath": self.target.display_path},
        }
        if self.version is not None:
            out["version"] = self.version
        if self.size is not None:
            out["size"] = self.size
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class WalkEntry:
    """One file or directory below a walked directory (``FileSystem.walk``)."""

    rel: str
    """path below the walked directory, ``/``-separated, never empty, no ``.``/``..`` segments"""
    type: Literal["file", "directory"]
    """``file``: a regular file; ``directory``: a directory (walks never report symlinks or
    special files)"""
    target: Target
    """the entry as ``resolve`` would return it (pass it to ``stream_bytes``)"""
    size: int | None = None
    """size in bytes, for files"""
    mtime_ns: int | None = None
    """last modification time in nanoseconds since the epoch, when the provider knows it
    (local: ``st_mtime_ns``; S3: the object's LastModified)"""


@dataclass(frozen=True, slots=True)
class CreateIfAbsent:
    """Write intent: create a missing target; an existing one fails ``FS_NOT_OBSERVED``."""

    kind: Literal["createIfAbsent"] = "createIfAbsent"


@dataclass(frozen=True, slots=True)
class ReplaceIfVersion:
    """Write intent: replace only if the target exists at ``version`` (else ``FS_STALE_VERSION``)."""

    version: Version
    kind: Literal["replaceIfVersion"] = "replaceIfVersion"


WriteIntent = CreateIfAbsent | ReplaceIfVersion
"""The guard of ``write_text``; leaving it out (``None``) means unconditional."""


@dataclass(frozen=True, slots=True)
class EditIntent:
    """Edit guard: the target must still be at ``version`` (checked before matching)."""

    version: Version


@dataclass(frozen=True, slots=True)
class DeleteIntent:
    """Delete guard: the target must still be at ``version`` (checked under its lock)."""

    version: Version


@dataclass(frozen=True, slots=True)
class RenameIntent:
    """Rename guard: the source must still be at ``version`` (checked under both locks)."""

    version: Version


@dataclass(frozen=True, slots=True, kw_only=True)
class EditRequest:
    """A literal replacement (the seam's camelCase ``oldString``/``newString``/``replaceAll``)."""

    old_string: str
    new_string: str
    replace_all: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class WriteOutcome:
    """Result of ``write_text`` (§1.1)."""

    operation: Literal["create", "update"]
    version: Version
    """version after the write"""
    before: str | None
    """prior text LF-normalized, or ``None`` (new file, or undiffable prior bytes)"""
    after: str
    """written text LF-normalized (the diff basis, not necessarily the bytes on disk)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class EditOutcome:
    """Result of ``edit_text`` (§1.1): the diff basis before and after, LF-normalized."""

    version: Version
    before: str | None
    after: str | None
    changed: tuple[int, int] | None = None
    """optional hint for the diff: ``(start, end)`` such that ``after`` is ``before[:start]``,
    then new text, then ``before[end:]`` (a one-match edit's span); ``None``: not known. The
    diff checks it before using it (``tool_fs.diff``), so a provider may leave it out"""


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteOutcome:
    """Result of ``delete``."""

    version: Version
    """the version the file had when it was deleted"""


@dataclass(frozen=True, slots=True, kw_only=True)
class RenameOutcome:
    """Result of ``rename``."""

    version: Version
    """the file's version at its new name (guard the next write of the destination with it)"""
