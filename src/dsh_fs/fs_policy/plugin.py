"""The observation policy (REFERENCE-SPEC §3; DEVIATIONS D8): read before write/edit.

Registers three listeners and keeps an in-memory store; no service, no I/O. The store maps
an owner (the calling ``Session`` object, weakly) to ``target key → observation``, where an
observation is a version (the file was seen at that version) or ``ABSENT`` (a default-
profile read found no file, D8).

Decisions (first-wins; the listeners never call ``next``):

* ``fs/write-intent``: observed at V → ``ReplaceIfVersion(V)``; otherwise (or observed
  absent) → ``CreateIfAbsent()``.
* ``fs/edit-intent``: observed at V → ``EditIntent(V)``; observed absent → FS_NOT_FOUND
  ``cannot edit "<path>": not found`` (D8); otherwise FS_NOT_OBSERVED
  ``edit requires reading "<path>" first``.
* ``fs/observed``: record (overwrite) for the owner; no owner → nothing.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any, ClassVar, Final

from ..core.context import Scope
from ..fs.errors import edit_not_observed, not_found
from ..fs.events import FS_EDIT_INTENT, FS_OBSERVED, FS_WRITE_INTENT
from ..tool_common.switches import ToolSwitches
from ..fs.types import CreateIfAbsent, EditIntent, ReplaceIfVersion, Target, Version, WriteIntent

__all__ = ("ABSENT", "FsPolicy", "ObservationStore", "owner_of")


class _Absent:
    __slots__ = ()

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Final = _Absent()
"""the observation "this session saw no file here" (D8)"""

Observation = Version | _Absent


def owner_of(actor: object) -> object | None:
    """The observation owner of a dispatch: ``actor.session`` when present (§3.2)."""
    return getattr(actor, "session", None)


class ObservationStore:
    """Observations per owner (held weakly) and target key.

    :param max_per_owner: how many targets one owner's observations may cover; past it the
        least recently recorded observation is forgotten (so a later write or edit of that
        file fails safe with ``FS_NOT_OBSERVED`` until it is read again). ``None``: unbounded.
        A server with many sessions bounds each session's memory with it.
    :raises ValueError: for a ``max_per_owner`` below 1
    """

    def __init__(self, *, max_per_owner: int | None = None) -> None:
        if max_per_owner is not None and max_per_owner < 1:
            raise ValueError("max_per_owner must be at least 1")
        self.max_per_owner = max_per_owner
        self._by_owner: weakref.WeakKeyDictionary[object, dict[str, Observation]] = weakref.WeakKeyDictionary()

    def get(self, owner: object | None, key: str) -> Observation | None:
        """The owner's observation of ``key``, or ``None`` when it has none."""
        if owner is None:
            return None
        seen = self._by_owner.get(owner)
        return None if seen is None else seen.get(key)

    def record(self, owner: object | None, key: str, observation: Observation) -> None:
        """Record (overwrite) an observation; a ``None`` owner records nothing. Past
        ``max_per_owner`` the owner's least recently recorded observation is forgotten."""
        if owner is None:
            return
        seen = self._by_owner.setdefault(owner, {})
        seen.pop(key, None)  # re-recorded: now the most recent
        seen[key] = observation
        if self.max_per_owner is not None:
            while len(seen) > self.max_per_owner:
                del seen[next(iter(seen))]

    def snapshot(self, owner: object) -> dict[str, Observation]:
        """A copy of everything ``owner`` has observed (for persistence and tests)."""
        return dict(self._by_owner.get(owner, {}))


class FsPolicy:
    """The ``fs-policy`` plugin: ``ctx.plugin(FsPolicy)``. Unloading drops all state.

    :param store: share an ``ObservationStore`` (e.g. one restored from disk); default: fresh
    """

    name: ClassVar[str] = "fs-policy"

    @classmethod
    def apply(cls, scope: Scope, /, store: ObservationStore | None = None) -> None:
        policy = cls(store if store is not None else ObservationStore(),
                     absence=ToolSwitches.of(scope.profile).record_absence)
        # first-wins by registration order (§3.3): load it before any other decider
        scope.on(FS_WRITE_INTENT, policy.write_intent)
        scope.on(FS_EDIT_INTENT, policy.edit_intent)
        scope.on(FS_OBSERVED, policy.observed)
        scope.effect(policy.drop)

    def __init__(self, store: ObservationStore, *, absence: bool) -> None:
        self.store = store
        self.absence = absence

    def drop(self) -> None:
        self.store = ObservationStore()

    async def write_intent(self, target: Target, actor: Any, next_: Callable[[], Any]) -> WriteIntent:
        prior = self.store.get(owner_of(actor), target.key)
        if isinstance(prior, str):
            return ReplaceIfVersion(Version(prior))
        return CreateIfAbsent()

    async def edit_intent(self, target: Target, actor: Any, next_: Callable[[], Any]) -> EditIntent:
        prior = self.store.get(owner_of(actor), target.key)
        if isinstance(prior, str):
            return EditIntent(Version(prior))
        if prior is ABSENT:
            raise not_found("edit", target.display_path)
        raise edit_not_observed(target.display_path)

    def observed(self, target: Target, version: Version | None, actor: Any) -> None:
        if version is None:
            if self.absence:
                self.store.record(owner_of(actor), target.key, ABSENT)
            return
        self.store.record(owner_of(actor), target.key, version)
