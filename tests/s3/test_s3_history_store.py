"""``history.s3_store`` on moto: what a recorded mutation costs (one request, whatever the history
holds), copies kept once, ends carried by the next intent or written when the history is read or
the store closes, the byte cap checked by listing, and copies still named kept when their
holder goes."""

from __future__ import annotations

import json
from typing import Any

import pytest

import dsh_fs
from dsh_fs import Session
from dsh_fs.history.model import Before, digest_of
from dsh_fs.history.s3_store import S3HistoryStore
from dsh_fs.history.store import CallMeta, Intent
from dsh_fs.testing.workspaces import MOTO_CLIENT_OPTIONS, S3Workspace

pytestmark = pytest.mark.anyio


def store_of(bucket: S3Workspace, s3_endpoint: str, **options: Any) -> S3HistoryStore:
    return S3HistoryStore(bucket.location.bucket, endpoint_url=s3_endpoint, client_options=MOTO_CLIENT_OPTIONS,
                          **options)


async def history_keys(store: S3HistoryStore) -> list[str]:
    keys: list[str] = []
    async for page in store.objects.list_all(store.prefix):
        keys.extend(key for key, _size, _mtime in page)
    return keys


async def calls_cost(bucket: S3Workspace, s3_endpoint: str, kind: str, *, recorded: bool,
                     calls: int = 12) -> list[int]:
    """The requests each of ``calls`` alternating edits (or writes) of one file costs, with the
    S3 history store or without a history."""
    await bucket.put("f.py", b"".join(b"value_%d = step(%d)\n" % (i, i) for i in range(50)))
    fs = await bucket.provider()
    store = store_of(bucket, s3_endpoint) if recorded else None
    ctx = dsh_fs.create_context(provider=fs, history=store or False)
    session = Session(cwd="/", id="S")
    await ctx.tools.execute("read", {"file_path": "/f.py"}, session=session)
    text = await bucket.get("f.py")
    assert text is not None
    costs = []
    for i in range(calls):
        before = fs.store.requests + (store.objects.requests if store else 0)  # type: ignore[attr-defined]
        if kind == "edit":
            old, new = ("step(7)", "STEP(7)") if i % 2 == 0 else ("STEP(7)", "step(7)")
            args = {"file_path": "/f.py", "old_string": old, "new_string": new}
        else:
            args = {"file_path": "/f.py", "content": text.decode() + str(i % 2)}
        result = await ctx.tools.execute(kind, args, session=session)
        assert not result.is_error, result.text
        costs.append(fs.store.requests + (store.objects.requests if store else 0) - before)  # type: ignore[attr-defined]
    await ctx.aclose()
    return costs


@pytest.mark.parametrize("kind", ["edit", "write"])
async def test_a_recorded_edit_or_write_costs_one_request_more(bucket: S3Workspace, s3_endpoint: str,
                                                               kind: str) -> None:
    off = await calls_cost(bucket, s3_endpoint, kind, recorded=False)
    on = await calls_cost(bucket, s3_endpoint, kind, recorded=True)
    assert len(set(off)) == 1 and on == [off[0] + 1] * len(off)


async def test_copies_are_kept_once_and_ends_ride_on_the_next_intent(bucket: S3Workspace, s3_endpoint: str) -> None:
    writer, reader = store_of(bucket, s3_endpoint), store_of(bucket, s3_endpoint)
    ctx = dsh_fs.create_context(provider=await bucket.provider(), policy=False, history=writer)
    session = Session(cwd="/", id="S")
    await bucket.put("a.txt", b"zero\n")
    for content in ("one\n", "zero\n", "one\n", "zero\n"):
        result = await ctx.tools.execute("write", {"file_path": "/a.txt", "content": content}, session=session)
        assert not result.is_error, result.text
    keys = sorted(await history_keys(writer), key=lambda k: k.rsplit("/", 1)[1])
    forms = [k.rsplit("/", 1)[1].split(".")[1] for k in keys]
    assert forms == ["i", "i", "r", "r"]  # zero's and one's bytes once each
    assert {k.rsplit("/", 1)[1].split(".")[2] for k in keys} == {digest_of(b"zero\n"), digest_of(b"one\n")}
    second = await writer.objects.get(keys[1])
    assert second is not None
    header = json.loads(second[1].partition(b"\n")[0])
    first_id = keys[0].rsplit("/", 1)[1].split(".")[0].lstrip("0")
    assert list(header["ends"]) == [first_id] and header["after_digest"] == digest_of(b"zero\n")
    seen = await reader.history("S")  # the writer has not carried its last end yet
    assert [s.pending for s in seen.steps] == [False, False, False, True]
    assert seen.steps[-1].changes[0].after_digest == digest_of(b"zero\n")
    await ctx.aclose()  # writes it
    seen = await reader.history("S")
    assert not any(s.pending for s in seen.steps)
    assert [k for k in await history_keys(reader) if "/ends/" in k] != []
    assert await reader.blob(digest_of(b"one\n")) == b"one\n"
    await reader.aclose()


