"""``S3HistoryStore``: histories in an S3 bucket under a reserved prefix, so several machines
serving one bucket share them (docs/HISTORY.md "How it is stored").

Objects, below ``prefix`` (default ``.dsh-fs-history/``; keep it outside the served prefix, or
in another bucket, so no tool can list or change it), per owner ``owners/<owner hex>/``:

* ``steps/<time ns>-<step key>/<change id>.<form>``: a change's intent, written before the
  mutation: one line of JSON (the call, the path, the before-state, the digest of the bytes the
  mutation will leave when known, and the ends of this store's earlier changes), then, for the
  form ``i.<sha256>``, the kept copy itself. The form ``r.<sha256>`` names a copy held by another
  object of the owner's history, ``n`` keeps none;
* ``blobs/<sha256>``: a copy whose holder was dropped (or abandoned) while other changes
  still name it;
* ``ends/<change id>-<random>.json``: the ends this store had not yet written, when it closes;
* ``checkpoints/<time ns>-<id>.json`` and ``dropped.json``.

So a recorded mutation costs one request: the intent, with its copy and the previous ends
folded in (the provider's own read supplies the before-state: ``fs.witness``). A change's end
(its version after) is carried by the next intent this store writes for the owner, or by its
``ends`` object when it reads the history or closes; until then the change reads as pending, and a rewind accepts its
file in its before-state or with the bytes it was about to leave.

The same bytes are kept once per owner as far as this store knows: its own copies and those the
last listing of the owner's keys named (two machines recording the same bytes between two
listings each keep a copy). The byte cap is checked with one listing (every object's size is in
it) once this store has added the room the last check left below the cap (at least an eighth of
the cap; the first check of a process comes after that eighth); past the cap, the oldest steps
are dropped down to ``TRIM_TO`` of it (so checks stay rare), when a check or a read of the
history finds it over. An owner is then over its cap by at most an eighth of it per machine
recording for it. A change named by ``r.`` whose holder another machine dropped between this
store's listing and its intent has no copy: a rewind of that file says it is not restorable.
Steps are numbered when the history is read, in the order of their keys (the time a step's first
change was recorded, then its random key): machines whose clocks disagree may see a step
recorded later numbered before one recorded earlier. With object versions turned on in the
bucket, every overwritten object's old bytes are also kept by S3 itself.
"""

from __future__ import annotations

import itertools
import json
import time
import uuid
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import anyio

from ..fs_s3.errors import S3Failure
from ..fs_s3.location import parse_url
from ..fs_s3.store import ObjectStore, read_chunk
from .model import Before, Checkpoint, FileChange, History, Step
from .store import DEFAULT_MAX_OWNER_BYTES, CallMeta, HistoryStore, Intent

__all__ = ("DEFAULT_PREFIX", "KNOWN_MAX", "S3HistoryStore", "TRIM_TO", "history_place")

DEFAULT_PREFIX: Final = ".dsh-fs-history/"
KNOWN_MAX: Final = 4096
"""digests of kept copies one store remembers per owner (the most recently kept first)"""
TRIM_TO: Final = 0.75
"""past the cap, the oldest steps are dropped until the copies fill at most this share of it (so
the next check is far off)"""
_PEEK: Final = 64 * 1024
"""bytes of an intent object read to find its line of JSON (a longer line is read whole)"""


def history_place(url: str) -> tuple[str, str]:
    """The bucket and key prefix of a history kept at ``url`` (``s3://bucket[/prefix]``; no
    prefix: ``DEFAULT_PREFIX``), as ``S3HistoryStore`` takes them.

    :raises ValueError: not an ``s3://`` URL with a bucket (``fs_s3.location.parse_url``)
    """
    place = parse_url(url)
    return place.bucket, place.prefix or DEFAULT_PREFIX


def _hex(owner: str) -> str:
    return owner.encode("utf-8", "surrogatepass").hex()


