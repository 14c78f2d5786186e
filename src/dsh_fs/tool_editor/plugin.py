"""The text-editor plugins (docs/design/EDITING-FACES-DESIGN.md §1.2, §1.3, §6.3).

* ``ToolTextEditor`` — Anthropic's ``str_replace_based_edit_tool`` (``text_editor_20250728``).
  The Anthropic adapter sends the built-in definition ``{"type": "text_editor_20250728",
  "name": "str_replace_based_edit_tool"[, "max_characters": N]}`` (``ToolDefinition.native``);
  other surfaces (MCP, OpenAI) get the JSON schema below, with dsh-fs descriptions (E12).
* ``ToolStrReplaceEditor`` — the reference's ``str_replace_editor`` (schema and description
  verbatim, ``max_output_chars`` = the reference's ``maxOutputChars``). In the ``default``
  profile, on a context that records a history (``create_context(history=…)``, loaded before
  the face), it also takes OpenHands' ``undo_edit`` (DEVIATIONS H10, docs/HISTORY.md): the enum,
  the ``command`` description and one description line are OpenHands'.

Both run on ``executor.Editor``. Neither is loaded by ``create_context()`` unless asked for
(``create_context(faces=[...])``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from ..core.context import Scope
from ..core.schema import Param
from ..core.tools import ToolDefinition
from ..tool_common.switches import ToolSwitches
from . import texts as t
from .executor import Editor, Face

__all__ = ("ToolStrReplaceEditor", "ToolTextEditor", "anthropic_params", "editor_present_call", "reference_description",
           "reference_params")

_COMMANDS = ("view", "create", "str_replace", "insert")
_UNDO_COMMANDS = (*_COMMANDS, "undo_edit")


_SHAPES: dict[str, dict[str, Any]] = {
    "command": {"type": "string", "required": True, "enum": _COMMANDS},
    "path": {"type": "string", "required": True},
    "file_text": {"type": "string"},
    "insert_line": {"type": "integer"},
    "insert_text": {"type": "string"},
    "new_str": {"type": "string"},
    "old_str": {"type": "string"},
    "view_range": {"type": "array", "items": Param(type="integer")},
}
"""each parameter's type, shared by the two faces (the names are Anthropic's and the reference's)"""


def _params(descriptions: Mapping[str, str]) -> dict[str, Param]:
    """Parameters in the order of ``descriptions`` (name → description)."""
    return {name: Param(**_SHAPES[name], description=text) for name, text in descriptions.items()}


def reference_params(*, undo: bool = False) -> dict[str, Param]:
    """The ``str_replace_editor`` parameters ([ref], verbatim, in its order).

    :param undo: with ``undo_edit`` (H10): the ``command`` enum and description are OpenHands'
    """
    params = _params(t.REF_PARAMETERS)
    if undo:
        params["command"] = Param(**{**_SHAPES["command"], "enum": _UNDO_COMMANDS},
                                  description=t.UNDO_COMMAND_DESCRIPTION)
    return params


def reference_description(*, undo: bool = False) -> str:
    """The ``str_replace_editor`` description ([ref]); with ``undo_edit`` (H10), OpenHands' line
    about it follows the ``<response clipped>`` line, where OpenHands' description has it."""
    if not undo:
        return t.REF_DESCRIPTION
    lines = t.REF_DESCRIPTION.split("\n")
    at = next(i for i, line in enumerate(lines) if "<response clipped>" in line) + 1
    return "\n".join([*lines[:at], t.UNDO_DESCRIPTION_LINE, *lines[at:]])


def anthropic_params() -> dict[str, Param]:
    """The ``str_replace_based_edit_tool`` parameters as a JSON schema for other surfaces (the
    Anthropic API has the schema built in; names and meanings from its documentation, E12)."""
    return _params(t.ANTHROPIC_PARAMETERS)


