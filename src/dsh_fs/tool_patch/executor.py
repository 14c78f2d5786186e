"""Apply a parsed patch through the seam and the policy events (docs/design/EDITING-FACES-DESIGN.md §6.2).

One executor for every face that applies patches — the ``apply_patch`` registry tool, the
OpenAI Responses ``apply_patch_call`` items, the Agents SDK editor and ``dsh-fs apply-patch``:

1. **Gather** (up to ``_GATHER_AT_ONCE`` paths at a time). Each path the patch names is
   resolved (against the session's cwd) and stat'ed. A file the patch updates, moves or
   deletes goes through the ``fs/edit-intent`` waterfall (the policy raises ``FS_NOT_OBSERVED``
   for a file this session never read), is read, and the bytes read must be of its guard
   version — the observed one, or without a policy the one just stat'ed
   (``FileSystem.read_text_at``: else ``FS_STALE_VERSION``, "changed since it was read"). An added
   file and a move's destination that are absent go through ``fs/write-intent`` (a listener may
   refuse; the write is create-if-absent whatever it answers: E5); present, the planner refuses
   them.
2. **Plan.** ``patch.plan_patch`` checks every operation against the texts read: every hunk
   located once, every path as the operation needs it. Then the provider is asked whether each
   file the plan rewrites, moves or deletes may be (``FileSystem.check_replaceable``: a
   symlinked name to move or delete, E17; a read-only file, D17), so such a refusal comes
   before the first write.
3. **Refuse or write.** Any failure of 1 or 2 refuses the whole patch, nothing written, with
   every reason (one per line, patch order; the code of the first). Otherwise each file is
   written atomically through the seam (``writes.write_steps``: the first change alone under an
   abort signal, then the in-place updates — one at a time while quick, else side by side —
   beside the name changes in patch order) — create ``write_text(CreateIfAbsent)``, update ``write_text(ReplaceIfVersion(guard))``, move
   ``rename(RenameIntent(guard))`` then ``write_text`` of the new text at the new name, delete
   ``delete(DeleteIntent(guard))`` — and ``fs/observed`` is emitted after each (a deleted or
   moved-away file as absent). The guards are checked again inside each write's lock; a file
   changed in the meantime (a race) or an I/O error stops the run (no write not yet begun
   begins), and the error says exactly which files were written and which not.

The writes, once the first has begun, are never abandoned half way: a cancellation waits for
them and the abort signal is only honoured before the first one. The default profile adds
the remedies of DEVIATIONS D9 to stale and unobserved files. D4 applies to updates as to
``write``: the BOM of an updated file is kept; line breaks are the plan's (the engine keeps the
file's own, D2).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio

from ..core.context import Context
from ..core.session import ToolExecution
from ..fs.errors import FsError, FsErrorCode, edit_not_observed, not_regular_file, stale
from ..fs.events import FS_EDIT_INTENT, FS_WRITE_INTENT
from ..fs.filesystem import FileSystem
from ..tool_common.sandbox_texts import denial_marker, escalation_hint
from ..fs.text import normalize, utf8_size
from ..tool_common.switches import ToolSwitches
from ..fs.types import EditIntent, Target, Version
from ..patch import AddFile, DeleteFile, FileChange, FileState, Patch, PatchError, PatchRejected
from ..patch import codex_summary, plan_patch
from ..tool_fs.diff import bounded_diffs
from ..tool_fs.shared import with_remedy
from ..tool_fs.stale_changes import with_changes
from .regions import region_diffs
from .texts import TOO_BIG_TO_UPDATE
from .writes import WriteStep, write_steps

__all__ = ("AppliedPatch", "PatchInputError", "apply_patch", "patch_error_code", "region_diffs")

Role = Literal["add", "update", "delete", "move_from", "move_to"]

_GATHER_AT_ONCE = 16
"""paths resolved, stat'ed and read at the same time while a patch is checked"""

UPDATE_MAX_SIZE = 16 * 1024 * 1024
"""E24 (both profiles): the largest file (bytes) a patch updates or moves; a patch is planned on
whole texts split into lines (a multiple of the file in memory), so a bigger one is refused
before it is read, naming the limit (``edit`` streams such files)"""

DIFF_ON_LOOP_MAX = 2 * 1024 * 1024
"""the most characters (every change's text before and after, summed) whose UI diffs are
computed on the event loop thread (about 1 ms per Mi character: the texts split into lines,
then a few lines around each hunk); a bigger patch's are computed in a worker thread while it
is written"""

_VERBS: dict[Role, Literal["write", "edit", "delete", "rename"]] = {
    "add": "write",
    "update": "edit",
    "delete": "delete",
    "move_from": "rename",
    "move_to": "rename",
}

