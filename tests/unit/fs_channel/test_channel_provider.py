"""``ChannelFileSystem`` over a far side in this process (``testing.channels.LoopbackChannel``):
the prefetch of ``resolve`` (DEVIATIONS C5) served once, only for the version it holds, and
never across a mutation; keys of another far side refused; a read lost with the channel sent
again, a mutation not (C2); the far side's answers checked; one helper per event loop."""

from __future__ import annotations

import asyncio
import os
import threading
from typing import Any

import pytest

from dsh_fs.core.signal import AbortSignal
from dsh_fs.fs.errors import FsError
from dsh_fs.fs.types import EditRequest, Target, TargetKey, Version
from dsh_fs.fs.window import ReadWindow
from dsh_fs.fs_channel import ChannelFileSystem
from dsh_fs.testing.channels import LoopbackChannel

pytestmark = pytest.mark.anyio


@pytest.fixture
def root(tmp_path: Any) -> str:
    path = os.path.realpath(os.path.join(str(tmp_path), "ws"))
    os.makedirs(os.path.join(path, "d"))
    with open(os.path.join(path, "a.txt"), "w", encoding="utf-8") as handle:
        handle.write("one\ntwo\n")
    with open(os.path.join(path, "big.txt"), "w", encoding="utf-8") as handle:
        handle.write("x" * 100 + "\n")
    return path


def _fs(root: str, **options: Any) -> ChannelFileSystem:
    return ChannelFileSystem(LoopbackChannel(), root=root, **options)


async def _sent(fs: ChannelFileSystem) -> int:
    return (await fs.connection()).round_trips


async def test_resolve_brings_the_stat_and_the_text_of_a_small_file(root: str) -> None:
    async with _fs(root) as fs:
        target = await fs.resolve("a.txt")
        assert target == Target(key=TargetKey(f"loopback://here{root}/a.txt"), display_path=f"{root}/a.txt")
        before = await _sent(fs)
        info = await fs.stat(target)
        assert info is not None and info.type == "file" and info.size == 8
        window = await fs.read_window(target, ReadWindow(), info=info)
        assert window is not None and [line.text for line in window.lines] == ["one", "two"]
        assert await _sent(fs) == before  # both answered from what resolve brought
        assert await fs.stat(target) == info  # taken once: asked again
        assert await fs.read_text(target) == "one\ntwo\n"
        assert await _sent(fs) == before + 2


async def test_the_prefetched_text_is_served_for_its_own_version_only(root: str) -> None:
    async with _fs(root) as fs:
        target = await fs.resolve("a.txt")
        before = await _sent(fs)
        assert await fs.read_text_at(target, Version("not-its-version")) is None  # asked: not that version
        assert await _sent(fs) == before + 1
        info = await fs.stat(target)
        assert info is not None and await fs.read_text_at(target, info.version) == "one\ntwo\n"  # from the far side
        target = await fs.resolve("a.txt")
        info = await fs.stat(target)
        assert info is not None
        before = await _sent(fs)
        assert await fs.read_text_at(target, info.version) == "one\ntwo\n"
        assert await _sent(fs) == before
        await fs.resolve("a.txt")
        before = await _sent(fs)
        assert await fs.read_window(target, ReadWindow(), info=info, streamed=True) is not None  # streamed: asked
        assert await _sent(fs) == before + 1


async def test_nothing_prefetched_outlives_a_mutation(root: str) -> None:
    async with _fs(root) as fs:
        target = await fs.resolve("a.txt")
        other = await fs.resolve("big.txt")
        await fs.edit_text(other, EditRequest(old_string="x", new_string="y", replace_all=True))
        before = await _sent(fs)
        info = await fs.stat(target)
        assert await _sent(fs) == before + 1
        with open(os.path.join(root, "a.txt"), "a", encoding="utf-8") as handle:
            handle.write("three\n")
        assert info is not None and await fs.read_text(target) == "one\ntwo\nthree\n"


async def test_a_mutation_under_way_spoils_a_resolve_sent_before_it_ends(root: str) -> None:
    async with _fs(root) as fs:
        target = await fs.resolve("a.txt")
        edit = asyncio.ensure_future(fs.edit_text(target, EditRequest(old_string="one", new_string="ONE")))
        again = await fs.resolve("a.txt")  # sent while the edit is under way
        await edit
        assert await fs.read_text(again) == "ONE\ntwo\n"  # not the text resolve brought before the edit ended


