"""The local provider's ``delete`` and ``rename`` on a real disk (``fs_local.moves``).

Covers what the provider contract leaves out (it has no symlinks, modes or lock files):
symbolic-link names refused, mode and inode kept by a rename, the ``link`` + ``unlink``
fallback where ``renameat2`` is missing, containment under ``root=`` (a directory swapped for
an outward symlink after resolution), directories fsynced (A3), two processes' locks (the
lock of each target taken, so a mutation of either waits), and errors mapped (A2).
Not covered: the guards' messages and outcomes (the contract suite, for every provider).
"""

from __future__ import annotations

import os

import anyio
import pytest

from dsh_fs.fs import FsError
from dsh_fs.fs.types import DeleteIntent, RenameIntent, ReplaceIfVersion
from dsh_fs.fs_local import LocalFileSystem, moves
from filekit import get, put

pytestmark = pytest.mark.anyio


@pytest.fixture
def lock_dir(tmp_path_factory) -> str:  # type: ignore[no-untyped-def]
    return str(tmp_path_factory.mktemp("locks"))


async def test_a_symlinked_name_is_neither_deleted_nor_renamed(tmp_path, lock_dir) -> None:  # type: ignore[no-untyped-def]
    real = put(str(tmp_path / "ws" / "real.txt"), b"content")
    os.symlink("real.txt", tmp_path / "ws" / "link.txt")
    fs = LocalFileSystem(cwd=str(tmp_path / "ws"), lock_dir=lock_dir)
    link = await fs.resolve("link.txt")
    assert link.key == real  # the link names the real file
    with pytest.raises(FsError) as caught:
        await fs.delete(link)
    assert (caught.value.code, str(caught.value)) == (
        "FS_NOT_REGULAR_FILE", f'cannot delete "{link.display_path}": not a regular file')
    with pytest.raises(FsError) as caught:
        await fs.rename(link, await fs.resolve("moved.txt"))
    assert caught.value.code == "FS_NOT_REGULAR_FILE"
    assert get(real) == b"content" and os.path.islink(tmp_path / "ws" / "link.txt")
    assert not os.path.exists(tmp_path / "ws" / "moved.txt")


async def test_a_dangling_symlink_is_a_taken_destination(tmp_path, lock_dir) -> None:  # type: ignore[no-untyped-def]
    put(str(tmp_path / "a.txt"), b"a")
    os.symlink("nowhere.txt", tmp_path / "dangling.txt")
    fs = LocalFileSystem(cwd=str(tmp_path), lock_dir=lock_dir)
    with pytest.raises(FsError) as caught:
        await fs.rename(await fs.resolve("a.txt"), await fs.resolve("dangling.txt"))
    assert caught.value.code == "FS_NOT_OBSERVED"
    assert get(str(tmp_path / "a.txt")) == b"a" and not os.path.exists(tmp_path / "nowhere.txt")


@pytest.mark.parametrize("use_renameat2", [True, False])
async def test_rename_keeps_the_inode_and_mode(tmp_path, lock_dir, monkeypatch, use_renameat2: bool) -> None:  # type: ignore[no-untyped-def]
    if not use_renameat2:
        monkeypatch.setattr(moves, "_RENAMEAT2", None)
    path = put(str(tmp_path / "a.sh"), b"#!/bin/sh\n", mode=0o751)
    before = os.stat(path)
    fs = LocalFileSystem(cwd=str(tmp_path), lock_dir=lock_dir)
    source, dest = await fs.resolve("a.sh"), await fs.resolve("bin/b.sh")
    info = await fs.stat(source)
    assert info is not None
    outcome = await fs.rename(source, dest, RenameIntent(info.version))
    after = os.stat(tmp_path / "bin" / "b.sh")
    assert (after.st_ino, after.st_mode & 0o777) == (before.st_ino, 0o751)
    assert not os.path.exists(path) and sorted(os.listdir(tmp_path)) == ["bin"]
    await fs.write_text(dest, "#!/bin/sh\necho\n", ReplaceIfVersion(outcome.version))
    assert os.stat(tmp_path / "bin" / "b.sh").st_mode & 0o777 == 0o751


