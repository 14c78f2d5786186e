"""The provider contract (``dsh_fs.testing.contract``) for every shipped provider: local disk,
in-memory, the tool tests' recording fake (``RecordingFileSystem`` over ``MemoryFileSystem``,
see ``tests/conftest.py``), S3 on an unversioned bucket and S3 on a versioned bucket (moto's
S3 wire protocol on loopback; skipped with the reason when moto or aiobotocore is missing).

``TestLocalTwoRoots`` runs the local cases in each of two roots (D28), ``TestS3TwoPrefixes`` the S3
cases in each of two prefixes.
What the contract covers and leaves out is in its package docstring; each class adds the optional
mixins its provider's capabilities call for (none skips inside a test).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from dsh_fs.testing.contract import (IdenticalRewriteContract, ImplementedReadWindowContract, ProviderContract,
                                    WriteBytesContract)
from dsh_fs.testing.fixtures import (LocalFixtures, LocalTwoRootFixtures, MemoryFixtures, S3Fixtures,
                                    S3TwoPrefixFixtures, S3VersionedFixtures)
from dsh_fs.testing.recording import RecordingWorkspace
from dsh_fs.testing.workspaces import MemoryWorkspace, Workspace


class TestLocal(LocalFixtures, ProviderContract, IdenticalRewriteContract, ImplementedReadWindowContract,
                WriteBytesContract):
    pass


class TestLocalTwoRoots(LocalTwoRootFixtures, ProviderContract, IdenticalRewriteContract, ImplementedReadWindowContract,
                        WriteBytesContract):
    """The workspace as the first and as the second of two containment roots (DEVIATIONS D28)."""


class TestMemory(MemoryFixtures, ProviderContract, IdenticalRewriteContract, WriteBytesContract):
    pass


class TestRecordingMemory(ProviderContract, IdenticalRewriteContract, WriteBytesContract):
    """The fake the tool tests use is a provider like any other: the wrapper is transparent."""

    @pytest.fixture
    async def workspace(self) -> AsyncIterator[Workspace]:
        ws = RecordingWorkspace(MemoryWorkspace())
        yield ws
        await ws.aclose()
        assert any(p.calls for p in ws.providers)  # the calls went through the wrapper


class TestS3(S3Fixtures, ProviderContract, WriteBytesContract):
    """An unversioned bucket: the version is the ETag, a content hash; no ``read_window``."""


class TestS3TwoPrefixes(S3TwoPrefixFixtures, ProviderContract, WriteBytesContract):
    """The workspace as one of two prefixes of one provider (DEVIATIONS D28): the first, with
    the other in the same bucket; the second, with the other in a bucket of its own."""


class TestS3Versioned(S3VersionedFixtures, ProviderContract, IdenticalRewriteContract, WriteBytesContract):
    pass
