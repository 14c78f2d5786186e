"""The S3 provider's ``delete`` and ``rename`` on moto's S3 wire protocol (docs/S3.md "Delete is
one conditional request", "Rename is a copy plus a conditional delete").

Covers what the provider contract cannot say in storage-neutral terms: the round trips; a
writer slipping in between the provider's read and its conditional DeleteObject (the object is
kept, FS_STALE_VERSION); a source rewritten between the copy and the delete of a rename (the
copy is deleted again, the source keeps its new bytes); versioned buckets; and ``apply_patch``
end to end on a bucket.
Not covered here: the guards' messages (the contract suite).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

import dsh_fs
from dsh_fs.fs import DeleteIntent, FsError, RenameIntent
from dsh_fs.fs_s3 import S3FileSystem
from dsh_fs.fs_s3.store import ObjectStore
from dsh_fs.testing.workspaces import MOTO_CLIENT_OPTIONS, S3Workspace

pytestmark = pytest.mark.anyio


class _HookedStore(ObjectStore):
    """Runs ``before_delete`` hooks (another machine's writes) right before the next DeleteObjects."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.before_delete: list[Callable[[], Awaitable[None]]] = []

    async def delete(self, key: str, **kwargs: Any) -> None:
        if self.before_delete:
            await self.before_delete.pop(0)()
        await super().delete(key, **kwargs)


async def _provider(ws: S3Workspace) -> tuple[S3FileSystem, _HookedStore]:
    store = _HookedStore(ws.location.bucket, endpoint_url=ws.endpoint_url, client_options=MOTO_CLIENT_OPTIONS)
    fs = await ws.provider(store=store)
    assert isinstance(fs, S3FileSystem)
    return fs, store


async def test_round_trips(bucket: S3Workspace) -> None:
    fs, store = await _provider(bucket)
    await bucket.put("a.txt", b"a")
    await bucket.put("b.txt", b"b")
    source = await fs.resolve("a.txt")
    info = await fs.stat(source)
    assert info is not None
    start = store.requests
    await fs.rename(source, await fs.resolve("moved/a.txt"), RenameIntent(info.version))
    renamed = store.requests - start
    target = await fs.resolve("b.txt")
    info = await fs.stat(target)
    assert info is not None
    start = store.requests
    await fs.delete(target, DeleteIntent(info.version))
    assert (renamed, store.requests - start) == (5, 2)  # GET, HEAD + LIST (dest free), PUT, DELETE; HEAD, DELETE
    assert await bucket.files() == {"moved/a.txt": b"a"}


async def test_a_write_between_the_check_and_the_delete_keeps_the_object(bucket: S3Workspace) -> None:
    fs, store = await _provider(bucket)
    await bucket.put("a.txt", b"old\n")
    target = await fs.resolve("a.txt")
    info = await fs.stat(target)
    assert info is not None
    store.before_delete.append(lambda: bucket.put("a.txt", b"theirs\n"))
    with pytest.raises(FsError) as caught:
        await fs.delete(target, DeleteIntent(info.version))
    assert str(caught.value) == 'cannot delete "/a.txt": file changed since it was read'
    assert await bucket.files() == {"a.txt": b"theirs\n"}


async def test_a_source_rewritten_during_a_rename_undoes_the_copy(bucket: S3Workspace) -> None:
    fs, store = await _provider(bucket)
    await bucket.put("a.txt", b"old\n")
    source = await fs.resolve("a.txt")
    info = await fs.stat(source)
    assert info is not None
    store.before_delete.append(lambda: bucket.put("a.txt", b"theirs\n"))
    with pytest.raises(FsError) as caught:
        await fs.rename(source, await fs.resolve("b.txt"), RenameIntent(info.version))
    assert caught.value.code == "FS_STALE_VERSION"
    assert await bucket.files() == {"a.txt": b"theirs\n"}


async def test_versioned_buckets(versioned_bucket: S3Workspace) -> None:
    fs = await versioned_bucket.provider()
    await versioned_bucket.put("a.txt", b"a")
    source = await fs.resolve("a.txt")
    info = await fs.stat(source)
    assert info is not None and "@" in info.version
    moved = await fs.rename(source, await fs.resolve("b.txt"), RenameIntent(info.version))
    dest = await fs.resolve("b.txt")
    assert (await fs.stat(dest)).version == moved.version  # type: ignore[union-attr]
    await fs.delete(dest, DeleteIntent(moved.version))
    assert await versioned_bucket.files() == {}


async def test_apply_patch_on_a_bucket(bucket: S3Workspace) -> None:
    fs = await bucket.provider()
    await bucket.put("src/a.py", b"one\r\ntwo\r\n")
    await bucket.put("gone.txt", b"bye\n")
    ctx = dsh_fs.create_context(provider=fs, search=False, faces=["apply_patch"])
    session = dsh_fs.Session("/")
    for path in ("src/a.py", "gone.txt"):
        await ctx.tools.execute("read", {"file_path": path}, session=session)
    patch = ("*** Begin Patch\n*** Update File: src/a.py\n*** Move to: lib/a.py\n@@\n one\n-two\n+TWO\n"
             "*** Delete File: gone.txt\n*** Add File: new.txt\n+new\n*** End Patch\n")
    result = await ctx.tools.execute("apply_patch", {"input": patch}, session=session)
    assert result.text == "Success. Updated the following files:\nA /new.txt\nM /lib/a.py\nD /gone.txt\n"
    assert await bucket.files() == {"lib/a.py": b"one\r\nTWO\r\n", "new.txt": b"new\n"}
