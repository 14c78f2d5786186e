"""Several key prefixes served by one ``S3FileSystem`` (DEVIATIONS D28 on S3). Pure: no I/O.

``prefix_roots(spec, bucket)`` takes the roots as configured — display root → ``s3://bucket/prefix``
URL (or a bare prefix in ``bucket``) — and gives ``(display root, S3Location)`` pairs in order,
refusing what the local provider refuses for its directories: more than ``MAX_ROOTS``, and two
roots that overlap, as display paths (``/a`` and ``/a/b``, or ``/`` beside any other) or in
storage (the same bucket, one prefix equal to the other or below it; the empty prefix is the
whole bucket). ``display_roots(urls)`` names the roots the CLI's repeated ``--s3`` gives:
``/<last prefix segment>`` (``/<bucket>`` for a whole bucket).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from ..fs.rooted import check_root
from .location import S3Location, parse_url

__all__ = ("MAX_ROOTS", "display_roots", "prefix_roots")

MAX_ROOTS: Final = 64
"""the most prefixes one provider serves (the local provider's ``fs_local.roots.MAX_ROOTS``)"""


def _inside(path: str, root: str) -> bool:
    """Is the display path ``path`` the display root ``root`` or below it?"""
    return root == "/" or path == root or path.startswith(root + "/")


def _location(value: str, bucket: str | None) -> S3Location:
    if value.startswith("s3://"):
        return parse_url(value)
    if bucket is None:
        raise ValueError(f"S3FileSystem: root {value!r} is not an s3://bucket/prefix URL (and no bucket= is given)")
    return S3Location(bucket, value)


def prefix_roots(spec: Mapping[str, str], bucket: str | None = None) -> tuple[tuple[str, S3Location], ...]:
    """The roots of ``S3FileSystem(roots=spec)``, checked, in the given order.

    :param spec: display root (absolute) → ``s3://bucket[/prefix]``, or a key prefix in ``bucket``
    :param bucket: the bucket of bare prefixes (``None``: every value must be a URL)
    :raises ValueError: ``S3FileSystem: roots= names no root``; ``S3FileSystem: at most 64 roots``;
        a display root that is not absolute (``check_root``); a malformed URL or prefix;
        ``S3FileSystem: roots <A> and <B> overlap`` (display roots, or the two URLs when their
        storage overlaps)
    """
    if not spec:
        raise ValueError("S3FileSystem: roots= names no root")
    if len(spec) > MAX_ROOTS:
        raise ValueError(f"S3FileSystem: at most {MAX_ROOTS} roots")
    found = tuple((check_root(display), _location(value, bucket)) for display, value in spec.items())
    for i, (first, here) in enumerate(found):
        for second, there in found[i + 1:]:
            if _inside(first, second) or _inside(second, first):
                raise ValueError(f"S3FileSystem: roots {first} and {second} overlap")
            if here.bucket == there.bucket and (here.prefix.startswith(there.prefix)
                                                or there.prefix.startswith(here.prefix)):
                raise ValueError(f"S3FileSystem: roots {here.url} and {there.url} overlap")
    return found


def display_roots(urls: Sequence[str]) -> dict[str, str]:
    """Display root → URL for several ``--s3`` URLs: ``/<last prefix segment>``, or
    ``/<bucket>`` for a URL without a prefix (``s3://b/team/a`` → ``/a``).

    :raises ValueError: a malformed URL (``parse_url``); the same prefix twice (``S3FileSystem:
        roots <url> and <url> overlap``); two prefixes whose last segments are the same
        (``S3FileSystem: s3://b/x/a and s3://c/y/a would both be served as /a``)
    """
    named: dict[str, str] = {}
    for url in urls:
        location = parse_url(url)
        segments = [s for s in location.prefix.split("/") if s]
        display = "/" + (segments[-1] if segments else location.bucket)
        if display in named:
            if parse_url(named[display]) == location:
                raise ValueError(f"S3FileSystem: roots {named[display]} and {url} overlap")
            raise ValueError(f"S3FileSystem: {named[display]} and {url} would both be served as {display}")
        named[display] = url
    return named
