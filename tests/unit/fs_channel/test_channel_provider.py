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
        info = await fs.stat(big)  # the stat came along
        before = await _sent(fs)
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
