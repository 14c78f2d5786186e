"""Every option means the same on every ``dsh-fs`` command (tracker issue 13, item 9).

Read from the real ``--help`` of every command (``clikit``): an option with the same name has
the same metavar, help text, environment variable and default wherever it appears (one
definition each, ``dsh_fs.cli.options``); every option that takes a value shows its default
(or is required); every environment variable a help names is in docs/CLI.md's table; and the
environment variables act as their options do — ``DSH_FS_PROFILE`` on ``dsh-fs mcp`` included,
which it once ignored.

Not covered here: bad option values (``tests/robustness/cli/test_bad_cli_values.py``).
"""

from __future__ import annotations

import json
import os
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest

import clikit
from clikit import OptionEntry
from docskit import DOCS
from mcp_support import RawStdio



@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    home = tmp_path_factory.mktemp("cli-help")
    clean = {k: v for k, v in os.environ.items() if not k.startswith("DSH_FS_")}
    clean.update(DSH_FS_STATE_DIR=str(home / "state"), DSH_FS_LOCK_DIR=str(home / "locks"))
    return clean


@pytest.fixture(scope="module")
def entries(env: dict[str, str]) -> dict[str, list[OptionEntry]]:
    """command (``"sessions prune"``) -> its options as its ``--help`` shows them"""
    return {" ".join(command): clikit.option_entries(command, env) for command in clikit.commands(env)}


def test_the_listing_sees_every_command_and_its_options(entries: dict[str, list[OptionEntry]]) -> None:
    assert {"read", "write", "edit", "glob", "grep", "schema", "prompt", "mcp", "demo", "replay",
            "sessions list", "sessions forget", "sessions prune"} <= set(entries)
    profile = {e.name: e for e in entries["read"]}["--profile"]
    assert profile == OptionEntry(
        name="--profile", metavar="[default|reference]",
        help="'default': dsh-fs behaviour; 'reference': byte-exact with the TypeScript reference.",
        envvar="DSH_FS_PROFILE", default="default", required=False,
    )
    limit = {e.name: e for e in entries["mcp"]}["--read-limit"]
    assert (limit.metavar, limit.help, limit.default) == ("N", "Default and maximum lines per read.", "2000")


def test_an_option_is_the_same_on_every_command(entries: dict[str, list[OptionEntry]]) -> None:
    """Same name → same metavar, help, env var and default (the check that would have caught
    ``mcp --profile`` without ``DSH_FS_PROFILE`` and mcp's settings without their defaults)."""
    seen: dict[str, dict[tuple[object, ...], list[str]]] = defaultdict(lambda: defaultdict(list))
    for command, options in entries.items():
        for entry in options:
            seen[entry.name][(entry.metavar, entry.help, entry.envvar, entry.default)].append(command)
    shared = {name: variants for name, variants in seen.items() if sum(len(c) for c in variants.values()) > 1}
    assert {"--profile", "--no-policy", "--read-limit", "--timeout-ms", "--s3", "--endpoint-url", "--tools",
            "--session", "--cwd", "--path"} <= set(shared)
    differing = [
        f"{name}:\n" + "\n".join(f"  {', '.join(commands)}: {variant}" for variant, commands in variants.items())
        for name, variants in sorted(shared.items()) if len(variants) > 1
    ]
    assert not differing, "options that differ between commands:\n" + "\n".join(differing)


def test_every_option_that_takes_a_value_shows_its_default(entries: dict[str, list[OptionEntry]]) -> None:
    missing = [f"{command} {entry.name}" for command, options in entries.items() for entry in options
               if entry.metavar is not None and not entry.required and entry.default is None]
    assert not missing, f"no [default: …] in the help of {missing}"
    assert {e.name: e.default for e in entries["mcp"]}["--timeout-ms"] == "30000"
    assert {e.name: e.default for e in entries["read"]}["--cwd"] == "(the current directory)"


