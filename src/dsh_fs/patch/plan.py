"""Check a whole patch against the current files and say what to write
(docs/design/EDITING-FACES-DESIGN.md §2.5). Pure: the caller reads the files
(``required_paths``) and writes the plan.

Rules: an update, move or delete needs the file; an add, and a move's destination, need the
path absent; no file may be touched by two operations, nor be added inside a file the patch adds
(``n`` and ``n/x``); every hunk must apply. Every operation is
checked and every failure reported (``PatchRejected``) before anything may be written: a patch
applies entirely or not at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from . import messages as msg
from .apply import LineEdit, apply_line_edits, chunk_edits, file_lines
from .model import AddFile, DeleteFile, FileOp, Patch, UpdateFile

__all__ = ("FileChange", "FileState", "plan_patch", "required_paths")


@dataclass(frozen=True, slots=True, kw_only=True)
class FileState:
    """What the planner knows of one path named by the patch."""

    display: str
    """the file's name in messages (faces pass the target's display path)"""
    key: str
    """identity: two paths with the same key are the same file (faces pass the target key)"""
    text: str | None
    """the current text as read (BOM stripped, line endings as on disk); ``None`` = absent"""


@dataclass(frozen=True, slots=True, kw_only=True)
class FileChange:
    """One file operation of a plan, in patch order."""

    kind: Literal["create", "update", "delete"]
    path: str
    """as written in the patch"""
    display: str
    before: str | None
    """the text the plan was made from (``None`` for a create): the version guard's subject"""
    after: str | None
    """the text to store (``None`` for a delete); for a move, at ``move_to``"""
    move_to: str | None = None
    move_display: str | None = None
    edits: tuple[LineEdit, ...] = ()
    """an update's line edits in ``file_lines(before)`` coordinates (where each hunk applied)"""


def required_paths(patch: Patch) -> list[str]:
    """Every path the planner needs a ``FileState`` for (operation paths and move
    destinations), first mention first."""
    seen: dict[str, None] = {}
    for op in patch.ops:
        seen.setdefault(op.path, None)
        if isinstance(op, UpdateFile) and op.move_to is not None:
            seen.setdefault(op.move_to, None)
    return list(seen)


def plan_patch(patch: Patch, files: Mapping[str, FileState]) -> tuple[FileChange, ...]:
    """The changes ``patch`` makes to ``files``, or every reason it cannot apply.

    :param files: a state for each of ``required_paths(patch)``
    :raises PatchRejected: with a ``PatchError`` per failing operation (``empty`` when there
        is no operation)
    """
    if not patch.ops:
        raise msg.PatchRejected([msg.empty_patch()])
    changes: list[FileChange] = []
    errors: list[msg.PatchError] = []
    touched: set[str] = set()
    created = _Created()
    for op in patch.ops:
        try:
            change = _plan_op(op, files, touched)
            created.add(op, change)
            changes.append(change)
        except msg.PatchError as err:
            errors.append(err)
    if errors:
        raise msg.PatchRejected(errors)
    return tuple(changes)


def _plan_op(op: FileOp, files: Mapping[str, FileState], touched: set[str]) -> FileChange:
    state = files[op.path]
    dest = files[op.move_to] if isinstance(op, UpdateFile) and op.move_to is not None else None
    if dest is not None and dest.key == state.key:
        dest = None  # moving a file onto itself is a plain update
    for claimed in (state, dest):
        if claimed is None:
            continue
        if claimed.key in touched:
            raise msg.duplicate_path(claimed.display, op.line)
        touched.add(claimed.key)
    if isinstance(op, AddFile):
        if state.text is not None:
            raise msg.file_exists(state.display, op.line)
        return FileChange(kind="create", path=op.path, display=state.display, before=None, after=op.text)
    if isinstance(op, DeleteFile):
        if state.text is None:
            raise msg.missing_file("delete", state.display, op.line)
        return FileChange(kind="delete", path=op.path, display=state.display, before=state.text, after=None)
    if state.text is None:
        raise msg.missing_file("update", state.display, op.line)
    if dest is not None and dest.text is not None:
        raise msg.move_target_exists(state.display, dest.display, op.line)
    lines = file_lines(state.text)
    edits = chunk_edits(lines, op.chunks, dialect=op.dialect, path=state.display)
    after = apply_line_edits(state.text, edits, lines=lines)
    return FileChange(
        kind="update",
        path=op.path,
        display=state.display,
        before=state.text,
        after=after,
        move_to=op.move_to if dest is not None else None,
        move_display=dest.display if dest is not None else None,
        edits=tuple(edits),
    )


class _Created:
    """The files a patch creates so far (added, or moved to), by display path, to refuse one
    inside another (a file ``n`` and a file ``n/x``)."""

    def __init__(self) -> None:
        self.files: set[str] = set()
        self.below: dict[str, str] = {}
        """each directory a created file needs → one such file"""

    def add(self, op: FileOp, change: FileChange) -> None:
        """Record ``change``'s new file, if any.

        :raises PatchError: ``duplicate`` (``file_nested``) when a file above it or inside it is
            created too
        """
        path = change.display if change.kind == "create" else change.move_display
        if path is None:
            return
        source = change.display if change.kind == "update" else None
        parents = _parents(path)
        for parent in parents:
            if parent in self.files:
                raise msg.file_nested(path, op.line, parent=parent, source=source)
        if path in self.below:
            raise msg.file_nested(path, op.line, child=self.below[path], source=source)
        self.files.add(path)
        for parent in parents:
            self.below.setdefault(parent, path)


def _parents(path: str) -> list[str]:
    """The directories above ``path`` (a ``/``-separated display path), nearest first."""
    out: list[str] = []
    cut = path.rfind("/")
    while cut > 0:
        path = path[:cut]
        out.append(path)
        cut = path.rfind("/")
    return out
