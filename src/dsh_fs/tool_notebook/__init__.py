"""``notebook_edit``: Claude Code's ``NotebookEdit`` as an editing face (docs/NOTEBOOKS.md).

``texts`` (every model-facing string, Claude Code's and the deviations'), ``executor`` (one call
under the policy, the file's lock and a guarded atomic write), ``plugin``. The notebook logic
itself is pure, in ``dsh_fs.notebook``.
"""

from .plugin import ToolNotebookEdit as ToolNotebookEdit

__all__ = ("ToolNotebookEdit",)
