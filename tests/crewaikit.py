"""The CrewAI environment for the CrewAI tests (imported as ``crewaikit``; no tests here).

crewai pins ``mcp < 2`` and ``openai < 3``, which the dev environment cannot hold, so its
tests run their programs in a virtual environment of its own: ``.venv-crewai`` at the
repository root, built on first use with ``pip install -e '.[crewai]'`` (about a minute on
this machine, from the package index pip is configured with) and rebuilt when the ``crewai``
extra of pyproject.toml or the Python version changes.

* ``crewai_python()`` — that environment's ``python`` (built if needed);
* ``run_program(argv, home, env=…)`` — run it there with CrewAI's telemetry and tracing off
  and ``HOME`` in a temporary directory (CrewAI writes its state there); returns stdout.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

from clientenv import built_venv

__all__ = ("REPO", "crewai_python", "run_program")

REPO = Path(__file__).resolve().parents[1]
VENV = REPO / ".venv-crewai"


def _wanted() -> str:
    """What the environment must have been built for: the crewai extra and this Python."""
    extra = re.search(r"^crewai = \[.*\]$", (REPO / "pyproject.toml").read_text(), flags=re.M)
    assert extra is not None, "pyproject.toml has no crewai extra"
    return hashlib.sha256(f"{extra.group(0)}\n{sys.version}".encode()).hexdigest()


def crewai_python() -> str:
    """The CrewAI environment's interpreter, building the environment first if it is missing
    or stale (``clientenv.built_venv``)."""
    return built_venv(VENV, ["-e", f"{REPO}[crewai]"], _wanted(), timeout=1500)


def run_program(argv: list[str], home: str, *, env: dict[str, str] | None = None, cwd: str | None = None,
                timeout: float = 600) -> str:
    """Run ``argv`` (after the interpreter) in the CrewAI environment; its stdout.

    :raises AssertionError: the program failed (its stderr is in the message)
    """
    full = {**os.environ, "HOME": home, "CREWAI_DISABLE_TELEMETRY": "true", "OTEL_SDK_DISABLED": "true",
            "CREWAI_TRACING_ENABLED": "false", **(env or {})}
    os.makedirs(home, exist_ok=True)
    done = subprocess.run([crewai_python(), *argv], capture_output=True, text=True, env=full, cwd=cwd,
                          timeout=timeout)
    assert done.returncode == 0, done.stderr[-4000:]
    return done.stdout
