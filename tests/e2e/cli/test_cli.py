"""End-to-end tests of ``dsh-fs read|write|edit|schema|prompt`` in real subprocesses.

Covers: exact stdout (the model's text + one newline) and exit codes through both
``python -m dsh_fs.cli.main`` and the installed ``dsh-fs`` script; the tools' own argument
validation for command-line numbers; ``--session`` persistence across processes (read in one,
edit in another; another session or no session is refused with the exact NOT_OBSERVED text; a
change by another process in between is stale; absence persists, D8); concurrent commands of
one session; ``write`` content from stdin (bytes exact, and /dev/null refused); ``schema`` in
every format; ``prompt`` (REFERENCE-SPEC §4.2 verbatim); ``--help``.

Every test runs with ``DSH_FS_STATE_DIR`` and ``DSH_FS_LOCK_DIR`` in its own tmp dir. Not
covered here: the store's internals (``tests/unit/session_store/test_session_store.py``), adapters' wire shapes
(``tests/unit/adapters/test_adapters.py``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dsh_fs.tool_fs.list_tool import LIST_PROMPT
from spectext import FULL_PROMPT, READ_DESCRIPTION
from spectext import READ_SCHEMA_DEFAULT as READ_SCHEMA  # the default profile: with D35's column

SCRIPT = Path(sys.executable).with_name("dsh-fs")
RUNNERS = {
    "module": [sys.executable, "-m", "dsh_fs.cli.main"],
    "script": [str(SCRIPT)],
}
TIMEOUT = 120



@pytest.fixture
def ws(tmp_path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("alpha\nbeta\n")
    return root


@pytest.fixture
def env(tmp_path) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("DSH_FS_")}
    clean["DSH_FS_STATE_DIR"] = str(tmp_path / "state")
    clean["DSH_FS_LOCK_DIR"] = str(tmp_path / "locks")
    return clean


@pytest.fixture(params=sorted(RUNNERS))
def runner(request) -> list[str]:
    if request.param == "script" and not SCRIPT.exists():
        pytest.skip("the dsh-fs script is not installed next to this interpreter")
    return RUNNERS[request.param]


class Cli:
    """Runs ``dsh-fs`` in ``ws`` with the test's environment."""

    def __init__(self, prefix: list[str], ws: Path, env: dict[str, str]) -> None:
        self.prefix, self.ws, self.env = prefix, ws, env

    def __call__(self, *args: str, stdin: bytes | int | None = None) -> subprocess.CompletedProcess[bytes]:
        kwargs: dict = {"input": stdin} if isinstance(stdin, bytes) else {"stdin": stdin if stdin is not None else subprocess.DEVNULL}
        return subprocess.run(
            [*self.prefix, *args], cwd=self.ws, env=self.env, capture_output=True, timeout=TIMEOUT, **kwargs
        )

    def popen(self, *args: str) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [*self.prefix, *args], cwd=self.ws, env=self.env, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )


@pytest.fixture
def cli(runner, ws, env) -> Cli:
    return Cli(runner, ws, env)


@pytest.fixture
def fast(ws, env) -> Cli:
    """The module runner only, for tests that are about behaviour rather than the entry point."""
    return Cli(RUNNERS["module"], ws, env)


def out(text: str) -> bytes:
    return text.encode("utf-8") + b"\n"


def read_text(path: Path, *lines: str) -> str:
    body = "\n".join(f"{i}: {line}" for i, line in enumerate(lines, 1))
    return f"<path>{path}</path>\n<type>file</type>\n<content>\n{body}\n\n(End of file - total {len(lines)} lines)\n</content>"


# -- read -----------------------------------------------------------------------------------------


def test_read_prints_the_model_text_and_exits_0(cli, ws):
    done = cli("read", "a.txt")
    assert (done.returncode, done.stdout, done.stderr) == (0, out(read_text(ws / "a.txt", "alpha", "beta")), b"")


def test_read_window_options(fast, ws):
    done = fast("read", "a.txt", "--offset", "2", "--limit", "1")
    assert done.stdout == out(f"<path>{ws / 'a.txt'}</path>\n<type>file</type>\n<content>\n2: beta\n\n(End of file - total 2 lines)\n</content>")
    done = fast("read", "a.txt", "--limit", "1", "--read-limit", "5")
    assert done.stdout == out(
        f"<path>{ws / 'a.txt'}</path>\n<type>file</type>\n<content>\n1: alpha\n\n"
        "(Showing lines 1-1 of 2. Use offset=2 to continue.)\n</content>"
    )


