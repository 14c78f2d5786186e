"""Workspaces served over a command channel (``dsh_fs.fs_channel``), for the provider contract
and the channel tests: the storage is a directory of this machine that the far side sees too
(the subprocess channel runs the helper here; an ``sshd`` on loopback logs in here; a container
gets it bind-mounted), so ``put``/``get`` reach the files directly, as another process would.

* ``ChannelWorkspace(directory, make_channel, far_root=…)`` — each ``provider()`` is a new
  ``ChannelFileSystem`` (a new helper process: "another process" of the contract's races).
* ``subprocess_channel()`` — the helper runs here, started by a local interpreter that has no
  dsh-fs installed (everything it runs comes in the bundle).
* ``far_python()`` — that interpreter.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

from ..core.profile import Profile
from ..fs.filesystem import FileSystem
from ..fs_channel import ChannelFileSystem, CommandChannel
from ..fs_channel.channels import Channel
from .workspaces import LocalWorkspace, Workspace

__all__ = ("ChannelWorkspace", "far_python", "subprocess_channel")


def far_python() -> str:
    """A local interpreter without dsh-fs installed: the one this environment was made from
    (``sys._base_executable``), as a far side would have it."""
    return os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)


def subprocess_channel() -> CommandChannel:
    """The subprocess channel: the helper's command runs as a child process of this one."""
    return CommandChannel([], identity="command://local")


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
