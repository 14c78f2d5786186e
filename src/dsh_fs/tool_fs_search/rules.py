"""The search tools' profile switches added for "search that never silently misses"
(docs/SEARCH.md, DEVIATIONS S7–S11): each ``True`` in the ``default`` profile and ``False`` in
``reference``, declared with ``profile_switch`` so a new one cannot silently be on there."""

from __future__ import annotations

from dataclasses import dataclass, fields

from ..core.profile import Profile
from ..fs.provider_rules import PROFILE_SWITCH, profile_switch

__all__ = ("SearchRules",)


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchRules:
    """Profile switches of ``glob``/``grep`` (build with :meth:`for_profile`)."""

    near_miss_hints: bool = profile_switch("S7")
    """S7: a ``glob`` that finds nothing for a literal name gets ``read``'s lookalike hint"""
    follow_links: bool = profile_switch("S8")
    """S8: ripgrep follows symlinks (``--follow``); results that lead out of the containment
    root are dropped"""

    absolute_patterns: bool = profile_switch("S9")
    """S9: an absolute ``glob`` pattern inside the workspace is matched from its directory"""
    patterns_from_path: bool = profile_switch("S10")
    """S10: a ``glob`` pattern with a directory part is matched from ``path`` too"""

    match_windows: bool = profile_switch("S11")
    """S11: a match beyond ``grepMaxLineBytes`` of a long line is shown in a window around it"""

    @classmethod
    def for_profile(cls, profile: Profile | str | None) -> SearchRules:
        """Every switch on in ``default``, off in ``reference``.

        :raises ValueError: unknown profile
        """
        better = Profile.parse(profile).is_default
        return cls(**{f.name: better for f in fields(cls) if PROFILE_SWITCH in f.metadata})
