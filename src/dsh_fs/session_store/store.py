"""Persistent observations for ``--session NAME`` (the ``dsh-fs`` tool commands and ``dsh-fs mcp``
over stdio): an ``ObservationStore`` whose one bound owner is backed by SQLite.

The reference keeps observations in memory only, so a resumed session must re-read
(REFERENCE-SPEC §3.1). The CLI runs one tool call per process, and per-call MCP clients
(LangChain's MCP adapter, LlamaIndex's ``BasicMCPClient``, the MCP Inspector's CLI) start one
``dsh-fs mcp`` process per call; to let a ``read`` in one process authorize the ``edit`` in
the next, the observations of a *named* session live in a small SQLite database under the
user's state directory (:func:`state_dir`). Several processes may serve one name at once:
they share one observation owner (DEVIATIONS M1).

Guarantees:

* **Durable.** Every observation is written (per key, one UPSERT in an ``IMMEDIATE``
  transaction, ``synchronous=FULL`` in WAL mode) before the tool call that made it returns.
* **Concurrency-safe across processes.** Writers upsert only their own key, so two commands of
  one session that finish together never drop each other's observation; lock contention
  waits up to ``busy_timeout`` seconds — including the one SQLite does not wait for itself:
  processes that open a new database at once and race to switch it to WAL (``_enable_wal``).
* **Shared while running.** The bound owner's observations are read from the database at
  every lookup (one indexed ``SELECT``; readers never wait for a writer in WAL mode), so a
  process sees what another process of the same session recorded a moment ago. Nothing of
  the session is loaded at start (a per-call server starts in the same time whatever the
  session holds); memory holds only this process's own records. A key whose last save here
  failed is answered from memory.
* **Bounded.** A session keeps at most ``max_rows`` observations (``ROWS_PER_SESSION``, or the
  server's ``max_per_owner``) and at most ``max_absent`` of them ``ABSENT``
  (``ABSENT_ROWS_PER_SESSION``: reads of missing files are cheap to make): past either, the
  least recently recorded rows are deleted in the transaction that adds a row, as
  ``ObservationStore.max_per_owner`` forgets in memory. A forgotten observation fails safe (a
  later write or edit of that file needs a read again).
* **Fail-closed.** If saving fails (disk full, database locked for too long), the tool call
  still succeeds (its mutation already happened) and the failure is kept in
  :attr:`SqliteObservationStore.errors` for the caller to report. A lost observation can only
  make a later guarded write/edit fail (``FS_NOT_OBSERVED`` / ``FS_STALE_VERSION``), never
  authorize one.

Both kinds of observation persist: a version, and ``ABSENT`` (a default-profile read found no
file, DEVIATIONS D8), stored as a NULL version. Session names, target keys and versions are
opaque strings; they are stored as UTF-8 BLOBs (``surrogatepass``) so any Python ``str``
(e.g. a path with undecodable bytes) round-trips exactly.

* **Private.** The database is created ``0600`` before SQLite opens it (SQLite gives its
  ``-wal``, ``-shm`` and ``-journal`` the database's mode), and one of an older dsh-fs that
  others may read is made ``0600``, its companions too. The default state directory must be
  private to this user (a real directory, not a symlink, of this user, writable by nobody
  else: ``private_dirs``, the lock directory's check); one of this user that others may
  enter is made ``0700`` (said once on stderr). The database and its companion files are never
  opened through a symlink. An explicit ``$DSH_FS_STATE_DIR`` is trusted, as an explicit lock
  directory is: left as it is (others who may enter it see the file names, not their content),
  unless every user may write it and it is not sticky (refused: anyone could plant or swap the
  database there).

Housekeeping (``dsh-fs sessions``): :func:`list_sessions`, :func:`forget_session`,
:func:`prune_sessions` work on the whole store.

Every lookup and record is synchronous (the policy's listeners record synchronously): a
record costs one committed transaction (an ``fsync``), on the caller's thread.

Not here: what an observation authorizes (``fs_policy``), command-line parsing
(``cli.tool_cmds``, ``cli.sessions_cmd``, ``cli.mcp_cmd``).
"""

