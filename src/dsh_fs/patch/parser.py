"""One parser for the Codex ``*** Begin Patch`` envelope and the V4A diffs of the Responses API
``apply_patch`` operations (docs/design/EDITING-FACES-DESIGN.md §2.2). Pure: no I/O.

Grammar (Codex ``codex-rs/apply-patch/src/parser.rs``, with the V4A extensions of the Agents SDK's
``apply_diff.py``)::

    patch    := "*** Begin Patch" LF { fileop } "*** End Patch" [LF]
    fileop   := "*** Add File: " path LF { "+" text LF }
              | "*** Delete File: " path LF
              | "*** Update File: " path LF [ "*** Move to: " path LF ] chunk { chunk }
    chunk    := { "@@" [ " " anchor ] LF } { (" " | "-" | "+") text LF | LF } [ "*** End of File" LF ]

* Lines end at LF; a CR just before the LF belongs to the line break, any other CR is text.
* Like Codex: blank lines around the envelope are ignored, a ``<<'EOF'`` … ``EOF`` heredoc
  wrapper is dropped, header lines may carry surrounding whitespace, the first hunk of a file
  may omit its ``@@`` line, an empty line inside a hunk is an empty context line, a
  whitespace-only line that is not a context line (``\t``) ends its hunk, and blank or
  whitespace-only lines between hunks are skipped (``parser.rs`` at 0e0fb63d02:
  ``parse_update_file_chunk`` ends a chunk at such a line, ``parse_one_hunk`` skips every line
  whose ``trim()`` is empty before the next chunk).
* Like the SDK: several ``@@`` lines may stack before one hunk (each narrows the search).
* A Responses ``create_file`` diff is only ``+`` lines, joined by their own line breaks: the
  file ends with a line break iff the diff's last line is a bare ``+`` (SDK ``apply_diff``);
  an ``update_file`` diff is a sequence of chunks without the envelope.

Errors are ``PatchError(kind="syntax")`` naming the 1-based line of the given text and what
was expected there (messages in ``messages``).
"""

from __future__ import annotations

from typing import Literal

from . import messages as msg
from .model import AddFile, Chunk, DeleteFile, DiffOp, FileOp, Patch, UpdateFile

__all__ = ("parse_operation", "parse_patch", "split_lines")

BEGIN = "*** Begin Patch"
END = "*** End Patch"
ADD = "*** Add File: "
DELETE = "*** Delete File: "
UPDATE = "*** Update File: "
MOVE = "*** Move to: "
EOF_MARK = "*** End of File"
_HEREDOC_OPENERS = ("<<EOF", "<<'EOF'", '<<"EOF"')


def split_lines(text: str) -> list[tuple[str, str]]:
    """``text`` as ``(content, line_break)`` pairs; the break is ``"\\n"``, ``"\\r\\n"`` or ``""``
    (the last segment). ``"".join(c + b for c, b in split_lines(t)) == t``."""
    out: list[tuple[str, str]] = []
    for piece in text.split("\n")[:-1]:
        if piece.endswith("\r"):
            out.append((piece[:-1], "\r\n"))
        else:
            out.append((piece, "\n"))
    out.append((text[text.rfind("\n") + 1 :], ""))
    return out


class _Lines:
    """A cursor over the split lines of the text being parsed (line numbers are 1-based)."""

    def __init__(self, lines: list[tuple[str, str]], start: int, stop: int, first_number: int) -> None:
        self.lines = lines
        self.i = start
        self.stop = stop
        self.base = first_number - start  # line number of index i is i + base

    def more(self) -> bool:
        return self.i < self.stop

    def text(self) -> str:
        return self.lines[self.i][0]

    def number(self) -> int:
        return self.i + self.base


def parse_patch(text: str) -> Patch:
    """Parse a Codex-format patch (the registry tool's and the CLI's input).

    :raises PatchError: ``syntax``, e.g. ``Invalid patch: The first line of the patch must be
        '*** Begin Patch'`` or ``Invalid patch hunk on line 7: …``
    """
    lines = split_lines(text)
    filled = [i for i, (content, _) in enumerate(lines) if content.strip()]
    if not filled:
        raise msg.invalid_patch(msg.FIRST_LINE)
    first, last = filled[0], filled[-1]
    if (
        lines[first][0].strip() in _HEREDOC_OPENERS
        and lines[last][0].strip().endswith("EOF")
        and last - first + 1 >= 4
    ):
        first, last = first + 1, last - 1
    if lines[first][0].strip() != BEGIN:
        raise msg.invalid_patch(msg.FIRST_LINE)
    if first == last or lines[last][0].strip() != END:
        raise msg.invalid_patch(msg.LAST_LINE)
    cursor = _Lines(lines, first + 1, last, first + 2)
    ops: list[FileOp] = []
    while cursor.more():
        ops.append(_parse_op(cursor))
    return Patch(ops=tuple(ops))


