"""Value checks of ``glob``/``grep`` arguments that the schema cannot express (REFERENCE-SPEC
§6.1, §6.2). Pure. Plain errors (``ToolInputError``): the registry reports them without a code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..fs.paths import is_blank
from ..core.errors import ToolInputError

__all__ = ("GlobInput", "GrepInput", "check_include", "parse_glob_args", "parse_grep_args")


@dataclass(frozen=True, slots=True, kw_only=True)
class GlobInput:
    """Accepted ``glob`` arguments."""

    pattern: str
    path: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class GrepInput:
    """Accepted ``grep`` arguments."""

    pattern: str
    path: str | None = None
    include: str | None = None


def _check_path(args: dict[str, Any]) -> str | None:
    path = args.get("path")
    if path is not None and is_blank(path):
        raise ToolInputError("path must be a non-empty string when given")
    return path


def parse_glob_args(args: dict[str, Any]) -> GlobInput:
    """A non-blank ``pattern`` (JS ``trim``) and a non-blank ``path`` when given.

    :raises ToolInputError: ``pattern must be a non-empty string``,
        ``path must be a non-empty string when given``
    """
    if is_blank(args["pattern"]):
        raise ToolInputError("pattern must be a non-empty string")
    return GlobInput(pattern=args["pattern"], path=_check_path(args))


def check_include(include: str) -> None:
    """``include`` must be ONE positive glob: not blank, not negated, no comma outside braces
    (``*.{ts,tsx}`` is one glob).

    :raises ToolInputError: with the §6.2 texts
    """
    if is_blank(include):
        raise ToolInputError("include must be a non-empty glob when given")
    if include.startswith("!"):
        raise ToolInputError('include must be a positive glob filter; negated patterns ("!…") are not supported')
    depth = 0
    for ch in include:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth = max(0, depth - 1)
        elif ch == "," and depth == 0:
            raise ToolInputError("include must be one glob, not a comma-separated list (use {a,b} alternation instead)")


def parse_grep_args(args: dict[str, Any]) -> GrepInput:
    """A non-EMPTY ``pattern`` (whitespace is a regex), a non-blank ``path`` and one positive
    ``include`` glob when given, checked in that order.

    :raises ToolInputError: with the §6.2 texts
    """
    if args["pattern"] == "":
        raise ToolInputError("pattern must be a non-empty string")
    path = _check_path(args)
    include = args.get("include")
    if include is not None:
        check_include(include)
    return GrepInput(pattern=args["pattern"], path=path, include=include)
