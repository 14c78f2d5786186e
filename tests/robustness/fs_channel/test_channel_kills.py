"""A channel killed at any point of a write or an edit leaves every far file old or new, never
torn (DEVIATIONS C1, C2); two near-side processes editing one far file lose no update (the far
side's locks and version guard). Over the subprocess channel, SSH to the session's ``sshd``,
and ``podman exec -i`` into the session's box.

Each round starts a provider, starts a write (a few MiB, so the kill often lands while bytes
are still travelling or being written) or an edit, and after a random delay kills either the
channel's local process (the helper's stdin and stdout end with it) or the far helper itself
(``SIGKILL``, the worst case: no chance to finish). Whatever the moment, the far file must be
exactly the bytes of one version some round asked for (the old ones, the new ones, or those of
an earlier round whose mutation the far side had begun and finished after its channel died),
and the call, if it did not succeed, must say that the channel failed and that the file is old
or new.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal as signals
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from dsh_fs.fs.errors import FsError
from dsh_fs.fs.types import EditRequest
from dsh_fs.fs_channel import ChannelFileSystem, channel_for_url
from dsh_fs.fs_channel.channels import ProcessTransport
from dsh_fs.testing.channels import far_python, subprocess_channel
from dsh_fs.testing.far_sides import PodmanBox, SshServer

pytestmark = pytest.mark.anyio

ROUNDS = 16


def _content(generation: int, size: int) -> str:
    line = f"generation {generation:04d} " + "x" * 40 + "\n"
    return line * (size // len(line))


class _Place:
    """A far side for one test: its channel factory, and where its files are, here and there."""

    def __init__(self, here: str, far: str, make: Callable[[], ChannelFileSystem], far_kill: Callable[[int], None]):
        self.here = here
        self.far = far
        self.make = make
        self.far_kill = far_kill


@pytest.fixture(params=["subprocess", "ssh", "podman"])
def place(request: pytest.FixtureRequest, tmp_path: Any) -> _Place:
    kind = request.param
    if kind == "subprocess":
        here = os.path.realpath(os.path.join(str(tmp_path), "ws"))
        os.mkdir(here)
        return _Place(here, here, lambda: ChannelFileSystem(subprocess_channel(), root=here, python=far_python()),
                      lambda pid: os.kill(pid, signals.SIGKILL))
    if kind == "ssh":
        server: SshServer = request.getfixturevalue("ssh_server")
        here = os.path.realpath(os.path.join(str(tmp_path), "ws"))
        os.mkdir(here)
        url = server.url(here).split("://", 1)[1]
        return _Place(here, here,
                      lambda: ChannelFileSystem(channel_for_url("ssh", url, ssh_command=server.ssh_command).channel,
                                                root=here),
                      lambda pid: os.kill(pid, signals.SIGKILL))  # the same machine
    box: PodmanBox = request.getfixturevalue("podman_box")
    name = uuid.uuid4().hex[:12]
    here = os.path.join(request.getfixturevalue("box_dir"), name)
    os.mkdir(here)

    def kill_in_box(pid: int) -> None:
        subprocess.run(box.exec_argv(["/bin/kill", "-KILL", str(pid)]), capture_output=True)

    return _Place(here, f"/ws/{name}",
                  lambda: ChannelFileSystem(channel_for_url("podman", f"{box.name}/ws/{name}").channel,
                                            root=f"/ws/{name}"),
                  kill_in_box)


async def test_a_killed_channel_leaves_every_far_file_old_or_new(place: _Place) -> None:
    rng = random.Random(20261206)
    path = os.path.join(place.here, "big.txt")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(_content(0, 1 << 20))
    attempted = {_content(0, 1 << 20)}  # every whole file a round asked for: what the file may be
    failed = 0
    for generation in range(1, ROUNDS + 1):
        with open(path, encoding="utf-8") as handle:
            old = handle.read()
        fs = place.make()
        try:
            connection = await fs.connection()
            target = await fs.resolve("big.txt")
            if generation % 3:
                new = _content(generation, rng.choice([1, 2, 4]) << 20)
                call = fs.write_text(target, new)
            else:
                marker = old[:len("generation 0000")]
                new = old.replace(marker, f"generation {generation:04d}")
                call = fs.edit_text(target, EditRequest(old_string=marker, new_string=f"generation {generation:04d}",
                                                        replace_all=True))
            attempted.add(new)
            task = asyncio.ensure_future(call)
            # the last round kills as soon as the call has begun: its request (MiBs) cannot even
            # have been sent whole yet, so the kill lands mid-call by construction; the others
            # kill after a random delay (whether the call is over by then is the scheduler's luck)
            last = generation == ROUNDS
            await asyncio.sleep(0 if last else rng.uniform(0, 0.15))
            if rng.random() < 0.5:
                place.far_kill(connection.ready["pid"])
            else:
                transport = connection.transport
                assert isinstance(transport, ProcessTransport)
                transport.process.kill()
            try:
                await task
            except FsError as exc:
                failed += 1
                assert exc.code == "FS_IO_ERROR", exc
                assert "; the file is unchanged or completely written (read it to see which)" in str(exc)
            else:
                assert not last, "a call killed as it began succeeded"
        finally:
            await fs.aclose()
        with open(path, encoding="utf-8") as handle:
            now = handle.read()
        # a mutation the far side had begun when its channel died finishes there, maybe a moment
        # after this side heard the channel end: the file is then a whole later version, never torn
        assert now in attempted, f"round {generation}: not a whole file any round wrote ({len(now)} bytes)"
        litter = [n for n in os.listdir(place.here) if n != "big.txt"]
        assert all(n.endswith(".dsh-fs.tmp") for n in litter), litter  # a killed writer's own temp names only
    assert failed > 0  # some kills did land mid-call (the last round's at least)


_EDITOR = textwrap.dedent("""
    import asyncio, sys
    from dsh_fs.fs.errors import FsError
    from dsh_fs.fs.types import EditIntent, EditRequest
    from dsh_fs.fs_channel import ChannelFileSystem, CommandChannel, channel_for_url

    kind, where, python, tag, count = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])

    async def main():
        if kind == "subprocess":
            fs = ChannelFileSystem(CommandChannel([], identity="command://local"), root=where, python=python)
        else:
            scheme, location = where.split("://", 1)
            named = channel_for_url(scheme, location)
            fs = ChannelFileSystem(named.channel, root=named.root)
        async with fs:
            for n in range(count):
                while True:
                    target = await fs.resolve("shared.txt")
                    info = await fs.stat(target)
                    try:
                        await fs.edit_text(target, EditRequest(old_string="END\\n", new_string=f"{tag}-{n}\\nEND\\n"),
                                           EditIntent(info.version))
                        break
                    except FsError as exc:
                        if exc.code != "FS_STALE_VERSION":
                            raise
        print("done", tag)

    asyncio.run(main())
