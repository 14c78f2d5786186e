"""A Jupyter notebook's JSON as the notebook tools need it (docs/NOTEBOOKS.md). Pure: no I/O.

``parse`` turns the file's text into the parsed document (plain ``dict``/``list`` values, keys in
file order) after the few structural checks every reader relies on: an object with a ``cells``
array of objects. Everything else is read leniently (a cell without ``id``, a ``source`` string
or list of strings, missing ``metadata``): notebooks in the wild are written by many tools.

Cells are named as Claude Code's ``Read`` and ``NotebookEdit`` name them: by their ``id``, or,
for a cell without one (nbformat < 4.5), by ``cell-<index>`` (0-based). ``find_cell`` accepts both.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

__all__ = (
    "Found",
    "NotNotebook",
    "cell_name",
    "find_cell",
    "has_cell_ids",
    "language",
    "parse",
    "source_text",
)

_INDEX_NAME = re.compile(r"cell-(\d+)")


class NotNotebook(ValueError):
    """The text is not a notebook: not JSON, or JSON without a ``cells`` array of objects.

    :param reason: ``"json"`` (not valid JSON) or ``"shape"`` (valid JSON, not a notebook)
    :param detail: what is wrong, for the message
    """

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


def parse(text: str) -> dict[str, Any]:
    """The notebook document of ``text`` (the file's decoded text, BOM already stripped).

    :raises NotNotebook: ``json`` for text that is not JSON (also JSON nested too deeply for
        the parser), ``shape`` for JSON that is not an object with a ``cells`` array of objects
    """
    try:
        document = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise NotNotebook("json", str(exc) if isinstance(exc, ValueError) else "nested too deeply") from None
    if not isinstance(document, dict):
        raise NotNotebook("shape", "the top level is not a JSON object")
    cells = document.get("cells")
    if not isinstance(cells, list):
        raise NotNotebook("shape", 'there is no "cells" array')
    for index, cell in enumerate(cells):
        if not isinstance(cell, dict):
            raise NotNotebook("shape", f"cell {index} is not a JSON object")
    return document


def source_text(cell: dict[str, Any]) -> str:
    """A cell's source as one string (nbformat stores it as a string or a list of lines);
    anything else reads as empty."""
    source = cell.get("source", "")
    if isinstance(source, str):
        return source
    if isinstance(source, list):
        return "".join(part for part in source if isinstance(part, str))
    return ""


def cell_name(cell: dict[str, Any], index: int) -> str:
    """What the model calls the cell: its ``id``, else ``cell-<index>`` (Claude Code's naming)."""
    cell_id = cell.get("id")
    return cell_id if isinstance(cell_id, str) and cell_id else f"cell-{index}"


@dataclass(frozen=True, slots=True)
class Found:
    """Where ``find_cell`` found the cell: its index, or the index a ``cell-<n>`` name asked for
    beyond the last cell (``exists`` false)."""

    index: int
    exists: bool


def find_cell(cells: list[dict[str, Any]], name: str) -> Found | None:
    """The cell called ``name``: the first with that ``id``; else, for ``cell-<n>``, index ``n``
    (Claude Code's fallback for notebooks without ids). ``None``: neither form names a cell.

    :return: ``Found(index, exists=False)`` for ``cell-<n>`` past the last cell (the caller says
        ``Cell with index <n> does not exist in notebook.``)
    """
    for index, cell in enumerate(cells):
        if cell.get("id") == name:
            return Found(index, True)
    match = _INDEX_NAME.fullmatch(name)
    if match is None:
        return None
    index = int(match.group(1))
    return Found(index, index < len(cells))


def has_cell_ids(document: dict[str, Any]) -> bool:
    """Does the format carry cell ids (nbformat 4.5 and later)? New cells then get one."""
    major, minor = document.get("nbformat"), document.get("nbformat_minor")
    if not isinstance(major, int) or isinstance(major, bool):
        return False
    if major != 4:
        return major > 4
    return isinstance(minor, int) and not isinstance(minor, bool) and minor >= 5


def language(document: dict[str, Any]) -> str:
    """The notebook's programming language: ``metadata.language_info.name``, else
    ``metadata.kernelspec.language``, else ``python`` (Claude Code's default)."""
    metadata = document.get("metadata")
    if isinstance(metadata, dict):
        info = metadata.get("language_info")
        if isinstance(info, dict) and isinstance(info.get("name"), str) and info["name"]:
            return str(info["name"])
        spec = metadata.get("kernelspec")
        if isinstance(spec, dict) and isinstance(spec.get("language"), str) and spec["language"]:
            return str(spec["language"])
    return "python"
