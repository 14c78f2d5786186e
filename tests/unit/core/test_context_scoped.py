"""``Context.scoped``: a service replaced for one task and the tasks it starts (the MCP server
serves a client's calls through its narrowed provider view this way, DEVIATIONS M3)."""

from __future__ import annotations

import anyio
import pytest

from dsh_fs.core.context import Context
from dsh_fs.core.errors import HarnessError


class _Provided:
    @classmethod
    def apply(cls, scope, /, **config):  # type: ignore[no-untyped-def]
        scope.provide("fs", config["value"])


@pytest.mark.anyio
async def test_scoped_replaces_a_service_in_this_task_and_its_children_only() -> None:
    ctx, other = Context(), Context()
    ctx.plugin(_Provided, value="provider")
    other.plugin(_Provided, value="other provider")
    seen: dict[str, str] = {}

    async def elsewhere(started: anyio.Event, done: anyio.Event) -> None:
        started.set()
        await done.wait()
        seen["sibling"] = ctx.fs

    started, done = anyio.Event(), anyio.Event()
    async with anyio.create_task_group() as tg:
        tg.start_soon(elsewhere, started, done)
        await started.wait()
        with ctx.scoped("fs", "view"):
            assert ctx.fs == "view" and other.fs == "other provider"
            with ctx.scoped("fs", "inner view"):
                assert ctx.fs == "inner view"
            assert ctx.fs == "view"
            async with anyio.create_task_group() as inner:
                async def child() -> None:
                    seen["child"] = ctx.fs
                inner.start_soon(child)
            done.set()
            await anyio.sleep(0)
        assert ctx.fs == "provider"
    assert seen == {"child": "view", "sibling": "provider"}


def test_scoped_needs_a_provided_service() -> None:
    with pytest.raises(HarnessError) as caught:
        with Context().scoped("fs", "view"):
            pass
    assert caught.value.code == "UNKNOWN_SERVICE"
