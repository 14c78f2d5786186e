"""Jupyter notebooks as the notebook tools see them (docs/NOTEBOOKS.md): ``document`` (parse the
file's JSON, name and find cells), ``view`` (the cell view ``read`` shows, DEVIATIONS F1) and
``cells`` (Claude Code's ``NotebookEdit`` operations on a parsed notebook, and the text that
writes it back). Pure: no I/O, no kernel imports; ``tool_fs`` (the view) and ``tool_notebook``
(the ``notebook_edit`` face) read and write through the provider seam.
"""

from ..fs.media import extension_of
from .document import NotNotebook as NotNotebook, parse as parse
from .view import NotebookView as NotebookView, ViewLimits as ViewLimits, render as render

__all__ = ("NOTEBOOK_MAX_BYTES", "NotNotebook", "NotebookView", "ViewLimits", "is_notebook_path", "parse", "render")

NOTEBOOK_MAX_BYTES = 32 * 1024 * 1024
"""default size limit (bytes) of a notebook ``read`` shows as cells and ``notebook_edit`` changes:
a bigger one is shown as its JSON text and refused by ``notebook_edit`` (parsing holds the whole
document, several times the file's size, in memory)"""


def is_notebook_path(path: str) -> bool:
    """Does ``path`` name a Jupyter notebook (extension ``.ipynb``, any case)?"""
    return extension_of(path).lower() == ".ipynb"
