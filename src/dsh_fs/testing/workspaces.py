"""Workspaces: a provider under test plus direct access to the storage behind it.

A ``Workspace`` builds providers over one empty workspace and acts as "another process":
``put``/``get``/``delete``/``mkdir`` change or inspect the storage without going through the
provider (never through its locks). The contract suite (``dsh_fs.testing.contract``) and
``dsh-fs replay --provider s3`` use them. No pytest here: importable by any program.

* ``LocalWorkspace(directory)`` — a real directory and ``LocalFileSystem``.
* ``TwoRootWorkspace(directory, peer, first=…)`` — the same, one of two containment roots.
* ``MemoryWorkspace()`` — a ``MemoryFileSystem``.
* ``S3Workspace(endpoint_url=…)`` — a fresh bucket (optionally versioned) and ``S3FileSystem``;
  ``S3TwoPrefixWorkspace`` — one of two prefixes of one ``S3FileSystem`` (D28).

Paths given to these methods are relative to the workspace root, ``/``-separated.
"""

from __future__ import annotations

import abc
import os
import shutil
import uuid
from collections.abc import Mapping
from typing import Any

from ..core.profile import Profile
from ..fs.filesystem import FileSystem
from ..fs.rooted import display_of

__all__ = ("LocalWorkspace", "MOTO_CLIENT_OPTIONS", "MemoryWorkspace", "S3TwoPrefixWorkspace", "S3Workspace", "TwoRootWorkspace",
           "Workspace")

MOTO_CLIENT_OPTIONS: Mapping[str, Any] = {
    "region_name": "us-east-1",
    "aws_access_key_id": "testing",
    "aws_secret_access_key": "testing",
}
"""credentials for a moto endpoint (moto accepts any)"""


class Workspace(abc.ABC):
    """One empty workspace and the providers that serve it."""

    name: str = "workspace"
    """shown in test ids and messages"""
    root: str = "/"
    """the display path of the workspace root (what ``resolve(".")`` returns)"""

    def path(self, rel: str) -> str:
        """The absolute display path of ``rel``."""
        return display_of(self.root, rel.strip("/"))

    @abc.abstractmethod
    async def provider(self, *, profile: Profile | str | None = None, **options: Any) -> FileSystem:
        """A provider over this workspace (each call may build a new one, like a new process)."""

    @abc.abstractmethod
    async def put(self, rel: str, data: bytes) -> None:
        """Write ``data`` at ``rel`` as another process would (parents created)."""

    @abc.abstractmethod
    async def get(self, rel: str) -> bytes | None:
        """The stored bytes at ``rel``, or ``None``."""

    @abc.abstractmethod
    async def delete(self, rel: str) -> None:
        """Remove the file at ``rel`` (or the directory and everything below it)."""

    @abc.abstractmethod
    async def mkdir(self, rel: str) -> None:
        """Make ``rel`` an (empty) directory."""

    @abc.abstractmethod
    async def files(self) -> dict[str, bytes]:
        """Every file in the workspace, relative path → bytes, sorted by path."""

    async def dirs(self) -> list[str]:
        """Every directory below the root (informative; default: parents of files)."""
        found: set[str] = set()
        for rel in await self.files():
            parts = rel.split("/")[:-1]
            for i in range(1, len(parts) + 1):
                found.add("/".join(parts[:i]))
        return sorted(found)

    async def aclose(self) -> None:
        """Release providers and storage (idempotent)."""


