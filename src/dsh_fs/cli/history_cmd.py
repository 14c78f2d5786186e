"""``dsh-fs sessions history|rewind|diff NAME``: a named session's history, from the command
line (docs/HISTORY.md "CLI").

The history of ``--session NAME`` (the tool commands, ``dsh-fs mcp --session NAME``) and of an
HTTP deployment's tokens (owner ``http:<agent>``, docs/HISTORY.md "MCP") is kept in SQLite in
the state directory (``history.sqlite_store``), shared by every process, or with ``--history-s3
s3://BUCKET/PREFIX`` in a bucket (``history.s3_store``), shared by every machine: these commands
read and rewind it while servers of the name run. A rewind writes through the local provider (or
the ``--s3`` prefixes the session served) with the history's own guards (never over a file someone else changed since this session's last change
to it) and is itself a step of the session (rewind it to redo).

Exit status: 0 done (a dry run included); 1 the rewind was refused (nothing written: the
refused files and why on stderr) or stopped midway (run it again); 2 bad usage, an unknown
step or checkpoint, or an unusable store.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
import click

from .options import CliFailure, OnceCommand, history_options, s3_options

__all__ = ("diff", "forget_s3_history", "history", "open_history_store", "rewind")

T = TypeVar("T")


class _Point(click.ParamType):
    """``--to``/``--since``: a step number (digits: ``0`` is before the first step) or a
    checkpoint's name or id (anything else but empty)."""

    name = "point"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int | str:
        text = str(value)
        if not text:
            self.fail("give a step number or a checkpoint's name or id", param, ctx)
        return int(text) if text.isascii() and text.isdigit() else text


class _HistoryPath(click.ParamType):
    """``--skip``/``--force``: a file's path (not empty); a relative one is taken from the
    current directory, as the tool commands take theirs."""

    name = "file"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        if not value:
            self.fail("give a file's path as 'dsh-fs sessions history' shows it", param, ctx)
        return os.path.normpath(os.path.join(os.getcwd(), str(value)))


POINT = _Point()
HISTORY_PATH = _HistoryPath()


def open_history_store(history_s3: str | None = None, endpoint_url: str | None = None) -> Any:
    """Where a named session's history is kept: the state directory's SQLite store
    (``history.sqlite_store.SqliteHistoryStore``), or with ``history_s3`` (``--history-s3
    s3://BUCKET/PREFIX``) the bucket's (``history.s3_store.S3HistoryStore``, shared by every
    machine serving the name). The history of ``--session NAME`` (the tool commands, ``dsh-fs
    mcp``) and of an HTTP deployment's tokens, which these commands read and rewind while
    servers run. It opens its database or client at its first use (where ``_with_history``
    reports a failure).

    :param endpoint_url: the S3-compatible service of ``history_s3`` (``None``: AWS)
    """
    if history_s3 is not None:
        from ..history.s3_store import S3HistoryStore, history_place

        bucket, prefix = history_place(history_s3)
        return S3HistoryStore(bucket, prefix=prefix, endpoint_url=endpoint_url)
    from ..history.sqlite_store import SqliteHistoryStore

    return SqliteHistoryStore()