async def test_a_pending_change_whose_file_someone_else_changed_is_not_rewound(bucket: S3Workspace,
                                                                                 s3_endpoint: str) -> None:
    writer = store_of(bucket, s3_endpoint)
    ctx = dsh_fs.create_context(provider=await bucket.provider(), policy=False, history=writer)
    rewinder = dsh_fs.create_context(provider=await bucket.provider(), policy=False,
                                     history=store_of(bucket, s3_endpoint))
    session = Session(cwd="/", id="S")
    await bucket.put("a.txt", b"start\n")
    await ctx.tools.execute("edit", {"file_path": "/a.txt", "old_string": "start", "new_string": "mine"},
                            session=session)
    assert (await rewinder.history("S"))[-1].pending  # its end is still the writer's to write
    await bucket.put("a.txt", b"theirs\n")
    result = await rewinder.rewind("S", to=0)
    assert result.refused and [(f.path, f.action, f.reason) for f in result.files] == [
        ("/a.txt", "refused", "changed since this owner's last change")]
    await bucket.put("a.txt", b"mine\n")  # the bytes the pending edit was about to leave
    result = await rewinder.rewind("S", to=0)
    assert not result.refused and await bucket.get("a.txt") == b"start\n"
    await ctx.aclose()
    await rewinder.aclose()


async def test_a_copy_still_named_outlives_its_dropped_holder(bucket: S3Workspace, s3_endpoint: str) -> None:
    small, big, other, last = b"s" * 99 + b"\n", b"b" * 799 + b"\n", b"o" * 799 + b"\n", b"last\n"
    store = store_of(bucket, s3_endpoint, max_owner_bytes=1600)
    ctx = dsh_fs.create_context(provider=await bucket.provider(), policy=False, history=store)
    session = Session(cwd="/", id="S")
    await bucket.put("a.txt", small)
    for content in (big, small, other, last):  # copies kept: small, big, (small again: named), other
        result = await ctx.tools.execute("write", {"file_path": "/a.txt", "content": content.decode()},
                                         session=session)
        assert not result.is_error, result.text
    seen = await ctx.history("S")  # 1,700 bytes > 1,600: down to at most 1,200
    assert seen.dropped == 2 and [s.number for s in seen] == [3, 4] and seen.kept_bytes == 900
    keys = await history_keys(store)
    assert [k.rsplit("/", 2)[1:] for k in keys if "/blobs/" in k] == [["blobs", digest_of(small)]]
    assert forms(keys) == ["r", "i"]  # step 3 named the copy its dropped holder had: kept aside
    result = await ctx.rewind("S", to=2)
    assert not result.refused and result.error is None and await bucket.get("a.txt") == small
    result = await ctx.tools.execute("write", {"file_path": "/a.txt", "content": "x\n"}, session=session)
    assert not result.is_error, result.text
    keys = await history_keys(store)  # the copy kept aside is known: the same bytes are not kept again
    assert forms(keys)[-1] == "r" and keys[-1].rsplit(".", 1)[1] == digest_of(small)
    for content in ("y" * 900 + "\n", "z" * 900 + "\n", "w" * 900 + "\n"):  # steps 3 and 6 (naming small) go
        result = await ctx.tools.execute("write", {"file_path": "/a.txt", "content": content}, session=session)
        assert not result.is_error, result.text
    seen = await ctx.history("S")
    assert all(c.before.digest != digest_of(small) for s in seen for c in s.changes)
    assert [k for k in await history_keys(store) if "/blobs/" in k] == []  # nothing names it: gone
    await ctx.aclose()