@pytest.mark.parametrize(
    ("args", "text"),
    [
        (["--offset", "0"], "Error: offset must be a positive integer"),
        (["--limit", "-3"], "Error: limit must be a positive integer"),
        (["--limit", "2001"], "Error: limit must be less than or equal to 2000"),
        (["--limit", "6", "--read-limit", "5"], "Error: limit must be less than or equal to 5"),
        (["--offset", "9"], 'Error: offset 9 is out of range for "{a}" (2 lines)'),
        # JSON numbers, read as the reference reads them (docs/JSON-NUMBERS.md)
        (["--offset=-0"], "Error: tool execution arguments must be losslessly JSON-serializable"),
        (["--offset", "1e2"], 'Error: offset 100 is out of range for "{a}" (2 lines)'),
        (["--offset", "2.5"], "Error: offset must be a positive integer"),
        (["--offset", "12345678901234567890"], 'Error: offset 12345678901234567000 is out of range for "{a}" (2 lines)'),
        (["--offset", "1" + "0" * 400], "Error: tool execution arguments must be losslessly JSON-serializable"),
    ],
)
def test_read_numbers_go_through_the_tool_validation(fast, ws, args, text):
    done = fast("read", "a.txt", *args)
    assert (done.returncode, done.stdout) == (1, out(text.format(a=ws / "a.txt")))


def test_read_numbers_are_json_numbers(fast, ws):
    done = fast("read", "a.txt", "--offset", "2.0", "--limit", "1E0")
    assert (done.returncode, done.stdout) == (0, out(
        f"<path>{ws / 'a.txt'}</path>\n<type>file</type>\n<content>\n2: beta\n\n(End of file - total 2 lines)\n</content>"))
    for value in ("abc", "NaN", "true", '"3"', "0x10"):
        done = fast("read", "a.txt", f"--offset={value}")
        assert done.returncode == 2 and done.stdout == b"", value
        assert done.stderr.splitlines()[-1] == (f"Error: Invalid value for '--offset': {value!r} is not a number: give "
                                                "the 1-based first line (read) or entry (list) to return (a JSON "
                                                "number, e.g. 10)").encode(), done.stderr
    done = fast("read", "a.txt", "--limit", "x")
    assert done.stderr.splitlines()[-1] == (b"Error: Invalid value for '--limit': 'x' is not a number: give the most "
                                            b"lines to return (a JSON number, e.g. 100)")


def test_read_errors_exit_1_with_the_text_on_stdout(cli, ws):
    done = cli("read", "missing.txt")
    assert (done.returncode, done.stdout, done.stderr) == (1, out(f'Error: cannot read "{ws / "missing.txt"}": not found'), b"")
    done = cli("read", "  ")
    assert (done.returncode, done.stdout) == (1, out("Error: file_path must be a non-empty string"))


def test_cwd_option_resolves_relative_paths(fast, ws, tmp_path):
    (ws / "sub").mkdir()
    (ws / "sub" / "s.txt").write_text("inside\n")
    done = subprocess.run(
        [*RUNNERS["module"], "read", "s.txt", "--cwd", str(ws / "sub")],
        cwd=tmp_path, env=fast.env, capture_output=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL,
    )
    assert done.stdout == out(read_text(ws / "sub" / "s.txt", "inside"))


# -- sessions ---------------------------------------------------------------------------------------


def test_edit_without_session_is_refused_with_the_not_observed_text(cli, ws):
    path = ws / "a.txt"
    cli("read", "a.txt")
    done = cli("edit", "a.txt", "--old", "beta", "--new", "gamma")
    assert (done.returncode, done.stdout) == (1, out(f'Error: edit requires reading "{path}" first — read the file, then retry'))
    done = cli("edit", "a.txt", "--old", "beta", "--new", "gamma", "--profile", "reference")
    assert (done.returncode, done.stdout) == (1, out(f'Error: edit requires reading "{path}" first'))
    assert path.read_text() == "alpha\nbeta\n"


def test_read_in_one_process_authorizes_edit_in_another(cli, ws):
    path = ws / "a.txt"
    assert cli("read", "a.txt", "--session", "s1").returncode == 0
    done = cli("edit", "a.txt", "--old", "beta", "--new", "gamma", "--session", "s1")
    assert (done.returncode, done.stdout, done.stderr) == (0, out(f"The file {path} has been updated successfully."), b"")
    assert path.read_text() == "alpha\ngamma\n"
    # the edit's own new version is remembered: edit again, then overwrite, without reading
    done = cli("edit", "a.txt", "--old", "a", "--new", "A", "--replace-all", "--session", "s1")
    assert done.stdout == out(f"The file {path} has been updated. All occurrences were successfully replaced.")
    done = cli("write", "a.txt", "--content", "replaced\n", "--session", "s1")
    assert done.stdout == out(f"<path>{path}</path>\n<type>file</type>\n<content>\nUpdated file\n</content>")
    assert path.read_text() == "replaced\n"
    # another session has observed nothing
    done = cli("edit", "a.txt", "--old", "replaced", "--new", "x", "--session", "s2")
    assert (done.returncode, done.stdout) == (1, out(f'Error: edit requires reading "{path}" first — read the file, then retry'))


