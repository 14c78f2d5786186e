"""The local spill store (``spill/local.py``): what its reader serves, how it names, protects
and ages its artifacts. Through its public functions, on a real disk."""

from __future__ import annotations

import os
import stat
import time
from typing import Any

import pytest

from dsh_fs.spill import RETRIEVAL_HINT, LocalSpillStore, SpillRequest
from dsh_fs.spill.local import DEFAULT_MAX_AGE_S, SWEEP_INTERVAL_S, safe_name

pytestmark = pytest.mark.anyio


def _request(session: str = "sess-1", name: str = "grep-results.txt") -> SpillRequest:
    return SpillRequest(session_id=session, tool_name="grep", call_id="c1", suggested_name=name)


def _mode(path: str) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


async def test_an_artifact_is_head_then_body_named_by_the_store_and_private(tmp_path: Any) -> None:
    store = LocalSpillStore(root=str(tmp_path / "spill"))
    writer = store.open_writer(_request(name="a b.txt"))
    writer.write("body é\n")
    writer.write("more\n")
    assert writer.size == len("body é\nmore\n".encode())
    ref = await writer.commit(head="HEAD\n")
    assert open(ref.locator, "rb").read() == "HEAD\nbody é\nmore\n".encode()
    assert ref.bytes == len("HEAD\nbody é\nmore\n".encode()) and ref.retrieval_hint == RETRIEVAL_HINT
    directory = os.path.dirname(ref.locator)
    assert os.path.dirname(directory) == store.root == str(tmp_path / "spill")
    assert os.path.basename(directory).startswith("s-") and len(os.path.basename(directory)) == 18
    name = os.path.basename(ref.locator)
    assert name[16] == "-" and all(c in "0123456789abcdef" for c in name[:16]) and name[17:] == "a~0020b.txt"
    assert (_mode(store.root), _mode(directory), _mode(ref.locator)) == (0o700, 0o700, 0o600)
    assert os.listdir(directory) == [name]  # the part file is gone


async def test_a_private_root_is_made_on_first_save_and_removed_by_close(tmp_path: Any) -> None:
    store = LocalSpillStore()
    assert store.root is None
    ref = await store.save_text(_request(), "x" * 10)
    root = store.root
    assert root is not None and os.path.basename(root).startswith("dsh-fs-spill-") and _mode(root) == 0o700
    assert ref.locator.startswith(root + os.sep) and open(ref.locator).read() == "x" * 10
    assert store.reader(ref.locator, session_id="sess-1") is not None
    store.close()
    store.close()  # idempotent
    assert not os.path.exists(root)
    with pytest.raises(OSError, match="the spill store is closed"):
        store.open_writer(_request())


async def test_close_keeps_an_explicit_root(tmp_path: Any) -> None:
    store = LocalSpillStore(root=str(tmp_path / "spill"))
    ref = await store.save_text(_request(), "kept")
    store.close()
    assert open(ref.locator).read() == "kept"


async def test_sessions_get_separate_directories_and_names_never_collide(tmp_path: Any) -> None:
    store = LocalSpillStore(root=str(tmp_path))
    a1 = await store.save_text(_request("a"), "1")
    a2 = await store.save_text(_request("a"), "2")
    b = await store.save_text(_request("b"), "3")
    assert os.path.dirname(a1.locator) == os.path.dirname(a2.locator) != os.path.dirname(b.locator)
    assert a1.locator != a2.locator and open(a1.locator).read() == "1" and open(a2.locator).read() == "2"


# -- the reader ----------------------------------------------------------------------------

async def test_the_reader_serves_only_finished_artifacts_of_the_calling_session(tmp_path: Any) -> None:
    store = LocalSpillStore(root=str(tmp_path))
    writer = store.open_writer(_request())
    writer.write("partial\n")
    (pending,) = os.listdir(os.path.join(store.root, os.listdir(store.root)[0]))
    pending_path = os.path.join(store.root, os.listdir(store.root)[0], pending)
    assert store.reader(pending_path, session_id="sess-1") is None  # the writer's in-progress file
    ref = await writer.commit()
    assert not os.path.exists(pending_path)
    reader = store.reader(ref.locator, session_id="sess-1")
    assert reader is not None
    assert await reader.read_text(await reader.resolve(ref.locator)) == "partial\n"
    assert store.reader(ref.locator, session_id="sess-2") is None
    assert store.reader(ref.locator, session_id=None) is None
    assert LocalSpillStore(root=str(tmp_path / "other")).reader(ref.locator, session_id="sess-1") is None


