"""Shared fixtures of the dsh-fs test suite (fixtures only; no tests here).

* Hypothesis runs without its wall-clock checks (no per-example ``deadline``, no ``too_slow``
  health check): a property test must not fail because the machine is busy. Its examples are
  bounded by pytest-timeout like every other test.
* ``anyio_backend`` — async tests run on asyncio (anyio's pytest plugin).
* ``_private_lock_dir`` (session, autouse) — the cross-process lock files (DEVIATIONS A4)
  go to a pytest temporary directory instead of the per-user default, so no test leaves
  files outside tmp dirs.
* ``ws`` — an empty workspace directory (its real path, so display paths are stable).
* ``make_ctx`` — the default deployment (local provider + policy + tools) over ``ws``.
* ``tree`` — a byte-level snapshot of a directory tree (files, modes, inodes, links, dirs),
  to prove that a failed call changed nothing.
* ``memory_fs`` — ``MemoryFs``, the shipped ``MemoryFileSystem`` behind the recording
  wrapper (call log, failure injection, stat sizes): the reference's "fake provider" of
  REFERENCE-SPEC §7.1 and §7.5, itself checked by the provider contract.
* ``ssh_server``, ``box_dir``, ``podman_box`` (session) — the far sides of the channel tests
  (``dsh_fs.testing.far_sides``): an ``sshd`` on 127.0.0.1, a podman container with
  ``box_dir`` as ``/ws``; started on first use, stopped at the end of the session.
"""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

import dsh_fs
from dsh_fs.fs_memory import MemoryFileSystem
from dsh_fs.testing.far_sides import PodmanBox, SshServer
from dsh_fs.testing.recording import RecordingFileSystem
from dsh_fs.testing.snapshot import snapshot

settings.register_profile("dsh-fs", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("dsh-fs")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session", autouse=True)
def _private_lock_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    path = str(tmp_path_factory.mktemp("dsh-fs-locks"))
    previous = os.environ.get("DSH_FS_LOCK_DIR")
    os.environ["DSH_FS_LOCK_DIR"] = path
    try:
        yield path
    finally:
        if previous is None:
            os.environ.pop("DSH_FS_LOCK_DIR", None)
        else:
            os.environ["DSH_FS_LOCK_DIR"] = previous


@pytest.fixture
def ws(tmp_path: Any) -> str:
    """An empty workspace directory, as a real path."""
    path = os.path.realpath(os.path.join(str(tmp_path), "ws"))
    os.mkdir(path)
    return path


@pytest.fixture
def short_tmp() -> Iterator[str]:
    """A private (0700) directory with a short path (``/tmp/dsh-XXXXXXXX``), for Unix sockets:
    a socket's path must fit the 108 bytes of ``sockaddr_un`` however long ``tmp_path`` is."""
    path = tempfile.mkdtemp(prefix="dsh-", dir="/tmp")
    try:
        yield os.path.realpath(path)
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def make_ctx(ws: str) -> Callable[..., dsh_fs.Context]:
    """``make_ctx(profile="default", policy=True, cwd=ws, root=ws, **tool_config)`` → a fresh
    deployment confined to the workspace (``root=None``: the whole disk, as the reference)."""

    def build(*, profile: str = "default", policy: bool = True, cwd: str | None = None, root: str | None = ws,
              **config: Any) -> dsh_fs.Context:
        return dsh_fs.create_context(cwd=cwd if cwd is not None else ws, root=root, profile=profile, policy=policy,
                                     **config)

    return build


@pytest.fixture
def tree() -> Callable[[str], dict[str, tuple[Any, ...]]]:
    """``tree(root)`` → ``dsh_fs.testing.snapshot.snapshot(root, dir_times=False)``.

    Two equal snapshots mean no byte, mode, owner, inode or directory entry changed.
    """
    return functools.partial(snapshot, dir_times=False)


class MemoryFs(RecordingFileSystem):
    """The tool tests' fake provider (REFERENCE-SPEC §7.1, §7.5): a ``MemoryFileSystem`` (the
    shipped in-memory provider, checked by the provider contract) behind the recording
    wrapper (``dsh_fs.testing.recording``: ``calls``, ``count``, ``failures``, ``sizes``).

    Loads as a plugin: ``ctx.plugin(MemoryFs, cwd="/abs", files={"/abs/a.txt": "…"},
    dirs=("/abs/sub",))`` — absolute paths below the root ``/``; ``cwd`` exists as a directory.
    """

    name = "fs-memory-fake"

    def __init__(self, *, profile: Any = None, cwd: str = "/abs", files: dict[str, str] | None = None,
                 dirs: tuple[str, ...] = ()) -> None:
        super().__init__(MemoryFileSystem(files, cwd=cwd, profile=profile))
        self.memory: MemoryFileSystem = self.inner  # type: ignore[assignment]
        for directory in (cwd, *dirs):
            self.memory.mkdir(directory)

    def put(self, path: str, text: str) -> str:
        """Create or replace a file behind the tools' back; returns its new version."""
        return self.memory.put(path, text)

    def text(self, path: str) -> str | None:
        """The stored file at the absolute ``path`` as UTF-8 text, or ``None``."""
        data = self.memory.get(path)
        return None if data is None else data.decode("utf-8")


@pytest.fixture
def memory_fs() -> type[MemoryFs]:
    """The ``MemoryFs`` class: ``ctx.plugin(memory_fs, files={"/abs/a.txt": "..."})``."""
    return MemoryFs


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
