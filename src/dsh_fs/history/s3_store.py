"""``S3HistoryStore``: histories in an S3 bucket under a reserved prefix, so several machines
serving one bucket share them (docs/HISTORY.md "How it is stored").

Objects, below ``prefix`` (default ``.dsh-fs-history/``; keep it outside the served prefix, or
in another bucket, so no tool can list or change it):

* ``blobs/<sha256>``: a kept copy (made with ``If-None-Match: *``: the same bytes once);
* ``owners/<owner hex>/steps/<time ns>-<step key>/<change id>.json``: a change's intent (its
  before-state), written before the mutation;
* ``… /<change id>.done``: its end (the version after), written after it;
* ``owners/<owner hex>/checkpoints/<time ns>-<id>.json`` and ``owners/<owner hex>/dropped.json``.

Steps are numbered when the history is read, in the order of their keys (the time a step's first
change was recorded, then its random key): machines whose clocks disagree may see a step
recorded later numbered before one recorded earlier. A mutation costs three extra requests
(the copy's conditional PUT, the intent, the end); reading a history lists the owner's keys and
gets each object. Past ``max_owner_bytes`` of kept copies the oldest steps are dropped (their
objects deleted, and the copies the rest of the owner's history does not name: a copy another
owner shares is then gone for it too, and its rewind of that file says so), when a history is
read or every ``TRIM_EVERY`` changes. With object versions turned on in the bucket,
every overwritten object's old bytes are also kept by S3 itself (its version history is the
alternative to this store for a bucket that keeps versions: docs/HISTORY.md).
"""

from __future__ import annotations

import itertools
import json
import time
import uuid
from collections.abc import Mapping
from typing import Any, Final

import anyio

from ..fs_s3.errors import S3Failure
from ..fs_s3.store import ObjectStore
from .model import Before, Checkpoint, FileChange, History, Step
from .store import DEFAULT_MAX_OWNER_BYTES, CallMeta, HistoryStore, Intent

__all__ = ("DEFAULT_PREFIX", "S3HistoryStore", "TRIM_EVERY")

DEFAULT_PREFIX: Final = ".dsh-fs-history/"
TRIM_EVERY: Final = 32
"""changes recorded by one store between two checks of an owner's byte cap"""


