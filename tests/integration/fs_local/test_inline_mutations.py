"""Where the local provider runs a mutation (tracker issue 5, cheap calls; ``filesystem``).

Small writes and edits run on the event-loop thread while the disk is fast; big ones and
ones soon after a slow mutation go to a worker thread. A cross-process lock held elsewhere
is waited for without blocking the event loop or holding a thread, and an abort or a
cancellation ends that wait. Concurrent calls still interleave as around a thread hop (one
wins, one is stale: REFERENCE-SPEC §2.9). The lock directory must be private by default.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import threading
import time
from typing import Any

import anyio
import pytest

from dsh_fs import AbortSignal
from dsh_fs.fs import FsError
from dsh_fs.fs.types import EditIntent, EditRequest
from dsh_fs.fs_local import LocalFileSystem, fsio
from dsh_fs.fs_local import filesystem
from dsh_fs.fs_local.filesystem import SLOW_DISK_COOLDOWN_S, SLOW_MUTATION_S
from dsh_fs.fs_local.locks import LockWait, ProcessLocks
from filekit import put

pytestmark = pytest.mark.anyio


class Threads:
    """Records the thread each ``fsio.write_file`` / ``edit_file`` runs on, optionally
    stretching it to a given duration (a slow disk).

    :param fast_disk: only a stretched mutation counts as slow (a busy test machine may take
        more than ``SLOW_MUTATION_S`` for any write, which would move later ones to threads);
        ``False`` for the tests of that very rule
    """

    def __init__(self, monkeypatch: pytest.MonkeyPatch, *, fast_disk: bool = True) -> None:
        self.seen: list[str] = []
        self.stretch = 0.0
        if fast_disk:
            monkeypatch.setattr(filesystem, "SLOW_MUTATION_S", 3600.0)
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


async def test_a_slow_mutation_sends_the_next_ones_to_a_worker_for_a_while(
    ws: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads = Threads(monkeypatch, fast_disk=False)
    fs = LocalFileSystem(cwd=ws)
    target = await fs.resolve("a.txt")
    threads.stretch = SLOW_MUTATION_S * 2
    await fs.write_text(target, "1")  # inline, and slow
    threads.stretch = 0.0
    await fs.write_text(target, "2")  # a worker: the disk looked slow
    await fs.write_text(target, "3")  # still cooling down, though that one was fast
    clock = time.monotonic() + SLOW_DISK_COOLDOWN_S + 1
    monkeypatch.setattr(filesystem.time, "monotonic", lambda: clock)
    await fs.write_text(target, "4")  # the cooldown is over: inline again
    assert threads.seen == ["loop", "worker", "worker", "loop"]


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
    assert len(threads.seen) == 1  # once the lock was free
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


async def _stays_free(locks: ProcessLocks, key: str) -> None:
    """The lock of ``key`` is free, and still free a moment later (a waiting thread that won
    the race for it meanwhile must have let it go); fails after 60 s instead of hanging."""
    with anyio.fail_after(60):
        for _ in range(2):
            while (fd := locks.try_acquire(key)) is None:
                await anyio.sleep(0.01)
            locks.release(fd)
            await anyio.sleep(0.2)


@pytest.mark.parametrize("how", ["abort", "cancel"])
async def test_an_abort_or_a_cancellation_ends_the_wait_for_a_held_lock(ws: str, tmp_path: Any, how: str) -> None:
    """The wait ends at once, and the abandoned waiter lets the lock go as soon as it gets it:
    the lock is free again after its holder releases it (checked within a deadline, so a
    waiter that kept the lock fails the test instead of hanging the process at exit)."""
    fs = LocalFileSystem(cwd=ws, lock_dir=str(tmp_path / "locks"))
    target = await fs.resolve("a.txt")
    await fs.write_text(target, "before\n")
    other = os.open(fs.process_locks.path_for(target.key), os.O_RDWR)
    fcntl.flock(other, fcntl.LOCK_EX)
    try:
        if how == "abort":
            signal = AbortSignal()

            async def abort_soon() -> None:
                await anyio.sleep(0.1)
                signal.abort()

            async with anyio.create_task_group() as tg:
                tg.start_soon(abort_soon)
                with anyio.fail_after(60), pytest.raises(FsError) as caught:  # a guard: the lock stays held
                    await fs.edit_text(target, EditRequest(old_string="before", new_string="after"), signal=signal)
            assert (caught.value.code, str(caught.value)) == ("FS_ABORTED", "edit aborted")
        else:
            with anyio.move_on_after(0.1) as scope:
                await fs.write_text(target, "cancelled\n")
            assert scope.cancelled_caught
    finally:
        os.close(other)  # the abandoned waiter's thread gets the lock now, and must let it go
    await _stays_free(fs.process_locks, target.key)
    with open(os.path.join(ws, "a.txt"), "rb") as handle:
        assert handle.read() == b"before\n"
    assert len(fs.locks) == 0


@pytest.mark.parametrize("when", ["before it gets the lock", "after it got the lock"])
def test_an_abandoned_lock_wait_never_keeps_the_lock(tmp_path: Any, when: str) -> None:
    """``LockWait`` directly: abandoned while its thread waits, or after the thread got the lock
    but before the caller took it — either way the lock is released (the thread is a daemon
    and joined with a timeout, so a regression fails here rather than hangs)."""
    locks = ProcessLocks(str(tmp_path / "locks"))
    held = locks.try_acquire("/k")
    assert held is not None
    waiter = LockWait(locks, "/k")
    results: list[int | None] = []
    thread = threading.Thread(target=lambda: results.append(waiter.wait()), daemon=True)
    if when == "before it gets the lock":
        thread.start()
        time.sleep(0.05)  # (usually blocked in flock by now; if not, the outcome is the same)
        waiter.abandon()
        locks.release(held)
        thread.join(60)
        assert not thread.is_alive() and results == [None]
    else:
        locks.release(held)
        thread.start()
        thread.join(60)
        assert not thread.is_alive() and results and results[0] is not None
        waiter.abandon()  # the caller gave up before taking it: abandon releases it
    again = locks.try_acquire("/k")
    assert again is not None, "the abandoned wait kept the lock"
    locks.release(again)


async def test_waiting_for_held_locks_holds_no_worker_thread(ws: str, tmp_path: Any) -> None:
    """Many calls waiting for locks held elsewhere leave the worker threads to other work."""
    fs = LocalFileSystem(cwd=ws, lock_dir=str(tmp_path / "locks"), max_threads=2, inline_read_max=0)
    put(os.path.join(ws, "big.txt"), b"x\n" * 1000)
    os.makedirs(fs.process_locks.lock_dir)
    held = []
    for i in range(4):
        target = await fs.resolve(f"f{i}.txt")
        fd = os.open(fs.process_locks.path_for(target.key), os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        held.append(fd)
    try:
        async with anyio.create_task_group() as tg:
            for i in range(4):
                tg.start_soon(fs.write_text, await fs.resolve(f"f{i}.txt"), "x")
            await anyio.sleep(0.05)
            with anyio.fail_after(60):  # a guard: waits holding the threads would never let it run
                assert await fs.read_text(await fs.resolve("big.txt")) == "x\n" * 1000
            for fd in held:
                fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        for fd in held:
            os.close(fd)
    assert sorted(n for n in os.listdir(ws) if n.startswith("f")) == [f"f{i}.txt" for i in range(4)]


# -- the cross-process lock directory -----------------------------------------------------------

def test_a_default_lock_directory_not_private_to_this_user_is_refused(tmp_path: Any) -> None:
    """In a shared /tmp another user could pre-create the default lock directory (or its
    parent); it is refused with a clear error rather than used."""
    from dsh_fs.fs_local.locks import ProcessLocks

    if os.geteuid() != 0:
        pytest.skip("needs root to give a directory away")
    for case in ("other owner", "group writable", "symlink"):
        parent = tmp_path / case.replace(" ", "-") / "dsh-fs-0"
        lock_dir = parent / "locks"
        if case == "symlink":
            real = tmp_path / "elsewhere"
            os.makedirs(real / "locks", mode=0o700)
            os.makedirs(parent.parent)
            os.symlink(real, parent)
        else:
            os.makedirs(lock_dir, mode=0o700)
            if case == "other owner":
                os.chown(parent, 65534, 65534)
            else:
                os.chmod(parent, 0o770)
        with pytest.raises(FsError) as caught:
            ProcessLocks(str(lock_dir), check_private=True).try_acquire("/some/file")
        assert caught.value.code == "FS_IO_ERROR", case
        assert str(caught.value).startswith(f"cannot use the lock directory {lock_dir}: "), case
        assert "DSH_FS_LOCK_DIR" in str(caught.value)


def test_explicit_lock_directories_are_trusted_and_lock_files_never_followed(tmp_path: Any) -> None:
    from dsh_fs.fs_local.locks import ProcessLocks

    lock_dir = tmp_path / "shared-by-a-group"
    os.makedirs(lock_dir)
    os.chmod(lock_dir, 0o770)
    locks = ProcessLocks(str(lock_dir))
    assert not locks.check_private
    fd = locks.try_acquire("/a")
    assert fd is not None
    assert locks.try_acquire("/a") is None  # another open file description: held
    locks.release(fd)
    planted = locks.path_for("/b")
    victim = tmp_path / "victim.txt"
    os.symlink(victim, planted)
    with pytest.raises(FsError) as caught:
        locks.try_acquire("/b")
    assert caught.value.code == "FS_IO_ERROR" and not victim.exists()


def test_the_default_lock_directory_is_made_private_under_any_umask_and_remade_when_removed(
    tmp_path: Any,
) -> None:
    """With umask 002 (common for users with a private group) the parent made on first use is
    0700 too, so the privacy check passes; a /tmp cleaner removing the directory later does
    not break the next mutation, and a squatter who re-creates it first is refused."""
    from dsh_fs.fs_local.locks import ProcessLocks

    lock_dir = tmp_path / "tmp" / "dsh-fs-me" / "locks"
    os.makedirs(tmp_path / "tmp")
    locks = ProcessLocks(str(lock_dir), check_private=True)
    previous = os.umask(0o002)
    try:
        fd = locks.try_acquire("/a")
    finally:
        os.umask(previous)
    assert fd is not None
    locks.release(fd)
    assert os.stat(lock_dir.parent).st_mode & 0o777 == 0o700 and os.stat(lock_dir).st_mode & 0o777 == 0o700
    shutil.rmtree(lock_dir.parent)  # a /tmp cleaner
    fd = locks.try_acquire("/a")
    assert fd is not None
    locks.release(fd)
    if os.geteuid() == 0:
        shutil.rmtree(lock_dir.parent)
        os.makedirs(lock_dir, mode=0o777)  # a squatter's, after the cleaner
        os.chmod(lock_dir.parent, 0o777)
        with pytest.raises(FsError) as caught:
            locks.try_acquire("/a")
        assert str(caught.value).startswith(f"cannot use the lock directory {lock_dir}: ")


async def test_a_process_that_locks_back_to_back_does_not_starve_a_waiter(ws: str, tmp_path: Any) -> None:
    """Another process takes the lock again 0.2 ms after each release, for ten minutes; the
    waiter (queued in the kernel, woken at each release) still gets it (a starved waiter would
    outlast the 60 s guard; no elapsed time is measured)."""
    fs = LocalFileSystem(cwd=ws, lock_dir=str(tmp_path / "locks"))
    target = await fs.resolve("a.txt")
    await fs.write_text(target, "before\n")
    script = (
        "import fcntl, os, sys, time\n"
        "fd = os.open(sys.argv[1], os.O_RDWR)\n"
        "end = time.monotonic() + 600\n"
        "print('go', flush=True)\n"
        "while time.monotonic() < end:\n"
        "    fcntl.flock(fd, fcntl.LOCK_EX); time.sleep(0.002); fcntl.flock(fd, fcntl.LOCK_UN); time.sleep(0.0002)\n"
    )
    busy = subprocess.Popen([sys.executable, "-c", script, fs.process_locks.path_for(target.key)],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert busy.stdout is not None and busy.stdout.readline() == "go\n"
        with anyio.fail_after(60):
            await fs.edit_text(target, EditRequest(old_string="before", new_string="after"))
    finally:
        busy.kill()
        busy.wait()


async def test_a_slow_big_mutation_does_not_send_small_ones_to_threads(ws: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Writing megabytes takes a while on any disk: only small mutations measure the disk."""
    threads = Threads(monkeypatch, fast_disk=False)
    fs = LocalFileSystem(cwd=ws, inline_write_max=1024)
    threads.stretch = SLOW_MUTATION_S * 2
    await fs.write_text(await fs.resolve("big.txt"), "x" * 2000)  # a worker thread, and slow
    threads.stretch = 0.0
    await fs.write_text(await fs.resolve("small.txt"), "y")
    assert threads.seen == ["worker", "loop"]