def editor_present_call(args: Any) -> dict[str, Any] | None:
    """The reference's ``presentEditorCall`` (UI card at call time); ``None`` for arguments that
    do not name a command and a path."""
    if not isinstance(args, Mapping) or not isinstance(args.get("path"), str) or args.get("command") not in _COMMANDS:
        return None  # undo_edit (H10) too: the reference's presenter has no card for it
    path, command = args["path"], args["command"]
    if command == "view":
        return {"card": "generic", "title": f"view {path}", "kind": "read", "locations": [{"path": path}]}
    if command in ("create", "str_replace"):
        old = None if command == "create" else args.get("old_str")
        new = args.get("file_text" if command == "create" else "new_str")
        return {"card": "diff", "title": f"{command} {path}",
                "diffs": [{"path": path, "oldText": old if isinstance(old, str) else None,
                           "newText": new if isinstance(new, str) else ""}],
                "locations": [{"path": path}]}
    location: dict[str, Any] = {"path": path}
    line = args.get("insert_line")
    if isinstance(line, (int, float)) and not isinstance(line, bool):
        location["line"] = max(1, int(line) + 1)
    return {"card": "generic", "title": f"insert {path}", "kind": "edit", "locations": [location]}


def _register(scope: Scope, *, face: Face, name: str, description: str, params: dict[str, Param],
              max_chars: int | None, native: Mapping[str, Mapping[str, Any]] | None) -> None:
    editor = Editor(scope.ctx, face=face, max_chars=max_chars)
    scope.effect(
        scope.tools.register(
            ToolDefinition(
                name=name,
                description=description,
                parameters=params,
                execute=editor.execute,
                is_concurrency_safe=lambda args: args.get("command") == "view",
                present_call=editor_present_call,
                native=native,
            )
        )
    )


def _positive(plugin: str, name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{plugin}: {name} must be a positive integer")
    return value


class ToolTextEditor:
    """``ctx.plugin(ToolTextEditor, max_characters=None)``: Anthropic's text editor.

    :param max_characters: the tool definition's ``max_characters`` (a ``view`` of a file is
        cut on a line boundary beyond it, E7); ``None``: whole files
    :raises ValueError: ``tool-text-editor: max_characters must be a positive integer``
    """

    name: ClassVar[str] = "tool-text-editor"
    inject: ClassVar[tuple[str, ...]] = ("fs", "tools")

    @classmethod
    def apply(cls, scope: Scope, /, max_characters: int | None = None) -> None:
        if max_characters is not None:
            _positive(cls.name, "max_characters", max_characters)
        native: dict[str, Any] = {"type": t.ANTHROPIC_TYPE, "name": t.ANTHROPIC_NAME}
        if max_characters is not None:
            native["max_characters"] = max_characters
        _register(scope, face="anthropic", name=t.ANTHROPIC_NAME, description=t.ANTHROPIC_DESCRIPTION,
                  params=anthropic_params(), max_chars=max_characters, native={"anthropic": native})


class ToolStrReplaceEditor:
    """``ctx.plugin(ToolStrReplaceEditor, max_output_chars=16000, description=None)``: the
    reference's ``str_replace_editor``.

    :param max_output_chars: views are clipped at this many UTF-16 units (``maxOutputChars``)
    :param description: the model-facing description (default: the reference's)
    :raises ValueError: ``tool-str-replace-editor: maxOutputChars must be a positive safe
        integer`` / ``description must be non-empty`` (the reference's load checks)
    """

    name: ClassVar[str] = "tool-str-replace-editor"
    inject: ClassVar[tuple[str, ...]] = ("fs", "tools")

    @classmethod
    def apply(cls, scope: Scope, /, max_output_chars: int = 16_000, description: str | None = None) -> None:
        if isinstance(max_output_chars, bool) or not isinstance(max_output_chars, int) or not (
            0 < max_output_chars <= 2**53 - 1
        ):
            raise ValueError("tool-str-replace-editor: maxOutputChars must be a positive safe integer")
        undo = ToolSwitches.of(scope.ctx.profile).undo_edit and scope.ctx.has("history")  # H10
        text = reference_description(undo=undo) if description is None else description
        if not text.strip():
            raise ValueError("tool-str-replace-editor: description must be non-empty")
        _register(scope, face="reference", name=t.REF_NAME, description=text, params=reference_params(undo=undo),
                  max_chars=max_output_chars, native=None)