def _hex(owner: str) -> str:
    return owner.encode("utf-8", "surrogatepass").hex()


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
        self._keys: dict[int, str] = {}
        """this store's pending changes: id → the key of their intent"""
        self._ids = itertools.count()
        self._recorded = 0

    def _owner(self, owner: str) -> str:
        return f"{self.prefix}owners/{_hex(owner)}/"

    async def _get_json(self, key: str) -> Any:
        got = await self.objects.get(key)
        return None if got is None else json.loads(got[1])

    async def _put_json(self, key: str, value: Any) -> None:
        await self.objects.put(key, json.dumps(value, separators=(",", ":")).encode())

    # -- recording ---------------------------------------------------------------------------
    async def begin(self, call: CallMeta, intent: Intent, blob: bytes | None) -> int:
        before = intent.before
        if blob is not None and before.digest is not None:
            try:
                await self.objects.put(f"{self.prefix}blobs/{before.digest}", blob, if_none_match=True)
            except S3Failure as failure:
                if not failure.precondition_failed:  # kept already: the same bytes once
                    raise
        change_id = time.time_ns() * 1000 + next(self._ids) % 1000
        step = f"{int(call.time * 1e9):020d}-{call.step_key}"
        key = f"{self._owner(call.owner)}steps/{step}/{change_id:026d}.json"
        await self._put_json(key, {
            "tool": call.tool, "call_id": call.call_id, "time": call.time, "op": intent.op, "key": intent.key,
            "path": intent.path, "before": {k: getattr(before, k) for k in ("kind", "digest", "size", "mode", "reason",
                                                                         "old", "new")},
            "before_version": intent.before_version, "dest_key": intent.dest_key, "dest_path": intent.dest_path})
        self._keys[change_id] = key
        self._recorded += 1
        if self._recorded % TRIM_EVERY == 0:
            await self.history(call.owner)  # reading it trims it
        return change_id

    async def complete(self, owner: str, change_id: int, after_version: str, after_digest: str | None = None) -> None:
        key = self._keys.pop(change_id, None)
        if key is not None:
            await self._put_json(key[: -len(".json")] + ".done", {"after_version": after_version,
                                                                   "after_digest": after_digest})

    async def abandon(self, owner: str, change_id: int) -> None:
        key = self._keys.pop(change_id, None)
        if key is not None:
            await self.objects.delete(key)

    # -- reading -------------------------------------------------------------------------------
    async def _listing(self, owner: str) -> list[str]:
        keys: list[str] = []
        async for page in self.objects.list_all(self._owner(owner)):
            keys.extend(key for key, _size, _mtime in page)
        return keys

    async def history(self, owner: str) -> History:
        base = self._owner(owner)
        keys = await self._listing(owner)
        bodies: dict[str, Any] = {}
        limiter = anyio.CapacityLimiter(16)

        async def fetch(key: str) -> None:
            async with limiter:
                bodies[key] = await self._get_json(key)

        async with anyio.create_task_group() as tg:
            for key in keys:
                tg.start_soon(fetch, key)
        dropped = int((bodies.get(base + "dropped.json") or {"dropped": 0})["dropped"])
        step_names = sorted({k[len(base + "steps/"):].split("/", 1)[0] for k in keys
                             if k.startswith(base + "steps/") and k.endswith(".json")})
        numbers = {name: dropped + i + 1 for i, name in enumerate(step_names)}
        steps: list[Step] = []
        sizes: dict[str, int] = {}
        for name in step_names:
            changes = []
            meta: dict[str, Any] = {}
            for key in sorted(k for k in keys if k.startswith(f"{base}steps/{name}/") and k.endswith(".json")):
                body = bodies.get(key)
                if body is None:
                    continue
                meta = body
                done = bodies.get(key[: -len(".json")] + ".done") or {}
                before = Before(**body["before"])
                if before.digest is not None and before.size is not None:
                    sizes[before.digest] = before.size
                changes.append(FileChange(
                    id=int(key.rsplit("/", 1)[1][: -len(".json")]), op=body["op"], key=body["key"], path=body["path"],
                    before=before, before_version=body["before_version"], after_version=done.get("after_version"),
                    after_digest=done.get("after_digest"), dest_key=body["dest_key"], dest_path=body["dest_path"]))
            if changes:
                steps.append(Step(number=numbers[name], time=meta["time"], tool=meta["tool"], owner=owner,
                                  call_id=meta["call_id"], changes=tuple(changes)))
        points = []
        for key in sorted(k for k in keys if k.startswith(base + "checkpoints/")):
            body = bodies.get(key)
            if body is not None:
                after = body["after"]
                step = max([numbers[n] for n in step_names if n <= after] or [dropped]) if after else 0
                points.append(Checkpoint(id=body["id"], name=body["name"], step=step, time=body["time"]))
        names: dict[int, list[str]] = {}
        for point in points:
            names.setdefault(point.step, []).append(point.name)
        steps = [Step(number=s.number, time=s.time, tool=s.tool, owner=s.owner, call_id=s.call_id, changes=s.changes,
                      checkpoints=tuple(names.get(s.number, ()))) for s in steps]
        kept = sum(sizes.values())
        if kept > self.max_owner_bytes and len(steps) > 1:
            return await self._trim(owner, steps, step_names, dropped, points)
        return History(steps=tuple(steps), checkpoints=tuple(points), dropped=dropped, bytes=kept)

    async def _trim(self, owner: str, steps: list[Step], step_names: list[str], dropped: int,
                    points: list[Checkpoint]) -> History:
        """Drop the oldest steps until the rest's copies fit (never the newest step): their
        objects are deleted, and the copies the rest of this owner's history does not name."""
        def digests(rest: list[Step]) -> dict[str, int]:
            return {c.before.digest: c.before.size or 0 for s in rest for c in s.changes if c.before.digest}

        base = self._owner(owner)
        by_number = dict(zip([s.number for s in steps], step_names, strict=False))
        gone: list[Step] = []
        while len(steps) > 1 and sum(digests(steps).values()) > self.max_owner_bytes:
            gone.append(steps.pop(0))
            dropped = gone[-1].number
        await self._put_json(base + "dropped.json", {"dropped": dropped})
        kept = digests(steps)
        for step in gone:
            for change in step.changes:
                for suffix in (".json", ".done"):
                    await self.objects.delete(f"{base}steps/{by_number[step.number]}/{change.id:026d}{suffix}")
        for digest in set(digests(gone)) - set(kept):
            await self.objects.delete(f"{self.prefix}blobs/{digest}")
        return History(steps=tuple(steps), checkpoints=tuple(points), dropped=dropped, bytes=sum(kept.values()))

    async def blob(self, digest: str) -> bytes | None:
        got = await self.objects.get(f"{self.prefix}blobs/{digest}")
        return None if got is None else got[1]

    async def checkpoint(self, owner: str, name: str) -> str:
        base = self._owner(owner)
        names = sorted({k[len(base + "steps/"):].split("/", 1)[0] for k in await self._listing(owner)
                        if k.startswith(base + "steps/")})
        point = uuid.uuid4().hex[:12]
        await self._put_json(f"{base}checkpoints/{time.time_ns():020d}-{point}.json",
                             {"id": point, "name": name, "after": names[-1] if names else "", "time": time.time()})
        return point

    async def forget(self, owner: str) -> int:
        keys = await self._listing(owner)
        base = self._owner(owner)
        count = len({k[len(base + "steps/"):].split("/", 1)[0] for k in keys if k.startswith(base + "steps/")})
        for key in keys:
            await self.objects.delete(key)
        return count

    async def aclose(self) -> None:
        await self.objects.aclose()
