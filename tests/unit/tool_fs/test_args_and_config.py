"""Tool argument value checks (``tool_fs/args.py``) and plugin configuration (``tool_fs/config.py``).

Covers REFERENCE-SPEC §4.4 step 4 (plain-error value checks, JS ``trim`` and
``Number.isInteger`` semantics), §4.1 / §7.5 "read caps are plugin config" load-time checks
(``tool-fs: <name> must be a positive integer``, in key order), the namespace plugin shape,
and DEVIATIONS D7 (CRLF-only differences) and D11 (lone surrogates) at the argument level.

Not covered here: the registry's schema validation (test_core_registry.py) and the checks'
effect through real tool calls (tests/integration/tool_fs/test_tools.py, test_bad_input.py).
"""

from __future__ import annotations

import math
from typing import Any

import pytest

import dsh_fs
from dsh_fs import Context
from dsh_fs.tool_fs import ToolFs, ToolFsConfig
from dsh_fs.core.errors import ToolInputError
from dsh_fs.tool_fs.args import check_file_path, check_positive_integer, differ_only_in_line_endings
from dsh_fs.tool_fs.shared import check_unicode, lone_surrogate
from dsh_fs.tool_fs.config import CONFIG_KEYS

# ------------------------------------------------------------------------------------------
# §4.4 step 4: value checks
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["", " ", "\t\n", "\u00a0", "\ufeff", "\u3000 \u2028"])
def test_blank_file_path_is_a_plain_error(path: str) -> None:
    with pytest.raises(ToolInputError) as caught:
        check_file_path(path)
    assert str(caught.value) == "file_path must be a non-empty string"
    assert isinstance(caught.value, ValueError) and not hasattr(caught.value, "code")


@pytest.mark.parametrize("path", [" a.txt", "\x1c", "\x85", ".", "a\x00"])
def test_non_blank_file_paths_pass(path: str) -> None:
    check_file_path(path)


@pytest.mark.parametrize("value,expected", [(1, 1), (2.0, 2), (7, 7), (10**30, 10**30), (1e308, int(1e308))])
def test_positive_integers(value: int | float, expected: int) -> None:
    assert check_positive_integer("offset", value) == expected


@pytest.mark.parametrize("value", [0, -3, 1.5, 0.5, -1.0, 0.0, math.inf, -math.inf, math.nan])
def test_non_positive_or_fractional_numbers(value: float) -> None:
    with pytest.raises(ToolInputError) as caught:
        check_positive_integer("limit", value)
    assert str(caught.value) == "limit must be a positive integer"


@pytest.mark.parametrize(
    "text,found",
    [
        ("plain", None), ("😀 pair", None), ("", None),
        ("ok \ud83d end", (3, 0xD83D)), ("\ude00", (0, 0xDE00)), ("a\ud83d\ud83d\ude00", (1, 0xD83D)),
        ("\ud83d\ude00\ude00", (2, 0xDE00)), ("x\ud800", (1, 0xD800)),
    ],
)
def test_lone_surrogate_finds_the_first_unpaired_half(text: str, found: tuple[int, int] | None) -> None:
    assert lone_surrogate(text) == found


def test_D11_check_unicode_message() -> None:
    """D11: ``<argument> must be valid Unicode text (lone surrogate U+D83D at index 3)``"""
    with pytest.raises(ToolInputError) as caught:
        check_unicode("content", "ok \ud83d end\n")
    assert str(caught.value) == "content must be valid Unicode text (lone surrogate U+D83D at index 3)"
    check_unicode("new_string", "fine 😀")


@pytest.mark.parametrize(
    "old,new,expected",
    [("a\r\nb", "a\nb", True), ("a\nb", "a\r\nb", True), ("a\rb", "a\nb", False), ("a", "a", False),
     ("a\r\n", "a\n\n", False), ("x\r\n\r\n", "x\n\n", True)],
)
def test_D7_differ_only_in_line_endings(old: str, new: str, expected: bool) -> None:
    assert differ_only_in_line_endings(old, new) is expected


