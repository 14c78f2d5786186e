"""The history on S3 (moto): the stateful property (``historykit``) over a fresh bucket per
example, and a rewind's writes through the conditional PUT of ``write_bytes``."""

from __future__ import annotations

from historykit import run_history_machine

import dsh_fs
from dsh_fs import Session
from dsh_fs.fs.errors import FsError
from dsh_fs.fs.types import CreateIfAbsent, ReplaceIfVersion, Version
from dsh_fs.history.s3_store import S3HistoryStore
from dsh_fs.testing.workspaces import MOTO_CLIENT_OPTIONS, S3Workspace

import pytest


def test_the_stateful_property_on_s3(s3_endpoint: str) -> None:
    async def make() -> S3Workspace:
        return await S3Workspace(endpoint_url=s3_endpoint).create()

    run_history_machine(make, max_examples=12, steps=15)


def test_the_stateful_property_with_the_s3_store(s3_endpoint: str) -> None:
    async def make() -> S3Workspace:
        return await S3Workspace(endpoint_url=s3_endpoint).create()

    def store(ws: S3Workspace) -> S3HistoryStore:  # type: ignore[override]
        return S3HistoryStore(ws.location.bucket, endpoint_url=s3_endpoint, client_options=MOTO_CLIENT_OPTIONS)

    run_history_machine(make, max_examples=6, steps=12, store=store)  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_the_s3_store_is_shared_numbered_checkpointed_and_bounded(bucket: S3Workspace, s3_endpoint: str) -> None:
    def store(cap: int = 1 << 20) -> S3HistoryStore:
        return S3HistoryStore(bucket.location.bucket, endpoint_url=s3_endpoint, client_options=MOTO_CLIENT_OPTIONS,
                              max_owner_bytes=cap)

    one = dsh_fs.create_context(provider=await bucket.provider(), policy=False, history=store())
    two = dsh_fs.create_context(provider=await bucket.provider(), policy=False, history=store())  # another machine
    session = Session(cwd="/", id="S")
    await bucket.put("a.txt", b"a0\n")
    await one.tools.execute("write", {"file_path": "/a.txt", "content": "a1\n"}, session=session)
    point = await two.checkpoint("S", "after-one")
    await two.tools.execute("write", {"file_path": "/b.txt", "content": "b1\n"}, session=session)
    steps = await one.history("S")
    assert [(s.number, s.tool, s.paths) for s in steps] == [(1, "write", ("/a.txt",)), (2, "write", ("/b.txt",))]
    assert steps[0].checkpoints == ("after-one",) and steps.checkpoints[0].id == point
    assert not any(k.startswith(".dsh-fs-history") for k in await bucket.files())  # outside the served prefix
    result = await one.rewind("S", to="after-one")
    assert not result.refused and await bucket.files() == {"a.txt": b"a1\n"}
    result = await two.rewind("S", to=0)
    assert not result.refused and await bucket.files() == {"a.txt": b"a0\n"}
    await two.history("S")  # a reading store writes the ends its intents have not carried yet
    assert await one.history("S") == await two.history("S")
    small = dsh_fs.create_context(provider=await bucket.provider(), policy=False, history=store(cap=4))
    other = Session(cwd="/", id="T")
    for i in range(3):
        await small.tools.execute("write", {"file_path": "/a.txt", "content": f"t{i}\n"}, session=other)
    steps = await small.history("T")
    assert steps.dropped == 2 and [s.number for s in steps] == [3] and steps.kept_bytes == 3
    assert await small.fs.store.forget("T") == 1 and list(await small.history("T")) == []
    for ctx in (one, two, small):
        await ctx.aclose()


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
