"""No oracle for outside paths (tracker issue 12, item 6): with a containment root, a path
whose resolution leaves the root fails with the one containment error, whatever lies outside.

A symlink inside the root that points out (``up -> /``, a relative one climbing out, an
absolute one to another directory) lets the model name any outside path. Every kind of
outside thing behind it — an existing file or directory, a file used as a directory
(``ENOTDIR``), a missing name (``ENOENT``), a symlink loop (``ELOOP``), a name too long
(``ENAMETOOLONG``), a directory the caller may not search (``EACCES``, as an unprivileged
user) — must give ``FS_PERMISSION_DENIED`` ``cannot resolve "<display>": outside the
workspace "<root>"``, through every primitive that takes a path (``resolve``, ``lstat``) and
every tool (``read``, ``write``, ``edit``); listing a directory that holds such a link lists
it as ``other`` without following it. The symlink-race refusal names the root too, and the
rooted providers (memory; S3 in ``tests/s3``) show the resolved display path as local does.

Not here: the plain containment cases (``test_containment.py``).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from typing import Any

import pytest

import dsh_fs
from dsh_fs import FsError, Session
from dsh_fs.fs_local import LocalFileSystem
from dsh_fs.fs_memory import MemoryFileSystem
from robustkit import call, run_as, snapshot

pytestmark = pytest.mark.anyio

IS_ROOT = os.geteuid() == 0

# what lies outside, behind the link: (kind, path below the outside directory)
OUTSIDE_KINDS = [
    ("file", "secret.txt"),
    ("dir", "deep"),
    ("file-as-dir", "secret.txt/x"),
    ("missing", "none/x"),
    ("missing-leaf", "none"),
    ("loop", "loop-a/x"),
    ("name-too-long", "n" * 300 + "/x"),
    ("dangling", "dangling/x"),
]

# how the model reaches the outside directory from the root
LINKS = {  # name -> target (``abs``: the outside directory, made by the fixture)
    "up": "/",  # the whole disk
    "climb": "../..",  # relative, climbing out
    "abs": "<outside>",
}


def _outside_path(link: str, outside: str, rest: str) -> str:
    if link == "up":
        return f"up{outside}/{rest}"
    if link == "climb":
        return f"climb{outside}/{rest}"
    return f"abs/{rest}"


@dataclass
class World:
    root: str
    outside: str
    roots: list[str]
    """the provider's roots: ``[root]``, or ``root`` and a sibling ``peer`` in either order (D28)"""

    @property
    def named(self) -> str:
        """how the containment refusal names the workspace"""
        return ", ".join(f'"{r}"' for r in self.roots)


@pytest.fixture(params=["one-root", "in-a", "in-b"])
def world(tmp_path: Any, request: pytest.FixtureRequest) -> World:
    """``proj/inner`` as the one root, or as the first (``in-a``) or second (``in-b``) of two
    roots with ``peer`` (DEVIATIONS D28): every case runs in each."""
    base = os.path.realpath(str(tmp_path))
    root, outside, peer = (os.path.join(base, *n) for n in (("proj", "inner"), ("outside",), ("peer",)))
    os.makedirs(root)
    os.makedirs(peer)
    os.makedirs(os.path.join(outside, "deep"))
    with open(os.path.join(outside, "secret.txt"), "w") as handle:
        handle.write("TOP SECRET\n")
    os.symlink("loop-b", os.path.join(outside, "loop-a"))
    os.symlink("loop-a", os.path.join(outside, "loop-b"))
    os.symlink("nowhere", os.path.join(outside, "dangling"))
    with open(os.path.join(root, "own.txt"), "w") as handle:
        handle.write("own\n")
    os.symlink("/", os.path.join(root, "up"))
    os.symlink("../..", os.path.join(root, "climb"))
    os.symlink(outside, os.path.join(root, "abs"))
    roots = {"one-root": [root], "in-a": [root, peer], "in-b": [peer, root]}[request.param]
    return World(root=root, outside=outside, roots=roots)


def _deployment(world: World) -> dsh_fs.Context:
    return dsh_fs.create_context(provider=LocalFileSystem(cwd=world.root, roots=world.roots), policy=False)


CASES = [(link, kind, rest) for link in LINKS for kind, rest in OUTSIDE_KINDS]


@pytest.mark.parametrize(("link", "kind", "rest"), CASES, ids=[f"{link}-{kind}" for link, kind, _ in CASES])
async def test_every_outside_kind_gives_the_containment_error(world: World, link: str, kind: str,
                                                             rest: str) -> None:
    root, outside = world.root, world.outside
    ctx = _deployment(world)
    fs = ctx.fs
    path = _outside_path(link, outside, rest)
    display = os.path.normpath(os.path.join(root, path))
    expected = f'cannot resolve "{display}": outside the workspace {world.named}'
    before = snapshot(os.path.dirname(outside))
    for primitive in (fs.resolve(path), fs.lstat(path)):
        with pytest.raises(FsError) as caught:
            await primitive
        assert (caught.value.code, str(caught.value)) == ("FS_PERMISSION_DENIED", expected)
    for tool, args in (("read", {"file_path": path}), ("write", {"file_path": path, "content": "x\n"}),
                       ("edit", {"file_path": path, "old_string": "TOP", "new_string": "pwned"})):
        result = await call(ctx, tool, args, Session(cwd=root))
        assert result.error is not None and result.error.code == "FS_PERMISSION_DENIED", (tool, result.text)
        assert result.text == "Error: " + expected, tool
    assert snapshot(os.path.dirname(outside)) == before


