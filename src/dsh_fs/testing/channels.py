"""Workspaces served over a command channel (``dsh_fs.fs_channel``), for the provider contract
and the channel tests: the storage is a directory of this machine that the far side sees too
(the subprocess channel runs the helper here; an ``sshd`` on loopback logs in here; a container
gets it bind-mounted), so ``put``/``get`` reach the files directly, as another process would.

* ``ChannelWorkspace(directory, make_channel, far_root=…)`` — each ``provider()`` is a new
  ``ChannelFileSystem`` (a new helper process: "another process" of the contract's races).
* ``subprocess_channel()`` — the helper runs here, started by a local interpreter that has no
  dsh-fs installed (everything it runs comes in the bundle).
* ``far_python()`` — that interpreter.
* ``LoopbackChannel`` — the far side in this process: the helper's request handling without
  a process (fast tests, mutation runs).
* ``exec_channel()`` — an exec channel (``fs_channel.execs``) whose commands run here, one
  process per exec (``run_here``).
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from ..core.profile import Profile
from ..fs.filesystem import FileSystem
from ..fs_channel import ChannelFileSystem, CommandChannel, ExecChannel
from ..fs_channel.channels import Channel, Transport
from ..fs_channel.wire import FrameReader
from .workspaces import LocalWorkspace, Workspace

__all__ = ("ChannelWorkspace", "LoopbackChannel", "LoopbackTransport", "exec_channel", "far_python", "run_here",
           "subprocess_channel")


def far_python() -> str:
    """A local interpreter without dsh-fs installed: the one this environment was made from
    (``sys._base_executable``), as a far side would have it."""
    return os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)


def subprocess_channel() -> CommandChannel:
    """The subprocess channel: the helper's command runs as a child process of this one."""
    return CommandChannel([], identity="command://local")


async def run_here(argv: Sequence[str], stdin: bytes) -> bytes:
    """An exec channel's callable that runs the command on this machine (``ExecChannel``)."""
    process = await asyncio.create_subprocess_exec(*argv, stdin=asyncio.subprocess.PIPE,
                                                   stdout=asyncio.subprocess.PIPE)
    out, _ = await process.communicate(stdin)
    return out


class LoopbackTransport(Transport):
    """The far side in this process and event loop: the helper's own request handling
    (``far_helper.serve.Helper`` over a ``LocalFileSystem``) fed by what the near side sends,
    without a bootstrap, a bundle or a process — the protocol, the near side and the helper
    exactly, in a fraction of the time (for fast tests and mutation runs)."""

    def __init__(self) -> None:
        self._incoming: asyncio.Queue[bytes] = asyncio.Queue()
        self._frames = FrameReader()
        self._helper: Any = None
        self._ended = False
        self.sent = 0
        """bytes the near side sent"""

    async def _to_near(self, frame: bytes) -> None:
        if not self._ended:
            self._incoming.put_nowait(frame)

    async def send(self, data: bytes) -> None:
        if self._ended:
            raise ConnectionResetError("the loopback far side ended")
        self.sent += len(data)
        for message, body in self._frames.feed(data):
            if self._helper is not None:
                self._helper.dispatch(message, body)
            elif "open" in message:
                from ..far_helper.serve import start

                self._helper = await start(message, self._to_near)
                if self._helper is None:
                    await self.aclose()

    async def receive(self) -> bytes:
        return await self._incoming.get()

    @property
    def exit_status(self) -> int | None:
        return 0 if self._ended else None

    async def reason(self) -> str:
        return "the loopback far side ended"

    async def aclose(self) -> None:
        if self._ended:
            return
        self._ended = True
        if self._helper is not None:
            await self._helper.stop()
        self._incoming.put_nowait(b"")


class LoopbackChannel(Channel):
    """A channel to a far side in this process (``LoopbackTransport``)."""

    def __init__(self, identity: str = "loopback://here") -> None:
        super().__init__(identity)
        self.transports: list[LoopbackTransport] = []

    async def start(self, command: Sequence[str]) -> Transport:
        transport = LoopbackTransport()
        self.transports.append(transport)
        return transport


def exec_channel() -> ExecChannel:
    """An exec channel whose commands run on this machine, one process per exec (``run_here``)."""
    return ExecChannel(run_here, identity="exec://local")


class ChannelWorkspace(Workspace):
    """A directory of this machine served by ``ChannelFileSystem`` over a channel.

    :param directory: an existing empty directory (the storage; ``put``/``get`` reach it here)
    :param make_channel: a new channel per provider
    :param far_root: the directory as the far side names it (default: its real path here),
        the providers' root and the workspace's display root
    :param python: the far side's interpreter
    :param options: more ``ChannelFileSystem`` keywords for every provider
    """

    name = "channel"

    def __init__(self, directory: str, make_channel: Callable[[], Channel], *, far_root: str | None = None,
                 python: str = "python3", **options: Any) -> None:
        self.storage = LocalWorkspace(directory)
        self.root = far_root or self.storage.root
        self.make_channel = make_channel
        self.python = python
        self.options = options
        self._providers: list[FileSystem] = []

    async def provider(self, *, profile: Profile | str | None = None, **options: Any) -> FileSystem:
        fs = ChannelFileSystem(self.make_channel(), root=self.root, profile=profile, python=self.python,
                               **{**self.options, **options})
        self._providers.append(fs)
        return fs

    async def put(self, rel: str, data: bytes) -> None:
        await self.storage.put(rel, data)

    async def get(self, rel: str) -> bytes | None:
        return await self.storage.get(rel)

    async def delete(self, rel: str) -> None:
        await self.storage.delete(rel)

    async def mkdir(self, rel: str) -> None:
        await self.storage.mkdir(rel)

    async def files(self) -> dict[str, bytes]:
        return await self.storage.files()

    async def dirs(self) -> list[str]:
        return await self.storage.dirs()

    async def aclose(self) -> None:
        providers, self._providers = self._providers, []
        for fs in providers:
            await fs.aclose()