async def test_nothing_is_prefetched_when_told_not_to_or_for_a_big_file(root: str) -> None:
    async with _fs(root, prefetch_max=0) as fs:
        target = await fs.resolve("a.txt")
        before = await _sent(fs)
        await fs.stat(target)
        assert await _sent(fs) == before + 1
    async with _fs(root, prefetch_max=50) as fs:
        big = await fs.resolve("big.txt")
        before = await _sent(fs)
        info = await fs.stat(big)  # the stat came along
        assert await _sent(fs) == before
        assert info is not None and await fs.read_text(big) == "x" * 100 + "\n"
        assert await _sent(fs) == before + 1  # the text did not: over prefetch_max
    async with _fs(root) as fs:
        directory = await fs.resolve("d")
        assert (await fs.stat(directory)) is not None
        assert await fs.resolve("missing.txt") is not None
        assert await fs.stat(await fs.resolve("missing.txt")) is None


async def test_an_aborted_signal_is_the_far_sides_to_answer(root: str) -> None:
    async with _fs(root) as fs:
        target = await fs.resolve("a.txt")
        with pytest.raises(FsError, match="stat aborted"):
            await fs.stat(target, signal=AbortSignal.aborted_signal())
        await fs.resolve("a.txt")
        with pytest.raises(FsError, match="read aborted"):
            await fs.read_text(target, signal=AbortSignal.aborted_signal())


async def test_a_target_of_another_far_side_is_refused(root: str) -> None:
    async with _fs(root) as fs:
        for key in (f"docker://box{root}/a.txt", f"loopback://hereX{root}/a.txt", f"{root}/a.txt"):
            foreign = Target(key=TargetKey(key), display_path=f"{root}/a.txt")
            with pytest.raises(FsError) as caught:
                await fs.stat(foreign)
            assert (caught.value.code, str(caught.value)) == (
                "FS_NOT_FOUND", f'cannot resolve "{root}/a.txt": not a target of loopback://here')
            with pytest.raises(FsError):
                await fs.write_text(foreign, "x")
        with open(os.path.join(root, "a.txt"), encoding="utf-8") as handle:
            assert handle.read() == "one\ntwo\n"


async def test_a_read_lost_with_the_channel_is_sent_again_over_a_new_helper(root: str) -> None:
    channel = LoopbackChannel()
    async with ChannelFileSystem(channel, root=root, prefetch_max=0) as fs:
        target = await fs.resolve("a.txt")
        await channel.transports[0].aclose()  # the far side ends
        assert await fs.read_text(target) == "one\ntwo\n"
        assert fs.starts == 2
        await channel.transports[1].aclose()
        with pytest.raises(FsError) as caught:
            await fs.write_text(target, "new\n")
        assert caught.value.code == "FS_IO_ERROR" and str(caught.value).endswith(
            "; the file is unchanged or completely written (read it to see which)")
        assert fs.starts == 2  # not sent again
        with open(os.path.join(root, "a.txt"), encoding="utf-8") as handle:
            assert handle.read() == "one\ntwo\n"


async def test_start_says_why_the_helper_cannot_start(tmp_path: Any) -> None:
    fs = _fs(os.path.join(str(tmp_path), "missing"))
    with pytest.raises(FsError) as caught:
        await fs.start()
    assert caught.value.code == "FS_IO_ERROR" and "is not a directory" in str(caught.value)
    assert fs.starts == 0


async def test_each_event_loop_has_its_helper(root: str) -> None:
    fs = _fs(root)
    await fs.start()
    other: list[Any] = []

    def elsewhere() -> None:
        async def use() -> None:
            other.append(await fs.read_text(await fs.resolve("a.txt")))
            await fs.aclose()

        asyncio.run(use())

    thread = threading.Thread(target=elsewhere)
    thread.start()
    thread.join()
    assert other == ["one\ntwo\n"] and fs.starts == 2
    assert await fs.read_text(await fs.resolve("a.txt")) == "one\ntwo\n" and fs.starts == 2
    await fs.aclose()
    await fs.aclose()
    assert fs.round_trips == 0