def test_session_from_the_environment(fast, ws):
    env = dict(fast.env, DSH_FS_SESSION="from-env")
    session_cli = Cli(fast.prefix, ws, env)
    assert session_cli("read", "a.txt").returncode == 0
    assert session_cli("edit", "a.txt", "--old", "beta", "--new", "b").returncode == 0
    assert (ws / "a.txt").read_text() == "alpha\nb\n"


def test_a_change_by_another_process_in_between_is_stale(cli, ws):
    path = ws / "a.txt"
    assert cli("read", "a.txt", "--session", "s1").returncode == 0
    path.write_text("alpha\nbeta\nchanged elsewhere\n")
    done = cli("edit", "a.txt", "--old", "beta", "--new", "gamma", "--session", "s1")
    assert (done.returncode, done.stdout) == (
        1,
        out(f'Error: cannot edit "{path}": file changed since it was read — re-read the file, then retry'),
    )
    assert path.read_text() == "alpha\nbeta\nchanged elsewhere\n"
    # re-reading refreshes the observation
    assert cli("read", "a.txt", "--session", "s1").returncode == 0
    assert cli("edit", "a.txt", "--old", "beta", "--new", "gamma", "--session", "s1").returncode == 0


def test_absence_persists_between_commands(fast, ws):
    path = ws / "new.txt"
    done = fast("read", "new.txt", "--session", "s1")
    assert (done.returncode, done.stdout) == (1, out(f'Error: cannot read "{path}": not found'))
    done = fast("edit", "new.txt", "--old", "x", "--new", "y", "--session", "s1")
    assert (done.returncode, done.stdout) == (1, out(f'Error: cannot edit "{path}": not found'))


def test_no_policy_edits_unconditionally(fast, ws):
    done = fast("edit", "a.txt", "--old", "alpha", "--new", "omega", "--no-policy")
    assert done.returncode == 0
    assert (ws / "a.txt").read_text() == "omega\nbeta\n"


def test_concurrent_commands_of_one_session_keep_every_observation(fast, ws):
    names = [f"f{i}.txt" for i in range(6)]
    for name in names:
        (ws / name).write_text(f"{name}\n")
    procs = [fast.popen("read", name, "--session", "many") for name in names]
    for proc in procs:
        proc.communicate(timeout=TIMEOUT)
        assert proc.returncode == 0
    for name in names:
        done = fast("edit", name, "--old", name, "--new", "edited", "--session", "many")
        assert done.returncode == 0, done.stdout
        assert (ws / name).read_text() == "edited\n"


def test_unusable_state_dir_exits_2_and_changes_nothing(fast, ws, tmp_path):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    env = dict(fast.env, DSH_FS_STATE_DIR=str(blocker / "state"))
    done = Cli(fast.prefix, ws, env)("write", "x.txt", "--content", "x", "--session", "s")
    assert done.returncode == 2
    assert done.stdout == b""
    assert b"cannot open the session store" in done.stderr
    assert not (ws / "x.txt").exists()


# -- write ------------------------------------------------------------------------------------------


def test_write_takes_exact_bytes_from_stdin(cli, ws):
    data = "première ligne\r\nzweite 😀\nno final newline".encode()
    done = cli("write", "new.txt", stdin=data)
    assert (done.returncode, done.stdout) == (0, out(f"<path>{ws / 'new.txt'}</path>\n<type>file</type>\n<content>\nCreated file\n</content>"))
    assert (ws / "new.txt").read_bytes() == data


def test_write_from_dev_null_never_empties_an_existing_file(fast, ws):
    done = fast("write", "a.txt", "--no-policy")  # stdin is /dev/null
    assert done.returncode == 2
    assert done.stdout == b""
    assert done.stderr.splitlines()[-1] == (b"Error: stdin is /dev/null and a.txt exists: pass --content '' to empty "
                                            b"it, or pipe its new content")
    assert (ws / "a.txt").read_text() == "alpha\nbeta\n"


