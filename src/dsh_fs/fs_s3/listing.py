"""Listing on S3: the bodies of ``S3FileSystem.list_dir``, ``iter_dir`` and ``walk`` (REFERENCE-SPEC
§1.3; DEVIATIONS A6, L5).

Directories are key prefixes. ``list_dir`` is one ListObjectsV2 with delimiter ``/`` (direct
children in code-point order), ``iter_dir`` the same one page at a time (a huge prefix is never
held whole), ``walk`` one ListObjectsV2 without a delimiter (one request per 1000 keys). In a
versioned bucket each listed file costs a HeadObject for its VersionId.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from ..fs.backend import AbortSignal, DirEntry, Target, Version, WalkEntry, check_abort, not_directory, not_found
from .errors import S3Failure, abort_check, fs_error
from .store import ObjectMeta

if TYPE_CHECKING:
    from .filesystem import Prefix, S3FileSystem

__all__ = ("iter_dir", "list_dir", "walk")


async def _listable(fs: S3FileSystem, p: Prefix, rel: str, display: str) -> None:
    """:raises FsError: ``cannot list "<display>": not found`` / ``not a directory``"""
    info = await fs._info(p, rel)
    if info is None:
        raise not_found("list", display)
    if info.type != "directory":
        raise not_directory(display)


async def list_dir(fs: S3FileSystem, target: Target, *, signal: AbortSignal | None = None) -> list[DirEntry]:
    """``S3FileSystem.list_dir`` (its docstring says what it asks and raises)."""
    check_abort(signal, "list")
    p, rel = fs._place(target)
    display = target.display_path
    try:
        await _listable(fs, p, rel, display)
        prefix = p.location.dir_prefix(rel)
        objects, prefixes = await p.store.list_children(prefix, check=abort_check(signal, "list"))
        versioned = await fs._bucket_versioned(p)
        base = rel + "/" if rel else ""
        files: dict[str, ObjectMeta] = {}
        for key, meta in objects:
            name = key[len(prefix) :]
            if name:
                files[name] = meta
        entries: list[DirEntry] = []
        for name in sorted(set(files) | {p[len(prefix) : -1] for p in prefixes} - {""}):
            check_abort(signal, "list")
            entries.append(await _child(fs, p, base, name, files.get(name), versioned))
    except S3Failure as failure:
        raise fs_error(failure, "list", display) from failure
    check_abort(signal, "list")
    return entries


async def _child(fs: S3FileSystem, p: Prefix, base: str, name: str, meta: ObjectMeta | None,
                 versioned: bool) -> DirEntry:
    """The entry of the child ``name`` of the directory ``base``: a directory (no object
    ``meta``), or a file (its VersionId asked by a HEAD in a versioned bucket; ``other``
    when the object went away meanwhile).

    :raises S3Failure: the HEAD's
    """
    child = base + name
    if meta is None:
        return DirEntry(name=name, type="directory", target=fs._target(p, child), version=Version(f"dir:{child}"))
    if versioned:
        fresh = await p.store.head(p.location.object_key(child))
        if fresh is None:
            return DirEntry(name=name, type="other", target=fs._target(p, child))
        meta = fresh
    return DirEntry(name=name, type="file", target=fs._target(p, child), version=Version(meta.token),
                    size=meta.size)


async def iter_dir(fs: S3FileSystem, target: Target, *,
                   signal: AbortSignal | None = None) -> AsyncIterator[list[DirEntry]]:
    """``S3FileSystem.iter_dir`` (its docstring says what it asks and raises)."""
    check_abort(signal, "list")
    p, rel = fs._place(target)
    display = target.display_path
    pages = None
    try:
        await _listable(fs, p, rel, display)
        prefix = p.location.dir_prefix(rel)
        versioned = await fs._bucket_versioned(p)
        base = rel + "/" if rel else ""
        pending: set[str] = set()  # file names whose common prefix may still come
        pages = p.store.child_pages(prefix, check=abort_check(signal, "list"))
        async for objects, prefixes in pages:
            batch: list[DirEntry] = []
            for key, meta in objects:
                name = key[len(prefix):]
                if name:
                    check_abort(signal, "list")
                    batch.append(await _child(fs, p, base, name, meta, versioned))
                    pending.add(name)
            for common in prefixes:
                name = common[len(prefix):-1]
                if name and name not in pending:
                    batch.append(await _child(fs, p, base, name, None, versioned))
            last = max([key for key, _ in objects[-1:]] + prefixes[-1:], default=None)
            if last is not None:  # keys come in order: no prefix before this one is still to come
                pending = {name for name in pending if prefix + name + "/" >= last}
            yield batch
    except S3Failure as failure:
        raise fs_error(failure, "list", display) from failure
    finally:
        if pages is not None:
            await pages.aclose()  # type: ignore[attr-defined]


async def walk(fs: S3FileSystem, target: Target, *, signal: AbortSignal | None = None) -> AsyncIterator[WalkEntry]:
    """``S3FileSystem.walk`` (its docstring says what it asks and raises)."""
    check_abort(signal, "list")
    p, rel = fs._place(target)
    display = target.display_path
    try:
        await _listable(fs, p, rel, display)
        prefix = p.location.dir_prefix(rel)
        base = rel + "/" if rel else ""
        seen: set[str] = set()
        files: set[str] = set()
        async for page in p.store.list_all(prefix, check=abort_check(signal, "list")):
            for key, size, mtime in page:
                parts = key[len(prefix) :].split("/")
                is_dir = parts[-1] == ""
                if is_dir:
                    parts.pop()
                if not parts or any(p in ("", ".", "..") for p in parts):
                    continue
                if any("/".join(parts[:depth]) in files for depth in range(1, len(parts) + 1)):
                    continue  # below a file's key (or the same key twice): unreachable
                for depth in range(1, len(parts) + 1 if is_dir else len(parts)):
                    below = "/".join(parts[:depth])
                    if below in seen:
                        continue
                    seen.add(below)
                    yield WalkEntry(rel=below, type="directory", target=fs._target(p, base + below))
                if not is_dir:
                    below = "/".join(parts)
                    files.add(below)
                    yield WalkEntry(rel=below, type="file", target=fs._target(p, base + below), size=size,
                                    mtime_ns=mtime)
    except S3Failure as failure:
        raise fs_error(failure, "list", display) from failure
