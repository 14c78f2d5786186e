"""The optional editing faces, by the name of the tool each adds (docs/EDITING-FACES.md).

``create_context(faces=[...])``, ``dsh-fs mcp --tools …`` and ``dsh-fs schema --tools …`` load
them by tool name; ``ctx.plugin(ToolPatch)`` etc. does the same explicitly (with options).
They are not loaded by default: each adds a tool a model would see beside ``read``/``write``/
``edit``, and a deployment usually offers the one its model was trained on.

| tool name | plugin | for |
|---|---|---|
| ``apply_patch`` | ``dsh_fs.tool_patch.ToolPatch`` | OpenAI models (Codex patch format; the Responses built-in) |
| ``str_replace_based_edit_tool`` | ``dsh_fs.tool_editor.ToolTextEditor`` | Claude (Anthropic's text editor) |
| ``str_replace_editor`` | ``dsh_fs.tool_editor.ToolStrReplaceEditor`` | SWE-agent/OpenHands-style agents (the reference's) |
| ``notebook_edit`` | ``dsh_fs.tool_notebook.ToolNotebookEdit`` | Claude (Claude Code's ``NotebookEdit``: Jupyter cells, docs/NOTEBOOKS.md) |
"""

from __future__ import annotations

from collections.abc import Iterable

from .core.context import Context

__all__ = ("FACE_TOOLS", "load_faces")

FACE_TOOLS = ("apply_patch", "str_replace_based_edit_tool", "str_replace_editor", "notebook_edit")
"""the tool names of the optional faces"""


def load_faces(ctx: Context, names: Iterable[str]) -> list[str]:
    """Load the plugins of the faces ``names`` (tool names of ``FACE_TOOLS``) into ``ctx``.

    :return: the names loaded, in ``FACE_TOOLS`` order (duplicates once)
    :raises ValueError: ``unknown face "<name>"; expected one of …``
    :raises ImportError: ``notebook_edit`` without nbformat (the ``notebooks`` extra)
    """
    from .tool_editor import ToolStrReplaceEditor, ToolTextEditor
    from .tool_notebook import ToolNotebookEdit
    from .tool_patch import ToolPatch

    plugins = {"apply_patch": ToolPatch, "str_replace_based_edit_tool": ToolTextEditor,
               "str_replace_editor": ToolStrReplaceEditor, "notebook_edit": ToolNotebookEdit}
    wanted = set(names)
    for name in sorted(wanted):
        if name not in plugins:
            raise ValueError(f'unknown face "{name}"; expected one of {", ".join(FACE_TOOLS)}')
    chosen = [name for name in FACE_TOOLS if name in wanted]
    for name in chosen:
        ctx.plugin(plugins[name])
    return chosen
