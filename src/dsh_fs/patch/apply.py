"""Apply located hunks to a file's text, changing only the lines they change
(docs/design/EDITING-FACES-DESIGN.md §2.4; DEVIATIONS D2). Pure.

Work happens on the LF-normalized text split at ``"\\n"``; the result maps back to the file's
own bytes with ``fs.literal_edit.splice``: context lines are never rewritten (even when a
whitespace-tolerant tier matched them), untouched line breaks keep their style, new line breaks
take the file's dominant style, and a final line break is kept or dropped only when a hunk says
so (its last empty line is removed or added).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..fs.literal_edit import splice
from ..fs.text import normalize
from .locate import Haystack, locate_chunk
from .model import Chunk, Dialect

__all__ = ("LineEdit", "apply_chunks", "apply_line_edits", "chunk_edits", "file_lines")

LineEdit = tuple[int, int, list[str]]
"""``(start, removed, inserted)``: replace ``removed`` lines from 0-based line ``start`` by the
``inserted`` lines (lines of the LF-normalized text split at ``"\\n"``)"""


def file_lines(raw: str) -> list[str]:
    """The lines hunks are matched against: ``normalize(raw).split("\\n")``."""
    return normalize(raw).split("\n")


def apply_chunks(raw: str, chunks: Sequence[Chunk], *, dialect: Dialect, path: str) -> str:
    """``raw`` with every hunk applied, in order (each is searched past the previous one).

    :param raw: the file text as read (BOM stripped, line endings as on disk)
    :param path: the file's name for error messages
    :raises PatchError: ``not_found`` or ``ambiguous`` for the first hunk that does not apply
    """
    lines = file_lines(raw)
    return apply_line_edits(raw, chunk_edits(lines, chunks, dialect=dialect, path=path), lines=lines)


def chunk_edits(lines: list[str], chunks: Sequence[Chunk], *, dialect: Dialect, path: str) -> list[LineEdit]:
    """The line edits of every hunk, located in ``lines`` (``file_lines`` of the file) in order.

    :raises PatchError: ``not_found`` or ``ambiguous`` for the first hunk that does not apply
    """
    hay = Haystack(lines)
    edits: list[LineEdit] = []
    cursor = 0
    floating = False
    for chunk in chunks:
        located = locate_chunk(hay, chunk, cursor, dialect=dialect, path=path)
        at = located.start
        run_start, removed, inserted = at, 0, []
        for op, text in (*located.lines, (" ", "")):  # a final context line flushes the last run
            if op == " ":
                if removed or inserted:
                    edits.append((run_start, removed, inserted))
                at += 1
                run_start, removed, inserted = at, 0, []
            elif op == "-":
                removed += 1
                at += 1
            else:
                inserted.append(text)
        if located.floating:
            floating = True  # appended at the end: later hunks are still searched from the cursor
        else:
            cursor = located.start + located.span
    return _in_file_order(edits) if floating else edits


def _in_file_order(edits: list[LineEdit]) -> list[LineEdit]:
    """Edits sorted by position (patch order kept among equal ones, as Codex's stable sort
    does); an insertion that falls inside an earlier-sorted removal moves to its end."""
    out: list[LineEdit] = []
    for start, removed, inserted in sorted(edits, key=lambda edit: edit[0]):
        if out and start < out[-1][0] + out[-1][1]:
            start = out[-1][0] + out[-1][1]  # only a floating insertion can land inside a removal
        out.append((start, removed, inserted))
    return out


def apply_line_edits(raw: str, edits: Sequence[LineEdit], *, lines: list[str] | None = None) -> str:
    """``raw`` with line edits applied; bytes outside them are unchanged (D2).

    :param edits: ascending, not overlapping (edits that touch are merged)
    :param lines: ``file_lines(raw)`` if the caller already has it
    """
    if lines is None:
        lines = file_lines(raw)
    merged: list[LineEdit] = []
    for start, removed, inserted in edits:
        if merged and merged[-1][0] + merged[-1][1] == start:
            prev_start, prev_removed, prev_inserted = merged[-1]
            merged[-1] = (prev_start, prev_removed + removed, prev_inserted + inserted)
        else:
            merged.append((start, removed, list(inserted)))
    total = len(lines)
    starts = _line_starts(lines, merged)

    def end(k: int) -> int:  # offset just past the content of line k (before its line break)
        return starts[k] + len(lines[k])

    spans: list[tuple[int, int, str]] = []
    for start, removed, inserted in merged:
        if removed and inserted:
            spans.append((starts[start], end(start + removed - 1), "\n".join(inserted)))
        elif removed:
            if start + removed < total:
                spans.append((starts[start], starts[start + removed], ""))
            elif start:
                spans.append((end(start - 1), end(total - 1), ""))  # through the last line: drop the break before
            else:
                spans.append((0, end(total - 1), ""))
        elif inserted:
            if start < total:
                spans.append((starts[start], starts[start], "\n".join(inserted) + "\n"))
            else:
                spans.append((end(total - 1), end(total - 1), "\n" + "\n".join(inserted)))
    return splice(raw, spans)


def _line_starts(lines: list[str], edits: Sequence[LineEdit]) -> dict[int, int]:
    """The offset in the ``"\n"``-joined ``lines`` of each line an edit's span needs (its
    first line, the lines around it, the last line; ``len(lines)`` is one past the end),
    summed in one ascending sweep: the cost follows the lines, at C speed, not a Python step
    per line of the file."""
    total = len(lines)
    wanted = {total - 1, total}
    for start, removed, _ in edits:
        wanted.update((start - 1, start, start + removed - 1, start + removed))
    out: dict[int, int] = {}
    at = offset = 0
    for k in sorted(k for k in wanted if 0 <= k <= total):
        offset += sum(map(len, lines[at:k])) + (k - at)
        at = k
        out[k] = offset
    return out