async def test_a_path_that_leaves_and_comes_back_is_refused(world: World) -> None:
    """Whether an outside path leads back into the root would tell what exists outside: refused."""
    root = world.root
    ctx = _deployment(world)
    path = f"up{root}/own.txt"
    result = await call(ctx, "read", {"file_path": path}, Session(cwd=root))
    assert result.text == f'Error: cannot resolve "{root}/{path}": outside the workspace {world.named}'
    # the same file by its own name, or through a link that stays inside, is served
    os.symlink(f"{root}/own.txt", os.path.join(root, "in-abs"))
    os.mkdir(os.path.join(root, "sub"))
    os.symlink("../own.txt", os.path.join(root, "sub", "in-rel"))
    for name in ("own.txt", "in-abs", "sub/in-rel"):
        assert not (await call(ctx, "read", {"file_path": name}, Session(cwd=root))).is_error, name
    # a link that climbs out of the root by name and back in is refused like any other way out
    os.symlink("../inner/own.txt", os.path.join(root, "out-and-back"))
    result = await call(ctx, "read", {"file_path": "out-and-back"}, Session(cwd=root))
    assert result.text == f'Error: cannot resolve "{root}/out-and-back": outside the workspace {world.named}'


async def test_listing_shows_an_outward_link_without_following_it(world: World) -> None:
    fs = _deployment(world).fs
    entries = {e.name: (e.type, e.version, e.size) for e in await fs.list_dir(await fs.resolve("."))}
    assert entries["up"] == ("other", None, None)
    assert entries["climb"] == ("other", None, None)
    assert entries["abs"] == ("other", None, None)
    assert entries["own.txt"][0] == "file"


async def test_lstat_of_an_outward_link_itself_is_answered(world: World) -> None:
    """The link is inside the root: ``lstat`` describes it (what it points to is not looked at)."""
    fs = _deployment(world).fs
    found = await fs.lstat("up")
    assert found is not None and found.type == "symlink"


OUTSIDE_AS_NOBODY = r"""
import anyio
import dsh_fs
from dsh_fs.fs_local import LocalFileSystem
root, paths = sys.argv[1], json.loads(sys.argv[2])
ctx = dsh_fs.create_context(provider=LocalFileSystem(cwd=root, root=root), policy=False)
async def main():
    drop()
    out = {}
    for path in paths:
        r = await ctx.tools.execute("read", {"file_path": path}, session=dsh_fs.Session(cwd=root))
        out[path] = [r.error.code if r.error else None, r.text]
    print(json.dumps(out))
anyio.run(main)
"""


@pytest.mark.skipif(not IS_ROOT, reason="an unsearchable outside directory needs a second user (root drops to nobody)")
@pytest.mark.timeout(60)
def test_an_unsearchable_outside_directory_gives_the_containment_error() -> None:
    """``EACCES`` outside (a directory ``nobody`` may not search) is not told apart either."""
    nobody = 65534
    top = tempfile.mkdtemp(prefix="dsh-fs-oracle-")
    try:
        os.chmod(top, 0o755)
        root, closed = os.path.join(top, "ws"), os.path.join(top, "closed")
        os.mkdir(root, 0o755)
        os.mkdir(closed, 0o700)  # root's: nobody may not search it
        with open(os.path.join(closed, "x.txt"), "w") as handle:
            handle.write("TOP SECRET\n")
        os.symlink("/", os.path.join(root, "up"))
        paths = [f"up{closed}/x.txt", f"up{closed}/none/x", f"up{top}/none/x"]
        out = run_as(OUTSIDE_AS_NOBODY, root, json.dumps(paths), uid=nobody, gid=nobody, cwd=top)
        for path in paths:
            assert out[path] == ["FS_PERMISSION_DENIED",
                                 f'Error: cannot resolve "{root}/{path}": outside the workspace "{root}"'], path
    finally:
        shutil.rmtree(top, ignore_errors=True)


async def test_the_memory_provider_shows_the_resolved_path() -> None:
    """One containment message everywhere: the rooted providers show the display path (``..``
    collapsed), as the local provider does, not the path as the model wrote it."""
    fs = MemoryFileSystem(root="/srv/app", cwd="/srv/app/src")
    for path, display in (("../../etc/passwd", "/srv/etc/passwd"), ("/etc//passwd", "/etc/passwd"),
                          ("../../../../x/./y", "/x/y")):
        with pytest.raises(FsError) as caught:
            await fs.resolve(path)
        assert str(caught.value) == f'cannot resolve "{display}": outside the workspace "/srv/app"'
