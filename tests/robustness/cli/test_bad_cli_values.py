"""Every bad option value of every ``dsh-fs`` command is a usage error (tracker issue 12, item 8).

Table-driven over what the command line itself lists: the commands of ``dsh-fs --help``
(and of each group's ``--help``), the options of each command's ``--help``. For each option,
every bad value of its metavar's row in ``BAD_VALUES`` (a flag: ``--flag=value``) is given
after a minimal valid invocation (``VALID_ARGS``); the command must exit 2 with exactly one
``Error: …`` line on stderr, nothing on stdout, no traceback, and change nothing (the listing
comes from real subprocesses; the many bad values run through click's ``CliRunner``). A new
command or metavar without a row fails here, naming what to add.

Also: ``--endpoint-url`` without ``--s3``; no AWS credentials for ``--s3``; ``--s3`` and
``replay --provider s3`` without the ``[s3]`` extra. All in real subprocesses.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import clikit
from dsh_fs.testing.snapshot import snapshot

BAD_VALUES: dict[str, list[str]] = {
    "N": ["x", "1.5", "", "1e3"],
    "NUMBER": ["x", "", "1.", "NaN", "Infinity", "0x10", "1 2", "true"],
    "DIR": ["{missing}", "{file}"],
    "HOST:PORT": ["nonsense", "example.com:80", "127.0.0.1:99999", "127.0.0.1:x"],
    "s3://BUCKET/PREFIX": ["mybucket", "s3://", "s3://b/p/../q", "http://b/p", "s3:///p"],
    "URL": ["nope", "ftp://host/", "http://", "http://host:port/"],
    "NAME": [""],
    "DURATION": ["", "x", "30", "-1d", "1.5h", "10y"],
    "CHOICE": ["bogus", ""],
    "FLAG": ["=yes"],
    "PATH": ["", "{file}/s", "{missing}/sub/s"],
    "PATTERN": ["", "#comment", "!"],
    "NAMES": ["", ",", "bogus", "read,bogus"],
    "STEP|CHECKPOINT": [""],
    "K": ["x", "-1", "1.5", ""],
    "FILE": [""],
}
"""metavar -> bad values (``{missing}``: a path that does not exist, ``{file}``: a regular file;
``NUMBER``: a JSON number handed to the tool, so only what is not a JSON number is a usage
error — ``1.5`` or ``1e3`` gets the tool's own answer, as the model would)"""

FREE_TEXT = {"TEXT"}
"""metavars whose every value is valid (the content and literal strings of the tools)"""

TOOL_ARGUMENTS = {("glob", "--path"), ("grep", "--path"), ("grep", "--include"), ("read", "--pages")}
"""options handed to the tool as its argument: a bad value is the tool's own error result
(exit 1, the model's text on stdout), which the tool's tests pin, not a usage error"""

VALID_ARGS: dict[str, list[str]] = {
    "list": [],
    "read": ["a.txt"],
    "write": ["a.txt", "--content", "x\n"],
    "edit": ["a.txt", "--old", "alpha", "--new", "beta"],
    "glob": ["*.txt"],
    "grep": ["alpha"],
    "apply-patch": ["{patch}"],
    "schema": [],
    "client-config": [],
    "prompt": [],
    "mcp": [],
    "demo": [],
    "replay": ["{scenario}"],
    "sessions list": [],
    "sessions forget": ["nobody"],
    "sessions prune": ["--older-than", "1d"],
    "sessions history": ["nobody"],
    "sessions rewind": ["nobody", "--dry-run"],
    "sessions diff": ["nobody", "--since", "0"],
}
"""command -> arguments with which it would run (the bad option is added after them)"""

NEEDS: dict[str, list[str]] = {"--endpoint-url": ["--s3", "s3://bucket/prefix"]}
"""options checked only together with another one: given with it, so their own check is what fails"""
NEEDS_BY_COMMAND: dict[tuple[str, str], list[str]] = {
    ("replay", "--endpoint-url"): ["--provider", "s3"],
    ("mcp", "--token-file"): ["--http", "127.0.0.1:0"],
    ("sessions forget", "--endpoint-url"): ["--history-s3", "s3://bucket/history"],
    ("sessions history", "--endpoint-url"): ["--history-s3", "s3://bucket/history"],
}

@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    home = tmp_path_factory.mktemp("cli-options")
    clean = {k: v for k, v in os.environ.items() if not k.startswith("DSH_FS_")}
    clean.update(DSH_FS_STATE_DIR=str(home / "state"), DSH_FS_LOCK_DIR=str(home / "locks"),
                 AWS_EC2_METADATA_DISABLED="true")  # never ask the network for credentials
    return clean


@pytest.fixture(scope="module")
def commands(env: dict[str, str]) -> list[list[str]]:
    return clikit.commands(env)


def test_every_listed_command_has_a_row(commands: list[list[str]]) -> None:
    names = {" ".join(c) for c in commands}
    assert {"read", "write", "edit", "mcp", "replay", "sessions list"} <= names
    missing = sorted(names - set(VALID_ARGS))
    assert not missing, f"add the minimal arguments of {missing} to VALID_ARGS"


def _cases(command: list[str], env: dict[str, str]) -> list[tuple[str, list[str]]]:
    name = " ".join(command)
    cases = []
    for option, metavar in clikit.options(command, env):
        if metavar in FREE_TEXT or (name, option) in TOOL_ARGUMENTS:
            continue
        assert metavar in BAD_VALUES, f"{name} {option}: add bad values for metavar {metavar!r} to BAD_VALUES"
        extra = NEEDS_BY_COMMAND.get((" ".join(command), option), NEEDS.get(option, []))
        for value in BAD_VALUES[metavar]:
            given = [f"{option}{value}"] if metavar == "FLAG" else [option, value]
            cases.append((f"{option} {value!r}", [*extra, *given]))
    return cases


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*clikit.PREFIX, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)


