"""``tool-fs-search`` configuration (REFERENCE-SPEC §6: keys, defaults, load-time checks)."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.profile import Profile
from ..tool_fs.shared import positive_integer

__all__ = (
    "CONFIG_KEYS",
    "GLOB_MAX_RESULTS",
    "GREP_MAX_LINE_BYTES",
    "GREP_MAX_MATCHES",
    "MIRROR_BATCH_BYTES",
    "RAW_OUTPUT_MAX_BYTES",
    "SEARCH_TIMEOUT_MS",
    "ToolFsSearchConfig",
)

GLOB_MAX_RESULTS = 100
GREP_MAX_MATCHES = 250
GREP_MAX_LINE_BYTES = 2000
RAW_OUTPUT_MAX_BYTES = 20_000_000
SEARCH_TIMEOUT_MS = 30_000
MIRROR_BATCH_BYTES = 64 * 1024 * 1024

CONFIG_KEYS = {
    "glob_max_results": "globMaxResults",
    "grep_max_matches": "grepMaxMatches",
    "grep_max_line_bytes": "grepMaxLineBytes",
    "raw_output_max_bytes": "rawOutputMaxBytes",
    "timeout_ms": "timeoutMs",
}
"""Python keyword → the reference's config name, in the reference's check order"""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolFsSearchConfig:
    """Caps, the time budget and the profile of ``glob``/``grep``.

    :raises ValueError: ``tool-fs-search: <name> must be a positive integer`` (checked in the
        order globMaxResults, grepMaxMatches, grepMaxLineBytes, rawOutputMaxBytes, timeoutMs,
        then mirrorBatchBytes)
    """

    glob_max_results: int = GLOB_MAX_RESULTS
    """paths one ``glob`` shows inline"""
    grep_max_matches: int = GREP_MAX_MATCHES
    """matching lines one ``grep`` shows inline"""
    grep_max_line_bytes: int = GREP_MAX_LINE_BYTES
    """UTF-8 bytes kept of one matched line"""
    raw_output_max_bytes: int = RAW_OUTPUT_MAX_BYTES
    """bytes of ripgrep output one search may produce"""
    timeout_ms: int = SEARCH_TIMEOUT_MS
    """time budget of one call in milliseconds"""
    mirror_batch_bytes: int = MIRROR_BATCH_BYTES
    """providers without a host path (S3, memory): file content copied to the private
    search directory at a time (bounds its disk use; one bigger file goes alone)"""
    profile: Profile = Profile.DEFAULT

    def __post_init__(self) -> None:
        for key, name in {**CONFIG_KEYS, "mirror_batch_bytes": "mirrorBatchBytes"}.items():
            object.__setattr__(self, key, positive_integer(name, getattr(self, key), plugin="tool-fs-search"))
        object.__setattr__(self, "profile", Profile.parse(self.profile))
