"""The ``notebook_edit`` face (docs/NOTEBOOKS.md): Claude Code's ``NotebookEdit`` — its
arguments, description and texts — on dsh-fs's provider, policy, locks and atomic writes.

Opt-in, as every face: ``create_context(faces=["notebook_edit"])``, ``dsh-fs mcp --tools
read,notebook_edit``. Needs ``nbformat`` (the ``notebooks`` extra) to validate what it writes.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ..core.context import Scope
from ..core.schema import Param
from ..core.tools import ToolDefinition
from ..notebook import NOTEBOOK_MAX_BYTES
from ..tool_fs.shared import positive_integer
from . import texts as t
from .executor import NotebookEditor

__all__ = ("ToolNotebookEdit", "notebook_edit_params", "require_nbformat")


def require_nbformat() -> None:
    """:raises ImportError: nbformat is missing, with the extra to install"""
    try:
        import nbformat  # noqa: F401
    except ImportError:
        raise ImportError("notebook_edit needs nbformat: pip install '.[notebooks]' from the dsh-fs checkout") from None


def notebook_edit_params() -> dict[str, Param]:
    """Claude Code's ``NotebookEdit`` parameters, in its order, with its descriptions."""
    return {
        "notebook_path": Param(type="string", required=True, description=t.NOTEBOOK_PATH_DESCRIPTION),
        "cell_id": Param(type="string", description=t.CELL_ID_DESCRIPTION),
        "new_source": Param(type="string", required=True, description=t.NEW_SOURCE_DESCRIPTION),
        "cell_type": Param(type="string", enum=("code", "markdown"), description=t.CELL_TYPE_DESCRIPTION),
        "edit_mode": Param(type="string", enum=("replace", "insert", "delete"), description=t.EDIT_MODE_DESCRIPTION),
    }


def _present_call(args: dict[str, Any]) -> dict[str, Any]:
    """A UI card at call time: an edit of the notebook."""
    path = args.get("notebook_path")
    mode = args.get("edit_mode", "replace")
    return {"card": "generic", "title": f"{mode} cell of {path}", "kind": "edit", "locations": [{"path": path}]}


class ToolNotebookEdit:
    """``ctx.plugin(ToolNotebookEdit, notebook_max_bytes=NOTEBOOK_MAX_BYTES)``.

    :param notebook_max_bytes: notebooks of more bytes are refused before they are read
    :raises ImportError: nbformat is not installed (the ``notebooks`` extra)
    :raises ValueError: ``tool-notebook-edit: notebook_max_bytes must be a positive integer``
    """

    name: ClassVar[str] = "tool-notebook-edit"
    inject: ClassVar[tuple[str, ...]] = ("fs", "tools")

    @classmethod
    def apply(cls, scope: Scope, /, notebook_max_bytes: int = NOTEBOOK_MAX_BYTES) -> None:
        limit = positive_integer("notebook_max_bytes", notebook_max_bytes, plugin=cls.name)
        require_nbformat()
        scope.effect(
            scope.tools.register(
                ToolDefinition(
                    name=t.NAME,
                    description=t.DESCRIPTION,
                    parameters=notebook_edit_params(),
                    execute=NotebookEditor(scope.ctx, max_bytes=limit),
                    present_call=_present_call,
                )
            )
        )
