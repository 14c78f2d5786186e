"""``python -m dsh_fs.testing.moto_server start|stop`` (what ``scripts/moto-server.sh`` runs):
a second ``start`` with the same pidfile while the first server runs is refused, so ``stop``
never loses track of a server; docs/S3.md's commands ("Testing against the S3 wire protocol")
run as printed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from docskit import DOCS, REPO, code_blocks, shell_env


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dsh_fs.testing.moto_server", *args],
                          capture_output=True, text=True, timeout=120)


def test_a_second_start_is_refused_and_stop_ends_the_first(tmp_path: Any) -> None:
    pidfile = str(tmp_path / "moto.pid")
    started = _cli("start", "--pidfile", pidfile)
    assert started.returncode == 0 and started.stdout.startswith("DSH_FS_S3_ENDPOINT=http://127.0.0.1:"), started
    pid = int(open(pidfile).read())
    try:
        again = _cli("start", "--pidfile", pidfile)
        assert again.returncode == 1 and again.stdout == ""
        assert f"is still running (pid {pid}): stop it first" in again.stderr
        assert int(open(pidfile).read()) == pid
    finally:
        assert _cli("stop", "--pidfile", pidfile).returncode == 0
    assert not os.path.exists(pidfile)
    assert _cli("stop", "--pidfile", pidfile).returncode == 1  # nothing left to stop


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_the_documented_commands_run_as_printed(tmp_path: Path) -> None:
    """The page's block, through one shell in the checkout (the pidfile under the test's own
    directory: ``DSH_FS_MOTO_PIDFILE``, which the script honours): the server starts, the tests
    run against it and pass, ``stop`` ends it."""
    [block] = code_blocks("## Testing against the S3 wire protocol", DOCS / "S3.md", "bash")
    pidfile = tmp_path / "moto.pid"
    env = {**shell_env(tmp_path), "DSH_FS_MOTO_PIDFILE": str(pidfile)}
    script = f"set -e\n{block}test ! -e {pidfile}\n"
    try:
        done = subprocess.run(["bash", "-c", script], cwd=REPO, env=env, capture_output=True, text=True,
                              timeout=1700, stdin=subprocess.DEVNULL)
    finally:
        if pidfile.exists():  # the block failed before its stop: end the server it started
            subprocess.run(["scripts/moto-server.sh", "stop"], cwd=REPO, env=env, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert " passed" in done.stdout.splitlines()[-1] and "failed" not in done.stdout.splitlines()[-1], done.stdout
