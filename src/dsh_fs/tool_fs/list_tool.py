"""The ``list`` tool: one directory level through the seam's ``iter_dir`` (``list_dir``'s entries
in batches; only what can reach the page is kept, under the listing places of L5:
``listing``), directories first (plugin ``tool-fs-list``; docs/LIST.md).

Follows the reference's ``packages/fs/tool-fs/src/list.ts`` (toninfo/deepseek-harness at
commit 99a6be8e0208f061c22366f331e97e561ab9ef76): schema, description, prompt section
(``tool:list``, order 99), validation, the out-of-range error and the result text are its own,
byte-exact in the ``reference`` profile. There the tool is part of ``tool-fs``; here it is a
plugin of its own, so the ``reference`` profile's default tool set stays the seed's
(``create_context`` loads it in the ``default`` profile, DEVIATIONS L1).

No stat first (the seam answers absence and a non-directory itself), no observation recorded
(seeing a name is not reading a file), concurrency-safe. The default profile's additions are
``ToolSwitches`` fields ``list_sizes`` (L2), ``list_escape_hidden`` (L3) and, in ``read``,
``read_directory_hint`` (L4); ``list_served`` (L1) decides ``create_context``'s default.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ..core.context import Context, Scope
from ..core.jsonvalue import js_number_str
from ..core.schema import Param, validate
from ..core.session import ToolExecution
from ..core.tools import ToolDefinition, ToolOutput, text_block
from ..fs.errors import FsError, FsErrorCode
from ..fs.paths import is_blank
from ..tool_common.switches import ToolSwitches
from ..core.errors import ToolInputError
from .args import check_positive_integer
from .shared import positive_integer
from .list_render import LIST_MAX_ENTRIES, PageSelector, format_list_output
from .listing import held, scan

__all__ = ("LIST_PROMPT", "ROOTS_SECTION_ORDER", "ToolFsList", "add_roots_section", "allowed_directories",
           "directory_hint", "list_description", "list_params", "list_present_call")

LIST_PROMPT = (
    "Use the list tool — not shell ls — to see what a directory contains. It returns the direct children of one "
    "directory, files and subdirectories alike, and defaults to the session workspace, so it is the first step for "
    "orienting in an unfamiliar project. When a result is capped, continue with the offset named in its footer."
)


def list_description(max_entries: int) -> str:
    """The ``list`` description; ``max_entries`` is ``listMaxEntries``."""
    return (
        "List the direct children of one directory, with their type. Entries are directories first, then files, "
        f"each alphabetical; up to {max_entries} are returned from the requested offset, and the footer gives the "
        "complete count plus a next offset when more remain. It includes subdirectories and is the tool for seeing "
        "one directory's contents."
    )


def list_params() -> dict[str, Param]:
    """The ``list`` parameters (``path``, ``offset``; both optional)."""
    return {
        "path": Param(
            type="string",
            description="Directory to list. Defaults to the session workspace; a relative path resolves against it.",
        ),
        "offset": Param(type="number", description="1-based first entry to return. Defaults to 1; use the footer value to continue."),
    }


def directory_hint(display_path: str) -> str:
    """DEVIATIONS L4: the second line of ``read``'s ``not a regular file`` for a directory."""
    return f'Hint: "{display_path}" is a directory; use list to see its entries.'


def list_present_call(args: Any) -> dict[str, Any] | None:
    """``{card: "generic", title: "List <path>[ (from entry <offset>)]", kind: "read",
    locations: [{path}]}``; ``None`` for arguments that fail the schema."""
    if not isinstance(args, dict) or validate(args, list_params()):
        return None
    path = args.get("path", ".")
    window = f" (from entry {js_number_str(args['offset'])})" if args.get("offset") is not None else ""
    return {"card": "generic", "title": f"List {path}{window}", "kind": "read", "locations": [{"path": path}]}


