"""pytest fixtures for provider tests: an S3 endpoint and ready-made ``workspace`` mixins.

Import what a ``conftest.py`` needs (importing a fixture registers it)::

    from dsh_fs.testing.fixtures import s3_endpoint  # noqa: F401

* ``s3_endpoint`` (session): ``$DSH_FS_S3_ENDPOINT`` when set (``scripts/moto-server.sh``
  starts one to share across runs), else a serialized moto server on a free loopback port,
  stopped at the end of the session (what ``.ci/run`` uses). Skips with the reason when moto
  or aiobotocore is missing.
* ``LocalFixtures``, ``LocalTwoRootFixtures`` (one of two roots), ``MemoryFixtures``, ``S3Fixtures``, ``S3TwoPrefixFixtures`` (one of two prefixes), ``S3VersionedFixtures``: classes
  with a ``workspace`` fixture, to mix into a ``ProviderContract`` subclass, with the optional
  mixins each provider's capabilities call for: ``IdenticalRewriteContract`` for all but an
  unversioned bucket (whose version, the ETag, is a content hash), and
  ``ImplementedReadWindowContract`` for the local disk (the one provider with its own
  ``read_window``); ``tests/contract/test_contract.py`` composes them.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator

import pytest

from .moto_server import ENDPOINT_ENV, MotoServer, moto_available
from .workspaces import (LocalWorkspace, MemoryWorkspace, S3TwoPrefixWorkspace, S3Workspace, TwoRootWorkspace,
                         Workspace)

__all__ = ("LocalFixtures", "LocalTwoRootFixtures", "MemoryFixtures", "S3Fixtures", "S3VersionedFixtures", "s3_endpoint")

SKIP_REASON = "moto[server] and aiobotocore are needed for the S3 tests (pip install 'moto[server]' aiobotocore)"


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    """The URL of an S3 endpoint for this test session (see the module docstring)."""
    configured = os.environ.get(ENDPOINT_ENV)
    if configured:
        yield configured
        return
    if not moto_available():
        pytest.skip(SKIP_REASON)
    with MotoServer() as server:
        assert server.endpoint_url is not None
        yield server.endpoint_url


class LocalFixtures:
    """``workspace``: an empty temporary directory served by ``LocalFileSystem``."""

    @pytest.fixture
    async def workspace(self, tmp_path: os.PathLike[str]) -> AsyncIterator[Workspace]:
        directory = os.path.join(os.fspath(tmp_path), "ws")
        os.mkdir(directory)
        ws = LocalWorkspace(directory, lock_dir=os.path.join(os.fspath(tmp_path), "locks"))
        yield ws
        await ws.aclose()


class LocalTwoRootFixtures:
    """``workspace``: an empty temporary directory that is one of the two containment roots of
    a ``LocalFileSystem`` (DEVIATIONS D28), parametrized: the first root (``a``), the second (``b``)."""

    @pytest.fixture(params=[True, False], ids=["in-a", "in-b"])
    async def workspace(self, tmp_path: os.PathLike[str], request: pytest.FixtureRequest) -> AsyncIterator[Workspace]:
        directory, peer = (os.path.join(os.fspath(tmp_path), name) for name in ("ws", "peer"))
        os.mkdir(directory)
        os.mkdir(peer)
        ws = TwoRootWorkspace(directory, peer, first=request.param, lock_dir=os.path.join(os.fspath(tmp_path), "locks"))
        yield ws
        await ws.aclose()
        assert os.listdir(peer) == []  # nothing a test did in the workspace reached the other root


class MemoryFixtures:
    """``workspace``: an empty ``MemoryFileSystem``."""

    @pytest.fixture
    async def workspace(self) -> AsyncIterator[Workspace]:
        ws = MemoryWorkspace()
        yield ws
        await ws.aclose()


class S3Fixtures:
    """``workspace``: a fresh unversioned bucket on ``s3_endpoint``, prefix ``ws/``."""

    versioned = False

    @pytest.fixture
    async def workspace(self, s3_endpoint: str) -> AsyncIterator[Workspace]:
        ws = await S3Workspace(endpoint_url=s3_endpoint, versioned=self.versioned).create()
        yield ws
        await ws.aclose()


class S3TwoPrefixFixtures:
    """``workspace``: a bucket prefix that is one of the two roots of an ``S3FileSystem``
    (DEVIATIONS D28), parametrized: the first root with the other in the same bucket
    (``in-a``), the second root with the other in a bucket of its own (``in-b-two-buckets``)."""

    @pytest.fixture(params=[True, False], ids=["in-a", "in-b-two-buckets"])
    async def workspace(self, s3_endpoint: str, request: pytest.FixtureRequest) -> AsyncIterator[Workspace]:
        first = request.param
        ws = await S3TwoPrefixWorkspace(endpoint_url=s3_endpoint, first=first, other_bucket=not first).create()
        yield ws
        assert await ws.peer.files() == {}  # nothing a test did in the workspace reached the other root
        await ws.aclose()


class S3VersionedFixtures(S3Fixtures):
    """``workspace``: a fresh bucket with versioning enabled."""

    versioned = True
