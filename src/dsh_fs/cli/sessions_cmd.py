"""``dsh-fs sessions list|forget|prune``: housekeeping of the ``--session`` store (and
``history|rewind|diff``: a session's history, ``history_cmd``).

The store (``dsh_fs.session_store``) keeps every named session's observations until told otherwise; these
commands show them, drop one, or drop those unused for a while. They never touch a file of
the workspace. Exit status: 0 done (``forget`` of an unknown name included: nothing to do is
said on stderr); 2 bad usage or an unusable store (message on stderr).
"""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Callable
from typing import Any, TypeVar

import click

from .options import CliFailure, OnceCommand, history_options

__all__ = ("DURATION", "duration_text", "parse_duration", "sessions")

F = TypeVar("F", bound=Callable[..., Any])

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_PART = re.compile(r"([0-9]+)([smhdw])")


def parse_duration(text: str) -> int:
    """Seconds in a duration written as numbers with units, largest first or not: ``30d``,
    ``12h``, ``1w2d``, ``90m``, ``45s`` (units ``s m h d w``; no sign, no fraction, no spaces).

    :raises ValueError: with a message that says what is wrong
    """
    if not text:
        raise ValueError("a duration must not be empty (e.g. 30d, 12h, 1w2d)")
    seconds, at = 0, 0
    for match in _PART.finditer(text):
        if match.start() != at:
            break
        seconds += int(match.group(1)) * _UNITS[match.group(2)]
        at = match.end()
    if at != len(text):
        raise ValueError(f"{text!r} is not a duration: write numbers with units s, m, h, d or w, e.g. 30d, 12h, 1w2d")
    return seconds


class _Duration(click.ParamType):
    name = "duration"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        try:
            return parse_duration(str(value))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


DURATION = _Duration()
"""a ``click`` type for :func:`parse_duration` (the value is in seconds)"""


def _with_store(action: Callable[[sqlite3.Connection, str], None]) -> None:
    """Open the session store (its usual place and checks), run ``action(conn, path)``, close it.

    :raises click.ClickException: (exit 2) when the store cannot be opened or used
    """
    from ..session_store import open_database, store_location

    path, private = store_location()
    try:
        conn = open_database(path, private=private)
    except Exception as exc:  # sqlite3.Error, OSError
        raise CliFailure(f"cannot open the session store {path}: {exc}") from None
    try:
        action(conn, path)
    except sqlite3.Error as exc:
        raise CliFailure(f"cannot use the session store {path}: {exc}") from None
    finally:
        conn.close()


R = TypeVar("R")


def _on_history(action: Callable[[sqlite3.Connection], R]) -> R:
    """Run ``action`` on the history database (``history.sqlite_store``, beside the store: the
    histories of named sessions and HTTP tokens), then close it.

    :raises click.ClickException: (exit 2) when it cannot be opened or used
    """
    from ..history.sqlite_store import history_location, open_history_database

    path = history_location()[0]
    try:
        conn = open_history_database()
    except (sqlite3.Error, OSError) as exc:
        raise CliFailure(f"cannot open the history store {path}: {exc}") from None
    try:
        return action(conn)
    except sqlite3.Error as exc:
        raise CliFailure(f"cannot use the history store {path}: {exc}") from None
    finally:
        conn.close()


def duration_text(seconds: int) -> str:
    """A number of seconds as :func:`parse_duration` reads it, in days, hours, minutes and
    seconds, largest first: ``30d``, ``1h30m``, ``1s`` (``0s`` for nothing)."""
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        if seconds >= size:
            parts.append(f"{seconds // size}{unit}")
            seconds %= size
    return "".join(parts) or "0s"


def _ago(seconds: float) -> str:
    """``5m ago``, ``3h ago``, ``2d ago`` (rounded down; ``just now`` under a minute)."""
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit} ago"
    return "just now"


@click.group()
def sessions() -> None:
    """List and clean up the --session store; show, rewind and diff a session's history.

    The store is SQLite under $DSH_FS_STATE_DIR, else $XDG_STATE_HOME/dsh-fs, else
    ~/.local/state/dsh-fs. Forgetting a session drops what it observed (a later write or edit
    in it must read the file again) and its history (its steps can no longer be rewound); no
    file is touched.
    """


@sessions.command(name="list", cls=OnceCommand)
def list_() -> None:
    """Print one line per session: NAME, files observed, last used (tab-separated)."""
    from ..tool_common.shown import shown_name
    from ..session_store import list_sessions

    def action(conn: sqlite3.Connection, path: str) -> None:
        now = time.time()
        for found in list_sessions(conn):
            click.echo(f"{shown_name(found.name)}\t{found.observations}\t{_ago(max(0.0, now - found.last_used))}")

    _with_store(action)


@sessions.command(cls=OnceCommand)
@click.argument("name")
@history_options
def forget(name: str, history_s3: str | None, endpoint_url: str | None) -> None:
    """Forget session NAME: drop everything it has observed, and its history."""
    from ..session_store import forget_session

    from ..history.sqlite_store import forget_history

    def action(conn: sqlite3.Connection, path: str) -> None:
        deleted = forget_session(conn, name)
        if history_s3 is not None:
            from .history_cmd import forget_s3_history

            steps = forget_s3_history(name, history_s3, endpoint_url)
        else:
            steps = _on_history(lambda history: forget_history(history, name))
        if deleted or steps:
            more = f", {steps} history step{'s' if steps != 1 else ''}" if steps else ""
            click.echo(f"forgot session {name!r} ({deleted} observation{'s' if deleted != 1 else ''}{more})")
        else:
            click.echo(f"dsh-fs: no session {name!r} in {path}: nothing to forget", err=True)

    _with_store(action)


@sessions.command(cls=OnceCommand)
@click.option("--older-than", "older_than", type=DURATION, required=True, metavar="DURATION",
              help="Forget sessions unused for at least this long: 30d, 12h, 1w2d (units s, m, h, d, w).")
def prune(older_than: int) -> None:
    """Forget every session that observed nothing for --older-than, and every history that
    recorded nothing for as long; one line per session forgotten (its name, observations and
    when it was last used)."""
    from ..tool_common.shown import shown_name
    from ..history.sqlite_store import prune_history
    from ..session_store import list_sessions, prune_sessions

    def action(conn: sqlite3.Connection, path: str) -> None:
        now = time.time()
        known = {found.name: found for found in list_sessions(conn)}
        pruned = prune_sessions(conn, older_than, now=now)
        histories = set(_on_history(lambda history: prune_history(history, older_than, now=now)))
        for name in pruned:
            found = known.get(name)
            also = " and its history" if name in histories else ""
            if found is None:  # recorded between the two looks: said without its figures
                click.echo(f"forgot session {shown_name(name)}{also}")
                continue
            count = found.observations
            click.echo(f"forgot session {shown_name(name)} ({count} observation{'s' if count != 1 else ''}, "
                       f"last used {_ago(max(0.0, now - found.last_used))}){also}")
        for name in sorted(histories - set(pruned)):
            click.echo(f"forgot the history of session {shown_name(name)}")
        if not pruned and not histories:
            click.echo(f"dsh-fs: no session in {path} unused for {duration_text(older_than)}: nothing to prune",
                       err=True)

    _with_store(action)


def _add_history_commands() -> None:
    from .history_cmd import diff, history, rewind

    for command in (history, rewind, diff):
        sessions.add_command(command)


_add_history_commands()