async def test_an_abandoned_intent_keeps_a_copy_another_change_names(bucket: S3Workspace, s3_endpoint: str) -> None:
    store = store_of(bucket, s3_endpoint)
    data = b"kept\n"
    intent = Intent(op="write", key="k", path="/a.txt", before=Before.blob(digest_of(data), len(data)),
                    before_version="v1")

    def call(key: str) -> CallMeta:
        return CallMeta(owner="O", step_key=key, tool="write", call_id=None, time=1.0 if key == "one" else 2.0)

    first = await store.begin(call("one"), intent, data)
    second = await store.begin(call("two"), intent, data)
    forms = sorted(k.rsplit("/", 1)[1].split(".")[1] for k in await history_keys(store))
    assert forms == ["i", "r"]
    await store.abandon("O", first)
    await store.complete("O", second, "v2")
    seen = await store.history("O")
    assert [(s.number, [c.after_version for c in s.changes]) for s in seen.steps] == [(1, ["v2"])]
    assert await store.blob(digest_of(data)) == data
    await store.abandon("O", second)  # already completed: nothing to do
    await store.complete("O", 12345, "v")  # unknown: nothing to do
    assert await store.forget("O") == 1 and await history_keys(store) == []
    await store.aclose()


async def test_the_cap_is_checked_by_listing_and_its_cost_does_not_grow(bucket: S3Workspace,
                                                                       s3_endpoint: str) -> None:
    cap = 96 * 1024
    store = store_of(bucket, s3_endpoint, max_owner_bytes=cap)
    fs = await bucket.provider()
    ctx = dsh_fs.create_context(provider=fs, policy=False, history=store)
    session = Session(cwd="/", id="S")
    costs = []
    for i in range(360):
        before = fs.store.requests + store.objects.requests  # type: ignore[attr-defined]
        content = f"{i:06d}" * 166 + "\n"  # 997 bytes, each different
        result = await ctx.tools.execute("write", {"file_path": "/a.txt", "content": content}, session=session)
        assert not result.is_error, result.text
        costs.append(fs.store.requests + store.objects.requests - before)  # type: ignore[attr-defined]
    plain = 2  # an unrecorded write: the stat, the conditional PUT
    early, late = sum(costs[120:240]) / 120 - plain, sum(costs[240:360]) / 120 - plain
    assert 1 <= early <= 1.5 and 1 <= late <= 1.5 and late <= early + 0.1  # bounded, not growing
    assert await copies_held(store) <= cap + cap // 8 + 1000  # bounded while recording, not only when read
    seen = await ctx.history("S")
    assert seen.dropped > 0 and seen.kept_bytes <= cap
    await ctx.aclose()


def call_of(key: str, time: float = 1.0, owner: str = "O") -> CallMeta:
    return CallMeta(owner=owner, step_key=key, tool="write", call_id=None, time=time)


def blob_intent(data: bytes | None, *, digest: bytes | None = None, path: str = "/a.txt") -> Intent:
    named = digest_of(digest if digest is not None else data or b"")
    return Intent(op="write", key="k" + path, path=path, before=Before.blob(named, len(data or b"")),
                  before_version="v1")


def forms(keys: list[str]) -> list[str]:
    return [k.rsplit("/", 1)[1].split(".")[1] for k in sorted(keys, key=lambda k: k.rsplit("/", 1)[1])
            if "/steps/" in k]


async def copies_held(store: S3HistoryStore) -> int:
    """Bytes of the copies the bucket holds now, from a listing (no history read)."""
    total = 0
    async for page in store.objects.list_all(store.prefix):
        for key, size, _mtime in page:
            name = key.rsplit("/", 1)[1]
            if "/steps/" in key and name.split(".")[1] == "i":
                total += size - int(name.split(".")[3])
            elif "/blobs/" in key:
                total += size
    return total


