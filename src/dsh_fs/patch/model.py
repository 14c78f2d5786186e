"""The parsed form of a patch: one vocabulary for the Codex envelope and the V4A diffs of the
Responses API ``apply_patch`` operations (docs/design/EDITING-FACES-DESIGN.md §2). Pure values, no logic.

A patch is a sequence of file operations. An update is a sequence of chunks; a chunk is a run
of diff lines (``" "`` context, ``"-"`` removed, ``"+"`` added) optionally introduced by ``@@``
anchor lines that narrow where it is searched. Line numbers (``line``) only serve error
messages and are left out of equality, so ``parse(format(p)) == p`` compares content.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

__all__ = ("AddFile", "Chunk", "DeleteFile", "Dialect", "DiffOp", "FileOp", "Patch", "UpdateFile")

Dialect = Literal["codex", "v4a"]
"""Where a patch came from: the Codex ``*** Begin Patch`` envelope, or one Responses operation
diff (V4A). The two differ only where their published implementations differ (EDITING-FACES-DESIGN §2.4)."""

DiffOp = Literal[" ", "-", "+"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Chunk:
    """One hunk of an update: the lines it expects and what replaces them."""

    anchors: tuple[str, ...] = ()
    """``@@`` lines before the hunk, in order; ``""`` for a bare ``@@``; empty = no ``@@`` line
    (allowed for the first hunk of a file only)"""
    lines: tuple[tuple[DiffOp, str], ...] = ()
    """the diff lines: ``(" ", text)`` context, ``("-", text)`` removed, ``("+", text)`` added"""
    end_of_file: bool = False
    """``*** End of File`` followed the hunk: its expected lines end the file"""
    line: int = field(default=0, compare=False)
    """1-based line of the patch text where the hunk starts (its first ``@@`` or diff line)"""

    @property
    def old_lines(self) -> list[str]:
        """Context and removed lines: what the file must contain."""
        return [text for op, text in self.lines if op != "+"]

    @property
    def new_lines(self) -> list[str]:
        """Context and added lines: what the file will contain there."""
        return [text for op, text in self.lines if op != "-"]


@dataclass(frozen=True, slots=True, kw_only=True)
class AddFile:
    """Create a file (``*** Add File:`` / ``create_file``)."""

    path: str
    text: str
    """the whole new file, line breaks as they were written in the patch"""
    line: int = field(default=0, compare=False)
    kind: Literal["add"] = "add"


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteFile:
    """Delete a file (``*** Delete File:`` / ``delete_file``)."""

    path: str
    line: int = field(default=0, compare=False)
    kind: Literal["delete"] = "delete"


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateFile:
    """Change a file in place, optionally moving it (``*** Update File:`` [``*** Move to:``] /
    ``update_file``)."""

    path: str
    chunks: tuple[Chunk, ...]
    move_to: str | None = None
    dialect: Dialect = "codex"
    """decides where a hunk with neither expected lines nor anchors goes (EDITING-FACES-DESIGN §2.4)"""
    line: int = field(default=0, compare=False)
    kind: Literal["update"] = "update"


FileOp = AddFile | DeleteFile | UpdateFile


@dataclass(frozen=True, slots=True, kw_only=True)
class Patch:
    """A whole patch: its file operations in order."""

    ops: tuple[FileOp, ...]
