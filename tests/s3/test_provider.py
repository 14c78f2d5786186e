"""``S3FileSystem`` against moto's S3 wire protocol on loopback: what the provider contract
(``tests/contract``) cannot say in storage-neutral terms.

Covers: round trips per primitive and per tool call; a writer that slips in between the GET
and the conditional PUT (guarded → FS_STALE_VERSION, unguarded → retried on fresh content);
multipart uploads (conditions on CompleteMultipartUpload, abort leaves no upload behind);
versioned buckets (VersionId in the version token, listings agree with HEAD); prefix
isolation and the display root; the error mapping for a missing bucket, an unreachable
endpoint and access denied; the tool stack end to end with the policy.

Not covered here: the seam contract (``tests/contract``), several processes
(``test_multiprocess.py``), conformance replays (``test_replay_s3.py``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest

import dsh_fs
from dsh_fs.core.signal import AbortSignal
from dsh_fs.fs import CreateIfAbsent, EditIntent, EditRequest, FsError, ReplaceIfVersion
from dsh_fs.fs_s3 import S3FileSystem
from dsh_fs.fs_s3.errors import S3Failure
from dsh_fs.fs_s3.store import ObjectMeta, ObjectStore
from dsh_fs.testing.workspaces import MOTO_CLIENT_OPTIONS, S3Workspace

pytestmark = pytest.mark.anyio

MiB = 1024 * 1024


class _RacingStore(ObjectStore):
    """An ObjectStore that lets "another machine" write right after the next N GETs."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.after_get: list[Callable[[], Awaitable[None]]] = []

    async def get(self, key: str, **kwargs: Any) -> tuple[ObjectMeta, bytes] | None:
        got = await super().get(key, **kwargs)
        if self.after_get:
            await self.after_get.pop(0)()
        return got


async def _racing_provider(ws: S3Workspace, **options: Any) -> tuple[S3FileSystem, _RacingStore]:
    store = _RacingStore(ws.location.bucket, endpoint_url=ws.endpoint_url, client_options=MOTO_CLIENT_OPTIONS)
    fs = await ws.provider(store=store, **options)
    assert isinstance(fs, S3FileSystem)
    return fs, store


async def _pending_uploads(ws: S3Workspace) -> list[Any]:
    client = await ws.admin.client()
    response = await client.list_multipart_uploads(Bucket=ws.location.bucket)
    return list(response.get("Uploads") or [])


# -- round trips ----------------------------------------------------------------------------

async def test_round_trips_per_primitive(bucket: S3Workspace) -> None:
    fs = await bucket.provider()
    assert isinstance(fs, S3FileSystem)
    await bucket.put("a.txt", b"one\ntwo\n")
    target = await fs.resolve("a.txt")
    counts: dict[str, int] = {}

    async def count(name: str, call: Awaitable[Any]) -> Any:
        start = fs.store.requests
        result = await call
        counts[name] = fs.store.requests - start
        return result

    info = await count("stat file", fs.stat(target))
    await count("stat missing", fs.stat(await fs.resolve("nope")))
    await count("read_text", fs.read_text(target))
    await count("edit guarded", fs.edit_text(target, EditRequest(old_string="one", new_string="1"), EditIntent(info.version)))
    fresh = await fs.stat(target)
    await count("write replace", fs.write_text(target, "x\n", ReplaceIfVersion(fresh.version)))
    await count("write create", fs.write_text(await fs.resolve("new.txt"), "n", CreateIfAbsent()))
    await count("resolve", fs.resolve("any/where.txt"))
    assert counts == {
        "stat file": 1, "stat missing": 2, "read_text": 1, "edit guarded": 2,
        "write replace": 2, "write create": 2, "resolve": 0,
    }


