"""UI presenters of ``glob``/``grep`` (REFERENCE-SPEC §6.1, §6.2). Pure; never raise: arguments
that fail the schema give ``None`` (the generic fallback)."""

from __future__ import annotations

from typing import Any

from ..core.schema import Param, validate

__all__ = ("glob_present_call", "grep_present_call")


def glob_present_call(args: Any, params: dict[str, Param]) -> dict[str, Any] | None:
    """``{card: "generic", title: "Glob <pattern>[ in <path>]", kind: "search", rawInput}``."""
    if not isinstance(args, dict) or validate(args, params):
        return None
    where = f" in {args['path']}" if "path" in args else ""
    return {"card": "generic", "title": f"Glob {args['pattern']}{where}", "kind": "search", "rawInput": args["pattern"]}


def grep_present_call(args: Any, params: dict[str, Param]) -> dict[str, Any] | None:
    """``{card: "generic", title: "Grep <pattern>[ in <path>][ (<include>)]", kind: "search", rawInput}``."""
    if not isinstance(args, dict) or validate(args, params):
        return None
    where = f" in {args['path']}" if "path" in args else ""
    only = f" ({args['include']})" if "include" in args else ""
    return {
        "card": "generic",
        "title": f"Grep {args['pattern']}{where}{only}",
        "kind": "search",
        "rawInput": args["pattern"],
    }
