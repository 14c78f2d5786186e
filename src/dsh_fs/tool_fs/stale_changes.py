"""A stale refusal that shows what changed (DEVIATIONS D30): ``with_changes`` gives an
``FS_STALE_VERSION`` error the diff from the text its owner last saw (``SeenTexts``, the
context's ``seen_texts`` service) to the text there now. Used by ``write``, ``edit`` and the
faces (``apply_patch``, both text editors, ``notebook_edit``); ``shared.with_remedy`` then
finishes the message (its first line stays the reference's).

What it costs a refusal: one ``stat`` and one read of the file (at most ``NOW_MAX_BYTES``),
and the diff, built in a worker thread. When the diff is whole, the owner has now seen the
file's current text: it is observed (``fs/observed`` with the version read) and kept, so a
retry built from the diff is guarded by that version.
"""

from __future__ import annotations

from typing import Any

import anyio.to_thread

from ..core.context import Context
from ..fs.errors import FsError, FsErrorCode
from ..fs.events import FS_OBSERVED
from ..fs.filesystem import FileSystem
from ..tool_common.switches import ToolSwitches
from ..fs.types import Target
from .seen import SeenTexts
from .stale_diff import changes_block, lines_of

__all__ = ("NOW_MAX_BYTES", "SERVICE", "saw", "with_changes", "with_changes_at")

SERVICE = "seen_texts"
"""the context service holding the ``SeenTexts`` (provided by the ``tool-fs`` plugin under D30)"""
NOW_MAX_BYTES = 1024 * 1024
"""the largest current file (bytes) read to show what changed; a bigger one gets no diff"""


def saw(ctx: Context, target: Target, version: Any, text: str | None, execution: Any) -> None:
    """The call's owner saw ``text`` whole as ``version`` of ``target`` (a face's view of a
    whole file, the text its write left): kept for a later refusal (``SeenTexts.remember``).
    Nothing without the service (the ``reference`` profile) or a text (``None``). Call it
    before the ``fs/observed`` event of that version."""
    if text is not None and ctx.has(SERVICE):
        getattr(ctx, SERVICE).remember(getattr(execution, "session", None), target.key, str(version), text)


async def with_changes(ctx: Context, fs: FileSystem, target: Target, err: FsError, execution: Any,
                       switches: ToolSwitches) -> FsError:
    """``err`` with ``changes`` (``stale_diff.changes_block``) when it is ``FS_STALE_VERSION``,
    ``switches.stale_diffs`` is on and the owner's last seen text of ``target`` is kept;
    otherwise ``err`` itself (also when the file is gone, not a file, over ``NOW_MAX_BYTES``,
    changes again while it is read, or cannot be read: the refusal stays as it was).

    :param execution: the call's ``ToolExecution`` (its ``session`` is the owner)
    """
    if err.code != FsErrorCode.STALE_VERSION or not switches.stale_diffs or not ctx.has(SERVICE):
        return err
    store: SeenTexts = getattr(ctx, SERVICE)
    owner = getattr(execution, "session", None)
    seen = store.get(owner, target.key)
    if seen is None:
        return err
    signal = getattr(execution, "signal", None)
    try:
        info = await fs.stat(target, signal=signal)
        if info is None or info.type != "file" or info.size is None or info.size > NOW_MAX_BYTES:
            return err
        now = await fs.read_text_at(target, info.version, info=info, signal=signal)
    except FsError:
        return err
    if now is None:
        return err
    changes = await anyio.to_thread.run_sync(changes_block, seen, now, target.display_path)
    if changes is None or len(lines_of(now)) < 2:
        return err  # D30 saves a re-read; a file of one line is re-read as cheaply as its diff
    if changes.whole:  # the owner now knows the current text: a retry is guarded by its version
        store.remember(owner, target.key, str(info.version), now)
        ctx.emit(FS_OBSERVED, target, info.version, execution)
    return FsError(err.message, err.code, cause=err, changes=changes.text)


async def with_changes_at(ctx: Context, fs: FileSystem, path: str, err: FsError, execution: Any,
                          switches: ToolSwitches) -> FsError:
    """``with_changes`` for a call that knows the file by the ``path`` it was given (a face's
    refusal, caught where the target is out of reach): resolved again, as the call resolved it.
    ``err`` itself when it is no stale refusal to explain, or ``path`` does not resolve."""
    if err.code != FsErrorCode.STALE_VERSION or not switches.stale_diffs or not ctx.has(SERVICE):
        return err
    try:
        target = await fs.resolve(path, cwd=getattr(execution, "cwd", None), signal=getattr(execution, "signal", None))
    except FsError:
        return err
    return await with_changes(ctx, fs, target, err, execution, switches)