async def test_the_first_check_comes_once_an_eighth_of_the_cap_is_added(bucket: S3Workspace,
                                                                       s3_endpoint: str) -> None:
    data = b"x" * 100 + b"\n"
    for cap, first in ((8, 1), (0, 2)):  # an eighth of 8 bytes is room for one; of 0 none: list first
        store = store_of(bucket, s3_endpoint, max_owner_bytes=cap)
        before = store.objects.requests
        await store.begin(call_of(f"first-{cap}", owner=f"cap-{cap}"), blob_intent(data), data)
        assert store.objects.requests - before == first, cap
        await store.aclose()


async def test_a_before_state_without_its_bytes_keeps_no_copy_and_names_none(bucket: S3Workspace,
                                                                             s3_endpoint: str) -> None:
    store = store_of(bucket, s3_endpoint)
    data = b"bytes the recorder could not read\n"
    await store.begin(call_of("one"), blob_intent(None, digest=data), None)
    await store.begin(call_of("two", 2.0), blob_intent(data), data)
    assert forms(await history_keys(store)) == ["n", "i"]  # the second holds the copy itself
    await store.aclose()


async def test_abandoning_a_reference_keeps_the_copy_it_named(bucket: S3Workspace, s3_endpoint: str) -> None:
    store = store_of(bucket, s3_endpoint)
    data = b"kept\n"
    first = await store.begin(call_of("one"), blob_intent(data), data)
    await store.abandon("O", first)  # its copy is kept aside: another change may name it
    second = await store.begin(call_of("two", 2.0), blob_intent(data), data)
    assert forms(await history_keys(store)) == ["r"]
    await store.abandon("O", second)
    third = await store.begin(call_of("three", 3.0), blob_intent(data), data)
    await store.complete("O", third, "v3")
    await store.history("O")
    assert await store.blob(digest_of(data)) == data
    await store.aclose()


async def test_stray_objects_under_an_owner_are_ignored(bucket: S3Workspace, s3_endpoint: str) -> None:
    store = store_of(bucket, s3_endpoint)
    data = b"one\n"
    change = await store.begin(call_of("one"), blob_intent(data), data)
    await store.complete("O", change, "v2")
    base = store._base("O")
    for stray in ("steps/x/y/z.n", "steps/s/notanumber.n", "steps/s/12.q", "steps/s/12.i.abc.noffset",
                  "other/a/b", "ends/not-a-number.json"):
        await store.objects.put(base + stray, b"{}")
    seen = await store.history("O")
    assert [(s.number, [c.after_version for c in s.changes]) for s in seen.steps] == [(1, ["v2"])]
    await store.aclose()


async def test_a_line_of_json_longer_than_a_peek_is_read_whole(bucket: S3Workspace, s3_endpoint: str) -> None:
    from dsh_fs.history import s3_store

    store = store_of(bucket, s3_endpoint)
    old, new = "o" * 50_000, "n" * 50_000  # a big file's literal edit: kept as its replacement
    intent = Intent(op="edit", key="k", path="/big.txt", before=Before.replacement(old, new), before_version="v1")
    change = await store.begin(call_of("one"), intent, None)
    await store.complete("O", change, "v2")
    assert s3_store._PEEK < 100_000
    (step,) = (await store.history("O")).steps
    assert (step.changes[0].before.old, step.changes[0].before.new) == (old, new)
    await store.aclose()