def test_every_environment_variable_is_in_the_docs_table(entries: dict[str, list[OptionEntry]]) -> None:
    shown = {(e.name, e.envvar) for options in entries.values() for e in options if e.envvar}
    assert {("--profile", "DSH_FS_PROFILE"), ("--session", "DSH_FS_SESSION"),
            ("--token-file", "DSH_FS_TOKEN_FILE")} <= shown
    rows = [line for line in (DOCS / "CLI.md").read_text(encoding="utf-8").splitlines() if line.startswith("| `")]
    for option, envvar in shown:
        assert any(f"`{option}" in row and f"`{envvar}`" in row for row in rows), (
            f"docs/CLI.md: add {option} / {envvar} to the table of options and environment variables")


# -- the environment variables act as their options --------------------------------------------

HOME_PATH = "~/dsh-fs-no-such-file.txt"
"""read in the default profile: the home directory (D20), outside the served root; in the
reference profile: a literal ``~`` directory under the root"""


def _expected(root: str, profile: str) -> str:
    if profile == "reference":
        return f'Error: cannot read "{os.path.join(root, "~", "dsh-fs-no-such-file.txt")}": not found'
    home = os.path.join(os.path.expanduser("~"), "dsh-fs-no-such-file.txt")
    return f'Error: cannot resolve "{home}": outside the workspace "{root}"'


@pytest.mark.timeout(60)
@pytest.mark.parametrize(("flags", "environ", "profile"), [
    ([], {}, "default"),
    (["--profile", "reference"], {}, "reference"),
    ([], {"DSH_FS_PROFILE": "reference"}, "reference"),
    (["--profile", "default"], {"DSH_FS_PROFILE": "reference"}, "default"),  # the option wins
], ids=["default", "option", "env", "option-over-env"])
def test_dsh_fs_profile_reaches_the_mcp_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flags: list[str],
                                                environ: dict[str, str], profile: str) -> None:
    root = os.path.realpath(tmp_path)
    monkeypatch.delenv("DSH_FS_PROFILE", raising=False)
    for key, value in environ.items():
        monkeypatch.setenv(key, value)
    with RawStdio(root, *flags) as raw:
        raw.initialize()
        result = raw.request("tools/call", {"name": "read", "arguments": {"file_path": HOME_PATH}})["result"]
    assert result["content"][0]["text"] == _expected(root, profile)


@pytest.mark.parametrize(("environ", "profile"), [({}, "default"), ({"DSH_FS_PROFILE": "reference"}, "reference")])
def test_dsh_fs_profile_reaches_the_tool_commands(tmp_path: Path, env: dict[str, str], environ: dict[str, str],
                                                  profile: str) -> None:
    root = os.path.realpath(tmp_path)
    done = subprocess.run([*clikit.PREFIX, "read", HOME_PATH, "--cwd", root], env={**env, **environ},
                          capture_output=True, text=True, timeout=60)
    expected = _expected(root, profile)
    if profile == "default":  # the command line has no containment root: the home path itself
        expected = f'Error: cannot read "{os.path.join(os.path.expanduser("~"), "dsh-fs-no-such-file.txt")}": not found'
    assert (done.returncode, done.stdout) == (1, expected + "\n"), done.stderr


def test_prompt_follows_no_policy_and_tools(env: dict[str, str]) -> None:
    """``prompt`` takes the options that change what the model is told: without a policy it
    does not claim one (D14); ``--tools`` keeps only the chosen tools' sections."""
    import dsh_fs
    from dsh_fs.core.selection import select_tools

    def prompt(*flags: str) -> str:
        done = subprocess.run([*clikit.PREFIX, "prompt", *flags], env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return done.stdout

    guarded, bare = prompt(), prompt("--no-policy")
    assert guarded == dsh_fs.create_context(root=None).system_prompt.render() + "\n"
    assert bare == dsh_fs.create_context(root=None, policy=False).system_prompt.render() + "\n"
    assert "fs-policy" in guarded and "fs-policy" not in bare
    narrowed = dsh_fs.create_context(root=None)
    select_tools(narrowed, ["read", "grep"])
    assert prompt("--tools", "read,grep") == narrowed.system_prompt.render() + "\n"


def test_schema_follows_tools(env: dict[str, str]) -> None:
    done = subprocess.run([*clikit.PREFIX, "schema", "--tools", "grep,read"], env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert [tool["name"] for tool in json.loads(done.stdout)] == ["grep", "read"]
