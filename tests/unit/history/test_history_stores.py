"""The history stores' one interface (``HistoryStore``) on the memory and SQLite stores: steps made
per call and numbered per owner, pending changes completed or abandoned, content-addressed copies
kept once and deleted when nothing names them, checkpoints, the per-owner byte cap, forget."""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from dsh_fs.history.memory_store import MemoryHistoryStore
from dsh_fs.history.model import Before, digest_of
from dsh_fs.history.sqlite_store import SqliteHistoryStore, forget_history, history_location, prune_history
from dsh_fs.history.store import DEFAULT_MAX_FILE_BYTES, DEFAULT_MAX_OWNER_BYTES, CallMeta, HistoryStore, Intent

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["memory", "sqlite"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[HistoryStore]:
    made: HistoryStore = MemoryHistoryStore(max_owner_bytes=100) if request.param == "memory" else SqliteHistoryStore(
        tmp_path / "h.sqlite3", private=False, max_owner_bytes=100)
    yield made
    await made.aclose()


def call(key: str, owner: str = "o", tool: str = "write", when: float = 1.0) -> CallMeta:
    return CallMeta(owner=owner, step_key=key, tool=tool, call_id="c-" + key, time=when)


def blob_intent(path: str, data: bytes, op: str = "write") -> tuple[Intent, bytes]:
    return Intent(op=op, key="k" + path, path=path, before=Before.blob(digest_of(data), len(data), 0o640),
                  before_version="v0"), data


def test_defaults() -> None:
    assert DEFAULT_MAX_FILE_BYTES == 16 * 1024 * 1024
    assert DEFAULT_MAX_OWNER_BYTES == 256 * 1024 * 1024
    assert MemoryHistoryStore().max_owner_bytes == DEFAULT_MAX_OWNER_BYTES
    with pytest.raises(ValueError, match="max_owner_bytes must not be negative"):
        MemoryHistoryStore(max_owner_bytes=-1)
    with pytest.raises(ValueError, match="max_owner_bytes must not be negative"):
        SqliteHistoryStore("/nonexistent/x", max_owner_bytes=-1)


async def test_one_step_per_call_numbered_per_owner(store: HistoryStore) -> None:
    assert (await store.history("o")).steps == ()
    first = await store.begin(call("a"), *blob_intent("/x", b"x0"))
    second = await store.begin(call("a"), Intent(op="rename", key="k/y", path="/y", before=Before.absent(),
                                                 dest_key="k/z", dest_path="/z"), None)
    third = await store.begin(call("b", tool="edit", when=2.0), *blob_intent("/x", b"x1"))
    other = await store.begin(call("c", owner="p"), *blob_intent("/q", b"q"))
    assert len({first, second, third, other}) == 4 and first < second < third
    history = await store.history("o")
    assert [(s.number, s.tool, s.call_id, s.time, s.owner) for s in history.steps] == [
        (1, "write", "c-a", 1.0, "o"), (2, "edit", "c-b", 2.0, "o")]
    one = history.steps[0].changes
    assert [(c.id, c.op, c.key, c.path, c.before_version, c.pending) for c in one] == [
        (first, "write", "k/x", "/x", "v0", True), (second, "rename", "k/y", "/y", None, True)]
    assert one[0].before == Before.blob(digest_of(b"x0"), 2, 0o640)
    assert (one[1].dest_key, one[1].dest_path, one[1].before) == ("k/z", "/z", Before.absent())
    assert [s.number for s in (await store.history("p")).steps] == [1]
    assert history.dropped == 0 and history.bytes == 4 and history.last == 2


async def test_complete_and_abandon(store: HistoryStore) -> None:
    kept = await store.begin(call("a"), *blob_intent("/x", b"kept"))
    lost = await store.begin(call("b"), *blob_intent("/y", b"lost"))
    await store.complete("o", kept, "v1", "d1")
    await store.abandon("o", lost)
    await store.abandon("o", lost)  # twice: nothing more
    await store.complete("o", 10**9, "v")  # unknown: nothing
    history = await store.history("o")
    assert [s.number for s in history.steps] == [1]
    (change,) = history.steps[0].changes
    assert (change.after_version, change.after_digest, change.pending) == ("v1", "d1", False)
    assert await store.blob(digest_of(b"kept")) == b"kept"
    assert await store.blob(digest_of(b"lost")) is None  # no change names it any more
    later = await store.begin(call("c"), *blob_intent("/z", b"z"))
    assert [s.number for s in (await store.history("o")).steps] == [1, 2]  # the abandoned newest: no gap
    assert later


async def test_a_number_is_reused_only_when_nothing_came_after_it(store: HistoryStore) -> None:
    await store.begin(call("a"), *blob_intent("/x", b"x"))
    pending = await store.begin(call("b"), *blob_intent("/y", b"y"))
    await store.begin(call("c"), *blob_intent("/z", b"z"))  # another call took step 3 meanwhile
    await store.abandon("o", pending)
    await store.begin(call("d"), *blob_intent("/w", b"w"))
    assert [s.number for s in (await store.history("o")).steps] == [1, 3, 4]
    marked = await store.begin(call("e"), *blob_intent("/v", b"v"))  # step 5, then a checkpoint after it
    await store.checkpoint("o", "after-5")
    await store.abandon("o", marked)
    await store.begin(call("f"), *blob_intent("/u", b"u"))
    history = await store.history("o")
    assert [s.number for s in history.steps] == [1, 3, 4, 6] and [c.step for c in history.checkpoints] == [5]
    again = await store.begin(call("g"), *blob_intent("/t", b"t"))  # abandoned, then the same call again
    await store.abandon("o", again)
    await store.begin(call("g"), *blob_intent("/t", b"t"))
    assert [s.number for s in (await store.history("o")).steps] == [1, 3, 4, 6, 7]


async def test_a_call_whose_changes_were_all_abandoned_records_again_after_a_later_step(store: HistoryStore) -> None:
    """The call's number is not given back (a later step holds 2): its next change records as a
    new step, as any store numbers a step whose earlier changes all came to nothing."""
    first = await store.begin(call("a"), *blob_intent("/x", b"x"))
    await store.begin(call("b"), *blob_intent("/y", b"y"))
    await store.abandon("o", first)
    await store.begin(call("a"), *blob_intent("/z", b"z"))
    steps = (await store.history("o")).steps
    assert [(s.number, [c.path for c in s.changes]) for s in steps] == [(2, ["/y"]), (3, ["/z"])]


async def test_abandoning_one_change_of_several_keeps_the_step(store: HistoryStore) -> None:
    one = await store.begin(call("a"), *blob_intent("/x", b"x"))
    two = await store.begin(call("a"), *blob_intent("/y", b"y"))
    await store.abandon("o", two)
    (step,) = (await store.history("o")).steps
    assert [c.id for c in step.changes] == [one]


async def test_the_same_bytes_are_kept_once(store: HistoryStore) -> None:
    first = await store.begin(call("a"), *blob_intent("/x", b"same"))
    await store.begin(call("b"), *blob_intent("/y", b"same"))
    assert (await store.history("o")).bytes == 4
    await store.abandon("o", first)
    assert await store.blob(digest_of(b"same")) == b"same"  # still named by the second


async def test_replacement_and_unrestorable_befores_round_trip(store: HistoryStore) -> None:
    await store.begin(call("a"), Intent(op="edit", key="k", path="/p", before=Before.replacement("ö\udcff", "new")), None)
    await store.begin(call("b"), Intent(op="delete", key="k", path="/p", before=Before.unrestorable("big")), None)
    steps = (await store.history("o")).steps
    assert steps[0].changes[0].before == Before.replacement("ö\udcff", "new")
    assert steps[1].changes[0].before == Before.unrestorable("big")


async def test_the_byte_cap_drops_the_oldest_steps(store: HistoryStore) -> None:
    for i in range(5):
        await store.begin(call(f"s{i}"), *blob_intent(f"/f{i}", bytes([i]) * 40))
    history = await store.history("o")
    assert [s.number for s in history.steps] == [4, 5] and history.dropped == 3 and history.bytes == 80
    assert await store.blob(digest_of(bytes([0]) * 40)) is None
    assert await store.blob(digest_of(bytes([4]) * 40)) == bytes([4]) * 40
    big = await store.begin(call("huge"), *blob_intent("/h", b"h" * 500))  # alone over the cap: kept, the rest dropped
    history = await store.history("o")
    assert [s.number for s in history.steps] == [6] and history.dropped == 5 and big


async def test_checkpoints(store: HistoryStore) -> None:
    start = await store.checkpoint("o", "start")
    await store.begin(call("a"), *blob_intent("/x", b"x"))
    mid = await store.checkpoint("o", "mid")
    again = await store.checkpoint("o", "mid")
    history = await store.history("o")
    assert [(c.id, c.name, c.step) for c in history.checkpoints] == [(start, "start", 0), (mid, "mid", 1),
                                                                     (again, "mid", 1)]
    assert history.steps[0].checkpoints == ("mid", "mid")
    assert len({start, mid, again}) == 3 and all(len(i) == 12 for i in (start, mid, again))


async def test_forget(store: HistoryStore) -> None:
    await store.begin(call("a"), *blob_intent("/x", b"x"))
    await store.begin(call("b"), *blob_intent("/y", b"y"))
    await store.checkpoint("o", "c")
    await store.begin(call("c", owner="p"), *blob_intent("/y", b"y"))
    assert await store.forget("o") == 2
    assert await store.forget("o") == 0
    history = await store.history("o")
    assert history.steps == () and history.checkpoints == () and history.dropped == 0
    assert await store.blob(digest_of(b"x")) is None
    assert await store.blob(digest_of(b"y")) == b"y"  # p's
    assert [s.number for s in (await store.history("p")).steps] == [1]


async def test_the_sqlite_store_is_durable_shared_and_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    state = tmp_path / "state"
    monkeypatch.setenv("DSH_FS_STATE_DIR", str(state))
    assert history_location() == (str(state / "history.sqlite3"), False)
    monkeypatch.delenv("DSH_FS_STATE_DIR")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    assert history_location() == (str(tmp_path / "xdg" / "dsh-fs" / "history.sqlite3"), True)
    one = SqliteHistoryStore()
    two = SqliteHistoryStore()
    assert not (tmp_path / "xdg").exists()  # opened at the first use
    change = await one.begin(call("a"), *blob_intent("/x", b"x"))
    await two.begin(call("b"), *blob_intent("/y", b"y"))
    await one.complete("o", change, "v1")
    assert [s.number for s in (await two.history("o")).steps] == [1, 2]
    assert (await two.history("o")).steps[0].changes[0].after_version == "v1"
    path = tmp_path / "xdg" / "dsh-fs" / "history.sqlite3"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    await one.aclose()
    await one.aclose()
    with pytest.raises(sqlite3.ProgrammingError, match="the history store is closed"):
        await one.history("o")
    await two.aclose()
    three = SqliteHistoryStore(path)
    assert [s.number for s in (await three.history("o")).steps] == [1, 2]
    await three.aclose()


async def test_the_sqlite_store_refuses_another_schema(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 7")
    conn.close()
    store = SqliteHistoryStore(path, private=False)
    with pytest.raises(sqlite3.DatabaseError, match="history schema 7 is not supported"):
        await store.history("o")
    await store.aclose()


async def test_prune(tmp_path: Path) -> None:
    store = SqliteHistoryStore(tmp_path / "h.sqlite3", private=False)
    await store.begin(call("a"), *blob_intent("/x", b"x"))
    await store.begin(call("b", owner="p"), *blob_intent("/y", b"y"))
    await store.aclose()
    conn = sqlite3.connect(tmp_path / "h.sqlite3", isolation_level=None)
    assert prune_history(conn, 10**6) == []
    assert prune_history(conn, 0, now=10**12) == ["o", "p"]
    assert forget_history(conn, "o") == 0
    assert conn.execute("SELECT COUNT(*) FROM blobs").fetchone()[0] == 0
    conn.close()


async def test_a_zero_cap_keeps_only_the_newest_step(tmp_path: Path) -> None:
    for store in (MemoryHistoryStore(max_owner_bytes=0), SqliteHistoryStore(tmp_path / "z.sqlite3", private=False, max_owner_bytes=0)):
        await store.begin(call("a"), *blob_intent("/x", b"x"))
        await store.begin(call("b"), *blob_intent("/y", b"y"))
        history = await store.history("o")
        assert [s.number for s in history.steps] == [2] and history.dropped == 1
        await store.aclose()


async def test_exactly_at_the_cap_drops_nothing(store: HistoryStore) -> None:
    await store.begin(call("a"), *blob_intent("/x", b"x" * 50))
    await store.begin(call("b"), *blob_intent("/y", b"y" * 50))
    assert [s.number for s in (await store.history("o")).steps] == [1, 2]


async def test_a_copy_named_by_a_kept_step_survives_a_drop(store: HistoryStore) -> None:
    await store.begin(call("a"), *blob_intent("/x", b"s" * 40))
    await store.begin(call("a"), *blob_intent("/w", b"w" * 30))
    await store.begin(call("b"), *blob_intent("/y", b"s" * 40))
    await store.begin(call("c"), *blob_intent("/z", b"t" * 40))  # 110 > 100: the first step goes
    history = await store.history("o")
    assert [s.number for s in history.steps] == [2, 3] and history.bytes == 80 and history.dropped == 1
    assert await store.blob(digest_of(b"s" * 40)) == b"s" * 40
    assert await store.blob(digest_of(b"w" * 30)) is None


async def test_completing_a_dropped_change_does_nothing(store: HistoryStore) -> None:
    first = await store.begin(call("a"), *blob_intent("/x", b"x" * 60))
    await store.begin(call("b"), *blob_intent("/y", b"y" * 60))
    await store.complete("o", first, "v")
    await store.abandon("o", first)
    assert [s.number for s in (await store.history("o")).steps] == [2]


async def test_an_intent_whose_bytes_were_not_given(store: HistoryStore) -> None:
    intent = Intent(op="write", key="k", path="/p", before=Before.blob(digest_of(b"gone"), 4))
    await store.begin(call("a"), intent, None)
    history = await store.history("o")
    assert history.steps[0].changes[0].before.kind == "blob" and history.bytes == 0
    assert await store.blob(digest_of(b"gone")) is None


async def test_a_new_sqlite_store_has_schema_1(tmp_path: Path) -> None:
    store = SqliteHistoryStore(tmp_path / "h.sqlite3", private=False)
    await store.history("o")
    await store.aclose()
    conn = sqlite3.connect(tmp_path / "h.sqlite3")
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 1
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


async def test_an_explicit_directory_is_left_as_it_is_and_writes_are_durable(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o755)
    store = SqliteHistoryStore(shared / "h.sqlite3", private=False)
    await store.begin(call("a"), *blob_intent("/x", b"x"))
    assert stat.S_IMODE(os.stat(shared).st_mode) == 0o755
    assert store._conn is not None and store._conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    await store.aclose()


def test_a_failed_transaction_is_rolled_back(tmp_path: Path) -> None:
    from dsh_fs.history.sqlite_store import _open, _transaction

    conn = _open(str(tmp_path / "h.sqlite3"), private=False, busy_timeout=1.0)

    def work() -> None:
        conn.execute("INSERT INTO blobs (digest, size, data) VALUES ('d', 1, x'00')")
        raise RuntimeError("midway")

    with pytest.raises(RuntimeError, match="midway"):
        _transaction(conn, work)
    assert not conn.in_transaction
    assert conn.execute("SELECT COUNT(*) FROM blobs").fetchone()[0] == 0
    conn.close()


async def test_after_forget_steps_are_numbered_from_1_again(store: HistoryStore) -> None:
    await store.begin(call("a"), *blob_intent("/x", b"x"))
    await store.forget("o")
    await store.begin(call("b"), *blob_intent("/x", b"x"))
    assert [s.number for s in (await store.history("o")).steps] == [1]


async def test_aclose_closes_the_connection(tmp_path: Path) -> None:
    store = SqliteHistoryStore(tmp_path / "h.sqlite3", private=False)
    await store.history("o")
    conn = store._conn
    await store.aclose()
    assert conn is not None
    with pytest.raises(sqlite3.ProgrammingError):
        conn.execute("SELECT 1")


@pytest.mark.parametrize("value", [call("a"), blob_intent("/x", b"x")[0]])
def test_call_and_intent_values_are_frozen_slotted_and_keyword_only(value: object) -> None:
    import dataclasses

    assert not hasattr(value, "__dict__")
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(value, dataclasses.fields(value)[0].name, "x")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        type(value)(*[getattr(value, f.name) for f in dataclasses.fields(value)])  # type: ignore[arg-type]