def test_settings_are_checked_here(root: str) -> None:
    channel = LoopbackChannel()
    with pytest.raises(ValueError, match="is not an absolute far-side path"):
        ChannelFileSystem(channel, root="work")
    with pytest.raises(ValueError, match="give root= or roots="):
        ChannelFileSystem(channel, root="/a", roots=["/b"])
    with pytest.raises(TypeError, match=r"unknown options \['nope'\]"):
        ChannelFileSystem(channel, root="/a", nope=1)
    fs = ChannelFileSystem(channel, roots=["/a/", "/b"], cwd="/b/c/")
    assert (fs.roots, fs.root, fs.cwd, fs.workspace_roots()) == (("/a", "/b"), "/a", "/b/c", ("/a", "/b"))
    assert repr(fs) == "ChannelFileSystem(loopback://here, root='/a')"
    whole = ChannelFileSystem(channel, root=None)
    assert (whole.root, whole.cwd, whole.workspace_roots()) == (None, "/", ())


async def test_the_far_sides_answers_are_checked(root: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from dsh_fs.far_helper import serve

    async def bad_stat(self: Any, request: int, args: Any, body: bytes, signal: Any) -> None:
        await self.answer(request, ["v", "pipe", 1])

    async def bad_resolve(self: Any, request: int, args: Any, body: bytes, signal: Any) -> None:
        await self.answer(request, "a target")

    async def bad_current(self: Any, request: int, args: Any, body: bytes, signal: Any) -> None:
        await self.answer(request, "yes")

    monkeypatch.setattr(serve.Helper, "op_stat", bad_stat)
    monkeypatch.setattr(serve.Helper, "op_resolve", bad_resolve)
    monkeypatch.setattr(serve.Helper, "op_is_current", bad_current)
    async with _fs(root) as fs:
        target = Target(key=TargetKey(f"loopback://here{root}/a.txt"), display_path=f"{root}/a.txt")
        for call, verb in ((fs.stat(target), "stat"), (fs.resolve("a.txt"), "resolve"),
                           (fs.is_current(target, Version("v")), "stat")):
            with pytest.raises(FsError) as caught:
                await call
            assert caught.value.code == "FS_IO_ERROR"
            assert f'cannot {verb} "' in str(caught.value) and "answered outside the protocol" in str(caught.value)


async def test_every_primitive_reaches_the_far_side_with_its_arguments(root: str) -> None:
    from dsh_fs.fs.types import DeleteIntent, RenameIntent

    os.symlink("a.txt", os.path.join(root, "link"))
    async with _fs(root, write_max_size=20) as fs:
        a = await fs.resolve("a.txt")
        info = await fs.stat(a)
        assert info is not None
        assert await fs.is_current(a, info.version) is True
        assert await fs.is_current(a, Version("other")) is False
        link = await fs.lstat("link", cwd=root)
        assert link is not None and (link.type, link.size) == ("symlink", 5)
        assert await fs.lstat("nope") is None
        assert await fs.read_bytes(a, max_bytes=100, size=8) == b"one\ntwo\n"
        with pytest.raises(FsError, match="exceeds the 4-byte limit"):
            await fs.read_bytes(a, max_bytes=4)
        assert "".join([c async for c in fs.stream_text(a)]) == "one\ntwo\n"
        assert b"".join([c async for c in fs.stream_bytes(a)]) == b"one\ntwo\n"
        listed = await fs.list_dir(await fs.resolve("."))
        assert [(e.name, e.type, e.target.key, e.size) for e in listed if e.name != "link"] == [
            ("a.txt", "file", f"loopback://here{root}/a.txt", 8),
            ("big.txt", "file", f"loopback://here{root}/big.txt", 101), ("d", "directory", f"loopback://here{root}/d", None)]
        walked = {e.rel: e async for e in fs.walk(await fs.resolve("."))}
        assert walked["a.txt"].target.key == f"loopback://here{root}/a.txt" and walked["a.txt"].size == 8
        assert walked["a.txt"].mtime_ns == os.stat(os.path.join(root, "a.txt")).st_mtime_ns
        assert walked["d"].type == "directory" and "link" not in walked
        with pytest.raises(FsError, match="the file would be 30 bytes, more than the limit of 20 bytes"):
            await fs.check_replaceable(a, "write", size=30)
        await fs.check_replaceable(a, "write", size=20)
        with pytest.raises(FsError, match="more than the limit of 20 bytes"):
            await fs.check_creatable(await fs.resolve("new.txt"), size=21)
        await fs.check_creatable(await fs.resolve("new.txt"), size=2)
        await fs.check_renamable(a, await fs.resolve("moved.txt"))
        with pytest.raises(FsError, match="not a regular file"):
            await fs.check_replaceable(await fs.resolve("link"), "delete")
        with pytest.raises(FsError, match="file changed since it was read"):
            await fs.rename(a, await fs.resolve("moved.txt"), RenameIntent(Version("stale")))
        moved = await fs.rename(a, await fs.resolve("moved.txt"), RenameIntent(info.version))
        assert os.path.exists(os.path.join(root, "moved.txt")) and not os.path.exists(os.path.join(root, "a.txt"))
        m = await fs.resolve("moved.txt")
        with pytest.raises(FsError, match="file changed since it was read"):
            await fs.delete(m, DeleteIntent(Version("stale")))
        assert (await fs.delete(m, DeleteIntent(moved.version))).version == moved.version
        assert not os.path.exists(os.path.join(root, "moved.txt"))
        new = await fs.resolve("n.txt")
        from dsh_fs.fs.types import CreateIfAbsent, EditIntent, ReplaceIfVersion

        made = await fs.write_text(new, "abc\n", CreateIfAbsent())
        assert made.operation == "create" and made.after == "abc\n"
        with pytest.raises(FsError, match="without reading it first"):
            await fs.write_text(new, "x\n", CreateIfAbsent())
        with pytest.raises(FsError, match="file changed since it was read"):
            await fs.write_text(new, "x\n", ReplaceIfVersion(Version("stale")))
        with pytest.raises(FsError, match="file changed since it was read"):
            await fs.edit_text(new, EditRequest(old_string="abc", new_string="x"), EditIntent(Version("stale")))
        edited = await fs.edit_text(new, EditRequest(old_string="b", new_string="B"), EditIntent(made.version))
        assert (edited.before, edited.after, edited.changed) == ("abc\n", "aBc\n", (1, 2))
        assert await fs.ping(b"echo") == b"echo"


async def test_the_prefetch_limit_is_64_kib_by_default(root: str) -> None:
    from dsh_fs.fs_channel.filesystem import PREFETCH_MAX

    assert PREFETCH_MAX == 64 * 1024
    for name, size in (("at.txt", PREFETCH_MAX), ("over.txt", PREFETCH_MAX + 1)):
        with open(os.path.join(root, name), "w", encoding="utf-8") as handle:
            handle.write("y" * (size - 1) + "\n")
    async with _fs(root) as fs:
        for name, asked in (("at.txt", 0), ("over.txt", 1)):
            target = await fs.resolve(name)
            before = await _sent(fs)
            assert await fs.stat(target) is not None  # the stat always came along
            assert await _sent(fs) == before
            await fs.read_text(target)
            assert await _sent(fs) == before + asked


async def test_only_the_newest_prefetches_are_kept(root: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from dsh_fs.fs_channel import filesystem

    monkeypatch.setattr(filesystem, "_FRESH_KEPT", 2)
    async with _fs(root) as fs:
        a = await fs.resolve("a.txt")
        big = await fs.resolve("big.txt")
        await fs.resolve("a.txt")  # a.txt again: the newest
        d = await fs.resolve("d")  # the oldest (big.txt) goes
        before = await _sent(fs)
        for target in (a, d):
            await fs.stat(target)
        assert await _sent(fs) == before
        await fs.stat(big)
        assert await _sent(fs) == before + 1


async def test_a_mutation_that_ends_after_a_resolve_spoils_what_it_brought(root: str,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from dsh_fs.far_helper import serve

    gate = asyncio.Event()
    real = serve.Helper.op_edit_text

    async def held(self: Any, request: int, args: Any, body: bytes, signal: Any) -> None:
        await gate.wait()
        await real(self, request, args, body, signal)

    monkeypatch.setattr(serve.Helper, "op_edit_text", held)
    async with _fs(root) as fs:
        target = await fs.resolve("a.txt")
        edit = asyncio.ensure_future(fs.edit_text(target, EditRequest(old_string="one", new_string="ONE")))
        await asyncio.sleep(0.01)
        again = await fs.resolve("a.txt")  # answered before the edit is made
        gate.set()
        await edit
        assert await fs.read_text(again) == "ONE\ntwo\n"  # asked again: the text it brought is older


async def test_malformed_resolve_answers_and_errors_are_refused(root: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from dsh_fs.far_helper import serve
    from dsh_fs.fs_channel.wire import encode_frame

    answers: list[Any] = [[], [[root + "/a.txt", root + "/a.txt"], None, None, None]]

    async def odd(self: Any, request: int, args: Any, body: bytes, signal: Any) -> None:
        await self.answer(request, answers.pop(0))

    async def bad_error(self: Any, request: int, args: Any, body: bytes, signal: Any) -> None:
        await self.send(encode_frame({"id": request, "e": {"c": "FS_WHAT", "m": "x"}}))

    monkeypatch.setattr(serve.Helper, "op_resolve", odd)
    monkeypatch.setattr(serve.Helper, "op_read_text", bad_error)
    async with _fs(root) as fs:
        for _ in range(2):
            with pytest.raises(FsError, match='cannot resolve "a.txt": the dsh-fs helper on loopback://here answered '
                                              r"outside the protocol \(a resolve answer\)"):
                await fs.resolve("a.txt")
        target = Target(key=TargetKey(f"loopback://here{root}/a.txt"), display_path=f"{root}/a.txt")
        with pytest.raises(FsError) as caught:
            await fs.read_text(target)
        assert caught.value.code == "FS_IO_ERROR" and str(caught.value) == (
            f'cannot read "{root}/a.txt": the dsh-fs helper on loopback://here answered outside the protocol (an '
            "error code is not an FsError code)")


async def test_a_read_or_a_stream_ends_at_its_abort(root: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from dsh_fs.far_helper import serve

    async def stuck(self: Any, request: int, args: Any, body: bytes, signal: Any) -> None:
        await asyncio.sleep(60)

    monkeypatch.setattr(serve.Helper, "op_read_text", stuck)
    monkeypatch.setattr(serve.Helper, "op_stream_bytes", stuck)
    async with _fs(root, prefetch_max=0) as fs:
        target = await fs.resolve("a.txt")
        for call in (lambda s: fs.read_text(target, signal=s),
                     lambda s: fs.stream_bytes(target, signal=s).__anext__()):
            signal = AbortSignal()
            task = asyncio.ensure_future(call(signal))
            await asyncio.sleep(0.02)
            signal.abort()
            with pytest.raises(FsError) as caught:
                await task
            assert (caught.value.code, str(caught.value)) == ("FS_ABORTED", "read aborted")


async def test_a_stream_lost_with_the_channel_or_given_up(root: str) -> None:
    with open(os.path.join(root, "big.bin"), "wb") as handle:
        handle.write(b"z" * (5 << 20))
    channel = LoopbackChannel()
    async with ChannelFileSystem(channel, root=root) as fs:
        target = await fs.resolve("big.bin")
        chunks = fs.stream_bytes(target)
        assert len(await chunks.__anext__()) > 0
        await chunks.aclose()  # given up: the far side stops
        helper = channel.transports[0]._helper
        for _ in range(6000):  # until the far side stopped (60 s: a guard, not a budget)
            if not helper.tasks:
                break
            await asyncio.sleep(0.01)
        assert not helper.tasks
        for make in (lambda: fs.stream_text(target), lambda: fs.walk(target)):
            stream = make()
            await channel.transports[-1].aclose()
            with pytest.raises(FsError) as caught:
                await stream.__anext__()
            assert caught.value.code == "FS_IO_ERROR" and "closed before the answer" in str(caught.value)
            await fs.start()


async def test_several_far_roots_and_the_search_host(tmp_path: Any) -> None:
    from dsh_fs.fs_channel.search import ChannelSearchHost

    a, b = (os.path.realpath(os.path.join(str(tmp_path), n)) for n in ("a", "b"))
    for directory in (a, b):
        os.makedirs(directory)
        with open(os.path.join(directory, "f.txt"), "w", encoding="utf-8") as handle:
            handle.write(directory + "\n")
    async with ChannelFileSystem(LoopbackChannel(), roots=[a, b]) as fs:
        assert (await fs.start())["roots"] == [a, b]
        there = await fs.resolve(f"{b}/f.txt")
        assert await fs.read_text(there) == b + "\n"
        with pytest.raises(FsError, match=f'cannot rename "{a}/f.txt" to "{b}/g.txt": outside the workspace "{a}"'):
            await fs.check_renamable(await fs.resolve("f.txt"), await fs.resolve(f"{b}/g.txt"))
        host = fs.search_host()
        assert isinstance(host, ChannelSearchHost) and host.fs is fs
    assert ChannelFileSystem(LoopbackChannel(), root="/x").round_trips == 0  # no event loop: no connection