def test_write_from_dev_null_creates_an_empty_file(fast, ws):
    """``dsh-fs write e.txt < /dev/null``: an empty stdin is an empty new file."""
    done = fast("write", "e.txt")  # stdin is /dev/null
    assert (done.returncode, done.stdout) == (0, out(f"<path>{ws / 'e.txt'}</path>\n<type>file</type>\n<content>\n"
                                                     "Created file\n</content>"))
    assert (ws / "e.txt").read_bytes() == b""


def test_write_refuses_a_terminal_for_stdin(fast, ws):
    import pty

    leader, follower = pty.openpty()
    try:
        done = fast("write", "t.txt", stdin=follower)
    finally:
        os.close(leader)
        os.close(follower)
    assert done.returncode == 2 and done.stdout == b""
    assert b"no content: pass --content TEXT or pipe the content on stdin" in done.stderr
    assert not (ws / "t.txt").exists()


def test_write_empty_content_explicitly(fast, ws):
    assert fast("write", "empty.txt", "--content", "").returncode == 0
    assert (ws / "empty.txt").read_bytes() == b""


def test_write_over_an_unread_file_is_refused(cli, ws):
    done = cli("write", "a.txt", "--content", "x")
    assert (done.returncode, done.stdout) == (
        1,
        out(f'Error: cannot overwrite existing "{ws / "a.txt"}" without reading it first — read the file, then retry'),
    )
    assert (ws / "a.txt").read_text() == "alpha\nbeta\n"


@pytest.mark.parametrize("profile", ["default", "reference"])
def test_write_invalid_utf8_from_stdin_names_the_byte(fast, ws, profile):
    """Issue 13.5: the bytes are what is wrong, said as ``read`` says it of a file (D6), and
    nothing is written — in the reference profile too (it would write U+FFFD)."""
    for data, detail in ((b"caf\xe9\n", "byte 0xE9 at offset 3, line 1"),
                         (b"ok\nab\x99c", "byte 0x99 at offset 5, line 2"),
                         (b"end\xe2\x82", "byte 0xE2 at offset 3, line 1; the text ends inside a multi-byte character")):
        done = fast("write", "bad.txt", "--profile", profile, stdin=data)
        assert (done.returncode, done.stdout) == (2, b""), done.stderr
        assert done.stderr == f"Error: stdin: invalid UTF-8 text ({detail})\n".encode()
    assert not (ws / "bad.txt").exists()
    done = fast("write", "bom.txt", stdin=b"\xef\xbb\xbfx\x00y")  # a BOM and NUL are content
    assert done.returncode == 0 and (ws / "bom.txt").read_bytes() == b"\xef\xbb\xbfx\x00y"


def test_arguments_that_are_not_utf8_name_the_byte(fast, ws):
    """argv bytes that are not UTF-8 (``--content``, ``--old``, ``--new``, FILE)."""
    for args, detail in (
        ([b"write", b"w.txt", b"--content", b"a\nb\xffc"], "--content: invalid UTF-8 text (byte 0xFF at offset 3, line 2)"),
        ([b"edit", b"a.txt", b"--no-policy", b"--old", b"alpha", b"--new", b"\xc3("],
         "--new: invalid UTF-8 text (byte 0xC3 at offset 0, line 1)"),
        ([b"edit", b"a.txt", b"--no-policy", b"--old", b"\xe9", b"--new", b"x"],
         "--old: invalid UTF-8 text (byte 0xE9 at offset 0, line 1; the text ends inside a multi-byte character)"),
        ([b"read", b"caf\xe9.txt"], "FILE: invalid UTF-8 text (byte 0xE9 at offset 3, line 1)"),
    ):
        done = subprocess.run([*map(os.fsencode, fast.prefix), *args], cwd=ws, env=fast.env, capture_output=True,
                              timeout=TIMEOUT, stdin=subprocess.DEVNULL)
        assert (done.returncode, done.stdout, done.stderr) == (2, b"", f"Error: {detail}\n".encode()), args
    assert sorted(p.name for p in ws.iterdir()) == ["a.txt"] and (ws / "a.txt").read_text() == "alpha\nbeta\n"


# -- edit --------------------------------------------------------------------------------------------


def test_edit_argument_checks_come_from_the_tool(fast):
    done = fast("edit", "a.txt", "--old", "", "--new", "x", "--no-policy")
    assert (done.returncode, done.stdout) == (1, out("Error: old_string must be a non-empty string"))
    done = fast("edit", "a.txt", "--old", "x", "--new", "x", "--no-policy")
    assert (done.returncode, done.stdout) == (1, out("Error: old_string and new_string must differ"))


def test_edit_requires_old_and_new(fast):
    done = fast("edit", "a.txt", "--new", "x")
    assert done.returncode == 2 and b"--old" in done.stderr and done.stdout == b""


