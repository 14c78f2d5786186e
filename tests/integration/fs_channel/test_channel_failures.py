"""When the channel, not a file, fails (DEVIATIONS C2, C3) and what a call costs (C5), on the
subprocess channel: the helper could not start (the channel's own error, no interpreter there,
one too old), the helper dies (a read is sent again over a new helper, a mutation is not: the
file is old or new), a stopped helper (a read ends at its abort, a mutation waits the grace),
requests sent before the answers to earlier ones (pipelining), and the round trips of a tool
call."""

from __future__ import annotations

import asyncio
import os
import signal as signals
import stat
from typing import Any

import pytest

import dsh_fs
from channelkit import channel_fs
from dsh_fs.core.signal import AbortSignal
from dsh_fs.fs.errors import FsError
from dsh_fs.fs.types import EditRequest
from dsh_fs.fs_channel import ChannelFileSystem, CommandChannel
from dsh_fs.testing.channels import far_python

pytestmark = pytest.mark.anyio


def _ws(tmp_path: Any) -> str:
    root = os.path.realpath(os.path.join(str(tmp_path), "ws"))
    os.makedirs(root)
    return root


async def _fails(awaitable: Any, message: str) -> FsError:
    with pytest.raises(FsError) as caught:
        await awaitable
    assert (caught.value.code, str(caught.value)) == ("FS_IO_ERROR", message)
    return caught.value


def _shell_channel(identity: str) -> CommandChannel:
    """A far side that runs the command as a shell would (``exec "$@"``): a missing program
    is the shell's ``not found``, exit status 127, as over ssh or a container runtime."""
    return CommandChannel(["/bin/sh", "-c", 'exec "$@"', "sh"], identity=identity)


async def test_c2_the_channels_own_failure_is_said(tmp_path: Any) -> None:
    channel = CommandChannel(["/bin/sh", "-c", "echo 'Error: no such container: box' >&2; exit 1", "sh"],
                             identity="docker://box")
    fs = ChannelFileSystem(channel, root="/work")
    await _fails(fs.resolve("a.txt"), 'cannot resolve "a.txt": the dsh-fs helper could not start over docker://box: '
                                      "exit status 1: Error: no such container: box")
    await _fails(fs.write_text(dsh_fs.Target(key="docker://box/work/a.txt", display_path="/work/a.txt"), "x"),
                 'cannot write "/work/a.txt": the dsh-fs helper could not start over docker://box: '
                 "exit status 1: Error: no such container: box")  # never sent: nothing to say about the file
    assert fs.starts == 0


async def test_c2_no_interpreter_on_the_far_side_says_what_to_do(tmp_path: Any) -> None:
    fs = ChannelFileSystem(_shell_channel("ssh://me@box"), root=_ws(tmp_path), python="python3-not-here")
    await _fails(fs.resolve("a.txt"), 'cannot resolve "a.txt": there is no python3-not-here on ssh://me@box (the '
                                      "dsh-fs helper needs Python 3.11 or later there): install it there, or name an "
                                      "interpreter with python=")
    here = ChannelFileSystem(CommandChannel([], identity="command://local"), root=_ws(tmp_path / "b"),
                             python="python3-not-here")  # the program is this machine's: not found here
    await _fails(here.stat(dsh_fs.Target(key="command://local/x", display_path="/x")),
                 'cannot stat "/x": there is no python3-not-here on command://local (the dsh-fs helper needs Python '
                 "3.11 or later there): install it there, or name an interpreter with python=")


async def test_c2_an_interpreter_too_old_says_which(tmp_path: Any) -> None:
    fake = os.path.join(str(tmp_path), "python3")
    with open(fake, "w", encoding="ascii") as handle:  # a Python 3.9 as the bootstrap sees it
        handle.write(f"#!/bin/sh\nexec {far_python()} -I -S -c 'import sys; sys.version_info = (3, 9, 18, "
                     "\"final\", 0); exec(compile(sys.argv[1], \"<boot>\", \"exec\"))' \"$4\"\n")
    os.chmod(fake, stat.S_IRWXU)
    fs = ChannelFileSystem(CommandChannel([], identity="command://local"), root=_ws(tmp_path), python=fake)
    await _fails(fs.resolve("a.txt"), f'cannot resolve "a.txt": {fake} on command://local is Python 3.9.18; the '
                                      "dsh-fs helper needs 3.11 or later: install Python 3.11 or later there, or name "
                                      "it with python=")


