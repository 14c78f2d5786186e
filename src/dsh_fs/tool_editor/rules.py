"""``EditorRules``: what the text-editor faces do differently per profile (docs/DEVIATIONS.md
E19–E22). Pure: no I/O.

Every field is a ``profile_switch`` (on in ``default``, off in ``reference``), built once per
executor by ``EditorRules.for_profile``; ``grep E20`` finds the one place each is decided.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Self

from ..core.profile import Profile
from ..fs.provider_rules import PROFILE_SWITCH, profile_switch

__all__ = ("EditorRules",)


@dataclass(frozen=True, slots=True, kw_only=True)
class EditorRules:
    """Per-profile behaviour of both editor faces. Build with ``EditorRules.for_profile``."""

    refuse_no_op_replace: bool = profile_switch("E19")
    """E19: ``str_replace`` with ``new_str`` equal to ``old_str`` is refused before any I/O"""
    cap_file_view: bool = profile_switch("E20")
    """E20: an Anthropic file ``view`` without ``max_characters`` is clipped at 16,000
    characters, with the ``view_range`` that continues it"""
    content_lines: bool = profile_switch("E21")
    """E21: ``str_replace_editor`` counts and inserts lines as the Anthropic face does (a final
    line break ends the last line; ``new_str`` of ``insert`` is whole lines)"""
    clamp_view_range: bool = profile_switch("E22")
    """E22: a ``view_range`` ending past the last line shows to the end, with a note saying so"""

    @classmethod
    def for_profile(cls, profile: Profile | str | None, /) -> Self:
        """The rules of ``profile`` (``None`` = default): every switch on in ``default``, off in
        ``reference``.

        :raises ValueError: unknown profile
        """
        better = Profile.parse(profile).is_default
        return cls(**{f.name: better for f in fields(cls) if PROFILE_SWITCH in f.metadata})
