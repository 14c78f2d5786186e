"""Fixtures of the provider contract runs (the S3 endpoint is shared by the session; the
channels' far sides are in ``tests/conftest.py``)."""

from dsh_fs.testing.fixtures import s3_endpoint  # noqa: F401  (registers the fixture)
