"""S3 service failures and how they become ``FsError`` (the issue's error mapping). Pure.

::

    412 PreconditionFailed / 409 ConditionalRequestConflict
        -> the caller decides by intent: FS_STALE_VERSION or FS_NOT_OBSERVED
    404 NoSuchKey                -> the caller decides: not found / stale / not a regular file
    403 AccessDenied             -> FS_PERMISSION_DENIED  cannot <verb> "<dp>": permission denied
    anything else (incl. NoSuchBucket, network, credentials)
                                 -> FS_IO_ERROR           cannot <verb> "<dp>": <service message>
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..fs.errors import FsError, Stage, Verb, check_abort, io_error, permission_denied

if TYPE_CHECKING:
    from ..core.signal import AbortSignal

__all__ = ("S3Failure", "abort_check", "failure_of", "fs_error")

_ACCESS_DENIED = {"AccessDenied", "AllAccessDisabled", "InvalidAccessKeyId", "SignatureDoesNotMatch", "403", "Forbidden"}
_NOT_FOUND = {"NoSuchKey", "404", "NotFound"}
_PRECONDITION = {"PreconditionFailed", "412", "ConditionalRequestConflict", "409"}


class S3Failure(Exception):
    """One failed S3 request, reduced to what the mapping needs.

    :param status: HTTP status, when the service answered
    :param code: the S3 error code (``NoSuchKey``, ``PreconditionFailed``, …) or the exception name
    :param message: the service's message (or the client library's, for network/credential errors)
    """

    def __init__(self, status: int | None, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message

    def __str__(self) -> str:
        return self.message

    @property
    def precondition_failed(self) -> bool:
        """412, or 409 for a conditional write that lost to a concurrent one."""
        return self.status in (409, 412) or self.code in _PRECONDITION

    @property
    def not_found(self) -> bool:
        """404 for an object (a missing *bucket* is an I/O error, not an absent file)."""
        return self.code in _NOT_FOUND or (self.status == 404 and self.code != "NoSuchBucket")

    @property
    def access_denied(self) -> bool:
        return self.status == 403 or self.code in _ACCESS_DENIED


def failure_of(exc: BaseException) -> S3Failure:
    """Reduce a botocore ``ClientError`` (or any other client exception) to an ``S3Failure``."""
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        error = response.get("Error") or {}
        meta = response.get("ResponseMetadata") or {}
        status = meta.get("HTTPStatusCode")
        code = str(error.get("Code") or status or type(exc).__name__)
        message = str(error.get("Message") or code)
        return S3Failure(status if isinstance(status, int) else None, code, message)
    return S3Failure(None, type(exc).__name__, str(exc) or type(exc).__name__)


def fs_error(failure: S3Failure, verb: Verb, display: str) -> FsError:
    """The ``FsError`` for a failure that has no intent-specific meaning."""
    if failure.access_denied:
        return permission_denied(verb, display, cause=failure)
    return io_error(verb, display, failure.message, cause=failure)


def abort_check(signal: AbortSignal | None, stage: Stage) -> Callable[[], None] | None:
    """The ``check=`` of a store request (called between its pages or body chunks): raises
    ``FsError(FS_ABORTED)`` ``<stage> aborted`` once ``signal`` is aborted; ``None`` without a
    signal."""
    return None if signal is None else (lambda: check_abort(signal, stage))
