"""``LocalRules``: what the local provider does differently per profile, and its settings.

The shared text switches (``TextRules``: D1, D2, D4, D6, D15) plus the local ones (D3, D12, D17), and
the settings every local operation reads (umask, containment root, the streamed-edit
threshold). One frozen value per provider, passed to every ``fsio`` function. Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..fs.provider_rules import TextRules, profile_switch
from . import beneath

__all__ = ("LocalRules", "STREAM_EDIT_MIN_SIZE")

STREAM_EDIT_MIN_SIZE = 32 * 1024 * 1024
"""edits of files at least this big (bytes) stream in bounded memory (``large_edit``;
tracker issue 5)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class LocalRules(TextRules):
    """Per-profile behaviour of the local provider: the shared text switches (D1, D2, D4, D6,
    D15) plus the local ones (D3, D12, D17), and the settings below. Build with
    ``LocalRules.for_profile(profile, umask=…, root=…, …)``: every switch follows the profile."""

    umask_mode: bool = profile_switch("D3")
    """D3: new files get 0o666 & ~umask (else 0o600); existing owner/group kept"""
    follow_dangling: bool = profile_switch("D12")
    """D12: writing through a dangling symlink creates its target"""
    keep_read_only: bool = profile_switch("D17")
    """D17: a write or edit of an existing file the caller may not write is refused"""
    umask: int = 0o022
    root: str | None = None
    """containment: the real path of the workspace root; ``None`` = no containment (reference)"""
    root_display: str | None = None
    """the root as configured (lexically normalized), for messages and the lexical check"""
    stream_edit_min_size: int = STREAM_EDIT_MIN_SIZE
    """edits of files of at least this many bytes stream (``large_edit``), without a diff basis"""

    def contains(self, display: str) -> bool:
        """Is ``display`` (absolute, normalized) inside the root, lexically? Always without a root."""
        if self.root is None:
            return True
        return beneath.inside(display, self.root) or (
            self.root_display is not None and beneath.inside(display, self.root_display)
        )