_OPERATIONS: dict[Role, str] = {"update": "update", "delete": "delete", "move_from": "move"}
"""E25: what the patch does to a file it must have read, as its refusal names it (Codex's
``*** Update File``, ``*** Delete File``, ``*** Move to``; the Responses ``update_file``,
``delete_file``)"""

_CODES: dict[str, FsErrorCode | None] = {
    "syntax": None,
    "empty": None,
    "duplicate": None,
    "missing": FsErrorCode.NOT_FOUND,
    "exists": FsErrorCode.NOT_OBSERVED,
    "not_found": FsErrorCode.EDIT_NOT_FOUND,
    "ambiguous": FsErrorCode.AMBIGUOUS_EDIT,
}


class PatchInputError(ValueError):
    """A patch the tools refuse without a filesystem code: malformed text, no operation, a file
    touched twice (a *plain* error: the registry reports it without ``{name, code}``)."""


def patch_error_code(err: PatchError) -> FsErrorCode | None:
    """The ``FsErrorCode`` a planner failure is reported with (EDITING-FACES-DESIGN §2.6), or
    ``None`` for a plain error."""
    return _CODES[err.kind]


@dataclass(frozen=True, slots=True, kw_only=True)
class AppliedPatch:
    """What an applied patch wrote, in patch order."""

    changes: tuple[FileChange, ...]
    kept_diffs: list[dict[str, Any]] | None = field(default=None, repr=False, compare=False)
    """``diffs()`` computed while the files were written (``apply_patch(with_diffs=True)``)"""

    def codex_summary(self) -> str:
        """Codex's ``Success. Updated the following files:`` text, display paths (a moved
        file is listed as ``M <destination>``)."""
        added = [c.display for c in self.changes if c.kind == "create"]
        modified = [c.move_display or c.display for c in self.changes if c.kind == "update"]
        deleted = [c.display for c in self.changes if c.kind == "delete"]
        return codex_summary(added, modified, deleted)

    def diffs(self) -> list[dict[str, Any]]:
        """§4.9 hunks of every file, in patch order (UI metadata; a deleted file's text goes,
        an added file's comes; bounded as ``edit``'s). An update is diffed only around its
        hunks (``region_diffs``)."""
        if self.kept_diffs is not None:
            return self.kept_diffs
        out: list[dict[str, Any]] = []
        for change in self.changes:
            path = change.move_display or change.display
            before = "" if change.before is None else normalize(change.before)
            after = "" if change.after is None else normalize(change.after)
            out.extend(region_diffs(path, before, after, change.edits) if change.edits
                       else bounded_diffs(path, before, after))
        return out


@dataclass(slots=True)
class _Path:
    """One path of the patch as gathered."""

    role: Role
    target: Target | None = None
    text: str | None = None
    guard: Version | None = None
    error: FsError | None = None
    index: int = 0
    """the operation that first names it (the order errors are listed in)"""


@dataclass(slots=True)
class _Run:
    """The state of one application."""

    ctx: Context
    execution: ToolExecution
    paths: dict[str, _Path] = field(default_factory=dict)
    escalation_hint: bool = False

    @property
    def fs(self) -> FileSystem:
        """The call's sandbox view (``execution.fs``), else ``ctx.fs``."""
        return self.execution.fs or self.ctx.fs  # type: ignore[no-any-return]

    @property
    def switches(self) -> ToolSwitches:
        return ToolSwitches.of(self.ctx.profile)


def _roles(patch: Patch) -> list[tuple[str, Role, int]]:
    out: list[tuple[str, Role, int]] = []
    for index, op in enumerate(patch.ops):
        if isinstance(op, AddFile):
            out.append((op.path, "add", index))
        elif isinstance(op, DeleteFile):
            out.append((op.path, "delete", index))
        else:
            out.append((op.path, "move_from" if op.move_to is not None else "update", index))
            if op.move_to is not None:
                out.append((op.move_to, "move_to", index))
    return out


