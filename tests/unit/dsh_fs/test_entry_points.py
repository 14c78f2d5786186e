"""The repository's two promised commands (README.md's opening ``sh`` block under ``# dsh-fs``) and the CI entry point.

Covers: ``.ci/run`` runs the README's test command verbatim and installs the package exactly
once (that command's own install): CI runs the second command as printed. Not covered: the
first command (run as printed by ``tests/e2e/cli/test_readme_commands.py``).
"""

from __future__ import annotations

from pathlib import Path

from docskit import README, code_blocks, shell_lines

ROOT = Path(__file__).resolve().parents[3]


def _readme_commands() -> list[str]:
    """The commands of the README's opening ``sh`` block (under ``# dsh-fs``), as printed."""
    [block] = code_blocks("# dsh-fs", README, "sh")
    return shell_lines(block)


def test_the_readme_promises_a_demo_and_a_test_command() -> None:
    commands = _readme_commands()
    assert len(commands) == 2
    assert commands[0].endswith("dsh-fs demo") and commands[1].endswith("-m pytest -q")


def test_ci_runs_the_readme_test_command_verbatim_and_installs_once() -> None:
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    lines = [line for line in script.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    test_command = _readme_commands()[1]
    assert lines[-1] == test_command
    assert sum(line.count("pip install") for line in lines) == 1
    assert sum(line.count("python3 -m venv") for line in lines) == 1
