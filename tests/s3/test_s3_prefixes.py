"""Several prefixes in one ``S3FileSystem`` (DEVIATIONS D28 on S3): containment per root, the
messages naming the roots, no rename across roots, overlapping roots refused, ``open_provider``
and the repeated ``--s3`` of ``dsh-fs mcp``; the provider contract over two prefixes is in
tests/contract/test_contract.py (``TestS3TwoPrefixes``)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dsh_fs
from dsh_fs.fs.backend import FsError
from dsh_fs.fs_s3 import S3FileSystem, from_urls
from dsh_fs.fs_s3.roots import display_roots, prefix_roots
from dsh_fs.testing.workspaces import MOTO_CLIENT_OPTIONS, S3TwoPrefixWorkspace

pytestmark = pytest.mark.anyio


@pytest.fixture(params=[False, True], ids=["one-bucket", "two-buckets"])
async def two(s3_endpoint: str, request: pytest.FixtureRequest) -> AsyncIterator[S3TwoPrefixWorkspace]:
    """``/ws`` (``team/ws/``) first, ``/peer`` (``team/peer/``) second, in one or two buckets."""
    ws = await S3TwoPrefixWorkspace(endpoint_url=s3_endpoint, first=True, other_bucket=request.param).create()
    yield ws
    await ws.aclose()


async def _call(ctx: Any, tool: str, args: dict[str, Any], session: Any) -> Any:
    return await ctx.tools.execute(tool, args, session=session)


OUTSIDE = [  # (model path from cwd /ws, the display path the refusal names)
    ("/etc/passwd", "/etc/passwd"),
    ("../outside.txt", "/outside.txt"),
    ("/ws/../../team/x.txt", "/team/x.txt"),
    ("/", "/"),
    ("/wsx/a.txt", "/wsx/a.txt"),  # a name that merely starts like a root
    ("/peerage", "/peerage"),
]


@pytest.mark.parametrize(("path", "shown"), OUTSIDE, ids=[p for p, _ in OUTSIDE])
async def test_a_path_under_no_root_is_refused_naming_every_root(two: S3TwoPrefixWorkspace, path: str,
                                                                 shown: str) -> None:
    client = await two.admin.client()
    await client.put_object(Bucket=two.location.bucket, Key="team/x.txt", Body=b"neighbour")
    await client.put_object(Bucket=two.location.bucket, Key="outside.txt", Body=b"secret")
    fs = await two.provider()
    ctx = dsh_fs.create_context(provider=fs)
    session = dsh_fs.Session("/ws")
    before = await client.list_objects_v2(Bucket=two.location.bucket)
    for tool, args in (("read", {"file_path": path}), ("write", {"file_path": path, "content": "x"}),
                       ("edit", {"file_path": path, "old_string": "a", "new_string": "b"})):
        result = await _call(ctx, tool, args, session)
        assert result.is_error and result.error.code == "FS_PERMISSION_DENIED"
        assert result.text == f'Error: cannot resolve "{shown}": outside the workspace "/ws", "/peer"'
    after = await client.list_objects_v2(Bucket=two.location.bucket)
    assert [o["ETag"] for o in after["Contents"]] == [o["ETag"] for o in before["Contents"]]
    assert await two.peer.files() == {}


async def test_each_root_is_reached_by_its_own_paths_and_nothing_leaks(two: S3TwoPrefixWorkspace) -> None:
    await two.put("a.txt", b"in ws\n")
    await two.peer.put("b.txt", b"in peer\n")
    fs = await two.provider()
    assert fs.workspace_roots() == ("/ws", "/peer")
    ctx = dsh_fs.create_context(provider=fs)
    session = dsh_fs.Session("/ws")
    got = await _call(ctx, "read", {"file_path": "../peer/b.txt"}, session)
    assert got.text.startswith("<path>/peer/b.txt</path>\n") and "1: in peer" in got.text
    written = await _call(ctx, "write", {"file_path": "/peer/new.txt", "content": "n\n"}, session)
    assert not written.is_error, written.text
    assert await two.peer.get("new.txt") == b"n\n" and await two.get("new.txt") is None
    listed = await _call(ctx, "glob", {"pattern": "**/*.txt"}, session)
    assert listed.text == "a.txt"  # the search stays in the cwd's root (b.txt is in /peer)
    assert (await fs.resolve("sub/../a.txt")).display_path == "/ws/a.txt"


async def test_one_root_keeps_todays_text_byte_for_byte(s3_endpoint: str) -> None:
    async with S3FileSystem(roots={"/srv": "s3://some-bucket/team/ws"}, endpoint_url=s3_endpoint,
                            client_options=MOTO_CLIENT_OPTIONS) as fs:
        with pytest.raises(FsError) as caught:
            await fs.resolve("/etc/passwd")
        assert str(caught.value) == 'cannot resolve "/etc/passwd": outside the workspace "/srv"'
        with pytest.raises(FsError) as caught:
            await fs.resolve("../x")
        assert str(caught.value) == 'cannot resolve "/x": outside the workspace "/srv"'
        assert fs.workspace_roots() == ("/srv",) and repr(fs) == "S3FileSystem('s3://some-bucket/team/ws/', root='/srv')"


async def test_a_rename_never_crosses_roots(two: S3TwoPrefixWorkspace) -> None:
    await two.put("a.txt", b"stay\n")
    fs = await two.provider()
    source, dest = await fs.resolve("a.txt"), await fs.resolve("/peer/a.txt")
    start = fs.store.requests
    for check in (fs.check_renamable(source, dest), fs.rename(source, dest)):
        with pytest.raises(FsError) as caught:
            await check
        assert caught.value.code == "FS_PERMISSION_DENIED"
        assert str(caught.value) == 'cannot rename "/ws/a.txt" to "/peer/a.txt": outside the workspace "/ws"'
    assert fs.store.requests == start  # refused before any request
    # apply_patch is refused whole, before it writes anything
    ctx = dsh_fs.create_context(provider=fs, faces=("apply_patch",))
    session = dsh_fs.Session("/ws")
    await _call(ctx, "read", {"file_path": "a.txt"}, session)
    patch = ("*** Begin Patch\n*** Add File: new.txt\n+n\n*** Update File: a.txt\n*** Move to: /peer/a.txt\n"
             "@@\n-stay\n+moved\n*** End Patch")
    result = await _call(ctx, "apply_patch", {"input": patch}, session)
    assert result.is_error and "outside the workspace \"/ws\"" in result.text
    assert await two.files() == {"a.txt": b"stay\n"} and await two.peer.files() == {}


@pytest.mark.parametrize(("roots", "message"), [
    ({"/a": "s3://b/team", "/b": "s3://b/team/a"}, "S3FileSystem: roots s3://b/team/ and s3://b/team/a/ overlap"),
    ({"/a": "s3://b/x/", "/b": "s3://b/x"}, "S3FileSystem: roots s3://b/x/ and s3://b/x/ overlap"),
    ({"/a": "s3://b", "/b": "s3://b/y"}, "S3FileSystem: roots s3://b/ and s3://b/y/ overlap"),
    ({"/a": "s3://b/x", "/a/b": "s3://c/y"}, "S3FileSystem: roots /a and /a/b overlap"),
    ({"/": "s3://b/x", "/b": "s3://c/y"}, "S3FileSystem: roots / and /b overlap"),
    ({}, "S3FileSystem: roots= names no root"),
    ({f"/r{i}": f"s3://b/p{i}" for i in range(65)}, "S3FileSystem: at most 64 roots"),
    ({"rel": "s3://b/x"}, "display root must be an absolute path, not 'rel'"),
    ({"/a": "team/x"}, "S3FileSystem: root 'team/x' is not an s3://bucket/prefix URL (and no bucket= is given)"),
])
def test_overlapping_or_bad_roots_are_refused(roots: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError) as caught:
        S3FileSystem(roots=roots)
    assert str(caught.value) == message


def test_same_prefix_in_two_buckets_and_bare_prefixes_are_fine() -> None:
    assert [(d, loc.url) for d, loc in prefix_roots({"/a": "s3://one/x", "/b": "s3://two/x", "/c": "xy"}, "one")] == [
        ("/a", "s3://one/x/"), ("/b", "s3://two/x/"), ("/c", "s3://one/xy/")]
    with pytest.raises(ValueError, match="give prefix=/root= or roots=, not both"):
        S3FileSystem(bucket="b", prefix="p", roots={"/a": "q"})
    with pytest.raises(ValueError, match="S3FileSystem: cwd /else is outside every root"):
        S3FileSystem(roots={"/a": "s3://b/a", "/b": "s3://b/b"}, cwd="/else")


def test_cli_names_and_one_client_per_endpoint() -> None:
    assert display_roots(["s3://b/team/a", "s3://c/b/", "s3://whole"]) == {
        "/a": "s3://b/team/a", "/b": "s3://c/b/", "/whole": "s3://whole"}
    with pytest.raises(ValueError, match=r"^S3FileSystem: s3://b/x/a and s3://c/y/a would both be served as /a$"):
        display_roots(["s3://b/x/a", "s3://c/y/a"])
    with pytest.raises(ValueError, match=r"^S3FileSystem: roots s3://b/a and s3://b/a/ overlap$"):
        display_roots(["s3://b/a", "s3://b/a/"])
    fs = from_urls(["s3://b1/team/a", "s3://b2/team/b", "s3://b1/c"], endpoint_url="http://127.0.0.1:1")
    assert fs.workspace_roots() == ("/a", "/b", "/c") and fs.cwd == "/a"
    stores = [p.store for p in fs.prefixes]
    assert stores[0] is stores[2] is fs.store and stores[1] is not fs.store
    assert stores[1].bucket == "b2" and stores[1]._clients is fs.store._clients  # one client per loop
    one = from_urls(["s3://b1/team/a"])
    assert one.workspace_roots() == ("/",) and one.location.prefix == "team/a/"


async def test_open_provider_with_several_s3_urls(two: S3TwoPrefixWorkspace) -> None:
    urls = [two.location.url, two.peer.location.url]
    fs = dsh_fs.open_provider(urls[1], roots=urls, endpoint_url=two.endpoint_url, client_options=MOTO_CLIENT_OPTIONS)
    async with fs:
        assert fs.workspace_roots() == ("/ws", "/peer") and fs.cwd == "/peer"
        await fs.write_text(await fs.resolve("p.txt"), "p\n")
    assert await two.peer.get("p.txt") == b"p\n"
    with pytest.raises(ValueError, match='is not one of roots='):
        dsh_fs.open_provider("s3://elsewhere/x", roots=urls)
    with pytest.raises(ValueError, match="root= or roots="):
        dsh_fs.open_provider(urls[0], roots=urls, root="/x")
    with pytest.raises(ValueError, match='roots= applies to a local directory, S3 or a channel, not "memory://"'):
        dsh_fs.open_provider("memory://", roots=["/a"])


SEGMENTS = st.sampled_from(["ws", "peer", "team", "a", ".", "..", "", "wsx", "~", "ws/..", "a\0"])


@settings(max_examples=300, deadline=None)
@given(cwd=st.sampled_from(["/ws", "/ws/a", "/peer", "/peer/a/b"]), parts=st.lists(SEGMENTS, max_size=6),
       absolute=st.booleans())
def test_every_resolution_lies_in_exactly_the_root_it_names(cwd: str, parts: list[str], absolute: bool) -> None:
    """Lexical, so no request: a resolved path's key is under the prefix of the one root its
    display path is under, and the display path is that root's (``..`` cannot move a key
    from one prefix to another's, or above either)."""
    import anyio

    fs = S3FileSystem(roots={"/ws": "s3://one/team/ws", "/peer": "s3://two/peer"}, cwd=cwd)
    path = ("/" if absolute else "") + "/".join(parts)

    async def main() -> None:
        try:
            target = await fs.resolve(path)
        except FsError as err:
            assert err.code in ("FS_PERMISSION_DENIED", "FS_NOT_FOUND")
            return
        owners = [p for p in fs.prefixes if target.key.startswith(p.location.url)]
        assert len(owners) == 1
        owner = owners[0]
        assert target.display_path == owner.root or target.display_path.startswith(owner.root + "/")
        assert target.key == owner.location.url + target.display_path[len(owner.root) + 1:]

    anyio.run(main)


