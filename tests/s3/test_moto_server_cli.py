"""``python -m dsh_fs.testing.moto_server start|stop`` (what ``scripts/moto-server.sh`` runs):
a second ``start`` with the same pidfile while the first server runs is refused, so ``stop``
never loses track of a server."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any


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
