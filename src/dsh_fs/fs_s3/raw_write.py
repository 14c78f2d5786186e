"""``S3FileSystem.write_bytes``: exactly the given bytes as the object, under the provider's
lock, with one conditional PutObject (``CreateIfAbsent``: ``If-None-Match: *``;
``ReplaceIfVersion``: a HeadObject for the version, then ``If-Match`` its ETag; ``None``: an
unconditional PUT). What a history rewind writes (docs/HISTORY.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..fs.errors import gone, not_regular_file, overwrite_not_observed, stale
from ..fs.types import CreateIfAbsent, ReplaceIfVersion, Target, Version, WriteIntent
from .errors import S3Failure, fs_error

if TYPE_CHECKING:
    from ..core.signal import AbortSignal
    from .filesystem import S3FileSystem

__all__ = ("write_object",)


async def write_object(fs: "S3FileSystem", target: Target, data: bytes, expected: WriteIntent | None,
                       signal: "AbortSignal | None") -> Version:
    """Put ``data`` as ``target``'s object, guarded by ``expected``; the version written.

    :raises FsError: FS_NOT_REGULAR_FILE (a directory), FS_STALE_VERSION (missing or another
        version), FS_NOT_OBSERVED (``CreateIfAbsent`` over an object), FS_ABORTED, and the
        store's failures mapped as every write maps them
    """
    p, rel = fs._place(target)
    display = target.display_path
    async with fs.locks.hold(target.key):
        try:
            if rel == "":
                raise not_regular_file("write", display)
            if_match = None
            if isinstance(expected, ReplaceIfVersion):
                meta = await p.store.head(p.location.object_key(rel))
                if meta is None:
                    raise await fs._absent(p, rel, "write", display, gone(display))
                if meta.token != expected.version:
                    raise stale("write", display)
                if_match = meta.etag
            elif await fs._is_dir(p, rel):
                raise not_regular_file("write", display)
            try:
                meta = await fs._put(p, rel, data, if_match=if_match,
                                     if_none_match=isinstance(expected, CreateIfAbsent), signal=signal)
            except S3Failure as failure:
                if failure.precondition_failed and isinstance(expected, CreateIfAbsent):
                    raise overwrite_not_observed(display) from failure
                if failure.precondition_failed or failure.not_found:
                    raise stale("write", display) from failure
                raise
            return Version(meta.token)
        except S3Failure as failure:
            raise fs_error(failure, "write", display) from failure
