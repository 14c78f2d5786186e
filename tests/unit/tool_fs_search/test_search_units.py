"""Pure parts of ``tool_fs_search`` pinned where mutation testing (docs/MUTATION.md) found no
test: the argument values (``args``), the configuration (``config``) and the error texts
(``errors``) of REFERENCE-SPEC §6.1–§6.3 and DEVIATIONS S3/S12."""

from __future__ import annotations

import dataclasses
import os
from typing import Any

import pytest

from dsh_fs.core.errors import ToolInputError
from dsh_fs.core.profile import Profile
from dsh_fs.tool_fs_search import errors
from dsh_fs.tool_fs_search.args import GlobInput, GrepInput, check_include, parse_glob_args, parse_grep_args
from dsh_fs.tool_fs_search.config import ToolFsSearchConfig

VALUES = [GlobInput(pattern="*"), GrepInput(pattern="x"), ToolFsSearchConfig()]


@pytest.mark.parametrize("value", VALUES, ids=lambda v: type(v).__name__)
def test_accepted_values_are_frozen_keyword_only_and_slotted(value: object) -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(value, dataclasses.fields(value)[0].name, "other")
    assert not hasattr(value, "__dict__")
    with pytest.raises(TypeError):
        type(value)("positional")  # type: ignore[call-arg]


def test_the_path_given_is_kept() -> None:
    assert parse_glob_args({"pattern": "*.md", "path": "docs"}) == GlobInput(pattern="*.md", path="docs")
    assert parse_grep_args({"pattern": "x", "path": "src", "include": "*.py"}) == GrepInput(
        pattern="x", path="src", include="*.py")
    assert parse_glob_args({"pattern": "*.md"}).path is None


@pytest.mark.parametrize("include", ["{a},b", "{a,b},c", "a,{b}", "{{a}},b", "}}{a},b"])
def test_a_comma_outside_braces_is_a_list(include: str) -> None:
    with pytest.raises(ToolInputError, match="^include must be one glob, not a comma-separated list"):
        check_include(include)


@pytest.mark.parametrize("include", ["{{a},b}", "{a,{b,c}}", "*.{ts,tsx}", "{a}}{b,c}"])
def test_a_comma_inside_braces_is_alternation(include: str) -> None:
    check_include(include)


def test_the_configuration_defaults_and_profile() -> None:
    config = ToolFsSearchConfig()
    assert (config.glob_max_results, config.grep_max_matches, config.grep_max_line_bytes,
            config.raw_output_max_bytes, config.timeout_ms) == (100, 250, 2000, 20_000_000, 30_000)  # §6
    assert config.mirror_batch_bytes == 64 * 2**20  # docs/SEARCH.md: 64 MiB
    assert ToolFsSearchConfig(profile="reference").profile is Profile.REFERENCE  # type: ignore[arg-type]
    assert ToolFsSearchConfig().profile is Profile.DEFAULT


@pytest.mark.parametrize(("search_texts", "reason", "text"), [
    (False, "no such directory", "grep could not start its search command (unusable working directory or missing shell)"),
    (True, None, "grep could not start its search command (unusable working directory or missing shell)"),
    (True, "", "grep could not start its search command (unusable working directory or missing shell)"),
    (True, "No such file or directory", "grep could not start ripgrep: No such file or directory"),
])
def test_could_not_start(search_texts: bool, reason: str | None, text: str) -> None:
    error = errors.could_not_start("grep", reason, search_texts=search_texts)
    assert (str(error), error.code) == (text, "SEARCH_FAILED")


def test_missing_ripgrep() -> None:
    reference = errors.missing_ripgrep("glob", "pip install ripgrep", search_texts=False)
    assert (str(reference), reference.code) == ("glob requires ripgrep (rg) on the bash executor's PATH", "SEARCH_FAILED")
    ours = errors.missing_ripgrep("glob", "pip install ripgrep", search_texts=True)
    assert (str(ours), ours.code) == ("glob requires ripgrep (rg): pip install ripgrep", "SEARCH_FAILED")


def test_the_multiline_refusal() -> None:
    assert errors.multiline_refusal("grep", "rg: regex parse error: unclosed group") is None
    refused = errors.multiline_refusal("grep", "the literal \"\\n\" is not allowed; consider --multiline")
    assert refused is not None and refused.code == "SEARCH_INVALID_PATTERN"
    assert str(refused) == ('grep pattern rejected: it matches a line break ("\\n"), and grep searches one line at a '
                            "time; search for one line of it, then read the file around the match")


def test_overflow_texts() -> None:
    retained = errors.overflow("grep", 100)
    assert str(retained) == ("grep produced more raw output than the bash executor retained within the 100-byte cap; "
                             "narrow pattern, path, or include and retry")
    stopped = errors.overflow("grep", 100, first_page_on_overflow=True)  # S4: no page to show
    assert str(stopped) == "grep produced more than 100 bytes of raw output; narrow pattern, path, or include and retry"
    decoded = errors.overflow("glob", 100, 120, first_page_on_overflow=True)
    assert str(decoded) == "glob produced 120 bytes of raw output, over the 100-byte cap; narrow pattern, path, or include and retry"
    assert {e.code for e in (retained, stopped, decoded)} == {"SEARCH_RAW_OUTPUT_OVERFLOW"}


def test_busy_text() -> None:  # D23
    refused = errors.busy("grep", 2, 1)
    assert (str(refused), refused.code) == (
        "grep refused: this session already has 2 searches running and 1 waiting; wait for them to finish, then retry",
        "SEARCH_FAILED")


def test_skipped_entries_are_bounded() -> None:  # S13
    from dsh_fs.tool_fs_search.skipped import SkippedEntries

    def message(n: int) -> str:
        return f"rg: DEBUG|ignore::walk|crates/ignore/src/walk.rs:1: ignoring ./d{n}: Ignore(IgnoreMatch(Hidden))"

    found = SkippedEntries()
    for n in range(10_000):
        found(message(n))
    found(message(0))  # one already kept: still no overflow
    assert (len(found.paths), found.overflowed) == (10_000, False)
    found(message(10_000))
    assert (len(found.paths), found.overflowed) == (10_000, True) and "./d10000" not in found.paths


@pytest.mark.anyio
async def test_the_near_miss_hint_is_for_literal_patterns(tmp_path: Any) -> None:  # S7
    from dsh_fs.fs_local.filesystem import LocalFileSystem
    from dsh_fs.tool_fs_search.near_miss import near_miss_hint

    ws = os.path.realpath(str(tmp_path))
    os.mkdir(os.path.join(ws, "docs"))
    with open(os.path.join(ws, "docs", "roadmap.md"), "w", encoding="utf-8") as handle:
        handle.write("r")
    fs = LocalFileSystem(cwd=ws, root=ws)
    hint = await near_miss_hint(fs, ws, "**/docs/ROADMAP.md", signal=None)
    assert hint == f'Hint: "{ws}/docs/roadmap.md" exists: only letter case differs.'
    assert await near_miss_hint(fs, ws, "docs/*.MD", signal=None) is None  # not literal: no hint
    assert await near_miss_hint(fs, ws + "/docs", "roadmap.md", signal=None) is None  # it exists: nothing near
