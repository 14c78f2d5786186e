"""The rewind planner (pure, no I/O): from the changes made after a point and what each file
is now, what to write to bring every file back to its state at that point, and what to refuse
(docs/HISTORY.md "Library").

Two passes, so the caller does its I/O in between:

1. ``spans(changes)``: for every file the changes touched, the state to restore (the before-
   state of its first change after the point) and the state this owner's last change left
   (``Expected``), which the file must still be in;
2. ``decide(spans, currents, …)``: given each file's ``Current`` state (looked at once, before
   any write), the plan: ``Action`` s to make, files already there, and refusals, with the
   caller's per-file choices (``skip``, ``force``).

Never clobbers: a file not in the state the owner's last change left (someone else changed it
since) is refused, unless the caller forces or skips it; a file already in its state at the
point is left alone, whoever made it so. A pending change (its end never
recorded) accepts either of its states (its after-state by the digest of the bytes it was about
to leave, when the recorder knew them).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from .model import Before, FileChange

__all__ = ("Action", "Current", "Expected", "Plan", "Refusal", "Span", "decide", "spans")


@dataclass(frozen=True, slots=True, kw_only=True)
class Expected:
    """The state the owner's last change of a file left: ``absent``; ``present`` at ``version``
    (or with the bytes named ``digest``); or ``either`` (a pending change: its ``before`` state,
    or its after-state: absent when ``after_absent``, else the bytes named ``digest``, or any
    file when that is not known)."""

    kind: Literal["absent", "present", "either"]
    version: str | None = None
    before: Before | None = None
    after_absent: bool = False
    digest: str | None = None
    """the SHA-256 of the bytes the change left (or, pending, was about to leave), when known:
    a file with those bytes is in that state whatever its version (DEVIATIONS D29: the same
    bytes are no change), and a pending change's file must hold them or its before-state's"""


@dataclass(slots=True, kw_only=True)
class Span:
    """One file's part in a rewind: its changes after the point, oldest first (a move counts
    for both its names, with ``role`` ``source``/``dest``)."""

    key: str
    path: str
    target: Before
    effects: list[tuple[FileChange, str]] = field(default_factory=list)
    expected: Expected = field(default_factory=lambda: Expected(kind="absent"))


@dataclass(frozen=True, slots=True, kw_only=True)
class Current:
    """A file as the rewind found it: whether it exists, its version, whether that is the
    expected one (``Provider.is_current``), and the SHA-256 of its bytes when read."""

    exists: bool
    version: str | None = None
    at_expected: bool = False
    digest: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Action:
    """One write of a rewind.

    * ``restore``: write the blob ``digest`` (``mode``) at ``key``, guarded by ``guard``
      (``None``: the file must be absent);
    * ``remove``: delete ``key`` at ``guard``;
    * ``move``: move ``from_key`` (at ``guard``) back to ``key``;
    * ``reverse_edit``: apply ``edits`` (``(find, put)`` literal replacements, in order) to
      ``key``, the first guarded by ``guard``.
    """

    kind: Literal["restore", "remove", "move", "reverse_edit"]
    key: str
    path: str
    guard: str | None = None
    digest: str | None = None
    mode: int | None = None
    from_key: str | None = None
    from_path: str | None = None
    edits: tuple[tuple[str, str], ...] = ()
    forced: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class Refusal:
    """A file the rewind will not touch: ``why`` says what changed (``created``, ``deleted``,
    ``changed`` since this owner's last change) or that its before-state was not kept
    (``unrestorable``: ``reason``)."""

    key: str
    path: str
    why: Literal["created", "deleted", "changed", "unrestorable"]
    reason: str
    skipped: bool = False
    """the caller chose to skip it (the rest of the rewind goes on)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    """What a rewind does: ``actions`` in the order to make them, ``unchanged`` files (already
    in their state at the point), ``refusals``. ``refused`` is true when a refusal was not
    skipped: then nothing is written."""

    actions: tuple[Action, ...] = ()
    unchanged: tuple[str, ...] = ()
    refusals: tuple[Refusal, ...] = ()

    @property
    def refused(self) -> bool:
        """Whether the whole rewind is refused (a refusal the caller did not skip)."""
        return any(not r.skipped for r in self.refusals)


def _after(change: FileChange, role: str) -> Expected:
    absent = change.op == "delete" or role == "source"
    digest = None if absent or change.op == "rename" else change.after_digest
    if change.pending:
        before = Before.absent() if role == "dest" else change.before
        return Expected(kind="either", before=before, after_absent=absent, digest=digest)
    if absent:
        return Expected(kind="absent")
    return Expected(kind="present", version=change.after_version, digest=digest)


def spans(changes: Iterable[FileChange]) -> dict[str, Span]:
    """Every file ``changes`` touched (in the order first touched), with the state to restore
    and the state expected now.

    :param changes: the changes made after the rewind's point, oldest first
    """
    out: dict[str, Span] = {}
    for change in changes:
        roles = [(change.key, change.path, "self" if change.op != "rename" else "source", change.before)]
        if change.op == "rename" and change.dest_key is not None:
            roles.append((change.dest_key, change.dest_path or change.dest_key, "dest", Before.absent()))
        for key, path, role, before in roles:
            span = out.get(key)
            if span is None:
                span = out[key] = Span(key=key, path=path, target=before)
            span.path = path
            span.effects.append((change, role))
            span.expected = _after(change, role)
    return out


def _matches(expected: Expected, current: Current) -> bool:
    if expected.kind == "absent":
        return not current.exists
    held = expected.digest is not None and current.digest == expected.digest
    if expected.kind == "present":
        return current.exists and (current.at_expected or held)
    before = expected.before
    if current.exists != (not expected.after_absent):
        if before is None or before.kind == "absent":
            return not current.exists
        return current.exists and before.kind == "blob" and current.digest == before.digest
    if expected.after_absent or expected.digest is None or current.digest is None or held:
        return True  # absent as the change leaves it; or bytes not known (or not read): either state
    return before is not None and before.kind == "blob" and current.digest == before.digest


def _why(expected: Expected, current: Current) -> tuple[Literal["created", "deleted", "changed"], str]:
    if current.exists and (expected.kind == "absent" or (expected.kind == "either" and expected.after_absent)):
        return "created", "created since this owner's last change"
    if not current.exists:
        return "deleted", "deleted since this owner's last change"
    return "changed", "changed since this owner's last change"


def _reverse_edits(span: Span) -> tuple[tuple[str, str], ...] | None:
    edits = []
    for change, _role in span.effects:
        before = change.before
        if change.op != "edit" or before.kind != "replacement" or before.old is None or before.new is None:
            return None
        edits.append((before.new, before.old))
    return tuple(reversed(edits))


def _move_back(span: Span, all_spans: Mapping[str, Span], currents: Mapping[str, Current]) -> Action | None:
    """A move back when the file's one change after the point is a completed move that its
    destination's one change is too, and it is still there at that version."""
    if len(span.effects) != 1:
        return None
    change, role = span.effects[0]
    if role != "source" or change.pending or change.dest_key is None:
        return None
    dest = all_spans.get(change.dest_key)
    if dest is None or len(dest.effects) != 1:
        return None
    here, there = currents.get(span.key), currents.get(dest.key)
    if here is None or there is None or here.exists or not (there.exists and there.at_expected):
        return None
    return Action(kind="move", key=span.key, path=span.path, guard=there.version, from_key=dest.key,
                  from_path=dest.path)


def decide(all_spans: Mapping[str, Span], currents: Mapping[str, Current], *, skip_changed: bool = False,
           skip: Collection[str] = (), force: Collection[str] = ()) -> Plan:
    """The plan for ``all_spans`` (``spans``) given each file's ``currents`` (by key).

    :param skip_changed: skip every file someone else changed (and every unrestorable one)
        instead of refusing the rewind
    :param skip: paths (display paths or keys) to skip in the same way
    :param force: paths to restore even though someone else changed them (their current
        content is replaced; an unrestorable file cannot be forced)
    """
    actions: list[Action] = []
    unchanged: list[str] = []
    refusals: list[Refusal] = []
    moved: set[str] = set()

    def chosen(span: Span, among: Collection[str]) -> bool:
        return span.key in among or span.path in among

    for span in all_spans.values():
        if span.key in moved:
            continue
        current = currents.get(span.key, Current(exists=False))
        target = span.target
        if (target.kind == "absent" and not current.exists) or (
                target.kind == "blob" and current.exists and current.digest == target.digest):
            unchanged.append(span.path)  # already as at the point, whoever made it so: nothing to write
            continue
        ok = _matches(span.expected, current)
        forced = not ok and chosen(span, force)
        if not ok and not forced:
            why, reason = _why(span.expected, current)
            refusals.append(Refusal(key=span.key, path=span.path, why=why, reason=reason,
                                    skipped=skip_changed or chosen(span, skip)))
            continue
        if target.kind == "absent":
            actions.append(Action(kind="remove", key=span.key, path=span.path, guard=current.version, forced=forced))
            continue
        if target.kind == "blob":
            move = None if forced else _move_back(span, all_spans, currents)
            if move is not None:
                moved.add(move.from_key or "")
                actions.append(move)
                continue
            actions.append(Action(kind="restore", key=span.key, path=span.path,
                                  guard=current.version if current.exists else None, digest=target.digest,
                                  mode=target.mode, forced=forced))
            continue
        edits = _reverse_edits(span) if target.kind == "replacement" and current.exists else None
        if edits is not None:
            actions.append(Action(kind="reverse_edit", key=span.key, path=span.path, guard=current.version,
                                  edits=edits, forced=forced))
            continue
        reason = target.reason or "its content before the change was not kept"
        refusals.append(Refusal(key=span.key, path=span.path, why="unrestorable", reason=f"not restorable: {reason}",
                                skipped=skip_changed or chosen(span, skip)))
    order = {"remove": 0, "move": 1, "restore": 2, "reverse_edit": 3}
    actions.sort(key=lambda a: order[a.kind])
    return Plan(actions=tuple(actions), unchanged=tuple(unchanged), refusals=tuple(refusals))