def _with_history(work: Callable[[Any, Any], Awaitable[T]], *, history_s3: str | None = None,
                  s3: tuple[str, ...] = (), endpoint_url: str | None = None) -> T:
    """Run ``work(fs, store)`` on a session's history (``open_history_store``; ``fs``: the
    provider of the files, recorded into ``store``: the local disk, or the ``--s3`` prefixes),
    then close both.

    :raises CliFailure: (exit 2) the store cannot be opened or used, or ``work`` raised
        ``RewindError`` (an unknown step or checkpoint)
    """
    import sqlite3

    from ..fs_s3.errors import S3Failure
    from ..history import HistoryFileSystem, RewindError
    from ..history.sqlite_store import history_location
    from ..providers import open_provider
    from .options import require_s3_credentials

    where = history_s3 if history_s3 is not None else history_location()[0]
    store = open_history_store(history_s3, endpoint_url)
    provider = (open_provider(s3[0], endpoint_url=endpoint_url, roots=s3 if len(s3) > 1 else None) if s3
                else open_provider(os.getcwd(), root=None))
    fs = HistoryFileSystem(provider, store)

    async def run() -> T:
        try:
            if s3 or history_s3 is not None:
                await require_s3_credentials("--s3" if s3 else "--history-s3")
            return await work(fs, store)
        finally:
            await fs.aclose()

    try:
        return anyio.run(run)
    except RewindError as exc:
        raise CliFailure(str(exc)) from None
    except OSError as exc:  # the store opens its database at its first use
        raise CliFailure(f"cannot open the history store {where}: {exc}") from None
    except (sqlite3.Error, S3Failure) as exc:
        raise CliFailure(f"cannot use the history store {where}: {exc}") from None


def forget_s3_history(name: str, history_s3: str, endpoint_url: str | None) -> int:
    """Drop session ``name``'s history kept at ``history_s3`` (``sessions forget NAME
    --history-s3 URL``); the number of steps dropped.

    :raises CliFailure: (exit 2) the bucket cannot be reached
    """
    async def work(fs: Any, store: Any) -> int:
        return int(await store.forget(name))

    return _with_history(work, history_s3=history_s3, endpoint_url=endpoint_url)


async def _known(store: Any, name: str) -> Any:
    """Session ``name``'s history (``history.History``).

    :raises CliFailure: it has none (exit 2)
    """
    found = await store.history(name)
    if not found.steps and not found.dropped:
        raise CliFailure(f"session {name!r} has no history")
    return found


def _chosen_in_plan(found: Any, *, to: int | str | None, last: int | None, skip: tuple[str, ...],
                    force: tuple[str, ...]) -> None:
    """Check that every ``--skip``/``--force`` path (absolute, ``_HistoryPath``) names a file the
    rewind of ``found`` (``history.History``) to ``to``/``last`` would bring back.

    :raises CliFailure: (exit 2) one names no such file (a typo would otherwise skip or force
        nothing)
    :raises RewindError: the point is unknown (``history.rewind.point_of``)
    """
    from ..history.plan import spans
    from ..history.rewind import point_of

    point = point_of(found, to=to, last=last)
    changes = sorted((c for s in found.steps if s.number > point for c in s.changes), key=lambda c: c.id)
    known = {name for span in spans(changes).values() for name in (span.key, span.path)}
    for option, paths in (("--skip", skip), ("--force", force)):
        for path in paths:
            if path not in known:
                raise CliFailure(f"{option} {path}: no file of this rewind (see 'dsh-fs sessions history')")


@click.command(cls=OnceCommand)
@click.argument("name")
@history_options
def history(name: str, history_s3: str | None, endpoint_url: str | None) -> None:
    """Print session NAME's history: one numbered step per changing tool call, oldest first
    (newest last), with its time (UTC), tool and files, and the checkpoints after the step they
    follow."""
    from .history_text import history_lines

    async def work(fs: Any, store: Any) -> Any:
        return await _known(store, name)

    found = _with_history(work, history_s3=history_s3, endpoint_url=endpoint_url)
    for line in history_lines(name, found.steps, checkpoints=found.checkpoints, dropped=found.dropped):
        click.echo(line)


@click.command(cls=OnceCommand)
@click.argument("name")
@click.option("--to", "to", type=POINT, metavar="STEP|CHECKPOINT", default=None,
              show_default="none: give --to or --last",
              help="Bring the files back to their state right after this step (0: before the first) or checkpoint"
              " (its name or id).")
@click.option("--last", "last", type=click.IntRange(min=0), metavar="K", default=None,
              show_default="none: give --to or --last", help="Take back the newest K steps.")
@click.option("--dry-run", "dry_run", is_flag=True, help="Write nothing: print what would be done, with each file's"
              " diff.")