def test_every_bad_option_value_of_every_command_exits_2(commands: list[list[str]], env: dict[str, str],
                                                        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The commands and options come from the real ``--help`` output (above); the hundreds of
    bad values run in this process through click's ``CliRunner`` on the same ``main`` (a
    subprocess each would take minutes), which reports a traceback as ``result.exception``."""
    from click.testing import CliRunner

    from dsh_fs.cli.main import main

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("alpha\n")
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps({"files": {}, "calls": []}))
    patch = tmp_path / "add.patch"
    patch.write_text("*** Begin Patch\n*** Add File: new.txt\n+new\n*** End Patch\n")
    fill = {"{missing}": str(tmp_path / "missing"), "{file}": str(ws / "a.txt"), "{scenario}": str(scenario),
            "{patch}": str(patch)}

    def filled(arg: str) -> str:
        for mark, value in fill.items():
            arg = arg.replace(mark, value)
        return arg

    jobs = []
    for command in commands:
        valid = [filled(a) for a in VALID_ARGS[" ".join(command)]]
        for label, bad in _cases(command, env):
            jobs.append((" ".join(command), label, [*command, *valid, *[filled(a) for a in bad]]))
    assert len(jobs) > 100
    before = snapshot(str(ws))
    monkeypatch.chdir(ws)
    runner = CliRunner()
    failures = []
    for name, label, args in jobs:
        done = runner.invoke(main, args, env=env, prog_name="dsh-fs")
        errors = [line for line in done.stderr.splitlines() if line.startswith("Error")]
        if done.exit_code != 2 or done.stdout or not isinstance(done.exception, SystemExit) or len(errors) != 1:
            failures.append(f"{name} {label}: exit {done.exit_code}, stdout {done.stdout[:80]!r}, "
                            f"stderr {done.stderr[-300:]!r}, exception {done.exception!r}")
        elif "Missing argument" in errors[0] or "No such option" in errors[0]:
            failures.append(f"{name} {label}: the invocation itself is wrong: {errors[0]}")
    assert not failures, "\n".join(failures)
    assert snapshot(str(ws)) == before


@pytest.mark.parametrize("command", [["read", "a.txt"], ["write", "a.txt", "--content", "x"],
                                     ["edit", "a.txt", "--old", "a", "--new", "b"], ["mcp"]])
def test_endpoint_url_without_s3_is_a_usage_error(command: list[str], env: dict[str, str], tmp_path: Path) -> None:
    done = _run([*command, "--endpoint-url", "http://127.0.0.1:9"], tmp_path, env)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines()[-1] == "Error: --endpoint-url is only used with --s3 or --history-s3"


@pytest.mark.parametrize("command", ["forget", "history"])
def test_endpoint_url_without_history_s3_is_a_usage_error_of_sessions(command: str, env: dict[str, str],
                                                                      tmp_path: Path) -> None:
    done = _run(["sessions", command, "s1", "--endpoint-url", "http://127.0.0.1:9"], tmp_path, env)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines()[-1] == "Error: --endpoint-url is only used with --history-s3"


@pytest.mark.parametrize(("args", "message"), [
    (["read", "a.txt", "--history-s3", "s3://bucket/h"],
     "Error: --history-s3 keeps the history of --session NAME: give --session NAME too"),
    (["mcp", "--history-s3", "s3://bucket/h"],
     "Error: --history-s3 keeps the history of --session NAME or of HTTP tokens: give --session NAME, or serve"
     " over HTTP"),
    (["write", "a.txt", "--content", "x", "--session", "s", "--s3", "s3://bucket/ws", "--history-s3",
      "s3://bucket/ws/history"],
     "Error: --history-s3 s3://bucket/ws/history is inside the served prefix s3://bucket/ws: keep the history"
     " outside every served prefix"),
    (["mcp", "--session", "s", "--s3", "s3://bucket", "--history-s3", "s3://bucket"],
     "Error: --history-s3 s3://bucket is inside the served prefix s3://bucket: keep the history outside every"
     " served prefix"),
], ids=["tool-without-session", "mcp-stdio-without-session", "inside-the-prefix", "inside-the-whole-bucket"])
def test_a_history_s3_that_cannot_be_used_is_a_usage_error(args: list[str], message: str, env: dict[str, str],
                                                           tmp_path: Path) -> None:
    done = _run(args, tmp_path, env)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines()[-1] == message


def test_replay_endpoint_url_without_provider_s3_is_a_usage_error(env: dict[str, str], tmp_path: Path) -> None:
    scenario = tmp_path / "s.json"
    scenario.write_text(json.dumps({"files": {}, "calls": []}))
    done = _run(["replay", "--endpoint-url", "http://127.0.0.1:9", str(scenario)], tmp_path, env)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines()[-1] == "Error: --endpoint-url is only used with --provider s3"


REPEATABLE = {"--root": "Error: Invalid value for '--root': Directory 'x' does not exist.",
              "--s3": "Error: Invalid value for '--s3': expected an s3://bucket/prefix URL, not 'x'",
              "--rules-file": "Error: Invalid value for '--rules-file': File 'x' does not exist.",
              "--encoding": "Error: Invalid value for '--encoding': unknown encoding \"x\""}
"""the options that take several values, one per use (``--root``: several roots; ``--s3``: several
prefixes; D28; ``--rules-file``: several rules files; ``--encoding``: several legacy encodings, F7)
→ the error for ``x`` (a missing directory, not a URL, a missing file, no such encoding) given twice"""

PATTERNS = {"--deny", "--read-only-path"}
"""path-rule options taking several patterns, one per use: ``x`` and ``y`` are both good values
(test_path_rules_surfaces.py runs commands with several)"""

FILES = {"--skip", "--force"}
"""``sessions rewind``'s per-file choices, one file per use: ``x`` and ``y`` are both good values
(tests/e2e/cli/test_cli_history.py runs them)"""


def test_an_option_given_twice_is_refused_on_every_command(commands: list[list[str]], env: dict[str, str]) -> None:
    """Click keeps the last of two values silently (``grep x --include '*.py' --include
    '*.txt'`` searched the ``.txt`` files only): every value option of every command, given
    twice, exits 2 naming it (``OnceCommand``; the check comes before any value is judged)."""
    from click.testing import CliRunner

    from dsh_fs.cli.main import main

    runner = CliRunner()
    checked = 0
    for command in commands:
        for option, metavar in clikit.options(command, env):
            if metavar == "FLAG" or option in PATTERNS or option in FILES:
                continue
            done = runner.invoke(main, [*command, option, "x", option, "y"], env=env, prog_name="dsh-fs")
            assert done.exit_code == 2, (command, option, done.stderr)
            if option in REPEATABLE:  # taken twice: the values are judged
                assert done.stderr.splitlines()[-1] == REPEATABLE[option], (command, done.stderr)
            else:
                assert done.stderr.splitlines()[-1] == f"Error: {option} is given more than once (it takes one value)"
            checked += 1
    assert checked > 50


NO_CREDENTIALS = ("Error: --s3: no AWS credentials found (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, "
                  "AWS_PROFILE, or another source of the standard credential chain)")


@pytest.mark.parametrize("command", [["read", "a.txt"], ["write", "a.txt", "--content", "x"], ["mcp"]])
def test_missing_credentials_are_a_setup_error(command: list[str], env: dict[str, str], tmp_path: Path) -> None:
    bare: dict[str, Any] = {k: v for k, v in env.items() if not k.startswith("AWS_")}
    bare.update(AWS_EC2_METADATA_DISABLED="true", AWS_CONFIG_FILE=str(tmp_path / "none"),
                AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "none"), HOME=str(tmp_path))
    done = _run([*command, "--s3", "s3://bucket/p", "--endpoint-url", "http://127.0.0.1:9"], tmp_path, bare)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines()[-1] == NO_CREDENTIALS
    assert not (tmp_path / "a.txt").exists()
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps({"files": {}, "calls": []}))
    replayed = _run(["replay", "--provider", "s3", "--endpoint-url", "http://127.0.0.1:9", str(scenario)], tmp_path, bare)
    assert (replayed.returncode, replayed.stdout) == (2, "")
    assert replayed.stderr.splitlines()[-1] == NO_CREDENTIALS.replace("--s3:", "--provider s3:")


_WITHOUT_S3 = ("import sys; sys.modules['aiobotocore'] = None; sys.modules['aiobotocore.session'] = None; "
               "from dsh_fs.cli.main import main; sys.argv[0] = 'dsh-fs'; main()")


@pytest.mark.parametrize("args", [["read", "a.txt", "--s3", "s3://bucket/p"], ["mcp", "--s3", "s3://bucket/p"],
                                  ["replay", "--provider", "s3", "{scenario}"]], ids=["read", "mcp", "replay"])
def test_s3_without_the_extra_is_a_usage_error(args: list[str], env: dict[str, str], tmp_path: Path) -> None:
    scenario = tmp_path / "s.json"
    scenario.write_text(json.dumps({"files": {}, "calls": []}))
    args = [str(scenario) if a == "{scenario}" else a for a in args]
    done = subprocess.run([sys.executable, "-c", _WITHOUT_S3, *args], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.splitlines()[-1].endswith("the S3 provider needs aiobotocore, the s3 extra: pip install '.[s3]' from the dsh-fs checkout")