async def test_c2_a_refused_setting_is_the_far_sides_message(tmp_path: Any) -> None:
    fs = channel_fs(os.path.join(str(tmp_path), "missing"))
    await _fails(fs.resolve("a.txt"), 'cannot resolve "a.txt": the dsh-fs helper could not start over '
                                      f"command://local: LocalFileSystem: root {tmp_path}/missing is not a directory")


async def test_c2_a_helper_that_died_is_started_again_and_a_read_is_sent_again(tmp_path: Any) -> None:
    root = _ws(tmp_path)
    with open(os.path.join(root, "a.txt"), "w", encoding="utf-8") as handle:
        handle.write("one\n")
    async with channel_fs(root, prefetch_max=0) as fs:
        target = await fs.resolve("a.txt")
        os.kill((await fs.connection()).ready["pid"], signals.SIGKILL)
        assert await fs.read_text(target) == "one\n"  # lost with the channel, sent again
        assert fs.starts == 2
        os.kill((await fs.connection()).ready["pid"], signals.SIGKILL)
        await asyncio.sleep(0)
        assert await fs.read_text(target) == "one\n"
        assert fs.starts == 3


async def test_c2_a_mutation_lost_with_the_channel_is_not_sent_again(tmp_path: Any) -> None:
    root = _ws(tmp_path)
    path = os.path.join(root, "a.txt")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("old\n")
    async with channel_fs(root) as fs:
        target = await fs.resolve("a.txt")
        pid = (await fs.connection()).ready["pid"]
        os.kill(pid, signals.SIGSTOP)  # the helper takes the request and never answers
        write = asyncio.ensure_future(fs.write_text(target, "new\n"))
        await asyncio.sleep(0.05)
        os.kill(pid, signals.SIGKILL)
        with pytest.raises(FsError) as caught:
            await write
        assert caught.value.code == "FS_IO_ERROR"
        assert str(caught.value).startswith('cannot write "' + path + '": the channel to command://local closed '
                                            "before the answer (killed by SIGKILL")
        assert str(caught.value).endswith("; the file is unchanged or completely written (read it to see which)")
        with open(path, encoding="utf-8") as handle:
            assert handle.read() in ("old\n", "new\n")
        assert fs.starts == 1
        assert await fs.read_text(target) in ("old\n", "new\n")  # a new helper for the next request
        assert fs.starts == 2


async def test_c3_a_read_ends_at_its_abort_when_the_far_side_does_not_answer(tmp_path: Any) -> None:
    root = _ws(tmp_path)
    with open(os.path.join(root, "a.txt"), "w", encoding="utf-8") as handle:
        handle.write("one\n")
    async with channel_fs(root, prefetch_max=0) as fs:
        target = await fs.resolve("a.txt")
        pid = (await fs.connection()).ready["pid"]
        os.kill(pid, signals.SIGSTOP)
        try:
            signal = AbortSignal()
            read = asyncio.ensure_future(fs.read_text(target, signal=signal))
            await asyncio.sleep(0.05)
            assert not read.done()  # the far side is stopped
            signal.abort()
            with pytest.raises(FsError) as caught:
                await read
            assert (caught.value.code, str(caught.value)) == ("FS_ABORTED", "read aborted")
        finally:
            os.kill(pid, signals.SIGCONT)
        assert await fs.read_text(target) == "one\n"  # the connection goes on
        assert fs.starts == 1


