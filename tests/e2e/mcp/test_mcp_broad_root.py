"""``dsh-fs mcp`` started from ``/`` or the home directory without ``--root`` (as GUI clients
often start servers) warns on stderr, naming ``--root``; from a project directory, or with
``--root``, it says nothing of the kind."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp")


def _stderr(cwd: str, home: str, *flags: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DSH_FS_")}
    env["HOME"] = home
    done = subprocess.run([sys.executable, "-m", "dsh_fs.cli.main", "mcp", *flags], cwd=cwd, env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr  # stdin at EOF: the stdio server ends at once
    return done.stderr


def test_serving_the_disk_or_home_without_root_warns(tmp_path: Path) -> None:
    home = os.path.realpath(tmp_path / "home")
    project = os.path.join(home, "project")
    os.makedirs(project)
    disk = _stderr("/", home)
    assert "dsh-fs mcp: warning: no --root given, so the current directory / is served: the whole disk" in disk
    assert "give --root DIR" in disk
    in_home = _stderr(home, home)
    assert f"the current directory {home} is served: your whole home directory" in in_home
    assert "--root" not in _stderr(project, home)
    assert "--root" not in _stderr(home, home, "--root", project)
