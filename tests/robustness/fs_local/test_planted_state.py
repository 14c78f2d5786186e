"""Per-user state another user could plant (tracker issue 12, item 7).

* **The lock directory.** Another user who makes ``<tmp>/dsh-fs-<uid>`` first (or plants a
  symlink there, or leaves it writable by others) must not deny every write: the locks move
  to ``$XDG_RUNTIME_DIR/dsh-fs/locks``, else to a fresh private directory, with one warning on
  stderr; writes go on, and the planted directory is left alone.
* **The session store.** Its default directory gets the same checks (a real directory of this
  user, writable by nobody else); the database is never opened through a symlink; a
  directory that is a dangling symlink gets a clear message, not ``[Errno 17] File exists``.
  Each refusal exits 2 with ``cannot open the session store <path>: <why>`` and changes nothing.

Run through the real ``dsh-fs`` command in child processes with their own ``TMPDIR``,
``XDG_RUNTIME_DIR`` and ``XDG_STATE_HOME``. Planting as another owner needs root (the other
cases do not).
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dsh_fs.fs_local import locks as locks_mod
from robustkit import child_env

IS_ROOT = os.geteuid() == 0
OTHER = 65534


def _dsh_fs(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dsh_fs.cli.main", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)


@pytest.fixture
def home(tmp_path: Path) -> dict[str, Any]:
    """A workspace, a private TMPDIR/XDG_RUNTIME_DIR/XDG_STATE_HOME, and the environment for them."""
    for name in ("ws", "tmp", "runtime", "state"):
        (tmp_path / name).mkdir(mode=0o700)
    os.chmod(tmp_path / "tmp", 0o1777)  # a shared /tmp
    env = {k: v for k, v in child_env().items() if not k.startswith("DSH_FS_")}
    env.update(TMPDIR=str(tmp_path / "tmp"), XDG_RUNTIME_DIR=str(tmp_path / "runtime"),
               XDG_STATE_HOME=str(tmp_path / "state"))
    return {"ws": tmp_path / "ws", "tmp": tmp_path / "tmp", "runtime": tmp_path / "runtime",
            "state": tmp_path / "state" / "dsh-fs", "env": env, "base": tmp_path}


PLANTS = ["world-writable", "symlink", "other-owner"]


def _plant(directory: Path, how: str, base: Path) -> None:
    if how == "symlink":
        elsewhere = base / "elsewhere"
        elsewhere.mkdir(mode=0o700, exist_ok=True)
        os.symlink(elsewhere, directory)
        return
    directory.mkdir(mode=0o777)
    os.chmod(directory, 0o777)
    if how == "other-owner":
        if not IS_ROOT:
            pytest.skip("planting a directory as another user needs root")
        os.chown(directory, OTHER, OTHER)
        os.chmod(directory, 0o755)


@pytest.mark.parametrize("runtime", [True, False], ids=["xdg-runtime-dir", "fresh-dir"])
@pytest.mark.parametrize("how", PLANTS)
def test_a_planted_lock_directory_does_not_deny_writes(home: dict[str, Any], how: str, runtime: bool) -> None:
    planted = home["tmp"] / f"dsh-fs-{os.geteuid()}"
    _plant(planted, how, home["base"])
    before = sorted(os.listdir(planted))
    env = dict(home["env"])
    if not runtime:
        del env["XDG_RUNTIME_DIR"]
    for i in range(2):
        done = _dsh_fs("write", f"f{i}.txt", "--content", "x\n", "--no-policy", cwd=home["ws"], env=env)
        assert done.returncode == 0, done.stderr
        assert (home["ws"] / f"f{i}.txt").read_text() == "x\n"
        warnings = [line for line in done.stderr.splitlines() if "lock directory" in line]
        assert len(warnings) == 1, done.stderr  # said once per process
        assert f"the lock directory {planted}/locks is not usable" in warnings[0]
    if runtime:
        moved = home["runtime"] / "dsh-fs" / "locks"
        assert f"using {moved} instead" in warnings[0]
        assert [n for n in os.listdir(moved) if n.endswith(".lock")], "the locks went elsewhere"
    else:
        assert "its locks cover this process only" in warnings[0] and "DSH_FS_LOCK_DIR" in warnings[0]
    assert sorted(os.listdir(planted)) == before  # the planted directory is not touched


def test_a_process_falls_back_once_for_all_its_providers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         caplog: pytest.LogCaptureFixture) -> None:
    planted = tmp_path / "tmp" / "dsh-fs-me"
    planted.mkdir(parents=True)
    os.chmod(planted, 0o777)
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    monkeypatch.delenv("DSH_FS_LOCK_DIR", raising=False)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.setattr(locks_mod, "default_lock_dir", lambda: str(planted / "locks"))
    monkeypatch.setattr(locks_mod, "_moves", {})
    with caplog.at_level(logging.WARNING, logger="dsh_fs"):
        first, second = locks_mod.ProcessLocks(), locks_mod.ProcessLocks()
        fd = first.try_acquire("/a")
        assert fd is not None
        assert second.try_acquire("/a") is None  # the same lock file: they still exclude each other
        first.release(fd)
    assert first.lock_dir == second.lock_dir == str(runtime / "dsh-fs" / "locks")
    assert len([r for r in caplog.records if "lock directory" in r.getMessage()]) == 1


@pytest.mark.parametrize("how", PLANTS)
def test_a_planted_session_store_directory_is_refused(home: dict[str, Any], how: str) -> None:
    _plant(home["state"], how, home["base"])
    done = _dsh_fs("write", "new.txt", "--content", "x\n", "--session", "s", cwd=home["ws"], env=home["env"])
    why = {
        "world-writable": f"{home['state']} may be written by others (mode 0777)",
        "symlink": f"{home['state']} is a symbolic link, not a directory",
        "other-owner": f"{home['state']} belongs to another user (uid {OTHER})",
    }[how]
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (f"Error: cannot open the session store {home['state']}/observations.sqlite3: {why}\n")
    assert not (home["ws"] / "new.txt").exists()
    assert not (home["base"] / "elsewhere" / "observations.sqlite3").exists()


@pytest.mark.parametrize("name", ["observations.sqlite3", "observations.sqlite3-wal", "observations.sqlite3-shm"])
def test_the_database_is_never_opened_through_a_symlink(home: dict[str, Any], name: str) -> None:
    home["state"].mkdir(mode=0o700)
    victim = home["base"] / "victim"
    victim.write_bytes(b"precious\n")
    os.symlink(victim, home["state"] / name)
    done = _dsh_fs("read", "x.txt", "--session", "s", cwd=home["ws"], env=home["env"])
    assert done.returncode == 2, done.stderr
    assert done.stderr == (f"Error: cannot open the session store {home['state']}/observations.sqlite3: "
                           f"{home['state']}/{name} is a symbolic link (the session store is never opened "
                           "through one)\n")
    assert victim.read_bytes() == b"precious\n"


def test_a_dangling_symlink_state_directory_gets_a_clear_message(home: dict[str, Any]) -> None:
    """Also for an explicit ``$DSH_FS_STATE_DIR`` (trusted: it may be a symlink to a directory)."""
    explicit = home["base"] / "explicit"
    os.symlink(home["base"] / "gone", explicit)
    env = dict(home["env"], DSH_FS_STATE_DIR=str(explicit))
    done = _dsh_fs("read", "x.txt", "--session", "s", cwd=home["ws"], env=env)
    assert done.returncode == 2
    assert done.stderr == (f"Error: cannot open the session store {explicit}/observations.sqlite3: "
                           f"{explicit} is a symbolic link to a missing directory\n")
    (home["base"] / "real").mkdir()
    os.unlink(explicit)
    os.symlink(home["base"] / "real", explicit)
    done = _dsh_fs("read", "x.txt", "--session", "s", cwd=home["ws"], env=env)
    assert done.returncode == 1 and "not found" in done.stdout  # the tool ran: a trusted link is followed
    assert (home["base"] / "real" / "observations.sqlite3").exists()
