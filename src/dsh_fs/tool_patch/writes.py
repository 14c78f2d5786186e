"""The write phase of ``apply_patch``: a checked plan written through the seam
(docs/design/EDITING-FACES-DESIGN.md §6.2 step 5; DEVIATIONS E10).

Order. The patch's first change is written alone, under the call's abort signal: an abort is
honoured only before the first write is done, never between two (a call without a signal has
nothing to honour: its first change goes with the others). Then the remaining in-place updates
are written one at a time while most writes so far took less than ``QUICK_WRITE_S`` (a fast
disk: the local provider then writes a small file on its event loop thread, and worker threads
side by side would cost more CPU than the ``fsync`` s they overlap save), and once half of them
or more took longer, side by side, at most ``WRITE_AT_ONCE`` at a time; the changes that add,
remove or rename a name (create, delete, move) — and updates bigger than ``SIDE_BY_SIDE_MAX``
— are written one after another, in patch order, beside them. An update replaces the bytes of
a file that stays where it is, under its own guard, so it depends on no other change of the
patch (each file is touched once, the planner checks that); changes of names keep the order
the patch gives them, since two of them may make or empty the same directory (two files added
in a new one). Each write is still one atomic, durable write of one file (the provider's:
temporary file, ``fsync``, rename, ``fsync`` of the directory, A3) with its guard checked
inside its lock; side by side, the disk commits their ``fsync`` s together (bench/RESULTS.md,
the ``apply_patch`` rows: the same fsyncs side by side are the durable floor).

Failure. Once a write fails, no write that has not begun begins; the writes under way finish.
The error is the failure first in patch order, then what was written and what was not, each
in patch order (a moved file whose rename is done but not its new text shows as renamed).
``fs/observed`` is emitted after each write as it completes.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import anyio

from ..core.context import Context
from ..core.session import ToolExecution
from ..fs.errors import FsError
from ..fs.events import FS_OBSERVED
from ..core.signal import AbortSignal
from ..tool_common.switches import ToolSwitches
from ..fs.types import CreateIfAbsent, DeleteIntent, RenameIntent, ReplaceIfVersion, Target, Version
from ..patch import FileChange
from ..tool_fs.shared import with_remedy
from ..tool_fs.stale_changes import saw

__all__ = ("QUICK_WRITE_S", "SIDE_BY_SIDE_MAX", "WRITE_AT_ONCE", "WriteStep", "write_steps")

WRITE_AT_ONCE = 16
"""in-place updates of one patch written at the same time (after its first change)"""

QUICK_WRITE_S = 0.002
"""a write that takes less than this (seconds) is quick: while most of a patch's are, its
in-place updates are written one at a time (see the module docstring): a small write costs
1–1.5 ms of CPU in a worker thread (the hop, and the GIL handed back and forth at each system
call) against 0.3–0.4 ms on the event loop thread (bench/RESULTS.md, the ``apply_patch`` rows)"""

SIDE_BY_SIDE_MAX = 1024 * 1024
"""the largest new text (characters) an update may have to be written side by side with
others; a bigger one waits its turn with the name changes, so the bytes several writes hold at
once (each reads the old file and encodes the new one) stay bounded"""

_State = Literal["pending", "renamed", "done", "failed"]


@dataclass(frozen=True, slots=True, kw_only=True)
class WriteStep:
    """One change of a checked plan, with what the seam needs to write it.

    :param change: the planned change (``kind``, texts, display paths)
    :param target: the file the operation names
    :param guard: the version the change was planned from (``None`` for a create)
    :param dest: a move's destination (``None`` otherwise)
    """

    change: FileChange
    target: Target
    guard: Version | None = None
    dest: Target | None = None

    @property
    def in_place(self) -> bool:
        """An update that neither moves nor changes a name: independent of every other step."""
        return self.change.kind == "update" and self.dest is None


class _Progress:
    """The state of each step (index = patch order), and the first failure."""

    def __init__(self, count: int) -> None:
        self.states: list[_State] = ["pending"] * count
        self.errors: dict[int, FsError] = {}
        self.made = 0
        """writes so far (done or failed)"""
        self.slow = 0
        """of them, those that took ``QUICK_WRITE_S`` or more"""

    @property
    def quick(self) -> bool:
        """Did at most half the writes so far take ``QUICK_WRITE_S`` or more (their median
        is quick: a lone stall of a busy disk does not count; a slow first write does)?"""
        return 2 * self.slow <= self.made

    @property
    def stopped(self) -> bool:
        return bool(self.errors)


async def write_steps(ctx: Context, execution: ToolExecution, steps: Sequence[WriteStep], *,
                      switches: ToolSwitches) -> tuple[FileChange, ...]:
    """Write every step (see the module docstring); shielded from cancellation once called.

    :param steps: the plan in patch order, every check passed
    :param switches: the profile's switches (D9 remedies on a failure)
    :return: the changes, in patch order (all of them)
    :raises FsError: a write failed; its code, then the ``The patch was applied in part.
        Written:`` / ``No files were modified.`` and ``Not written:`` rows (E10)
    """
    progress = _Progress(len(steps))
    signal = execution.signal
    with anyio.CancelScope(shield=True):
        if steps and signal is not None:  # alone: an abort is honoured until its rename, then never
            await _write_one(ctx, execution, steps, 0, progress, signal)
        first = 0 if signal is None else 1
        if not progress.stopped and len(steps) > first:
            rest = range(first, len(steps))
            side = {i for i in rest if steps[i].in_place and len(steps[i].change.after or "") <= SIDE_BY_SIDE_MAX}
            ordered = [i for i in rest if i not in side]  # name changes and big updates, one at a time
            limiter = anyio.CapacityLimiter(WRITE_AT_ONCE)

            async def update(index: int) -> None:
                async with limiter:
                    if not progress.stopped:
                        await _write_one(ctx, execution, steps, index, progress, None)

            async def updates(indices: list[int]) -> None:
                at = 0
                while at < len(indices) and progress.quick and not progress.stopped:  # one at a time
                    await update(indices[at])
                    at += 1
                async with anyio.create_task_group() as side_by_side:  # the rest (none once stopped)
                    for index in indices[at:]:
                        side_by_side.start_soon(update, index)

            async def in_order() -> None:
                for index in ordered:
                    if progress.stopped:
                        return
                    await _write_one(ctx, execution, steps, index, progress, None)

            async with anyio.create_task_group() as tg:
                if ordered:
                    tg.start_soon(in_order)
                tg.start_soon(updates, sorted(side))
    if progress.errors:
        raise _partial(steps, progress, switches)
    return tuple(step.change for step in steps)


async def _write_one(ctx: Context, execution: ToolExecution, steps: Sequence[WriteStep], index: int,
                     progress: _Progress, signal: AbortSignal | None) -> None:
    """Write step ``index``, recording its outcome in ``progress`` (never raises an ``FsError``)."""
    step = steps[index]
    change, target, fs = step.change, step.target, execution.fs or ctx.fs  # the sandbox view, if any
    started = time.monotonic()
    try:
        if change.kind == "create":
            written = await fs.write_text(target, change.after or "", CreateIfAbsent(), signal=signal)
            saw(ctx, target, written.version, written.after, execution)  # D30
            ctx.emit(FS_OBSERVED, target, written.version, execution)
        elif change.kind == "delete":
            assert step.guard is not None
            await fs.delete(target, DeleteIntent(step.guard), signal=signal)
            ctx.emit(FS_OBSERVED, target, None, execution)
        elif step.dest is not None:
            assert step.guard is not None
            moved = await fs.rename(target, step.dest, RenameIntent(step.guard), signal=signal)
            ctx.emit(FS_OBSERVED, target, None, execution)
            ctx.emit(FS_OBSERVED, step.dest, moved.version, execution)
            progress.states[index] = "renamed"
            if change.after != change.before:  # D4 keeps the moved file's BOM
                written = await fs.write_text(step.dest, change.after or "", ReplaceIfVersion(moved.version))
                ctx.emit(FS_OBSERVED, step.dest, written.version, execution)
        else:
            assert step.guard is not None
            written = await fs.write_text(target, change.after or "", ReplaceIfVersion(step.guard), signal=signal)
            saw(ctx, target, written.version, written.after, execution)  # D30
            ctx.emit(FS_OBSERVED, target, written.version, execution)
    except FsError as err:
        progress.errors[index] = err
        if progress.states[index] == "pending":
            progress.states[index] = "failed"
        return
    finally:
        progress.made += 1
        progress.slow += time.monotonic() - started >= QUICK_WRITE_S
    progress.states[index] = "done"


def _partial(steps: Sequence[WriteStep], progress: _Progress, switches: ToolSwitches) -> FsError:
    """A write failed: the first failure in patch order, then what was and was not written."""
    first = min(progress.errors)
    err = progress.errors[first]
    lines = [str(with_remedy(err, switches))]
    written: list[str] = []
    pending: list[str] = []
    for step, state in zip(steps, progress.states):
        change = step.change
        if state == "done":
            written.append(_row(change))
        elif state == "renamed":
            written.append(f"R {change.display} -> {change.move_display}")
            pending.append(f"M {change.move_display}")
        else:
            pending.append(_row(change))
    if written:
        lines.append("The patch was applied in part. Written:")
        lines.extend(written)
    else:
        lines.append("No files were modified.")
    if pending:
        lines.append("Not written:")
        lines.extend(pending)
    return FsError("\n".join(lines), err.fs_code, cause=err)


def _row(change: FileChange) -> str:
    """A change as a summary row: ``A``/``D``/``M <display>``, ``M <from> -> <to>`` for a move."""
    if change.kind == "create":
        return f"A {change.display}"
    if change.kind == "delete":
        return f"D {change.display}"
    if change.move_display is not None:
        return f"M {change.display} -> {change.move_display}"
    return f"M {change.display}"
