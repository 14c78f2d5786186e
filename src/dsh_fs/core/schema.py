"""The tool parameter DSL, its JSON Schema and total validation (REFERENCE-SPEC §4.3, §5.4).

Pure: no I/O. ``validate`` never raises; it returns the violation strings in declaration
order, worded exactly as the reference words them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ("Param", "ParamType", "json_schema", "validate")

ParamType = Literal["string", "number", "integer", "boolean", "object", "array"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Param:
    """One declared property of a tool's arguments (the reference's ``defineTool`` DSL)."""

    type: ParamType
    """JSON type; ``number`` accepts ints and floats but never booleans; ``integer`` accepts
    integral numbers (``2.0`` too, as JavaScript's ``Number.isInteger``; the reference's
    ``str_replace_editor`` declares it)"""
    required: bool = False
    """absent → ``missing required property "<key>"``"""
    description: str | None = None
    """shown to the model in the schema"""
    enum: tuple[str, ...] | None = None
    """allowed string values"""
    properties: Mapping[str, "Param"] | None = None
    """nested properties of an ``object``"""
    items: "Param | None" = None
    """element schema of an ``array``"""


def _property_schema(param: Param) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": param.type}
    if param.description is not None:
        schema["description"] = param.description
    if param.enum is not None:
        schema["enum"] = list(param.enum)
    if param.properties is not None:
        schema.update(json_schema(param.properties))
        schema["type"] = param.type
    if param.items is not None:
        schema["items"] = _property_schema(param.items)
    return schema


def json_schema(params: Mapping[str, Param]) -> dict[str, Any]:
    """The wire JSON Schema, key order ``type``, ``properties``, ``required`` (§4.3).

    ``required`` is omitted when no property is required.
    """
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {key: _property_schema(p) for key, p in params.items()},
    }
    required = [key for key, p in params.items() if p.required]
    if required:
        schema["required"] = required
    return schema


def _type_ok(value: object, kind: ParamType) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "integer":
        return not isinstance(value, bool) and (
            isinstance(value, int) or (isinstance(value, float) and value.is_integer())
        )
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "object":
        return isinstance(value, dict)
    return isinstance(value, list)


_ARTICLE = {"string": "a string", "number": "a number", "integer": "an integer", "boolean": "a boolean",
            "object": "an object", "array": "an array"}


def _check(value: object, param: Param, path: str, out: list[str]) -> None:
    if not _type_ok(value, param.type):
        out.append(f'"{path}" must be {_ARTICLE[param.type]}')
        return
    if param.enum is not None and value not in param.enum:
        allowed = json.dumps(list(param.enum), separators=(",", ":"), ensure_ascii=False)
        out.append(f'"{path}" must be one of {allowed}')
        return
    if param.properties is not None and isinstance(value, dict):
        _check_object(value, param.properties, path + ".", out)
    if param.items is not None and isinstance(value, list):
        for i, item in enumerate(value):
            _check(item, param.items, f"{path}[{i}]", out)


def _check_object(value: Mapping[str, object], params: Mapping[str, Param], prefix: str, out: list[str]) -> None:
    for key, param in params.items():
        path = prefix + key
        if key not in value:
            if param.required:
                out.append(f'missing required property "{path}"')
            continue
        item = value[key]
        if param.type == "string" and param.enum is None and isinstance(item, str):
            continue  # the usual argument: a string, nothing more to check
        _check(item, param, path, out)


def validate(arguments: object, params: Mapping[str, Param]) -> list[str]:
    """Violations of ``arguments`` against ``params``, in declaration order (§5.4).

    A non-object top level gives the single violation ``"arguments" must be an object``.
    Extra keys are ignored and no default is applied.
    """
    if not isinstance(arguments, dict):
        return ['"arguments" must be an object']
    out: list[str] = []
    _check_object(arguments, params, "", out)
    return out