def _env(tmp_path: Any) -> dict[str, str]:
    env = dict(os.environ)
    env.update(AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing", AWS_DEFAULT_REGION="us-east-1",
               DSH_FS_STATE_DIR=str(tmp_path / "state"))
    return env


async def test_mcp_serves_several_prefixes_and_ignores_client_roots(two: S3TwoPrefixWorkspace, tmp_path: Any) -> None:
    """``dsh-fs mcp --s3 A --s3 B``: both served, relative paths in the first; the client's
    file:// roots cannot narrow a bucket (logged, M3), so both stay reachable."""
    from mcp import ClientSession, types
    from mcp.client.stdio import StdioServerParameters, stdio_client

    await two.peer.put("b.txt", b"peer\n")

    async def list_roots(context: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri="file:///ws")])

    errlog = open(tmp_path / "stderr.txt", "w+")
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "dsh_fs.cli.main", "mcp", "--s3", two.location.url, "--s3", two.peer.location.url,
              "--endpoint-url", two.endpoint_url],
        env=_env(tmp_path),
    )
    async with stdio_client(params, errlog=errlog) as streams, \
            ClientSession(*streams, list_roots_callback=list_roots) as session:
        await session.initialize()
        wrote = await session.call_tool("write", {"file_path": "a.txt", "content": "ws\n"})
        assert not wrote.is_error and wrote.content[0].text.startswith("<path>/ws/a.txt</path>\n")
        read = await session.call_tool("read", {"file_path": "/peer/b.txt"})
        assert not read.is_error and "1: peer" in read.content[0].text
        outside = await session.call_tool("read", {"file_path": "/x.txt"})
        assert outside.content[0].text == 'Error: cannot resolve "/x.txt": outside the workspace "/ws", "/peer"'
    assert await two.get("a.txt") == b"ws\n"
    errlog.seek(0)
    assert "client roots ignored: the served provider has no directories to narrow" in errlog.read()