class ListExecutor:
    """The ``list`` executor bound to one context."""

    def __init__(self, ctx: Context, max_entries: int, switches: ToolSwitches) -> None:
        self.ctx = ctx
        self.max_entries = max_entries
        self.switches = switches

    async def __call__(self, args: dict[str, Any], execution: ToolExecution) -> ToolOutput:
        """One page of the directory ``path`` (default ``.``) from ``offset`` (default 1).

        :raises ToolInputError: ``path must be a non-empty string when given``,
            ``offset must be a positive integer``
        :raises FsError: the provider's ``list_dir`` errors (FS_NOT_FOUND ``cannot list "<p>":
            not found``, FS_NOT_DIRECTORY, …); FS_NOT_FOUND ``offset <n> is out of range for
            "<p>" (<k> entries)``
        """
        path = args.get("path")
        if path is not None and is_blank(path):
            raise ToolInputError("path must be a non-empty string when given")
        offset = check_positive_integer("offset", args["offset"]) if "offset" in args else 1
        fs = self.ctx.fs
        target = await fs.resolve("." if path is None else path, cwd=execution.cwd, signal=execution.signal)
        selector = PageSelector(offset, self.max_entries)  # only what can reach the page is kept
        async with held(self.ctx, execution):  # L5: listings at once
            await scan(fs, target, selector.add, signal=execution.signal)
        total = selector.total
        if offset > total and not (not total and offset == 1):
            raise FsError(
                f'offset {offset} is out of range for "{target.display_path}" ({total} entries)',
                FsErrorCode.NOT_FOUND,
            )
        page = selector.page(target.display_path)
        text = format_list_output(page, sizes=self.switches.list_sizes, escape_hidden=self.switches.list_escape_hidden)
        shown = allowed_directories(fs) if path is None else ""
        if shown:  # D36: several roots; the listing of the session workspace names them all
            text = text.removesuffix(_END) + "\n" + shown + _END
        return ToolOutput(content=[text_block(text)], meta=page.as_dict())


_END = "\n</content>"


def allowed_directories(fs: Any) -> str:
    """D36: ``Allowed directories:`` and then each of ``fs``'s roots on its own line, the MCP
    reference filesystem server's ``list_allowed_directories`` answer
    (``modelcontextprotocol/servers`` ``src/filesystem/index.ts`` at 2e8143dd1b82), when the
    provider has more than one root (``FileSystem.workspace_roots``); ``""`` otherwise."""
    roots = fs.workspace_roots() if fs is not None else ()
    return "Allowed directories:\n" + "\n".join(roots) if len(roots) > 1 else ""


def add_roots_section(scope: Scope) -> None:
    """D36: the ``tool:roots`` prompt section (order 98), ``allowed_directories`` of the
    deployment's provider when the prompt is rendered; added only to a deployment whose
    provider has several roots (so no other deployment's section list changes)."""
    fs = scope.fs
    if len(fs.workspace_roots()) > 1:
        ctx = scope.ctx
        scope.effect(scope.system_prompt.add("tool:roots", lambda: allowed_directories(ctx.fs),
                                             order=ROOTS_SECTION_ORDER))


ROOTS_SECTION_ORDER = 98
"""before ``list``'s section (99): where the model learns which directories it may use"""


class ToolFsList:
    """``ctx.plugin(ToolFsList, list_max_entries=200)``; the profile comes from the context.

    :raises ValueError: ``tool-fs: listMaxEntries must be a positive integer`` at load
    """

    name: ClassVar[str] = "tool-fs-list"
    inject: ClassVar[tuple[str, ...]] = ("fs", "tools", "system_prompt")

    @classmethod
    def apply(cls, scope: Scope, /, *, list_max_entries: int = LIST_MAX_ENTRIES) -> None:
        max_entries = positive_integer("listMaxEntries", list_max_entries)
        switches = ToolSwitches.of(scope.profile)
        scope.effect(scope.system_prompt.add("tool:list", LIST_PROMPT, order=99))
        add_roots_section(scope)
        scope.effect(
            scope.tools.register(
                ToolDefinition(
                    name="list",
                    description=list_description(max_entries),
                    parameters=list_params(),
                    execute=ListExecutor(scope.ctx, max_entries, switches),
                    is_concurrency_safe=lambda args: True,
                    present_call=list_present_call,
                )
            )
        )
