"""The S3 wire calls the provider makes, over one lazily created aiobotocore client.

One method per request shape, each one round trip (``requests`` counts them): HeadObject,
GetObject (whole, streamed, or its first bytes: ``get_prefix``), PutObject (plain, ``If-None-Match: *`` or ``If-Match``),
multipart upload (the same conditions on CompleteMultipartUpload), DeleteObject (plain or
``If-Match``), ListObjectsV2 (one level, or every key under a prefix: ``list_all``) and
GetBucketVersioning. Failures raise ``S3Failure``; a 404 on HEAD/GET becomes ``None``.

aiobotocore (the ``[s3]`` extra) is imported when the first request is made, so importing
``dsh_fs.fs_s3`` needs nothing beyond dsh-fs itself. Credentials, region and profile come from
the standard AWS chain unless ``client_options`` gives them. aiobotocore runs on asyncio only.

Not here: paths, text rules, intents, locks (``filesystem``).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import datetime
import importlib
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import anyio

from .errors import S3Failure, failure_of

__all__ = ("ObjectMeta", "ObjectStore", "client_config", "has_credentials", "read_chunk")


@dataclass(frozen=True, slots=True)
class ObjectMeta:
    """What a HEAD, GET or PUT tells about one object."""

    etag: str
    """the ETag exactly as the service sent it (quotes included)"""
    version_id: str | None = None
    """the VersionId in a versioned bucket; ``None`` otherwise (and for the ``null`` version)"""
    size: int | None = None
    """content length in bytes (HEAD/GET)"""

    @property
    def token(self) -> str:
        """The provider's version token: the ETag, plus ``@<VersionId>`` when versioned."""
        return self.etag if self.version_id is None else f"{self.etag}@{self.version_id}"


def _meta(response: Mapping[str, Any], size: int | None = None) -> ObjectMeta:
    version = response.get("VersionId")
    return ObjectMeta(
        etag=str(response.get("ETag") or ""),
        version_id=None if version in (None, "", "null") else str(version),
        size=response.get("ContentLength", size),
    )


