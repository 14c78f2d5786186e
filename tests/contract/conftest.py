"""Fixtures of the provider contract runs: the S3 endpoint, the SSH server and the podman box
are shared by the session (each started once, stopped at its end)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from dsh_fs.testing.far_sides import PodmanBox, SshServer
from dsh_fs.testing.fixtures import s3_endpoint  # noqa: F401  (registers the fixture)


@pytest.fixture(scope="session")
def ssh_server() -> Iterator[SshServer]:
    """An ``sshd`` on 127.0.0.1 that logs this user in with a key made for it."""
    with SshServer() as server:
        yield server


@pytest.fixture(scope="session")
def box_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The directory of this machine the podman box sees as ``/ws``."""
    return str(tmp_path_factory.mktemp("box-ws"))


@pytest.fixture(scope="session")
def podman_box(box_dir: str) -> Iterator[PodmanBox]:
    """A podman container (no image, no network, this machine's python3) with ``box_dir`` as ``/ws``."""
    with PodmanBox({box_dir: "/ws"}) as box:
        yield box
