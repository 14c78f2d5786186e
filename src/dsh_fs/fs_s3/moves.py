"""Guarded delete and rename on S3 (docs/design/EDITING-FACES-DESIGN.md §6.1; docs/S3.md), the
bodies of ``S3FileSystem.delete`` and ``S3FileSystem.rename``.

* ``delete_object`` — HeadObject (existence, version check), then DeleteObject ``If-Match:
  <ETag>`` for a guarded delete: an object replaced in between is not deleted (412 →
  ``FS_STALE_VERSION``).
* ``rename_object`` — S3 has no rename: GetObject of the source (version check), PutObject of
  the same bytes at the destination ``If-None-Match: *`` (never replaces an object), then
  DeleteObject of the source ``If-Match: <ETag read>``; the copy is deleted again when that
  fails. Not atomic: a crash between the two leaves both objects. Never across roots (D28).

Both run with the targets' in-process locks held, check the guards first and then the abort
signal, before changing anything (REFERENCE-SPEC §2.12 order), as ``fs_local.moves`` does.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

import anyio

from ..fs.backend import (
    AbortSignal,
    DeleteIntent,
    DeleteOutcome,
    FsError,
    RenameIntent,
    RenameOutcome,
    Target,
    Version,
    check_abort,
    gone,
    not_found,
    not_regular_file,
    outside_workspace_rename,
    rename_destination_exists,
    stale,
)
from .errors import S3Failure, fs_error
from .store import ObjectMeta

if TYPE_CHECKING:
    from .filesystem import Prefix, S3FileSystem

__all__ = ("delete_object", "rename_object")


async def delete_object(fs: S3FileSystem, target: Target, expected: DeleteIntent | None = None, *,
                        signal: AbortSignal | None = None) -> DeleteOutcome:
    """``S3FileSystem.delete`` (its docstring says what each request does and raises)."""
    p, rel = fs._place(target)
    display = target.display_path
    missing = gone(display, "delete") if expected is not None else not_found("delete", display)
    async with fs.locks.hold(target.key):
        try:
            if rel == "":
                raise not_regular_file("delete", display)
            key = p.location.object_key(rel)
            meta = await p.store.head(key)
            if meta is None:
                raise await fs._absent(p, rel, "delete", display, missing)
            if expected is not None and meta.token != expected.version:
                raise stale("delete", display)
            check_abort(signal, "delete")
            try:
                await p.store.delete(key, if_match=meta.etag if expected is not None else None)
            except S3Failure as failure:
                if failure.precondition_failed:
                    raise stale("delete", display) from failure
                if failure.not_found:
                    raise missing from failure
                raise
            return DeleteOutcome(version=Version(meta.token))
        except S3Failure as failure:
            raise fs_error(failure, "delete", display) from failure


async def rename_object(fs: S3FileSystem, source: Target, dest: Target, expected: RenameIntent | None = None, *,
                        signal: AbortSignal | None = None) -> RenameOutcome:
    """``S3FileSystem.rename`` (its docstring says what each request does and raises)."""
    p, rel = fs._place(source)
    display = source.display_path
    there, dest_rel = fs._place(dest)
    if there is not p:
        raise outside_workspace_rename(display, dest.display_path, p.root)  # D28: never across roots
    missing = gone(display, "rename") if expected is not None else not_found("rename", display)
    taken = rename_destination_exists(display, dest.display_path)
    async with contextlib.AsyncExitStack() as held:
        for key in sorted({source.key, dest.key}):
            await held.enter_async_context(fs.locks.hold(key))
        try:
            if rel == "":
                raise not_regular_file("rename", display)
            got = await p.store.get(p.location.object_key(rel))
            if got is None:
                raise await fs._absent(p, rel, "rename", display, missing)
            meta, data = got
            if expected is not None and meta.token != expected.version:
                raise stale("rename", display)
            if dest_rel in ("", rel) or await fs._info(p, dest_rel) is not None:
                raise taken
            check_abort(signal, "rename")
            with anyio.CancelScope(shield=True):
                return await _move(fs, p, rel, dest_rel, meta, data, display, taken, missing)
        except S3Failure as failure:
            raise fs_error(failure, "rename", display) from failure
    raise AssertionError("unreachable")  # pragma: no cover


async def _move(fs: S3FileSystem, p: Prefix, rel: str, dest_rel: str, meta: ObjectMeta, data: bytes, display: str,
                taken: FsError, missing: FsError) -> RenameOutcome:
    """The copy and the conditional delete of ``rename`` (shielded by the caller)."""
    try:
        written = await fs._put(p, dest_rel, data, if_match=None, if_none_match=True, signal=None)
    except S3Failure as failure:
        if failure.precondition_failed:
            raise taken from failure
        raise
    try:
        await p.store.delete(p.location.object_key(rel), if_match=meta.etag)
    except S3Failure as failure:
        with contextlib.suppress(S3Failure):  # undo the copy: the source keeps its name
            await p.store.delete(p.location.object_key(dest_rel), if_match=written.etag)
        if failure.precondition_failed:
            raise stale("rename", display) from failure
        if failure.not_found:
            raise missing from failure
        raise
    return RenameOutcome(version=Version(written.token))
