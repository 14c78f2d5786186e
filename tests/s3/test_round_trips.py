"""HTTP requests per ``read``/``edit``/``write`` tool call on S3, counted on the wire: a
botocore ``before-send`` hook on the provider's own client sees every request actually sent
(retries included), so these counts cannot drift from ``ObjectStore.requests``' bookkeeping.

Covers: a ``read`` of a file of at most ``stat_fetch_max`` bytes is one GetObject (its stat),
and returns exactly the content of the version it records; a bigger file and an empty one;
``edit`` and ``write`` at their floor (GetObject + conditional PutObject); ``read_window``
equal to windowing ``read_text`` on every window, for bytes the stat fetched.
"""

from __future__ import annotations

from typing import Any

import pytest

import dsh_fs
from dsh_fs.fs.window import ReadWindow, window_text
from dsh_fs.fs_s3 import S3FileSystem
from dsh_fs.fs_s3.fetched import FetchedBodies
from dsh_fs.testing.workspaces import S3Workspace

pytestmark = pytest.mark.anyio


class _Wire:
    """Operation names of the HTTP requests one S3 client sends."""

    def __init__(self) -> None:
        self.sent: list[str] = []

    def __call__(self, *, event_name: str, **_: Any) -> None:
        self.sent.append(event_name.rsplit(".", 1)[-1])  # before-send.s3.<Operation>

    def take(self) -> list[str]:
        sent, self.sent = self.sent, []
        return sent


async def _wired(bucket: S3Workspace, **options: Any) -> tuple[S3FileSystem, _Wire]:
    fs = await bucket.provider(**options)
    assert isinstance(fs, S3FileSystem)
    wire = _Wire()
    client = await fs.store.client()
    client.meta.events.register("before-send.s3", wire)
    return fs, wire


async def _call(ctx: Any, name: str, args: dict[str, Any], session: Any) -> str:
    result = await ctx.tools.execute(name, args, session=session)
    assert not result.is_error, result.text
    return result.text


async def test_small_read_is_one_get_object(bucket: S3Workspace) -> None:
    fs, wire = await _wired(bucket)
    await bucket.put("a.txt", b"alpha\nbeta\n")
    ctx = dsh_fs.create_context(provider=fs)
    session = dsh_fs.Session("/")
    text = await _call(ctx, "read", {"file_path": "a.txt"}, session)
    assert wire.take() == ["GetObject"]
    assert "1: alpha\n2: beta" in text
    assert len(fs.fetched) == 0  # the body was taken by the read that followed the stat
    # the observation is of the version read: an edit guarded by it goes through
    await _call(ctx, "edit", {"file_path": "a.txt", "old_string": "beta", "new_string": "gamma"}, session)
    assert wire.take() == ["GetObject", "PutObject"]
    await _call(ctx, "write", {"file_path": "a.txt", "content": "new\n"}, session)
    assert wire.take() == ["GetObject", "PutObject"]
    await _call(ctx, "write", {"file_path": "b.txt", "content": "b\n"}, session)
    assert wire.take() == ["ListObjectsV2", "PutObject"]  # a directory named b.txt? then create
    assert await bucket.files() == {"a.txt": b"new\n", "b.txt": b"b\n"}


async def test_read_sees_the_version_its_stat_reported(bucket: S3Workspace) -> None:
    """Bytes kept by a stat are served only for that version: after another writer replaced
    the object, a read with the old Info gets nothing kept and a fresh stat gets the new body."""
    fs, wire = await _wired(bucket)
    await bucket.put("a.txt", b"old\n")
    target = await fs.resolve("a.txt")
    old = await fs.stat(target)
    await bucket.put("a.txt", b"new\n")
    new = await fs.stat(target)
    assert old is not None and new is not None and old.version != new.version
    wire.take()
    got = await fs.read_window(target, ReadWindow(), info=new)
    assert got is not None and got.texts == ["new"] and wire.take() == []
    assert await fs.read_window(target, ReadWindow(), info=new) is None  # taken once
    old_got = await fs.read_window(target, ReadWindow(), info=old)
    assert old_got is not None and old_got.texts == ["old"]  # exactly the bytes of that version


