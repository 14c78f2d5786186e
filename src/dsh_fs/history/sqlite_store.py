"""``SqliteHistoryStore``: the durable history of named sessions (``--session NAME``) and HTTP
owners, one SQLite database beside the session store (``history.sqlite3`` in
``session_store.state_dir()``), shared by every process serving a name (docs/HISTORY.md "How
it is stored").

* **Crash-consistent.** ``begin`` stores the before-state's bytes and the pending change in one
  ``IMMEDIATE`` transaction committed with ``synchronous=FULL`` (WAL) before the mutation runs;
  ``complete`` records the version after. A change whose end was never recorded stays pending.
* **Shared.** Steps are numbered per owner in the transaction that makes them (the owner's row
  holds the next number), so processes of one name interleave their steps; an abandoned newest
  step gives its number back (no gap) unless a checkpoint follows it; every read is a fresh
  ``SELECT``.
* **Private.** The database is made as the session store's is (``0600``, in the private state
  directory, never through a symlink: ``session_store.store``'s rules).
* **Bounded.** Kept copies are content-addressed (``blobs``, one row per SHA-256); past an
  owner's byte cap its oldest steps are dropped in the transaction that adds a change, and the
  copies no change refers to any more are deleted.

Every method runs its statements on a worker thread (one connection, one at a time).
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any, Final, TypeVar

import anyio

from ..session_store.store import _enable_wal, _prepare, state_dir
from .model import Before, Checkpoint, FileChange, History, Step
from .store import DEFAULT_MAX_OWNER_BYTES, CallMeta, HistoryStore, Intent

__all__ = ("HISTORY_DB_FILENAME", "SqliteHistoryStore", "forget_history", "history_location", "open_history_database",
           "prune_history")

T = TypeVar("T")

HISTORY_DB_FILENAME: Final = "history.sqlite3"
"""the database file inside ``session_store.state_dir()``"""

SCHEMA_VERSION: Final = 1

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS owners (
        owner BLOB PRIMARY KEY, next_number INTEGER NOT NULL, dropped INTEGER NOT NULL, updated_at REAL NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS steps (
        owner BLOB NOT NULL, number INTEGER NOT NULL, step_key TEXT NOT NULL UNIQUE, tool TEXT NOT NULL,
        call_id TEXT, time REAL NOT NULL, PRIMARY KEY (owner, number))""",
    """CREATE TABLE IF NOT EXISTS changes (
        id INTEGER PRIMARY KEY AUTOINCREMENT, owner BLOB NOT NULL, step INTEGER NOT NULL, op TEXT NOT NULL,
        key BLOB NOT NULL, path BLOB NOT NULL, before_kind TEXT NOT NULL, digest TEXT, size INTEGER,
        mode INTEGER, reason TEXT, old BLOB, new BLOB, before_version BLOB, after_version BLOB,
        after_digest TEXT, dest_key BLOB, dest_path BLOB)""",
    "CREATE INDEX IF NOT EXISTS changes_by_step ON changes (owner, step)",
    "CREATE INDEX IF NOT EXISTS changes_by_digest ON changes (digest)",
    "CREATE TABLE IF NOT EXISTS blobs (digest TEXT PRIMARY KEY, size INTEGER NOT NULL, data BLOB NOT NULL)",
    """CREATE TABLE IF NOT EXISTS checkpoints (
        id TEXT PRIMARY KEY, owner BLOB NOT NULL, name BLOB NOT NULL, step INTEGER NOT NULL, time REAL NOT NULL)""",
)

_BYTES = """SELECT COALESCE(SUM(size), 0) FROM blobs WHERE digest IN
    (SELECT digest FROM changes WHERE owner = ? AND digest IS NOT NULL)"""
_COLLECT = "DELETE FROM blobs WHERE digest = ?1 AND NOT EXISTS (SELECT 1 FROM changes WHERE digest = ?1)"


def _b(text: str | None) -> bytes | None:
    return None if text is None else text.encode("utf-8", "surrogatepass")


def _t(blob: bytes | None) -> str | None:
    return None if blob is None else bytes(blob).decode("utf-8", "surrogatepass")