async def test_a_writer_still_open_is_never_served_whatever_it_was_asked_to_be_named(tmp_path: Any) -> None:
    store = LocalSpillStore(root=str(tmp_path))
    writer = store.open_writer(_request(name="x.part"))
    writer.write("partial")
    directory = os.path.join(store.root, os.listdir(store.root)[0])
    for name in os.listdir(directory):
        assert store.reader(os.path.join(directory, name), session_id="sess-1") is None
    await writer.discard()
    await writer.discard()  # idempotent
    assert os.listdir(directory) == []


async def test_the_reader_serves_only_names_of_the_stores_own_form(tmp_path: Any) -> None:
    store = LocalSpillStore(root=str(tmp_path))
    ref = await store.save_text(_request(), "x")
    directory = os.path.dirname(ref.locator)
    for name in ("notes.txt", "0123456789abcde-x", "0123456789ABCDEF-x", "0123456789abcdef-", "0123456789abcdef-a b"):
        planted = os.path.join(directory, name)
        open(planted, "w").close()
        assert store.reader(planted, session_id="sess-1") is None, name
    nested = os.path.join(directory, "0123456789abcdef-d")
    os.mkdir(nested)
    assert store.reader(nested, session_id="sess-1") is None  # not a regular file
    assert store.reader(os.path.join(nested, os.path.basename(ref.locator)), session_id="sess-1") is None
    link = os.path.join(directory, "0123456789abcdef-link")
    os.symlink(ref.locator, link)
    assert store.reader(link, session_id="sess-1") is None
    assert store.reader(os.path.join(directory, "0123456789abcdef-gone"), session_id="sess-1") is None
    assert store.reader(str(tmp_path) + "x/" + os.path.basename(ref.locator), session_id="sess-1") is None


async def test_the_reader_before_anything_was_saved(tmp_path: Any) -> None:
    assert LocalSpillStore().reader("/tmp/0123456789abcdef-x", session_id="s") is None


# -- planted state ---------------------------------------------------------------------------

async def test_a_symlink_planted_as_a_sessions_directory_is_refused(tmp_path: Any) -> None:
    store = LocalSpillStore(root=str(tmp_path / "spill"))
    await store.save_text(_request("other"), "x")  # makes the root
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    from dsh_fs.spill.local import _session_dir_name

    os.symlink(elsewhere, os.path.join(store.root, _session_dir_name("sess-1")))
    with pytest.raises(OSError, match="is not a directory of this user"):
        store.open_writer(_request("sess-1"))
    assert os.listdir(elsewhere) == []


async def test_a_sessions_directory_of_another_user_is_refused(tmp_path: Any) -> None:
    store = LocalSpillStore(root=str(tmp_path))
    await store.save_text(_request(), "x")
    directory = os.path.join(store.root, os.listdir(store.root)[0])
    os.chown(directory, os.geteuid() + 4242, -1)
    with pytest.raises(OSError, match="is not a directory of this user"):
        store.open_writer(_request())


async def test_a_file_planted_as_a_sessions_directory_is_refused(tmp_path: Any) -> None:
    from dsh_fs.spill.local import _session_dir_name

    store = LocalSpillStore(root=str(tmp_path))
    open(os.path.join(tmp_path, _session_dir_name("sess-1")), "w").close()
    with pytest.raises(OSError, match="is not a directory of this user"):
        store.open_writer(_request())


async def test_a_failed_commit_leaves_nothing_behind(tmp_path: Any) -> None:
    store = LocalSpillStore(root=str(tmp_path))
    writer = store.open_writer(_request())
    writer.write("data")
    directory = os.path.join(store.root, os.listdir(store.root)[0])
    (part,) = os.listdir(directory)
    os.unlink(os.path.join(directory, part))  # the part vanished: the copy cannot read it
    with pytest.raises(OSError):
        await writer.commit(head="h")
    assert os.listdir(directory) == []  # neither the part nor a half-made artifact
    with pytest.raises(RuntimeError, match="spill writer already finished"):
        await writer.commit()


async def test_a_writer_commits_once(tmp_path: Any) -> None:
    writer = LocalSpillStore(root=str(tmp_path)).open_writer(_request())
    await writer.commit()
    with pytest.raises(RuntimeError, match="^spill writer already finished$"):
        await writer.commit()


