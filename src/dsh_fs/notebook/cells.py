"""Claude Code's ``NotebookEdit`` operations on a parsed notebook, and the text that writes it back
(docs/NOTEBOOKS.md; DEVIATIONS F3–F5). Pure: no I/O.

The operations are Claude Code's (``@anthropic-ai/claude-code`` 2.1.100, ``NotebookEditTool``):

* the cell is named by ``cell_id``: a cell's ``id``, or ``cell-<n>`` (0-based index) for a
  notebook without ids (``document.find_cell``);
* ``replace`` sets the cell's source; a code cell's outputs are cleared and its execution count
  reset; a given ``cell_type`` other than the cell's converts it;
* ``insert`` adds a cell after the named one, or at the top without ``cell_id``; in nbformat
  4.5 and later it gets a new 8-character id;
* ``delete`` removes the named cell.

Where dsh-fs differs (F4): converting a cell adds or removes the keys its new type needs or must
not have (Claude Code leaves ``outputs`` on a cell turned to markdown, which nbformat refuses); a
markdown cell with attachments is not turned into a code cell (the attachments would be lost);
an inserted cell of a notebook without ids is named ``cell-<n>`` in the result.

``dump`` writes the document back in the layout of the text it came from (indent, ASCII escapes,
final line break; keys in their order), so that for a notebook as Jupyter or VS Code save it
only the edited cell's lines change (F5). A cell's new source is stored as the cell stored it
(a list of lines, as nbformat writes, or one string).
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import dataclass
from typing import Any, Literal

from .document import cell_name, find_cell, has_cell_ids, source_text

__all__ = ("Applied", "EditMode", "EditRefused", "apply", "dump", "split_source")

EditMode = Literal["replace", "insert", "delete"]

CELL_ID_REQUIRED = "Cell ID must be specified when not inserting a new cell."
"""Claude Code's text: ``replace``/``delete`` without ``cell_id``"""
_INDENT = re.compile(r"\{\r?\n([ \t]+)\"")
_ESCAPED = re.compile(r"(?<!\\)(?:\\\\)*\\u(?:007[fF]|00[89a-fA-F][0-9a-fA-F]|0[1-9a-fA-F][0-9a-fA-F]{2}|[1-9a-fA-F][0-9a-fA-F]{3})")
"""a ``\\uXXXX`` escape of a character from U+007F on, not itself escaped: the writer escaped
what is not ASCII (``ensure_ascii``)"""


class EditRefused(ValueError):
    """The edit cannot apply to this notebook: ``str(err)`` is the model-facing text."""


@dataclass(frozen=True, slots=True)
class Applied:
    """What ``apply`` did."""

    mode: EditMode
    cell: str
    """the name of the cell replaced, inserted or deleted (``cell_name`` after the edit; for a
    deletion, before it)"""
    old_source: str | None
    """the source the cell had (``replace``, ``delete``)"""


def split_source(text: str) -> list[str]:
    """``text`` as nbformat writes a multiline string (``str.splitlines(True)``): lines, each
    with its line break; ``[]`` for ``""``."""
    return text.splitlines(True)


def _stored(text: str, as_list: bool) -> str | list[str]:
    return split_source(text) if as_list else text


def _new_id(cells: list[dict[str, Any]]) -> str:
    """A fresh cell id (8 hex digits, as Claude Code and nbformat make them), unused in ``cells``."""
    taken = {cell.get("id") for cell in cells}
    while True:
        candidate = secrets.token_hex(4)
        if candidate not in taken:
            return candidate


def _new_cell(kind: str, source: str | list[str], cell_id: str | None) -> dict[str, Any]:
    """A new cell, its keys in nbformat's (sorted) order."""
    cell: dict[str, Any] = {"cell_type": kind}
    if kind == "code":
        cell["execution_count"] = None
    if cell_id is not None:
        cell["id"] = cell_id
    cell["metadata"] = {}
    if kind == "code":
        cell["outputs"] = []
    cell["source"] = source
    return cell


