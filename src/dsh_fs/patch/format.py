"""Write a parsed patch back as text: the Codex envelope or one V4A operation diff. Pure.

``parse_patch(format_patch(p)) == p`` and ``parse_operation(…, format_operation_diff(op)) == op``
for every patch these functions accept; a patch that the text form cannot carry raises
``ValueError`` (for example an added file without a final line break in the envelope, whose
``+`` lines always end with one).
"""

from __future__ import annotations

from .model import AddFile, Chunk, DeleteFile, FileOp, Patch, UpdateFile
from .parser import ADD, BEGIN, DELETE, END, EOF_MARK, MOVE, UPDATE, split_lines

__all__ = ("format_operation_diff", "format_patch")


def _check_path(path: str) -> None:
    if not path or path != path.strip() or "\n" in path or "\r" in path:
        raise ValueError(f"path {path!r} cannot be written in a patch")


def _check_text(text: str) -> None:
    if "\n" in text or text.endswith("\r"):
        raise ValueError(f"diff line {text!r} holds a line break")


def _chunk_lines(chunk: Chunk, first: bool) -> list[str]:
    if not chunk.anchors and not first:
        raise ValueError("every hunk after the first needs an @@ line")
    if not chunk.lines:
        raise ValueError("a hunk needs at least one diff line")
    if not chunk.anchors and not "".join(chunk.lines[0]).strip():
        raise ValueError("a hunk without @@ cannot start with a blank line (it would be skipped)")
    out: list[str] = []
    for anchor in chunk.anchors:
        _check_text(anchor)
        if anchor and not anchor.strip():
            raise ValueError(f"anchor {anchor!r} is blank (a bare @@ is written as an empty anchor)")
        out.append(f"@@ {anchor}" if anchor else "@@")
    for op, text in chunk.lines:
        _check_text(text)
        out.append(op + text)
    if chunk.end_of_file:
        out.append(EOF_MARK)
    return out


def _chunks_text(op: UpdateFile) -> list[str]:
    if not op.chunks:
        raise ValueError("an update needs at least one hunk")
    return [line for i, chunk in enumerate(op.chunks) for line in _chunk_lines(chunk, i == 0)]


def format_patch(patch: Patch) -> str:
    """The Codex envelope of ``patch`` (LF line breaks, except inside added files).

    :raises ValueError: the envelope cannot carry it
    """
    out = [BEGIN + "\n"]
    for op in patch.ops:
        _check_path(op.path)
        if isinstance(op, AddFile):
            out.append(f"{ADD}{op.path}\n")
            pieces = split_lines(op.text)
            if pieces[-1][0]:
                raise ValueError("an added file must be empty or end with a line break")
            out.extend(f"+{content}{brk}" for content, brk in pieces[:-1])
        elif isinstance(op, DeleteFile):
            out.append(f"{DELETE}{op.path}\n")
        else:
            out.append(f"{UPDATE}{op.path}\n")
            if op.move_to is not None:
                _check_path(op.move_to)
                out.append(f"{MOVE}{op.move_to}\n")
            out.extend(line + "\n" for line in _chunks_text(op))
    out.append(END + "\n")
    return "".join(out)


def format_operation_diff(op: FileOp) -> str:
    """The ``diff`` of a Responses API operation for ``op`` (``""`` for a delete)."""
    if isinstance(op, DeleteFile):
        return ""
    if isinstance(op, AddFile):
        pieces = split_lines(op.text)
        return "".join(f"+{content}{brk}" for content, brk in pieces)
    return "\n".join(_chunks_text(op)) + "\n"
