"""The ``tool-fs-search`` plugin: registers ``glob`` and ``grep`` and their prompt sections
(REFERENCE-SPEC §6). Stays pending until ``fs``, ``tools`` and ``system_prompt`` exist.

The reference injects ``bash`` (its executor seam) and not ``fs``; here ripgrep runs as our
own subprocess, so the plugin injects ``fs`` (paths resolve and are contained there, and
providers without host paths are mirrored through it). ``spill_store`` is optional and read
at call time.
"""

from __future__ import annotations

import functools
from typing import Any, ClassVar

from ..core.context import Scope
from ..core.schema import Param
from ..core.tools import ToolDefinition
from . import presenters
from .config import ToolFsSearchConfig
from .glob import GlobSearch
from .grep import GrepSearch

__all__ = ("GLOB_PROMPT", "GREP_PROMPT", "ToolFsSearch", "glob_description", "glob_params", "grep_description",
           "grep_params")

GLOB_PROMPT = (
    "Use the glob tool — not shell find or ls — to discover files by path pattern. Results are sorted by "
    "modification time and include hidden and ignored files."
)
GREP_PROMPT = (
    "Use the grep tool — not shell grep or rg — to search file contents. Use read on a matched file when you need "
    "surrounding context."
)


def glob_description(max_results: int) -> str:
    """The ``glob`` description (§6.1); ``max_results`` is ``globMaxResults``."""
    return (
        "Find files whose paths match a glob pattern. Returns matching paths sorted by modification time, "
        "including hidden and ignored files (VCS metadata directories are excluded). "
        f"Returns the first {max_results} paths inline; a capped result reports where the complete list was saved."
    )


def grep_description(max_matches: int) -> str:
    """The ``grep`` description (§6.2); ``max_matches`` is ``grepMaxMatches``."""
    return (
        "Search file contents with a ripgrep regular expression. Returns matching lines with line numbers, grouped by "
        f"file. Returns the first {max_matches} matches inline; a capped result reports where the complete match list "
        "was saved. Use read on a matched file for surrounding context."
    )


def glob_params() -> dict[str, Param]:
    """The ``glob`` parameters (§6.1)."""
    return {
        "pattern": Param(type="string", required=True,
                         description='Glob pattern to match file paths against (e.g. "**/*.ts", "src/**/*.test.js").'),
        "path": Param(type="string", description=(
            "Directory to search in. Defaults to the session workspace; a relative path resolves against it.")),
    }


def grep_params() -> dict[str, Param]:
    """The ``grep`` parameters (§6.2)."""
    return {
        "pattern": Param(type="string", required=True, description="Regular expression to search for (ripgrep syntax)."),
        "path": Param(type="string", description=(
            "File or directory to search. Defaults to the session workspace; a relative path resolves against it.")),
        "include": Param(type="string", description=(
            'One glob filter for which files to search (e.g. "*.ts", "*.{js,jsx}"). Not a list; negation is not '
            "supported.")),
    }



class SearchTools(GlobSearch, GrepSearch):
    """The two tools bound to one context and configuration: one ``SearchCore`` (its D23
    slots and S8 directory cache are the two tools' together)."""


class ToolFsSearch:
    """``ctx.plugin(ToolFsSearch, glob_max_results=100, grep_max_matches=250,
    grep_max_line_bytes=2000, raw_output_max_bytes=20000000, timeout_ms=30000,
    mirror_batch_bytes=67108864, rg_path=None)``; the profile comes from the context.

    :param rg_path: the ripgrep program to run (default: the ripgrep wheel's, else ``rg`` on
        ``PATH``; without either, each call fails ``SEARCH_FAILED`` naming the install step)
    :raises ValueError: ``tool-fs-search: <name> must be a positive integer`` at load
    """

    name: ClassVar[str] = "tool-fs-search"
    inject: ClassVar[tuple[str, ...]] = ("fs", "tools", "system_prompt")

    @classmethod
    def apply(cls, scope: Scope, /, rg_path: str | None = None, **config: Any) -> None:
        settings = ToolFsSearchConfig(profile=scope.profile, **config)
        tools = SearchTools(scope.ctx, settings, rg_path=rg_path)
        faces = (
            ("glob", GLOB_PROMPT, 103, glob_description(settings.glob_max_results), glob_params(), tools.glob,
             presenters.glob_present_call),
            ("grep", GREP_PROMPT, 104, grep_description(settings.grep_max_matches), grep_params(), tools.grep,
             presenters.grep_present_call),
        )
        for name, prompt, order, description, params, execute, present in faces:
            scope.effect(scope.system_prompt.add(f"tool:{name}", prompt, order=order))
            scope.effect(scope.tools.register(ToolDefinition(
                name=name,
                description=description,
                parameters=params,
                execute=execute,
                is_concurrency_safe=lambda args: True,
                present_call=functools.partial(present, params=params),
                timeout_ms=settings.timeout_ms,
            )))