@click.option("--skip-changed", "skip_changed", is_flag=True,
              help="Leave out every file someone else changed since this session's last change to it (instead of"
              " refusing the whole rewind).")
@click.option("--skip", "skip", type=HISTORY_PATH, multiple=True, metavar="FILE", show_default="none",
              help="Leave out this file if someone else changed it (as the history shows its path); repeatable.")
@click.option("--force", "force", type=HISTORY_PATH, multiple=True, metavar="FILE", show_default="none",
              help="Restore this file even though someone else changed it since (their change is replaced; the"
              " rewind's own step keeps it); repeatable.")
@s3_options
def rewind(name: str, to: int | str | None, last: int | None, dry_run: bool, skip_changed: bool, skip: tuple[str, ...],
           force: tuple[str, ...], s3: tuple[str, ...], history_s3: str | None, endpoint_url: str | None) -> None:
    """Bring every file session NAME changed after a step or checkpoint back to its state there:
    files created since are removed, deleted ones come back, moved ones move back. A file someone
    else changed since is never touched: the rewind is refused (nothing written) unless you
    choose per file (--skip-changed, --skip FILE, --force FILE). The rewind is itself a step
    (rewind it to redo)."""
    if (to is None) == (last is None):
        raise click.UsageError("give either --to STEP|CHECKPOINT or --last K")
    from .history_text import rewind_lines

    async def work(fs: Any, store: Any) -> Any:
        from ..history.rewind import rewind_owner

        _chosen_in_plan(await _known(store, name), to=to, last=last, skip=skip, force=force)
        return await rewind_owner(fs, name, to=to, last=last, dry_run=dry_run,
                                  skip_changed=skip_changed, skip=skip, force=force)

    result = _with_history(work, history_s3=history_s3, s3=s3, endpoint_url=endpoint_url)
    out, err = rewind_lines(name, result)
    for line in out:
        click.echo(line)
    for line in err:
        click.echo(line, err=True)
    if result.refused or result.error is not None:
        raise SystemExit(1)


@click.command(cls=OnceCommand)
@click.argument("name")
@click.option("--since", "since", type=POINT, metavar="STEP|CHECKPOINT", required=True,
              help="Show what changed after this step (0: everything) or checkpoint (its name or id).")
@s3_options
def diff(name: str, since: int | str, s3: tuple[str, ...], history_s3: str | None, endpoint_url: str | None) -> None:
    """Print a unified diff, per file session NAME changed after a step or checkpoint, from the
    file's state there to the file as it is now (whoever changed it since)."""
    from .history_text import diff_text

    async def work(fs: Any, store: Any) -> list[str]:
        from ..fs.errors import FsError
        from ..fs.types import Target
        from ..history.plan import spans
        from ..history.rewind import point_of

        found = await _known(store, name)
        point = point_of(found, to=since, last=None)
        changes = sorted((c for s in found.steps if s.number > point for c in s.changes), key=lambda c: c.id)
        texts: list[str] = []
        inner = fs.inner
        for span in spans(changes).values():
            target = Target(key=span.key, display_path=span.path)  # type: ignore[arg-type]
            info = await inner.stat(target)
            now = None
            if info is not None and info.type == "file":
                try:
                    now = await inner.read_bytes(target, max_bytes=fs.max_file_bytes, size=info.size)
                except FsError as err:
                    texts.append(f"{span.path}: cannot be read now ({err})\n")
                    continue
            then: bytes | None = None
            if span.target.kind == "blob":
                then = await store.blob(span.target.digest or "")
                if then is None:
                    texts.append(f"{span.path}: its content at step {point} is no longer kept\n")
                    continue
            elif span.target.kind != "absent":
                texts.append(f"{span.path}: its content at step {point} was not kept"
                             f" ({span.target.reason or 'a big file'})\n")
                continue
            texts.append(diff_text(span.path, then, now, then_label=f"after step {point}"))
        return texts

    for text in _with_history(work, history_s3=history_s3, s3=s3, endpoint_url=endpoint_url):
        if text:
            click.echo(text, nl=False)
