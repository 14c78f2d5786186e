"""The three ``fs/*`` events (REFERENCE-SPEC §1.4). The provider never reads the actor.

``fs/write-intent`` — waterfall ``(target, actor, next) -> WriteIntent | None``.
    Single-slot decision for the next ``write_text``; the write tool's default is ``None``
    (unconditional). The policy answers without calling ``next``.

``fs/edit-intent`` — waterfall ``(target, actor, next) -> EditIntent | None``.
    Single-slot decision for the next ``edit_text``; a listener may raise (the policy raises
    ``FS_NOT_OBSERVED``).

``fs/observed`` — emit ``(target, version, actor) -> None``.
    Fired after a successful read/write/edit. Listeners are synchronous side-effect-only
    recorders; an exception propagates and fails the tool call although the mutation
    happened. ``version`` is ``None`` when a default-profile read found no file
    (an *absence* observation, DEVIATIONS D8).
"""

from __future__ import annotations

__all__ = ("FS_EDIT_INTENT", "FS_OBSERVED", "FS_WRITE_INTENT")

FS_WRITE_INTENT = "fs/write-intent"
FS_EDIT_INTENT = "fs/edit-intent"
FS_OBSERVED = "fs/observed"