# -- schema and prompt --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fmt", "entry"),
    [
        ("mcp", {"name": "read", "description": READ_DESCRIPTION, "inputSchema": READ_SCHEMA}),
        ("openai", {"type": "function", "function": {"name": "read", "description": READ_DESCRIPTION, "parameters": READ_SCHEMA}}),
        ("openai-responses", {"type": "function", "name": "read", "description": READ_DESCRIPTION, "parameters": READ_SCHEMA, "strict": False}),
        ("anthropic", {"name": "read", "description": READ_DESCRIPTION, "input_schema": READ_SCHEMA}),
        ("native", {"name": "read", "description": READ_DESCRIPTION, "parameters": READ_SCHEMA}),
    ],
)
def test_schema_formats(fast, fmt, entry):
    import dsh_fs
    from dsh_fs.adapters import tool_definitions

    done = fast("schema", "--format", fmt)
    assert done.returncode == 0 and done.stdout.endswith(b"]\n")
    printed = json.loads(done.stdout)
    assert [t.get("name") or t["function"]["name"] for t in printed] == ["edit", "glob", "grep", "list", "read", "write"]
    assert printed[4] == entry
    assert printed == tool_definitions(dsh_fs.create_context(), fmt)


def test_schema_default_format_is_mcp_and_follows_read_limit(cli):
    done = cli("schema", "--read-limit", "7")
    read = json.loads(done.stdout)[4]
    assert read["inputSchema"]["properties"]["limit"]["description"] == "Maximum number of lines to return. Defaults to 7."


def test_prompt_prints_the_spec_text(cli):
    done = cli("prompt", "--profile", "reference")
    assert (done.returncode, done.stdout, done.stderr) == (0, out(FULL_PROMPT), b"")
    identity, tools = FULL_PROMPT.split("\n\n", 1)  # the default profile's list goes first (L1)
    assert cli("prompt").stdout == out(f"{identity}\n\n{LIST_PROMPT}\n\n{tools}")


def test_invalid_read_cap_is_a_usage_error(fast):
    done = fast("read", "a.txt", "--read-limit", "0")
    assert done.returncode == 2 and done.stdout == b""
    assert b"tool-fs: readLimit must be a positive integer" in done.stderr


@pytest.mark.parametrize("command", ["read", "write", "edit", "apply-patch", "schema", "prompt"])
def test_every_command_has_help(cli, command):
    done = cli(command, "--help")
    assert done.returncode == 0
    assert done.stdout.startswith(b"Usage: ")
    if command in ("read", "write", "edit", "apply-patch"):
        text = b" ".join(done.stdout.split())
        assert b"--session NAME" in text and b"--no-policy" in text and b"Exit status" in text


# -- glob / grep (tracker issue 10) -----------------------------------------------------------


def test_glob_and_grep_print_the_model_text(cli, ws):
    (ws / "src").mkdir()
    (ws / "src" / "b.py").write_text("import os\nneedle = 1\n")
    os.utime(ws / "a.txt", (1_700_000_000, 1_700_000_000))
    done = cli("glob", "*")
    assert (done.returncode, done.stdout, done.stderr) == (0, out("src/b.py\na.txt"), b"")  # newest first (S1)
    done = cli("glob", "*", "--profile", "reference")
    assert done.stdout == out("a.txt\nsrc/b.py")
    done = cli("grep", "needle|alpha", "--include", "*.py", "--path", "src")
    assert (done.returncode, done.stdout) == (0, out("Found 1 match\n\nsrc/b.py\nLine 2: needle = 1"))
    none = cli("grep", "zzz")
    assert (none.returncode, none.stdout) == (0, out("No matches found"))


def test_search_errors_exit_1(fast, ws):
    bad = fast("grep", "(")
    assert bad.returncode == 1 and bad.stdout.startswith(b"Error: grep pattern rejected by ripgrep: rg: regex parse error")
    missing = fast("glob", "*", "--path", "nope")
    assert (missing.returncode, missing.stdout) == (1, out(f'Error: cannot search "{ws}/nope": not found'))
    usage = fast("glob", "*", "--glob-max-results", "0")
    assert usage.returncode == 2 and b"tool-fs-search: globMaxResults must be a positive integer" in usage.stderr


def test_a_capped_cli_result_is_paged_by_a_later_command(fast, ws, env):
    for i in range(5):
        (ws / f"f{i}.txt").write_text("needle\n")
    capped = fast("grep", "needle", "--grep-max-matches", "2")
    assert capped.returncode == 0
    locator = capped.stdout.decode().split("stored at: ")[1].split(". Use read")[0]
    assert locator.startswith(env["DSH_FS_STATE_DIR"] + "/spill/")
    paged = fast("read", locator, "--offset", "1", "--limit", "1")
    assert paged.returncode == 0 and b"1: Found 5 matches" in paged.stdout