from __future__ import annotations

import os
import sqlite3
import stat as stat_mod
import sys
import time
from dataclasses import dataclass
from typing import Final

from ..fs.types import Version
from ..private_dirs import NotPrivate, ensure_private_dir
from ..fs_policy import ABSENT, ObservationStore

__all__ = (
    "ABSENT_ROWS_PER_SESSION",
    "DB_FILENAME",
    "ROWS_PER_SESSION",
    "SessionStoreError",
    "SessionSummary",
    "SqliteObservationStore",
    "forget_session",
    "list_sessions",
    "open_database",
    "open_session_store",
    "prune_sessions",
    "state_dir",
    "store_location",
)

DB_FILENAME: Final = "observations.sqlite3"
"""the database file inside :func:`state_dir`"""

SCHEMA_VERSION: Final = 1

ROWS_PER_SESSION: Final = 10_000
"""default ``max_rows``: observations one session keeps on disk (as ``mcp.options.OBSERVATIONS_PER_OWNER``
keeps in memory)"""

ABSENT_ROWS_PER_SESSION: Final = 1_000
"""default ``max_absent``: ``ABSENT`` observations one session keeps on disk"""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS observations (
    session    BLOB NOT NULL,
    target_key BLOB NOT NULL,
    version    BLOB,            -- NULL: ABSENT (a read found no file, D8)
    updated_at REAL NOT NULL,   -- seconds since the epoch (for housekeeping only)
    PRIMARY KEY (session, target_key)
) WITHOUT ROWID
"""

_INDEXES = (
    "CREATE INDEX IF NOT EXISTS observations_by_age ON observations (session, updated_at)",
    "CREATE INDEX IF NOT EXISTS absences_by_age ON observations (session, updated_at) WHERE version IS NULL",
)
"""for the bounds: the oldest rows of a session, and of its ``ABSENT`` rows (an index changes no
row: a store made by an older dsh-fs gets them on open, and an older dsh-fs ignores them)"""

_EXISTS = "SELECT 1 FROM observations WHERE session = ? AND target_key = ?"
_COUNT = "SELECT COUNT(*) FROM observations WHERE session = ?"
_COUNT_ABSENT = "SELECT COUNT(*) FROM observations WHERE session = ? AND version IS NULL"
_TRIM = """
DELETE FROM observations WHERE session = ?1 AND target_key IN
    (SELECT target_key FROM observations WHERE session = ?1 ORDER BY updated_at, target_key LIMIT ?2)
"""
_TRIM_ABSENT = """
DELETE FROM observations WHERE session = ?1 AND target_key IN
    (SELECT target_key FROM observations WHERE session = ?1 AND version IS NULL ORDER BY updated_at, target_key LIMIT ?2)
