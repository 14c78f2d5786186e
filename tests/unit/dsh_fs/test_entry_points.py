"""The repository's two promised commands (the README's first lines) and the CI entry point.

Covers: ``.ci/run`` runs the README's test command verbatim and installs the package exactly
once (that command's own install). Not covered: running them (CI does; the demo has its own
e2e test, ``tests/e2e/cli/test_demo.py``).
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def _readme_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```sh\n(.*?)```", readme, re.S)
    assert block is not None, "the README starts with a sh block of commands"
    return [line for line in block.group(1).splitlines() if line and not line.startswith("#")]


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
