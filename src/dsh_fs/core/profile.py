"""The ``profile`` setting: ``default`` (dsh-fs behaviour) or ``reference`` (byte-exact with the
TypeScript reference). See ``spec/DEVIATIONS.md`` and ``docs/DEVIATIONS.md``.

Every default-profile deviation is decided by one named *profile switch*: a ``bool`` field of
a frozen dataclass derived from ``ProfileSwitches`` and declared with ``profile_switch("<IDs>")``
(on in ``default``, off in ``reference``), built from the profile by ``for_profile``. The
providers' switches are ``fs.provider_rules.TextRules`` (and its subclasses); the layers
above the seam have ``tool_common.switches.ToolSwitches``.
"""

from __future__ import annotations

import enum
from dataclasses import field, fields
from typing import Any, Self

__all__ = ("PROFILE_SWITCH", "Profile", "ProfileSwitches", "profile_switch")

PROFILE_SWITCH = "dsh_fs.profile_switch"
"""``dataclasses.field`` metadata key marking a profile switch (its value: the deviation IDs)"""


class Profile(str, enum.Enum):
    """Which behaviour the tool stack follows (DEVIATIONS.md, "Only in the default profile")."""

    DEFAULT = "default"
    """dsh-fs behaviour: every profile switch on."""
    REFERENCE = "reference"
    """byte-exact with the TypeScript reference: every profile switch off (the structural
    deviations, A1–A7 among them, still apply)."""

    @classmethod
    def parse(cls, value: "Profile | str | None") -> "Profile":
        """Accept a ``Profile``, its string value or ``None`` (= default).

        :raises ValueError: for any other value
        """
        if value is None:
            return cls.DEFAULT
        if isinstance(value, cls):
            return value
        try:
            return cls(value)
        except ValueError:
            raise ValueError(f'profile must be "default" or "reference", not {value!r}') from None

    @property
    def is_default(self) -> bool:
        return self is Profile.DEFAULT


def profile_switch(deviations: str) -> Any:
    """Declare a dataclass field as a profile switch: ``True`` in the ``default`` profile,
    ``False`` in ``reference``. It has no default, so only ``for_profile`` (or a caller passing
    every switch) can build the value — a new switch can never silently be on in ``reference``.

    :param deviations: the deviation IDs the switch turns on (``"D1, D4"``): a test checks
        that every ID of the deviation registers is named by exactly one switch
    """
    return field(metadata={PROFILE_SWITCH: deviations})


class ProfileSwitches:
    """Base of the frozen dataclasses that hold profile switches (``profile_switch`` fields)
    and, in subclasses, other settings. Build one with ``for_profile``."""

    __slots__ = ()

    @classmethod
    def switches(cls) -> tuple[str, ...]:
        """The names of this class's profile switches, in declaration order."""
        return tuple(f.name for f in fields(cls) if PROFILE_SWITCH in f.metadata)  # type: ignore[arg-type]

    @classmethod
    def deviations(cls) -> dict[str, tuple[str, ...]]:
        """Switch name → the deviation IDs it decides (``("D1",)``), in declaration order."""
        return {
            f.name: tuple(part.strip() for part in f.metadata[PROFILE_SWITCH].split(","))
            for f in fields(cls)  # type: ignore[arg-type]
            if PROFILE_SWITCH in f.metadata
        }

    @classmethod
    def for_profile(cls, profile: Profile | str | None, /, **settings: Any) -> Self:
        """The value for ``profile`` (``None`` = default): every switch on in ``default``, off
        in ``reference``; ``settings`` gives the other (non-switch) fields of a subclass.

        :raises ValueError: unknown profile
        :raises TypeError: when ``settings`` names a switch or an unknown field
        """
        on = Profile.parse(profile).is_default
        switches = cls.switches()
        clash = sorted(set(switches) & set(settings))
        if clash:
            raise TypeError(f"{cls.__name__}.for_profile: {', '.join(clash)} follow the profile")
        return cls(**dict.fromkeys(switches, on), **settings)
