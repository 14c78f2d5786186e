"""The history on S3 (moto): the stateful property (``historykit``) over a fresh bucket per
example, and a rewind's writes through the conditional PUT of ``write_bytes``."""

from __future__ import annotations

from historykit import run_history_machine

import dsh_fs
from dsh_fs import Session
from dsh_fs.fs.errors import FsError
from dsh_fs.fs.types import CreateIfAbsent, ReplaceIfVersion, Version
from dsh_fs.testing.workspaces import S3Workspace

import pytest


def test_the_stateful_property_on_s3(s3_endpoint: str) -> None:
    async def make() -> S3Workspace:
        return await S3Workspace(endpoint_url=s3_endpoint).create()

    run_history_machine(make, max_examples=12, steps=15)


@pytest.mark.anyio
async def test_write_bytes_is_exact_and_guarded(bucket: S3Workspace) -> None:
    fs = await bucket.provider()
    target = await fs.resolve("/a.bin")
    version = await fs.write_bytes(target, b"\xef\xbb\xbfraw\r\n\xff", CreateIfAbsent())
    assert await bucket.get("a.bin") == b"\xef\xbb\xbfraw\r\n\xff"
    with pytest.raises(FsError, match="FS_NOT_OBSERVED|already exists|read"):
        await fs.write_bytes(target, b"x", CreateIfAbsent())
    await bucket.put("a.bin", b"theirs")
    with pytest.raises(FsError) as stale:
        await fs.write_bytes(target, b"x", ReplaceIfVersion(version))
    assert stale.value.code == "FS_STALE_VERSION"
    now = (await fs.stat(target)).version  # type: ignore[union-attr]
    assert await fs.write_bytes(target, b"mine", ReplaceIfVersion(Version(now))) != now
    assert await bucket.get("a.bin") == b"mine"
    gone = await fs.resolve("/gone.bin")
    with pytest.raises(FsError) as missing:
        await fs.write_bytes(gone, b"x", ReplaceIfVersion(version))
    assert missing.value.code == "FS_STALE_VERSION"
    await fs.aclose()


@pytest.mark.anyio
async def test_rewind_on_s3(bucket: S3Workspace) -> None:
    ctx = dsh_fs.create_context(provider=await bucket.provider(), policy=False, history=True)
    session = Session(cwd="/")
    await bucket.put("keep.txt", b"start\r\n")
    await ctx.tools.execute("write", {"file_path": "/keep.txt", "content": "changed\n"}, session=session)
    await ctx.tools.execute("write", {"file_path": "/new.txt", "content": "new\n"}, session=session)
    result = await ctx.rewind(session, to=0)
    assert not result.refused and result.error is None
    assert await bucket.files() == {"keep.txt": b"start\r\n"}
    await ctx.aclose()