def _parse_op(cursor: _Lines) -> FileOp:
    header = cursor.text().strip()
    number = cursor.number()
    cursor.i += 1
    if header.startswith(ADD):
        pieces: list[str] = []
        while cursor.more() and cursor.text().startswith("+"):
            content, brk = cursor.lines[cursor.i]
            pieces.append(content[1:] + brk)
            cursor.i += 1
        return AddFile(path=header[len(ADD) :], text="".join(pieces), line=number)
    if header.startswith(DELETE):
        return DeleteFile(path=header[len(DELETE) :], line=number)
    if header.startswith(UPDATE):
        path = header[len(UPDATE) :]
        move_to = None
        if cursor.more() and cursor.text().strip().startswith(MOVE):
            move_to = cursor.text().strip()[len(MOVE) :]
            cursor.i += 1
        elif cursor.more() and cursor.text().strip() == MOVE.strip():
            raise msg.invalid_hunk(cursor.number(), msg.empty_move(path))
        chunks = _parse_chunks(cursor)
        if not chunks:
            raise msg.invalid_hunk(number, msg.empty_update(path))
        return UpdateFile(path=path, move_to=move_to, chunks=chunks, dialect="codex", line=number)
    raise msg.invalid_hunk(number, msg.bad_header(header))


def _is_anchor(text: str) -> bool:
    return text.rstrip() == "@@" or text.startswith("@@ ")


_NOT_RUST_WHITESPACE = frozenset("\x1c\x1d\x1e\x1f")
"""characters Python's ``str.isspace`` counts and Rust's ``char::is_whitespace`` (Unicode
``White_Space``, what ``str::trim`` strips) does not"""


def _blank(text: str) -> bool:
    """Whether ``text`` is empty or whitespace only, as Rust's ``text.trim().is_empty()``."""
    return not text.strip() and _NOT_RUST_WHITESPACE.isdisjoint(text)


def _parse_chunks(cursor: _Lines) -> tuple[Chunk, ...]:
    """Hunks until a line starting with ``*`` (other than ``*** End of File``) or the end.

    Blank and whitespace-only lines where a hunk may start (before the first, between hunks,
    after a hunk's ``*** End of File``) are skipped, as Codex's parser skips them between
    chunks; inside a hunk an empty line is an empty context line, and a whitespace-only line
    that does not start with a space ends the hunk (Codex: "the start of the next hunk")."""
    chunks: list[Chunk] = []
    while cursor.more():
        if _blank(cursor.text()):
            cursor.i += 1  # blank lines before a hunk, between hunks, after ``*** End of File`` (Codex)
            continue
        text = cursor.text()
        if text.startswith("*") and text.rstrip() != EOF_MARK:
            break
        start = cursor.number()
        anchors: list[str] = []
        while cursor.more() and _is_anchor(cursor.text()):
            anchor = cursor.text()[3:]
            anchors.append(anchor if anchor.strip() else "")
            cursor.i += 1
        if not anchors and chunks:
            raise msg.invalid_hunk(start, msg.missing_marker(text))
        body: list[tuple[DiffOp, str]] = []
        end_of_file = False
        while cursor.more():
            text = cursor.text()
            if text.startswith("*") and text.rstrip() == EOF_MARK:
                if not body:
                    raise msg.invalid_hunk(cursor.number(), msg.NO_LINES)
                end_of_file = True
                cursor.i += 1
                break
            if text == "":
                body.append((" ", ""))
            elif text[0] in " -+":
                body.append((text[0], text[1:]))  # type: ignore[arg-type]
            elif _is_anchor(text) or text.startswith("*") or (body and _blank(text)):
                break
            else:
                raise msg.invalid_hunk(cursor.number(), msg.bad_update_line(text))
            cursor.i += 1
        if not body:
            raise msg.invalid_hunk(cursor.number() if cursor.more() else start + len(anchors), msg.NO_LINES)
        chunks.append(Chunk(anchors=tuple(anchors), lines=tuple(body), end_of_file=end_of_file, line=start))
    return tuple(chunks)


def parse_operation(
    kind: Literal["create_file", "update_file", "delete_file"],
    path: str,
    diff: str | None,
    *,
    move_to: str | None = None,
) -> FileOp:
    """Parse one Responses API ``apply_patch_call`` operation (or an Agents SDK
    ``ApplyPatchOperation``, whose ``move_to`` renames an updated file).

    Line numbers in errors count lines of ``diff``.

    :raises PatchError: ``syntax``
    :raises ValueError: an unknown ``kind``
    """
    if kind == "delete_file":
        return DeleteFile(path=path)
    lines = split_lines(diff or "")
    if lines[-1][0] == "":
        lines.pop()  # the diff's final line break ends its last line (SDK)
    if kind == "create_file":
        pieces: list[str] = []
        for number, (content, brk) in enumerate(lines, 1):
            if not content.startswith("+"):
                raise msg.invalid_hunk(number, msg.bad_add_line(content))
            pieces.append(content[1:] + (brk if number < len(lines) else ""))
        return AddFile(path=path, text="".join(pieces))
    if kind != "update_file":
        raise ValueError(f"unknown apply_patch operation type: {kind!r}")
    cursor = _Lines(lines, 0, len(lines), 1)
    chunks = _parse_chunks(cursor)
    if cursor.more():
        raise msg.invalid_hunk(cursor.number(), msg.bad_update_line(cursor.text()))
    if not chunks:
        raise msg.invalid_hunk(1, msg.empty_update(path))
    return UpdateFile(path=path, move_to=move_to, chunks=chunks, dialect="v4a", line=1)