async def apply_patch(ctx: Context, patch: Patch, execution: ToolExecution, *,
                      escalation_hint: bool = False, with_diffs: bool = False) -> AppliedPatch:
    """Check ``patch`` whole against the current files, then write it (see the module docstring).

    :param ctx: a context with a provider (``ctx.fs``) and, usually, the observation policy
    :param patch: from ``parse_patch`` / ``parse_operation``
    :param execution: the call's session (cwd, observation owner) and abort signal; its ``fs``
        (a sandbox view bound by ``fs_sandbox.tools.call_fs``) when set, else ``ctx.fs``
    :param escalation_hint: a sandbox refusal ends with the escalation hint (the calling tool
        takes the escalation fields, DEVIATIONS X2); it always ends with the denial marker
    :param with_diffs: compute ``AppliedPatch.diffs()`` as the files are written, for a face
        that returns them (``_write``: after the writes on this thread for a patch of at most
        ``DIFF_ON_LOOP_MAX`` characters, else in a worker thread while they are written)
    :return: the changes written
    :raises PatchInputError: no operation, a file touched twice (nothing written)
    :raises FsError: the patch does not apply (nothing written; every reason, one per line,
        the first one's code), or a write failed midway (the message lists what was written)
    """
    run = _Run(ctx, execution, escalation_hint=escalation_hint)
    for path, role, index in _roles(patch):
        run.paths.setdefault(path, _Path(role=role, index=index))
    limiter = anyio.CapacityLimiter(_GATHER_AT_ONCE)

    async def gather(path: str) -> None:
        async with limiter:
            await _gather(run, path)

    async with anyio.create_task_group() as tg:  # the files are independent: read them side by side
        for path in run.paths:
            tg.start_soon(gather, path)
    try:  # locating hunks is CPU work on whole files: off the event loop (bounded: WORK_BUDGET)
        planned = await anyio.to_thread.run_sync(plan_patch, patch, _states(run))
    except PatchRejected as rejected:
        raise _refusal(run, rejected.errors) from None
    gated = [p for p in run.paths.values() if p.error is not None]
    if not gated:
        await _check_replaceable(run, patch, planned)
        gated = [p for p in run.paths.values() if p.error is not None]
    if gated:
        raise _refusal(run, ())
    return await _write(run, patch, planned, with_diffs=with_diffs)


async def _check_replaceable(run: _Run, patch: Patch, planned: Sequence[FileChange]) -> None:
    """Ask the provider whether each change of the plan may be made, before the first write:
    each file it deletes, moves or rewrites (``check_replaceable``: E17, D17, a directory the
    caller may not change, D16 for the planned text's size) and each file it adds or moves to
    (``check_creatable``: D16, a directory the caller may not add to). A move whose text is
    unchanged keeps its file's bytes and is asked only about the rename. Errors are kept on the
    paths, as the gather's are. What is left to stop a patch midway: races and I/O errors (and a
    kept BOM's 3 bytes at the D16 limit, which the size asked here does not count)."""
    signal = run.execution.signal
    for op, change in zip(patch.ops, planned):
        entry = run.paths[op.path]
        assert entry.target is not None
        size = utf8_size(change.after) if change.after is not None and change.after != change.before else None
        try:
            if change.kind == "create":
                await run.fs.check_creatable(entry.target, size=size, signal=signal)
            elif change.kind == "delete":
                await run.fs.check_replaceable(entry.target, "delete", signal=signal)
            elif change.move_to is not None:
                dest = run.paths[change.move_to]
                assert dest.target is not None
                await run.fs.check_renamable(entry.target, dest.target, signal=signal)  # D28: across roots
                await run.fs.check_replaceable(entry.target, "rename", signal=signal)
                try:
                    await run.fs.check_creatable(dest.target, size=size, signal=signal)
                except FsError as err:
                    dest.error = err
                if size is not None:
                    await run.fs.check_replaceable(entry.target, "write", signal=signal)
            else:
                await run.fs.check_replaceable(entry.target, "write", size=size, signal=signal)
        except FsError as err:
            entry.error = err


async def _gather(run: _Run, path: str) -> None:
    """Resolve, stat, read and gate one path (errors are kept on it, not raised)."""
    entry = run.paths[path]
    fs, execution = run.fs, run.execution
    try:
        target = entry.target = await fs.resolve(path, cwd=execution.cwd, signal=execution.signal)
        info = await fs.stat(target, signal=execution.signal)
        verb = _VERBS[entry.role]
        if info is None:
            if entry.role in ("add", "move_to"):
                await run.ctx.waterfall(FS_WRITE_INTENT, target, execution, default=lambda: None)
            return  # the planner says what a missing file means
        if entry.role == "move_to" or (entry.role == "add" and info.type == "file"):
            entry.text = ""  # present: the planner refuses it (E5); its content does not matter
            return
        if info.type != "file":
            raise not_regular_file(verb, target.display_path)
        if entry.role in ("update", "move_from") and info.size is not None and info.size > UPDATE_MAX_SIZE:
            raise FsError(TOO_BIG_TO_UPDATE.format(path=target.display_path, size=info.size, limit=UPDATE_MAX_SIZE),
                          FsErrorCode.IO_ERROR)  # E24
        intent = await _edit_intent(run, target, entry.role)
        entry.guard = intent.version if intent is not None else info.version
        entry.text = await fs.read_text_at(target, entry.guard, info=info, signal=execution.signal)
        if entry.text is None:
            raise stale(verb, target.display_path)
    except FsError as err:
        if entry.target is not None:  # D30: what changed since the owner saw it
            err = await with_changes(run.ctx, fs, entry.target, err, execution, run.switches)
        entry.error = with_remedy(err, run.switches)


