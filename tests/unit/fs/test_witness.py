"""``fs.witness``: the commit witness a recorder sets and a provider calls right before it commits."""

from __future__ import annotations

import anyio
import pytest

from dsh_fs.fs.witness import witness_commit, witnessing

pytestmark = pytest.mark.anyio


async def test_without_a_witness_a_commit_is_told_to_no_one() -> None:
    await witness_commit(b"a", "v1", b"b")  # nothing set: nothing happens, nothing raised


async def test_the_witness_hears_each_commit_of_the_block_and_only_those() -> None:
    heard: list[tuple[bytes | None, str | None, bytes]] = []

    async def witness(before: bytes | None, version: str | None, after: bytes) -> None:
        heard.append((before, version, after))

    with witnessing(witness):
        await witness_commit(None, None, b"new")
        await witness_commit(b"old", "v1", b"new")
    await witness_commit(b"after the block", "v2", b"x")
    assert heard == [(None, None, b"new"), (b"old", "v1", b"new")]


async def test_its_refusal_is_the_commits_and_the_block_still_ends() -> None:
    async def refuse(before: bytes | None, version: str | None, after: bytes) -> None:
        raise OSError("no room")

    with pytest.raises(OSError, match="no room"), witnessing(refuse):
        await witness_commit(b"a", "v", b"b")
    await witness_commit(b"a", "v", b"b")  # reset even though the block raised


async def test_an_inner_witness_hides_the_outer_one_until_its_block_ends() -> None:
    heard: list[str] = []

    def named(name: str):  # type: ignore[no-untyped-def]
        async def witness(before: bytes | None, version: str | None, after: bytes) -> None:
            heard.append(name)
        return witness

    with witnessing(named("outer")):
        with witnessing(named("inner")):
            await witness_commit(None, None, b"")
        await witness_commit(None, None, b"")
    assert heard == ["inner", "outer"]


async def test_a_task_started_elsewhere_does_not_hear_the_block() -> None:
    heard: list[bytes] = []

    async def witness(before: bytes | None, version: str | None, after: bytes) -> None:
        heard.append(after)

    async with anyio.create_task_group() as tg:
        ready = anyio.Event()

        async def elsewhere() -> None:
            await ready.wait()
            await witness_commit(None, None, b"elsewhere")

        tg.start_soon(elsewhere)
        with witnessing(witness):
            ready.set()
            await witness_commit(None, None, b"here")
            await anyio.sleep(0)
    assert heard == [b"here"]