"""

_UPSERT = """
INSERT INTO observations (session, target_key, version, updated_at) VALUES (?, ?, ?, ?)
ON CONFLICT (session, target_key) DO UPDATE SET version = excluded.version, updated_at = excluded.updated_at
"""


def state_dir() -> str:
    """The dsh-fs state directory: ``$DSH_FS_STATE_DIR``, else ``$XDG_STATE_HOME/dsh-fs``, else
    ``~/.local/state/dsh-fs`` (the XDG Base Directory default).

    An empty or relative ``$XDG_STATE_HOME`` is ignored, as the XDG specification requires.
    Nothing is created here.
    """
    configured = os.environ.get("DSH_FS_STATE_DIR")
    if configured:
        return os.path.abspath(configured)
    xdg = os.environ.get("XDG_STATE_HOME")
    if xdg and os.path.isabs(xdg):
        return os.path.join(xdg, "dsh-fs")
    return os.path.join(os.path.expanduser("~"), ".local", "state", "dsh-fs")


def store_location() -> tuple[str, bool]:
    """The session store's database file (in :func:`state_dir`), and whether its directory
    must be private: the default location must; an explicit ``$DSH_FS_STATE_DIR`` is trusted."""
    return os.path.join(state_dir(), DB_FILENAME), not os.environ.get("DSH_FS_STATE_DIR")


def _prepare(path: str, *, private: bool) -> None:
    """Make the database's directory (``0700``) and refuse to open the database (it and its
    ``-wal``/``-shm``/``-journal`` companions) through a symlink or as another user's file.

    :raises NotPrivate: ``private`` and the directory is not private to this user; a file
        belongs to another user
    :raises OSError: the directory cannot be made or is not a directory; a file is a symlink
    """
    directory = os.path.dirname(os.path.abspath(path))
    if private:
        ensure_private_dir(directory)
        _closed_to_others(directory)
    else:
        try:
            os.makedirs(directory, mode=0o700, exist_ok=True)
        except FileExistsError:
            pass  # a file, or a symlink to nothing: said below
        if not os.path.isdir(directory):
            what = "a symbolic link to a missing directory" if os.path.islink(directory) else "not a directory"
            raise NotADirectoryError(f"{directory} is {what}")
        _not_open_to_everyone(directory)
    for name in (path, path + "-wal", path + "-shm", path + "-journal"):
        _own_file(name)
    try:  # made 0600 before SQLite opens it: its -wal, -shm and -journal get the same mode
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600))
    except FileExistsError:
        pass
    for name in (path, path + "-wal", path + "-shm", path + "-journal"):
        _private_file(name)


def _not_open_to_everyone(directory: str) -> None:
    """Refuse an explicit state ``directory`` every user may write that is not sticky (as
    ``/tmp`` is): anyone could put their own database or ``-wal`` there before this user's, or
    swap one away, and read or forge the sessions' observations. The default directory has the
    stricter check of ``ensure_private_dir``.

    :raises NotPrivate: ``<dir> may be written by every user (mode 0777) and is not sticky``
    """
    mode = os.stat(directory).st_mode
    if mode & stat_mod.S_IWOTH and not mode & stat_mod.S_ISVTX:
        raise NotPrivate(f"{directory} may be written by every user (mode {stat_mod.S_IMODE(mode):04o}) "
                         "and is not sticky")


def _own_file(name: str) -> None:
    """Refuse a database file (or ``-wal``/``-shm``/``-journal`` companion) ``name`` that is a
    symlink or belongs to another user: in a sticky shared directory (``/tmp``) another user
    may create them first, then read or forge every observation written there.

    :raises PermissionError: ``<name> is a symbolic link (the session store is never opened
        through one)``
    :raises NotPrivate: ``<name> belongs to another user (uid <uid>)``
    """
    try:
        st = os.lstat(name)
    except FileNotFoundError:
        return
    if stat_mod.S_ISLNK(st.st_mode):
        raise PermissionError(f"{name} is a symbolic link (the session store is never opened through one)")
    if st.st_uid != os.geteuid():
        raise NotPrivate(f"{name} belongs to another user (uid {st.st_uid})")


def _private_file(name: str) -> None:
    """Make the file ``name`` (of this user, not a symlink) readable by this user only, when an
    older dsh-fs left it open to others; a missing file or another user's is left alone."""
    try:
        st = os.lstat(name)
    except FileNotFoundError:
        return
    if stat_mod.S_ISREG(st.st_mode) and st.st_uid == os.geteuid() and st.st_mode & 0o077:
        os.chmod(name, 0o600, follow_symlinks=False)


_told: set[str] = set()


def _closed_to_others(directory: str) -> None:
    """Make the private state ``directory`` (checked: a real directory of this user that nobody
    else may write) one nobody else may enter either (``0700``), saying so on stderr the first
    time in this process."""
    mode = stat_mod.S_IMODE(os.lstat(directory).st_mode)
    if not mode & 0o077:
        return
    os.chmod(directory, 0o700, follow_symlinks=False)
    if directory not in _told:
        _told.add(directory)
        sys.stderr.write(f"dsh-fs: the session store directory {directory} could be entered by other users "
                         f"(mode {mode:04o}); it is now 0700\n")


