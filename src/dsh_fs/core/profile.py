"""The ``profile`` setting: ``default`` (dsh-fs behaviour) or ``reference`` (byte-exact with the
TypeScript reference). See ``spec/DEVIATIONS.md``; every deviation checks it in one place."""

from __future__ import annotations

import enum

__all__ = ("Profile",)


class Profile(str, enum.Enum):
    """Which behaviour the tool stack follows (DEVIATIONS.md, "Only in the default profile")."""

    DEFAULT = "default"
    """dsh-fs behaviour: deviations D1–D12 on."""
    REFERENCE = "reference"
    """byte-exact with the TypeScript reference (A1–A6 still apply)."""

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