async def test_the_fallback_refuses_an_existing_destination(tmp_path) -> None:  # type: ignore[no-untyped-def]
    put(str(tmp_path / "a.txt"), b"a")
    put(str(tmp_path / "b.txt"), b"b")
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for use in (True, False):
    # DEVIATIONS E17
            with pytest.raises(FileExistsError):
                moves.rename_noreplace(fd, "a.txt", fd, "b.txt", use_renameat2=use)
    finally:
        os.close(fd)
    assert (get(str(tmp_path / "a.txt")), get(str(tmp_path / "b.txt"))) == (b"a", b"b")


async def test_directories_are_fsynced(tmp_path, lock_dir, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A3: the removal and the new name survive a crash."""
    put(str(tmp_path / "a.txt"), b"a")
    put(str(tmp_path / "d.txt"), b"d")
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(moves.os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd))[1])
    fs = LocalFileSystem(cwd=str(tmp_path), lock_dir=lock_dir)
    await fs.rename(await fs.resolve("a.txt"), await fs.resolve("sub/b.txt"))
    assert len(synced) == 2  # the new directory and the old one
    await fs.delete(await fs.resolve("d.txt"))
    assert len(synced) == 3


async def test_containment_holds_against_a_swapped_directory(tmp_path, lock_dir) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "ws"
    outside = tmp_path / "outside"
    put(str(root / "a.txt"), b"a")
    put(str(outside / "secret.txt"), b"s")
    os.makedirs(root / "sub")
    fs = LocalFileSystem(root=str(root), lock_dir=lock_dir)
    source, dest = await fs.resolve("a.txt"), await fs.resolve("sub/b.txt")
    victim = await fs.resolve("sub/secret.txt")
    os.rmdir(root / "sub")
    os.symlink(outside, root / "sub")  # swapped in after resolution
    for call in (fs.rename(source, dest), fs.delete(victim)):
        with pytest.raises(FsError) as caught:
            await call
        assert caught.value.code == "FS_PERMISSION_DENIED"
    assert get(str(root / "a.txt")) == b"a" and sorted(os.listdir(outside)) == ["secret.txt"]


async def test_rename_holds_both_targets_locks(tmp_path, lock_dir) -> None:  # type: ignore[no-untyped-def]
    """A writer of the destination waits for the rename (the destination's lock is held), so
    it sees the renamed file and its guard decides."""
    put(str(tmp_path / "a.txt"), b"a")
    fs = LocalFileSystem(cwd=str(tmp_path), lock_dir=lock_dir)
    source, dest = await fs.resolve("a.txt"), await fs.resolve("b.txt")
    order: list[str] = []
    holding, release = anyio.Event(), anyio.Event()

    async def writer() -> None:
        async with fs.locks.hold(dest.key):
            holding.set()
            await release.wait()
            order.append("released")

    async def rename() -> None:
        await holding.wait()
        await fs.rename(source, dest)
        order.append("renamed")

    with anyio.fail_after(60):
        async with anyio.create_task_group() as tg:
            tg.start_soon(writer)
            tg.start_soon(rename)
            await holding.wait()
            await anyio.sleep(0.05)
            release.set()
    assert order == ["released", "renamed"] and get(str(tmp_path / "b.txt")) == b"a"


async def test_os_errors_are_coded(tmp_path, lock_dir, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A2: EACCES → FS_PERMISSION_DENIED naming the verb; the file stays."""
    put(str(tmp_path / "a.txt"), b"a")
    fs = LocalFileSystem(cwd=str(tmp_path), lock_dir=lock_dir)
    target = await fs.resolve("a.txt")

    def denied(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(moves.os, "unlink", denied)
    with pytest.raises(FsError) as caught:
        await fs.delete(target, DeleteIntent((await fs.stat(target)).version))  # type: ignore[union-attr]
    assert (caught.value.code, str(caught.value)) == (
        "FS_PERMISSION_DENIED", f'cannot delete "{target.display_path}": permission denied')
    assert get(str(tmp_path / "a.txt")) == b"a"