@pytest.mark.parametrize(("urls", "message"), [
    (["s3://b/x/a", "s3://c/y/a"], "S3FileSystem: s3://b/x/a and s3://c/y/a would both be served as /a"),
    (["s3://b/team", "s3://b/team/sub"], "S3FileSystem: roots s3://b/team/ and s3://b/team/sub/ overlap"),
])
def test_mcp_refuses_overlapping_prefixes(tmp_path: Any, urls: list[str], message: str) -> None:
    argv = [sys.executable, "-m", "dsh_fs.cli.main", "mcp"] + [a for url in urls for a in ("--s3", url)]
    done = subprocess.run(argv, capture_output=True, text=True, env=_env(tmp_path), timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 2 and done.stderr.splitlines()[-1] == f"Error: {message}"


def test_root_with_s3_is_a_usage_error(tmp_path: Any) -> None:
    done = subprocess.run([sys.executable, "-m", "dsh_fs.cli.main", "mcp", "--root", str(tmp_path), "--s3", "s3://b/p"],
                          capture_output=True, text=True, env=_env(tmp_path), timeout=60)
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == (
        "Error: --root is not used with --s3 (repeat --s3 to serve several bucket prefixes)")


async def test_the_tool_commands_take_several_prefixes(two: S3TwoPrefixWorkspace, tmp_path: Any) -> None:
    await two.peer.put("b.txt", b"peer\n")
    common = ["--s3", two.location.url, "--s3", two.peer.location.url, "--endpoint-url", two.endpoint_url]
    run = [sys.executable, "-m", "dsh_fs.cli.main"]
    read = subprocess.run([*run, "read", "/peer/b.txt", *common], capture_output=True, text=True,
                          env=_env(tmp_path), timeout=60)
    assert read.returncode == 0, read.stderr
    assert read.stdout.startswith("<path>/peer/b.txt</path>\n")
    wrote = subprocess.run([*run, "write", "w.txt", "--content", "w", "--no-policy", *common], capture_output=True,
                           text=True, env=_env(tmp_path), timeout=60)
    assert wrote.returncode == 0, wrote.stdout + wrote.stderr
    assert await two.get("w.txt") == b"w"  # relative: the first prefix
    same = subprocess.run([*run, "read", "x", "--s3", "s3://b/team/a", "--s3", "s3://c/a",
                           "--endpoint-url", two.endpoint_url], capture_output=True, text=True, env=_env(tmp_path),
                          timeout=60)
    assert same.returncode != 0 and "S3FileSystem: s3://b/team/a and s3://c/a would both be served as /a" in same.stdout + same.stderr


async def test_workspace_write_covers_every_prefix(two: S3TwoPrefixWorkspace) -> None:
    """Under ``workspace-write`` the writable places of an S3 provider are its roots (compared as
    keys); the ``sandbox:policy`` context names both (X3)."""
    fs = await two.provider()
    ctx = dsh_fs.create_context(provider=fs, sandbox="workspace-write")
    session = dsh_fs.Session("/ws")
    for path in ("a.txt", "/peer/b.txt"):
        done = await _call(ctx, "write", {"file_path": path, "content": "x"}, session)
        assert not done.is_error, done.text
    assert await two.get("a.txt") == b"x" and await two.peer.get("b.txt") == b"x"
    await two.peer.delete("b.txt")  # the fixture's peer must end empty
    assert 'under the session workspace: "/ws", "/peer".' in ctx.system_prompt.render()
