"""Fixtures of the S3 provider tests: one moto S3 server for the session (or
``$DSH_FS_S3_ENDPOINT``), a fresh bucket per test, asyncio as the anyio backend."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from dsh_fs.testing.fixtures import s3_endpoint  # noqa: F401  (registers the fixture)
from dsh_fs.testing.workspaces import S3Workspace


@pytest.fixture
async def bucket(s3_endpoint: str) -> AsyncIterator[S3Workspace]:  # noqa: F811
    """A fresh unversioned bucket; the workspace is its prefix ``ws/``."""
    ws = await S3Workspace(endpoint_url=s3_endpoint).create()
    yield ws
    await ws.aclose()


@pytest.fixture
async def versioned_bucket(s3_endpoint: str) -> AsyncIterator[S3Workspace]:  # noqa: F811
    """A fresh bucket with versioning enabled."""
    ws = await S3Workspace(endpoint_url=s3_endpoint, versioned=True).create()
    yield ws
    await ws.aclose()
