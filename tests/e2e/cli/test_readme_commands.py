"""The README's first command, run as printed through the shell in a copy of the checkout (what
a clean clone holds: ``pyproject.toml``, ``README.md``, ``LICENSE``, ``src/``): it makes a venv,
installs the package with its ``[mcp]`` extra (the dependencies from the package index, as a
user's install fetches them) and runs ``dsh-fs demo``, which drives a live MCP session.

Not covered here: the README's second command, which CI runs verbatim
(``tests/unit/dsh_fs/test_entry_points.py``); what the demo prints in detail
(``test_demo.py``).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from docskit import README, checkout_copy, code_blocks, shell_env, shell_lines

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]


def test_the_first_command_installs_and_runs_the_demo(tmp_path: Path) -> None:
    [block] = code_blocks("# dsh-fs", README, "sh")
    first, _test_command = shell_lines(block)
    assert "'.[mcp]'" in first and first.endswith("dsh-fs demo"), first
    clone = checkout_copy(tmp_path / "dsh-fs")
    done = subprocess.run(["bash", "-c", first], cwd=clone, env=shell_env(tmp_path), capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, timeout=1500)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "MCP server started" in done.stdout, done.stdout[-3000:]
    assert (clone / ".venv" / "bin" / "dsh-fs").exists()