# -- apply-patch (issue 11) ---------------------------------------------------------------------

PATCH = "*** Begin Patch\n*** Update File: a.txt\n@@\n alpha\n-beta\n+BETA\n*** Add File: new.txt\n+new\n*** End Patch\n"


def test_apply_patch_from_a_file_and_from_stdin(cli, ws):
    (ws / "p.patch").write_text(PATCH)
    done = cli("apply-patch", "p.patch", "--no-policy")
    assert (done.returncode, done.stdout, done.stderr) == (
        0, out(f"Success. Updated the following files:\nA {ws}/new.txt\nM {ws}/a.txt\n"), b"")
    assert (ws / "a.txt").read_bytes() == b"alpha\nBETA\n" and (ws / "new.txt").read_bytes() == b"new\n"
    again = cli("apply-patch", "-", "--no-policy", stdin=PATCH.replace("new.txt", "other.txt").encode())
    assert again.returncode == 1  # the hunk no longer fits: nothing written
    assert again.stdout == out(f"Error: Failed to find expected lines in {ws}/a.txt:\nalpha\nbeta")
    assert not (ws / "other.txt").exists()


def test_apply_patch_needs_the_session_read_or_no_policy(fast, ws):
    refused = fast("apply-patch", stdin=PATCH.encode())
    assert refused.returncode == 1
    assert refused.stdout == out(f'Error: update requires reading "{ws}/a.txt" first — read the file, then retry')
    assert b"--session NAME" in refused.stderr
    assert not (ws / "new.txt").exists() and (ws / "a.txt").read_bytes() == b"alpha\nbeta\n"
    assert fast("read", "a.txt", "--session", "s").returncode == 0
    done = fast("apply-patch", "--session", "s", stdin=PATCH.encode())
    assert done.returncode == 0, done.stdout
    assert (ws / "a.txt").read_bytes() == b"alpha\nBETA\n"


def test_apply_patch_usage_errors_exit_2(fast, ws):
    missing = fast("apply-patch", "nope.patch")
    assert missing.returncode == 2 and missing.stdout == b""
    assert b"cannot read the patch nope.patch" in missing.stderr
    nothing = fast("apply-patch")  # stdin is /dev/null: never an empty patch by accident
    assert nothing.returncode == 2 and b"no patch: give a FILE or pipe the patch on stdin" in nothing.stderr


def test_schema_shows_the_faces_when_named(fast):
    done = fast("schema", "--format", "openai-responses", "--tools", "read,apply_patch")
    printed = json.loads(done.stdout)
    assert printed[0] == {"type": "apply_patch"} and printed[1]["name"] == "read" and len(printed) == 2
    claude = json.loads(fast("schema", "--format", "anthropic", "--tools", "str_replace_based_edit_tool").stdout)
    assert claude == [{"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"}]
    unknown = fast("schema", "--tools", "read,nope")
    assert unknown.returncode == 2 and b'unknown tool "nope"' in unknown.stderr
@pytest.mark.parametrize("args", [["read", "a.txt", "--s3", "s3://bucket/p"], ["mcp", "--s3", "s3://bucket/p"]],
                         ids=["read", "mcp"])
def test_s3_without_the_extra_says_how_to_install_it(ws, env, args):
    """Without aiobotocore, ``--s3`` fails at once on stderr with the extra to install (not as
    a tool result on stdout at the first request)."""
    blocked = ("import sys; sys.modules['aiobotocore'] = None; sys.modules['aiobotocore.session'] = None; "
               "from dsh_fs.cli.main import main; sys.argv[0] = 'dsh-fs'; main()")
    proc = Cli([sys.executable, "-c", blocked], ws, env)(*args)
    assert proc.returncode in (1, 2) and proc.stdout == b""
    assert b"the S3 provider needs aiobotocore, the s3 extra: pip install '.[s3]' from the dsh-fs checkout" in proc.stderr


# -- replay ------------------------------------------------------------------------------------------


