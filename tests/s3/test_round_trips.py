"""HTTP requests per ``read``/``edit``/``write`` tool call on S3, counted on the wire: a
botocore ``before-send`` hook on the provider's own client sees every request actually sent
(retries included), so these counts cannot drift from ``ObjectStore.requests``' bookkeeping.

Covers: a ``read`` of a file of at most ``stat_fetch_max`` bytes is one GetObject (its stat),
and returns exactly the content of the version it records; a bigger file and an empty one;
``edit`` and ``write`` at their floor (GetObject + conditional PutObject); ``read_window``
equal to windowing ``read_text`` on every window, for bytes the stat fetched; an
``apply_patch`` update and an ``insert`` at an ``edit``'s two requests (``read_text_at``), stale
refusals kept.
"""

from __future__ import annotations

from typing import Any

import pytest

import dsh_fs
from dsh_fs.fs.window import ReadWindow, window_text
from dsh_fs.fs_s3 import S3FileSystem
from dsh_fs.fs_s3.body_cache import BodyCache
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
    kept = BodyCache(10)
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


def _update_patch(names: list[str]) -> str:
    return "*** Begin Patch\n" + "".join(
        f"*** Update File: {name}\n@@\n one\n-two\n+TWO\n" for name in names) + "*** End Patch"


async def test_apply_patch_requests_per_updated_file(bucket: S3Workspace) -> None:
    """An ``apply_patch`` updating files the session has read: per file, the stat's GetObject
    (whose body ``read_text_at`` decodes: it is of exactly the version the stat reported, the
    one the session observed) and one conditional PutObject whose basis is those bytes — an
    ``edit``'s two. A file bigger than ``stat_fetch_max`` adds the GetObject of its body."""
    fs, wire = await _wired(bucket, stat_fetch_max=64)
    names = [f"f{i}.txt" for i in range(PATCH_FILES)]
    for name in names:
        await bucket.put(name, b"one\ntwo\nthree\n")
    await bucket.put("big.txt", b"one\ntwo\nthree\n" + b"x" * 100 + b"\n")
    ctx = dsh_fs.create_context(provider=fs, faces=["apply_patch"])
    session = dsh_fs.Session("/")
    for name in [*names, "big.txt"]:
        await _call(ctx, "read", {"file_path": name}, session)
    wire.take()
    await _call(ctx, "apply_patch", {"input": _update_patch(names)}, session)
    assert sorted(wire.take()) == sorted(["GetObject", "PutObject"] * PATCH_FILES)
    assert await bucket.files() == {**{name: b"one\nTWO\nthree\n" for name in names},
                                    "big.txt": b"one\ntwo\nthree\n" + b"x" * 100 + b"\n"}
    assert len(fs.fetched) == 0  # every stat's body was taken by its patch read
    assert len(fs.bases) == 1  # the read tool's read_text basis of big.txt; the patch's were taken
    await _call(ctx, "apply_patch", {"input": _update_patch(["big.txt"])}, session)
    assert wire.take() == ["GetObject", "GetObject", "PutObject"]  # the first 64 bytes, then all
    assert (await bucket.files())["big.txt"].startswith(b"one\nTWO\n")


async def test_apply_patch_delete_requests(bucket: S3Workspace) -> None:
    """A deletion's gather is its stat alone (the text is the stat's body); then the delete's
    HeadObject and conditional DeleteObject."""
    fs, wire = await _wired(bucket)
    await bucket.put("a.txt", b"gone\n")
    ctx = dsh_fs.create_context(provider=fs, faces=["apply_patch"])
    session = dsh_fs.Session("/")
    await _call(ctx, "read", {"file_path": "a.txt"}, session)
    wire.take()
    await _call(ctx, "apply_patch", {"input": "*** Begin Patch\n*** Delete File: a.txt\n*** End Patch"}, session)
    assert wire.take() == ["GetObject", "HeadObject", "DeleteObject"]
    assert await bucket.files() == {}


async def test_apply_patch_refuses_a_file_changed_after_its_read(bucket: S3Workspace) -> None:
    """Another writer between the patch's read (the stat's body) and its PutObject: the
    ``If-Match`` fails, the patch is refused as stale and nothing of it is written."""
    fs, wire = await _wired(bucket)
    await bucket.put("a.txt", b"one\ntwo\nthree\n")
    ctx = dsh_fs.create_context(provider=fs, faces=["apply_patch"])
    session = dsh_fs.Session("/")
    await _call(ctx, "read", {"file_path": "a.txt"}, session)
    checked = fs.check_replaceable

    async def meanwhile(*args: Any, **kwargs: Any) -> None:  # after the gather, before the write
        await bucket.put("a.txt", b"one\ntwo\nthree\ntheirs\n")
        await checked(*args, **kwargs)

    fs.check_replaceable = meanwhile  # type: ignore[method-assign]
    wire.take()
    result = await ctx.tools.execute("apply_patch", {"input": _update_patch(["a.txt"])}, session=session)
    assert result.is_error and 'cannot write "/a.txt": file changed since it was read' in result.text
    assert "No files were modified." in result.text
    assert wire.take() == ["GetObject", "PutObject"]  # the 412 of the PutObject decided
    assert await bucket.files() == {"a.txt": b"one\ntwo\nthree\ntheirs\n"}


