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
import subprocess
import sys
from pathlib import Path

__all__ = ("built_venv", "client_python")

_TOP = Path(__file__).resolve().parents[1]


def built_venv(home: Path, install: list[str], key: str, *, timeout: float = 900) -> str:
    """The ``python`` of the virtual environment at ``home``, built (``python3 -m venv`` +
    ``pip install <install>``) when missing or built for another ``key``; one builder at a time
    (a lock file beside it), so parallel test processes build it once.

    :param install: ``pip install`` arguments (``["-r", file]``, ``["-e", "<repo>[extra]"]``)
    :param key: what the environment must have been built for (a digest of its inputs)
    :raises AssertionError: when it cannot be built (the pip output says why)
    """
    python = home / "bin" / "python"
    stamp = home / ".built-for"
    home.parent.mkdir(exist_ok=True)
    with open(home.with_name(f"{home.name}.lock"), "w") as lock:  # (.venv-crewai.lock, .venv-clients/<name>.lock)
        fcntl.flock(lock, fcntl.LOCK_EX)
        if python.exists() and stamp.exists() and stamp.read_text() == key:
            return str(python)
        for step in ([sys.executable, "-m", "venv", "--clear", str(home)],
                     [str(python), "-m", "pip", "install", "-q", *install]):
            done = subprocess.run(step, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL,
                                  cwd=_TOP)
            assert done.returncode == 0, f"cannot build {home}: {done.stdout[-2000:]}{done.stderr[-4000:]}"
        stamp.write_text(key)
    return str(python)


def client_python(name: str) -> str:
    """The ``python`` of client environment ``name`` (``.venv-clients/<name>``, from
    ``tests/clients/<name>.txt``), built if missing or out of date.

    :raises AssertionError: when the environment cannot be built (the pip output says why)
    """
    requirements = _TOP / "tests" / "clients" / f"{name}.txt"
    key = hashlib.sha256(requirements.read_bytes() + sys.version.encode()).hexdigest()
    return built_venv(_TOP / ".venv-clients" / name, ["-r", str(requirements)], key)
