"""``tool-fs`` configuration (REFERENCE-SPEC §4.1; seed README "Config")."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.profile import Profile
from ..notebook import NOTEBOOK_MAX_BYTES
from .shared import positive_integer
from .read_render import (
    DEFAULT_READ_LIMIT,
    DEFAULT_READ_MAX_BYTES,
    DEFAULT_READ_MAX_LINE_LENGTH,
    DEFAULT_READ_STREAM_MIN_SIZE,
)

__all__ = ("CONFIG_KEYS", "ToolFsConfig")

CONFIG_KEYS = {
    "read_limit": "readLimit",
    "read_max_line_length": "readMaxLineLength",
    "read_max_bytes": "readMaxBytes",
    "read_stream_min_size": "readStreamMinSize",
}
"""Python keyword → the reference's config name (used in messages and scenarios)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolFsConfig:
    """Read caps and the profile.

    :raises ValueError: ``tool-fs: <name> must be a positive integer`` (checked in the order
        readLimit, readMaxLineLength, readMaxBytes, readStreamMinSize, notebook_max_bytes)
    """

    read_limit: int = DEFAULT_READ_LIMIT
    """default and maximum lines per read (also named in the ``limit`` schema description)"""
    read_max_line_length: int = DEFAULT_READ_MAX_LINE_LENGTH
    """characters kept per line"""
    read_max_bytes: int = DEFAULT_READ_MAX_BYTES
    """UTF-8 byte cap on one read's selected lines"""
    read_stream_min_size: int = DEFAULT_READ_STREAM_MIN_SIZE
    """files of at least this many bytes are streamed"""
    notebook_max_bytes: int = NOTEBOOK_MAX_BYTES
    """DEVIATIONS F1: a ``.ipynb`` file of more bytes is shown as its JSON text, not as cells"""
    profile: Profile = Profile.DEFAULT

    def __post_init__(self) -> None:
        for key, name in CONFIG_KEYS.items():
            object.__setattr__(self, key, positive_integer(name, getattr(self, key)))
        object.__setattr__(self, "notebook_max_bytes", positive_integer("notebook_max_bytes", self.notebook_max_bytes))
        object.__setattr__(self, "profile", Profile.parse(self.profile))
