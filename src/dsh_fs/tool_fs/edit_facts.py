"""``edit`` of a path that is missing or not a regular file says so first (DEVIATIONS D26,
D27). Pure decisions over one ``stat``; the I/O is the caller's provider.

REFERENCE-SPEC §4.8 asks the policy (``fs/edit-intent``) before anything looks at the file, so
an edit of a missing path answers "requires reading … first" (and without the policy, the
provider's "file changed since it was read"); the model then reads and learns the real fault.
In the default profile a refusal that can mean a missing path or a non-file is checked with one
``stat`` — only then, so a successful edit still never stats (§4.11) — and replaced by what is
wrong: ``not found`` (with ``read``'s lookalike-name hint, D19) or ``not a regular file``.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Self

from ..core.profile import Profile
from ..fs.errors import FsError, FsErrorCode, not_found, not_regular_file
from ..fs.filesystem import FileSystem
from ..fs.provider_rules import PROFILE_SWITCH, profile_switch
from ..fs.types import Target
from .lookup import lookalike_hint
from .remedies import with_hint

__all__ = ("EditFactRules", "what_is_wrong")

_MAYBE = frozenset({FsErrorCode.NOT_OBSERVED, FsErrorCode.STALE_VERSION, FsErrorCode.NOT_FOUND,
                    FsErrorCode.NOT_REGULAR_FILE})
"""refusals an edit of a missing path or a non-file can come back with"""


@dataclass(frozen=True, slots=True, kw_only=True)
class EditFactRules:
    """The profile switches of ``what_is_wrong``. Build with ``EditFactRules.for_profile``."""

    missing_first: bool = profile_switch("D26")
    """D26: ``edit`` of a missing path says ``not found`` (with the lookalike hint)"""
    not_file_first: bool = profile_switch("D27")
    """D27: ``edit`` of a directory or another non-file says ``not a regular file``"""

    @classmethod
    def for_profile(cls, profile: Profile | str | None, /) -> Self:
        """Every switch on in ``default``, off in ``reference``.

        :raises ValueError: unknown profile
        """
        better = Profile.parse(profile).is_default
        return cls(**{f.name: better for f in fields(cls) if PROFILE_SWITCH in f.metadata})


async def what_is_wrong(fs: FileSystem, target: Target, err: FsError, rules: EditFactRules,
                        *, signal: object = None) -> FsError:
    """The error to report for an ``edit`` of ``target`` refused with ``err``: ``not found`` or
    ``not a regular file`` when a ``stat`` shows that is the fault (and the rule is on), else
    ``err`` itself. Never raises an ``FsError`` of its own (a failing ``stat`` keeps ``err``)."""
    if err.code not in _MAYBE or not (rules.missing_first or rules.not_file_first):
        return err
    try:
        info = await fs.stat(target, signal=signal)  # type: ignore[arg-type]
    except FsError:
        return err
    if info is None:
        if not rules.missing_first:
            return err
        hint = await lookalike_hint(fs, target.display_path, signal=signal)  # type: ignore[arg-type]
        return with_hint(not_found("edit", target.display_path), hint)
    if info.type != "file" and rules.not_file_first:
        return not_regular_file("edit", target.display_path)
    return err