async def _edit_intent(run: _Run, target: Target, role: Role) -> EditIntent | None:
    """The ``fs/edit-intent`` decision for a file the patch changes; under E25 the policy's
    ``edit requires reading … first`` names the patch's own operation instead of ``edit``."""
    try:
        intent: EditIntent | None = await run.ctx.waterfall(FS_EDIT_INTENT, target, run.execution,
                                                             default=lambda: None)
    except FsError as err:
        display = target.display_path
        if run.switches.patch_names_its_operation and err.message == edit_not_observed(display).message:
            raise edit_not_observed(display, _OPERATIONS[role]) from None
        raise
    return intent


def _states(run: _Run) -> dict[str, FileState]:
    out: dict[str, FileState] = {}
    for path, entry in run.paths.items():
        target = entry.target
        display = target.display_path if target is not None else path
        key = target.key if target is not None else f"unresolved:{path}"
        out[path] = FileState(display=display, key=key, text=entry.text)
    return out


def _refusal(run: _Run, planned: Sequence[PatchError]) -> Exception:
    """The one error refusing the patch: the gate's reasons and the planner's, patch order."""
    gated = {(p.target.display_path if p.target else path): p for path, p in run.paths.items() if p.error}
    order = {(p.target.display_path if p.target else path): p.index for path, p in run.paths.items()}
    rows: list[tuple[int, str, FsErrorCode | None]] = []
    for display, entry in gated.items():
        assert entry.error is not None
        rows.append((entry.index, str(entry.error), entry.error.fs_code))
    for err in planned:
        if err.path is not None and err.path in gated:
            continue  # the gate already says why this file cannot be changed
        rows.append((order.get(err.path or "", len(order)), err.message, patch_error_code(err)))
    rows.sort(key=lambda row: row[0])  # stable: within one operation, the order found
    message = "\n".join(text for _, text, _ in rows)
    if any(code is FsErrorCode.SANDBOX_DENIED for _, _, code in rows):  # docs/SANDBOX.md: every path, then the marker
        message += "\n" + denial_marker(getattr(run.fs, "sandbox_mode", None) or "read-only")
        if run.escalation_hint:
            message += "\n" + escalation_hint("operation")
    code = rows[0][2]
    if code is None:
        return PatchInputError(message)
    return FsError(message, code)


async def _write(run: _Run, patch: Patch, planned: Sequence[FileChange], *, with_diffs: bool) -> AppliedPatch:
    """Write the plan (``writes.write_steps``: the first change alone under an abort signal,
    then in-place updates beside the name changes in patch order); shielded. With
    ``with_diffs``, the diffs of the plan are computed after the writes on this thread when its
    texts total at most ``DIFF_ON_LOOP_MAX`` characters (a worker thread beside writes made on
    the event loop thread would take the GIL from them), else in a worker thread meanwhile
    (kept only when every write succeeded)."""
    steps: list[WriteStep] = []
    for op, change in zip(patch.ops, planned):
        entry = run.paths[op.path]
        assert entry.target is not None
        dest = run.paths[change.move_to].target if change.move_to is not None else None
        steps.append(WriteStep(change=change, target=entry.target, guard=entry.guard, dest=dest))
    if not with_diffs:
        return AppliedPatch(changes=await write_steps(run.ctx, run.execution, steps, switches=run.switches))
    if sum(len(c.before or "") + len(c.after or "") for c in planned) <= DIFF_ON_LOOP_MAX:
        changes = await write_steps(run.ctx, run.execution, steps, switches=run.switches)
        applied = AppliedPatch(changes=changes)  # a few milliseconds at most: on this thread, after the writes
        return AppliedPatch(changes=changes, kept_diffs=applied.diffs())
    kept: list[list[dict[str, Any]]] = []
    failed: list[FsError] = []

    async def diff() -> None:
        kept.append(await anyio.to_thread.run_sync(AppliedPatch(changes=tuple(planned)).diffs))

    with anyio.CancelScope(shield=True):
        async with anyio.create_task_group() as tg:
            tg.start_soon(diff)
            try:
                changes = await write_steps(run.ctx, run.execution, steps, switches=run.switches)
            except FsError as err:
                failed.append(err)
    if failed:
        raise failed[0]
    return AppliedPatch(changes=changes, kept_diffs=kept[0])
