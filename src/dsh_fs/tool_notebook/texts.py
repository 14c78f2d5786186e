"""Every model-facing text of ``notebook_edit`` (docs/NOTEBOOKS.md).

Claude Code's ``NotebookEdit`` texts, byte for byte: the tool description (its ``prompt()``),
the parameter descriptions, the result and validation texts, from ``@anthropic-ai/claude-code``
2.1.100 (``cli.js``, the ``NotebookEdit`` tool); the parameter descriptions are the same in
``@anthropic-ai/claude-agent-sdk`` 0.3.337 (``sdk-tools.d.ts``, ``NotebookEditInput``, Claude Code
2.1.337). dsh-fs's own texts carry their deviation ID (docs/DEVIATIONS.md F2–F5).
"""

from __future__ import annotations

__all__ = (
    "CELL_ID_DESCRIPTION",
    "CELL_TYPE_DESCRIPTION",
    "CELL_TYPE_REQUIRED",
    "DESCRIPTION",
    "EDIT_MODE_DESCRIPTION",
    "EDIT_MODE_INVALID",
    "NAME",
    "NEW_SOURCE_DESCRIPTION",
    "NOTEBOOK_PATH_DESCRIPTION",
    "NOT_FOUND",
    "NOT_JSON",
    "deleted",
    "inserted",
    "invalid_nbformat",
    "not_a_notebook",
    "updated",
)

NAME = "notebook_edit"
"""the tool's name here (Claude Code calls it ``NotebookEdit``; dsh-fs names tools in snake case)"""

DESCRIPTION = (
    "Completely replaces the contents of a specific cell in a Jupyter notebook (.ipynb file) with new source. "
    "Jupyter notebooks are interactive documents that combine code, text, and visualizations, commonly used for "
    "data analysis and scientific computing. The notebook_path parameter must be an absolute path, not a relative "
    "path. The cell_number is 0-indexed. Use edit_mode=insert to add a new cell at the index specified by "
    "cell_number. Use edit_mode=delete to delete the cell at the index specified by cell_number."
)
"""Claude Code's tool description (its ``prompt()``; it still names ``cell_number``, which its
schema replaced by ``cell_id``: copied as the model was trained on it)"""

NOTEBOOK_PATH_DESCRIPTION = "The absolute path to the Jupyter notebook file to edit (must be absolute, not relative)"
CELL_ID_DESCRIPTION = (
    "The ID of the cell to edit. When inserting a new cell, the new cell will be inserted after the cell with this "
    "ID, or at the beginning if not specified."
)
NEW_SOURCE_DESCRIPTION = "The new source for the cell"
CELL_TYPE_DESCRIPTION = (
    "The type of the cell (code or markdown). If not specified, it defaults to the current cell type. If using "
    "edit_mode=insert, this is required."
)
EDIT_MODE_DESCRIPTION = "The type of edit to make (replace, insert, delete). Defaults to replace."

EDIT_MODE_INVALID = "Edit mode must be replace, insert, or delete."
CELL_TYPE_REQUIRED = "Cell type is required when using edit_mode=insert."
NOT_FOUND = "Notebook file does not exist."
NOT_JSON = "Notebook is not valid JSON."

_NOT_A_NOTEBOOK = "File must be a Jupyter notebook (.ipynb file). For editing other file types, use the {tool} tool."


def not_a_notebook(own_tool_name: bool) -> str:
    """Claude Code's extension refusal; it names its ``FileEdit`` tool, which F2 (default
    profile) replaces by dsh-fs's ``edit``."""
    return _NOT_A_NOTEBOOK.format(tool="edit" if own_tool_name else "FileEdit")


def updated(cell: str, new_source: str) -> str:
    """The result of ``replace`` (Claude Code's)."""
    return f"Updated cell {cell} with {new_source}"


def inserted(cell: str, new_source: str) -> str:
    """The result of ``insert`` (Claude Code's; the new cell's name, F4)."""
    return f"Inserted cell {cell} with {new_source}"


def deleted(cell: str) -> str:
    """The result of ``delete`` (Claude Code's)."""
    return f"Deleted cell {cell}"


# -- dsh-fs only ----------------------------------------------------------------------------------

def invalid_nbformat(display: str, reason: str, *, already: bool) -> str:
    """F3: the edit is refused because the notebook would not be valid nbformat (Claude Code
    writes it regardless). ``already``: the notebook was not valid before the edit either."""
    if already:
        return (f'cannot edit "{display}": the notebook is not valid nbformat ({reason}); '
                "nothing was written (fix it with edit or write first)")
    return f'cannot edit "{display}": the edited notebook would not be valid nbformat ({reason}); nothing was written'