# -- the age sweep -----------------------------------------------------------------------------

def _age(path: str, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then), follow_symlinks=False)


async def test_the_age_sweep_removes_old_artifacts_and_keeps_fresh_ones(tmp_path: Any) -> None:
    root = str(tmp_path / "spill")
    first = LocalSpillStore(root=root, max_age=100)
    old = await first.save_text(_request("a"), "old")
    fresh = await first.save_text(_request("a"), "fresh")
    gone_session = await first.save_text(_request("b"), "old too")
    _age(old.locator, 101)
    _age(gone_session.locator, 1000)
    _age(fresh.locator, 90)
    foreign = os.path.join(root, "keep-me")
    os.mkdir(foreign)
    open(os.path.join(foreign, "f"), "w").close()
    _age(os.path.join(foreign, "f"), 1000)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim").write_text("v")
    _age(str(outside / "victim"), 1000)
    os.symlink(outside, os.path.join(root, "s-0123456789abcdef"))
    planted_link = os.path.join(os.path.dirname(fresh.locator), "0123456789abcdef-link")
    os.symlink(outside / "victim", planted_link)  # only regular files are swept: a link stays
    _age(planted_link, 1000)  # the link itself is old too

    second = LocalSpillStore(root=root, max_age=100)  # a later process: sweeps on its first save
    new = await second.save_text(_request("c"), "new")
    assert not os.path.exists(old.locator)
    assert not os.path.exists(os.path.dirname(gone_session.locator))  # its emptied directory too
    assert open(fresh.locator).read() == "fresh" and open(new.locator).read() == "new"
    assert os.listdir(foreign) == ["f"] and (outside / "victim").read_text() == "v"
    assert os.path.islink(planted_link)

    _age(fresh.locator, 1000)  # the sweep runs at most once per interval
    await second.save_text(_request("c"), "again")
    assert os.path.exists(fresh.locator)
    second._swept_at -= SWEEP_INTERVAL_S + 1  # an interval later
    await second.save_text(_request("c"), "later")
    assert not os.path.exists(fresh.locator)


async def test_a_private_root_is_never_swept(tmp_path: Any) -> None:
    store = LocalSpillStore(max_age=1)
    ref = await store.save_text(_request(), "x")
    _age(ref.locator, 1000)
    store._swept_at = 0.0
    await store.save_text(_request(), "y")
    assert os.path.exists(ref.locator)
    store.close()


def test_the_default_age_is_a_week_and_the_sweep_hourly() -> None:
    assert (DEFAULT_MAX_AGE_S, SWEEP_INTERVAL_S) == (7 * 24 * 3600.0, 3600.0)
    assert LocalSpillStore().max_age == DEFAULT_MAX_AGE_S


# -- names -------------------------------------------------------------------------------------

def test_safe_name_escapes_every_unit_outside_the_safe_set_and_caps_at_100() -> None:
    assert safe_name(".") == "~002E" and safe_name("...") == "..."
    assert safe_name("AZaz09._-") == "AZaz09._-"
    assert safe_name("\U0001f600") == "~D83D~DE00"  # UTF-16 units, as the reference
    assert safe_name("\ud800x") == "~D800x"  # a lone surrogate
    assert safe_name("\x00/") == "~0000~002F"
    assert safe_name("a" * 150) == "a" * 100
    assert len(safe_name("é" * 30)) == 100


