"""Shared pieces of the path-rules tests (docs/PATH-RULES.md): the fixture layout, the rules
that fence it, and the matrix rows — every tool, editor command and patch operation, each
against a denied and a read-only path — with what each must give.

A row is a tool call (the registry's, MCP's ``tools/call`` and the CLI take the same
arguments) and a check of its result: ``refused`` (an error naming the path rules; nothing
changes, checked by the caller on the whole tree) or ``shown`` (success, and no denied name or
content in its text).
"""

from __future__ import annotations

import io
import posixpath
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

DENY = ("secret.txt", "keys/", "*.pem")
"""the deny patterns of every matrix test"""

READ_ONLY = ("frozen.txt", "locked/**", "frozen.png", "frozen.ipynb")
"""the read-only patterns of every matrix test"""

SECRET = "TOPSECRET"
"""a word found only in denied files: it must never appear in a result"""


def png() -> bytes:
    """A small valid PNG (Pillow)."""
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (3, 2), (200, 10, 10)).save(out, "PNG")
    return out.getvalue()


def notebook(words: str) -> bytes:
    """A small notebook (nbformat 4.5) with the code cells ``c1`` and ``c2``."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    nb = new_notebook(cells=[new_code_cell(f"print('{words}')", id="c1"), new_code_cell("x = 1", id="c2")])
    return (nbformat.writes(nb) + "\n").encode()


def pdf(words: str) -> bytes:
    """A one-page PDF whose text is ``words``."""
    from pdfkit import pdf as make

    return make([words])


def layout() -> dict[str, bytes]:
    """relative path → bytes of every file of the fixture (parents made as needed)."""
    image = png()
    return {
        "keys/nb.ipynb": notebook(SECRET),
        "locked/nb.ipynb": notebook("locked words"),
        "keys/doc.pdf": pdf(f"{SECRET} four"),
        "locked/doc.pdf": pdf("locked words"),
        "open.txt": b"open words\n",
        "secret.txt": f"{SECRET} one\n".encode(),
        "keys/a.txt": f"{SECRET} two\n".encode(),
        "keys/pic.png": image,
        "id.pem": f"{SECRET} three\n".encode(),
        "frozen.txt": b"frozen words\n",
        "frozen.png": image,
        "locked/b.txt": b"locked words\n",
        "keys/nb.ipynb": NOTEBOOK,
        "frozen.ipynb": NOTEBOOK,
    }


NOTEBOOK = (b'{"cells": [{"cell_type": "markdown", "id": "a", "metadata": {}, "source": "words"}], '
            b'"metadata": {}, "nbformat": 4, "nbformat_minor": 5}\n')
"""a one-cell notebook (the ``notebook_edit`` rows)"""


DENIED_NAMES = ("secret.txt", "keys", "id.pem", "pic.png")
"""names that never appear in a listing or search result"""


@dataclass(frozen=True)
class Row:
    name: str
    tool: str
    kind: str
    """``deny`` or ``read-only``: the rule the row exercises"""
    args: dict[str, Any]
    expect: str
    """``refused``: an error by the path rules; ``shown``: success without denied names/content"""
    command: str | None = None
    """the editor command or patch operation the row covers"""
    reads: tuple[str, ...] = ()
    """files read first (the policy's read-before-change), relative paths"""
    contains: str | None = None
    """for ``shown``: a text the result must contain"""


AE, RE = "str_replace_based_edit_tool", "str_replace_editor"


def args_for(row: Row, root: str) -> dict[str, Any]:
    """``row.args`` for a workspace whose root is ``root``: a value ``@rel`` is the absolute
    path of ``rel`` (``str_replace_editor`` takes absolute paths only)."""
    def value(v: Any) -> Any:
        return posixpath.join(root, v[1:]) if isinstance(v, str) and v.startswith("@") else v

    return {k: value(v) for k, v in row.args.items()}


def _patch(body: str) -> dict[str, Any]:
    return {"input": "*** Begin Patch\n" + body + "*** End Patch\n"}


ROWS: list[Row] = [
    Row("read denied", "read", "deny", {"file_path": "secret.txt"}, "refused"),
    Row("read in a denied directory", "read", "deny", {"file_path": "keys/a.txt"}, "refused"),
    Row("read read-only", "read", "read-only", {"file_path": "frozen.txt"}, "shown", contains="frozen words"),
    Row("write denied", "write", "deny", {"file_path": "secret.txt", "content": "x\n"}, "refused"),
    Row("write new in a denied directory", "write", "deny", {"file_path": "keys/new.txt", "content": "x\n"}, "refused"),
    Row("write read-only", "write", "read-only", {"file_path": "frozen.txt", "content": "x\n"}, "refused",
        reads=("frozen.txt",)),
    Row("write new in a read-only directory", "write", "read-only", {"file_path": "locked/new.txt", "content": "x\n"},
        "refused"),
    Row("edit denied", "edit", "deny", {"file_path": "secret.txt", "old_string": "one", "new_string": "1"}, "refused"),
    Row("edit read-only", "edit", "read-only", {"file_path": "frozen.txt", "old_string": "words", "new_string": "w"},
        "refused", reads=("frozen.txt",)),
    Row("list hides denied", "list", "deny", {"path": "."}, "shown", contains="open.txt"),
    Row("list a denied directory", "list", "deny", {"path": "keys"}, "refused"),
    Row("list shows read-only", "list", "read-only", {"path": "."}, "shown", contains="frozen.txt"),
    Row("glob hides denied", "glob", "deny", {"pattern": "**/*"}, "shown", contains="open.txt"),
    Row("glob a denied name", "glob", "deny", {"pattern": "**/secret.txt"}, "shown", contains="No files found"),
    Row("glob in a denied directory", "glob", "deny", {"pattern": "*", "path": "keys"}, "refused"),
    Row("glob shows read-only", "glob", "read-only", {"pattern": "**/*.txt"}, "shown", contains="frozen.txt"),
    Row("grep hides denied", "grep", "deny", {"pattern": SECRET}, "shown", contains="No matches found"),
    Row("grep everything", "grep", "deny", {"pattern": "."}, "shown", contains="open words"),
    Row("grep a denied file", "grep", "deny", {"pattern": ".", "path": "secret.txt"}, "refused"),
    Row("grep shows read-only", "grep", "read-only", {"pattern": "frozen"}, "shown", contains="frozen words"),
    Row("read_image denied", "read_image", "deny", {"file_path": "keys/pic.png"}, "refused"),
    Row("read_image read-only", "read_image", "read-only", {"file_path": "frozen.png"}, "shown"),
    Row("notebook_edit denied", "notebook_edit", "deny",
        {"notebook_path": "keys/nb.ipynb", "cell_id": "a", "new_source": "x"}, "refused"),
    Row("notebook_edit read-only", "notebook_edit", "read-only",
        {"notebook_path": "frozen.ipynb", "cell_id": "a", "new_source": "x"}, "refused", reads=("frozen.ipynb",)),
    Row("patch add denied", "apply_patch", "deny", _patch("*** Add File: keys/n.txt\n+x\n"), "refused",
        command="AddFile"),
    Row("patch add read-only", "apply_patch", "read-only", _patch("*** Add File: locked/n.txt\n+x\n"), "refused",
        command="AddFile"),
    Row("patch update denied", "apply_patch", "deny", _patch("*** Update File: secret.txt\n@@\n-TOPSECRET one\n+x\n"),
        "refused", command="UpdateFile"),
    Row("patch update read-only", "apply_patch", "read-only",
        _patch("*** Update File: frozen.txt\n@@\n-frozen words\n+x\n"), "refused", command="UpdateFile",
        reads=("frozen.txt",)),
    Row("patch delete denied", "apply_patch", "deny", _patch("*** Delete File: id.pem\n"), "refused",
        command="DeleteFile"),
    Row("patch delete read-only", "apply_patch", "read-only", _patch("*** Delete File: frozen.txt\n"), "refused",
        command="DeleteFile", reads=("frozen.txt",)),
    Row("patch move onto denied", "apply_patch", "deny",
        _patch("*** Update File: open.txt\n*** Move to: keys/moved.txt\n@@\n open words\n"), "refused",
        command="UpdateFile+move", reads=("open.txt",)),
    Row("patch move onto read-only", "apply_patch", "read-only",
        _patch("*** Update File: open.txt\n*** Move to: locked/moved.txt\n@@\n open words\n"), "refused",
        command="UpdateFile+move", reads=("open.txt",)),
    Row("patch move a read-only file away", "apply_patch", "read-only",
        _patch("*** Update File: frozen.txt\n*** Move to: thawed.txt\n@@\n frozen words\n"), "refused",
        command="UpdateFile+move", reads=("frozen.txt",)),
    Row("patch move a denied file away", "apply_patch", "deny",
        _patch("*** Update File: id.pem\n*** Move to: public.txt\n@@\n TOPSECRET three\n"), "refused",
        command="UpdateFile+move"),
    Row("patch with one denied file writes nothing", "apply_patch", "deny",
        _patch("*** Add File: fine.txt\n+x\n*** Add File: other.pem\n+x\n"), "refused"),
]

for face in (AE, RE):
    at = "@" if face == RE else ""
    insert = {"insert_line": 0, "insert_text": "top\n"} if face == AE else {"insert_line": 1, "new_str": "end"}
    ROWS += [
        Row(f"{face} view denied", face, "deny", {"command": "view", "path": at + "secret.txt"}, "refused", command="view"),
        Row(f"{face} view a directory", face, "deny", {"command": "view", "path": at + "."}, "shown", command="view",
            contains="open.txt"),
        Row(f"{face} view read-only", face, "read-only", {"command": "view", "path": at + "frozen.txt"}, "shown",
            command="view", contains="frozen words"),
        Row(f"{face} create denied", face, "deny", {"command": "create", "path": at + "keys/n.txt", "file_text": "x\n"},
            "refused", command="create"),
        Row(f"{face} create read-only", face, "read-only",
            {"command": "create", "path": at + "locked/n.txt", "file_text": "x\n"}, "refused", command="create"),
        Row(f"{face} str_replace denied", face, "deny",
            {"command": "str_replace", "path": at + "secret.txt", "old_str": "one", "new_str": "1"}, "refused",
            command="str_replace"),
        Row(f"{face} str_replace read-only", face, "read-only",
            {"command": "str_replace", "path": at + "frozen.txt", "old_str": "words", "new_str": "w"}, "refused",
            command="str_replace", reads=("frozen.txt",)),
        Row(f"{face} insert denied", face, "deny", {"command": "insert", "path": at + "secret.txt", **insert}, "refused",
            command="insert"),
        Row(f"{face} insert read-only", face, "read-only", {"command": "insert", "path": at + "frozen.txt", **insert},
            "refused", command="insert", reads=("frozen.txt",)),
    ]

def _notebook(path: str, mode: str) -> dict[str, Any]:
    args: dict[str, Any] = {"notebook_path": "@" + path, "new_source": "y = 2", "edit_mode": mode}
    if mode != "insert":
        args["cell_id"] = "c1"
    else:
        args.update(cell_id="c1", cell_type="code")
    return args


for mode in ("replace", "insert", "delete"):
    ROWS += [
        Row(f"notebook_edit {mode} denied", "notebook_edit", "deny", _notebook("keys/nb.ipynb", mode), "refused",
            command=mode),
        Row(f"notebook_edit {mode} read-only", "notebook_edit", "read-only", _notebook("locked/nb.ipynb", mode),
            "refused", command=mode, reads=("locked/nb.ipynb",)),
    ]

ROWS += [
    Row("read_pdf denied", "read_pdf", "deny", {"file_path": "keys/doc.pdf"}, "refused"),
    Row("read_pdf read-only", "read_pdf", "read-only", {"file_path": "locked/doc.pdf"}, "shown",
        contains="locked words"),
]

COMMANDS = {AE: "command", RE: "command", "notebook_edit": "edit_mode"}
"""the faces whose rows are per value of one argument (each value needs a deny and a read-only row)"""

READ_ONLY_TOOLS = {"read", "list", "glob", "grep", "read_image", "read_pdf"}
"""tools that change nothing: their read-only row shows the file"""


def check(row: Row, is_error: bool, text: str, code: str | None) -> None:
    """Assert that a row's result is what the row expects (``text``: the result's text)."""
    if row.expect == "refused":
        assert is_error, f"{row.name}: not refused: {text}"
        assert "permission denied — the path rules " in text, f"{row.name}: {text}"
        if code is not None:
            assert code == "FS_PERMISSION_DENIED", f"{row.name}: {code} {text}"
        verdict = "deny access to it" if row.kind == "deny" else "make it read-only"
        assert verdict in text, f"{row.name}: {text}"
    else:
        assert not is_error, f"{row.name}: {text}"
        if row.contains is not None:
            assert row.contains in text, f"{row.name}: {text}"
    assert SECRET not in text, f"{row.name}: denied content shown: {text}"
    for name in DENIED_NAMES:
        if row.expect == "shown":
            assert name not in text, f"{row.name}: denied name {name} shown: {text}"


Call = Callable[[str, dict[str, Any]], Any]
