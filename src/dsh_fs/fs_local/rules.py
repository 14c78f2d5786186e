"""``LocalRules``: what the local provider does differently per profile, and its settings.

The shared text switches (``TextRules``: D1, D2, D4, D6, D15, D20, D29) plus the local ones (D3,
D12, D17), and the settings every local operation reads (containment roots, the streamed-edit
threshold). One frozen value per provider, passed to every ``fsio`` function. Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..fs.provider_rules import TextRules, profile_switch
from . import containment

__all__ = ("LocalRules", "STREAM_EDIT_MIN_SIZE")

STREAM_EDIT_MIN_SIZE = 32 * 1024 * 1024
"""edits of files at least this big (bytes) stream in bounded memory (``large_edit``)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class LocalRules(TextRules):
    """Per-profile behaviour of the local provider: the shared text switches (D1, D2, D4, D6,
    D15, D20, D29) plus the local ones (D3, D12, D17), and the settings below. Build with
    ``LocalRules.for_profile(profile, roots=…, …)``: every switch follows the profile."""

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
    roots: tuple[containment.Root, ...] | None = None
    """containment: the workspace roots (real path, and as configured), which never overlap;
    ``None`` = no containment (reference); ``()`` = nothing is reachable (an MCP view narrowed
    to no root). Several roots: DEVIATIONS D28"""
    stream_edit_min_size: int = STREAM_EDIT_MIN_SIZE
    """edits of files of at least this many bytes stream (``large_edit``), without a diff basis"""

    @property
    def confined(self) -> bool:
        """Is there containment (``roots`` is not ``None``)?"""
        return self.roots is not None

    @property
    def root_names(self) -> tuple[str, ...]:
        """the roots as configured, as the containment refusal names them (empty without
        containment or without roots)"""
        return tuple(root.shown for root in self.roots or ())

    def root_for(self, path: str) -> containment.Root | None:
        """The root a resolution or walk of the absolute normalized ``path`` (a display path or
        a key) starts in: the one root containing it lexically (as real or shown path; roots
        never overlap). ``None`` without containment. A path inside no root gets a root whose
        walks refuse it (``containment.Escape``): the first root, or ``containment.NOWHERE`` without
        roots; never ``None``, so no caller can lose containment by asking."""
        roots = self.roots
        if roots is None:
            return None
        if len(roots) == 1:
            return roots[0]  # the one root: the path is in it, or every walk from it refuses it
        for root in roots:
            if root.contains(path):
                return root
        return roots[0] if roots else containment.NOWHERE

    def contains(self, display: str) -> bool:
        """Is ``display`` (absolute, normalized) inside a root, lexically? Always without containment."""
        roots = self.roots
        if roots is None:
            return True
        for root in roots:
            if root.contains(display):
                return True
        return False
