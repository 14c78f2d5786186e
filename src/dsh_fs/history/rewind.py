"""A rewind's I/O around the pure planner (``plan``): look at every file once, plan, then (unless
a dry run or refused) write, each write through the provider's guarded, atomic, durable
mutation and recorded as one step of the owner (docs/HISTORY.md "Library").

Checked whole, then written: every file's state, every guard and every kept copy are fetched
before the first write. A write that fails midway (another writer won the race after the check,
a crash) leaves every file either in its state at the point or as it was; the same rewind run
again completes (the writes made are steps of the history, so their files are where the owner's
last change left them).
"""

from __future__ import annotations

import difflib
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from ..fs.errors import FsError
from ..fs.types import CreateIfAbsent, DeleteIntent, EditIntent, EditRequest, RenameIntent, ReplaceIfVersion, Target, Version
from .model import FileChange, History, digest_of
from .plan import Action, Current, Plan, Refusal, Span, decide, spans

if TYPE_CHECKING:
    from ..core.signal import AbortSignal
    from .recorder import HistoryFileSystem

__all__ = ("DIFF_MAX_BYTES", "FileResult", "RewindError", "RewindResult", "point_of", "rewind_owner")

DIFF_MAX_BYTES = 64 * 1024
"""a dry run's diff of one file is cut after this many bytes (and says so)"""

FileAction = Literal["restore", "remove", "move", "reverse_edit", "unchanged", "refused", "skipped"]