def history_location() -> tuple[str, bool]:
    """The history database (in ``session_store.state_dir()``), and whether its directory must
    be private (the default location must; an explicit ``$DSH_FS_STATE_DIR`` is trusted, unless
    every user may write it and it is not sticky: ``session_store``'s ``_prepare`` refuses that)."""
    return os.path.join(state_dir(), HISTORY_DB_FILENAME), not os.environ.get("DSH_FS_STATE_DIR")


def _open(path: str, *, private: bool, busy_timeout: float) -> sqlite3.Connection:
    _prepare(path, private=private)
    conn = sqlite3.connect(path, timeout=busy_timeout, isolation_level=None, check_same_thread=False)
    try:
        _enable_wal(conn, busy_timeout)
        conn.execute("PRAGMA synchronous = FULL")
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version == 0:
            conn.execute("BEGIN IMMEDIATE")
            try:
                for statement in _SCHEMA:
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        elif version != SCHEMA_VERSION:
            raise sqlite3.DatabaseError(f"{path}: history schema {version} is not supported (expected {SCHEMA_VERSION})")
    except BaseException:
        conn.close()
        raise
    return conn


def open_history_database(busy_timeout: float = 10.0) -> sqlite3.Connection:
    """A connection to the history database at its usual place (:func:`history_location`, with
    its privacy check), for ``forget_history``/``prune_history`` (``dsh-fs sessions forget|prune``).

    :raises sqlite3.Error: when it cannot be opened, created or read
    :raises OSError: when its directory cannot be used
    """
    path, private = history_location()
    return _open(path, private=private, busy_timeout=busy_timeout)


def _transaction(conn: sqlite3.Connection, work: Callable[[], T]) -> T:
    conn.execute("BEGIN IMMEDIATE")
    try:
        out = work()
        conn.execute("COMMIT")
        return out
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


