"""The ``--session`` store is bounded and private (``session_store.store``; docs/SESSIONS.md).

Bounded: ``read``s of absent paths added ~250 rows a second, never removed, and every later
per-call server loaded the whole session at start (50,000 rows: 1.2–3.6 s and ~440 MB). Now a
session keeps at most ``max_rows`` rows and ``max_absent`` absences, the least recently recorded
deleted first, and nothing is loaded at start.

Private: the database and its ``-wal``/``-shm`` were created 0644, so in a hand-made 0755 state
directory any local user read every session name, every path its agents read and version tokens
carrying a content-hash prefix. Now the files are 0600 (older ones made so), and a default state
directory others may enter is made 0700 (said once on stderr).
"""

from __future__ import annotations

import os
import sqlite3
import stat
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

import dsh_fs
from dsh_fs import Session
from dsh_fs.fs.types import Version
from dsh_fs.fs_policy import ABSENT, FsPolicy
from dsh_fs.private_dirs import NotPrivate
from dsh_fs.session_store import (
    ABSENT_ROWS_PER_SESSION,
    DB_FILENAME,
    ROWS_PER_SESSION,
    SqliteObservationStore,
    open_database,
    open_session_store,
)


def rows(db: str, session: str = "s") -> list[tuple[str, bytes | None]]:
    with sqlite3.connect(db) as conn:
        found = conn.execute("SELECT target_key, version FROM observations WHERE session = ? ORDER BY updated_at",
                             (session.encode(),)).fetchall()
    return [(bytes(k).decode(), None if v is None else bytes(v)) for k, v in found]