async def test_a_file_or_symlink_planted_at_an_artifacts_name_is_never_written_through(
        tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import secrets

    store = LocalSpillStore(root=str(tmp_path / "spill"))
    await store.save_text(_request(), "first")
    directory = os.path.join(store.root, os.listdir(store.root)[0])
    monkeypatch.setattr(secrets, "token_hex", lambda n: "0123456789abcdef")
    victim = tmp_path / "victim"
    victim.write_text("victim")
    final = os.path.join(directory, "0123456789abcdef-grep-results.txt")
    part = os.path.join(directory, ".0123456789abcdef-grep-results.txt.part")
    os.symlink(victim, part)  # at the part's name: open_writer refuses
    with pytest.raises(FileExistsError):
        store.open_writer(_request())
    os.unlink(part)
    open(final, "w").write("planted")  # at the artifact's name: commit refuses, the part goes
    writer = store.open_writer(_request())
    writer.write("new")
    with pytest.raises(FileExistsError):
        await writer.commit()
    assert open(final).read() == "planted" and not os.path.lexists(part)
    os.unlink(final)
    os.symlink(victim, final)
    with pytest.raises(FileExistsError):
        await store.save_text(_request(), "new")
    assert victim.read_text() == "victim" and os.path.islink(final)


async def test_close_after_the_private_root_vanished_does_not_fail(tmp_path: Any) -> None:
    import shutil

    store = LocalSpillStore()
    await store.save_text(_request(), "x")
    shutil.rmtree(store.root)
    store.close()  # nothing left to remove: no error


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


async def test_the_part_is_private_and_discard_closes_and_removes_only_it(
        tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import secrets

    store = LocalSpillStore(root=str(tmp_path))
    await store.save_text(_request(), "first")
    directory = os.path.join(store.root, os.listdir(store.root)[0])
    monkeypatch.setattr(secrets, "token_hex", lambda n: "0123456789abcdef")
    before = _open_fds()
    writer = store.open_writer(_request())
    part = os.path.join(directory, ".0123456789abcdef-grep-results.txt.part")
    assert _mode(part) == 0o600
    final = os.path.join(directory, "0123456789abcdef-grep-results.txt")
    open(final, "w").write("planted")
    await writer.discard()
    assert _open_fds() == before  # the part's descriptor is closed
    assert not os.path.lexists(part) and open(final).read() == "planted"
    with pytest.raises(RuntimeError, match="^spill writer already finished$"):
        await writer.commit()  # a discarded writer is finished too


def test_a_private_root_is_removed_when_the_process_exits_without_close() -> None:
    import subprocess
    import sys

    program = (
        "import anyio\n"
        "from dsh_fs.spill import LocalSpillStore, SpillRequest\n"
        "store = LocalSpillStore()\n"
        "request = SpillRequest(session_id='s', tool_name='grep', call_id='c', suggested_name='x.txt')\n"
        "ref = anyio.run(store.save_text, request, 'x')\n"
        "print(store.root, flush=True)\n"
        "KEEP = store\n"  # still referenced at exit: only the exit hook removes it
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    root = done.stdout.strip()
    assert os.path.basename(root).startswith("dsh-fs-spill-") and not os.path.exists(root)


def test_the_plugin_provides_the_store_with_the_contexts_profile_and_closes_it(tmp_path: Any) -> None:
    import dsh_fs

    ctx = dsh_fs.create_context(cwd=str(tmp_path), profile="reference")
    store = ctx.spill_store
    assert isinstance(store, LocalSpillStore) and store.profile == "reference" and store.root is None
    next(s for s in ctx.scopes if s.name == "spill-local").dispose()
    with pytest.raises(OSError, match="the spill store is closed"):
        store.open_writer(_request())


def test_requests_and_refs_are_frozen_keyword_only_values() -> None:
    from dataclasses import FrozenInstanceError, fields

    from dsh_fs.spill import SpillRef

    request = _request()
    ref = SpillRef(locator="/x", bytes=1, retrieval_hint=RETRIEVAL_HINT)
    for value in (request, ref):
        with pytest.raises(FrozenInstanceError):
            setattr(value, fields(value)[0].name, "changed")
        assert not hasattr(value, "__dict__")  # slots
    with pytest.raises(TypeError):
        SpillRef("/x", 1, RETRIEVAL_HINT)  # type: ignore[misc]
    with pytest.raises(TypeError):
        SpillRequest("s", "grep", "c", "n")  # type: ignore[misc]
    assert request.label == "result"


async def test_save_text_discards_the_writer_when_writing_fails() -> None:
    from dsh_fs.spill import SpillRef, SpillStore, SpillWriter

    events: list[str] = []

    class Failing(SpillWriter):
        size = 0

        def write(self, text: str) -> None:
            raise OSError(28, "No space left on device")

        async def commit(self, *, head: str = "") -> SpillRef:
            events.append("commit")
            raise AssertionError("not reached")

        async def discard(self) -> None:
            events.append("discard")

    class Store(SpillStore):
        def open_writer(self, request: SpillRequest) -> SpillWriter:
            return Failing()

    with pytest.raises(OSError, match="No space left on device"):
        await Store().save_text(_request(), "x")
    assert events == ["discard"]
    assert Store().reader("/x", session_id="s") is None  # a store serves nothing unless it says so
