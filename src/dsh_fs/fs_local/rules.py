"""``LocalRules``: what the local provider does differently per profile, and its settings.

The shared text switches (``TextRules``: D1, D2, D4, D6, D15, D20) plus the local ones (D3,
D12, D17), and the settings every local operation reads (containment root, the streamed-edit
threshold). One frozen value per provider, passed to every ``fsio`` function. Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..fs.provider_rules import TextRules, profile_switch
from . import beneath

__all__ = ("LocalRules", "STREAM_EDIT_MIN_SIZE")

STREAM_EDIT_MIN_SIZE = 32 * 1024 * 1024
"""edits of files at least this big (bytes) stream in bounded memory (``large_edit``)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class LocalRules(TextRules):
    """Per-profile behaviour of the local provider: the shared text switches (D1, D2, D4, D6,
    D15, D20) plus the local ones (D3, D12, D17), and the settings below. Build with
    ``LocalRules.for_profile(profile, root=…, …)``: every switch follows the profile."""

    umask_mode: bool = profile_switch("D3")
    """D3: new files are made as ``creat(0o666)`` makes them (umask or the directory's default
    ACL; else 0o600); existing owner/group kept"""
    follow_dangling: bool = profile_switch("D12")
    """D12: writing through a dangling symlink creates its target"""
    keep_read_only: bool = profile_switch("D17")
    """D17: a write or edit of an existing file the caller may not write is refused"""
    list_symlink_loops: bool = profile_switch("E23")
    """E23: a directory listing shows a symlink loop as ``other`` and goes on (the reference
    fails the whole listing)"""
    root: beneath.Root | None = None
    """containment: the workspace root (real path, and as configured); ``None`` = no
    containment (reference)"""
    stream_edit_min_size: int = STREAM_EDIT_MIN_SIZE
    """edits of files of at least this many bytes stream (``large_edit``), without a diff basis"""

    @property
    def root_display(self) -> str | None:
        """the root as configured, as messages name it (``None`` without a root)"""
        return self.root.shown if self.root is not None else None

    def contains(self, display: str) -> bool:
        """Is ``display`` (absolute, normalized) inside the root, lexically? Always without a root."""
        return self.root is None or self.root.contains(display)
