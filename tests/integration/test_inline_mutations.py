"""Where the local provider runs a mutation (tracker issue 5, cheap calls; ``filesystem``).

Small writes and edits run on the event-loop thread while the disk is fast; big ones, ones
after a slow mutation, and ones whose cross-process lock is held elsewhere go to a worker
thread — the last without ever blocking the event loop. Concurrent calls still interleave
as around a thread hop (one wins, one is stale: REFERENCE-SPEC §2.9).
"""

from __future__ import annotations

import fcntl
import os
import threading
import time
from typing import Any

import anyio
import pytest

from dsh_fs.fs import FsError
from dsh_fs.fs.types import EditIntent, EditRequest
from dsh_fs.fs_local import LocalFileSystem, fsio
from dsh_fs.fs_local.filesystem import SLOW_MUTATION_S
from filekit import put

pytestmark = pytest.mark.anyio


class Threads:
    """Records the thread each ``fsio.write_file`` / ``edit_file`` runs on, optionally
    stretching it to a given duration (a slow disk)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.seen: list[str] = []
        self.stretch = 0.0
        main = threading.get_ident()
        for name in ("write_file", "edit_file"):
            real = getattr(fsio, name)

            def recording(*args: Any, _real: Any = real, **kwargs: Any) -> Any:
                self.seen.append("loop" if threading.get_ident() == main else "worker")
                if self.stretch:
                    time.sleep(self.stretch)
                return _real(*args, **kwargs)

            monkeypatch.setattr(fsio, name, recording)


async def test_small_mutations_run_on_the_event_loop_thread(ws: str, monkeypatch: pytest.MonkeyPatch) -> None:
    threads = Threads(monkeypatch)
    fs = LocalFileSystem(cwd=ws)
    target = await fs.resolve("a.txt")
    await fs.write_text(target, "one\n")
    await fs.edit_text(target, EditRequest(old_string="one", new_string="two"))
    assert threads.seen == ["loop", "loop"]
    with open(os.path.join(ws, "a.txt"), "rb") as handle:
        assert handle.read() == b"two\n"


async def test_big_files_and_a_zero_limit_go_to_a_worker_thread(ws: str, monkeypatch: pytest.MonkeyPatch) -> None:
    threads = Threads(monkeypatch)
    fs = LocalFileSystem(cwd=ws, inline_write_max=1024)
    target = await fs.resolve("a.txt")
    await fs.write_text(target, "x" * 1025)  # new content over the limit
    put(os.path.join(ws, "b.txt"), b"y" * 2000 + b"\nend\n")
    await fs.edit_text(await fs.resolve("b.txt"), EditRequest(old_string="end", new_string="END"))  # old size
    await fs.write_text(await fs.resolve("c.txt"), "small")
    fs_threads = LocalFileSystem(cwd=ws, inline_write_max=0)
    await fs_threads.write_text(await fs_threads.resolve("d.txt"), "small")
    assert threads.seen == ["worker", "worker", "loop", "worker"]


async def test_a_slow_mutation_sends_the_next_to_a_worker_until_one_is_fast(
    ws: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads = Threads(monkeypatch)
    fs = LocalFileSystem(cwd=ws)
    target = await fs.resolve("a.txt")
    threads.stretch = SLOW_MUTATION_S * 2
    await fs.write_text(target, "1")  # inline, and slow
    threads.stretch = 0.0
    await fs.write_text(target, "2")  # a worker: the disk looked slow
    await fs.write_text(target, "3")  # that one was fast: inline again
    assert threads.seen == ["loop", "worker", "loop"]


async def test_a_lock_held_by_another_process_never_blocks_the_event_loop(
    ws: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    threads = Threads(monkeypatch)
    fs = LocalFileSystem(cwd=ws, lock_dir=str(tmp_path / "locks"))
    target = await fs.resolve("a.txt")
    await fs.write_text(target, "before\n")
    threads.seen.clear()
    # another open file description on the stripe file: flock conflicts as across processes
    other = os.open(fs.process_locks.path_for(target.key), os.O_RDWR)
    fcntl.flock(other, fcntl.LOCK_EX)
    ticks = 0
    done = anyio.Event()

    async def edit() -> None:
        await fs.edit_text(target, EditRequest(old_string="before", new_string="after"))
        done.set()

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(edit)
            while ticks < 10:  # the loop keeps running while the edit waits for the lock
                await anyio.sleep(0.01)
                ticks += 1
            assert not done.is_set()
            fcntl.flock(other, fcntl.LOCK_UN)
    finally:
        os.close(other)
    assert threads.seen == ["worker"]
    with open(os.path.join(ws, "a.txt"), "rb") as handle:
        assert handle.read() == b"after\n"


async def test_concurrent_guarded_edits_still_interleave_one_wins(ws: str) -> None:
    fs = LocalFileSystem(cwd=ws)
    target = await fs.resolve("a.txt")
    put(target.key, b"left right\n")
    info = await fs.stat(target)
    assert info is not None
    outcomes: list[str] = []

    async def edit(old: str, new: str) -> None:
        try:
            await fs.edit_text(target, EditRequest(old_string=old, new_string=new), EditIntent(info.version))
            outcomes.append("ok")
        except FsError as err:
            outcomes.append(err.code)

    async with anyio.create_task_group() as tg:
        tg.start_soon(edit, "left", "L")
        tg.start_soon(edit, "right", "R")
    assert sorted(outcomes) == ["FS_STALE_VERSION", "ok"]
    assert len(fs.locks) == 0


async def test_an_edit_with_a_big_replacement_goes_to_a_worker_thread(ws: str, monkeypatch: pytest.MonkeyPatch) -> None:
    threads = Threads(monkeypatch)
    fs = LocalFileSystem(cwd=ws, inline_write_max=1024)
    put(os.path.join(ws, "a.txt"), b"tiny\n")
    await fs.edit_text(await fs.resolve("a.txt"), EditRequest(old_string="tiny", new_string="z" * 2000))
    assert threads.seen == ["worker"]


# -- the cross-process lock directory -----------------------------------------------------------

def test_a_lock_directory_owned_by_someone_else_is_refused(ws: str, tmp_path: Any) -> None:
    """In a shared /tmp another user could pre-create the lock directory; it is refused with a
    clear error rather than used (its locks could be held, its files swapped for symlinks)."""
    from dsh_fs.fs_local.locks import ProcessLocks

    lock_dir = str(tmp_path / "dsh-fs-x" / "locks")
    os.makedirs(lock_dir)
    nobody = 65534
    if os.geteuid() != 0:
        pytest.skip("needs root to give the directory away")
    os.chown(lock_dir, nobody, nobody)
    locks = ProcessLocks(lock_dir)
    with pytest.raises(FsError) as caught:
        with locks.hold("/some/file"):
            pass
    assert caught.value.code == "FS_IO_ERROR"
    assert str(caught.value).startswith(f"cannot use the lock directory {lock_dir}: ")
    assert "DSH_FS_LOCK_DIR" in str(caught.value)


def test_a_lock_directory_of_ours_is_tightened_and_lock_files_are_never_followed(tmp_path: Any) -> None:
    from dsh_fs.fs_local.locks import ProcessLocks

    parent = tmp_path / "dsh-fs-me"
    lock_dir = parent / "locks"
    os.makedirs(lock_dir)
    os.chmod(parent, 0o777)
    os.chmod(lock_dir, 0o777)
    locks = ProcessLocks(str(lock_dir))
    with locks.hold("/a") as held:
        assert held
    assert os.stat(parent).st_mode & 0o777 == 0o755 and os.stat(lock_dir).st_mode & 0o777 == 0o755
    planted = locks.path_for("/b")
    victim = tmp_path / "victim.txt"
    os.symlink(victim, planted)
    with pytest.raises(FsError) as caught:
        with locks.hold("/b"):
            pass
    assert caught.value.code == "FS_IO_ERROR" and not victim.exists()
