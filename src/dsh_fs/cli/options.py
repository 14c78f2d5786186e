"""Options that several ``dsh-fs`` commands share, checked once (tracker issue 12, item 8).

Every bad option value is a usage error — one ``Error: …`` line on stderr, exit status 2,
nothing done — on every command, through click's own facilities (``click.ParamType.fail``,
``click.UsageError``), never a traceback:

* ``--s3 s3://BUCKET/PREFIX`` (``S3_URL``): a well-formed URL (``fs_s3.location.parse_url``)
  and the ``[s3]`` extra installed;
* ``--endpoint-url URL`` (``ENDPOINT_URL``): an ``http``/``https`` URL with a host, and only
  together with S3 (``s3_options`` refuses it alone);
* ``--session NAME``: not empty;
* :func:`require_s3_credentials`: no AWS credentials for ``--s3`` is a setup error too, not a
  tool result.

Heavy modules (aiobotocore) are imported only when such an option is given.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import urlsplit

import click

__all__ = (
    "CliFailure",
    "ENDPOINT_URL",
    "S3_URL",
    "SESSION_NAME",
    "require_s3_credentials",
    "require_s3_extra",
    "s3_options",
)

F = TypeVar("F", bound=Callable[..., Any])


class CliFailure(click.ClickException):
    """The command cannot run (exit status 2, message on stderr, nothing done)."""

    exit_code = 2


def require_s3_extra() -> None:
    """:raises click.UsageError: when the ``[s3]`` extra (aiobotocore) is not installed"""
    from ..fs_s3.store import require_client_library

    try:
        require_client_library()
    except ImportError as exc:
        raise click.UsageError(str(exc)) from None


class _S3Url(click.ParamType):
    name = "s3_url"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        from ..fs_s3.location import parse_url

        try:
            parse_url(value)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)
        try:
            require_s3_extra()
        except click.UsageError as exc:
            self.fail(exc.message, param, ctx)
        return str(value)


class _EndpointUrl(click.ParamType):
    name = "url"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        try:
            parts = urlsplit(str(value))
            _ = parts.port  # a port that is not a number, or out of range: ValueError
            ok = parts.scheme in ("http", "https") and bool(parts.hostname)
        except ValueError:
            ok = False
        if not ok:
            self.fail(f"expected an http:// or https:// URL with a host, not {value!r}", param, ctx)
        return str(value)


class _SessionName(click.ParamType):
    name = "name"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        if value == "":
            self.fail("a session name must not be empty", param, ctx)
        return str(value)


S3_URL = _S3Url()
"""``--s3``: ``s3://bucket[/prefix]``, with the ``[s3]`` extra installed"""
ENDPOINT_URL = _EndpointUrl()
"""``--endpoint-url``: an http(s) URL with a host"""
SESSION_NAME = _SessionName()
"""``--session``: any non-empty name"""


def s3_options(*, endpoint_help: str = "S3-compatible endpoint for --s3 (default: AWS).",
               s3_help: str = ("Work on an S3-compatible bucket prefix instead of the local disk "
                               "(standard AWS credential chain).")) -> Callable[[F], F]:
    """Add ``--s3`` and ``--endpoint-url`` to a command; ``--endpoint-url`` without ``--s3``
    is a usage error. The command receives ``s3`` and ``endpoint_url``."""

    def decorate(func: F) -> F:
        @functools.wraps(func)
        def checked(*args: Any, **kwargs: Any) -> Any:
            if kwargs.get("endpoint_url") is not None and kwargs.get("s3") is None:
                raise click.UsageError("--endpoint-url is only used with --s3")
            return func(*args, **kwargs)

        with_endpoint = click.option("--endpoint-url", type=ENDPOINT_URL, metavar="URL", default=None,
                                     help=endpoint_help)(checked)
        return click.option("--s3", type=S3_URL, metavar="s3://BUCKET/PREFIX", default=None,  # type: ignore[return-value]
                            help=s3_help)(with_endpoint)

    return decorate


async def require_s3_credentials() -> None:
    """:raises click.UsageError: when the standard AWS credential chain finds no credentials
    (a setup error, not a tool result)"""
    from ..fs_s3.store import has_credentials

    if not await has_credentials():
        raise click.UsageError(
            "--s3: no AWS credentials found (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, "
            "AWS_PROFILE, or another source of the standard credential chain)"
        )
