"""The provider contract (``dsh_fs.testing.contract``) on ``ChannelFileSystem`` over every
channel that runs here (DEVIATIONS C1): the subprocess channel (the helper is a child process
started by an interpreter without dsh-fs installed: everything it runs came in the bundle),
SSH to an ``sshd`` on 127.0.0.1 started by the session, ``podman exec -i`` into a podman
container, and an exec channel (one command per exchange, the helper kept by the relay's hub). Each provider is a new helper (the contract's "other process"); the workspace is a
directory of this machine the far side sees (the box has it bind-mounted)."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator

import pytest

from dsh_fs.fs_channel import channel_for_url
from dsh_fs.testing.channels import ChannelWorkspace, LoopbackChannel, exec_channel, far_python, subprocess_channel
from dsh_fs.testing.contract import IdenticalRewriteContract, ImplementedReadWindowContract, ProviderContract
from dsh_fs.testing.far_sides import PodmanBox, SshServer
from dsh_fs.testing.workspaces import Workspace


class _Channels(ProviderContract, IdenticalRewriteContract, ImplementedReadWindowContract):
    """Every mixin: the far side is the local provider (its own ``read_window``, A5 versions)."""


class TestChannelLoopback(_Channels):
    """The far side in this process (``LoopbackChannel``): the protocol, the near side and the
    helper's request handling without processes (what the mutation runs use)."""

    @pytest.fixture
    async def workspace(self, tmp_path: os.PathLike[str]) -> AsyncIterator[Workspace]:
        directory = os.path.join(os.fspath(tmp_path), "ws")
        os.mkdir(directory)
        ws = ChannelWorkspace(directory, LoopbackChannel, lock_dir=os.path.join(os.fspath(tmp_path), "locks"))
        yield ws
        await ws.aclose()


class TestChannelSubprocess(_Channels):
    @pytest.fixture
    async def workspace(self, tmp_path: os.PathLike[str]) -> AsyncIterator[Workspace]:
        directory = os.path.join(os.fspath(tmp_path), "ws")
        os.mkdir(directory)
        ws = ChannelWorkspace(directory, subprocess_channel, python=far_python(),
                              lock_dir=os.path.join(os.fspath(tmp_path), "locks"))
        yield ws
        await ws.aclose()


class TestChannelExec(_Channels):
    """An exec channel (``fs_channel.execs``): each exchange is one command run with some stdin,
    its stdout the answer; the helper lives in the relay's hub between them."""

    @pytest.fixture
    async def workspace(self, tmp_path: os.PathLike[str]) -> AsyncIterator[Workspace]:
        directory = os.path.join(os.fspath(tmp_path), "ws")
        os.mkdir(directory)
        ws = ChannelWorkspace(directory, exec_channel, python=far_python(),
                              lock_dir=os.path.join(os.fspath(tmp_path), "locks"))
        yield ws
        await ws.aclose()


class TestChannelSsh(_Channels):
    @pytest.fixture
    async def workspace(self, tmp_path: os.PathLike[str], ssh_server: SshServer) -> AsyncIterator[Workspace]:
        directory = os.path.realpath(os.path.join(os.fspath(tmp_path), "ws"))
        os.mkdir(directory)
        url = ssh_server.url(directory)

        def channel():  # type: ignore[no-untyped-def]
            return channel_for_url("ssh", url.split("://", 1)[1], ssh_command=ssh_server.ssh_command).channel

        ws = ChannelWorkspace(directory, channel, lock_dir=os.path.join(os.fspath(tmp_path), "locks"))
        yield ws
        await ws.aclose()


class TestChannelPodman(_Channels):
    @pytest.fixture
    async def workspace(self, box_dir: str, podman_box: PodmanBox) -> AsyncIterator[Workspace]:
        name = uuid.uuid4().hex[:12]
        os.mkdir(os.path.join(box_dir, name))

        def channel():  # type: ignore[no-untyped-def]
            return channel_for_url("podman", f"{podman_box.name}/ws/{name}").channel

        ws = ChannelWorkspace(os.path.join(box_dir, name), channel, far_root=f"/ws/{name}")
        yield ws
        await ws.aclose()
