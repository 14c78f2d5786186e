"""The provider contract (``dsh_fs.testing.contract``) for every shipped provider: local disk,
in-memory, S3 on an unversioned bucket and S3 on a versioned bucket (moto's S3 wire protocol
on loopback; skipped with the reason when moto or aiobotocore is missing).

What the contract covers and leaves out is in its module docstring.
"""

from __future__ import annotations

from dsh_fs.testing.contract import ProviderContract
from dsh_fs.testing.fixtures import LocalFixtures, MemoryFixtures, S3Fixtures, S3VersionedFixtures


class TestLocal(LocalFixtures, ProviderContract):
    pass


class TestMemory(MemoryFixtures, ProviderContract):
    pass


class TestS3(S3Fixtures, ProviderContract):
    pass


class TestS3Versioned(S3VersionedFixtures, ProviderContract):
    pass
