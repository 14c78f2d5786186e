"""Virtual environments for MCP *clients* that cannot share ours (imported as ``clientenv``;
no tests here).

LangChain's MCP adapter needs ``mcp<2``, while dsh-fs needs ``mcp>=2.3``: a user runs it in
an environment of its own and starts ``dsh-fs mcp`` as a command, and so do the tests.
``client_python(name)`` is the interpreter of ``.venv-clients/<name>`` at the top of the
checkout, built once from ``tests/clients/<name>.txt`` (``python3 -m venv`` + ``pip install
-r``; rebuilt when the requirements change), under a file lock so parallel test processes
build it once. A failure to build fails the test that needs it (never a skip).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import subprocess
import sys
from pathlib import Path

__all__ = ("client_python",)

_TOP = Path(__file__).resolve().parents[1]


def client_python(name: str) -> str:
    """The ``python`` of client environment ``name``, built if missing or out of date.

    :raises AssertionError: when the environment cannot be built (the pip output says why)
    """
    requirements = _TOP / "tests" / "clients" / f"{name}.txt"
    digest = hashlib.sha256(requirements.read_bytes()).hexdigest()
    home = _TOP / ".venv-clients" / name
    python = home / "bin" / "python"
    stamp = home / ".requirements-sha256"
    home.parent.mkdir(exist_ok=True)
    with open(home.parent / f".{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if python.exists() and stamp.exists() and stamp.read_text() == digest:
            return str(python)
        for step in (["python3", "-m", "venv", "--clear", str(home)],
                     [str(python), "-m", "pip", "install", "-q", "-r", str(requirements)]):
            done = subprocess.run(step, capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL)
            assert done.returncode == 0, f"cannot build the {name} client environment: {done.stdout}{done.stderr}"
        stamp.write_text(digest)
    return str(python)