async def test_bigger_and_empty_files(bucket: S3Workspace) -> None:
    fs, wire = await _wired(bucket, stat_fetch_max=1024)
    ctx = dsh_fs.create_context(provider=fs)
    session = dsh_fs.Session("/")
    await bucket.put("big.txt", b"q" * 2000 + b"\n")
    await bucket.put("fits.txt", b"w" * 1023 + b"\n")
    await bucket.put("empty.txt", b"")
    assert (await _call(ctx, "read", {"file_path": "big.txt"}, session)).count("q") == 2000
    assert wire.take() == ["GetObject", "GetObject"]  # first KiB for the stat, then the whole body
    assert (await _call(ctx, "read", {"file_path": "fits.txt"}, session)).count("w") == 1023
    assert wire.take() == ["GetObject"]
    assert "(End of file - total 0 lines)" in await _call(ctx, "read", {"file_path": "empty.txt"}, session)
    assert wire.take() == ["GetObject", "HeadObject"]  # 416 for the range, HEAD: 0 bytes
    missing = await ctx.tools.execute("read", {"file_path": "nope.txt"}, session=session)
    assert missing.is_error and wire.take()[:2] == ["GetObject", "ListObjectsV2"]


async def test_head_only_when_fetching_is_off(bucket: S3Workspace) -> None:
    fs, wire = await _wired(bucket, stat_fetch_max=0)
    await bucket.put("a.txt", b"a\n")
    ctx = dsh_fs.create_context(provider=fs)
    await _call(ctx, "read", {"file_path": "a.txt"}, dsh_fs.Session("/"))
    assert wire.take() == ["HeadObject", "GetObject"]
    assert await fs.is_current(await fs.resolve("a.txt"), (await fs.stat(await fs.resolve("a.txt"))).version)


async def test_is_current_never_fetches_a_body(bucket: S3Workspace) -> None:
    fs, wire = await _wired(bucket)
    await bucket.put("a.txt", b"a\n")
    target = await fs.resolve("a.txt")
    info = await fs.stat(target)
    assert info is not None
    wire.take()
    assert await fs.is_current(target, info.version)
    assert wire.take() == ["HeadObject"]


WINDOWS = [
    ReadWindow(),
    ReadWindow(offset=2, limit=2),
    ReadWindow(offset=40),
    ReadWindow(max_line_length=4),
    ReadWindow(max_bytes=12, always_progress=True, exact_truncation=True),
]


@pytest.mark.parametrize(
    "raw",
    [b"one\ntwo\r\nthree\rstill\n\nfive \xf0\x9f\x98\x80\n", b"\xef\xbb\xbffirst\nsecond", b"text\n\x00more\n",
     b"ok\nbad \xff byte\n", b"\n"],
    ids=["lines", "bom", "nul", "invalid", "newline"],
)
async def test_fetched_window_equals_windowing_read_text(bucket: S3Workspace, raw: bytes) -> None:
    fs = await bucket.provider()
    assert isinstance(fs, S3FileSystem)
    await bucket.put("f.txt", raw)
    target = await fs.resolve("f.txt")

    async def outcome(run: Any) -> Any:
        try:
            return ("ok", await run())
        except dsh_fs.fs.FsError as err:
            return ("err", err.code, str(err))

    for window in WINDOWS:
        info = await fs.stat(target)
        assert info is not None and len(fs.fetched) == 1
        got = await outcome(lambda: fs.read_window(target, window, info=info))
        assert got[0] == "err" or got[1] is not None
        want = await outcome(lambda: _window_read_text(fs, target, window))
        assert got == want, window


async def _window_read_text(fs: S3FileSystem, target: Any, window: ReadWindow) -> Any:
    return window_text([await fs.read_text(target)], window, target.display_path)


