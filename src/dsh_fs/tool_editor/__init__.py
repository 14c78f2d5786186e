"""The text-editor faces (docs/design/EDITING-FACES-DESIGN.md §3): Anthropic's ``str_replace_based_edit_tool``
(``text_editor_20250728``) and the reference's ``str_replace_editor``, over the same seam, policy
events and locks as ``read``/``write``/``edit``.

| module | owns |
|---|---|
| ``plugin`` | ``ToolTextEditor`` (Anthropic), ``ToolStrReplaceEditor`` (reference): schemas, registration |
| ``executor`` | ``Editor``: ``view``/``create``/``str_replace``/``insert`` through the seam and the ``fs/*`` events |
| ``texts`` | every model-facing text, with its source |
| ``view``, ``insert``, ``replace`` | pure: view rendering, line insertion, the reference's raw matching |
| ``lines`` | pure: the lines a ``view`` keeps of a text fed in chunks (``LineCollector``) |
| ``undo`` | ``undo_edit`` (H10, on the history): which step it takes back, OpenHands' answer text |
"""

from .plugin import ToolStrReplaceEditor as ToolStrReplaceEditor, ToolTextEditor as ToolTextEditor

__all__ = ("ToolStrReplaceEditor", "ToolTextEditor")