class SqliteHistoryStore(HistoryStore):
    """Histories in the SQLite database at ``path`` (default: ``history_location()``).

    :param private: the directory must be private to this user (``session_store``'s check)
    :param max_owner_bytes: the bytes of kept copies one owner may refer to
    :param busy_timeout: seconds to wait for another process's lock
    The database is opened at the first use; then (from any method) ``sqlite3.Error``: it
    cannot be opened, created or read; ``OSError``: its directory cannot be used.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *, private: bool | None = None,
                 max_owner_bytes: int = DEFAULT_MAX_OWNER_BYTES, busy_timeout: float = 10.0) -> None:
        if max_owner_bytes < 0:
            raise ValueError("max_owner_bytes must not be negative")
        default, default_private = history_location()
        self.path = os.fspath(path) if path is not None else default
        self.max_owner_bytes = max_owner_bytes
        self._private = default_private if private is None else private
        self._busy_timeout = busy_timeout
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self._closed = False

    def _run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        with self._lock:
            if self._closed:
                raise sqlite3.ProgrammingError("the history store is closed")
            if self._conn is None:  # opened at the first use: a command that changes nothing never opens it
                self._conn = _open(self.path, private=self._private, busy_timeout=self._busy_timeout)
            return work(self._conn)

    async def _call(self, work: Callable[[sqlite3.Connection], T]) -> T:
        return await anyio.to_thread.run_sync(self._run, work)

    # -- recording ---------------------------------------------------------------------------
    async def begin(self, call: CallMeta, intent: Intent, blob: bytes | None) -> int:
        owner = _b(call.owner)
        before = intent.before

        def work(conn: sqlite3.Connection) -> int:
            def inside() -> int:
                now = time.time()
                if blob is not None and before.digest is not None:
                    conn.execute("INSERT OR IGNORE INTO blobs (digest, size, data) VALUES (?, ?, ?)",
                                 (before.digest, len(blob), blob))
                conn.execute("INSERT INTO owners (owner, next_number, dropped, updated_at) VALUES (?, 1, 0, ?) "
                             "ON CONFLICT (owner) DO UPDATE SET updated_at = excluded.updated_at", (owner, now))
                row = conn.execute("SELECT number FROM steps WHERE step_key = ?", (call.step_key,)).fetchone()
                if row is None:
                    number = conn.execute("SELECT next_number FROM owners WHERE owner = ?", (owner,)).fetchone()[0]
                    conn.execute("UPDATE owners SET next_number = ? WHERE owner = ?", (number + 1, owner))
                    conn.execute("INSERT INTO steps (owner, number, step_key, tool, call_id, time) VALUES (?, ?, ?, ?, ?, ?)",
                                 (owner, number, call.step_key, call.tool, call.call_id, call.time))
                else:
                    number = row[0]
                cursor = conn.execute(
                    "INSERT INTO changes (owner, step, op, key, path, before_kind, digest, size, mode, reason, old, new, "
                    "before_version, after_digest, dest_key, dest_path) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (owner, number, intent.op, _b(intent.key), _b(intent.path), before.kind, before.digest, before.size,
                     before.mode, before.reason, _b(before.old), _b(before.new), _b(intent.before_version),
                     intent.after_digest, _b(intent.dest_key), _b(intent.dest_path)))
                self._trim(conn, owner, keep=number)
                return int(cursor.lastrowid or 0)

            return _transaction(conn, inside)

        return await self._call(work)

    def _trim(self, conn: sqlite3.Connection, owner: bytes | None, *, keep: int) -> None:
        while conn.execute(_BYTES, (owner,)).fetchone()[0] > self.max_owner_bytes:
            oldest = conn.execute("SELECT MIN(number) FROM steps WHERE owner = ?", (owner,)).fetchone()[0]
            if oldest is None or oldest == keep:
                return
            digests = [d for (d,) in conn.execute(
                "SELECT DISTINCT digest FROM changes WHERE owner = ? AND step = ? AND digest IS NOT NULL", (owner, oldest))]
            conn.execute("DELETE FROM changes WHERE owner = ? AND step = ?", (owner, oldest))
            conn.execute("DELETE FROM steps WHERE owner = ? AND number = ?", (owner, oldest))
            conn.execute("UPDATE owners SET dropped = MAX(dropped, ?) WHERE owner = ?", (oldest, owner))
            for digest in digests:
                conn.execute(_COLLECT, (digest,))

    async def complete(self, owner: str, change_id: int, after_version: str, after_digest: str | None = None) -> None:
        def work(conn: sqlite3.Connection) -> None:
            conn.execute("UPDATE changes SET after_version = ?, after_digest = COALESCE(?, after_digest) WHERE id = ?",
                         (_b(after_version), after_digest, change_id))

        await self._call(work)

    async def abandon(self, owner: str, change_id: int) -> None:
        def work(conn: sqlite3.Connection) -> None:
            def inside() -> None:
                row = conn.execute("SELECT owner, step, digest FROM changes WHERE id = ?", (change_id,)).fetchone()
                if row is None:
                    return
                who, step, digest = row
                conn.execute("DELETE FROM changes WHERE id = ?", (change_id,))
                if conn.execute("SELECT 1 FROM changes WHERE owner = ? AND step = ?", (who, step)).fetchone() is None:
                    conn.execute("DELETE FROM steps WHERE owner = ? AND number = ?", (who, step))
                    # the newest step, no checkpoint after it: its number goes to the next step (no gap)
                    conn.execute("UPDATE owners SET next_number = ? WHERE owner = ? AND next_number = ? AND NOT EXISTS"
                                 " (SELECT 1 FROM checkpoints WHERE owner = ? AND step >= ?)",
                                 (step, who, step + 1, who, step))
                if digest is not None:
                    conn.execute(_COLLECT, (digest,))

            _transaction(conn, inside)

        await self._call(work)

    # -- reading -------------------------------------------------------------------------------
    async def history(self, owner: str) -> History:
        who = _b(owner)

        def work(conn: sqlite3.Connection) -> History:
            conn.execute("BEGIN")
            try:
                found = conn.execute("SELECT dropped FROM owners WHERE owner = ?", (who,)).fetchone()
                steps = conn.execute("SELECT number, tool, call_id, time FROM steps WHERE owner = ? ORDER BY number",
                                     (who,)).fetchall()
                changes = conn.execute(
                    "SELECT id, step, op, key, path, before_kind, digest, size, mode, reason, old, new, before_version, "
                    "after_version, after_digest, dest_key, dest_path FROM changes WHERE owner = ? ORDER BY id",
                    (who,)).fetchall()
                points = conn.execute("SELECT id, name, step, time FROM checkpoints WHERE owner = ? ORDER BY time, id",
                                      (who,)).fetchall()
                kept = conn.execute(_BYTES, (who,)).fetchone()[0]
            finally:
                conn.execute("COMMIT")
            return _history(owner, found, steps, changes, points, kept)

        return await self._call(work)

    async def blob(self, digest: str) -> bytes | None:
        def work(conn: sqlite3.Connection) -> bytes | None:
            row = conn.execute("SELECT data FROM blobs WHERE digest = ?", (digest,)).fetchone()
            return None if row is None else bytes(row[0])

        return await self._call(work)

    async def checkpoint(self, owner: str, name: str) -> str:
        who = _b(owner)
        point = uuid.uuid4().hex[:12]

        def work(conn: sqlite3.Connection) -> str:
            def inside() -> str:
                row = conn.execute("SELECT next_number FROM owners WHERE owner = ?", (who,)).fetchone()
                step = 0 if row is None else row[0] - 1
                conn.execute("INSERT INTO checkpoints (id, owner, name, step, time) VALUES (?, ?, ?, ?, ?)",
                             (point, who, _b(name), step, time.time()))
                return point

            return _transaction(conn, inside)

        return await self._call(work)

    async def forget(self, owner: str) -> int:
        return await self._call(lambda conn: forget_history(conn, owner))

    async def aclose(self) -> None:
        with self._lock:
            if not self._closed:
                self._closed = True
                if self._conn is not None:
                    self._conn.close()


def _history(owner: str, found: Any, steps: list[Any], changes: list[Any], points: list[Any], kept: int) -> History:
    by_step: dict[int, list[FileChange]] = {}
    for (cid, step, op, key, path, kind, digest, size, mode, reason, old, new, before_version, after_version,
         after_digest, dest_key, dest_path) in changes:
        before = Before(kind=kind, digest=digest, size=size, mode=mode, reason=reason, old=_t(old), new=_t(new))
        by_step.setdefault(step, []).append(FileChange(
            id=cid, op=op, key=_t(key) or "", path=_t(path) or "", before=before, before_version=_t(before_version),
            after_version=_t(after_version), after_digest=after_digest, dest_key=_t(dest_key),
            dest_path=_t(dest_path)))
    names: dict[int, list[str]] = {}
    checkpoints = []
    for pid, name, step, when in points:
        checkpoints.append(Checkpoint(id=pid, name=_t(name) or "", step=step, time=when))
        names.setdefault(step, []).append(_t(name) or "")
    out = tuple(Step(number=n, time=when, tool=tool, owner=owner, call_id=call_id,
                     changes=tuple(by_step.get(n, ())), checkpoints=tuple(names.get(n, ())))
                for n, tool, call_id, when in steps)
    return History(steps=out, checkpoints=tuple(checkpoints), dropped=found[0] if found else 0, bytes=kept)


def forget_history(conn: sqlite3.Connection, owner: str) -> int:
    """Delete the whole history of ``owner`` (its steps, changes, checkpoints, and the copies
    nothing else refers to) in one transaction; the number of steps deleted.

    :raises sqlite3.Error: when the database cannot be written
    """
    who = _b(owner)

    def inside() -> int:
        digests = [d for (d,) in conn.execute(
            "SELECT DISTINCT digest FROM changes WHERE owner = ? AND digest IS NOT NULL", (who,))]
        count = conn.execute("DELETE FROM steps WHERE owner = ?", (who,)).rowcount
        conn.execute("DELETE FROM changes WHERE owner = ?", (who,))
        conn.execute("DELETE FROM checkpoints WHERE owner = ?", (who,))
        conn.execute("DELETE FROM owners WHERE owner = ?", (who,))
        for digest in digests:
            conn.execute(_COLLECT, (digest,))
        return count

    return _transaction(conn, inside)


def prune_history(conn: sqlite3.Connection, older_than: float, *, now: float | None = None) -> list[str]:
    """Delete the histories of owners that recorded nothing for ``older_than`` seconds; their
    names, sorted.

    :raises sqlite3.Error: when the database cannot be written
    """
    cutoff = (time.time() if now is None else now) - older_than
    stale = [_t(o) or "" for (o,) in conn.execute("SELECT owner FROM owners WHERE updated_at < ?", (cutoff,))]
    for owner in stale:
        forget_history(conn, owner)
    return sorted(stale)
