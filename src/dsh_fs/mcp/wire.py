"""What goes on the MCP wire for our tools: listings and call results, as plain JSON dicts.

Pure: no SDK import, no I/O. ``server.py`` turns these dicts into SDK models.

* ``tools/list``: each entry is ``{name, description, inputSchema, annotations?}`` where
  ``name``/``description`` are the registry's and ``inputSchema`` is exactly
  ``ctx.tools.schemas()[i]["parameters"]`` (no titles added, nothing rewritten).
* ``instructions`` (the ``initialize`` answer): the tools' own prompt sections, and under a
  sandbox (D37, default profile) the ``sandbox:policy`` section naming its mode
  (``server_instructions``).
* ``tools/call``: the model sees only our content blocks (the ``Error: …`` text for a
  failure) and ``isError``. What is not for the model goes under ``_meta`` as
  ``{"dsh_fs": {"diffs": …, "error": {"name": …, "code": …}}}`` (each key only when present);
  never ``structuredContent``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from ..core.context import Context
from ..core.system_prompt import TOOL_SECTIONS
from ..core.tools import ToolResult
from ..fs.tool_switches import ToolSwitches

__all__ = ("META_KEY", "TOOL_ANNOTATIONS", "call_result", "offers_escalation", "server_instructions", "tool_entries")

META_KEY: Final = "dsh_fs"
"""our key inside a result's ``_meta``"""

SANDBOX_SECTION: Final = "sandbox:policy"
"""the reference's standing-policy section (``fs_sandbox.prompt``)"""


def server_instructions(ctx: Context) -> str | None:
    """The server's ``instructions``: the tools' prompt sections of ``ctx`` (no agent identity:
    that belongs to the client's agent), then (D37, default profile) the ``sandbox:policy``
    section when a sandbox is composed, so the model knows the mode before its first refusal;
    ``None`` when there is nothing."""
    tools = ctx.system_prompt.render(only=TOOL_SECTIONS)
    if ToolSwitches.of(ctx.profile).escalation_only_when_grantable:
        policy = ctx.system_prompt.render(only=SANDBOX_SECTION)
        tools = "\n\n".join(t for t in (tools, policy) if t)
    return tools or None


def offers_escalation(ctx: Context, client_can_be_asked: bool) -> bool:
    """Whether ``tools/list`` shows the escalation fields to a client: always in the reference
    profile; under D37 only when the client can be asked (it declared ``elicitation``) or
    the approval callback needs nobody at the client (a library's own)."""
    if not ToolSwitches.of(ctx.profile).escalation_only_when_grantable:
        return True
    approval = getattr(ctx.fs, "approval", None)
    return client_can_be_asked or (approval is not None and getattr(approval, "reachable", None) is None)


_MUTATION: Final[Mapping[str, bool]] = {
    "readOnlyHint": False,
    "destructiveHint": True,  # write overwrites; edit replaces text in place
    "idempotentHint": False,
    "openWorldHint": False,
}

_READ_ONLY: Final[Mapping[str, bool]] = {"readOnlyHint": True, "openWorldHint": False}

TOOL_ANNOTATIONS: Final[Mapping[str, Mapping[str, bool]]] = {
    "list": _READ_ONLY,  # docs/LIST.md
    "read": _READ_ONLY,
    "write": _MUTATION,
    "edit": _MUTATION,
    "glob": _READ_ONLY,
    "grep": _READ_ONLY,
    "read_image": _READ_ONLY,  # opt-in (docs/IMAGES.md)
    "apply_patch": _MUTATION,  # the editing faces (docs/EDITING-FACES.md): views and changes alike
    "str_replace_based_edit_tool": _MUTATION,
    "str_replace_editor": _MUTATION,
    "notebook_edit": _MUTATION,  # docs/NOTEBOOKS.md
    "read_pdf": _READ_ONLY,  # opt-in (docs/PDF.md)
}
"""MCP ``ToolAnnotations`` (wire names) per tool; a tool not listed here gets none"""


def tool_entries(schemas: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Wire ``Tool`` objects for ``schemas`` (``ctx.tools.schemas()``), in the same order.

    :param schemas: ``[{name, description, parameters}]`` as the registry returns them
    :return: ``[{name, description, inputSchema, annotations?}]``; ``inputSchema`` is the
        ``parameters`` object itself (not copied, not rewritten)
    """
    entries = []
    for schema in schemas:
        entry: dict[str, Any] = {
            "name": schema["name"],
            "description": schema["description"],
            "inputSchema": schema["parameters"],
        }
        hints = TOOL_ANNOTATIONS.get(schema["name"])
        if hints is not None:
            entry["annotations"] = dict(hints)
        entries.append(entry)
    return entries


def call_result(result: ToolResult) -> dict[str, Any]:
    """The wire ``CallToolResult`` for one registry result.

    A tool failure stays a result (``isError: true`` with our ``Error: …`` text), never a
    protocol error. ``_meta`` carries the diff metadata and the error ``{name, code}``.

    :param result: what ``ctx.tools.execute`` returned
    :return: ``{content, isError, _meta?}`` with camelCase wire keys
    """
    wire: dict[str, Any] = {"content": [dict(block) for block in result.content], "isError": result.is_error}
    ours: dict[str, Any] = {}
    if isinstance(result.meta, Mapping):
        ours.update(result.meta)
    elif result.meta is not None:
        ours["meta"] = result.meta
    if result.error is not None:
        ours["error"] = result.error.as_dict()
    if ours:
        wire["_meta"] = {META_KEY: ours}
    return wire