# ------------------------------------------------------------------------------------------
# §4.1 configuration
# ------------------------------------------------------------------------------------------

def test_config_defaults_and_key_names() -> None:
    config = ToolFsConfig()
    assert (config.read_limit, config.read_max_line_length, config.read_max_bytes, config.read_stream_min_size) == (
        2000, 2000, 51200, 10485760
    )
    assert CONFIG_KEYS == {
        "read_limit": "readLimit",
        "read_max_line_length": "readMaxLineLength",
        "read_max_bytes": "readMaxBytes",
        "read_stream_min_size": "readStreamMinSize",
    }
    assert ToolFsConfig(read_limit=2.0).read_limit == 2 and type(ToolFsConfig(read_limit=2.0).read_limit) is int


@pytest.mark.parametrize(
    "key,value,name",
    [
        ("read_limit", 0, "readLimit"),
        ("read_limit", 2.5, "readLimit"),
        ("read_max_line_length", -1, "readMaxLineLength"),
        ("read_max_bytes", math.nan, "readMaxBytes"),
        ("read_stream_min_size", 0, "readStreamMinSize"),
        ("read_limit", True, "readLimit"),
        ("read_max_bytes", math.inf, "readMaxBytes"),
        ("read_limit", "2000", "readLimit"),
        ("read_limit", None, "readLimit"),
    ],
)
def test_rejects_a_non_positive_or_fractional_setting_at_load(ws: str, key: str, value: Any, name: str) -> None:
    """read caps are plugin config: rejects a non-positive or fractional %s at load"""
    message = f"tool-fs: {name} must be a positive integer"
    with pytest.raises(ValueError) as caught:
        ToolFsConfig(**{key: value})
    assert str(caught.value) == message
    ctx = dsh_fs.create_context(cwd=ws, policy=False)
    scope_count = len(ctx.scopes)
    tools_scope = next(scope for scope in ctx.scopes if scope.name == "tool-fs")
    tools_scope.dispose()
    with pytest.raises(ValueError) as caught:
        ctx.plugin(ToolFs, **{key: value})
    assert str(caught.value) == message
    assert ctx.tools.names() == ["glob", "grep", "list"] and len(ctx.scopes) == scope_count - 1
    assert "tool:read" not in ctx.system_prompt.names()
    with pytest.raises(ValueError) as caught:
        dsh_fs.create_context(cwd=ws, **{key: value})
    assert str(caught.value) == message


def test_settings_are_checked_in_key_order() -> None:
    with pytest.raises(ValueError, match="^tool-fs: readMaxLineLength must be a positive integer$"):
        ToolFsConfig(read_stream_min_size=0, read_max_bytes=0, read_max_line_length=0)
    with pytest.raises(ValueError, match="^tool-fs: readLimit must be a positive integer$"):
        ToolFsConfig(read_stream_min_size=0, read_limit=-1)


def test_has_no_default_export_namespace_plugin_shape() -> None:
    """has no default export (namespace plugin export shape) — Python: a class with name/inject/apply"""
    assert ToolFs.name == "tool-fs"
    assert set(ToolFs.inject) == {"fs", "tools", "system_prompt"}
    assert callable(ToolFs.apply)
    assert not hasattr(dsh_fs.tool_fs, "default")
    assert dsh_fs.tool_fs.__all__ == ("ToolFs", "ToolFsConfig", "ToolFsList")


def test_unknown_settings_are_refused(ws: str) -> None:
    with pytest.raises(TypeError):
        dsh_fs.create_context(cwd=ws, readLimit=5)  # Python keys are snake_case
    ctx = Context()
    scope = ctx.plugin(ToolFs, readLimit=5)  # pending: nothing is checked before the services exist
    assert ctx.tools.names() == [] and scope in ctx.scopes
