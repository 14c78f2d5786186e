"""The provider contract (``dsh_fs.testing.contract``) over the subprocess channel: every
primitive runs in the helper, a child process started by an interpreter without dsh-fs
(everything it runs came in the bundle), on a temporary directory (DEVIATIONS C1)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator

import pytest

from dsh_fs.testing.channels import ChannelWorkspace, far_python, subprocess_channel
from dsh_fs.testing.contract import IdenticalRewriteContract, ImplementedReadWindowContract, ProviderContract
from dsh_fs.testing.workspaces import Workspace


class TestChannelSubprocess(ProviderContract, IdenticalRewriteContract, ImplementedReadWindowContract):
    @pytest.fixture
    async def workspace(self, tmp_path: os.PathLike[str]) -> AsyncIterator[Workspace]:
        directory = os.path.join(os.fspath(tmp_path), "ws")
        os.mkdir(directory)
        ws = ChannelWorkspace(directory, subprocess_channel, python=far_python(),
                              lock_dir=os.path.join(os.fspath(tmp_path), "locks"))
        yield ws
        await ws.aclose()
