"""Conditional writes on S3: the bodies of ``S3FileSystem.write_text`` and
``S3FileSystem.edit_text`` (REFERENCE-SPEC §2.8, §2.11; DEVIATIONS D4).

Every mutation is one conditional PutObject (or CompleteMultipartUpload, ``S3FileSystem._put``):
``If-None-Match: *`` to create, ``If-Match: <ETag just read>`` to replace, so a concurrent
writer anywhere is detected by S3 itself and no update is lost. A guarded call whose object
changed is ``FS_STALE_VERSION``; an unguarded one re-reads and retries on the fresh content up
to ``edit_retries`` times, so before/after and D4 always describe the bytes replaced. Right
before each attempt's PUT, ``fs.witness.witness_commit`` is told the bytes replaced and
written (``S3FileSystem.witnessed_mutations``: a history keeps them without another GET).
(``write_bytes``, exactly the bytes given, is ``raw_write``.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..fs.backend import (
    AbortSignal,
    CreateIfAbsent,
    EditIntent,
    EditOutcome,
    EditRequest,
    ReplaceIfVersion,
    Stage,
    Target,
    Version,
    WriteIntent,
    WriteOutcome,
    apply_edit,
    check_abort,
    gone,
    not_regular_file,
    overwrite_not_observed,
    rewrite,
    stale,
    witness_commit,
)
from .errors import S3Failure, abort_check, fs_error
from .store import ObjectMeta

if TYPE_CHECKING:
    from .filesystem import Prefix, S3FileSystem

__all__ = ("edit_text", "write_text")


def _mid_read_checker(signal: AbortSignal | None, stage: Stage) -> Any:
    """Abort checks during a mutation's read. A signal aborted before the call is reported
    only after the existence, type and version checks, as the local provider does (§2.12)."""
    return None if signal is None or signal.aborted else abort_check(signal, stage)


async def write_text(fs: S3FileSystem, target: Target, content: str, expected: WriteIntent | None = None, *,
                     signal: AbortSignal | None = None) -> WriteOutcome:
    """``S3FileSystem.write_text`` (its docstring says what each request does and raises)."""
    p, rel = fs._place(target)
    display = target.display_path
    async with fs.locks.hold(target.key):
        try:
            if rel == "":
                raise not_regular_file("write", display)
            if isinstance(expected, CreateIfAbsent):
                return await _create(fs, p, rel, content, display, signal)
            return await _replace(fs, p, rel, content, expected, display, signal)
        except S3Failure as failure:
            raise fs_error(failure, "write", display) from failure


async def _create(fs: S3FileSystem, p: Prefix, rel: str, content: str, display: str,
                  signal: AbortSignal | None) -> WriteOutcome:
    exists = overwrite_not_observed(display)
    if await p.store.has_children(p.location.dir_prefix(rel)):
        if await p.store.head(p.location.object_key(rel)) is not None:
            raise exists
        raise not_regular_file("write", display)
    if signal is not None and signal.aborted and await p.store.head(p.location.object_key(rel)) is not None:
        raise exists  # the guard wins over an abort (§2.8 notes), as on the local disk
    planned = rewrite(None, content, fs.rules, display)
    await witness_commit(None, None, planned.data)
    try:
        meta = await fs._put(p, rel, planned.data, if_match=None, if_none_match=True, signal=signal)
    except S3Failure as failure:
        if failure.precondition_failed:
            raise exists from failure
        raise
    return WriteOutcome(operation="create", version=Version(meta.token), before=None, after=planned.after)


def _basis(fs: S3FileSystem, p: Prefix, rel: str, expected: ReplaceIfVersion | None) -> tuple[ObjectMeta, bytes] | None:
    """The bytes ``read_text`` got of exactly ``expected.version`` (taken), with that
    version's ETag, or ``None``. Only for an unversioned token (a bare ETag): the PutObject
    ``If-Match`` compares ETags, so the bytes it replaces are then the ones kept."""
    if expected is None or "@" in str(expected.version):
        return None
    data = fs.bases.take((p.location.target_key(rel), str(expected.version)))
    if data is None:
        return None
    return ObjectMeta(etag=str(expected.version), size=len(data)), data


async def _replace(fs: S3FileSystem, p: Prefix, rel: str, content: str, expected: ReplaceIfVersion | None,
                   display: str, signal: AbortSignal | None) -> WriteOutcome:
    missing = gone(display)
    changed = stale("write", display)
    attempts = 1 if expected is not None else 1 + fs.edit_retries
    for attempt in range(attempts):
        last = attempt == attempts - 1
        got = _basis(fs, p, rel, expected) if attempt == 0 else None
        if got is None:
            got = await p.store.get(p.location.object_key(rel), check=_mid_read_checker(signal, "read"))
        if got is None:
            if expected is not None:
                raise await fs._absent(p, rel, "write", display, missing)
            if await fs._is_dir(p, rel):
                raise not_regular_file("write", display)
            planned = rewrite(None, content, fs.rules, display)
            await witness_commit(None, None, planned.data)
            try:
                meta = await fs._put(p, rel, planned.data, if_match=None, if_none_match=True, signal=signal)
            except S3Failure as failure:
                if failure.precondition_failed and not last:
                    continue  # created meanwhile: replace that instead
                if failure.precondition_failed:
                    raise changed from failure
                raise
            return WriteOutcome(operation="create", version=Version(meta.token), before=None, after=planned.after)
        meta, old = got
        if expected is not None and meta.token != expected.version:
            raise changed
        check_abort(signal, "read")
        planned = rewrite(old, content, fs.rules, display)
        await witness_commit(old, meta.token, planned.data)
        try:
            written = await fs._put(p, rel, planned.data, if_match=meta.etag, if_none_match=False, signal=signal)
        except S3Failure as failure:
            if failure.precondition_failed or failure.not_found:
                if expected is None and not last:
                    continue
                raise (missing if failure.not_found else changed) from failure
            raise
        return WriteOutcome(operation="update", version=Version(written.token), before=planned.before,
                            after=planned.after)
    raise changed  # pragma: no cover - the loop always returns or raises


async def edit_text(fs: S3FileSystem, target: Target, edit: EditRequest, expected: EditIntent | None = None, *,
                    signal: AbortSignal | None = None) -> EditOutcome:
    """``S3FileSystem.edit_text`` (its docstring says what each request does and raises)."""
    p, rel = fs._place(target)
    display = target.display_path
    changed = stale("edit", display)
    attempts = 1 if expected is not None else 1 + fs.edit_retries
    async with fs.locks.hold(target.key):
        try:
            if rel == "":
                raise not_regular_file("edit", display)
            for attempt in range(attempts):
                got = await p.store.get(
                    p.location.object_key(rel), check=_mid_read_checker(signal, "edit")
                )
                if got is None:
                    raise await fs._absent(p, rel, "edit", display, changed)
                meta, raw = got
                if expected is not None and meta.token != expected.version:
                    raise changed
                check_abort(signal, "edit")
                edited = apply_edit(raw, edit, display, fs.rules)
                await witness_commit(raw, meta.token, edited.data)
                try:
                    written = await fs._put(p, rel, edited.data, if_match=meta.etag, if_none_match=False,
                                              signal=signal)
                except S3Failure as failure:
                    if failure.precondition_failed or failure.not_found:
                        if attempt < attempts - 1:
                            continue
                        raise changed from failure
                    raise
                return EditOutcome(version=Version(written.token), before=edited.plan.before,
                                   after=edited.plan.after)
        except S3Failure as failure:
            raise fs_error(failure, "edit", display) from failure
    raise changed  # pragma: no cover - the loop always returns or raises
