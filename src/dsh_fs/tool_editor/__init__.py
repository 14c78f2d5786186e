"""The text-editor faces (docs/EDITING-FACES.md §3): Anthropic's ``str_replace_based_edit_tool``
(``text_editor_20250728``) and the reference's ``str_replace_editor``, over the same seam, policy
events and locks as ``read``/``write``/``edit``.

This package holds the faces' pure parts: the texts (``texts``), ``view`` rendering (``view``),
``insert`` (``insert``) and the reference's ``str_replace`` matching (``replace``). The plugin
registering the tools comes with the providers' ``delete``/``rename`` primitives (phase 2).
"""

__all__ = ()