async def test_a_change_whose_intent_vanished_while_reading_is_left_out(bucket: S3Workspace, s3_endpoint: str,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    store = store_of(bucket, s3_endpoint)
    for i, key in enumerate(("one", "two")):
        data = f"{key}\n".encode()
        await store.complete("O", await store.begin(call_of(key, float(i)), blob_intent(data), data), f"v{i}")
    real = store._header
    keys = sorted((k for k in await history_keys(store) if "/steps/" in k), key=lambda k: k.rsplit("/", 1)[1])
    gone = keys[0]

    async def header(key: str) -> Any:
        return None if key == gone else await real(key)

    monkeypatch.setattr(store, "_header", header)
    seen = await store.history("O")
    assert [[c.after_version for c in s.changes] for s in seen.steps] == [["v1"]]
    await store.aclose()


async def test_a_checkpoint_before_any_step_is_step_zero(bucket: S3Workspace, s3_endpoint: str) -> None:
    store = store_of(bucket, s3_endpoint)
    point = await store.checkpoint("O", "start")
    data = b"one\n"
    await store.complete("O", await store.begin(call_of("one", 5.0), blob_intent(data), data), "v2")
    later = await store.checkpoint("O", "after")
    seen = await store.history("O")
    assert [(c.id, c.name, c.step) for c in seen.checkpoints] == [(point, "start", 0), (later, "after", 1)]
    await store.aclose()


async def test_forget_counts_steps_and_forgets_the_copies_it_knew(bucket: S3Workspace, s3_endpoint: str) -> None:
    store = store_of(bucket, s3_endpoint)
    a, b = b"a\n", b"b\n"
    await store.begin(call_of("patch"), blob_intent(a), a)
    await store.begin(call_of("patch"), blob_intent(b, path="/b.txt"), b)  # one step, two changes
    await store.begin(call_of("edit", 2.0), blob_intent(b"c\n", path="/c.txt"), b"c\n")
    assert await store.forget("O") == 2 and await history_keys(store) == []
    await store.begin(call_of("again", 3.0), blob_intent(a), a)
    assert forms(await history_keys(store)) == ["i"]  # not a reference to a copy forgotten
    await store.aclose()


async def test_at_the_cap_exactly_nothing_is_dropped(bucket: S3Workspace, s3_endpoint: str) -> None:
    sizes = (100, 200, 300)
    store = store_of(bucket, s3_endpoint, max_owner_bytes=sum(sizes))
    for i, size in enumerate(sizes):
        data = bytes([65 + i]) * size
        await store.complete("O", await store.begin(call_of(f"s{i}", float(i)), blob_intent(data), data), "v")
    seen = await store.history("O")
    assert (seen.dropped, len(seen.steps), seen.bytes) == (0, 3, 600)
    await store.aclose()


async def test_ends_outlive_only_the_changes_they_end(bucket: S3Workspace, s3_endpoint: str) -> None:
    """Four machines in turn; the last one's cap drops the first step: the first machine's ends
    go with it, the second's (which ends the oldest step left) and the last one's stay."""
    contents = [b"0" * 800, b"1" * 400, b"2" * 400, b"3" * 400, b"4" * 400]
    for i in range(3):
        store = store_of(bucket, s3_endpoint, max_owner_bytes=1700 if i == 2 else 1 << 20)
        steps = [i] if i < 2 else [2, 3]
        for n in steps:
            change = await store.begin(call_of(f"s{n}", float(n)), blob_intent(contents[n]), contents[n])
            await store.complete("O", change, f"v{n + 1}")
        if i < 2:
            await store.aclose()  # writes its ends
    seen = await store.history("O")  # 2,000 bytes of copies > 1,700: down to 1,200 (≤ 1,275)
    assert (seen.dropped, [s.number for s in seen.steps], seen.bytes) == (1, [2, 3, 4], 1200)
    assert [[c.after_version for c in s.changes] for s in seen.steps] == [["v2"], ["v3"], ["v4"]]
    assert len([k for k in await history_keys(store) if "/ends/" in k]) == 2
    await store.aclose()


async def test_the_oldest_steps_go_until_three_quarters_of_the_cap_and_no_further(
        bucket: S3Workspace, s3_endpoint: str) -> None:
    small, big, other = b"s" * 100, b"b" * 800, b"o" * 1100
    store = store_of(bucket, s3_endpoint, max_owner_bytes=1600)
    for i, data in enumerate((small, big, small, other)):
        await store.complete("O", await store.begin(call_of(f"s{i}", float(i)), blob_intent(data), data), "v")
    seen = await store.history("O")  # 2,000 > 1,600: drop 1 (small kept aside) and 2: 1,200 = 1,200
    assert (seen.dropped, [s.number for s in seen.steps], seen.bytes) == (2, [3, 4], 1200)
    await store.aclose()


async def test_a_check_at_the_cap_exactly_drops_nothing(bucket: S3Workspace, s3_endpoint: str) -> None:
    store = store_of(bucket, s3_endpoint, max_owner_bytes=600)
    for i, size in enumerate((100, 200, 300)):  # the third's size leaves no room: the fourth checks
        data = bytes([65 + i]) * size
        await store.complete("O", await store.begin(call_of(f"s{i}", float(i)), blob_intent(data), data), "v")
    created = Intent(op="write", key="k/new", path="/new.txt", before=Before.absent())
    listed = store.objects.requests
    await store.complete("O", await store.begin(call_of("s3", 3.0), created, None), "v")
    assert store.objects.requests - listed == 2  # the listing (600 bytes: at the cap, not past it), the intent
    seen = await store.history("O")
    assert (seen.dropped, len(seen.steps), seen.bytes) == (0, 4, 600)
    await store.aclose()


async def test_one_step_past_the_cap_is_kept_and_nothing_said_dropped(bucket: S3Workspace,
                                                                     s3_endpoint: str) -> None:
    store = store_of(bucket, s3_endpoint, max_owner_bytes=10)
    data = b"more than ten bytes\n"
    await store.complete("O", await store.begin(call_of("one"), blob_intent(data), data), "v")
    seen = await store.history("O")
    assert (seen.dropped, len(seen.steps), seen.bytes) == (0, 1, len(data))  # never the newest step
    await store.aclose()


async def test_a_copy_kept_aside_before_a_trim_is_still_known_after_it(bucket: S3Workspace,
                                                                         s3_endpoint: str) -> None:
    a, b, c, d = b"a" * 100, b"b" * 800, b"c" * 1100, b"d" * 1000
    store = store_of(bucket, s3_endpoint, max_owner_bytes=1600)
    for i, data in enumerate((a, b, a, c)):
        await store.complete("O", await store.begin(call_of(f"s{i}", float(i)), blob_intent(data), data), "v")
    assert (await store.history("O")).dropped == 2  # a's holder went: a kept aside, named by step 3
    for i, data in ((4, a), (5, d)):
        await store.complete("O", await store.begin(call_of(f"s{i}", float(i)), blob_intent(data), data), "v")
    seen = await store.history("O")  # drops 3 (a still named by 5) and 4: a's copy aside stays
    assert (seen.dropped, [s.number for s in seen.steps]) == (4, [5, 6])
    await store.begin(call_of("s6", 6.0), blob_intent(a), a)
    assert forms(await history_keys(store))[-1] == "r"  # known: not kept a second time
    await store.aclose()


async def test_closing_closes_the_client(bucket: S3Workspace, s3_endpoint: str) -> None:
    store = store_of(bucket, s3_endpoint)
    await store.history("O")
    assert store.objects._clients  # a client of this event loop was made
    await store.aclose()
    assert not store.objects._clients


async def test_a_copy_held_twice_counts_once(bucket: S3Workspace, s3_endpoint: str) -> None:
    data = b"a" * 300
    first = store_of(bucket, s3_endpoint)
    await first.abandon("O", await first.begin(call_of("one"), blob_intent(data), data))  # kept aside
    await first.aclose()
    second = store_of(bucket, s3_endpoint)  # another machine: it does not know the copy aside
    await second.complete("O", await second.begin(call_of("two", 2.0), blob_intent(data), data), "v")
    assert forms(await history_keys(second)) == ["i"]
    assert (await second.history("O")).bytes == 300
    await second.aclose()


async def test_copies_kept_aside_count_while_the_oldest_steps_go(bucket: S3Workspace, s3_endpoint: str) -> None:
    a, b, c = b"a" * 200, b"b" * 800, b"c" * 1100
    store = store_of(bucket, s3_endpoint, max_owner_bytes=1600)
    for i, data in enumerate((a, b, a, c)):
        await store.complete("O", await store.begin(call_of(f"s{i}", float(i)), blob_intent(data), data), "v")
    seen = await store.history("O")  # 2,100: without 1 and 2, 1,100 + a's 200 kept aside > 1,200: 3 goes too
    assert (seen.dropped, [s.number for s in seen.steps], seen.bytes) == (3, [4], 1100)
    assert [k for k in await history_keys(store) if "/blobs/" in k] == []
    await store.aclose()
