"""The observation policy plugin (``fs-policy``): read before write/edit, via ``fs/*`` events only."""

from .plugin import ABSENT as ABSENT, FsPolicy as FsPolicy, ObservationStore as ObservationStore, owner_of as owner_of

__all__ = ("ABSENT", "FsPolicy", "ObservationStore", "owner_of")