async def test_c3_an_aborted_mutation_waits_the_grace_then_says_the_file_is_old_or_new(tmp_path: Any) -> None:
    root = _ws(tmp_path)
    path = os.path.join(root, "a.txt")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("old\n")
    async with channel_fs(root, abort_grace=0.2) as fs:
        target = await fs.resolve("a.txt")
        pid = (await fs.connection()).ready["pid"]
        os.kill(pid, signals.SIGSTOP)
        try:
            signal = AbortSignal()
            edit = asyncio.ensure_future(fs.edit_text(target, EditRequest(old_string="old", new_string="new"),
                                                      signal=signal))
            await asyncio.sleep(0.05)
            signal.abort()
            with pytest.raises(FsError) as caught:
                await edit
            assert (caught.value.code, str(caught.value)) == (
                "FS_IO_ERROR", f'cannot edit "{path}": aborted, and command://local did not answer within 0.2 s; the '
                               "file is unchanged or completely written (read it to see which)")
        finally:
            os.kill(pid, signals.SIGCONT)
        with open(path, encoding="utf-8") as handle:
            assert handle.read() in ("old\n", "new\n")


async def test_c3_an_abort_before_the_answer_reaches_the_far_side(tmp_path: Any) -> None:
    """The far side's provider sees the abort: a mutation not begun is not done (the local
    provider's checkpoint), and says so as the local disk would."""
    root = _ws(tmp_path)
    path = os.path.join(root, "a.txt")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("old\n")
    async with channel_fs(root) as fs:
        target = await fs.resolve("a.txt")
        with pytest.raises(FsError) as caught:
            await fs.write_text(target, "new\n", signal=AbortSignal.aborted_signal())
        assert (caught.value.code, str(caught.value)) == ("FS_ABORTED", "read aborted")  # it reads the old file first
        with open(path, encoding="utf-8") as handle:
            assert handle.read() == "old\n"


async def test_c5_requests_are_sent_before_the_answers_to_earlier_ones(tmp_path: Any) -> None:
    """Pipelining: with the far side stopped, eight requests all leave (none waits for another's
    answer); once it runs again, all are answered."""
    root = _ws(tmp_path)
    for n in range(8):
        with open(os.path.join(root, f"{n}.txt"), "w", encoding="utf-8") as handle:
            handle.write(f"{n}\n")
    async with channel_fs(root, prefetch_max=0) as fs:
        targets = [await fs.resolve(f"{n}.txt") for n in range(8)]
        connection = await fs.connection()
        pid = connection.ready["pid"]
        before = connection.round_trips
        os.kill(pid, signals.SIGSTOP)
        try:
            reads = [asyncio.ensure_future(fs.read_text(t)) for t in targets]
            await asyncio.sleep(0.05)
            assert connection.round_trips - before == 8 and not any(r.done() for r in reads)
        finally:
            os.kill(pid, signals.SIGCONT)
        assert await asyncio.gather(*reads) == [f"{n}\n" for n in range(8)]


@pytest.mark.parametrize(("size", "trips"), [(100, 1), (200_000, 2)])
async def test_c5_a_read_tool_call_costs_one_round_trip_for_a_small_file(tmp_path: Any, size: int, trips: int) -> None:
    root = _ws(tmp_path)
    with open(os.path.join(root, "a.txt"), "w", encoding="utf-8") as handle:
        handle.write("x" * (size - 1) + "\n")
    fs = channel_fs(root)
    ctx = dsh_fs.create_context(cwd=root, provider=fs)
    async with ctx:
        session = dsh_fs.Session(cwd=root)
        await fs.start()
        before = fs.round_trips
        result = await ctx.tools.execute("read", {"file_path": "a.txt"}, session=session)
        assert not result.is_error
        assert fs.round_trips - before == trips
        before = fs.round_trips
        edited = await ctx.tools.execute("edit", {"file_path": "a.txt", "old_string": "x\n", "new_string": "y\n"},
                                         session=session)
        assert not edited.is_error, edited.text
        assert fs.round_trips - before == 2  # resolve (with its stat), then the edit
