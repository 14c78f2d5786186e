"""A file rewritten with the same bytes is not a change (DEVIATIONS D29, default profile):
after a formatter-style rewrite (a new inode by rename), a ``touch`` or a same-content save, the
next ``write``/``edit``/``apply_patch`` of the owner who read it goes through; a real change is
still refused, and so is every one of them in the ``reference`` profile (the reference's
version rule). Through the registry, on the local disk and the in-memory provider.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

import pytest

import dsh_fs
from dsh_fs import Session
from dsh_fs.fs.provider_rules import SAME_BYTES_MAX
from dsh_fs.fs_memory import MemoryFileSystem
from filekit import put

pytestmark = pytest.mark.anyio

OLD = time.time() - 3600  # far outside the racy window (A5): the stat fields alone name a version


def aged(path: str) -> None:
    os.utime(path, (OLD, OLD))


def formatter_rewrite(path: str, data: bytes) -> None:
    """What a formatter does: a new file beside it, renamed over it (a new inode)."""
    with open(path + ".fmt", "wb") as f:
        f.write(data)
    os.replace(path + ".fmt", path)


def touch(path: str, data: bytes) -> None:
    os.utime(path, (OLD + 60, OLD + 60))


def same_save(path: str, data: bytes) -> None:
    """``touch`` then a same-content save in place (same inode, new times)."""
    os.utime(path, None)
    with open(path, "r+b") as f:
        f.write(data)


async def edit(ctx: dsh_fs.Context, session: Session, path: str, old: str, new: str) -> Any:
    return await ctx.tools.execute("edit", {"file_path": path, "old_string": old, "new_string": new}, session=session)


@pytest.mark.parametrize("rewrite", [formatter_rewrite, touch, same_save])
@pytest.mark.parametrize("profile", ["default", "reference"])
async def test_D29_a_same_bytes_rewrite_keeps_the_version_local(
    ws: str, make_ctx: Callable[..., dsh_fs.Context], rewrite: Callable[[str, bytes], None], profile: str
) -> None:
    data = b"x = 1\ny = 2\n"
    path = put(f"{ws}/a.py", data.decode())
    aged(path)
    ctx, session = make_ctx(profile=profile), Session(cwd=ws)
    assert not (await ctx.tools.execute("read", {"file_path": "a.py"}, session=session)).is_error
    rewrite(path, data)
    done = await edit(ctx, session, "a.py", "y = 2", "y = 3")
    if profile == "reference":
        assert done.text == f'Error: cannot edit "{ws}/a.py": file changed since it was read'
        assert open(path, "rb").read() == data
        return
    assert not done.is_error, done.text
    assert open(path, "rb").read() == b"x = 1\ny = 3\n"


@pytest.mark.parametrize("profile", ["default", "reference"])
async def test_D29_write_and_apply_patch_after_a_same_bytes_rewrite(
    ws: str, make_ctx: Callable[..., dsh_fs.Context], profile: str
) -> None:
    data = b"alpha\nbeta\n"
    one, two = put(f"{ws}/one.txt", data.decode()), put(f"{ws}/two.txt", data.decode())
    aged(one), aged(two)
    ctx, session = make_ctx(profile=profile, faces=("apply_patch",)), Session(cwd=ws)
    for name in ("one.txt", "two.txt"):
        assert not (await ctx.tools.execute("read", {"file_path": name}, session=session)).is_error
    formatter_rewrite(one, data)
    formatter_rewrite(two, data)
    wrote = await ctx.tools.execute("write", {"file_path": "one.txt", "content": "gamma\n"}, session=session)
    patch = "*** Begin Patch\n*** Update File: two.txt\n alpha\n-beta\n+delta\n*** End Patch\n"
    patched = await ctx.tools.execute("apply_patch", {"input": patch}, session=session)
    if profile == "reference":
        assert wrote.error is not None and wrote.error.code == "FS_STALE_VERSION"
        assert "changed since it was read" in patched.text
        assert open(one, "rb").read() == data and open(two, "rb").read() == data
        return
    assert not wrote.is_error and not patched.is_error, (wrote.text, patched.text)
    assert open(one, "rb").read() == b"gamma\n" and open(two, "rb").read() == b"alpha\ndelta\n"


@pytest.mark.parametrize("change", [b"x = 1\ny = 9\n", b"x = 1\ny = 2\n\n"])
async def test_D29_a_real_change_is_still_refused(ws: str, make_ctx: Callable[..., dsh_fs.Context], change: bytes) -> None:
    path = put(f"{ws}/a.py", "x = 1\ny = 2\n")
    aged(path)
    ctx, session = make_ctx(), Session(cwd=ws)
    await ctx.tools.execute("read", {"file_path": "a.py"}, session=session)
    formatter_rewrite(path, change)  # same size, other bytes; and another size
    done = await edit(ctx, session, "a.py", "x = 1", "x = 0")
    assert done.error is not None and done.error.code == "FS_STALE_VERSION"
    assert open(path, "rb").read() == change


async def test_D29_a_racy_version_from_the_owners_own_write_counts_too(
    ws: str, make_ctx: Callable[..., dsh_fs.Context]
) -> None:
    ctx, session = make_ctx(), Session(cwd=ws)
    assert not (await ctx.tools.execute("write", {"file_path": "n.txt", "content": "one\n"}, session=session)).is_error
    touch(f"{ws}/n.txt", b"")
    done = await edit(ctx, session, "n.txt", "one", "two")
    assert not done.is_error, done.text


async def test_D29_above_the_size_cap_a_touch_is_a_change(ws: str, make_ctx: Callable[..., dsh_fs.Context]) -> None:
    body = ("line\n" * (SAME_BYTES_MAX // 5 + 1)).encode()
    assert len(body) > SAME_BYTES_MAX
    path = f"{ws}/big.txt"
    with open(path, "wb") as f:
        f.write(body)
    aged(path)
    ctx, session = make_ctx(), Session(cwd=ws)
    await ctx.tools.execute("read", {"file_path": "big.txt", "limit": 1}, session=session)
    touch(path, body)
    done = await edit(ctx, session, "big.txt", "line\nline\nline\n", "x", )
    assert done.error is not None and done.error.code == "FS_STALE_VERSION"


@pytest.mark.parametrize("profile", ["default", "reference"])
async def test_D29_the_in_memory_provider(profile: str) -> None:
    memory = MemoryFileSystem({"a.txt": "one\ntwo\n", "b.txt": "b\n"}, profile=profile)
    ctx = dsh_fs.create_context(provider=memory, profile=profile)
    session = Session(cwd="/")
    for name in ("a.txt", "b.txt"):
        await ctx.tools.execute("read", {"file_path": name}, session=session)
    memory.put("a.txt", "one\ntwo\n")  # another writer stores the same bytes
    memory.put("b.txt", "c\n")  # and other ones
    same = await edit(ctx, session, "a.txt", "two", "three")
    other = await edit(ctx, session, "b.txt", "b", "d")
    assert other.error is not None and other.error.code == "FS_STALE_VERSION"
    if profile == "reference":
        assert same.error is not None and same.error.code == "FS_STALE_VERSION"
        assert memory.get("a.txt") == b"one\ntwo\n"
    else:
        assert not same.is_error, same.text
        assert memory.get("a.txt") == b"one\nthree\n"
