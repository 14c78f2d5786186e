"""The stdio dispatcher keeps nothing of a call once it is settled: its task, its entry in the
cancellation table, its place in the ledger (``mcp/stdio/dispatch.py``: a call's task forgets
itself as it settles, with no done callback to cost the loop another turn per call); and
``stop`` still waits for a call that is running when the connection closes early (a mutation is
never cut off). The dispatcher is driven directly on an event loop, its lines given by hand and
its answers collected (the transport's pipes: ``tests/integration/mcp/test_mcp_stdio_routes.py``).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import anyio

import dsh_fs
from dsh_fs.core.tools import ToolDefinition, text_block
from dsh_fs.mcp.stdio.dispatch import Dispatcher, SdkLoader
from mcpkit import INITIALIZED, call, initialize


def _dispatcher(ctx: dsh_fs.Context, root: Path, written: list[dict[str, Any]]) -> Dispatcher:
    async def write(line: bytes) -> bool:
        written.append(json.loads(line))
        return True

    def write_blocking(line: bytes) -> None:
        written.append(json.loads(line))

    return Dispatcher(ctx, owner=dsh_fs.Session(cwd=str(root)), loader=SdkLoader(), version="0",
                      instructions=None, write=write, write_blocking=write_blocking, has_line=lambda: False)


async def _until(predicate: Any) -> None:
    with anyio.fail_after(60):
        while not predicate():
            await asyncio.sleep(0.001)


def test_a_settled_call_leaves_no_task_no_table_entry_no_ledger_count(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    ctx = dsh_fs.create_context(cwd=str(tmp_path))
    written: list[dict[str, Any]] = []
    dispatcher = _dispatcher(ctx, tmp_path, written)

    async def main() -> None:
        await dispatcher.dispatch(initialize(0))
        await dispatcher.dispatch(INITIALIZED)
        for number in range(1, 41):
            await dispatcher.dispatch(call(number, "read", {"file_path": "a.txt"}))
        await _until(lambda: len(written) == 41)
        await asyncio.sleep(0)  # the last task's final step
        assert dispatcher._tasks == {}
        assert dispatcher.running == {}
        assert not dispatcher.ledger.sdk_busy
        await dispatcher.ledger.wait_idle()  # returns: nothing is counted as unsettled

    anyio.run(main)
    answers = written[1:]
    assert [answer["id"] for answer in answers] == list(range(1, 41))
    assert all(answer["result"]["isError"] is False for answer in answers)
    assert "1: one" in answers[0]["result"]["content"][0]["text"]
    assert dispatcher.counts.calls == 40


def test_stop_waits_for_a_running_call_and_forgets_it(tmp_path: Path) -> None:
    started, finished = asyncio.Event(), []

    async def slow(arguments: dict[str, Any], execution: Any) -> list[Any]:
        started.set()
        for _ in range(200):  # runs on (a mutation is never cut off); sees the abort
            if execution.signal is not None and execution.signal.aborted:
                break
            await asyncio.sleep(0.005)
        finished.append(execution.signal is not None and execution.signal.aborted)
        return [text_block("done")]

    ctx = dsh_fs.create_context(cwd=str(tmp_path))
    ctx.tools.register(ToolDefinition(name="slow", description="waits", parameters={}, execute=slow))
    written: list[dict[str, Any]] = []
    dispatcher = _dispatcher(ctx, tmp_path, written)

    async def main() -> None:
        await dispatcher.dispatch(initialize(0))
        await dispatcher.dispatch(INITIALIZED)
        await dispatcher.dispatch(call(7, "slow", {}))
        await _until(started.is_set)
        assert len(dispatcher._tasks) == 1
        await dispatcher.stop()
        assert finished == [True]  # it ran to its end, its signal aborted, before stop returned
        assert dispatcher._tasks == {}

    anyio.run(main)
    assert [answer.get("id") for answer in written] == [0]  # a call cancelled by the close is not answered