def mode(path: str | Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


# -- bounded ------------------------------------------------------------------------------------

def test_a_session_keeps_its_newest_rows_and_absences(tmp_path: Path) -> None:
    db = str(tmp_path / DB_FILENAME)
    owner = Session()
    store = SqliteObservationStore(db, "s", owner=owner, private=False, max_rows=20, max_absent=5)
    for i in range(12):
        store.record(owner, f"/w/missing{i}", ABSENT)
    kept = rows(db)
    assert [key for key, _ in kept] == [f"/w/missing{i}" for i in range(7, 12)]  # the 5 newest absences
    for i in range(30):
        store.record(owner, f"/w/f{i}", Version(f"v{i}"))
        if i == 10:
            store.record(owner, "/w/f0", Version("v0b"))  # re-recorded: newest again
    kept = rows(db)
    assert len(kept) == 20 and all(version is not None for _, version in kept)  # absences are oldest here
    assert kept[-1][0] == "/w/f29" and "/w/f1" not in dict(kept) and "/w/f12" in dict(kept)
    assert store.get(owner, "/w/f1") is None and store.get(owner, "/w/f29") == Version("v29")  # fail-safe
    store.record(owner, "/w/f29", ABSENT)  # a present row turned absent counts against the absences
    assert rows(db)[-1] == ("/w/f29", None)
    other = SqliteObservationStore(db, "other", owner=owner, private=False, max_rows=20, max_absent=5)
    other.record(owner, "/w/x", ABSENT)
    assert len(rows(db)) == 20 and len(rows(db, "other")) == 1  # each session has its own bound


def test_the_defaults_and_a_servers_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DSH_FS_STATE_DIR", str(tmp_path))
    plain = open_session_store("a", owner=Session())
    assert (plain.max_rows, plain.max_absent) == (ROWS_PER_SESSION, ABSENT_ROWS_PER_SESSION) == (10_000, 1_000)
    server = open_session_store("b", owner=Session(), max_per_owner=300)
    assert (server.max_rows, server.max_absent) == (300, 300)
    with pytest.raises(ValueError):
        SqliteObservationStore(str(tmp_path / "x.sqlite3"), "c", owner=Session(), private=False, max_rows=0)


def test_reads_of_missing_files_through_the_policy_stay_bounded(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    db = str(tmp_path / DB_FILENAME)
    session = Session(ws)
    store = SqliteObservationStore(db, "s", owner=session, private=False, max_rows=40, max_absent=8)

    async def main() -> None:
        ctx = dsh_fs.create_context(cwd=ws, policy=False)
        ctx.plugin(FsPolicy, store=store)
        for i in range(30):
            result = await ctx.tools.execute("read", {"file_path": f"nope{i}.txt"}, session=session)
            assert result.is_error
        (ws / "real.txt").write_text("x\n")
        assert not (await ctx.tools.execute("read", {"file_path": "real.txt"}, session=session)).is_error

    anyio.run(main)
    kept = rows(db)
    assert len([k for k, v in kept if v is None]) == 8 and kept[-1][0].endswith("/real.txt")


def test_nothing_of_the_session_is_loaded_at_start(tmp_path: Path) -> None:
    """50,000 rows of one session: opening its store reads none of them (memory stays below
    what holding them takes), and a lookup still finds any of them."""
    db = str(tmp_path / DB_FILENAME)
    conn = open_database(db, private=False)
    now = time.time()
    conn.execute("BEGIN")
    conn.executemany("INSERT INTO observations VALUES (?, ?, ?, ?)",
                     ((b"big", f"/w/some/long/dir/file{i:06d}.txt".encode(), f"v-{i:060d}".encode(), now - 50_000 + i)
                      for i in range(50_000)))
    conn.execute("COMMIT")
    conn.close()
    owner = Session()
    tracemalloc.start()
    try:
        store = SqliteObservationStore(db, "big", owner=owner, private=False)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000, peak  # 50,000 rows held take ~15 MB
    assert store.get(owner, "/w/some/long/dir/file012345.txt") == Version(f"v-{12345:060d}")
    assert store.snapshot(Session()) == {}
    store.record(owner, "/w/new.txt", Version("v"))  # the first new row trims the session to its bound
    assert len(rows(db, "big")) == ROWS_PER_SESSION and rows(db, "big")[-1][0] == "/w/new.txt"


# -- private ------------------------------------------------------------------------------------

def test_the_database_and_its_companions_are_made_0600(tmp_path: Path, umask_022: None) -> None:
    db = str(tmp_path / DB_FILENAME)
    owner = Session()
    store = SqliteObservationStore(db, "s", owner=owner, private=False)
    store.record(owner, "/w/a", Version("v"))
    reader = sqlite3.connect(db)  # a second connection keeps the -wal and -shm in place
    reader.execute("SELECT COUNT(*) FROM observations").fetchone()
    made = sorted(os.listdir(tmp_path))
    assert made == [DB_FILENAME, DB_FILENAME + "-shm", DB_FILENAME + "-wal"], made
    assert {name: mode(tmp_path / name) for name in made} == dict.fromkeys(made, 0o600)
    reader.close()
    store.close()


def test_an_older_store_open_to_others_is_made_0600(tmp_path: Path, umask_022: None) -> None:
    db = str(tmp_path / DB_FILENAME)
    sqlite3.connect(db).close()  # as an older dsh-fs left it: 0644
    Path(db + "-wal").write_bytes(b"")
    os.chmod(db, 0o644)
    os.chmod(db + "-wal", 0o644)
    store = SqliteObservationStore(db, "s", owner=Session(), private=False)
    assert (mode(db), mode(db + "-wal")) == (0o600, 0o600)
    store.close()


def test_a_default_state_directory_others_may_enter_is_made_0700(tmp_path: Path, umask_022: None) -> None:
    xdg = tmp_path / "state"
    (xdg / "dsh-fs").mkdir(parents=True)
    os.chmod(xdg / "dsh-fs", 0o755)  # made by hand
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("secret path\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("DSH_FS_")}
    env.update(XDG_STATE_HOME=str(xdg), DSH_FS_LOCK_DIR=str(tmp_path / "locks"))

    def read() -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "dsh_fs.cli.main", "read", "a.txt", "--session", "s"], cwd=ws,
                              env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)

    first = read()
    assert first.returncode == 0, first.stderr
    assert first.stderr == (f"dsh-fs: the session store directory {xdg}/dsh-fs could be entered by other users "
                            "(mode 0755); it is now 0700\n")
    assert mode(xdg / "dsh-fs") == 0o700
    assert all(mode(xdg / "dsh-fs" / name) == 0o600 for name in os.listdir(xdg / "dsh-fs")
               if name.startswith(DB_FILENAME))
    assert read().stderr == ""  # private now: nothing more to say


def test_an_explicit_state_directory_is_trusted_its_files_private(tmp_path: Path, umask_022: None,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    explicit = tmp_path / "shared"
    explicit.mkdir(mode=0o755)
    monkeypatch.setenv("DSH_FS_STATE_DIR", str(explicit))
    owner = Session()
    store = open_session_store("s", owner=owner)
    store.record(owner, "/w/a", Version("v"))
    store.close()
    assert mode(explicit) == 0o755 and mode(explicit / DB_FILENAME) == 0o600


def test_an_explicit_state_directory_everyone_may_write_is_refused_unless_sticky(tmp_path: Path,
                                                                                  umask_022: None) -> None:
    """Anyone could plant or swap the database in a ``0777`` directory: refused, nothing made
    there, exit 2 with the reason; a sticky one (``1777``, as ``/tmp``) is used."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("x\n")
    open_dir, sticky = tmp_path / "open", tmp_path / "sticky"
    for directory, bits in ((open_dir, 0o777), (sticky, 0o1777)):
        directory.mkdir()
        os.chmod(directory, bits)

    def read(state: Path) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("DSH_FS_")}
        env.update(DSH_FS_STATE_DIR=str(state), DSH_FS_LOCK_DIR=str(tmp_path / "locks"))
        return subprocess.run([sys.executable, "-m", "dsh_fs.cli.main", "read", "a.txt", "--session", "s"], cwd=ws,
                              env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)

    refused = read(open_dir)
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.endswith(f"cannot open the session store {open_dir}/{DB_FILENAME}: {open_dir} may be "
                                   "written by every user (mode 0777) and is not sticky\n"), refused.stderr
    assert os.listdir(open_dir) == []
    used = read(sticky)
    assert used.returncode == 0, used.stderr
    assert mode(sticky) == 0o1777 and mode(sticky / DB_FILENAME) == 0o600


@pytest.mark.parametrize("planted", ["", "-wal", "-shm", "-journal"])
def test_a_database_file_another_user_made_first_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            planted: str) -> None:
    """In a sticky shared directory (``1777``, as ``/tmp``) another user may create the database
    or one of its companions before this user does, then read or forge what is written there:
    such a file is refused, and nothing is written to it. (The planted file is this test's own,
    made another user's by the uid the store compares it with.)"""
    sticky = tmp_path / "sticky"
    sticky.mkdir()
    os.chmod(sticky, 0o1777)
    path = sticky / DB_FILENAME
    (sticky / (DB_FILENAME + planted)).write_bytes(b"")
    me = os.geteuid()
    monkeypatch.setattr(os, "geteuid", lambda: me + 1)
    with pytest.raises(NotPrivate) as refused:
        open_database(str(path), private=False)
    assert str(refused.value) == f"{path}{planted} belongs to another user (uid {me})"
    assert sorted(os.listdir(sticky)) == [DB_FILENAME + planted]
    assert (sticky / (DB_FILENAME + planted)).read_bytes() == b""