class LocalWorkspace(Workspace):
    """A directory on disk served by ``LocalFileSystem``.

    :param directory: an existing empty directory (its realpath becomes the root)
    :param lock_dir: where the local provider keeps its cross-process lock files (outside
        the workspace); default: a sibling ``<directory>.locks``
    """

    name = "local"

    def __init__(self, directory: str, *, lock_dir: str | None = None) -> None:
        self.root = os.path.realpath(directory)
        self.lock_dir = lock_dir or self.root + ".locks"

    def _abs(self, rel: str) -> str:
        return os.path.join(self.root, *rel.strip("/").split("/"))

    async def provider(self, *, profile: Profile | str | None = None, **options: Any) -> FileSystem:
        from ..fs_local import LocalFileSystem

        options.setdefault("lock_dir", self.lock_dir)
        return LocalFileSystem(cwd=self.root, profile=profile, **options)

    async def put(self, rel: str, data: bytes) -> None:
        path = self._abs(rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        before = os.stat(path) if os.path.exists(path) else None
        with open(path, "r+b" if before is not None else "wb") as handle:  # in place, as an editor may
            handle.truncate(0)
            handle.write(data)
        after = os.stat(path)
        if before is not None and (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns):
            os.utime(path, ns=(after.st_atime_ns, after.st_mtime_ns + 1_000_000))

    async def get(self, rel: str) -> bytes | None:
        try:
            with open(self._abs(rel), "rb") as handle:
                return handle.read()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None

    async def delete(self, rel: str) -> None:
        path = self._abs(rel)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        elif os.path.lexists(path):
            os.unlink(path)

    async def mkdir(self, rel: str) -> None:
        os.makedirs(self._abs(rel), exist_ok=True)

    async def files(self) -> dict[str, bytes]:
        out: dict[str, bytes] = {}
        for base, _dirs, names in os.walk(self.root):
            for name in names:
                path = os.path.join(base, name)
                if os.path.isfile(path) and not os.path.islink(path):
                    with open(path, "rb") as handle:
                        out[os.path.relpath(path, self.root).replace(os.sep, "/")] = handle.read()
        return dict(sorted(out.items()))

    async def dirs(self) -> list[str]:
        found = []
        for base, dirnames, _names in os.walk(self.root):
            found += [os.path.relpath(os.path.join(base, d), self.root).replace(os.sep, "/") for d in dirnames]
        return sorted(found)


class TwoRootWorkspace(LocalWorkspace):
    """A directory on disk served by a ``LocalFileSystem`` with two containment roots
    (DEVIATIONS D28): the workspace is one of them, the other an empty sibling ``peer``.

    :param directory: an existing empty directory (the workspace; its realpath is the root)
    :param peer: another existing directory, outside ``directory`` (the other root)
    :param first: the workspace is the first root (else the second)
    :param lock_dir: as ``LocalWorkspace``
    """

    def __init__(self, directory: str, peer: str, *, first: bool, lock_dir: str | None = None) -> None:
        super().__init__(directory, lock_dir=lock_dir)
        self.peer = os.path.realpath(peer)
        self.roots = [self.root, self.peer] if first else [self.peer, self.root]
        self.name = "local-roots-" + ("a" if first else "b")

    async def provider(self, *, profile: Profile | str | None = None, **options: Any) -> FileSystem:
        options.setdefault("roots", self.roots)
        return await super().provider(profile=profile, **options)


class MemoryWorkspace(Workspace):
    """A ``MemoryFileSystem``; every provider shares its files.

    :param root: the display root (default ``/``)
    """

    name = "memory"

    def __init__(self, *, root: str = "/") -> None:
        from ..fs_memory import MemoryFileSystem

        self.store = MemoryFileSystem(root=root)
        self.root = self.store.root

    async def provider(self, *, profile: Profile | str | None = None, **options: Any) -> FileSystem:
        unknown = sorted(set(options) - {"write_max_size"})
        if unknown:
            raise TypeError(f"MemoryWorkspace.provider takes only write_max_size, got {unknown}")
        return self.store.with_profile(profile, **options)

    async def put(self, rel: str, data: bytes) -> None:
        self.store.put(rel, data)

    async def get(self, rel: str) -> bytes | None:
        return self.store.get(rel)

    async def delete(self, rel: str) -> None:
        self.store.remove(rel)

    async def mkdir(self, rel: str) -> None:
        self.store.mkdir(rel)

    async def files(self) -> dict[str, bytes]:
        return self.store.snapshot()


class S3Workspace(Workspace):
    """A fresh bucket on an S3 endpoint (moto in tests) served by ``S3FileSystem``.

    Storage access goes through a separate client, so the providers' locks are bypassed as
    another machine's would be. Directories are made as ``<dir>/`` marker objects.

    :param endpoint_url: the S3 endpoint
    :param bucket: the bucket to create (default: a random ``dsh-fs-…`` name)
    :param prefix: the workspace's key prefix inside the bucket
    :param root: the providers' display root
    :param versioned: turn on bucket versioning (versions then carry the VersionId, and
        rewriting identical bytes is a change)
    :param client_options: client keywords (default: ``MOTO_CLIENT_OPTIONS``)
    """

    name = "s3"

    def __init__(
        self,
        *,
        endpoint_url: str,
        bucket: str | None = None,
        prefix: str = "ws/",
        root: str = "/",
        versioned: bool = False,
        client_options: Mapping[str, Any] | None = None,
    ) -> None:
        from ..fs.rooted import check_root
        from ..fs_s3.location import S3Location
        from ..fs_s3.store import ObjectStore

        self.endpoint_url = endpoint_url
        self.location = S3Location(bucket or f"dsh-fs-{uuid.uuid4().hex[:12]}", prefix)
        self.root = check_root(root)
        self.versioned = versioned
        self.client_options = dict(client_options or MOTO_CLIENT_OPTIONS)
        self.admin = ObjectStore(self.location.bucket, endpoint_url=endpoint_url, client_options=self.client_options)
        self._providers: list[Any] = []
        self._ready = False

    async def _client(self) -> Any:
        client = await self.admin.client()
        if not self._ready:
            await client.create_bucket(Bucket=self.location.bucket)
            if self.versioned:
                await client.put_bucket_versioning(
                    Bucket=self.location.bucket, VersioningConfiguration={"Status": "Enabled"}
                )
            self._ready = True
        return client

    async def create(self) -> "S3Workspace":
        """Create the bucket now (otherwise on first use); returns ``self``."""
        await self._client()
        return self

    async def provider(self, *, profile: Profile | str | None = None, **options: Any) -> FileSystem:
        from ..fs_s3 import S3FileSystem

        await self._client()
        options.setdefault("client_options", self.client_options)
        options.setdefault("root", self.root)
        fs = S3FileSystem(
            bucket=self.location.bucket,
            prefix=self.location.prefix,
            endpoint_url=self.endpoint_url,
            profile=profile,
            **options,
        )
        self._providers.append(fs)
        return fs

    async def put(self, rel: str, data: bytes) -> None:
        client = await self._client()
        await client.put_object(Bucket=self.location.bucket, Key=self.location.object_key(rel.strip("/")), Body=data)

    async def get(self, rel: str) -> bytes | None:
        await self._client()
        got = await self.admin.get(self.location.object_key(rel.strip("/")))
        return None if got is None else got[1]

    async def _keys(self, prefix: str) -> list[str]:
        client = await self._client()
        keys: list[str] = []
        token: str | None = None
        while True:
            params: dict[str, Any] = {"Bucket": self.location.bucket, "Prefix": prefix}
            if token:
                params["ContinuationToken"] = token
            response = await client.list_objects_v2(**params)
            keys += [item["Key"] for item in response.get("Contents") or ()]
            if not response.get("IsTruncated"):
                return keys
            token = response.get("NextContinuationToken")

    async def delete(self, rel: str) -> None:
        client = await self._client()
        rel = rel.strip("/")
        for key in [self.location.object_key(rel)] + await self._keys(self.location.dir_prefix(rel)):
            await client.delete_object(Bucket=self.location.bucket, Key=key)

    async def mkdir(self, rel: str) -> None:
        client = await self._client()
        await client.put_object(Bucket=self.location.bucket, Key=self.location.dir_prefix(rel.strip("/")), Body=b"")

    async def _objects(self) -> list[str]:
        return [k[len(self.location.prefix) :] for k in await self._keys(self.location.prefix)]

    async def files(self) -> dict[str, bytes]:
        out: dict[str, bytes] = {}
        for rel in await self._objects():
            if rel and not rel.endswith("/"):
                data = await self.get(rel)
                if data is not None:
                    out[rel] = data
        return dict(sorted(out.items()))

    async def dirs(self) -> list[str]:
        found: set[str] = set()
        for rel in await self._objects():
            parts = rel.split("/")[:-1]
            for i in range(1, len(parts) + 1):
                found.add("/".join(parts[:i]))
        return sorted(d for d in found if d)

    async def aclose(self) -> None:
        providers, self._providers = self._providers, []
        for fs in providers:
            await fs.aclose()
        await self.admin.aclose()


class S3TwoPrefixWorkspace(S3Workspace):
    """A bucket prefix served by an ``S3FileSystem`` with two roots (DEVIATIONS D28): the
    workspace is ``team/ws/`` shown as ``/ws``, the other root ``team/peer/`` shown as
    ``/peer``, in the same bucket or another one. Relative paths resolve against ``/ws``.

    :param endpoint_url: the S3 endpoint
    :param first: the workspace is the first root (else the second)
    :param other_bucket: the other root is in a bucket of its own (else the same bucket)
    :param versioned: as ``S3Workspace`` (both buckets)
    """

    def __init__(self, *, endpoint_url: str, first: bool, other_bucket: bool, versioned: bool = False) -> None:
        super().__init__(endpoint_url=endpoint_url, prefix="team/ws/", root="/ws", versioned=versioned)
        self.peer = S3Workspace(endpoint_url=endpoint_url, prefix="team/peer/", root="/peer", versioned=versioned,
                                bucket=None if other_bucket else self.location.bucket)
        """the other root (an ``S3Workspace`` of its own, to look at what reached it)"""
        mine = (self.root, self.location.url)
        theirs = (self.peer.root, self.peer.location.url)
        self.roots = dict([mine, theirs] if first else [theirs, mine])
        """display root → URL, as ``S3FileSystem(roots=…)`` takes them"""
        self.name = "s3-prefixes-" + ("a" if first else "b") + ("-two-buckets" if other_bucket else "")
        self._other_bucket = other_bucket

    async def _client(self) -> Any:
        client = await super()._client()
        if not self._other_bucket:
            self.peer._ready = True  # the same bucket: already made
        await self.peer._client()
        return client

    async def provider(self, *, profile: Profile | str | None = None, **options: Any) -> FileSystem:
        from ..fs_s3 import S3FileSystem

        await self._client()
        options.setdefault("client_options", self.client_options)
        options.setdefault("cwd", self.root)
        fs = S3FileSystem(roots=self.roots, endpoint_url=self.endpoint_url, profile=profile, **options)
        self._providers.append(fs)
        return fs

    async def aclose(self) -> None:
        await super().aclose()
        await self.peer.aclose()