""")


@pytest.mark.parametrize("kind", ["subprocess", "podman"])
def test_two_near_side_processes_editing_one_far_file_lose_no_update(kind: str, tmp_path: Any,
                                                                     request: pytest.FixtureRequest) -> None:
    if kind == "subprocess":
        here = where = os.path.realpath(os.path.join(str(tmp_path), "ws"))
        os.mkdir(here)
    else:
        box: PodmanBox = request.getfixturevalue("podman_box")
        name = uuid.uuid4().hex[:12]
        here = os.path.join(request.getfixturevalue("box_dir"), name)
        os.mkdir(here)
        where = box.url(f"/ws/{name}")
    with open(os.path.join(here, "shared.txt"), "w", encoding="utf-8") as handle:
        handle.write("START\nEND\n")
    count = 15
    children = [subprocess.Popen([sys.executable, "-c", _EDITOR, kind, where, far_python(), tag, str(count)],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for tag in ("a", "b")]
    for child in children:
        out, err = child.communicate(timeout=600)
        assert child.returncode == 0, err[-2000:]
    with open(os.path.join(here, "shared.txt"), encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    assert lines[0] == "START" and lines[-1] == "END"
    assert sorted(lines[1:-1]) == sorted(f"{tag}-{n}" for tag in "ab" for n in range(count))
    assert [line for line in lines if line.startswith("a-")] == [f"a-{n}" for n in range(count)]  # each in order
