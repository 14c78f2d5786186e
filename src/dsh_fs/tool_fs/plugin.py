"""The ``tool-fs`` plugin: registers ``read``, ``write``, ``edit`` and their prompt sections
(REFERENCE-SPEC §4.1–§4.3). Stays pending until ``fs``, ``tools`` and ``system_prompt`` exist.

The ``write``/``edit`` sections describe the deployment they run in (DEVIATIONS D14, default
profile): they say "(the default fs-policy requires it)" only while a policy decides that
tool's intent event (``fs/write-intent``, ``fs/edit-intent``: the policy's seam, so no import
of ``fs_policy``); decided when the prompt is rendered, so the policy may be loaded before or
after this plugin. The ``reference`` profile keeps the spec's texts verbatim.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from ..core.context import Context, Scope
from ..core.profile import Profile
from ..core.schema import Param
from ..core.tools import ToolDefinition
from ..fs.events import FS_EDIT_INTENT, FS_OBSERVED, FS_WRITE_INTENT
from ..tool_common.switches import ToolSwitches
from ..fs_sandbox.tools import with_escalation
from . import presenters
from .config import ToolFsConfig
from .executor import FsTools
from .list_tool import add_roots_section
from .seen import SeenTexts
from .stale_changes import SERVICE as SEEN_SERVICE

__all__ = (
    "COLUMN_DESCRIPTION",
    "EDIT_PROMPT",
    "EDIT_PROMPT_UNGUARDED",
    "READ_PROMPT",
    "ToolFs",
    "WRITE_PROMPT",
    "WRITE_PROMPT_UNGUARDED",
    "edit_params",
    "read_params",
    "write_params",
)

READ_PROMPT = (
    "Use the read tool — not shell commands like cat — to inspect text files. Results include line numbers. "
    "Use offset and limit to continue reading large files."
)
WRITE_PROMPT = (
    "Use the write tool to create files or completely replace file contents. Existing files are overwritten, "
    "so read an existing file first (the default fs-policy requires it) and prefer edit for targeted changes."
)
EDIT_PROMPT = (
    "Use the edit tool for targeted changes to existing UTF-8 text files. It replaces literal old_string with "
    "new_string; by default old_string must appear exactly once. If old_string appears multiple times, provide "
    "a more specific old_string or set replace_all to true. Read the file first (the default fs-policy requires "
    "it), unless you just created or edited it in this session."
)
WRITE_PROMPT_UNGUARDED = (
    "Use the write tool to create files or completely replace file contents. Existing files are overwritten, "
    "so read an existing file first and prefer edit for targeted changes."
)
"""D14: ``WRITE_PROMPT`` for a deployment without a policy (nothing requires the read)"""
EDIT_PROMPT_UNGUARDED = (
    "Use the edit tool for targeted changes to existing UTF-8 text files. It replaces literal old_string with "
    "new_string; by default old_string must appear exactly once. If old_string appears multiple times, provide "
    "a more specific old_string or set replace_all to true. Read the file first, unless you just created or "
    "edited it in this session."
)
"""D14: ``EDIT_PROMPT`` for a deployment without a policy"""


def _guarded_section(ctx: Context, profile: Profile, event: str, guarded: str, unguarded: str) -> str | Callable[[], str]:
    """A prompt section that tells the truth about the read-first rule (DEVIATIONS D14).

    :param event: the intent event whose decider makes reading first a requirement
    :param guarded: the spec's text, naming the policy's requirement
    :param unguarded: the same advice without claiming a requirement
    :return: ``guarded`` itself in the ``reference`` profile; otherwise a function that picks
        the text when the prompt is rendered
    """
    if not ToolSwitches.of(profile).prompt_fits_deployment:
        return guarded
    return lambda: guarded if ctx.listeners(event) else unguarded


COLUMN_DESCRIPTION = (
    "1-based first character of the first line to return. A line shown cut with "
    "\"... (line truncated to N chars)\" goes on at column + N. Defaults to 1."
)
"""D35: the ``column`` parameter of ``read`` (default profile)"""


def read_params(read_limit: int, *, column: bool = False) -> dict[str, Param]:
    """The ``read`` parameters (§4.3); ``read_limit`` is named in the ``limit`` description.

    :param column: D35: add ``column`` (the first character of line ``offset`` to show)
    """
    params = {
        "file_path": Param(type="string", required=True, description="Path to read, resolved by the filesystem backend."),
        "offset": Param(type="number", description="1-based first line to return. Defaults to 1."),
        "limit": Param(type="number", description=f"Maximum number of lines to return. Defaults to {read_limit}."),
    }
    if column:
        params["column"] = Param(type="number", description=COLUMN_DESCRIPTION)
    return params


def write_params() -> dict[str, Param]:
    """The ``write`` parameters (§4.3)."""
    return {
        "file_path": Param(type="string", required=True, description="Path to write, resolved by the filesystem backend."),
        "content": Param(type="string", required=True, description="Full UTF-8 text content to write."),
    }


def edit_params() -> dict[str, Param]:
    """The ``edit`` parameters (§4.3)."""
    return {
        "file_path": Param(type="string", required=True, description="Path to edit, resolved by the filesystem backend."),
        "old_string": Param(type="string", required=True, description="Literal text to replace. Must match exactly."),
        "new_string": Param(
            type="string", required=True, description="Literal replacement text. Use an empty string to delete the match."
        ),
        "replace_all": Param(
            type="boolean",
            description="Replace all matches. Defaults to false; when false, old_string must appear exactly once.",
        ),
    }


class ToolFs:
    """``ctx.plugin(ToolFs, read_limit=2000, read_max_line_length=2000, read_max_bytes=51200,
    read_stream_min_size=10485760)``; the profile comes from the context.

    :raises ValueError: ``tool-fs: <name> must be a positive integer`` at load
    """

    name: ClassVar[str] = "tool-fs"
    inject: ClassVar[tuple[str, ...]] = ("fs", "tools", "system_prompt")

    @classmethod
    def apply(cls, scope: Scope, /, **config: Any) -> None:
        settings = ToolFsConfig(profile=scope.profile, **config)
        tools = FsTools(scope.ctx, settings)
        if ToolSwitches.of(settings.profile).stale_diffs and not scope.ctx.has(SEEN_SERVICE):  # D30
            seen = tools.seen = SeenTexts()
            scope.provide(SEEN_SERVICE, seen)
            scope.on(FS_OBSERVED, seen.listener)
        registry = scope.tools
        prompt = scope.system_prompt
        rp = read_params(settings.read_limit, column=ToolSwitches.of(settings.profile).read_on_in_long_lines)
        # under a sandbox the mutating tools take the escalation fields (docs/SANDBOX.md)
        wp = with_escalation(write_params(), scope.fs, scope.profile)
        ep = with_escalation(edit_params(), scope.fs, scope.profile)
        scope.effect(prompt.add("tool:read", READ_PROMPT, order=100))
        add_roots_section(scope)  # D36
        scope.effect(
            registry.register(
                ToolDefinition(
                    name="read",
                    description="Read a UTF-8 text file and return line-numbered content.",
                    parameters=rp,
                    execute=tools.read,
                    is_concurrency_safe=lambda args: True,
                    present_call=lambda args: presenters.read_present_call(args, rp),
                )
            )
        )
        write_prompt = _guarded_section(scope.ctx, settings.profile, FS_WRITE_INTENT, WRITE_PROMPT, WRITE_PROMPT_UNGUARDED)
        scope.effect(prompt.add("tool:write", write_prompt, order=101))
        scope.effect(
            registry.register(
                ToolDefinition(
                    name="write",
                    description="Create or fully replace a UTF-8 text file.",
                    parameters=wp,
                    execute=tools.write,
                    present_call=lambda args: presenters.write_present_call(args, wp),
                    present_result=lambda args, result: presenters.write_present_result(args, result, wp),
                )
            )
        )
        edit_prompt = _guarded_section(scope.ctx, settings.profile, FS_EDIT_INTENT, EDIT_PROMPT, EDIT_PROMPT_UNGUARDED)
        scope.effect(prompt.add("tool:edit", edit_prompt, order=102))
        scope.effect(
            registry.register(
                ToolDefinition(
                    name="edit",
                    description="Edit an existing UTF-8 text file by replacing literal text.",
                    parameters=ep,
                    execute=tools.edit,
                    present_call=lambda args: presenters.edit_present_call(args, ep),
                    present_result=lambda args, result: presenters.edit_present_result(args, result, ep),
                )
            )
        )