def _ns(moment: Any) -> int | None:
    """A listing's ``LastModified`` (an aware ``datetime``) in ns since the epoch."""
    if not isinstance(moment, datetime.datetime):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.timezone.utc)
    delta = moment - datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
    return (delta // datetime.timedelta(microseconds=1)) * 1000


def _total_size(content_range: Any, length: Any) -> int:
    """The whole object's size from ``Content-Range: bytes 0-N/TOTAL`` (a service that
    ignored the range answers 200 without one: then ``Content-Length`` is the whole size)."""
    if isinstance(content_range, str) and "/" in content_range:
        total = content_range.rsplit("/", 1)[1].strip()
        if total.isdigit():
            return int(total)
    return int(length or 0)


async def read_chunk(body: Any, size: int) -> bytes:
    """Up to ``size`` bytes of a streaming body (``b""`` at the end).

    :raises S3Failure: when the connection fails mid-body
    """
    try:
        return bytes(await body.read(size))
    except Exception as exc:
        raise failure_of(exc) from exc


_SESSION: Any = None

MISSING_EXTRA = "the S3 provider needs aiobotocore, the s3 extra: pip install '.[s3]' from the dsh-fs checkout"


def require_client_library() -> None:
    """Fail now, not at the first request, when aiobotocore is not installed.

    :raises ImportError: ``MISSING_EXTRA``
    """
    try:
        importlib.import_module("aiobotocore.session")
    except ImportError as exc:
        raise ImportError(MISSING_EXTRA) from exc


def _session() -> Any:
    """One aiobotocore session per process: it caches the service model and the credential
    chain's answer, so later clients are cheap to create."""
    global _SESSION
    if _SESSION is None:
        from aiobotocore.session import get_session

        _SESSION = get_session()
    return _SESSION


async def has_credentials() -> bool:
    """Does the standard AWS credential chain find credentials (environment, shared files,
    SSO, instance metadata …)? Imports aiobotocore; may take a moment (the chain's probes)."""
    return await _session().get_credentials() is not None


def client_config(endpoint_url: str | None, max_pool_connections: int) -> Any:
    """The ``AioConfig`` used for the client (imports aiobotocore).

    Path-style addressing when an endpoint is given (MinIO, Ceph RGW, moto); checksums only
    where an operation requires them, which every S3-compatible service accepts.
    """
    from aiobotocore.config import AioConfig

    return AioConfig(
        s3={"addressing_style": "path"} if endpoint_url else {},
        retries={"max_attempts": 3, "mode": "standard"},
        request_checksum_calculation="when_required",
        response_checksum_validation="when_required",
        max_pool_connections=max_pool_connections,
    )


class ObjectStore:
    """Async S3 requests against one bucket.

    :param bucket: the bucket name
    :param endpoint_url: an S3-compatible endpoint (``None``: AWS)
    :param client_options: extra ``create_client`` keywords (``region_name``,
        ``aws_access_key_id``, ``aws_secret_access_key``, ``aws_session_token``, ``config`` …)
    :param max_pool_connections: HTTP connections kept per event loop
    """

    def __init__(
        self,
        bucket: str,
        *,
        endpoint_url: str | None = None,
        client_options: Mapping[str, Any] | None = None,
        max_pool_connections: int = 32,
    ) -> None:
        self.bucket = bucket
        self.endpoint_url = endpoint_url
        self.client_options = dict(client_options or {})
        self.max_pool_connections = max_pool_connections
        self.requests = 0
        """round trips made so far (every request, including failed ones)"""
        self._clients: dict[asyncio.AbstractEventLoop, tuple[contextlib.AsyncExitStack, Any]] = {}
        self._opening: dict[asyncio.AbstractEventLoop, asyncio.Lock] = {}

    def sibling(self, bucket: str) -> "ObjectStore":
        """A store of ``bucket`` on the same endpoint that shares this store's clients (one
        HTTP client per event loop for both; closing either closes it) and counts its own
        ``requests``: the stores of a provider serving several buckets (DEVIATIONS D28).
        A copy of this object, so a subclass (instrumentation) stays itself. ``bucket`` is this
        store's own bucket: ``self``."""
        if bucket == self.bucket:
            return self
        twin = copy.copy(self)  # shallow: the client dicts are shared
        twin.bucket = bucket
        twin.requests = 0
        return twin

    # -- lifecycle -------------------------------------------------------------------------
    async def client(self) -> Any:
        """The client of the running event loop (created on first use)."""
        loop = asyncio.get_running_loop()
        found = self._clients.get(loop)
        if found is not None:
            return found[1]
        lock = self._opening.setdefault(loop, asyncio.Lock())
        async with lock:
            found = self._clients.get(loop)
            if found is not None:
                return found[1]
            options = dict(self.client_options)
            options.setdefault("config", client_config(self.endpoint_url, self.max_pool_connections))
            if self.endpoint_url is not None:
                options.setdefault("endpoint_url", self.endpoint_url)
            stack = contextlib.AsyncExitStack()
            client = await stack.enter_async_context(_session().create_client("s3", **options))
            self._clients[loop] = (stack, client)
            return client

    @property
    def open_clients(self) -> int:
        """How many event loops have an open client of this store (0 after ``aclose`` on each)."""
        return len(self._clients)

    async def aclose(self) -> None:
        """Close the client of the running event loop (idempotent); clients of finished loops
        are forgotten."""
        loop = asyncio.get_running_loop()
        for other in [lp for lp in self._clients if lp is not loop and lp.is_closed()]:
            self._clients.pop(other, None)
            self._opening.pop(other, None)
        found = self._clients.pop(loop, None)
        self._opening.pop(loop, None)
        if found is not None:
            with anyio.CancelScope(shield=True):
                await found[0].aclose()

    async def _call(self, operation: str, **params: Any) -> Any:
        client = await self.client()
        self.requests += 1
        try:
            return await getattr(client, operation)(Bucket=self.bucket, **params)
        except Exception as exc:  # botocore ClientError, connection and credential errors
            raise failure_of(exc) from exc

    # -- objects ---------------------------------------------------------------------------
    async def head(self, key: str) -> ObjectMeta | None:
        """HeadObject; ``None`` when there is no object at ``key``."""
        try:
            return _meta(await self._call("head_object", Key=key))
        except S3Failure as failure:
            if failure.not_found:
                return None
            raise

    async def get(self, key: str, *, check: Callable[[], None] | None = None, chunk_size: int = 1 << 20) -> tuple[ObjectMeta, bytes] | None:
        """GetObject, the whole body; ``None`` when absent.

        :param check: called between body chunks (raises to abandon the read)
        """
        try:
            response = await self._call("get_object", Key=key)
        except S3Failure as failure:
            if failure.not_found:
                return None
            raise
        chunks: list[bytes] = []
        async with response["Body"] as body:
            while True:
                if check is not None:
                    check()
                chunk = await read_chunk(body, chunk_size)
                if not chunk:
                    break
                chunks.append(chunk)
        return _meta(response), b"".join(chunks)

    async def get_prefix(self, key: str, max_bytes: int) -> tuple[ObjectMeta, bytes | None] | None:
        """GetObject ``Range: bytes=0-<max_bytes - 1>``: the object's meta (``size`` is the
        whole object's, from ``Content-Range``) and its whole body when it has at most
        ``max_bytes`` bytes (``None`` when it is bigger: only the first ``max_bytes`` came).
        ``None`` when absent. One round trip; the ETag and VersionId are the whole object's.

        :raises S3Failure: as ``get``; status 416 (``InvalidRange``) for an empty object, which
            no range can select (the caller asks ``head`` instead)
        """
        try:
            response = await self._call("get_object", Key=key, Range=f"bytes=0-{max_bytes - 1}")
        except S3Failure as failure:
            if failure.not_found:
                return None
            raise
        chunks: list[bytes] = []
        received = 0
        async with response["Body"] as body:
            while received <= max_bytes:  # a service that ignored the range: stop past max_bytes
                chunk = await read_chunk(body, max_bytes + 1 - received)
                if not chunk:
                    break
                chunks.append(chunk)
                received += len(chunk)
        data = b"".join(chunks)
        total = _total_size(response.get("ContentRange"), response.get("ContentLength", len(data)))
        meta = _meta(response)
        meta = ObjectMeta(etag=meta.etag, version_id=meta.version_id, size=total)
        return meta, (data if total == len(data) else None)

    @contextlib.asynccontextmanager
    async def open(self, key: str, *, first: int | None = None) -> AsyncIterator[tuple[ObjectMeta, Any] | None]:
        """GetObject with the body left open for streaming (``None`` when absent).

        :param first: ask only for the first ``first`` bytes (``Range: bytes=0-<first - 1>``,
            ``first`` ≥ 1); the service sends no more than that, whatever the object's size
        """
        params: dict[str, Any] = {"Key": key}
        if first is not None:
            params["Range"] = f"bytes=0-{first - 1}"
        try:
            response = await self._call("get_object", **params)
        except S3Failure as failure:
            if failure.not_found:
                yield None
                return
            raise
        async with response["Body"] as body:
            yield _meta(response), body

    async def put(self, key: str, data: bytes, *, if_match: str | None = None, if_none_match: bool = False) -> ObjectMeta:
        """PutObject; ``if_match`` sends ``If-Match: <etag>``, ``if_none_match`` ``If-None-Match: *``.

        The request is shielded from cancellation: once sent it is never abandoned.
        :raises S3Failure: ``precondition_failed`` when the condition does not hold
        """
        params: dict[str, Any] = {"Key": key, "Body": data}
        if if_match is not None:
            params["IfMatch"] = if_match
        if if_none_match:
            params["IfNoneMatch"] = "*"
        with anyio.CancelScope(shield=True):
            response = await self._call("put_object", **params)
        return _meta(response, size=len(data))

    async def put_multipart(
        self,
        key: str,
        data: bytes,
        *,
        part_size: int,
        if_match: str | None = None,
        if_none_match: bool = False,
        check: Callable[[], None] | None = None,
    ) -> ObjectMeta:
        """A multipart upload of ``data``; the condition goes on CompleteMultipartUpload, so the
        object appears atomically or not at all. Any failure aborts the upload.

        :param check: called before each part (raises to abandon the upload before completion)
        """
        created = await self._call("create_multipart_upload", Key=key)
        upload_id = created["UploadId"]
        try:
            parts = []
            for number, start in enumerate(range(0, len(data), part_size), start=1):
                if check is not None:
                    check()
                part = await self._call(
                    "upload_part", Key=key, UploadId=upload_id, PartNumber=number, Body=data[start : start + part_size]
                )
                parts.append({"ETag": part["ETag"], "PartNumber": number})
            if check is not None:
                check()
            params: dict[str, Any] = {"Key": key, "UploadId": upload_id, "MultipartUpload": {"Parts": parts}}
            if if_match is not None:
                params["IfMatch"] = if_match
            if if_none_match:
                params["IfNoneMatch"] = "*"
            with anyio.CancelScope(shield=True):
                response = await self._call("complete_multipart_upload", **params)
        except BaseException:
            with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
                await self._call("abort_multipart_upload", Key=key, UploadId=upload_id)
            raise
        return _meta(response, size=len(data))

    async def delete(self, key: str, *, if_match: str | None = None) -> None:
        """DeleteObject; ``if_match`` sends ``If-Match: <etag>`` (a conditional delete: AWS
        general purpose buckets since 2025-09; a service that ignores the header deletes
        unconditionally). In a versioned bucket this adds a delete marker.

        The request is shielded from cancellation: once sent it is never abandoned.
        :raises S3Failure: ``precondition_failed`` when the object has another ETag;
            ``not_found`` when there is no object and ``if_match`` was sent
        """
        params: dict[str, Any] = {"Key": key}
        if if_match is not None:
            params["IfMatch"] = if_match
        with anyio.CancelScope(shield=True):
            await self._call("delete_object", **params)

    # -- listing ---------------------------------------------------------------------------
    async def delete_many(self, keys: list[str]) -> None:
        """DeleteObjects, up to 1,000 keys a request (a key already gone is no failure).

        The requests are shielded from cancellation: once sent they are never abandoned.
        :raises S3Failure: the request failed, or the service named a key it could not delete
        """
        for start in range(0, len(keys), 1000):
            batch = [{"Key": key} for key in keys[start:start + 1000]]
            with anyio.CancelScope(shield=True):
                response = await self._call("delete_objects", Delete={"Objects": batch, "Quiet": True})
            errors = response.get("Errors") or ()
            if errors:
                first = errors[0]
                raise S3Failure(None, str(first.get("Code") or "DeleteFailed"),
                                f"cannot delete {first.get('Key')!r}: {first.get('Message') or first.get('Code')}")

    async def has_children(self, prefix: str) -> bool:
        """Is there at least one object whose key starts with ``prefix``? (ListObjectsV2, 1 key)"""
        response = await self._call("list_objects_v2", Prefix=prefix, MaxKeys=1)
        return bool(response.get("KeyCount") or response.get("Contents") or response.get("CommonPrefixes"))

    async def list_children(
        self, prefix: str, *, check: Callable[[], None] | None = None
    ) -> tuple[list[tuple[str, ObjectMeta]], list[str]]:
        """ListObjectsV2 with delimiter ``/`` over every page: ``(objects, common prefixes)``,
        objects as ``(key, meta)`` (ETag and size; no VersionId — the listing has none)."""
        objects: list[tuple[str, ObjectMeta]] = []
        prefixes: list[str] = []
        async for page_objects, page_prefixes in self.child_pages(prefix, check=check):
            objects.extend(page_objects)
            prefixes.extend(page_prefixes)
        return objects, prefixes

    async def child_pages(
        self, prefix: str, *, check: Callable[[], None] | None = None
    ) -> AsyncIterator[tuple[list[tuple[str, ObjectMeta]], list[str]]]:
        """``list_children``'s answer one ListObjectsV2 page at a time (at most 1000 keys and
        common prefixes each, in key order), so a caller keeping a part of a huge listing never
        holds it whole."""
        token: str | None = None
        while True:
            if check is not None:
                check()
            params: dict[str, Any] = {"Prefix": prefix, "Delimiter": "/"}
            if token:
                params["ContinuationToken"] = token
            response = await self._call("list_objects_v2", **params)
            yield ([(item["Key"], ObjectMeta(etag=str(item.get("ETag") or ""), size=item.get("Size")))
                    for item in response.get("Contents") or ()],
                   [item["Prefix"] for item in response.get("CommonPrefixes") or ()])
            if not response.get("IsTruncated"):
                return
            token = response.get("NextContinuationToken")

    async def list_all(
        self, prefix: str, *, check: Callable[[], None] | None = None
    ) -> AsyncIterator[list[tuple[str, int, int | None]]]:
        """ListObjectsV2 without a delimiter, page by page: every key under ``prefix`` as
        ``(key, size in bytes, LastModified in ns since the epoch or None)``, in key order."""
        token: str | None = None
        while True:
            if check is not None:
                check()
            params: dict[str, Any] = {"Prefix": prefix}
            if token:
                params["ContinuationToken"] = token
            response = await self._call("list_objects_v2", **params)
            yield [
                (item["Key"], int(item.get("Size") or 0), _ns(item.get("LastModified")))
                for item in response.get("Contents") or ()
            ]
            if not response.get("IsTruncated"):
                return
            token = response.get("NextContinuationToken")

    async def versioning_enabled(self) -> bool:
        """Has the bucket ever had versioning on (``Enabled`` or ``Suspended``)?"""
        response = await self._call("get_bucket_versioning")
        return response.get("Status") in ("Enabled", "Suspended")
