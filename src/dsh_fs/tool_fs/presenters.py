"""UI presenters of the fs tools (REFERENCE-SPEC §4.6.7, §4.7, §4.8). Pure; never raise.

They soft-validate: arguments that fail the schema give ``None`` (generic fallback).
"""

from __future__ import annotations

from typing import Any

from ..core.jsonvalue import js_number_str
from ..core.schema import Param, validate
from ..core.tools import ToolResult
from .diff import diffs_from_meta

__all__ = ("edit_present_call", "edit_present_result", "read_present_call", "write_present_call", "write_present_result")


def _valid(args: Any, params: dict[str, Param]) -> bool:
    return isinstance(args, dict) and not validate(args, params)


def read_present_call(args: Any, params: dict[str, Param]) -> dict[str, Any] | None:
    """``{card: "generic", title: "Read <path><window>", kind: "read", locations}``."""
    if not _valid(args, params):
        return None
    path = args["file_path"]
    offset = args.get("offset")
    limit = args.get("limit")
    start = offset if offset is not None else 1
    if limit is not None and limit > 0:
        window = f" ({js_number_str(start)} - {js_number_str(start + limit - 1)})"
    elif offset is not None:
        window = f" (from line {js_number_str(offset)})"
    else:
        window = ""
    return {"card": "generic", "title": f"Read {path}{window}", "kind": "read", "locations": [{"path": path, "line": start}]}


def write_present_call(args: Any, params: dict[str, Param]) -> dict[str, Any] | None:
    """A new-file-style diff card (call time has no prior content)."""
    if not _valid(args, params):
        return None
    path = args["file_path"]
    return {
        "card": "diff",
        "title": f"Write {path}",
        "diffs": [{"path": path, "oldText": None, "newText": args["content"]}],
        "locations": [{"path": path}],
    }


def write_present_result(args: Any, result: ToolResult, params: dict[str, Param]) -> dict[str, Any] | None:
    """The applied hunks, or the whole-file fallback; ``None`` for an error result."""
    if result.is_error or not _valid(args, params):
        return None
    path = args["file_path"]
    diffs = diffs_from_meta(result.meta) or [{"path": path, "oldText": None, "newText": args["content"]}]
    return {"card": "diff", "title": f"Write {path}", "diffs": diffs}


def edit_present_call(args: Any, params: dict[str, Param]) -> dict[str, Any] | None:
    """The requested replacement as a diff card (empty old_string → ``oldText`` None)."""
    if not _valid(args, params):
        return None
    path = args["file_path"]
    old = args["old_string"]
    return {
        "card": "diff",
        "title": f"Edit {path}",
        "diffs": [{"path": path, "oldText": old if old != "" else None, "newText": args["new_string"]}],
        "locations": [{"path": path}],
    }


def edit_present_result(args: Any, result: ToolResult, params: dict[str, Param]) -> dict[str, Any] | None:
    """The applied hunks; ``None`` on error or malformed meta."""
    if result.is_error or not _valid(args, params):
        return None
    diffs = diffs_from_meta(result.meta)
    if diffs is None:
        return None
    return {"card": "diff", "title": f"Edit {args['file_path']}", "diffs": diffs}
