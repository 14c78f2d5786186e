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

import fcntl
import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

__all__ = ("REPO", "crewai_python", "run_program")

REPO = Path(__file__).resolve().parents[1]
VENV = REPO / ".venv-crewai"
_STAMP = VENV / "dsh-fs-built-for"


def _wanted() -> str:
    """What the environment must have been built for: the crewai extra and this Python."""
    extra = re.search(r"^crewai = \[.*\]$", (REPO / "pyproject.toml").read_text(), flags=re.M)
    assert extra is not None, "pyproject.toml has no crewai extra"
    return hashlib.sha256(f"{extra.group(0)}\n{sys.version}".encode()).hexdigest()


def crewai_python() -> str:
    """The CrewAI environment's interpreter, building the environment first if it is missing
    or stale (one builder at a time: a lock file beside it)."""
    wanted = _wanted()
    python = VENV / "bin" / "python"
    with open(REPO / ".venv-crewai.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (python.exists() and _STAMP.exists() and _STAMP.read_text() == wanted):
            subprocess.run([sys.executable, "-m", "venv", "--clear", str(VENV)], check=True)
            built = subprocess.run([str(python), "-m", "pip", "install", "-q", "-e", f"{REPO}[crewai]"],
                                   cwd=REPO, timeout=1500, capture_output=True, text=True)
            assert built.returncode == 0, f"building {VENV} failed:\n{built.stdout[-2000:]}{built.stderr[-4000:]}"
            _STAMP.write_text(wanted)
    return str(python)


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