def test_replay_reads_the_scenario_as_json_parse_does(fast, ws):
    """A recorded call with ``-0`` replays as the reference answers it (docs/JSON-NUMBERS.md)."""
    scenario = ws / "s.json"
    scenario.write_bytes(b'{"files": {"a.txt": "x\\n"}, "calls": [{"tool": "read", "args": '
                         b'{"file_path": "a.txt", "offset": -0}}, {"tool": "read", "args": '
                         b'{"file_path": "a.txt", "offset": 12345678901234567890}}]}')
    done = fast("replay", str(scenario))
    assert done.returncode == 0, done.stderr
    texts = [r["text"] for r in json.loads(done.stdout)["results"]]
    assert texts == ["Error: tool execution arguments must be losslessly JSON-serializable",
                     'Error: offset 12345678901234567000 is out of range for "<ws>/a.txt" (1 lines)']


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b'{"files": {"a": "caf\xe9"}}', "invalid UTF-8 text (byte 0xE9 at offset 20, line 1)"),
        (b'{"calls": [', "not JSON (Expecting value: line 1 column 12 (char 11))"),
        (b'{"calls": [NaN]}', "not JSON (NaN is not JSON)"),
    ],
)
def test_replay_of_a_file_that_is_not_json_text_is_a_usage_error(fast, ws, data, message):
    scenario = ws / "bad.json"
    scenario.write_bytes(data)
    done = fast("replay", str(scenario))
    assert (done.returncode, done.stdout) == (2, b"")
    assert done.stderr.endswith(f"Error: {scenario}: {message}\n".encode()), done.stderr


