"""``MemoryHistoryStore``: the history of in-process sessions, in this process's memory,
bounded per owner (``max_owner_bytes``; its oldest steps dropped first). Nothing outlives the
process: a named session's history is kept by ``SqliteHistoryStore`` instead.
"""

from __future__ import annotations

import itertools
import time
import uuid
from dataclasses import dataclass, field, replace

from .model import Checkpoint, FileChange, History, Step
from .store import DEFAULT_MAX_OWNER_BYTES, CallMeta, HistoryStore, Intent

__all__ = ("MemoryHistoryStore",)


@dataclass(slots=True)
class _Owner:
    steps: dict[int, Step] = field(default_factory=dict)
    by_key: dict[str, int] = field(default_factory=dict)
    changes: dict[int, tuple[int, FileChange]] = field(default_factory=dict)
    checkpoints: list[Checkpoint] = field(default_factory=list)
    next_number: int = 1
    dropped: int = 0
    refs: dict[str, int] = field(default_factory=dict)
    """kept copy → how many of this owner's changes name it"""
    kept: int = 0
    """the bytes of the copies in ``refs``"""


class MemoryHistoryStore(HistoryStore):
    """Histories in memory.

    :param max_owner_bytes: the bytes of kept copies one owner may refer to (``DEFAULT_MAX_OWNER_BYTES``)
    """

    def __init__(self, *, max_owner_bytes: int = DEFAULT_MAX_OWNER_BYTES) -> None:
        if max_owner_bytes < 0:
            raise ValueError("max_owner_bytes must not be negative")
        self.max_owner_bytes = max_owner_bytes
        self._owners: dict[str, _Owner] = {}
        self._blobs: dict[str, bytes] = {}
        self._uses: dict[str, int] = {}
        """kept copy → how many changes of all owners name it"""
        self._ids = itertools.count(1)

    def _owner(self, owner: str) -> _Owner:
        found = self._owners.get(owner)
        if found is None:
            found = self._owners[owner] = _Owner()
        return found

    async def begin(self, call: CallMeta, intent: Intent, blob: bytes | None) -> int:
        state = self._owner(call.owner)
        if blob is not None and intent.before.digest is not None:
            self._blobs.setdefault(intent.before.digest, blob)
        number = state.by_key.get(call.step_key)
        if number is None or number not in state.steps:  # new, or each earlier change abandoned
            number = state.by_key[call.step_key] = state.next_number
            state.next_number += 1
            state.steps[number] = Step(number=number, time=call.time, tool=call.tool, owner=call.owner,
                                       call_id=call.call_id)
        change_id = next(self._ids)
        self._ref(state, intent.before.digest, +1)
        change = FileChange(id=change_id, op=intent.op, key=intent.key, path=intent.path,  # type: ignore[arg-type]
                            before=intent.before, before_version=intent.before_version,
                            after_digest=intent.after_digest, dest_key=intent.dest_key, dest_path=intent.dest_path)
        state.changes[change_id] = (number, change)
        step = state.steps[number]
        state.steps[number] = replace(step, changes=(*step.changes, change))
        self._trim(state, keep=number)
        return change_id

    def _ref(self, state: _Owner, digest: str | None, delta: int) -> None:
        """Count a change naming ``digest`` in (``+1``) or out (``-1``); a copy no change of any
        owner names any more is deleted."""
        if digest is None:
            return
        count = state.refs.get(digest, 0) + delta
        size = len(self._blobs.get(digest, b""))
        if count > 0:
            if digest not in state.refs:
                state.kept += size
            state.refs[digest] = count
        elif digest in state.refs:
            del state.refs[digest]
            state.kept -= size
        self._uses[digest] = self._uses.get(digest, 0) + delta
        if self._uses[digest] <= 0:
            del self._uses[digest]
            self._blobs.pop(digest, None)

    def _trim(self, state: _Owner, *, keep: int) -> None:
        while state.kept > self.max_owner_bytes:
            oldest = min(state.steps)
            if oldest == keep:
                return
            step = state.steps.pop(oldest)
            state.by_key = {k: n for k, n in state.by_key.items() if n != oldest}
            for change in step.changes:
                state.changes.pop(change.id, None)
                self._ref(state, change.before.digest, -1)
            state.dropped = oldest

    def _replace_change(self, owner: str, change_id: int, new: FileChange | None) -> None:
        state = self._owners.get(owner)
        if state is None or change_id not in state.changes:
            return
        number, old = state.changes.pop(change_id)
        if new is None:
            self._ref(state, old.before.digest, -1)
        step = state.steps[number]
        changes = tuple(c for c in step.changes if c.id != change_id) if new is None else tuple(
            new if c.id == change_id else c for c in step.changes)
        if new is not None:
            state.changes[change_id] = (number, new)
        if changes:
            state.steps[number] = replace(step, changes=changes)
        else:
            del state.steps[number]
            if state.next_number == number + 1 and all(p.step < number for p in state.checkpoints):
                state.next_number = number  # the newest step, no checkpoint after it: no gap
                state.by_key = {k: n for k, n in state.by_key.items() if n != number}

    async def complete(self, owner: str, change_id: int, after_version: str, after_digest: str | None = None) -> None:
        state = self._owners.get(owner)
        if state is None or change_id not in state.changes:
            return
        change = state.changes[change_id][1]
        self._replace_change(owner, change_id, replace(change, after_version=after_version,
                                                                   after_digest=after_digest or change.after_digest))

    async def abandon(self, owner: str, change_id: int) -> None:
        self._replace_change(owner, change_id, None)

    async def history(self, owner: str) -> History:
        state = self._owners.get(owner)
        if state is None:
            return History()
        names: dict[int, list[str]] = {}
        for point in state.checkpoints:
            names.setdefault(point.step, []).append(point.name)
        steps = tuple(replace(state.steps[n], checkpoints=tuple(names.get(n, ()))) for n in sorted(state.steps))
        return History(steps=steps, checkpoints=tuple(state.checkpoints), dropped=state.dropped, bytes=state.kept)

    async def blob(self, digest: str) -> bytes | None:
        return self._blobs.get(digest)

    async def checkpoint(self, owner: str, name: str) -> str:
        state = self._owner(owner)
        point = Checkpoint(id=uuid.uuid4().hex[:12], name=name, step=state.next_number - 1, time=time.time())
        state.checkpoints.append(point)
        return point.id

    async def forget(self, owner: str) -> int:
        state = self._owners.get(owner)
        if state is None:
            return 0
        for _number, change in state.changes.values():
            self._ref(state, change.before.digest, -1)
        del self._owners[owner]
        return len(state.steps)