async def test_mutations_side_by_side_go_to_worker_threads(ws: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Small mutations under way together run in worker threads (their fsyncs overlap); one
    alone stays on the loop; and one beside others, however slow, never starts the cooldown."""
    threads = Threads(monkeypatch, fast_disk=False)
    fs = LocalFileSystem(cwd=ws)
    targets = [await fs.resolve(f"f{i}.txt") for i in range(4)]
    # slow (far past SLOW_MUTATION_S, long enough that all four are under way together even on a
    # loaded machine), but beside others: says nothing of the disk alone
    threads.stretch = max(SLOW_MUTATION_S * 2, 0.3)
    async with anyio.create_task_group() as tg:
        for target in targets:
            tg.start_soon(fs.write_text, target, "side by side\n")
    threads.stretch = 0.0
    assert threads.seen == ["worker"] * 4
    await fs.write_text(targets[0], "alone\n")
    assert threads.seen[-1] == "loop" and fs._mutating == 0
    for target in targets[1:]:
        with open(target.key, "rb") as handle:
            assert handle.read() == b"side by side\n"


async def test_the_up_front_checks_are_probes_on_the_loop_unless_turned_off(ws: str,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """``check_replaceable`` / ``check_creatable`` (apply_patch's checks before its first write)
    are metadata system calls: on the event loop thread with ``inline_probes``, in a worker
    without, with the same refusals."""
    main = threading.get_ident()
    seen: list[str] = []
    real = filesystem._may_change_names_in

    def recording(directory: str) -> bool:
        seen.append("loop" if threading.get_ident() == main else "worker")
        return real(directory)

    monkeypatch.setattr(filesystem, "_may_change_names_in", recording)
    put(os.path.join(ws, "ro.txt"), b"x\n")
    os.chmod(os.path.join(ws, "ro.txt"), 0o444)
    texts = []
    for inline in (True, False):
        fs = LocalFileSystem(cwd=ws, inline_probes=inline)
        await fs.check_creatable(await fs.resolve("new/dir/n.txt"), size=10)
        await fs.check_replaceable(await fs.resolve("ro.txt"), "rename")
        with pytest.raises(FsError) as refused:
            await fs.check_replaceable(await fs.resolve("ro.txt"), "write", size=3)
        texts.append(str(refused.value))
    assert seen == ["loop", "loop", "worker", "worker"]
    assert texts[0] == texts[1] == f'cannot write "{ws}/ro.txt": permission denied — the file is read-only'


async def test_read_text_of_a_small_file_runs_on_the_loop(ws: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``read_text`` (apply_patch's and the editors' whole-file read) of a file of at most
    ``inline_read_max`` bytes runs on the event loop thread, as ``read_window`` does; a bigger
    file, or a zero limit, in a worker; the text and the refusals are the same."""
    main = threading.get_ident()
    seen: list[str] = []
    real = fsio._read_fd

    def recording(*args: Any, **kwargs: Any) -> Any:
        seen.append("loop" if threading.get_ident() == main else "worker")
        return real(*args, **kwargs)

    monkeypatch.setattr(fsio, "_read_fd", recording)
    put(os.path.join(ws, "small.txt"), b"\xef\xbb\xbfsmall\r\n")
    put(os.path.join(ws, "big.txt"), b"b" * 2000 + b"\n")
    put(os.path.join(ws, "bin.dat"), b"a\0b")
    results = []
    for limit in (1024, 0):
        fs = LocalFileSystem(cwd=ws, inline_read_max=limit)
        texts = [await fs.read_text(await fs.resolve(name)) for name in ("small.txt", "big.txt")]
        with pytest.raises(FsError) as refused:
            await fs.read_text(await fs.resolve("bin.dat"))
        results.append((texts, refused.value.code, str(refused.value)))
    assert seen == ["loop", "worker", "loop", "worker", "worker", "worker"]
    assert results[0] == results[1] and results[0][0] == ["small\r\n", "b" * 2000 + "\n"]
    assert results[0][1] == "FS_NOT_TEXT"