class RewindError(ValueError):
    """A rewind that cannot be planned: an unknown step or checkpoint, a point whose steps were
    dropped (``str(exc)`` says which)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FileResult:
    """One file of a rewind.

    ``action``: ``restore`` (its content before), ``remove`` (created since the point),
    ``move`` (moved back from ``moved_from``), ``reverse_edit`` (a big file's edits undone),
    ``unchanged`` (already as at the point), ``refused`` (see ``reason``: someone else changed
    it, or its content was not kept), ``skipped`` (refused, but the caller chose to skip it).
    """

    path: str
    action: FileAction
    reason: str | None = None
    forced: bool = False
    moved_from: str | None = None
    diff: str | None = None
    """for a dry run: the unified diff the rewind would apply (``None``: none to show)"""
    done: bool = False
    """the write was made (a run that stopped midway lists the rest ``done=False``)"""
    version: str | None = None
    """the file's version the write left (``None``: not written, or removed)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class RewindResult:
    """What a rewind did (or, for a dry run, would do)."""

    to: int
    """the point: the state right after this step (0: before the first)"""
    steps: tuple[int, ...]
    """the steps taken back"""
    files: tuple[FileResult, ...]
    dry_run: bool
    refused: bool
    """refused whole (nothing written): some file someone else changed, or not restorable,
    neither skipped nor forced"""
    step: int | None = None
    """the rewind's own step (it can itself be rewound: redo), when it wrote something"""
    error: str | None = None
    """a write that failed midway (nothing after it was written; run the rewind again)"""
    failure: FsError | None = field(default=None, repr=False, compare=False)
    """the provider's refusal behind ``error`` (a sandbox's ``FS_SANDBOX_DENIED``, …)"""

    @property
    def refusals(self) -> tuple[FileResult, ...]:
        """The refused and skipped files."""
        return tuple(f for f in self.files if f.action in ("refused", "skipped"))


def point_of(history: History, *, to: int | str | None, last: int | None) -> int:
    """The step number ``to`` names (a number, a checkpoint's id or name: its newest of that
    name), or ``last`` steps back from the newest (at most back to the oldest step held).

    :raises RewindError: neither or both given, an unknown checkpoint, a point out of range or
        whose later steps were dropped, a step number the history does not list (a number a
        call took while another process's call abandoned the one before it)
    """
    if (to is None) == (last is None):
        raise RewindError("give either to= (a step or a checkpoint) or last= (a number of steps)")
    if last is not None:
        if isinstance(last, bool) or not isinstance(last, int) or last < 0:
            raise RewindError(f"last= must be a number of steps (0 or more), not {last!r}")
        point = max(history.last - last, history.dropped)  # no further back than the history holds
    elif isinstance(to, str):
        found = [c for c in history.checkpoints if c.id == to] or [c for c in history.checkpoints if c.name == to]
        if not found:
            raise RewindError(f"no checkpoint named {to!r}")
        point = found[-1].step
    elif isinstance(to, bool) or not isinstance(to, int):
        raise RewindError(f"to= must be a step number or a checkpoint, not {to!r}")
    else:
        point = to
    if point < 0 or point > history.last:
        raise RewindError(f"no step {point} (the history has steps up to {history.last})")
    if point < history.dropped:
        raise RewindError(f"the steps up to {history.dropped} were dropped from the history (its byte cap); "
                          f"it can go back to step {history.dropped} at the earliest")
    if isinstance(to, int) and point not in (0, history.dropped) and all(s.number != point for s in history.steps):
        raise RewindError(f"no step {point} in the history (its call changed nothing: give a step the history lists)")
    return point


def _text(data: bytes) -> list[str]:
    return data.decode("utf-8", "replace").splitlines(keepends=True)


def _diff(path: str, old: bytes | None, new: bytes | None) -> str | None:
    if old == new:
        return None
    if (old is not None and b"\0" in old[:8192]) or (new is not None and b"\0" in new[:8192]):
        return f"Binary file {path} differs\n"
    lines = difflib.unified_diff(_text(old or b""), _text(new or b""), fromfile="/dev/null" if old is None else path,
                                 tofile="/dev/null" if new is None else path)
    out = "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)
    if len(out.encode()) > DIFF_MAX_BYTES:
        cut = out.encode()[:DIFF_MAX_BYTES].decode("utf-8", "ignore")
        out = cut[: cut.rfind("\n") + 1] + f"[diff cut at {DIFF_MAX_BYTES} bytes]\n"
    return out


def _reverse_text(data: bytes, edits: tuple[tuple[str, str], ...]) -> bytes | None:
    text = data.decode("utf-8", "replace")
    for find, put in edits:
        if text.count(find) != 1:
            return None
        text = text.replace(find, put, 1)
    return text.encode()


class _Look:
    """Every file's current state and bytes, fetched once before any write."""

    def __init__(self, fs: "HistoryFileSystem", signal: "AbortSignal | None") -> None:
        self.fs = fs
        self.signal = signal
        self.currents: dict[str, Current] = {}
        self.data: dict[str, bytes | None] = {}

    async def look(self, span: Span) -> None:
        target = Target(key=span.key, display_path=span.path)  # type: ignore[arg-type]
        fs, signal = self.fs.inner, self.signal
        info = await fs.stat(target, signal=signal)
        if info is None:
            self.currents[span.key] = Current(exists=False)
            return
        if info.type != "file":
            self.currents[span.key] = Current(exists=True, version=info.version)
            return
        expected = span.expected
        at = expected.kind == "present" and expected.version is not None and await fs.is_current(
            target, Version(expected.version), signal=signal)
        data: bytes | None = None
        if info.size is None or info.size <= self.fs.max_file_bytes:
            try:
                data = await fs.read_bytes(target, max_bytes=self.fs.max_file_bytes, size=info.size, signal=signal)
            except (NotImplementedError, FsError):
                data = None
        self.data[span.key] = data
        self.currents[span.key] = Current(exists=True, version=info.version, at_expected=at,
                                          digest=None if data is None else digest_of(data))


async def rewind_owner(fs: "HistoryFileSystem", owner: str, *, to: int | str | None = None, last: int | None = None,
                       dry_run: bool = False, skip_changed: bool = False, skip: Collection[str] = (),
                       force: Collection[str] = (), signal: "AbortSignal | None" = None,
                       only: Collection[str] | None = None, tool: str = "rewind",
                       call_id: str | None = None) -> RewindResult:
    """Bring every file ``owner`` changed after the point back to its state there (see
    ``dsh_fs.history.api.rewind`` for the parameters).

    :param only: keys of the files to bring back (a change that moved one of them counts for
        both its names); ``None``: every file (``undo_edit`` takes back one file's last change)
    :param tool: the tool name of the rewind's own step (``undo_edit`` for the editor's undo)
    :param call_id: the tool call the rewind's own step belongs to

    :raises RewindError: a point that cannot be rewound to (``point_of``)
    """
    store = fs.store
    history = await store.history(owner)
    point = point_of(history, to=to, last=last)
    later = [s for s in history.steps if s.number > point]
    changes: list[FileChange] = sorted((c for s in later for c in s.changes
                                        if only is None or c.key in only or c.dest_key in only), key=lambda c: c.id)
    all_spans = spans(changes)
    look = _Look(fs, signal)
    for span in all_spans.values():
        await look.look(span)
    plan = decide(all_spans, look.currents, skip_changed=skip_changed, skip=skip, force=force)
    blobs: dict[str, bytes] = {}
    missing: list[Refusal] = []
    for action in plan.actions:
        if action.kind == "restore" and action.digest is not None and action.digest not in blobs:
            data = await store.blob(action.digest)
            if data is None:
                missing.append(Refusal(key=action.key, path=action.path, why="unrestorable",
                                       reason="not restorable: its kept copy is gone", skipped=skip_changed))
            else:
                blobs[action.digest] = data
    if missing:
        gone = {r.key for r in missing}
        plan = Plan(actions=tuple(a for a in plan.actions if a.key not in gone), unchanged=plan.unchanged,
                    refusals=plan.refusals + tuple(missing))
    steps = tuple(s.number for s in later)
    if dry_run or plan.refused:
        files = _files(plan, look, blobs, diffs=dry_run)
        return RewindResult(to=point, steps=steps, files=files, dry_run=dry_run, refused=plan.refused)
    view = fs.for_tool_call(tool, owner, call_id)
    done: dict[str, str | None] = {}
    error, failure = None, None
    for action in plan.actions:
        try:
            done[action.key] = await _write(view, action, blobs, signal)
        except FsError as err:
            error, failure = str(err), err
            break
    step = None
    if done:
        own = await store.history(owner)
        mine = [s.number for s in own.steps if s.tool == tool and s.number > history.last]
        step = mine[0] if mine else None
    files = _files(plan, look, blobs, diffs=False, done=done)
    return RewindResult(to=point, steps=steps, files=files, dry_run=False, refused=False, step=step, error=error,
                        failure=failure)


async def _write(view: "HistoryFileSystem", action: Action, blobs: dict[str, bytes],
                 signal: "AbortSignal | None") -> str | None:
    """Make one action's write; the version it left (``None``: the file was removed)."""
    target = Target(key=action.key, display_path=action.path)  # type: ignore[arg-type]
    guard = Version(action.guard) if action.guard is not None else None
    if action.kind == "remove":
        assert guard is not None
        await view.delete(target, DeleteIntent(guard), signal=signal)
        return None
    if action.kind == "move":
        assert guard is not None and action.from_key is not None
        source = Target(key=action.from_key, display_path=action.from_path or action.from_key)  # type: ignore[arg-type]
        return str((await view.rename(source, target, RenameIntent(guard), signal=signal)).version)
    if action.kind == "restore":
        data = blobs[action.digest or ""]
        intent = ReplaceIfVersion(guard) if guard is not None else CreateIfAbsent()
        try:
            return str(await view.write_bytes(target, data, intent, mode=action.mode, signal=signal))
        except NotImplementedError:  # a provider without raw writes: its text write
            written = await view.write_text(target, data.decode("utf-8", "surrogateescape"), intent, signal=signal)
            return str(written.version)
    version = guard
    for find, put in action.edits:
        out = await view.edit_text(target, EditRequest(old_string=find, new_string=put),
                                   EditIntent(version) if version is not None else None, signal=signal)
        version = out.version
    return None if version is None else str(version)


def _files(plan: Plan, look: _Look, blobs: dict[str, bytes], *, diffs: bool,
           done: dict[str, str | None] | None = None) -> tuple[FileResult, ...]:
    out: list[FileResult] = []
    for action in plan.actions:
        diff = None
        if diffs:
            now = look.data.get(action.key)
            if action.kind == "restore":
                diff = _diff(action.path, now, blobs.get(action.digest or ""))
            elif action.kind == "remove":
                diff = _diff(action.path, now, None)
            elif action.kind == "reverse_edit" and now is not None:
                diff = _diff(action.path, now, _reverse_text(now, action.edits))
        out.append(FileResult(path=action.path, action=action.kind, forced=action.forced, diff=diff,
                              moved_from=action.from_path, done=done is not None and action.key in done,
                              version=None if done is None else done.get(action.key)))
    out.extend(FileResult(path=path, action="unchanged") for path in plan.unchanged)
    out.extend(FileResult(path=r.path, action="skipped" if r.skipped else "refused", reason=r.reason)
               for r in plan.refusals)
    return tuple(out)