def open_database(path: str, *, private: bool = True, busy_timeout: float = 10.0) -> sqlite3.Connection:
    """A connection to the session store at ``path``, created if missing (WAL, schema checked).

    :param private: the directory must be private to this user (see the module docstring)
    :param busy_timeout: seconds to wait for another process's lock
    :raises sqlite3.Error: when the database cannot be opened, created or read
    :raises OSError: when its directory cannot be used (``NotPrivate`` when not private)
    """
    _prepare(path, private=private)
    conn = sqlite3.connect(path, timeout=busy_timeout, isolation_level=None, check_same_thread=False)
    try:
        _enable_wal(conn, busy_timeout)
        conn.execute("PRAGMA synchronous = FULL")  # a committed observation survives a power cut
        _check_schema(conn, path)
    except BaseException:
        conn.close()
        raise
    return conn


def _check_schema(conn: sqlite3.Connection, path: str) -> None:
    """Create the schema of a new database; refuse an unknown schema version."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version == 0:
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute(_SCHEMA)
            if conn.execute("PRAGMA user_version").fetchone()[0] == 0:
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    elif version != SCHEMA_VERSION:
        raise sqlite3.DatabaseError(
            f"{path}: observation store schema {version} is not supported (expected {SCHEMA_VERSION})"
        )
    if conn.execute("SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name IN "
                    "('observations_by_age', 'absences_by_age')").fetchone()[0] < len(_INDEXES):
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in _INDEXES:
                conn.execute(statement)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise


def _enable_wal(conn: sqlite3.Connection, busy_timeout: float) -> None:
    """Put the database in WAL mode: readers never block the writer. (A filesystem that
    cannot do WAL, without shared memory, keeps the rollback journal: just as correct,
    only slower.)

    Several processes opening a *new* database at once (``dsh-fs read … --session S`` run
    in parallel) all try to switch it: each holds a shared lock and needs an exclusive
    one, and SQLite answers one of them ``SQLITE_BUSY`` at once, without the busy handler
    (waiting could deadlock). So a busy switch is retried with short sleeps, for up to
    ``busy_timeout``; once another process has switched the file, there is nothing to do.

    :raises sqlite3.OperationalError: still busy after ``busy_timeout``, or another failure
    """
    deadline = time.monotonic() + busy_timeout
    delay = 0.001
    while True:
        try:
            if str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower() != "wal":
                conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if not _busy(exc) or time.monotonic() >= deadline:
                raise
        time.sleep(delay)
        delay = min(delay * 2, 0.05)


def _busy(exc: sqlite3.OperationalError) -> bool:
    """Is ``exc`` SQLITE_BUSY (any extended code), i.e. another connection holds a lock?"""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF == sqlite3.SQLITE_BUSY
    return "database is locked" in str(exc)


def _blob(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _text(blob: bytes) -> str:
    return bytes(blob).decode("utf-8", "surrogatepass")


class SqliteObservationStore(ObservationStore):
    """An ``ObservationStore`` whose observations for one owner persist under a session name.

    Load it into the policy with ``ctx.plugin(FsPolicy, store=store)`` and pass ``owner`` as the
    calling session of every tool call. Observations of ``owner`` are written through on every
    :meth:`record` (nothing is loaded at construction); observations of any other owner stay in
    memory, exactly as in the base class.

    Lookups of ``owner`` read the database (what any process recorded for ``name``, up to
    this moment); if the database cannot be read, or this store's last save of that key
    failed, the in-memory copy answers (this store's own records, or what the last
    :meth:`reload` read).

    :param path: the SQLite database file (its directory is created ``0700`` if missing)
    :param name: the session name (any string; the key of the persisted rows)
    :param owner: the ``Session`` object whose observations persist
    :param private: the directory must be private to this user (:func:`open_database`)
    :param busy_timeout: seconds to wait for another process's write lock
    :param max_per_owner: bounds the in-memory observations of every owner, as in
        ``ObservationStore``, and, when given, the session's rows on disk (``max_rows``)
    :param max_rows: the session's rows on disk (default ``max_per_owner``, else
        ``ROWS_PER_SESSION``); past it the least recently recorded are deleted
    :param max_absent: the session's ``ABSENT`` rows on disk (default
        ``ABSENT_ROWS_PER_SESSION``, at most ``max_rows``); past it the least recently
        recorded absences are deleted
    :raises ValueError: for a bound below 1
    :raises sqlite3.Error: when the database cannot be opened, created or read
    :raises OSError: when its directory cannot be used
    """

    def __init__(self, path: str | os.PathLike[str], name: str, *, owner: object, private: bool = True,
                 busy_timeout: float = 10.0, max_per_owner: int | None = None, max_rows: int | None = None,
                 max_absent: int | None = None) -> None:
        super().__init__(max_per_owner=max_per_owner)
        self.max_rows = max_rows if max_rows is not None else max_per_owner or ROWS_PER_SESSION
        self.max_absent = min(self.max_rows, max_absent if max_absent is not None else ABSENT_ROWS_PER_SESSION)
        if min(self.max_rows, self.max_absent) < 1:
            raise ValueError("max_rows and max_absent must be at least 1")
        self._unsaved: set[str] = set()
        self.path = os.fspath(path)
        self.name = name
        self.owner = owner
        self.errors: list[sqlite3.Error] = []
        """failures to save an observation (the observation was kept in memory only)"""
        self._conn = open_database(self.path, private=private, busy_timeout=busy_timeout)

    @property
    def journal_mode(self) -> str:
        """The database's journal mode (``wal`` unless the filesystem cannot do it)."""
        return str(self._conn.execute("PRAGMA journal_mode").fetchone()[0]).lower()

    def reload(self) -> None:
        """Replace the owner's in-memory observations with the rows of ``name``.

        :raises sqlite3.Error: when the database cannot be read
        """
        rows = self._conn.execute(
            "SELECT target_key, version FROM observations WHERE session = ?", (_blob(self.name),)
        ).fetchall()
        loaded = {_text(key): (ABSENT if version is None else Version(_text(version))) for key, version in rows}
        kept = self._by_owner.get(self.owner, {})
        loaded.update({key: kept[key] for key in self._unsaved if key in kept})  # newer than the disk
        self._by_owner[self.owner] = loaded

    def get(self, owner: object | None, key: str) -> Version | object | None:
        """The owner's observation of ``key``: for the bound owner, the database's row (what
        any process of this session recorded last), else the in-memory one; ``None``: none.

        Never raises for a database failure: the in-memory copy answers then (fail-closed: it
        can only be older than the database, or missing).
        """
        if owner is None or owner is not self.owner or key in self._unsaved:
            return super().get(owner, key)
        try:
            row = self._conn.execute(
                "SELECT version FROM observations WHERE session = ? AND target_key = ?", (_blob(self.name), _blob(key))
            ).fetchone()
        except sqlite3.Error:
            return super().get(owner, key)
        if row is None:
            return None
        return ABSENT if row[0] is None else Version(_text(row[0]))

    def record(self, owner: object | None, key: str, observation: Version | object) -> None:
        """Record (overwrite) an observation; the bound owner's is also saved to disk.

        Never raises for a database failure: it is appended to :attr:`errors` instead, and
        :meth:`get` answers that key from memory (fail-closed, see the module docstring).
        """
        super().record(owner, key, observation)  # type: ignore[arg-type]
        if owner is None or owner is not self.owner:
            return
        self._unsaved.add(key)  # until the commit below succeeds
        version = None if observation is ABSENT else _blob(str(observation))
        session, target = _blob(self.name), _blob(key)
        try:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                new = self._conn.execute(_EXISTS, (session, target)).fetchone() is None
                self._conn.execute(_UPSERT, (session, target, version, time.time()))
                if new or version is None:
                    self._trim(session, absent=version is None)
                self._conn.execute("COMMIT")
            except BaseException:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            self.errors.append(exc)
        else:
            self._unsaved.discard(key)

    def _trim(self, session: bytes, *, absent: bool) -> None:
        """Delete the session's least recently recorded rows past ``max_absent`` (after an
        absence was recorded) and past ``max_rows`` (inside the caller's transaction)."""
        conn = self._conn
        if absent:
            over = conn.execute(_COUNT_ABSENT, (session,)).fetchone()[0] - self.max_absent
            if over > 0:
                conn.execute(_TRIM_ABSENT, (session, over))
        over = conn.execute(_COUNT, (session,)).fetchone()[0] - self.max_rows
        if over > 0:
            conn.execute(_TRIM, (session, over))

    def snapshot(self, owner: object) -> dict[str, Version | object]:
        """A copy of everything ``owner`` has observed; for the bound owner, the database's
        rows of ``name`` (memory if the database cannot be read)."""
        if owner is not self.owner:
            return super().snapshot(owner)
        try:
            self.reload()
        except sqlite3.Error:
            pass
        return super().snapshot(owner)

    def forget(self) -> int:
        """Delete every saved observation of ``name`` (and the owner's in-memory ones).

        :return: the number of rows deleted
        :raises sqlite3.Error: when the database cannot be written
        """
        deleted = forget_session(self._conn, self.name)
        self._by_owner[self.owner] = {}
        self._unsaved.clear()
        return deleted

    def close(self) -> None:
        """Close the database connection (idempotent). Later records stay in memory only."""
        self._conn.close()

    def __enter__(self) -> "SqliteObservationStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class SessionStoreError(Exception):
    """Raised by :func:`open_session_store` when the store cannot be opened; ``str(exc)`` is
    ``cannot open the session store <path>: <why>`` (what the command line prints)."""


