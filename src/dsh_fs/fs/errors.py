"""``FsError``, its twelve codes, and the message catalog (REFERENCE-SPEC §1.2, §1.5).

Every ``FsError`` a provider, the policy or the tools raise is built here, by one of the
builders below, so each model-facing message is written exactly once (the provider contract
suite, ``dsh_fs.testing.contract``, keeps its own literal copies as an independent check).
Wording comes from §1.5 unless a deviation ID says otherwise. ``<dp>`` is the target's
display path; ``<verb>`` one of ``Verb``.

::

    code                  builder                          message                                       §1.5
    FS_ABORTED            aborted / check_abort            <stage> aborted                               #1 #4 #5 #10 #11 #20 #27
    FS_NOT_FOUND          blank_path                       file_path must be a non-empty string          #2
                          parent_not_directory             cannot resolve "<dp>": a parent path segment is not a directory  #3
                          not_found                        cannot <verb> "<dp>": not found               #6 #12 (D8: edit)
                          foreign_target                   cannot resolve "<dp>": <why>                  (a target of another provider)
                          offset_out_of_range              offset <n> is out of range for "<dp>" (<total> lines)  #32
    FS_NOT_DIRECTORY      not_directory                    cannot list "<dp>": not a directory           #13
    FS_NOT_TEXT           not_text                         cannot <verb> "<dp>": <reason>                #8 #9 #25 #26 (D6 detail)
                          unencodable                      cannot <write|edit> "<dp>": U+… (<name>) at line <l>, column <c> of <arg> cannot be written in <enc>, the file's encoding; nothing was written  (F7)
                          outside_changed                  cannot edit "<dp>": in <enc> this edit would change bytes outside the replaced text; nothing was written  (F9)
    FS_NOT_REGULAR_FILE   not_regular_file                 cannot <verb> "<dp>": not a regular file      #7 #16 #24
    FS_PERMISSION_DENIED  permission_denied                cannot <verb> "<dp>": permission denied       #14 (A2)
                          read_only                        cannot <write|edit|delete> "<dp>": permission denied — the file is read-only  (D17)
                          outside_workspace                cannot resolve "<p>": outside the workspace[ "<root>"]  (containment)
                          outside_workspace                cannot resolve "<p>": outside the workspace "<A>", "<B>"  (several roots, D28)
                          outside_workspace_rename         cannot rename "<dp>" to "<dest>": outside the workspace "<root of dp>"  (across roots, D28)
                          nul_in_path                      cannot resolve "<dp>": path contains a NUL byte
    FS_NOT_FOUND          no_home                          cannot resolve "<p>": there is no home directory here; …  (D20)
    FS_IO_ERROR           io_error                         cannot <verb> "<dp>": <reason>                #15 (A2)
                          too_large                        cannot <verb> "<dp>": the file would be <n> bytes, more than the limit of <max> bytes  (D16)
                          bytes_over_limit                 cannot read "<dp>": <n> bytes exceeds the <max>-byte limit  (read_bytes; reference fsio.ts)
                          content_over_limit               cannot read "<dp>": content exceeds the <max>-byte limit  (read_bytes; reference fsio.ts)
                          write_cleanup_failed             write failed (<error>) and temp close|cleanup failed (<error>)  #21 #22 (A2 code)
                          lock_unavailable                 cannot take the cross-process lock in <dir>: <reason>  (A4)
                          lock_dir_unusable                cannot use the lock directory <dir>: <reason> (set DSH_FS_LOCK_DIR …)  (A4)
    FS_STALE_VERSION      stale                            cannot <write|edit|delete|rename> "<dp>": file changed since it was read  #18 #23
                          gone                             cannot <write|delete|rename> "<dp>": file no longer exists  #17
    FS_NOT_OBSERVED       overwrite_not_observed           cannot overwrite existing "<dp>" without reading it first  #19
                          rename_destination_exists        cannot rename "<dp>" to "<dest>": the destination already exists  (rename)
                          edit_not_observed                edit requires reading "<dp>" first            #31 (policy)
                          edit_not_observed                <update|delete|move> requires reading "<dp>" first  (apply_patch, E25)
    FS_AMBIGUOUS_EDIT     edit_ambiguous                   old_string matched <N> times in "<dp>"[ (some matches overlap)]; provide …  #30 (D15)
    FS_EDIT_NOT_FOUND     edit_empty                       old_string must be a non-empty string         #28
                          edit_not_found                   old_string was not found in "<dp>"            #29
    FS_SANDBOX_DENIED     sandbox_denied                   cannot <verb> "<dp>": file access denied under <mode> mode  (reference fs-sandbox)
    FS_PERMISSION_DENIED  path_denied                      cannot <verb> "<dp>": permission denied — the path rules deny access to it  (P1)
                          path_read_only                   cannot <verb> "<dp>": permission denied — the path rules make it read-only  (P1)

Who raises which code::

    FS_NOT_FOUND          <- resolve (blank path, file-valued parent), read, list, read tool offset
    FS_NOT_DIRECTORY      <- list_dir on a non-directory
    FS_NOT_TEXT           <- read/edit of binary (NUL) or non-UTF-8 bytes
    FS_NOT_REGULAR_FILE   <- read/write/edit of a directory, FIFO, socket, device
    FS_PERMISSION_DENIED  <- EACCES/EPERM (A2), containment violations, a read-only file (D17), the path rules (``fs_rules``)
    FS_IO_ERROR           <- any other OS error (A2), a file over the size limit (D16)
    FS_STALE_VERSION      <- guarded write/edit/delete/rename whose target changed or vanished
    FS_NOT_OBSERVED       <- createIfAbsent over an existing file (a rename's destination too); the policy's edit gate
    FS_AMBIGUOUS_EDIT     <- old_string matched more than once without replace_all
    FS_EDIT_NOT_FOUND     <- old_string not found (or empty)
    FS_ABORTED            <- the abort signal fired at a checkpoint (``check_abort``)
    FS_SANDBOX_DENIED     <- a mutation outside what the sandbox mode allows (``fs_sandbox``)

A new seam primitive adds its verb to ``Verb`` (and its stage to ``Stage``) and reuses these
builders; a new message gets a builder here, with its spec row or deviation ID.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from ..core.errors import HarnessError
from ..core.jsonvalue import js_number_str

if TYPE_CHECKING:
    from ..core.signal import AbortSignal

__all__ = (
    "FsError",
    "FsErrorCode",
    "Stage",
    "Verb",
    "aborted",
    "blank_path",
    "by_path_rules",
    "bytes_over_limit",
    "check_abort",
    "content_over_limit",
    "edit_ambiguous",
    "edit_empty",
    "edit_not_found",
    "edit_not_observed",
    "foreign_target",
    "gone",
    "io_error",
    "lock_dir_unusable",
    "lock_unavailable",
    "no_home",
    "not_directory",
    "not_found",
    "not_regular_file",
    "not_text",
    "nul_in_path",
    "offset_out_of_range",
    "outside_changed",
    "outside_workspace",
    "outside_workspace_rename",
    "overwrite_not_observed",
    "parent_not_directory",
    "path_denied",
    "path_read_only",
    "permission_denied",
    "read_only",
    "rename_destination_exists",
    "sandbox_denied",
    "stale",
    "too_large",
    "unencodable",
    "write_cleanup_failed",
)


class FsErrorCode(str, enum.Enum):
    """The stable codes of ``FsError`` (exactly these twelve)."""

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
    SANDBOX_DENIED = "FS_SANDBOX_DENIED"
    """a mutation the sandbox mode refuses (``fs.sandbox``, docs/SANDBOX.md)"""

    def __str__(self) -> str:
        return self.value


class FsError(HarnessError):
    """A filesystem failure with a stable code; ``str(err)`` is the exact §1.5 message.

    Build one with a catalog builder of this module rather than by hand.

    :param message: the model-facing message
    :param code: an ``FsErrorCode`` (or its string value)
    :param cause: the underlying exception, if any
    :param searched_text: for ``FS_EDIT_NOT_FOUND``, the LF-normalized text that was searched,
        so the tool layer can look for a near match (DEVIATIONS D5); ``None`` when not kept
    :param needle: for ``FS_EDIT_NOT_FOUND``, the LF-normalized ``old_string``
    :param count: for ``FS_AMBIGUOUS_EDIT``, how many times ``old_string`` matched (the
        editing faces name it in their own texts)
    :param replacement: for ``FS_EDIT_NOT_FOUND``, the LF-normalized ``new_string`` (an edit
        already applied is told apart by it, DEVIATIONS D18)
    :param changes: for ``FS_STALE_VERSION``, what changed since the caller last saw the file
        (DEVIATIONS D30: ``tool_fs.stale_diff``), which the tool layer appends to the message
    """

    def __init__(
        self,
        message: str,
        code: FsErrorCode | str,
        *,
        cause: BaseException | None = None,
        searched_text: str | None = None,
        needle: str | None = None,
        count: int | None = None,
        replacement: str | None = None,
        changes: str | None = None,
    ) -> None:
        super().__init__(message, str(FsErrorCode(code)), cause=cause)
        self.searched_text = searched_text
        self.needle = needle
        self.count = count
        self.replacement = replacement
        self.changes = changes

    @property
    def fs_code(self) -> FsErrorCode:
        """``code`` as an ``FsErrorCode``."""
        return FsErrorCode(self.code)


Verb = Literal["resolve", "stat", "read", "list", "write", "edit", "delete", "rename"]
"""the operation a ``cannot <verb> "<dp>": …`` message names (``delete``/``rename``: the seam's
guarded delete and rename, docs/design/EDITING-FACES-DESIGN.md §6.1)"""

Stage = Literal["resolve", "stat", "lstat", "read", "list", "write", "edit", "delete", "rename"]
"""the checkpoint an ``<stage> aborted`` message names (§2.12): a write that reads the prior
file aborts as ``read``, an edit's read stage as ``edit``, any atomic write stage as ``write``;
a delete or rename checks before it changes anything (``delete``/``rename``)"""


# -- FS_ABORTED ---------------------------------------------------------------------------

def aborted(stage: Stage) -> FsError:
    """``FS_ABORTED`` ``<stage> aborted`` (§1.5 #1, #4, #5, #10, #11, #20, #27)."""
    return FsError(f"{stage} aborted", FsErrorCode.ABORTED)


def check_abort(signal: "AbortSignal | None", stage: Stage) -> None:
    """The one abort checkpoint: raise ``aborted(stage)`` when ``signal`` is aborted (§2.12).

    Thread-safe (``AbortSignal`` is); cheap enough for every chunk of a loop.

    :raises FsError: ``FS_ABORTED`` ``<stage> aborted``
    """
    if signal is not None and signal.aborted:
        raise aborted(stage)


# -- resolution ---------------------------------------------------------------------------

def blank_path() -> FsError:
    """``FS_NOT_FOUND`` ``file_path must be a non-empty string`` (§1.5 #2: empty or only JS
    whitespace)."""
    return FsError("file_path must be a non-empty string", FsErrorCode.NOT_FOUND)


def parent_not_directory(display: str) -> FsError:
    """``FS_NOT_FOUND``: an ancestor of ``display`` is a file (§1.5 #3, ENOTDIR)."""
    return FsError(f'cannot resolve "{display}": a parent path segment is not a directory', FsErrorCode.NOT_FOUND)


def foreign_target(display: str, why: str) -> FsError:
    """``FS_NOT_FOUND`` ``cannot resolve "<dp>": <why>`` for a target this provider did not
    resolve (another provider's key); ``why`` names the provider's space."""
    return FsError(f'cannot resolve "{display}": {why}', FsErrorCode.NOT_FOUND)


def outside_workspace(shown: str, root: str | Sequence[str] | None, *,
                      cause: BaseException | None = None) -> FsError:
    """``FS_PERMISSION_DENIED``: ``shown`` (the display path: the model's path resolved
    lexically against the cwd) is outside the workspace, or its resolution would leave it
    (containment, every provider).

    :param root: the workspace root as configured (one root: ``outside the workspace "<root>"``),
        or the roots of a provider with several (DEVIATIONS D28: each quoted, joined by ``, ``,
        in the configured order); ``None`` or no roots: the workspace is not named
    """
    names = (root,) if isinstance(root, str) else tuple(root or ())
    where = " " + ", ".join(f'"{name}"' for name in names) if any(names) else ""
    return FsError(f'cannot resolve "{shown}": outside the workspace{where}', FsErrorCode.PERMISSION_DENIED,
                   cause=cause)


def outside_workspace_rename(display: str, dest: str, root: str) -> FsError:
    """``FS_PERMISSION_DENIED``: a rename from ``display`` to ``dest`` (display paths) across
    two of a provider's roots (DEVIATIONS D28: a rename stays inside the root of its source,
    named as configured: ``root``)."""
    return FsError(f'cannot rename "{display}" to "{dest}": outside the workspace "{root}"',
                   FsErrorCode.PERMISSION_DENIED)


def no_home(path: str) -> FsError:
    """``FS_NOT_FOUND``: ``path`` starts with ``~`` (the home directory, DEVIATIONS D20) in a
    workspace that has none (the memory and S3 providers, or a process without a home)."""
    return FsError(f'cannot resolve "{path}": there is no home directory here; '
                   "name the file from the workspace (./~ for a file named ~)", FsErrorCode.NOT_FOUND)


def nul_in_path(display: str) -> FsError:
    """``FS_PERMISSION_DENIED`` for a path with a NUL byte (no file can have that name); the
    NUL is shown as ``\\0`` so the message stays printable."""
    shown = display.replace("\0", "\\0")
    return FsError(f'cannot resolve "{shown}": path contains a NUL byte', FsErrorCode.PERMISSION_DENIED)


# -- the target's kind and content --------------------------------------------------------

def not_found(verb: Verb, display: str) -> FsError:
    """``FS_NOT_FOUND`` ``cannot <verb> "<dp>": not found`` (§1.5 #6, #12; the policy's
    ``edit`` of a file a read found absent, DEVIATIONS D8)."""
    return FsError(f'cannot {verb} "{display}": not found', FsErrorCode.NOT_FOUND)


def not_regular_file(verb: Verb, display: str) -> FsError:
    """``FS_NOT_REGULAR_FILE`` ``cannot <verb> "<dp>": not a regular file`` (§1.5 #7, #16, #24)."""
    return FsError(f'cannot {verb} "{display}": not a regular file', FsErrorCode.NOT_REGULAR_FILE)


def not_directory(display: str) -> FsError:
    """``FS_NOT_DIRECTORY`` ``cannot list "<dp>": not a directory`` (§1.5 #13)."""
    return FsError(f'cannot list "{display}": not a directory', FsErrorCode.NOT_DIRECTORY)


def not_text(verb: Verb, display: str, reason: str) -> FsError:
    """``FS_NOT_TEXT`` ``cannot <verb> "<dp>": <reason>`` (§1.5 #8, #9, #25, #26); ``reason``
    is ``NotTextError.message(detailed)`` (DEVIATIONS D6 adds the detail)."""
    return FsError(f'cannot {verb} "{display}": {reason}', FsErrorCode.NOT_TEXT)


# -- OS and service failures (DEVIATIONS A2) ------------------------------------------------

def unencodable(verb: Literal["write", "edit"], display: str, where: str, encoding: str) -> FsError:
    """F7: a character the file's legacy encoding cannot hold; nothing was written."""
    return FsError(f'cannot {verb} "{display}": {where} cannot be written in {encoding}, the file\'s encoding; '
                   "nothing was written", FsErrorCode.NOT_TEXT)


def outside_changed(display: str, encoding: str) -> FsError:
    """F9: the edited bytes would differ from the file's outside the replaced text (a legacy
    encoding that does not map text to bytes one character at a time); nothing was written."""
    return FsError(f'cannot edit "{display}": in {encoding} this edit would change bytes outside the replaced text; '
                   "nothing was written", FsErrorCode.NOT_TEXT)


def permission_denied(verb: Verb, display: str, *, cause: BaseException | None = None) -> FsError:
    """``FS_PERMISSION_DENIED`` ``cannot <verb> "<dp>": permission denied`` (§1.5 #14; A2)."""
    return FsError(f'cannot {verb} "{display}": permission denied', FsErrorCode.PERMISSION_DENIED, cause=cause)


def read_only(verb: Literal["write", "edit", "delete"], display: str) -> FsError:
    """``FS_PERMISSION_DENIED`` ``cannot <verb> "<dp>": permission denied — the file is
    read-only``: the file exists and the caller may not write it (DEVIATIONS D17; the remedy
    part in the style of D9)."""
    return FsError(f'cannot {verb} "{display}": permission denied — the file is read-only',
                   FsErrorCode.PERMISSION_DENIED)


def too_large(verb: Literal["write", "edit"], display: str, size: int, limit: int) -> FsError:
    """``FS_IO_ERROR``: the file a write or an edit would store takes ``size`` bytes, more than
    the provider's ``write_max_size`` ``limit`` (DEVIATIONS D16, both profiles: the size is
    computed before the new content is built, so a huge ``replace_all`` never exhausts memory)."""
    return FsError(f'cannot {verb} "{display}": the file would be {size} bytes, more than the limit of {limit} bytes',
                   FsErrorCode.IO_ERROR)


def bytes_over_limit(display: str, size: int, limit: int) -> FsError:
    """``FS_IO_ERROR`` ``cannot read "<dp>": <size> bytes exceeds the <limit>-byte limit``: a
    bounded raw read (``FileSystem.read_bytes``) of a file whose stat size is over its cap. The
    text is the reference's (``packages/fs/fs-local/src/fsio.ts`` ``readWholeBytes``; its code
    there is ``FS_TOO_LARGE``, which this catalog does not have: an over-size file is
    ``FS_IO_ERROR`` here, as D16's is)."""
    return FsError(f'cannot read "{display}": {size} bytes exceeds the {limit}-byte limit', FsErrorCode.IO_ERROR)


def content_over_limit(display: str, limit: int) -> FsError:
    """``FS_IO_ERROR`` ``cannot read "<dp>": content exceeds the <limit>-byte limit``: the file
    grew past the cap of a bounded raw read after its stat (the reference's ``readWholeBytes``)."""
    return FsError(f'cannot read "{display}": content exceeds the {limit}-byte limit', FsErrorCode.IO_ERROR)


def io_error(verb: Verb, display: str, reason: str, *, cause: BaseException | None = None) -> FsError:
    """``FS_IO_ERROR`` ``cannot <verb> "<dp>": <reason>`` (§1.5 #15; A2): ``reason`` is the
    OS's ``strerror`` or the service's message."""
    return FsError(f'cannot {verb} "{display}": {reason}', FsErrorCode.IO_ERROR, cause=cause)


def write_cleanup_failed(primary: object, step: Literal["close", "cleanup"], failure: object, *,
                         cause: BaseException | None = None) -> FsError:
    """``FS_IO_ERROR`` ``write failed (<primary>) and temp <step> failed (<failure>)``: a
    failed atomic write whose temp file could not be closed or removed either (§1.5 #21,
    #22; the code is A2's, not the reference's FS_NOT_FOUND)."""
    return FsError(f"write failed ({primary}) and temp {step} failed ({failure})", FsErrorCode.IO_ERROR, cause=cause)


def lock_unavailable(lock_dir: str, reason: str, *, cause: BaseException | None = None) -> FsError:
    """``FS_IO_ERROR``: the cross-process lock (DEVIATIONS A4) cannot be taken."""
    return FsError(f"cannot take the cross-process lock in {lock_dir}: {reason}", FsErrorCode.IO_ERROR, cause=cause)


def lock_dir_unusable(lock_dir: str, reason: str, *, cause: BaseException | None = None) -> FsError:
    """``FS_IO_ERROR``: the lock directory (DEVIATIONS A4) cannot be created or is not private."""
    return FsError(f"cannot use the lock directory {lock_dir}: {reason} "
                   "(set DSH_FS_LOCK_DIR to a private directory)", FsErrorCode.IO_ERROR, cause=cause)


# -- guards (intents) -------------------------------------------------------------------------

def stale(verb: Literal["write", "edit", "delete", "rename"], display: str) -> FsError:
    """``FS_STALE_VERSION`` ``cannot <verb> "<dp>": file changed since it was read`` (§1.5
    #18, #23; an edit of a missing file too; a guarded delete or rename of a changed file)."""
    return FsError(f'cannot {verb} "{display}": file changed since it was read', FsErrorCode.STALE_VERSION)


def gone(display: str, verb: Literal["write", "delete", "rename"] = "write") -> FsError:
    """``FS_STALE_VERSION`` ``cannot <verb> "<dp>": file no longer exists`` (§1.5 #17: a
    ``ReplaceIfVersion`` write of a missing file, which is not recreated; a guarded delete or
    rename of a missing file)."""
    return FsError(f'cannot {verb} "{display}": file no longer exists', FsErrorCode.STALE_VERSION)


def rename_destination_exists(display: str, dest_display: str) -> FsError:
    """``FS_NOT_OBSERVED`` ``cannot rename "<dp>" to "<dest>": the destination already exists``:
    ``rename`` never replaces (its destination is create-if-absent, like ``CreateIfAbsent``)."""
    return FsError(f'cannot rename "{display}" to "{dest_display}": the destination already exists',
                   FsErrorCode.NOT_OBSERVED)


def overwrite_not_observed(display: str) -> FsError:
    """``FS_NOT_OBSERVED`` ``cannot overwrite existing "<dp>" without reading it first``
    (§1.5 #19: a ``CreateIfAbsent`` write found a file)."""
    return FsError(f'cannot overwrite existing "{display}" without reading it first', FsErrorCode.NOT_OBSERVED)


def edit_not_observed(display: str, operation: str = "edit") -> FsError:
    """``FS_NOT_OBSERVED`` ``edit requires reading "<dp>" first`` (§1.5 #31: the policy's
    edit gate).

    :param operation: the word before ``requires``: the policy's ``edit``; ``apply_patch``'s
        own operation (``update``, ``delete``, ``move``) under E25 (a patch refused for an unread
        file names what the patch does to it)
    """
    return FsError(f'{operation} requires reading "{display}" first', FsErrorCode.NOT_OBSERVED)


# -- literal edits --------------------------------------------------------------------------

def edit_empty() -> FsError:
    """``FS_EDIT_NOT_FOUND`` ``old_string must be a non-empty string`` (§1.5 #28: empty after
    CRLF→LF normalization)."""
    return FsError("old_string must be a non-empty string", FsErrorCode.EDIT_NOT_FOUND)


def edit_not_found(display: str, *, searched_text: str | None = None, needle: str | None = None,
                   replacement: str | None = None) -> FsError:
    """``FS_EDIT_NOT_FOUND`` ``old_string was not found in "<dp>"`` (§1.5 #29).

    :param searched_text: the LF-normalized text searched, kept for the near-match hint
        (DEVIATIONS D5); ``None`` when the provider did not hold it
    :param needle: the LF-normalized ``old_string``
    :param replacement: the LF-normalized ``new_string`` (D18)
    """
    return FsError(f'old_string was not found in "{display}"', FsErrorCode.EDIT_NOT_FOUND,
                   searched_text=searched_text, needle=needle, replacement=replacement)


def edit_ambiguous(display: str, count: int, *, overlapping: bool = False) -> FsError:
    """``FS_AMBIGUOUS_EDIT`` (§1.5 #30): ``old_string`` matched ``count`` (> 1) times without
    ``replace_all``. ``overlapping``: the count includes occurrences that overlap others and
    the message says so (DEVIATIONS D15)."""
    overlap = " (some matches overlap)" if overlapping else ""
    return FsError(
        f'old_string matched {count} times in "{display}"{overlap}; '
        "provide a more specific old_string or set replace_all to true",
        FsErrorCode.AMBIGUOUS_EDIT,
        count=count,
    )


# -- reads ------------------------------------------------------------------------------------

def column_out_of_range(column: int, line: int, display: str, length: int) -> FsError:
    """``FS_NOT_FOUND`` ``column <c> is out of range for line <n> of "<dp>" (<length> characters)``
    (D35: a ``read`` from a character past the end of its line; modelled on §4.6.4's offset text)."""
    return FsError(
        f'column {column} is out of range for line {line} of "{display}" ({length} characters)',
        FsErrorCode.NOT_FOUND,
    )


def offset_out_of_range(offset: int, display: str, total_lines: int) -> FsError:
    """``FS_NOT_FOUND`` ``offset <n> is out of range for "<dp>" (<total> lines)`` (§1.5 #32,
    §4.6.4; ``<n>`` printed as JavaScript prints a number)."""
    return FsError(
        f'offset {js_number_str(offset)} is out of range for "{display}" ({total_lines} lines)',
        FsErrorCode.NOT_FOUND,
    )


# -- FS_SANDBOX_DENIED ----------------------------------------------------------------------

def sandbox_denied(verb: Verb, display_path: str, mode: str) -> FsError:
    """``FS_SANDBOX_DENIED`` ``cannot <verb> "<dp>": file access denied under <mode> mode`` (the
    reference's ``SandboxedFileSystem``; ``write`` for ``write_text`` and ``edit_text`` alike)."""
    from .sandbox import fence_denied_message

    return FsError(fence_denied_message(verb, display_path, mode), FsErrorCode.SANDBOX_DENIED)  # type: ignore[arg-type]


# -- the path rules (docs/PATH-RULES.md) -----------------------------------------------------

_DENIED_BY_RULES = "permission denied — the path rules deny access to it"
_READ_ONLY_BY_RULES = "permission denied — the path rules make it read-only"


def by_path_rules(err: FsError) -> bool:
    """Whether ``err`` is a refusal by the path rules (``path_denied`` / ``path_read_only``): a
    face that speaks its vendor's text for a refusal by the OS keeps this one (it says why)."""
    return err.code == FsErrorCode.PERMISSION_DENIED and err.message.endswith((_DENIED_BY_RULES, _READ_ONLY_BY_RULES))


def path_denied(verb: Verb, display: str) -> FsError:
    """``FS_PERMISSION_DENIED`` ``cannot <verb> "<dp>": permission denied — the path rules deny
    access to it``: ``display`` (or the file it leads to) is denied by the deployment's path
    rules (DEVIATIONS P1; the remedy part in the style of D17). The same whether or not the
    file exists, and it names no pattern."""
    return FsError(f'cannot {verb} "{display}": {_DENIED_BY_RULES}', FsErrorCode.PERMISSION_DENIED)


def path_read_only(verb: Verb, display: str) -> FsError:
    """``FS_PERMISSION_DENIED`` ``cannot <verb> "<dp>": permission denied — the path rules make it
    read-only``: a change of a path the deployment's path rules make read-only (DEVIATIONS P1)."""
    return FsError(f'cannot {verb} "{display}": {_READ_ONLY_BY_RULES}', FsErrorCode.PERMISSION_DENIED)