def test_fetched_bodies_stay_under_their_byte_bound() -> None:
    kept = FetchedBodies(10)
    kept.put(("a", "1"), b"12345")
    kept.put(("b", "1"), b"123456")  # evicts a
    assert (kept.take(("a", "1")), kept.held) == (None, 6)
    kept.put(("c", "1"), b"x" * 11)  # bigger than the bound: not kept
    assert (len(kept), kept.held) == (1, 6)
    kept.put(("b", "1"), b"1")  # replaces
    assert (kept.take(("b", "1")), kept.held, len(kept)) == (b"1", 0, 0)


async def test_a_refused_get_falls_back_to_head(bucket: S3Workspace) -> None:
    """A GET the service refuses (an archived object, a policy that allows only HEAD) does not
    fail the stat: HeadObject answers it, as it did before stat fetched bodies."""
    from dsh_fs.fs_s3.errors import S3Failure
    from dsh_fs.fs_s3.store import ObjectStore
    from dsh_fs.testing.workspaces import MOTO_CLIENT_OPTIONS

    class _NoGet(ObjectStore):
        async def get_prefix(self, key: str, max_bytes: int) -> Any:
            self.requests += 1
            raise S3Failure(403, "InvalidObjectState", "The operation is not valid for the object's storage class")

    await bucket.put("a.txt", b"archived\n")
    store = _NoGet(bucket.location.bucket, endpoint_url=bucket.endpoint_url, client_options=MOTO_CLIENT_OPTIONS)
    fs = await bucket.provider(store=store)
    assert isinstance(fs, S3FileSystem)
    info = await fs.stat(await fs.resolve("a.txt"))
    assert info is not None and info.type == "file" and info.size == 9 and store.requests == 2
    assert len(fs.fetched) == 0


PATCH_FILES = 5


async def test_apply_patch_requests_per_updated_file(bucket: S3Workspace) -> None:
    """An ``apply_patch`` updating files the session has read: per file, the stat's GetObject,
    the read's GetObject, the HeadObject that checks the text read is of the guard version, and
    one conditional PutObject whose basis is the bytes that read got (no GetObject before it).
    Guarded as before: another writer between the read and the write is still refused."""
    fs, wire = await _wired(bucket)
    names = [f"f{i}.txt" for i in range(PATCH_FILES)]
    for name in names:
        await bucket.put(name, b"one\ntwo\nthree\n")
    ctx = dsh_fs.create_context(provider=fs, faces=["apply_patch"])
    session = dsh_fs.Session("/")
    for name in names:
        await _call(ctx, "read", {"file_path": name}, session)
    wire.take()
    patch = "*** Begin Patch\n" + "".join(
        f"*** Update File: {name}\n@@\n one\n-two\n+TWO\n" for name in names) + "*** End Patch"
    await _call(ctx, "apply_patch", {"input": patch}, session)
    sent = wire.take()
    assert sorted(sent) == sorted(["GetObject", "GetObject", "HeadObject", "PutObject"] * PATCH_FILES)
    assert await bucket.files() == {name: b"one\nTWO\nthree\n" for name in names}
    assert len(fs.bases) == 0  # every basis was taken by its write


async def test_a_kept_basis_never_hides_a_change(bucket: S3Workspace) -> None:
    """The write's basis is the read's bytes of exactly the guard version; if the object changed
    since, the PutObject ``If-Match`` fails and the write is stale, the other writer's bytes kept."""
    from dsh_fs.fs.types import ReplaceIfVersion

    fs, wire = await _wired(bucket)
    await bucket.put("a.txt", b"mine\n")
    target = await fs.resolve("a.txt")
    info = await fs.stat(target)
    assert info is not None
    assert await fs.read_text(target) == "mine\n"
    await bucket.put("a.txt", b"theirs\n")
    wire.take()
    with pytest.raises(dsh_fs.fs.FsError) as raised:
        await fs.write_text(target, "mine, changed\n", ReplaceIfVersion(info.version))
    assert raised.value.fs_code == dsh_fs.fs.FsErrorCode.STALE_VERSION
    assert wire.take() == ["PutObject"]
    assert await bucket.files() == {"a.txt": b"theirs\n"}
