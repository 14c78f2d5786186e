"""``tool-fs`` configuration (REFERENCE-SPEC §4.1; seed README "Config")."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..core.profile import Profile
from .read_render import (
    DEFAULT_READ_LIMIT,
    DEFAULT_READ_MAX_BYTES,
    DEFAULT_READ_MAX_LINE_LENGTH,
    DEFAULT_READ_STREAM_MIN_SIZE,
)

__all__ = ("CONFIG_KEYS", "ToolFsConfig", "positive_integer")

CONFIG_KEYS = {
    "read_limit": "readLimit",
    "read_max_line_length": "readMaxLineLength",
    "read_max_bytes": "readMaxBytes",
    "read_stream_min_size": "readStreamMinSize",
}
"""Python keyword → the reference's config name (used in messages and scenarios)"""


def positive_integer(name: str, value: object, *, plugin: str = "tool-fs") -> int:
    """A plugin setting that must be an integer ≥ 1 (``2.0`` counts as 2), as ``int``.

    :raises ValueError: ``<plugin>: <name> must be a positive integer``
    """
    ok = (
        isinstance(value, int) and not isinstance(value, bool) and value >= 1
    ) or (isinstance(value, float) and math.isfinite(value) and value.is_integer() and value >= 1)
    if not ok:
        raise ValueError(f"{plugin}: {name} must be a positive integer")
    return int(value)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolFsConfig:
    """Read caps and the profile.

    :raises ValueError: ``tool-fs: <name> must be a positive integer`` (checked in the order
        readLimit, readMaxLineLength, readMaxBytes, readStreamMinSize)
    """

    read_limit: int = DEFAULT_READ_LIMIT
    """default and maximum lines per read (also named in the ``limit`` schema description)"""
    read_max_line_length: int = DEFAULT_READ_MAX_LINE_LENGTH
    """characters kept per line"""
    read_max_bytes: int = DEFAULT_READ_MAX_BYTES
    """UTF-8 byte cap on one read's selected lines"""
    read_stream_min_size: int = DEFAULT_READ_STREAM_MIN_SIZE
    """files of at least this many bytes are streamed"""
    profile: Profile = Profile.DEFAULT

    def __post_init__(self) -> None:
        for key, name in CONFIG_KEYS.items():
            object.__setattr__(self, key, positive_integer(name, getattr(self, key)))
        object.__setattr__(self, "profile", Profile.parse(self.profile))