def _json(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


@dataclass(frozen=True, slots=True)
class _Key:
    """One intent object as the listing shows it."""

    key: str
    step: str
    change_id: int
    form: str
    """``n``, ``i`` (holds its copy) or ``r`` (names one held elsewhere)"""
    digest: str | None
    size: int
    offset: int = 0
    """where its copy starts (``i``: after its line of JSON)"""


@dataclass(slots=True)
class _Listing:
    """An owner's keys, parsed."""

    steps: dict[str, list[_Key]] = field(default_factory=dict)
    """step name → its intents, in change order; the steps in key order"""
    blobs: dict[str, tuple[str, int]] = field(default_factory=dict)
    """digest → (key, size) of ``blobs/``"""
    ends: list[tuple[str, int]] = field(default_factory=list)
    """(key, newest change id it ends)"""
    checkpoints: list[str] = field(default_factory=list)
    dropped: bool = False
    """``dropped.json`` exists"""

    def kept(self) -> int:
        """Bytes of the copies the steps need (``_needed``)."""
        return _needed(self.steps, {digest: size for digest, (_key, size) in self.blobs.items()})


def _needed(steps: Mapping[str, list[_Key]], aside: Mapping[str, int]) -> int:
    """Bytes of the copies ``steps`` need: those their intents hold, and those kept aside
    (``aside``: digest → size, the ``blobs/`` objects) that they name and hold nowhere else."""
    named: set[str] = set()
    held: set[str] = set()
    total = 0
    for keys in steps.values():
        for k in keys:
            if k.digest is not None:
                named.add(k.digest)
                if k.form == "i":
                    held.add(k.digest)
                    total += k.size - k.offset
    return total + sum(size for digest, size in aside.items() if digest in named and digest not in held)


@dataclass(slots=True)
class _Owner:
    """What this store knows of an owner between listings."""

    known: OrderedDict[str, None] = field(default_factory=OrderedDict)
    """digests of copies the owner's history holds"""
    ends: dict[str, list[str | None]] = field(default_factory=dict)
    """change id → [version after, digest after] not written yet"""
    room: int = 0
    """bytes this store may still add before it checks the cap"""

    def remember(self, digest: str) -> None:
        self.known[digest] = None
        self.known.move_to_end(digest)
        while len(self.known) > KNOWN_MAX:
            self.known.popitem(last=False)


class S3HistoryStore(HistoryStore):
    """Histories in ``bucket`` under ``prefix``.

    :param bucket: the bucket (the served one, or another)
    :param prefix: the reserved key prefix (ends with ``/``)
    :param endpoint_url: an S3-compatible endpoint (``None``: AWS)
    :param client_options: ``create_client`` keywords (credentials, region)
    :param max_owner_bytes: the bytes of kept copies one owner may refer to
    """

    def __init__(self, bucket: str, *, prefix: str = DEFAULT_PREFIX, endpoint_url: str | None = None,
                 client_options: Mapping[str, Any] | None = None,
                 max_owner_bytes: int = DEFAULT_MAX_OWNER_BYTES) -> None:
        if not prefix.endswith("/"):
            raise ValueError("the history prefix ends with /")
        if max_owner_bytes < 0:
            raise ValueError("max_owner_bytes must not be negative")
        self.max_owner_bytes = max_owner_bytes
        self.prefix = prefix
        self.objects = ObjectStore(bucket, endpoint_url=endpoint_url, client_options=client_options)
        self._owners: dict[str, _Owner] = {}
        self._pending: dict[int, tuple[str, _Key, dict[str, list[str | None]]]] = {}
        """this store's pending changes: id → (owner, intent, the ends it carried)"""
        self._where: dict[str, tuple[str, int]] = {}
        """digest → (key, offset) of a copy, as the last ``history`` read found it"""
        self._ids = itertools.count()

    def _base(self, owner: str) -> str:
        return f"{self.prefix}owners/{_hex(owner)}/"

    def _owner(self, owner: str) -> _Owner:
        state = self._owners.get(owner)
        if state is None:
            state = self._owners[owner] = _Owner(room=self._least_room())
        return state

    # -- recording ---------------------------------------------------------------------------
    async def begin(self, call: CallMeta, intent: Intent, blob: bytes | None) -> int:
        state = self._owner(call.owner)
        if state.room <= 0:
            await self._check(call.owner)
        before = intent.before
        form, copy = "n", b""
        if blob is not None and before.digest is not None:
            form, copy = ("r", b"") if before.digest in state.known else ("i", blob)
        change_id = time.time_ns() * 1000 + next(self._ids) % 1000
        step = f"{int(call.time * 1e9):020d}-{call.step_key}"
        ends, state.ends = state.ends, {}
        header = {"tool": call.tool, "call_id": call.call_id, "time": call.time, "op": intent.op, "key": intent.key,
                  "path": intent.path, "before": {k: getattr(before, k) for k in ("kind", "digest", "size", "mode",
                                                                                   "reason", "old", "new")},
                  "before_version": intent.before_version, "after_digest": intent.after_digest,
                  "dest_key": intent.dest_key, "dest_path": intent.dest_path, "ends": ends}
        line = _json(header) + b"\n"
        suffix = {"n": "n", "r": f"r.{before.digest}", "i": f"i.{before.digest}.{len(line)}"}[form]
        key = f"{self._base(call.owner)}steps/{step}/{change_id:026d}.{suffix}"
        data = line + copy
        try:
            await self.objects.put(key, data)
        except BaseException:
            state.ends = {**ends, **state.ends}  # still to be written
            raise
        self._pending[change_id] = (call.owner, _Key(key, step, change_id, form, before.digest, len(data),
                                                     len(line) if form == "i" else 0), ends)
        if form == "i" and before.digest is not None:
            state.remember(before.digest)
        state.room -= len(data)
        return change_id

    async def complete(self, owner: str, change_id: int, after_version: str, after_digest: str | None = None) -> None:
        if self._pending.pop(change_id, None) is not None:
            self._owner(owner).ends[str(change_id)] = [after_version, after_digest]

    async def abandon(self, owner: str, change_id: int) -> None:
        found = self._pending.pop(change_id, None)
        if found is None:
            return
        _owner, intent, carried = found
        state = self._owner(owner)
        if intent.form == "i" and intent.digest is not None:  # another change may name its copy already
            got = await self._copy_of(intent)
            if got is not None:
                await self.objects.put(f"{self._base(owner)}blobs/{intent.digest}", got)
        await self.objects.delete(intent.key)
        state.ends = {**carried, **state.ends}

    async def _flush(self, owner: str) -> None:
        """Write the owner's ends no intent has carried yet, as one ``ends/`` object."""
        state = self._owner(owner)
        if state.ends:
            ends, state.ends = state.ends, {}
            newest = max(int(i) for i in ends)
            try:
                await self.objects.put(f"{self._base(owner)}ends/{newest:026d}-{uuid.uuid4().hex[:8]}.json",
                                       _json({"ends": ends}))
            except BaseException:
                state.ends = {**ends, **state.ends}
                raise

    async def aclose(self) -> None:
        """Write the ends not yet carried by an intent (one object per owner), then close. A
        failure to write them leaves those changes pending, which a rewind accepts (their
        intents name the bytes they were about to leave)."""
        try:
            for owner in list(self._owners):
                try:
                    await self._flush(owner)
                except (S3Failure, OSError):
                    continue
        finally:
            await self.objects.aclose()

    # -- the byte cap ----------------------------------------------------------------------------
    async def _list(self, owner: str) -> _Listing:
        base = self._base(owner)
        out = _Listing()
        async for page in self.objects.list_all(base):
            for key, size, _mtime in page:
                rest = key[len(base):]
                if rest.startswith("steps/") and rest.count("/") == 2:
                    _, step, name = rest.split("/")
                    number, kind, digest, offset = (name.split(".") + ["", "", ""])[:4]
                    if number.isdigit() and kind in ("n", "i", "r") and (kind != "i" or offset.isdigit()):
                        out.steps.setdefault(step, []).append(_Key(key, step, int(number), kind, digest or None, size,
                                                                   int(offset) if kind == "i" else 0))
                elif rest.startswith("blobs/"):
                    out.blobs[rest[len("blobs/"):]] = (key, size)
                elif rest.startswith("ends/"):
                    number = rest[len("ends/"):].split("-", 1)[0]
                    out.ends.append((key, int(number) if number.isdigit() else 0))
                elif rest.startswith("checkpoints/"):
                    out.checkpoints.append(key)
                elif rest == "dropped.json":
                    out.dropped = True
        out.steps = {name: sorted(out.steps[name], key=lambda k: k.change_id) for name in sorted(out.steps)}
        return out

    def _least_room(self) -> int:
        """Bytes a store adds between two checks at least: an eighth of the cap."""
        return self.max_owner_bytes // 8

    async def _check(self, owner: str) -> None:
        """List the owner's keys, drop its oldest steps past the cap, and set the room left."""
        await self._trim(owner, await self._list(owner), None)

    async def _dropped(self, owner: str) -> int:
        got = await self.objects.get(self._base(owner) + "dropped.json")
        return 0 if got is None else int(json.loads(got[1])["dropped"])

    async def _copy_of(self, intent: _Key) -> bytes | None:
        got = await self.objects.get(intent.key)
        return None if got is None else got[1][intent.offset:]

    async def _trim(self, owner: str, listing: _Listing, dropped: int | None) -> int:
        """Past the cap, drop the oldest steps (never the newest) until the rest's copies fill at
        most ``TRIM_TO`` of it; a copy a remaining change names is kept as ``blobs/<sha256>``.
        Then set the room this store may add before its next check. Returns ``dropped`` (the
        steps dropped before; ``None``: read when needed), updated."""
        base = self._base(owner)
        state = self._owner(owner)
        gone: list[_Key] = []
        if listing.kept() > self.max_owner_bytes:
            if dropped is None:
                dropped = await self._dropped(owner) if listing.dropped else 0
            aside = {digest: size for digest, (_key, size) in listing.blobs.items()}
            while len(listing.steps) > 1 and _needed(listing.steps, aside) > self.max_owner_bytes * TRIM_TO:
                for k in listing.steps.pop(next(iter(listing.steps))):  # its copies stay while named
                    gone.append(k)
                    if k.form == "i" and k.digest is not None:
                        aside.setdefault(k.digest, k.size - k.offset)
                dropped += 1
        named = {k.digest for keys in listing.steps.values() for k in keys if k.digest}
        held = {k.digest for keys in listing.steps.values() for k in keys if k.form == "i" and k.digest} | set(
            listing.blobs)
        doomed = [k.key for k in gone]
        if gone:
            await self.objects.put(base + "dropped.json", _json({"dropped": dropped}))
            for k in gone:
                if k.form == "i" and k.digest in named and k.digest not in held:
                    copy = await self._copy_of(k)
                    if copy is not None:
                        await self.objects.put(f"{base}blobs/{k.digest}", copy)
                        listing.blobs[k.digest] = (f"{base}blobs/{k.digest}", len(copy))
                        held.add(k.digest)
        for digest, (key, _size) in list(listing.blobs.items()):
            if digest not in named:
                doomed.append(key)
                del listing.blobs[digest]
        oldest = min((k.change_id for keys in listing.steps.values() for k in keys), default=None)
        doomed.extend(key for key, newest in listing.ends if oldest is None or newest < oldest)
        if doomed:
            await self.objects.delete_many(doomed)
        state.known = OrderedDict.fromkeys(sorted(held & named))
        state.room = max(self.max_owner_bytes - listing.kept(), self._least_room())
        return dropped or 0

    # -- reading -------------------------------------------------------------------------------
    async def _header(self, key: str) -> dict[str, Any] | None:
        """An intent's line of JSON; ``None`` when it is gone."""
        async with self.objects.open(key, first=_PEEK) as got:
            if got is None:
                return None
            data = await read_chunk(got[1], _PEEK)
        if b"\n" not in data:
            whole = await self.objects.get(key)
            if whole is None:
                return None
            data = whole[1]
        return json.loads(data.partition(b"\n")[0])  # type: ignore[no-any-return]

    async def history(self, owner: str) -> History:
        await self._flush(owner)  # this store's own ends, so every reader sees them
        listing = await self._list(owner)
        dropped = await self._dropped(owner) if listing.dropped else 0
        if listing.kept() > self.max_owner_bytes:
            dropped = await self._trim(owner, listing, dropped)
        headers: dict[str, dict[str, Any]] = {}
        bodies: dict[str, Any] = {}
        limiter = anyio.CapacityLimiter(16)

        async def fetch(key: str, whole: bool) -> None:
            async with limiter:
                if whole:
                    got = await self.objects.get(key)
                    if got is not None:
                        bodies[key] = json.loads(got[1])
                else:
                    found = await self._header(key)
                    if found is not None:
                        headers[key] = found

        async with anyio.create_task_group() as tg:
            for keys in listing.steps.values():
                for k in keys:
                    tg.start_soon(fetch, k.key, False)
            for key in [key for key, _ in listing.ends] + listing.checkpoints:
                tg.start_soon(fetch, key, True)
        ends: dict[str, list[str | None]] = {}
        for key, _newest in listing.ends:
            ends.update((bodies.get(key) or {}).get("ends", {}))
        for header in headers.values():
            ends.update(header.get("ends", {}))
        for digest, (key, _size) in listing.blobs.items():
            self._where[digest] = (key, 0)
        numbers = {name: dropped + i + 1 for i, name in enumerate(listing.steps)}
        steps: list[Step] = []
        for name, keys in listing.steps.items():
            changes, meta = [], None
            for k in keys:
                found = headers.get(k.key)
                if found is None:
                    continue
                meta = found
                if k.form == "i" and k.digest is not None:
                    self._where[k.digest] = (k.key, k.offset)
                after_version, after_digest = ends.get(str(k.change_id)) or [None, None]
                changes.append(FileChange(
                    id=k.change_id, op=meta["op"], key=meta["key"], path=meta["path"], before=Before(**meta["before"]),
                    before_version=meta["before_version"], after_version=after_version,
                    after_digest=after_digest or meta.get("after_digest"), dest_key=meta["dest_key"],
                    dest_path=meta["dest_path"]))
            if changes and meta is not None:
                steps.append(Step(number=numbers[name], time=meta["time"], tool=meta["tool"], owner=owner,
                                  call_id=meta["call_id"], changes=tuple(changes)))
        points = []
        for key in listing.checkpoints:
            body = bodies.get(key)
            if body is not None:
                after = body["after"]
                step = max([numbers[n] for n in listing.steps if n <= after] or [dropped]) if after else 0
                points.append(Checkpoint(id=body["id"], name=body["name"], step=step, time=body["time"]))
        names: dict[int, list[str]] = {}
        for point in points:
            names.setdefault(point.step, []).append(point.name)
        steps = [Step(number=s.number, time=s.time, tool=s.tool, owner=s.owner, call_id=s.call_id, changes=s.changes,
                      checkpoints=tuple(names.get(s.number, ()))) for s in steps]
        return History(steps=tuple(steps), checkpoints=tuple(points), dropped=dropped, bytes=listing.kept())

    async def blob(self, digest: str) -> bytes | None:
        """The copy named ``digest`` where the last ``history`` read found it (a rewind reads
        the history first); ``None`` when it is not kept."""
        where = self._where.get(digest)
        if where is None:
            return None
        got = await self.objects.get(where[0])
        return None if got is None else got[1][where[1]:]

    async def checkpoint(self, owner: str, name: str) -> str:
        base = self._base(owner)
        names = list((await self._list(owner)).steps)
        point = uuid.uuid4().hex[:12]
        await self.objects.put(f"{base}checkpoints/{time.time_ns():020d}-{point}.json",
                               _json({"id": point, "name": name, "after": names[-1] if names else "",
                                      "time": time.time()}))
        return point

    async def forget(self, owner: str) -> int:
        keys: list[str] = []
        async for page in self.objects.list_all(self._base(owner)):
            keys.extend(key for key, _size, _mtime in page)
        steps = {key.rsplit("/", 2)[1] for key in keys if key.startswith(self._base(owner) + "steps/")}
        await self.objects.delete_many(keys)
        self._owners.pop(owner, None)
        return len(steps)
