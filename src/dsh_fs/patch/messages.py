"""Every model-facing text of the patch engine, in one place (docs/design/EDITING-FACES-DESIGN.md §2.6).

Sources: texts marked *Codex* are those of the Codex ``apply-patch`` crate
(``openai/codex`` ``codex-rs/apply-patch/src/parser.rs`` and ``lib.rs``: the parse errors as its
``apply_patch`` executable prints them, the apply errors, the success summary); texts marked
*SDK* are those of the OpenAI Agents SDK editor (``openai/openai-agents-python``
``src/agents/sandbox/apply_patch.py``). Texts marked *dsh-fs* cover cases neither implementation
detects (they apply blindly or overwrite); each is registered in EDITING-FACES-DESIGN §2.6.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from ..tool_common.shown import shown_name

__all__ = (
    "FIRST_LINE",
    "LAST_LINE",
    "NO_LINES",
    "PatchError",
    "PatchErrorKind",
    "PatchRejected",
    "ambiguous",
    "anchor_not_found",
    "bad_add_line",
    "bad_header",
    "bad_update_line",
    "codex_summary",
    "duplicate_path",
    "empty_move",
    "empty_patch",
    "empty_update",
    "file_exists",
    "file_nested",
    "invalid_hunk",
    "invalid_patch",
    "lines_not_found",
    "missing_file",
    "missing_marker",
    "move_target_exists",
    "operation_summary",
    "too_much_work",
)

PatchErrorKind = Literal[
    "syntax",  # malformed patch text (which line, what was expected)
    "empty",  # no file operation at all
    "duplicate",  # one file touched by two operations, or a file added inside another one
    "missing",  # update/delete of a file that is not there
    "exists",  # add, or move onto, a file that is there
    "not_found",  # an anchor or a hunk's expected lines are not in the file
    "ambiguous",  # a hunk's expected lines fit at more than one place
]


class PatchError(Exception):
    """One reason a patch cannot apply; ``str(err)`` is the model-facing text.

    :param kind: the failure class (faces map it to an ``FsErrorCode``, EDITING-FACES-DESIGN §2.6)
    :param path: the file concerned (as written in the patch), if any
    :param line: 1-based line of the patch text the failure points at, if any
    """

    def __init__(self, message: str, kind: PatchErrorKind, *, path: str | None = None, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.kind: PatchErrorKind = kind
        self.path = path
        self.line = line


class PatchRejected(Exception):
    """The whole patch is refused: nothing may be written. ``str()`` lists every reason, one
    per line, in patch order.

    :param errors: at least one ``PatchError``
    """

    def __init__(self, errors: Sequence[PatchError]) -> None:
        self.errors = tuple(errors)
        super().__init__("\n".join(err.message for err in self.errors))


# -- syntax (Codex parser.rs, as its executable prints them) --------------------------------


def invalid_patch(detail: str) -> PatchError:
    """*Codex*: ``Invalid patch: <detail>`` (envelope markers)."""
    return PatchError(f"Invalid patch: {detail}", "syntax")


def invalid_hunk(line: int, detail: str) -> PatchError:
    """*Codex*: ``Invalid patch hunk on line <n>: <detail>``."""
    return PatchError(f"Invalid patch hunk on line {line}: {detail}", "syntax", line=line)


FIRST_LINE = "The first line of the patch must be '*** Begin Patch'"
LAST_LINE = "The last line of the patch must be '*** End Patch'"


def bad_header(text: str) -> str:
    """*Codex*: a line where a file operation header was expected."""
    return (
        f"'{text}' is not a valid hunk header. Valid hunk headers: "
        "'*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'"
    )


def empty_update(path: str) -> str:
    """*Codex*: ``*** Update File:`` with no hunk."""
    return f"Update file hunk for path '{path}' is empty"


def empty_move(path: str) -> str:
    """*dsh-fs* (Codex takes the empty text as the destination and fails when writing): a
    ``*** Move to:`` line without a path."""
    return f"Update file hunk for path '{path}' has an empty '*** Move to:' path"


def missing_marker(text: str) -> str:
    """*Codex*: a second hunk that does not start with ``@@``."""
    return f"Expected update hunk to start with a @@ context marker, got: '{text}'"


NO_LINES = "Update hunk does not contain any lines"
"""*Codex*: an ``@@`` with no diff line after it"""


def bad_update_line(text: str) -> str:
    """*Codex*: a line inside a hunk that is not a diff line."""
    return (
        f"Unexpected line found in update hunk: '{text}'. Every line should start with "
        "' ' (context line), '+' (added line), or '-' (removed line)"
    )


def bad_add_line(text: str) -> str:
    """*dsh-fs* (the SDK says ``Invalid Add File Line: <line>``): a ``create_file`` diff line
    without ``+``."""
    return f"Unexpected line found in add file hunk: '{text}'. Every line should start with '+' (added line)"


# -- planning (Codex lib.rs, then dsh-fs) ----------------------------------------------------


def empty_patch() -> PatchError:
    """*Codex*: a patch with no file operation."""
    return PatchError("No files were modified.", "empty")


def anchor_not_found(anchor: str, path: str, line: int) -> PatchError:
    """*Codex*: an ``@@`` anchor that is not in the file."""
    return PatchError(f"Failed to find context '{anchor}' in {path}", "not_found", path=path, line=line)


def lines_not_found(expected: Sequence[str], path: str, line: int) -> PatchError:
    """*Codex*: a hunk whose expected lines are not in the file."""
    text = "\n".join(expected)
    return PatchError(f"Failed to find expected lines in {path}:\n{text}", "not_found", path=path, line=line)


def too_much_work(path: str, budget: int, line: int) -> PatchError:
    """*dsh-fs*: locating a file's hunks would compare more than ``budget`` candidate places
    (a bound on one call's work, so a hostile patch cannot hold a worker for minutes)."""
    return PatchError(f"Locating the hunks of {path} needs more than {budget} comparisons; split the patch into "
                      "smaller ones or give its hunks more distinctive context lines", "not_found", path=path, line=line)


def ambiguous(expected: Sequence[str], path: str, starts: Sequence[int], line: int) -> PatchError:
    """*dsh-fs*: a hunk that fits at several places (Codex and the SDK take the first).

    :param starts: 1-based file lines where the expected lines start (all of them)
    """
    shown = ", ".join(str(n) for n in starts[:10]) + (", …" if len(starts) > 10 else "")
    text = "\n".join(expected)
    return PatchError(
        f"Expected lines match {len(starts)} places in {path} (lines {shown}); "
        f"add context lines or an @@ line so that they match one place:\n{text}",
        "ambiguous",
        path=path,
        line=line,
    )


def missing_file(verb: Literal["update", "delete"], path: str, line: int) -> PatchError:
    """*Codex* wording (``Failed to read file to update <path>``, ``Failed to delete file
    <path>``) with *dsh-fs*'s reason instead of the OS error text."""
    head = "Failed to read file to update" if verb == "update" else "Failed to delete file"
    return PatchError(f"{head} {path}: file not found", "missing", path=path, line=line)


def file_exists(path: str, line: int) -> PatchError:
    """*dsh-fs*: ``*** Add File:`` over an existing file (Codex overwrites it)."""
    return PatchError(f"Failed to add file {path}: the file already exists", "exists", path=path, line=line)


def move_target_exists(path: str, dest: str, line: int) -> PatchError:
    """*dsh-fs*: ``*** Move to:`` onto an existing file (Codex overwrites it)."""
    return PatchError(f"Failed to move {path} to {dest}: the destination already exists", "exists", path=path, line=line)


def duplicate_path(path: str, line: int) -> PatchError:
    """*dsh-fs*: a second operation on a file the patch already touches (Codex applies them in
    sequence; OpenAI's first ``apply_patch.py`` rejected them too)."""
    return PatchError(f"The patch touches {path} more than once", "duplicate", path=path, line=line)


def file_nested(path: str, line: int, *, parent: str | None = None, child: str | None = None,
                source: str | None = None) -> PatchError:
    """*dsh-fs*: the patch adds (or moves to) ``path`` and also adds ``parent``, a file above
    it, or ``child``, a file inside it; no file system holds both (Codex fails half way).

    :param source: for a move, the file moved to ``path``
    """
    head = f"Failed to move {source} to {path}" if source is not None else f"Failed to add file {path}"
    reason = f"the patch adds {parent} as a file" if parent is not None else f"the patch adds {child} inside it"
    return PatchError(f"{head}: {reason}", "duplicate", path=source or path, line=line)


# -- success texts ----------------------------------------------------------------------------


def codex_summary(added: Sequence[str], modified: Sequence[str], deleted: Sequence[str]) -> str:
    """*Codex* ``print_summary``: ``Success. Updated the following files:`` then ``A``/``M``/``D``
    lines, each group in patch order (a moved file is listed as ``M <destination>``); names as
    ``tool_common.shown.shown_name`` prints them (D22)."""
    rows = [f"A {shown_name(p)}" for p in added] + [f"M {shown_name(p)}" for p in modified]
    rows += [f"D {shown_name(p)}" for p in deleted]
    return "Success. Updated the following files:\n" + "".join(row + "\n" for row in rows)


def operation_summary(kind: Literal["create", "update", "delete"], path: str, move_to: str | None = None) -> str:
    """*SDK* editor results: ``Created <p>``, ``Updated <p>``, ``Deleted <p>``, and for a move
    ``Updated <p>\\nMoved <p> to <dest>``. Names as ``tool_common.shown.shown_name`` prints them (D22)."""
    path = shown_name(path)
    move_to = None if move_to is None else shown_name(move_to)
    if kind == "create":
        return f"Created {path}"
    if kind == "delete":
        return f"Deleted {path}"
    if move_to is not None:
        return f"Updated {path}\nMoved {path} to {move_to}"
    return f"Updated {path}"
