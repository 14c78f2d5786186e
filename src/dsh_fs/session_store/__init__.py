"""Persistent observation owners: the ``--session NAME`` store shared by the ``dsh-fs`` tool
commands and ``dsh-fs mcp`` (stdio), one SQLite database under the user's state directory.

It sits below ``cli`` and ``mcp`` (both use it) and above ``fs_policy`` (it is an
``ObservationStore``) and ``private_dirs`` (the privacy check of its directory). The
policy's listeners stay the only writers of observations. No kernel or SDK import.
"""

from __future__ import annotations

from .store import (
    ABSENT_ROWS_PER_SESSION as ABSENT_ROWS_PER_SESSION,
    DB_FILENAME as DB_FILENAME,
    ROWS_PER_SESSION as ROWS_PER_SESSION,
    SessionStoreError as SessionStoreError,
    SessionSummary as SessionSummary,
    SqliteObservationStore as SqliteObservationStore,
    forget_session as forget_session,
    list_sessions as list_sessions,
    open_database as open_database,
    open_session_store as open_session_store,
    prune_sessions as prune_sessions,
    state_dir as state_dir,
    store_location as store_location,
)

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