async def test_round_trips_per_tool_call(bucket: S3Workspace) -> None:
    fs = await bucket.provider()
    assert isinstance(fs, S3FileSystem)
    await bucket.put("a.txt", b"alpha\n")
    ctx = dsh_fs.create_context(provider=fs)
    session = dsh_fs.Session("/")
    counts = []
    for name, args in [
        ("read", {"file_path": "a.txt"}),
        ("edit", {"file_path": "a.txt", "old_string": "alpha", "new_string": "beta"}),
        ("write", {"file_path": "a.txt", "content": "gamma\n"}),
        ("write", {"file_path": "b.txt", "content": "new\n"}),
    ]:
        start = fs.store.requests
        result = await ctx.tools.execute(name, args, session=session)
        assert not result.is_error, result.text
        counts.append(fs.store.requests - start)
    assert counts == [1, 2, 2, 2]  # read: its stat is one GetObject whose body the window uses
    assert await bucket.files() == {"a.txt": b"gamma\n", "b.txt": b"new\n"}


# -- one process: the in-process lock (REFERENCE-SPEC §2.9) -------------------------------

class _CountingStore(ObjectStore):
    """An ObjectStore that records every conditional PUT's outcome (``ok`` or ``412``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.puts: list[str] = []

    async def put(self, key: str, data: bytes, **kwargs: Any) -> ObjectMeta:
        try:
            meta = await super().put(key, data, **kwargs)
        except S3Failure as failure:
            self.puts.append("412" if failure.precondition_failed else failure.code)
            raise
        self.puts.append("ok")
        return meta


@pytest.mark.parametrize("operation", ["edit", "write"])
async def test_concurrent_mutations_in_one_process_take_turns(bucket: S3Workspace, operation: str) -> None:
    """Mutations of one target inside one process serialize on the provider's lock, so they
    never race each other to S3: each is one GET and one PUT that succeeds (no 412, no retry)."""
    store = _CountingStore(bucket.location.bucket, endpoint_url=bucket.endpoint_url, client_options=MOTO_CLIENT_OPTIONS)
    fs = await bucket.provider(store=store)
    await bucket.put("a.txt", b"END\n")
    target = await fs.resolve("a.txt")

    async def mutate(index: int) -> None:
        if operation == "edit":
            await fs.edit_text(target, EditRequest(old_string="END\n", new_string=f"edit-{index}\nEND\n"))
        else:
            await fs.write_text(target, f"write-{index}\n")

    async with anyio.create_task_group() as tg:
        for index in range(4):
            tg.start_soon(mutate, index)
    assert store.puts == ["ok"] * 4
    final = (await bucket.get("a.txt") or b"").decode()
    if operation == "edit":
        assert sorted(final.splitlines()) == sorted([f"edit-{i}" for i in range(4)] + ["END"])
    assert len(fs.locks) == 0


async def test_a_provider_loaded_as_a_plugin_closes_its_client_with_the_context(bucket: S3Workspace) -> None:
    """``ctx.plugin(S3FileSystem, …)`` builds the provider; ``ctx.aclose()`` closes its client."""
    await bucket.put("a.txt", b"x")
    ctx = dsh_fs.Context()
    ctx.plugin(S3FileSystem, bucket=bucket.location.bucket, prefix=bucket.location.prefix,
               endpoint_url=bucket.endpoint_url, client_options=MOTO_CLIENT_OPTIONS)
    fs = ctx.fs
    assert isinstance(fs, S3FileSystem)
    assert await fs.read_text(await fs.resolve("a.txt")) == "x"
    assert fs.store.open_clients == 1
    await ctx.aclose()
    assert fs.store.open_clients == 0 and not ctx.has("fs")


# -- a writer between GET and PUT ---------------------------------------------------------

async def test_guarded_edit_loses_to_a_writer_between_get_and_put(bucket: S3Workspace) -> None:
    fs, store = await _racing_provider(bucket)
    await bucket.put("a.txt", b"base\n")
    target = await fs.resolve("a.txt")
    seen = await fs.stat(target)
    store.after_get.append(lambda: bucket.put("a.txt", b"base\ntheirs\n"))
    with pytest.raises(FsError) as caught:
        await fs.edit_text(target, EditRequest(old_string="base", new_string="mine"), EditIntent(seen.version))
    assert caught.value.code == "FS_STALE_VERSION"
    assert str(caught.value) == 'cannot edit "/a.txt": file changed since it was read'
    assert await bucket.get("a.txt") == b"base\ntheirs\n"
    assert len(fs.locks) == 0


async def test_unguarded_edit_retries_on_fresh_content(bucket: S3Workspace) -> None:
    fs, store = await _racing_provider(bucket)
    await bucket.put("a.txt", b"base\n")
    store.after_get += [lambda: bucket.put("a.txt", b"base\none\n"), lambda: bucket.put("a.txt", b"base\none\ntwo\n")]
    outcome = await fs.edit_text(await fs.resolve("a.txt"), EditRequest(old_string="base", new_string="mine"))
    assert await bucket.get("a.txt") == b"mine\none\ntwo\n"
    assert outcome.before == "base\none\ntwo\n" and outcome.after == "mine\none\ntwo\n"


async def test_unguarded_edit_gives_up_after_the_retry_budget(bucket: S3Workspace) -> None:
    fs, store = await _racing_provider(bucket, edit_retries=2)
    await bucket.put("a.txt", b"base\n")
    for i in range(3):
        store.after_get.append(lambda i=i: bucket.put("a.txt", f"base\n{i}\n".encode()))
    with pytest.raises(FsError) as caught:
        await fs.edit_text(await fs.resolve("a.txt"), EditRequest(old_string="base", new_string="mine"))
    assert caught.value.code == "FS_STALE_VERSION"
    assert await bucket.get("a.txt") == b"base\n2\n"


async def test_guarded_write_loses_to_a_writer_or_a_delete_between_get_and_put(bucket: S3Workspace) -> None:
    fs, store = await _racing_provider(bucket)
    await bucket.put("a.txt", b"base\n")
    target = await fs.resolve("a.txt")
    seen = await fs.stat(target)
    store.after_get.append(lambda: bucket.put("a.txt", b"theirs\n"))
    with pytest.raises(FsError) as caught:
        await fs.write_text(target, "mine\n", ReplaceIfVersion(seen.version))
    assert str(caught.value) == 'cannot write "/a.txt": file changed since it was read'
    assert await bucket.get("a.txt") == b"theirs\n"
    seen = await fs.stat(target)
    store.after_get.append(lambda: bucket.delete("a.txt"))
    with pytest.raises(FsError) as caught:
        await fs.write_text(target, "mine\n", ReplaceIfVersion(seen.version))
    assert str(caught.value) == 'cannot write "/a.txt": file no longer exists'
    assert await bucket.get("a.txt") is None


async def test_unguarded_write_describes_the_bytes_it_replaced(bucket: S3Workspace) -> None:
    fs, store = await _racing_provider(bucket)
    await bucket.put("a.txt", b"base\r\n")
    store.after_get.append(lambda: bucket.put("a.txt", b"theirs\n"))
    outcome = await fs.write_text(await fs.resolve("a.txt"), "mine\n")
    assert (outcome.operation, outcome.before) == ("update", "theirs\n")
    assert await bucket.get("a.txt") == b"mine\n"  # D4 decided on the replaced (LF) bytes


async def test_unguarded_write_of_a_new_file_created_meanwhile_replaces_it(bucket: S3Workspace) -> None:
    fs, store = await _racing_provider(bucket)
    store.after_get.append(lambda: bucket.put("a.txt", b"theirs\n"))
    outcome = await fs.write_text(await fs.resolve("a.txt"), "mine\n")
    assert (outcome.operation, outcome.before) == ("update", "theirs\n")
    assert await bucket.get("a.txt") == b"mine\n"


# -- multipart ------------------------------------------------------------------------------

async def test_multipart_create_and_replace(bucket: S3Workspace) -> None:
    fs = await bucket.provider(multipart_threshold=5 * MiB, part_size=5 * MiB)
    big = ("0123456789abcdé\n" * (11 * MiB // 17)) + "tail"
    target = await fs.resolve("big.txt")
    created = await fs.write_text(target, big, CreateIfAbsent())
    assert await bucket.get("big.txt") == big.encode()
    info = await fs.stat(target)
    assert info.version == created.version and info.size == len(big.encode())
    assert "-" in info.version  # a multipart ETag: <md5 of part md5s>-<parts>
    with pytest.raises(FsError) as caught:
        await fs.write_text(target, big + "again", CreateIfAbsent())
    assert caught.value.code == "FS_NOT_OBSERVED"
    replaced = await fs.write_text(target, big.replace("tail", "TAIL"), ReplaceIfVersion(info.version))
    assert replaced.operation == "update" and replaced.before == big
    assert (await bucket.get("big.txt") or b"").endswith(b"TAIL")
    assert await _pending_uploads(bucket) == []


async def test_multipart_abort_leaves_nothing_behind(bucket: S3Workspace) -> None:
    fs = await bucket.provider(multipart_threshold=5 * MiB, part_size=5 * MiB)
    signal = AbortSignal()
    store = fs.store
    original = store._call

    async def abort_after_first_part(operation: str, **params: Any) -> Any:
        result = await original(operation, **params)
        if operation == "upload_part":
            signal.abort()
        return result

    store._call = abort_after_first_part  # type: ignore[method-assign]
    with pytest.raises(FsError) as caught:
        await fs.write_text(await fs.resolve("big.txt"), "x" * (12 * MiB), signal=signal)
    assert (caught.value.code, str(caught.value)) == ("FS_ABORTED", "write aborted")
    assert await bucket.get("big.txt") is None
    assert await _pending_uploads(bucket) == []


# -- versioned buckets ----------------------------------------------------------------------

async def test_versioned_bucket_versions_carry_the_version_id(versioned_bucket: S3Workspace) -> None:
    fs = await versioned_bucket.provider()
    await versioned_bucket.put("d/a.txt", b"same\n")
    target = await fs.resolve("d/a.txt")
    first = await fs.stat(target)
    assert first.version.startswith('"') and "@" in first.version
    await versioned_bucket.put("d/a.txt", b"same\n")  # identical bytes, new VersionId
    second = await fs.stat(target)
    assert second.version != first.version
    with pytest.raises(FsError) as caught:
        await fs.edit_text(target, EditRequest(old_string="same", new_string="new"), EditIntent(first.version))
    assert caught.value.code == "FS_STALE_VERSION"
    outcome = await fs.edit_text(target, EditRequest(old_string="same", new_string="new"), EditIntent(second.version))
    listed = await fs.list_dir(await fs.resolve("d"))
    assert [(e.name, e.version) for e in listed] == [("a.txt", outcome.version)]
    assert (await fs.stat(target)).version == outcome.version


# -- paths and prefixes ---------------------------------------------------------------------

async def test_the_prefix_is_the_whole_world(bucket: S3Workspace) -> None:
    client = await bucket.admin.client()
    await client.put_object(Bucket=bucket.location.bucket, Key="outside.txt", Body=b"secret")
    await client.put_object(Bucket=bucket.location.bucket, Key="ws2/a.txt", Body=b"neighbour")
    fs = await bucket.provider()
    assert await fs.list_dir(await fs.resolve("/")) == []
    # ``/..`` is ``/`` (as on the local disk): climbing stays at the prefix, never above it
    for path, display in (("../outside.txt", "/outside.txt"), ("/../ws2/a.txt", "/ws2/a.txt"),
                          ("a/../../outside.txt", "/outside.txt")):
        target = await fs.resolve(path)
        assert target.display_path == display
        assert await fs.stat(target) is None


async def test_display_root_and_session_cwd(bucket: S3Workspace) -> None:
    fs = await bucket.provider(root="/srv/app")
    await bucket.put("src/main.py", b"print(1)\n")
    ctx = dsh_fs.create_context(provider=fs)
    result = await ctx.tools.execute("read", {"file_path": "main.py"}, session=dsh_fs.Session("/srv/app/src"))
    assert result.text.startswith("<path>/srv/app/src/main.py</path>\n")
    outside = await ctx.tools.execute("read", {"file_path": "/etc/passwd"}, session=dsh_fs.Session("/srv/app"))
    assert outside.is_error and outside.error.code == "FS_PERMISSION_DENIED"
    assert outside.text == 'Error: cannot resolve "/etc/passwd": outside the workspace "/srv/app"'


# -- error mapping --------------------------------------------------------------------------

async def test_missing_bucket_is_an_io_error_with_the_service_message(s3_endpoint: str) -> None:
    async with S3FileSystem(bucket="dsh-fs-no-such-bucket", endpoint_url=s3_endpoint,
                            client_options=MOTO_CLIENT_OPTIONS) as fs:
        with pytest.raises(FsError) as caught:
            await fs.read_text(await fs.resolve("a.txt"))
        assert caught.value.code == "FS_IO_ERROR"
        assert str(caught.value) == 'cannot read "/a.txt": The specified bucket does not exist'


async def test_unreachable_endpoint_is_an_io_error() -> None:
    async with S3FileSystem(bucket="b", endpoint_url="http://127.0.0.1:9", client_options=MOTO_CLIENT_OPTIONS) as fs:
        with pytest.raises(FsError) as caught:
            await fs.stat(await fs.resolve("a.txt"))
    assert caught.value.code == "FS_IO_ERROR"
    assert str(caught.value).startswith('cannot stat "/a.txt": Could not connect to the endpoint URL')


class _DeniedStore(ObjectStore):
    async def _call(self, operation: str, **params: Any) -> Any:
        self.requests += 1
        raise S3Failure(403, "AccessDenied", "Access Denied")


@pytest.mark.parametrize(
    ("verb", "run"),
    [
        ("stat", lambda fs, t: fs.stat(t)),
        ("read", lambda fs, t: fs.read_text(t)),
        ("list", lambda fs, t: fs.list_dir(t)),
        ("write", lambda fs, t: fs.write_text(t, "x")),
        ("edit", lambda fs, t: fs.edit_text(t, EditRequest(old_string="a", new_string="b"))),
    ],
)
async def test_access_denied_is_permission_denied(verb: str, run: Callable[[Any, Any], Awaitable[Any]]) -> None:
    fs = S3FileSystem(bucket="b", store=_DeniedStore("b"))
    target = await fs.resolve("a.txt")
    with pytest.raises(FsError) as caught:
        await run(fs, target)
    assert (caught.value.code, str(caught.value)) == ("FS_PERMISSION_DENIED", f'cannot {verb} "/a.txt": permission denied')
    assert len(fs.locks) == 0


# -- the tool stack -------------------------------------------------------------------------

async def test_tools_with_the_policy_over_s3(bucket: S3Workspace) -> None:
    fs = await bucket.provider()
    await bucket.put("notes.md", b"# Notes\r\n\r\nfirst\r\n")
    ctx = dsh_fs.create_context(provider=fs)
    agent = dsh_fs.Session("/")
    unread = await ctx.tools.execute("edit", {"file_path": "notes.md", "old_string": "first", "new_string": "1st"}, session=agent)
    assert unread.text == 'Error: edit requires reading "/notes.md" first — read the file, then retry'
    read = await ctx.tools.execute("read", {"file_path": "notes.md"}, session=agent)
    assert read.text.startswith("<path>/notes.md</path>\n<type>file</type>\n<content>\n1: # Notes\n")
    edit = await ctx.tools.execute("edit", {"file_path": "notes.md", "old_string": "first", "new_string": "1st"}, session=agent)
    assert edit.text == "The file /notes.md has been updated successfully."
    assert await bucket.get("notes.md") == b"# Notes\r\n\r\n1st\r\n"
    await bucket.put("notes.md", b"# Notes\r\n\r\nchanged elsewhere\r\n")
    stale = await ctx.tools.execute("edit", {"file_path": "notes.md", "old_string": "Notes", "new_string": "N"}, session=agent)
    assert stale.error is not None and stale.error.code == "FS_STALE_VERSION"
    first_line, _, changes = stale.text.partition("\n")
    assert first_line == 'Error: cannot edit "/notes.md": file changed since it was read — re-read the file, then retry'
    assert "+changed elsewhere" in changes  # D30: what changed since the agent's write
    assert await bucket.get("notes.md") == b"# Notes\r\n\r\nchanged elsewhere\r\n"