def open_session_store(name: str, *, owner: object, max_per_owner: int | None = None) -> SqliteObservationStore:
    """The store of session ``name`` at its usual place (:func:`store_location`, with its
    privacy check), bound to ``owner``.

    :param name: the session name (``--session NAME``, ``$DSH_FS_SESSION``)
    :param owner: the ``Session`` whose observations persist under ``name``
    :param max_per_owner: as for :class:`SqliteObservationStore` (also the session's rows on
        disk; default ``ROWS_PER_SESSION``)
    :raises SessionStoreError: when it cannot be opened (``sqlite3.Error``, ``OSError`` inside)
    """
    path, private = store_location()
    try:
        return SqliteObservationStore(path, name, owner=owner, private=private, max_per_owner=max_per_owner)
    except (sqlite3.Error, OSError) as exc:
        raise SessionStoreError(f"cannot open the session store {path}: {exc}") from exc


# -- housekeeping (dsh-fs sessions) -----------------------------------------------------------

@dataclass(frozen=True, slots=True)
class SessionSummary:
    """One named session in the store."""

    name: str
    observations: int
    """files it has observed (a version or an absence)"""
    last_used: float
    """when it last recorded an observation (seconds since the epoch)"""


def list_sessions(conn: sqlite3.Connection) -> list[SessionSummary]:
    """Every session in the store, by name (code-point order).

    :raises sqlite3.Error: when the database cannot be read
    """
    rows = conn.execute(
        "SELECT session, COUNT(*), MAX(updated_at) FROM observations GROUP BY session"
    ).fetchall()
    return sorted((SessionSummary(_text(name), count, last) for name, count, last in rows), key=lambda s: s.name)


def forget_session(conn: sqlite3.Connection, name: str) -> int:
    """Delete every observation of session ``name``; the number deleted (0: no such session).

    :raises sqlite3.Error: when the database cannot be written
    """
    return conn.execute("DELETE FROM observations WHERE session = ?", (_blob(name),)).rowcount


def prune_sessions(conn: sqlite3.Connection, older_than: float, *, now: float | None = None) -> list[str]:
    """Delete the sessions that recorded nothing for ``older_than`` seconds (all their
    observations, in one transaction); their names, sorted.

    :raises sqlite3.Error: when the database cannot be written
    """
    cutoff = (time.time() if now is None else now) - older_than
    conn.execute("BEGIN IMMEDIATE")
    try:
        stale = [_text(name) for (name,) in conn.execute(
            "SELECT session FROM observations GROUP BY session HAVING MAX(updated_at) < ?", (cutoff,)
        ).fetchall()]
        conn.executemany("DELETE FROM observations WHERE session = ?", [(_blob(name),) for name in stale])
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return sorted(stale)
