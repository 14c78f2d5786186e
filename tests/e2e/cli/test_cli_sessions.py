"""``dsh-fs sessions list|forget|prune`` end to end (tracker issue 13, item 10), in real
subprocesses with ``DSH_FS_STATE_DIR`` in a tmp dir: what ``list`` prints, that ``forget``
makes a later edit of that session need a read again (and leaves other sessions alone), that
``prune`` drops exactly the sessions unused for the given duration, and the usage errors (exit
2). The duration parser itself: ``tests/unit/session_store/test_session_store.py``.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

DB = "observations.sqlite3"


@pytest.fixture
def run(tmp_path: Path):  # type: ignore[no-untyped-def]
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("alpha\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("DSH_FS_")}
    env.update(DSH_FS_STATE_DIR=str(tmp_path / "state"), DSH_FS_LOCK_DIR=str(tmp_path / "locks"))

    def dsh_fs(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "dsh_fs.cli.main", *args], cwd=ws, env=env,
                              capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)

    dsh_fs.db = tmp_path / "state" / DB  # type: ignore[attr-defined]
    return dsh_fs


def _age(db: Path, session: str, seconds: float) -> None:
    """Make ``session``'s observations look ``seconds`` old."""
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE observations SET updated_at = ? WHERE session = ?",
                     (time.time() - seconds, session.encode()))


def test_list_shows_each_session_with_its_count_and_age(run) -> None:  # type: ignore[no-untyped-def]
    done = run("sessions", "list")
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")  # an empty store is made, and empty
    assert run("read", "a.txt", "--session", "beta").returncode == 0
    assert run("read", "a.txt", "--session", "alpha").returncode == 0
    assert run("read", "missing.txt", "--session", "alpha").returncode == 1  # an absence is an observation too
    _age(run.db, "beta", 3 * 86400 + 5)
    done = run("sessions", "list")
    assert (done.returncode, done.stdout) == (0, "alpha\t2\tjust now\nbeta\t1\t3d ago\n")


def test_forget_makes_the_session_read_again_and_spares_the_others(run) -> None:  # type: ignore[no-untyped-def]
    for name in ("s1", "s2"):
        assert run("read", "a.txt", "--session", name).returncode == 0
    done = run("sessions", "forget", "s1")
    assert (done.returncode, done.stdout, done.stderr) == (0, "forgot session 's1' (1 observation)\n", "")
    edit = run("edit", "a.txt", "--old", "alpha", "--new", "beta", "--session", "s1")
    assert edit.returncode == 1 and edit.stdout.startswith('Error: edit requires reading "')
    assert run("edit", "a.txt", "--old", "alpha", "--new", "beta", "--session", "s2").returncode == 0
    again = run("sessions", "forget", "s1")
    assert (again.returncode, again.stdout) == (0, "")
    assert again.stderr == f"dsh-fs: no session 's1' in {run.db}: nothing to forget\n"


def test_prune_forgets_exactly_the_sessions_unused_for_the_duration(run) -> None:  # type: ignore[no-untyped-def]
    for name in ("old", "recent", "older"):
        assert run("read", "a.txt", "--session", name).returncode == 0
    _age(run.db, "old", 31 * 86400)
    _age(run.db, "older", 90 * 86400)
    _age(run.db, "recent", 29 * 86400)
    done = run("sessions", "prune", "--older-than", "30d")
    assert (done.returncode, done.stdout, done.stderr) == (
        0, "forgot session old (1 observation, last used 31d ago)\n"
           "forgot session older (1 observation, last used 90d ago)\n", "")
    assert run("sessions", "list").stdout.splitlines()[0].startswith("recent\t1\t29d ago")
    done = run("sessions", "prune", "--older-than", "4w2d")  # 30 days: nothing left that old
    assert (done.returncode, done.stdout) == (0, "")
    assert done.stderr == f"dsh-fs: no session in {run.db} unused for 30d: nothing to prune\n"


def test_prune_says_what_it_forgot_and_the_duration_it_was_given(run) -> None:  # type: ignore[no-untyped-def]
    assert run("read", "a.txt", "--session", "s1").returncode == 0
    _age(run.db, "s1", 5)
    done = run("sessions", "prune", "--older-than", "1h30m")
    assert (done.returncode, done.stdout, done.stderr) == (
        0, "", f"dsh-fs: no session in {run.db} unused for 1h30m: nothing to prune\n")
    assert run("read", "a.txt", "--session", "two\nlines").returncode == 0
    _age(run.db, "two\nlines", 5)
    done = run("sessions", "prune", "--older-than", "1s")  # a name printed as D22 says (no forged line)
    assert (done.returncode, done.stdout, done.stderr) == (
        0, "forgot session s1 (1 observation, last used just now)\n"
           "forgot session \"two\\nlines\" (1 observation, last used just now)\n", "")


@pytest.mark.parametrize(("args", "message"), [
    (["prune"], "Error: Missing option '--older-than'."),
    (["prune", "--older-than", "30"], "Error: Invalid value for '--older-than': '30' is not a duration: write numbers "
                                      "with units s, m, h, d or w, e.g. 30d, 12h, 1w2d"),
    (["prune", "--older-than", ""], "Error: Invalid value for '--older-than': a duration must not be empty "
                                    "(e.g. 30d, 12h, 1w2d)"),
    (["forget"], "Error: Missing argument 'NAME'."),
    (["drop", "x"], "Error: No such command 'drop'."),
])
def test_usage_errors_exit_2(run, args: list[str], message: str) -> None:  # type: ignore[no-untyped-def]
    done = run("sessions", *args)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines()[-1] == message


def test_an_unusable_store_exits_2(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    run.db.parent.mkdir()
    run.db.write_bytes(b"not a database, just bytes " * 100)
    for args in (["list"], ["forget", "x"], ["prune", "--older-than", "1d"]):
        done = run("sessions", *args)
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr.startswith(f"Error: cannot open the session store {run.db}: "), done.stderr
