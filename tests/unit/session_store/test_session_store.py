"""Unit tests for ``dsh_fs.session_store``: the persistent observation store behind ``--session``.

Covers: the state directory rules, round trips of both kinds of observation (a version and
``ABSENT``, DEVIATIONS D8), session and owner isolation, durability (rows are committed
before ``record`` returns), WAL mode, several processes writing one session at once, fail-closed
behaviour when saving fails, and the store driving the real policy + tools across "processes"
(a fresh context, session object and store per step, as the CLI does).

Not covered here: the command line itself (``tests/e2e/cli/test_cli.py``).
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dsh_fs.session_store import DB_FILENAME, SqliteObservationStore, state_dir
from dsh_fs.core.context import Context
from dsh_fs.core.session import Session
from dsh_fs.fs.types import Version
from dsh_fs.fs_local import LocalFileSystem
from dsh_fs.fs_policy import ABSENT, FsPolicy
from dsh_fs.tool_fs import ToolFs


@pytest.fixture
def db(tmp_path) -> str:
    return str(tmp_path / "state" / DB_FILENAME)


def _rows(path: str) -> list[tuple[bytes, bytes, bytes | None]]:
    with sqlite3.connect(path) as conn:
        return sorted(conn.execute("SELECT session, target_key, version FROM observations").fetchall())


# -- state_dir ------------------------------------------------------------------------------


def test_state_dir_prefers_dsh_fs_state_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("DSH_FS_STATE_DIR", str(tmp_path / "explicit"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    assert state_dir() == str(tmp_path / "explicit")


def test_state_dir_uses_xdg_state_home(monkeypatch, tmp_path):
    monkeypatch.delenv("DSH_FS_STATE_DIR", raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    assert state_dir() == str(tmp_path / "xdg" / "dsh-fs")


@pytest.mark.parametrize("xdg", [None, "", "relative/dir"])
def test_state_dir_falls_back_to_home(monkeypatch, tmp_path, xdg):
    monkeypatch.delenv("DSH_FS_STATE_DIR", raising=False)
    if xdg is None:
        monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    else:
        monkeypatch.setenv("XDG_STATE_HOME", xdg)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert state_dir() == str(tmp_path / "home" / ".local" / "state" / "dsh-fs")


# -- the store --------------------------------------------------------------------------------


def test_creates_private_directory_and_wal_database(db):
    owner = Session()
    with SqliteObservationStore(db, "s", owner=owner) as store:
        assert store.journal_mode == "wal"
    assert os.stat(os.path.dirname(db)).st_mode & 0o777 == 0o700
    with sqlite3.connect(db) as conn:  # WAL is a property of the file, seen by any connection
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_version_and_absence_survive_a_new_store(db):
    first = Session()
    with SqliteObservationStore(db, "s", owner=first) as store:
        store.record(first, "/k/present", Version("v1"))
        store.record(first, "/k/absent", ABSENT)
        assert store.errors == []
    second = Session()  # a new process: a new session object under the same name
    with SqliteObservationStore(db, "s", owner=second) as store:
        assert store.get(second, "/k/present") == "v1"
        assert store.get(second, "/k/absent") is ABSENT
        assert store.get(second, "/k/never") is None
        assert store.snapshot(second) == {"/k/present": "v1", "/k/absent": ABSENT}


def test_record_overwrites_per_key(db):
    owner = Session()
    with SqliteObservationStore(db, "s", owner=owner) as store:
        store.record(owner, "/k", Version("v1"))
        store.record(owner, "/k", ABSENT)
        store.record(owner, "/other", Version("o1"))
        store.record(owner, "/other", Version("o2"))
    assert _rows(db) == [(b"s", b"/k", None), (b"s", b"/other", b"o2")]
    with SqliteObservationStore(db, "s", owner=Session()) as store:
        assert store.snapshot(store.owner) == {"/k": ABSENT, "/other": "o2"}


def test_record_is_committed_before_it_returns(db):
    owner = Session()
    with SqliteObservationStore(db, "s", owner=owner) as store:
        store.record(owner, "/k", Version("v1"))
        assert _rows(db) == [(b"s", b"/k", b"v1")]  # another connection sees it while we are open


def test_loading_reads_only_the_named_session(db):
    a, b = Session(), Session()
    with SqliteObservationStore(db, "alpha", owner=a) as store:
        store.record(a, "/k", Version("va"))
    with SqliteObservationStore(db, "beta", owner=b) as store:
        assert store.get(b, "/k") is None
        store.record(b, "/k", Version("vb"))
    with SqliteObservationStore(db, "alpha", owner=Session()) as store:
        assert store.snapshot(store.owner) == {"/k": "va"}


def test_other_owners_stay_in_memory(db):
    owner, stranger = Session(), Session()
    with SqliteObservationStore(db, "s", owner=owner) as store:
        store.record(stranger, "/k", Version("v"))
        store.record(None, "/n", Version("v"))
        assert store.get(stranger, "/k") == "v"
        assert store.get(owner, "/k") is None
    assert _rows(db) == []


def test_any_python_string_round_trips(db):
    name = "sess\udcff-ü"
    key = "/tmp/caf\udce9/\U0001f600"
    version = "1:2:\ud800"
    owner = Session()
    with SqliteObservationStore(db, name, owner=owner) as store:
        store.record(owner, key, Version(version))
    with SqliteObservationStore(db, name, owner=Session()) as store:
        assert store.snapshot(store.owner) == {key: version}


def test_forget_deletes_only_that_session(db):
    a = Session()
    with SqliteObservationStore(db, "alpha", owner=a) as store:
        store.record(a, "/k", Version("v"))
    b = Session()
    with SqliteObservationStore(db, "beta", owner=b) as store:
        store.record(b, "/k", Version("v"))
        assert store.forget() == 1
        assert store.get(b, "/k") is None
    assert _rows(db) == [(b"alpha", b"/k", b"v")]


def test_a_failed_save_is_reported_not_raised_and_kept_in_memory(db):
    owner = Session()
    store = SqliteObservationStore(db, "s", owner=owner)
    store.close()
    store.record(owner, "/k", Version("v"))  # must not raise: the mutation already happened
    assert store.get(owner, "/k") == "v"
    assert len(store.errors) == 1 and isinstance(store.errors[0], sqlite3.Error)
    assert _rows(db) == []


def test_a_locked_database_times_out_into_errors(db):
    owner = Session()
    with SqliteObservationStore(db, "s", owner=owner, busy_timeout=0.05) as store:
        blocker = sqlite3.connect(db, isolation_level=None)
        try:
            blocker.execute("BEGIN IMMEDIATE")
            store.record(owner, "/k", Version("v"))
            assert store.errors and "locked" in str(store.errors[0])
            blocker.execute("ROLLBACK")
        finally:
            blocker.close()
        store.record(owner, "/k", Version("v2"))  # the lock is gone: saved again
    assert _rows(db) == [(b"s", b"/k", b"v2")]


def test_unknown_schema_version_is_refused(db):
    os.makedirs(os.path.dirname(db))
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA user_version = 99")
    with pytest.raises(sqlite3.DatabaseError, match="schema 99"):
        SqliteObservationStore(db, "s", owner=Session())


class _BusyWalSwitch:
    """A connection whose first ``busy`` switches to WAL fail as SQLite fails one of several
    connections racing to switch a new database: ``SQLITE_BUSY`` at once."""

    def __init__(self, conn: sqlite3.Connection, busy: int, errorcode: int = sqlite3.SQLITE_BUSY) -> None:
        self._conn, self.busy, self.errorcode, self.attempts = conn, busy, errorcode, 0

    def execute(self, sql: str, *args: object) -> sqlite3.Cursor:
        if sql == "PRAGMA journal_mode = WAL":
            self.attempts += 1
            if self.busy:
                self.busy -= 1
                exc = sqlite3.OperationalError("database is locked" if self.errorcode == sqlite3.SQLITE_BUSY else "disk I/O error")
                exc.sqlite_errorcode = self.errorcode
                raise exc
        return self._conn.execute(sql, *args)

    def __getattr__(self, name: str) -> object:
        return getattr(self._conn, name)


def _patch_connect(monkeypatch, busy: int, errorcode: int = sqlite3.SQLITE_BUSY) -> list[_BusyWalSwitch]:
    made: list[_BusyWalSwitch] = []
    real = sqlite3.connect

    def connect(*args: object, **kwargs: object) -> _BusyWalSwitch:
        made.append(_BusyWalSwitch(real(*args, **kwargs), busy, errorcode))
        return made[-1]

    monkeypatch.setattr(sqlite3, "connect", connect)
    return made


def test_a_busy_switch_to_wal_is_retried(db, monkeypatch):
    """Processes opening a new database at once race to switch it to WAL, and SQLite answers
    the losers SQLITE_BUSY without waiting (its busy handler could deadlock there): the store
    retries, so a parallel ``dsh-fs read --session`` never fails to open it (exit 2)."""
    made = _patch_connect(monkeypatch, busy=3)
    with SqliteObservationStore(db, "s", owner=Session()) as store:
        assert store.journal_mode == "wal"
    assert made[0].attempts == 4


def test_a_switch_to_wal_busy_for_longer_than_the_timeout_fails(db, monkeypatch):
    _patch_connect(monkeypatch, busy=10**9)
    with pytest.raises(sqlite3.OperationalError, match="database is locked"):
        SqliteObservationStore(db, "s", owner=Session(), busy_timeout=0.05)


def test_other_failures_of_the_switch_to_wal_are_not_retried(db, monkeypatch):
    made = _patch_connect(monkeypatch, busy=1, errorcode=sqlite3.SQLITE_IOERR)
    with pytest.raises(sqlite3.OperationalError, match="disk I/O error"):
        SqliteObservationStore(db, "s", owner=Session())
    assert made[0].attempts == 1


def test_stores_opening_a_new_database_at_once_all_succeed(tmp_path):
    """The race itself, on real SQLite: six connections open one new database together, many
    times over (before the retry, about one round in a hundred had a loser)."""
    import threading

    for round_ in range(20):
        path = str(tmp_path / f"r{round_}" / DB_FILENAME)
        barrier = threading.Barrier(6)
        failures: list[BaseException] = []

        def open_one(index: int) -> None:
            barrier.wait()
            try:
                owner = Session()
                with SqliteObservationStore(path, "many", owner=owner) as store:
                    store.record(owner, f"/f{index}", Version("v"))
            except BaseException as exc:  # noqa: BLE001 - reported below
                failures.append(exc)

        threads = [threading.Thread(target=open_one, args=(i,)) for i in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert failures == []
        assert len(_rows(path)) == 6


_WORKER = textwrap.dedent(
    """
    import sys
    from dsh_fs.session_store import SqliteObservationStore
    from dsh_fs.core.session import Session
    db, worker, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    owner = Session()
    store = SqliteObservationStore(db, "shared", owner=owner, busy_timeout=30)
    for i in range(count):
        store.record(owner, f"/w{worker}/k{i}", f"v{worker}.{i}")
    store.close()
    sys.exit(1 if store.errors else 0)
    """
)


def test_processes_writing_one_session_at_once_lose_nothing(db):
    workers, count = 6, 25
    procs = [
        subprocess.Popen([sys.executable, "-c", _WORKER, db, str(w), str(count)], stderr=subprocess.PIPE)
        for w in range(workers)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
    with SqliteObservationStore(db, "shared", owner=Session()) as store:
        seen = store.snapshot(store.owner)
    assert seen == {f"/w{w}/k{i}": f"v{w}.{i}" for w in range(workers) for i in range(count)}


# -- with the real policy and tools ------------------------------------------------------------


def _step(db: str, name: str, ws: str, tool: str, args: dict, profile: str = "default") -> tuple[bool, str]:
    """One CLI-like invocation: fresh context, fresh session object, fresh store."""
    session = Session(cwd=ws, id=name)
    with SqliteObservationStore(db, name, owner=session) as store:
        ctx = Context(profile=profile)
        ctx.plugin(LocalFileSystem, cwd=ws, lock_dir=os.path.join(os.path.dirname(db), "locks"))
        ctx.plugin(FsPolicy, store=store)
        ctx.plugin(ToolFs)
        result = anyio.run(lambda: ctx.tools.execute(tool, args, session=session))
        assert store.errors == []
    return result.is_error, result.text


def test_read_in_one_step_authorizes_edit_in_the_next(db, tmp_path):
    ws = str(tmp_path / "ws")
    os.makedirs(ws)
    path = os.path.join(ws, "a.txt")
    with open(path, "w") as handle:
        handle.write("one\ntwo\n")
    assert _step(db, "s", ws, "read", {"file_path": "a.txt"})[0] is False
    assert _step(db, "s", ws, "edit", {"file_path": "a.txt", "old_string": "two", "new_string": "2"}) == (
        False,
        f"The file {path} has been updated successfully.",
    )
    # the edit recorded its own new version: a second edit needs no read
    assert _step(db, "s", ws, "edit", {"file_path": "a.txt", "old_string": "one", "new_string": "1"})[0] is False
    with open(path) as handle:
        assert handle.read() == "1\n2\n"
    # another session name has observed nothing
    assert _step(db, "t", ws, "edit", {"file_path": "a.txt", "old_string": "1", "new_string": "x"}) == (
        True,
        f'Error: edit requires reading "{path}" first — read the file, then retry',
    )


def test_a_change_between_steps_is_stale(db, tmp_path):
    ws = str(tmp_path / "ws")
    os.makedirs(ws)
    path = os.path.join(ws, "a.txt")
    with open(path, "w") as handle:
        handle.write("one\n")
    _step(db, "s", ws, "read", {"file_path": "a.txt"}, profile="reference")
    with open(path, "w") as handle:
        handle.write("changed by someone else\n")
    assert _step(db, "s", ws, "write", {"file_path": "a.txt", "content": "mine\n"}, profile="reference") == (
        True,
        f'Error: cannot write "{path}": file changed since it was read',
    )
    with open(path) as handle:
        assert handle.read() == "changed by someone else\n"


def test_a_persisted_absence_lets_write_create_and_edit_report_not_found(db, tmp_path):
    ws = str(tmp_path / "ws")
    os.makedirs(ws)
    path = os.path.join(ws, "gone.txt")
    with open(path, "w") as handle:
        handle.write("x\n")
    _step(db, "s", ws, "read", {"file_path": "gone.txt"})
    os.unlink(path)
    assert _step(db, "s", ws, "read", {"file_path": "gone.txt"}) == (True, f'Error: cannot read "{path}": not found')
    assert _step(db, "s", ws, "edit", {"file_path": "gone.txt", "old_string": "x", "new_string": "y"}) == (
        True,
        f'Error: cannot edit "{path}": not found',
    )
    assert _step(db, "s", ws, "write", {"file_path": "gone.txt", "content": "back\n"})[0] is False
    with open(path) as handle:
        assert handle.read() == "back\n"


# -- housekeeping (dsh-fs sessions) ---------------------------------------------------------------

def test_list_forget_and_prune_work_on_the_whole_store(db):
    from dsh_fs.session_store import forget_session, list_sessions, open_database, prune_sessions

    for name, keys in (("b", ["/x"]), ("a", ["/x", "/y"]), ("\udcff odd", ["/z"])):
        with SqliteObservationStore(db, name, owner=(owner := Session())) as store:
            for key in keys:
                store.record(owner, key, Version("v1"))
    conn = open_database(db)
    try:
        conn.execute("UPDATE observations SET updated_at = 100 WHERE session = ?", (b"b",))
        assert [(s.name, s.observations) for s in list_sessions(conn)] == [("a", 2), ("b", 1), ("\udcff odd", 1)]
        assert prune_sessions(conn, 60, now=200) == ["b"]
        assert prune_sessions(conn, 60, now=200) == []
        assert forget_session(conn, "a") == 2 and forget_session(conn, "a") == 0
        assert [s.name for s in list_sessions(conn)] == ["\udcff odd"]
    finally:
        conn.close()


@pytest.mark.parametrize(("text", "seconds"), [("0s", 0), ("45s", 45), ("90m", 5400), ("12h", 43200), ("30d", 2592000),
                                               ("1w2d", 777600), ("2d1w", 777600), ("1h30m", 5400)])
def test_durations(text, seconds):
    from dsh_fs.cli.sessions_cmd import parse_duration

    assert parse_duration(text) == seconds


@pytest.mark.parametrize(("seconds", "text"), [(0, "0s"), (1, "1s"), (5400, "1h30m"), (2592000, "30d"),
                                               (777600, "9d"), (90061, "1d1h1m1s")])
def test_durations_are_written_as_they_are_read(seconds, text):
    from dsh_fs.cli.sessions_cmd import duration_text, parse_duration

    assert duration_text(seconds) == text and parse_duration(text) == seconds


@given(st.integers(min_value=0, max_value=10**9))
def test_every_duration_written_reads_back(seconds):
    from dsh_fs.cli.sessions_cmd import duration_text, parse_duration

    assert parse_duration(duration_text(seconds)) == seconds


@pytest.mark.parametrize("text", ["", "30", "d", "1.5h", "-1d", "1 d", "1y", "1D", "1d ", "+1d", "1d2"])
def test_bad_durations_say_what_is_wrong(text):
    from dsh_fs.cli.sessions_cmd import parse_duration

    with pytest.raises(ValueError) as caught:
        parse_duration(text)
    assert ("must not be empty" if not text else f"{text!r} is not a duration") in str(caught.value)


# -- several stores of one session open at once (dsh-fs mcp --session, DEVIATIONS M1) ------------


def test_a_store_sees_what_another_store_of_its_session_records_while_both_are_open(db):
    first, second = Session(), Session()
    with SqliteObservationStore(db, "s", owner=first) as a, SqliteObservationStore(db, "s", owner=second) as b:
        assert b.get(second, "/k") is None
        a.record(first, "/k", Version("v1"))
        assert b.get(second, "/k") == "v1"  # not only what b found when it opened
        b.record(second, "/k", ABSENT)
        assert a.get(first, "/k") is ABSENT
        assert a.snapshot(first) == {"/k": ABSENT}
        with SqliteObservationStore(db, "other", owner=Session()) as c:
            assert c.get(c.owner, "/k") is None


def test_a_key_whose_save_failed_is_answered_from_memory(db, monkeypatch):
    owner = Session()
    with SqliteObservationStore(db, "s", owner=owner, busy_timeout=0.05) as store:
        store.record(owner, "/k", Version("v1"))
        blocker = sqlite3.connect(db, isolation_level=None)
        try:
            blocker.execute("BEGIN IMMEDIATE")
            store.record(owner, "/k", Version("v2"))  # the save times out: the disk keeps v1
            assert store.errors
            assert store.get(owner, "/k") == "v2"  # what this process last saw
            assert store.snapshot(owner) == {"/k": "v2"}
        finally:
            blocker.execute("ROLLBACK")
            blocker.close()
        store.record(owner, "/k", Version("v3"))  # saved again: the disk answers once more
        assert _rows(db) == [(b"s", b"/k", b"v3")] and store.get(owner, "/k") == "v3"