async def test_apply_patch_refuses_a_file_changed_since_the_session_read_it(bucket: S3Workspace) -> None:
    """The stat sees a version the session never observed: its kept body is not the guard's
    text, so it is not used; the patch is refused stale before any write."""
    fs, wire = await _wired(bucket)
    await bucket.put("a.txt", b"one\ntwo\nthree\n")
    ctx = dsh_fs.create_context(provider=fs, faces=["apply_patch"])
    session = dsh_fs.Session("/")
    await _call(ctx, "read", {"file_path": "a.txt"}, session)
    await bucket.put("a.txt", b"one\ntwo\nthree\ntheirs\n")
    wire.take()
    result = await ctx.tools.execute("apply_patch", {"input": _update_patch(["a.txt"])}, session=session)
    assert result.is_error and 'file changed since it was read' in result.text
    assert "PutObject" not in wire.take()
    assert await bucket.files() == {"a.txt": b"one\ntwo\nthree\ntheirs\n"}
    assert len(fs.fetched) == 0  # the stat's body of the unobserved version was dropped


async def test_read_text_at(bucket: S3Workspace) -> None:
    """``read_text_at``: the stat's body of exactly the guard version (no request), else one
    GetObject whose ETag is compared; never a HeadObject. A body kept for another version is
    never served as the text of the one asked for."""
    from dsh_fs.fs.types import ReplaceIfVersion, Version

    fs, wire = await _wired(bucket)
    await bucket.put("a.txt", b"old\n")
    target = await fs.resolve("a.txt")
    old = await fs.stat(target)
    assert old is not None
    await bucket.put("a.txt", b"new\n")
    wire.take()
    # the stat's body is of ``old``: served as old's text even though the object moved on …
    assert await fs.read_text_at(target, old.version, info=old) == "old\n" and wire.take() == []
    # … and the write of that version is refused by the PutObject If-Match alone
    with pytest.raises(dsh_fs.fs.FsError) as raised:
        await fs.write_text(target, "x\n", ReplaceIfVersion(old.version))
    assert raised.value.fs_code == dsh_fs.fs.FsErrorCode.STALE_VERSION and wire.take() == ["PutObject"]
    # without a kept body: one GetObject, its ETag decides
    assert await fs.read_text_at(target, old.version, info=old) is None and wire.take() == ["GetObject"]
    new = await fs.stat(target)
    assert new is not None
    wire.take()
    assert await fs.read_text_at(target, old.version, info=new) is None  # kept body of ``new``: not old's
    assert wire.take() == ["GetObject"] and len(fs.fetched) == 0
    assert await fs.read_text_at(target, new.version) == "new\n" and wire.take() == ["GetObject"]
    await fs.write_text(target, "newer\n", ReplaceIfVersion(new.version))
    assert wire.take() == ["PutObject"]
    assert await fs.read_text_at(target, Version("nope")) is None
    assert await bucket.files() == {"a.txt": b"newer\n"}


async def test_insert_is_two_requests(bucket: S3Workspace) -> None:
    """The editors' ``insert`` of a small read file: the stat's GetObject and the PutObject."""
    fs, wire = await _wired(bucket)
    await bucket.put("a.txt", b"one\ntwo\n")
    ctx = dsh_fs.create_context(provider=fs, faces=["str_replace_based_edit_tool"])
    session = dsh_fs.Session("/")
    await _call(ctx, "read", {"file_path": "a.txt"}, session)
    wire.take()
    await _call(ctx, "str_replace_based_edit_tool", {"command": "insert", "path": "/a.txt", "insert_line": 1, "insert_text": "mid"},
                session)
    assert wire.take() == ["GetObject", "PutObject"]
    assert await bucket.files() == {"a.txt": b"one\nmid\ntwo\n"}


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


async def test_read_image_of_a_small_image_is_one_request(bucket: S3Workspace) -> None:
    """``read_image`` of an image no bigger than ``stat_fetch_max``: the stat's GetObject is
    the only request, and the bytes shown are of exactly the version it records (an image
    replaced after the stat is not mixed in: the observation and the bytes agree)."""
    import base64

    from imagekit import encoded, gradient

    png = encoded(gradient(), "PNG")
    fs, wire = await _wired(bucket, stat_fetch_max=len(png))
    await bucket.put("a.png", png)
    ctx = dsh_fs.create_context(provider=fs, images=True, search=False)
    result = await ctx.tools.execute("read_image", {"file_path": "a.png"})
    assert not result.is_error and base64.b64decode(result.images[0]["data"]) == png
    assert wire.take() == ["GetObject"] and len(fs.fetched) == 0
    bigger = encoded(gradient(80, 60), "PNG")
    assert len(bigger) > len(png)
    await bucket.put("b.png", bigger)
    result = await ctx.tools.execute("read_image", {"file_path": "b.png"})
    assert not result.is_error and base64.b64decode(result.images[0]["data"]) == bigger
    assert wire.take() == ["GetObject", "GetObject"]  # the stat's first bytes, then the ranged read
    target = await fs.resolve("a.png")
    info = await fs.stat(target)
    assert info is not None
    await bucket.put("a.png", bigger)
    wire.take()
    assert await fs.read_bytes(target, max_bytes=len(png), info=info) == png and wire.take() == []
    await bucket.put("a.png", png)
    info = await fs.stat(target)
    wire.take()
    with pytest.raises(dsh_fs.fs.FsError, match='cannot read "/a.png": content exceeds the 10-byte limit'):
        await fs.read_bytes(target, max_bytes=10, info=info)  # the kept body is over this cap
    assert wire.take() == []
    await ctx.aclose()