def _convert(cell: dict[str, Any], kind: str, name: str) -> None:
    """Make ``cell`` a ``kind`` cell: a code cell gains ``execution_count`` and ``outputs``, a
    markdown cell loses them (F4).

    :raises EditRefused: a cell with attachments made a code cell
    """
    keys_sorted = list(cell) == sorted(cell)
    if kind == "code":
        if cell.get("attachments"):
            raise EditRefused(f'Cell {name} has attachments, which a code cell cannot hold; '
                              "it was not changed to a code cell.")
        cell.pop("attachments", None)
        cell.setdefault("execution_count", None)
        cell.setdefault("outputs", [])
    else:
        cell.pop("execution_count", None)
        cell.pop("outputs", None)
    cell["cell_type"] = kind
    if keys_sorted:  # as nbformat writes them: keep the cell's keys in that order
        ordered = sorted(cell.items())
        cell.clear()
        cell.update(ordered)


def apply(document: dict[str, Any], *, cell_id: str | None, new_source: str, cell_type: str | None,
          edit_mode: EditMode) -> Applied:
    """Apply one ``NotebookEdit`` to ``document`` in place (a ``document.parse`` result).

    :param cell_id: the cell to replace or delete, or to insert after; ``None``: insert at the top
    :param cell_type: ``code`` or ``markdown``; required by the caller for ``insert``
    :raises EditRefused: Claude Code's texts: ``Cell ID must be specified when not inserting a new
        cell.``, ``Cell with ID "<id>" not found in notebook.``, ``Cell with index <n> does not exist
        in notebook.``; F4's for attachments
    """
    cells: list[dict[str, Any]] = document["cells"]
    index = 0
    if cell_id is None:
        if edit_mode != "insert":
            raise EditRefused(CELL_ID_REQUIRED)
    else:
        found = find_cell(cells, cell_id)
        if found is None:
            raise EditRefused(f'Cell with ID "{cell_id}" not found in notebook.')
        if not found.exists:
            raise EditRefused(f"Cell with index {found.index} does not exist in notebook.")
        index = found.index
    as_list = any(isinstance(cell.get("source"), list) for cell in cells)
    if edit_mode == "insert":
        at = index + 1 if cell_id is not None else 0
        new_id = _new_id(cells) if has_cell_ids(document) else None
        cells.insert(at, _new_cell(cell_type or "code", _stored(new_source, as_list), new_id))
        return Applied("insert", cell_name(cells[at], at), None)
    cell = cells[index]
    name = cell_name(cell, index)
    old = source_text(cell)
    if edit_mode == "delete":
        del cells[index]
        return Applied("delete", name, old)
    if cell_type is not None and cell_type != cell.get("cell_type"):
        _convert(cell, cell_type, name)
    cell["source"] = _stored(new_source, isinstance(cell.get("source"), list))
    if cell.get("cell_type") == "code":
        cell["execution_count"] = None
        cell["outputs"] = []
    return Applied("replace", name, old)


def _layout(text: str) -> dict[str, Any]:
    """The ``json.dumps`` options that wrote ``text``, as far as they can be told: its indent
    (one space, Jupyter's, when it has line breaks but no indent to copy; none when it is one
    line), ASCII escapes when the text is all ASCII and escapes a character beyond it (as
    ``json.dumps`` does by default; Jupyter does not)."""
    body = text.lstrip("\ufeff")
    match = _INDENT.match(body)
    options: dict[str, Any] = {"ensure_ascii": text.isascii() and _ESCAPED.search(text) is not None}
    if match is not None:
        options["indent"] = match.group(1)
    elif "\n" in body.strip():
        options["indent"] = 1
    else:
        options["separators"] = (",", ":")
    return options


def dump(document: dict[str, Any], original: str) -> str:
    """``document`` as JSON text laid out as ``original`` (the notebook's text before the edit,
    ``_layout``), with its final line break or none. A string with a lone
    surrogate (a ``\\udXXX`` escape in the file) is written escaped, never replaced."""
    options = _layout(original)
    text = json.dumps(document, **options)
    if not options["ensure_ascii"]:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            text = json.dumps(document, **{**options, "ensure_ascii": True})
    return text + "\n" if original.endswith("\n") else text
