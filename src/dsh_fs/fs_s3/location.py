"""Where a workspace lives in S3, and how paths become keys. Pure: no I/O.

* ``S3Location(bucket, prefix)``: the prefix is normalized to ``""`` or ``"a/b/"`` (no
  leading slash, one trailing slash), so an object key is always ``prefix + rel``.
* ``parse_url("s3://bucket/a/b")`` → ``S3Location("bucket", "a/b/")``.
* A target key is ``s3://<bucket>/<object key>``; the workspace root's is
  ``s3://<bucket>/<prefix>`` (ending in ``/`` unless the prefix is empty).
"""

from __future__ import annotations

import re

from dataclasses import dataclass
from urllib.parse import unquote

__all__ = ("S3Location", "normalize_prefix", "parse_url")


def normalize_prefix(prefix: str) -> str:
    """``""`` or ``"a/b/"``: empty segments dropped, one trailing slash.

    :raises ValueError: for ``.`` or ``..`` segments (they could never be addressed)
    """
    parts = [p for p in prefix.split("/") if p]
    if any(p in (".", "..") for p in parts):
        raise ValueError(f"S3 prefix must not contain '.' or '..' segments: {prefix!r}")
    return "".join(p + "/" for p in parts)


@dataclass(frozen=True, slots=True)
class S3Location:
    """A bucket and a key prefix (the workspace)."""

    bucket: str
    prefix: str = ""
    """normalized: ``""`` or ends with ``/``"""

    def __post_init__(self) -> None:
        if not self.bucket or "/" in self.bucket:
            raise ValueError(f"invalid S3 bucket name: {self.bucket!r}")
        object.__setattr__(self, "prefix", normalize_prefix(self.prefix))

    @property
    def url(self) -> str:
        """``s3://bucket/prefix/`` (the root's target key)."""
        return f"s3://{self.bucket}/{self.prefix}"

    def object_key(self, rel: str) -> str:
        """The object key of the path ``rel`` below the workspace root."""
        return self.prefix + rel

    def dir_prefix(self, rel: str) -> str:
        """The key prefix of the children of ``rel`` (``prefix`` itself for the root)."""
        return self.prefix + rel + "/" if rel else self.prefix

    def target_key(self, rel: str) -> str:
        """``s3://bucket/<object key>``."""
        return f"s3://{self.bucket}/{self.prefix}{rel}"

    def rel_of_target_key(self, key: str) -> str | None:
        """The inverse of :meth:`target_key`, or ``None`` for a key outside this workspace."""
        head = self.url
        return key[len(head) :] if key.startswith(head) else None


def parse_url(url: str) -> S3Location:
    """Parse ``s3://bucket[/prefix]`` (percent-escapes in the prefix are decoded).

    :raises ValueError: when ``url`` is not an ``s3://`` URL with a bucket
    """
    scheme = "s3://"
    if not isinstance(url, str) or not url.startswith(scheme):
        raise ValueError(f"expected an s3://bucket/prefix URL, not {url!r}")
    rest = url[len(scheme) :]
    bucket, _, prefix = rest.partition("/")
    if not bucket:
        raise ValueError(f"expected an s3://bucket/prefix URL, not {url!r}")
    if not _BUCKET.fullmatch(bucket):
        raise ValueError(f"S3 bucket name {bucket!r}: only lowercase letters, digits, dots and hyphens")
    key_prefix = unquote(prefix)
    if _CONTROL.search(key_prefix):
        raise ValueError(f"S3 prefix {key_prefix!r}: control characters are not allowed")
    return S3Location(bucket, key_prefix)


_BUCKET = re.compile(r"[a-z0-9][a-z0-9.-]*")
"""the characters of an S3 bucket name (its length and other rules are the service's to check)"""
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