@pytest.mark.parametrize(
    ("scenario", "why"),
    [
        ({"files": {"{outside}/planted.txt": "x"}}, "relative paths in its workspace"),
        ({"files": {"../planted.txt": "x"}}, "relative paths in its workspace"),
        ({"files": {"up": {"symlink": "{outside}"}, "up/planted.txt": "x"}}, "leads out of the workspace"),
        ({"calls": [{"external_delete": {"path": "{outside}/victim.txt"}}]}, "relative paths in its workspace"),
        ({"calls": [{"external_write": {"path": "../victim.txt", "content": "y"}}]}, "relative paths in its workspace"),
        ({"files": {"l": {"symlink": "{outside}/victim.txt"}},
          "calls": [{"external_write": {"path": "l", "content": "y"}}]}, "leads out of the workspace"),
        ({"calls": [{"external_mkdir": {"path": "/"}}]}, "relative paths in its workspace"),
    ],
    ids=["absolute", "dotdot", "symlinked-parent", "delete-absolute", "write-dotdot", "write-through-link", "mkdir-root"],
)
def test_replay_setup_never_leaves_its_workspace(fast, ws, tmp_path, scenario, why):
    """A scenario's files and external steps act only inside its temporary workspace, so
    replaying a file someone sent cannot plant, overwrite or delete the user's files."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.txt").write_text("mine\n")
    text = json.dumps(scenario).replace("{outside}", str(outside))
    path = tmp_path / "s.json"
    path.write_text(text)
    done = fast("replay", str(path))
    assert done.returncode == 1 and why.encode() in done.stderr, done.stderr
    assert sorted(p.name for p in outside.iterdir()) == ["victim.txt"]
    assert (outside / "victim.txt").read_text() == "mine\n"
    assert not (tmp_path / "planted.txt").exists() and not (tmp_path / "victim.txt").exists()


@pytest.mark.parametrize(
    ("scenario", "why"),
    [
        (b"[]", "AttributeError"),
        (b'{"files": "x"}', "AttributeError"),
        (b'{"files": {"a\\u0000b": "x"}}', "ValueError: embedded null byte"),
        (b'{"files": {"a": {"text": "x", "mode": "abc"}}}', "ValueError"),
        (b'{"calls": [{"sleep_ms": -5}]}', "ValueError"),
        (b'{"calls": [{"external_delete": {"path": "nosuch"}}]}', "FileNotFoundError"),
        (b'{"config": {"readLimit": -1}}', "readLimit must be a positive integer"),
    ],
    ids=["list", "files-text", "nul", "mode", "sleep", "delete-missing", "config"],
)
def test_replay_of_a_malformed_scenario_says_why_without_a_traceback(fast, ws, tmp_path, scenario, why):
    path = tmp_path / "s.json"
    path.write_bytes(scenario)
    done = fast("replay", str(path))
    assert (done.returncode, done.stdout) == (1, b""), done.stderr
    assert b"Traceback" not in done.stderr
    assert done.stderr.startswith(f"Error: {path}: cannot replay it: ".encode()) and why.encode() in done.stderr


def test_the_session_hint_is_not_given_without_a_policy(fast, ws):
    """A patch moving onto an existing file fails FS_NOT_OBSERVED whatever was read: with
    --no-policy the hint to use --session would not help, so it is not given."""
    (ws / "g.txt").write_text("hi\n")
    (ws / "h.txt").write_text("x\n")
    patch = b"*** Begin Patch\n*** Update File: g.txt\n*** Move to: h.txt\n@@\n-hi\n+ho\n*** End Patch\n"
    done = fast("apply-patch", "--no-policy", stdin=patch)
    assert done.returncode == 1 and b"the destination already exists" in done.stdout
    assert done.stderr == b""


# -- the console script's exit -------------------------------------------------------------------


def test_the_console_script_freezes_the_heap_on_the_way_out_with_the_commands_status(ws, monkeypatch):
    """``run`` (the installed script) exits with the command's status and leaves the heap
    frozen, so the interpreter's last collections skip it (a per-call MCP client waits for that
    exit on every call)."""
    import gc

    from dsh_fs.cli.main import run

    monkeypatch.chdir(ws)
    for argv, status in ((["dsh-fs", "--version"], 0), (["dsh-fs", "read", "missing.txt"], 1),
                         (["dsh-fs", "read", "--limit", "x", "a.txt"], 2)):
        gc.unfreeze()
        monkeypatch.setattr(sys, "argv", argv)
        with pytest.raises(SystemExit) as exited:
            run()
        frozen = gc.get_freeze_count()
        gc.unfreeze()
        assert exited.value.code == status and frozen > 0, argv


_EXIT_PROGRAM = (
    "import atexit, os, sys, threading, time\n"
    "from dsh_fs.cli.main import run\n"
    "threading._register_atexit(os.write, 1, b'finalized\\n')  # run by the interpreter's shutdown\n"
    "atexit.register(print, 'exit hook')\n"
    "if 'daemon' in sys.argv[1]:\n"
    "    threading.Thread(target=time.sleep, args=(600,), daemon=True).start()\n"
    "if 'plain' in sys.argv[1]:  # alive until the interpreter's shutdown lets it end\n"
    "    ended = threading.Event()\n"
    "    threading._register_atexit(ended.set)\n"
    "    threading.Thread(target=ended.wait).start()\n"
    "print('unflushed', end=' ')\n"
    "sys.argv = ['dsh-fs', 'read', 'missing.txt']\n"
    "run()\n"
)


@pytest.mark.parametrize("thread", ["daemon", "none", "daemon and plain"])
def test_a_daemon_thread_still_running_at_exit_skips_the_interpreters_finalization(tmp_path, thread):
    """With a daemon thread still running (``dsh-fs mcp``'s SDK import when stdin ended first),
    the script leaves without finalizing the interpreter (whose freed locks a daemon thread can
    die on: SIGSEGV): the command's status, the exit hooks and every byte written, but not the
    interpreter's own shutdown (``threading``'s exit callbacks: ``finalized`` is not printed).
    Without one, or with a non-daemon thread the interpreter waits for, the exit is the usual one."""
    done = subprocess.run([sys.executable, "-c", _EXIT_PROGRAM, thread], capture_output=True, text=True, timeout=60,
                          cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("unflushed "), done.stdout
    assert "exit hook\n" in done.stdout
    assert ("finalized" in done.stdout) is (thread != "daemon"), done.stdout


def test_mcp_whose_stdin_ends_during_the_sdk_import_exits_cleanly(tmp_path):
    """stdin ends while the SDK's background import is held (so its daemon thread is alive at
    exit, every time): ``dsh-fs mcp`` exits 0 with nothing on stderr."""
    hold = tmp_path / "hold"
    hold.write_text("")
    env = {k: v for k, v in os.environ.items() if not k.startswith("DSH_FS_")}
    env["DSH_FS_MCP_TEST_HOLD_IMPORT"] = str(hold)
    done = subprocess.run([str(SCRIPT), "mcp", "--root", str(tmp_path)], input=b"", capture_output=True, env=env,
                          timeout=60)
    assert (done.returncode, done.stderr) == (0, b"")


def test_a_frozen_exit_still_runs_the_exit_hooks(tmp_path):
    """The private spill directory is removed at exit by ``weakref.finalize``; ``run``'s frozen
    heap does not skip it."""
    program = (
        "import anyio, sys\n"
        "from dsh_fs.spill import LocalSpillStore, SpillRequest\n"
        "from dsh_fs.cli.main import run\n"
        "store = LocalSpillStore()\n"
        "request = SpillRequest(session_id='s', tool_name='grep', call_id='c', suggested_name='x.txt')\n"
        "anyio.run(store.save_text, request, 'x')\n"
        "print(store.root, flush=True)\n"
        "sys.argv = ['dsh-fs', '--version']\n"
        "run()\n"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    root = done.stdout.splitlines()[0]
    assert os.path.basename(root).startswith("dsh-fs-spill-") and not os.path.exists(root)
