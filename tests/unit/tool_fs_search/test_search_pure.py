"""The pure parts of ``tool-fs-search`` (REFERENCE-SPEC §6, §7.10 "command construction",
"rg --json transport failures", "helpers"; DEVIATIONS S1, S2, S6): argument checks, the argv
of ripgrep, ``--json`` record parsing, previews, display paths, paging and the result texts,
error classification, configuration. No process, no provider here (tests/integration).
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, strategies as st

from dsh_fs.core.errors import ToolInputError
from dsh_fs.tool_fs_search import errors
from dsh_fs.tool_fs_search.args import parse_glob_args, parse_grep_args
from dsh_fs.tool_fs_search.commands import glob_argv, grep_argv, grep_files_argv
from dsh_fs.tool_fs_search.config import ToolFsSearchConfig
from dsh_fs.tool_fs_search.output import (
    NOT_UTF8_LINE,
    GlobPage,
    GrepMatch,
    GrepPage,
    format_grep_groups,
    glob_text,
    grep_text,
    parse_match,
    preview_line,
    to_workdir_relative,
)
from dsh_fs.spill.local import safe_name

# §6.1: the reference's command, word by word (the shell quoting is gone: no shell)
SPEC_GLOB = (
    "rg --files --glob='**/*.ts' --sort=modified --no-ignore --hidden --glob='!**/.git' --glob='!**/.git/**' "
    "--glob='!**/.svn' --glob='!**/.svn/**' --glob='!**/.hg' --glob='!**/.hg/**' --glob='!**/.bzr' "
    "--glob='!**/.bzr/**' --glob='!**/.jj' --glob='!**/.jj/**' --glob='!**/.sl' --glob='!**/.sl/**'"
)


def _words(command: str) -> list[str]:
    return [w.replace("'", "") for w in command.split(" ")]


# -- argv (§7.10 command construction) --------------------------------------------------------

def test_glob_argv_is_the_spec_template_with_no_config_first() -> None:
    """glob: fixed rg --files template with quoted pattern and paired VCS excludes"""
    assert ["rg", *glob_argv("**/*.ts", None, newest_first=False)] == ["rg", "--no-config", *_words(SPEC_GLOB)[1:]]


def test_glob_argv_default_profile_lists_newest_first() -> None:
    """DEVIATIONS S1: --sortr=modified in place of --sort=modified, nothing else changes"""
    reference, default = glob_argv("*", "d", newest_first=False), glob_argv("*", "d", newest_first=True)
    assert [w for w in reference if w != "--sort=modified"] == [w for w in default if w != "--sortr=modified"]
    assert "--sortr=modified" in default and "--sort=modified" not in default


def test_the_search_root_rides_behind_double_dash() -> None:
    """glob: the search root rides behind -- (one argv word: a space or a dash is inert)"""
    assert glob_argv("*", "docs dir", newest_first=False)[-2:] == ["--", "docs dir"]
    assert grep_argv("x", "-leading-dash", "*.{ts,tsx}", sorted_by_path=False) == [
        "--no-config", "--json", "--regexp=x", "--glob=*.{ts,tsx}", "--", "-leading-dash"
    ]


def test_grep_argv_is_the_spec_template() -> None:
    """grep: fixed rg --json template with the pattern in --regexp= form (S2 adds --sort=path)"""
    assert grep_argv("foo.*bar", None, None, sorted_by_path=False) == ["--no-config", "--json", "--regexp=foo.*bar"]
    assert grep_argv("foo.*bar", None, None, sorted_by_path=True) == [
        "--no-config", "--json", "--sort=path", "--regexp=foo.*bar"
    ]


@pytest.mark.parametrize("hostile", ["$(touch x)", "`id`", '"a b"', "it's", "a\nb", "-e", "*.[ch]"])
def test_model_values_stay_one_inert_word(hostile: str) -> None:
    """quotes %s into one inert shell word — here: one argv word, never split or interpreted"""
    argv = grep_argv(hostile, hostile, None, sorted_by_path=False)
    assert argv[2] == f"--regexp={hostile}" and argv[-1] == hostile and argv[-2] == "--"


def test_grep_files_argv_lists_what_grep_would_search() -> None:
    assert grep_files_argv("*.py", "src") == ["--no-config", "--files", "--null", "--sort=path", "--glob=*.py", "--", "src"]
    assert grep_files_argv(None, None) == ["--no-config", "--files", "--null", "--sort=path"]


# -- arguments (§6.1, §6.2 validation) --------------------------------------------------------

@pytest.mark.parametrize(("args", "message"), [
    ({"pattern": "  "}, "pattern must be a non-empty string"),
    ({"pattern": "\u3000\ufeff"}, "pattern must be a non-empty string"),
    ({"pattern": "*", "path": " "}, "path must be a non-empty string when given"),
])
def test_glob_argument_errors(args: dict, message: str) -> None:
    """glob: validates arguments (blank pattern, blank path) — JS trim semantics"""
    with pytest.raises(ToolInputError, match=f"^{message}$"):
        parse_glob_args(args)


@pytest.mark.parametrize(("args", "message"), [
    ({"pattern": ""}, "pattern must be a non-empty string"),
    ({"pattern": "x", "path": "\t"}, "path must be a non-empty string when given"),
    ({"pattern": "x", "include": " "}, "include must be a non-empty glob when given"),
    ({"pattern": "x", "include": "!*.ts"}, 'include must be a positive glob filter; negated patterns ("!…") are not supported'),
    ({"pattern": "x", "include": "*.ts,*.js"}, "include must be one glob, not a comma-separated list (use {a,b} alternation instead)"),
    ({"pattern": "x", "include": "a}},b"}, "include must be one glob, not a comma-separated list (use {a,b} alternation instead)"),
    ({"pattern": "", "path": " ", "include": "!x"}, "pattern must be a non-empty string"),
])
def test_grep_argument_errors_in_order(args: dict, message: str) -> None:
    """grep: validates arguments (empty pattern, blank path, bad include), in that order"""
    with pytest.raises(ToolInputError) as caught:
        parse_grep_args(args)
    assert str(caught.value) == message


def test_grep_accepts_whitespace_patterns_and_brace_alternation() -> None:
    """accepts a whitespace-only pattern (a legitimate regex) and brace alternation in include"""
    parsed = parse_grep_args({"pattern": "  ", "include": "*.{ts,tsx}"})
    assert (parsed.pattern, parsed.include, parsed.path) == ("  ", "*.{ts,tsx}", None)


# -- --json records (§6.2 parsing; §7.10 transport failures) ----------------------------------

def _match(path: object = None, number: object = 3, lines: object = None, **data: object) -> bytes:
    record = {"type": "match", "data": {"path": {"text": "a.ts"} if path is None else path,
                                        "lines": {"text": "hit\n"} if lines is None else lines,
                                        "line_number": number, "absolute_offset": 0, "submatches": [], **data}}
    return json.dumps(record).encode()


@pytest.mark.parametrize(("record", "detail"), [
    (b"{not json", "a line is not JSON"),
    (b"[1, 2]", "a record is not an object"),
    (b'{"type": "match"}', "a match record has no data"),
    (b'{"type": "match", "data": null}', "a match record has no data"),
    (_match(path={}), "a match record has no path text"),
    (_match(path="a.ts"), "a match record has no path text"),
    (_match(number="3"), "a match record has no line number"),
    (_match(number=True), "a match record has no line number"),
    (_match(lines="hit"), "a match record has no line content"),
    (_match(lines={}), "a match record has neither line text nor bytes"),
])
def test_malformed_records_fail_the_search(record: bytes, detail: str) -> None:
    """%s fails the search: SEARCH_FAILED ``grep received malformed ripgrep --json output (<detail>)``"""
    with pytest.raises(errors.SearchError) as caught:
        parse_match(record)
    assert caught.value.code == "SEARCH_FAILED"
    assert str(caught.value) == f"grep received malformed ripgrep --json output ({detail})"


def test_records_other_than_match_are_framing() -> None:
    for kind in ("begin", "end", "context", "summary", "future-kind"):
        assert parse_match(json.dumps({"type": kind, "data": {}}).encode()) is None


def test_match_text_loses_one_line_terminator() -> None:
    """strips a CRLF terminator from the matched line text (one, at the end only)"""
    assert parse_match(_match(lines={"text": "windows line\r\n"})).line == "windows line"
    assert parse_match(_match(lines={"text": "a\n\n"})).line == "a\n"
    assert parse_match(_match(lines={"text": "no end"})).line == "no end"


def test_non_utf8_lines_and_names() -> None:
    """renders a non-UTF-8 line (rg bytes form) as a placeholder; S6: a non-UTF-8 file name is
    shown with U+FFFD in the default profile, a failure in the reference one"""
    assert parse_match(_match(lines={"bytes": "/w=="})) == GrepMatch("a.ts", 3, NOT_UTF8_LINE)
    named = _match(path={"bytes": "YfxiLnR4dA=="})  # b"a\xfcb.txt"
    assert parse_match(named, bytes_paths=True).path == "a\ufffdb.txt"
    with pytest.raises(errors.SearchError, match="no path text"):
        parse_match(named)


# -- previews and display paths (§6.2, §6.3; §7.10 helpers) -----------------------------------

def test_preview_cuts_at_a_code_point_boundary() -> None:
    """previews a long matched line at grepMaxLineBytes preserving UTF-8"""
    assert preview_line("aé" * 10, 7) == "aéaéa (line truncated)"
    assert preview_line("short", 100) == "short"
    assert preview_line("😀😀", 5) == "😀 (line truncated)"
    assert preview_line("ab", 2) == "ab"


@given(st.text(), st.integers(min_value=1, max_value=40))
def test_preview_is_a_utf8_prefix_within_budget(line: str, budget: int) -> None:
    line = line.encode("utf-8", "replace").decode("utf-8")  # rg's text is valid UTF-8
    shown = preview_line(line, budget)
    if shown == line:
        assert len(line.encode()) <= budget
    else:
        kept = shown.removesuffix(" (line truncated)")
        assert shown.endswith(" (line truncated)") and line.startswith(kept)
        assert budget - 3 <= len(kept.encode()) <= budget


def test_workdir_relative_display_paths() -> None:
    """toWorkdirRelative maps inside-workdir absolutes and passes everything else through"""
    assert to_workdir_relative("/w/a/b.ts", "/w") == "a/b.ts"
    assert to_workdir_relative("/w", "/w") == "."
    assert to_workdir_relative("/other/b.ts", "/w") == "/other/b.ts"
    assert to_workdir_relative("/w-sibling/b.ts", "/w") == "/w-sibling/b.ts"
    assert to_workdir_relative("rel/b.ts", "/w") == "rel/b.ts"
    assert to_workdir_relative("/w/../up.ts", "/w") == "/w/../up.ts"


# -- pages and texts (§6.1, §6.2 results) -----------------------------------------------------

def test_glob_page_and_texts() -> None:
    """caps at globMaxResults: exact capped text; the spill content is every path"""
    pieces: list[str] = []
    page = GlobPage(2, pieces.append)
    for path in ("a.ts", "b.ts", "c.ts", "d.ts"):
        page.add(path)
    assert "".join(pieces) == "a.ts\nb.ts\nc.ts\nd.ts"
    assert glob_text(page, "Full sorted result stored at: /spill/glob-results.txt. Use the fake retrieval hint.") == (
        "a.ts\nb.ts\n\n(Showing 2 of 4 paths. Full sorted result stored at: /spill/glob-results.txt. "
        "Use the fake retrieval hint.)"
    )
    small = GlobPage(5)
    small.add("a.ts")
    small.add("b.ts")
    assert glob_text(small, None) == "a.ts\nb.ts"


def test_grep_page_and_texts() -> None:
    """groups matches by file with line numbers; singular; capped; spill content"""
    pieces: list[str] = []
    page = GrepPage(2, pieces.append)
    for match in (GrepMatch("a.ts", 1, "one"), GrepMatch("a.ts", 2, "two"), GrepMatch("b.ts", 5, "three")):
        page.add(match)
    assert grep_text(page, "Full grep result stored at: /spill/grep-results.txt. Use the fake retrieval hint.") == (
        "Found 2 of 3 matches\n\na.ts\nLine 1: one\nLine 2: two\n\n"
        "(Full grep result stored at: /spill/grep-results.txt. Use the fake retrieval hint.)"
    )
    assert page.head() + "".join(pieces) == "Found 3 matches\n\na.ts\nLine 1: one\nLine 2: two\n\nb.ts\nLine 5: three"
    one = GrepPage(250)
    one.add(GrepMatch("a.ts", 1, "hit"))
    assert grep_text(one, None) == "Found 1 match\n\na.ts\nLine 1: hit"
    assert GrepPage(2).head() == "Found 0 matches\n\n"


def test_groups_keep_first_seen_file_order() -> None:
    """formatGrepMatches groups by first-seen file order"""
    grouped = format_grep_groups([GrepMatch("b.ts", 2, "x"), GrepMatch("a.ts", 1, "y"), GrepMatch("b.ts", 5, "z")])
    assert grouped == "b.ts\nLine 2: x\nLine 5: z\n\na.ts\nLine 1: y"
    assert format_grep_groups([GrepMatch("a", 1.0, "x")]) == "a\nLine 1: x"  # JS number formatting


# -- errors (§6.3) ----------------------------------------------------------------------------

@pytest.mark.parametrize(("code", "stderr", "better", "kind", "text"), [
    (2, "rg: regex parse error:\n    (\n    ^\nerror: unclosed group", False, "SEARCH_INVALID_PATTERN",
     "grep pattern rejected by ripgrep: rg: regex parse error:\n    (\n    ^\nerror: unclosed group"),
    (2, "rg: error parsing glob '{a': unclosed", True, "SEARCH_INVALID_PATTERN",
     "grep pattern rejected by ripgrep: rg: error parsing glob '{a': unclosed"),
    (127, "", False, "SEARCH_FAILED", "grep requires ripgrep (rg) on the bash executor's PATH"),
    (1, "bash: rg: command not found", False, "SEARCH_FAILED",
     "grep requires ripgrep (rg) on the bash executor's PATH: bash: rg: command not found"),
    (127, "", True, "SEARCH_FAILED", "grep requires ripgrep (rg)"),
    (2, "rg: x: IO error", False, "SEARCH_FAILED", "grep search failed (exit 2): rg: x: IO error"),
    (3, "", False, "SEARCH_FAILED", "grep search failed (exit 3)"),
])
def test_exit_failures_are_classified(code: int, stderr: str, better: bool, kind: str, text: str) -> None:
    failure = errors.exit_failure("grep", code, stderr, search_texts=better)
    assert (failure.code, str(failure), failure.name) == (kind, text, "SearchError")


def test_stderr_excerpts_and_fixed_texts() -> None:
    assert errors.stderr_excerpt("  tail of diagnostics \n", True) == "tail of diagnostics [stderr truncated]"
    assert errors.stderr_excerpt(" \n", True) == ""
    assert str(errors.killed("glob", "SIGKILL")) == "glob search command was killed by signal SIGKILL"
    assert str(errors.killed("glob", None)) == "glob search command was killed by signal (unknown)"
    assert str(errors.aborted("grep")) == "grep was aborted before completion (tool timeout or caller cancellation)"
    assert str(errors.timed_out("grep", 1234, search_texts=False)) == str(errors.aborted("grep"))
    assert str(errors.timed_out("grep", 1234, search_texts=True)) == (
        "grep timed out after 1234ms; narrow pattern, path, or include and retry"
    )
    assert str(errors.overflow("grep", 100)) == (
        "grep produced more raw output than the bash executor retained within the 100-byte cap; "
        "narrow pattern, path, or include and retry"
    )
    assert str(errors.overflow("glob", 100, 150)) == (
        "glob produced 150 bytes of raw output, over the 100-byte cap; narrow pattern, path, or include and retry"
    )
    assert str(errors.could_not_start("glob", None, search_texts=False)) == (
        "glob could not start its search command (unusable working directory or missing shell)"
    )


# -- configuration (§6; §7.10 config validation) ----------------------------------------------

@pytest.mark.parametrize(("key", "value", "name"), [
    ("glob_max_results", 0, "globMaxResults"),
    ("grep_max_matches", -1, "grepMaxMatches"),
    ("grep_max_line_bytes", 1.5, "grepMaxLineBytes"),
    ("raw_output_max_bytes", 0, "rawOutputMaxBytes"),
    ("timeout_ms", -100, "timeoutMs"),
    ("timeout_ms", True, "timeoutMs"),
    ("mirror_batch_bytes", 0, "mirrorBatchBytes"),
])
def test_rejects_a_non_positive_or_fractional_setting(key: str, value: object, name: str) -> None:
    """rejects a non-positive or fractional %s at load"""
    with pytest.raises(ValueError) as caught:
        ToolFsSearchConfig(**{key: value})
    assert str(caught.value) == f"tool-fs-search: {name} must be a positive integer"


def test_config_defaults() -> None:
    config = ToolFsSearchConfig()
    assert (config.glob_max_results, config.grep_max_matches, config.grep_max_line_bytes,
            config.raw_output_max_bytes, config.timeout_ms) == (100, 250, 2000, 20_000_000, 30_000)
    with pytest.raises(ValueError, match="^tool-fs-search: globMaxResults must be a positive integer$"):
        ToolFsSearchConfig(timeout_ms=0, glob_max_results=0)


def test_spill_names_are_one_safe_segment() -> None:
    assert safe_name("glob-results.txt") == "glob-results.txt"
    assert safe_name("../x/y") == "..~002Fx~002Fy"
    assert safe_name("..") == "~002E~002E" and safe_name("") == "~"
    assert safe_name("a~b é") == "a~007Eb~0020~00E9"


def test_s14_control_bytes_are_escaped() -> None:
    from dsh_fs.tool_fs_search.output import binary_note, escape_controls

    assert escape_controls("const a = 1;\x00") == "const a = 1;\\u0000"
    assert escape_controls("a\tb\x1b[31mc\x7f\r") == "a\tb\\u001b[31mc\\u007f\\u000d"
    assert escape_controls("plain \u00e9 text") == "plain \u00e9 text"
    assert escape_controls("no\u00a0break") == "no\u00a0break"  # not printable, not a control: unchanged
    assert binary_note(["a.ts", "b.ts"]) == (
        "(a.ts, b.ts contain NUL bytes, shown as \\u0000: they may be binary files, searched here as text.)")
    assert grep_argv("x", None, None, sorted_by_path=True, text=True) == [
        "--no-config", "--json", "--text", "--sort=path", "--regexp=x"]


@given(st.text())
def test_s14_escaped_lines_hold_no_control_but_tab(line: str) -> None:
    from dsh_fs.tool_fs_search.output import escape_controls

    shown = escape_controls(line)
    assert not any(ord(c) < 0x20 and c != "\t" or c == "\x7f" for c in shown)
    assert len(shown) <= 6 * len(line)


def test_s13_skipped_entries_from_ripgrep_debug_messages() -> None:
    from dsh_fs.tool_fs_search.skipped import SkippedEntries, hidden_component, skipped_note

    walk = "rg: DEBUG|ignore::walk|crates/ignore/src/walk.rs:1799: ignoring "
    found = SkippedEntries()
    for message in (
        walk + "./.env: Ignore(IgnoreMatch(Hidden))",
        walk + "./.git: Ignore(IgnoreMatch(Hidden))",  # a VCS directory: never counted
        walk + './scripts/run.sh: Ignore(IgnoreMatch(Gitignore(Glob { from: Some("./.gitignore"), original: "scripts/*"',
        walk + "./out: Ignore(IgnoreMatch(Override(Glob(...))))",  # include / our own globs: not the rules
        walk + "./.env: Ignore(IgnoreMatch(Hidden))",  # reported again by a restarted run
        "rg: DEBUG|ignore::gitignore|crates/ignore/src/gitignore.rs:393: opened gitignore file: ./.gitignore",
        "rg: some other message",
    ):
        found(message)
    assert list(found.paths) == ["./.env", "./scripts/run.sh"] and not found.overflowed
    assert hidden_component("a/.cfg/b") and not hidden_component("../a/b") and not hidden_component("a.b/c")
    assert skipped_note(1, False, [".env"]) == (
        "(1 file was not searched: ignored or hidden (.env); name one as path to search it.)")
    assert skipped_note(3, True, ["a/", "b", "c", "d", "e", "f"]) == (
        "(more than 3 files were not searched: ignored or hidden (a/, b, c, d, e, …); name one as path to search it.)")
