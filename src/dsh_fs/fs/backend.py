"""The seam's vocabulary in one import, for a provider (backend) author.

``from dsh_fs.fs.backend import …`` gives what a ``FileSystem`` implementation needs and
nothing it must not use (no tool, policy or surface):

| from | names |
|---|---|
| ``core.profile``, ``core.signal`` | ``Profile``, ``profile_switch`` (a provider's own switches), ``AbortSignal`` |
| ``filesystem``, ``types`` | ``FileSystem`` and its value types: targets, ``Info``/``PathInfo``/``DirEntry``/``WalkEntry``, intents, outcomes |
| ``errors`` | ``FsError``, ``FsErrorCode``, ``check_abort`` and the message catalog (one builder per message, REFERENCE-SPEC §1.5) |
| ``provider_rules`` | ``TextRules`` (the shared profile switches, ``write_max_size``) and the byte-level read/rewrite/edit rules |
| ``rooted``, ``text`` | lexical resolution inside a display root; strict UTF-8 decoding |
| ``locks``, ``window`` | the per-target mutation lock; read windows (``FileSystem.read_window``) |
| ``witness`` | ``witness_commit``: what a provider listing a member in ``witnessed_mutations`` calls right before it commits |

Re-exports only; each name is defined (and documented) in the module the table names. The
contract suite a new provider must pass is ``dsh_fs.testing.contract``.
"""

from __future__ import annotations

from ..core.profile import (
    Profile as Profile,
    profile_switch as profile_switch,
)
from ..core.signal import (
    AbortSignal as AbortSignal,
)
from .filesystem import (
    FileSystem as FileSystem,
)
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
from .errors import (
    FsError as FsError,
    FsErrorCode as FsErrorCode,
    Stage as Stage,
    Verb as Verb,
    aborted as aborted,
    blank_path as blank_path,
    bytes_over_limit as bytes_over_limit,
    check_abort as check_abort,
    content_over_limit as content_over_limit,
    edit_ambiguous as edit_ambiguous,
    edit_empty as edit_empty,
    edit_not_found as edit_not_found,
    edit_not_observed as edit_not_observed,
    foreign_target as foreign_target,
    gone as gone,
    io_error as io_error,
    lock_dir_unusable as lock_dir_unusable,
    lock_unavailable as lock_unavailable,
    no_home as no_home,
    not_directory as not_directory,
    not_found as not_found,
    not_regular_file as not_regular_file,
    not_text as not_text,
    nul_in_path as nul_in_path,
    offset_out_of_range as offset_out_of_range,
    outside_workspace as outside_workspace,
    outside_workspace_rename as outside_workspace_rename,
    overwrite_not_observed as overwrite_not_observed,
    parent_not_directory as parent_not_directory,
    permission_denied as permission_denied,
    read_only as read_only,
    rename_destination_exists as rename_destination_exists,
    stale as stale,
    too_large as too_large,
    write_cleanup_failed as write_cleanup_failed,
)
from .provider_rules import (
    KnownContents as KnownContents,
    PriorSummary as PriorSummary,
    PriorTally as PriorTally,
    TextRules as TextRules,
    WRITE_MAX_SIZE as WRITE_MAX_SIZE,
    apply_edit as apply_edit,
    check_size as check_size,
    decode_for_read as decode_for_read,
    diff_basis as diff_basis,
    edit_failure_error as edit_failure_error,
    encode_text as encode_text,
    not_text_error as not_text_error,
    rewrite as rewrite,
)
from .rooted import (
    RootedPath as RootedPath,
    check_root as check_root,
    display_of as display_of,
    resolve_rooted as resolve_rooted,
)
from .text import (
    NotTextError as NotTextError,
    TextStreamDecoder as TextStreamDecoder,
    decode_text as decode_text,
    normalize as normalize,
)
from .locks import (
    TargetLocks as TargetLocks,
)
from .window import (
    ReadWindow as ReadWindow,
    WindowResult as WindowResult,
    window_text as window_text,
    window_whole as window_whole,
)
from .witness import (
    witness_commit as witness_commit,
)

__all__ = (
    "AbortSignal",
    "CreateIfAbsent",
    "DeleteIntent",
    "DeleteOutcome",
    "DirEntry",
    "EditIntent",
    "EditOutcome",
    "EditRequest",
    "FileSystem",
    "FileType",
    "FsError",
    "FsErrorCode",
    "Info",
    "NotTextError",
    "PathInfo",
    "PathType",
    "PriorSummary",
    "PriorTally",
    "Profile",
    "ReadWindow",
    "RenameIntent",
    "RenameOutcome",
    "ReplaceIfVersion",
    "RootedPath",
    "Stage",
    "Target",
    "TargetKey",
    "TargetLocks",
    "TextRules",
    "TextStreamDecoder",
    "Verb",
    "Version",
    "WRITE_MAX_SIZE",
    "WalkEntry",
    "WindowResult",
    "WriteIntent",
    "WriteOutcome",
    "aborted",
    "apply_edit",
    "blank_path",
    "check_abort",
    "check_root",
    "check_size",
    "decode_for_read",
    "decode_text",
    "diff_basis",
    "display_of",
    "edit_ambiguous",
    "edit_empty",
    "edit_failure_error",
    "edit_not_found",
    "edit_not_observed",
    "encode_text",
    "foreign_target",
    "gone",
    "io_error",
    "lock_dir_unusable",
    "lock_unavailable",
    "no_home",
    "normalize",
    "not_directory",
    "not_found",
    "not_regular_file",
    "not_text",
    "not_text_error",
    "nul_in_path",
    "offset_out_of_range",
    "outside_workspace",
    "outside_workspace_rename",
    "overwrite_not_observed",
    "parent_not_directory",
    "permission_denied",
    "profile_switch",
    "read_only",
    "rename_destination_exists",
    "resolve_rooted",
    "rewrite",
    "stale",
    "too_large",
    "window_text",
    "window_whole",
    "witness_commit",
    "write_cleanup_failed",
)
