"""``dsh_fs.core.schedule.CallScheduler``: arrival-order scheduling (REFERENCE-SPEC §5.5), the
rule ``execute_batch`` and the MCP server share. Properties over random call streams (safe
and exclusive calls, random lengths, random cancellations), plus the cases that matter most.

Not here: the registry's batches (``test_core_registry.py``) and MCP connections
(``tests/e2e/mcp/test_mcp_ordering.py``).
"""

from __future__ import annotations

import anyio
import pytest
from hypothesis import given, settings, strategies as st

from dsh_fs.core.schedule import CallScheduler

pytestmark = pytest.mark.anyio


class Trace:
    """Start and end ticks of each call (a tick is one step of the shared counter)."""

    def __init__(self) -> None:
        self.tick = 0
        self.spans: dict[int, list[int]] = {}

    def mark(self, index: int) -> None:
        self.tick += 1
        self.spans.setdefault(index, []).append(self.tick)


async def _stream(kinds: list[bool], lengths: list[int], cancelled: set[int]) -> Trace:
    """Admit every call at once in order, run them (each ``lengths[i]`` checkpoints long),
    cancel the ``cancelled`` ones while they wait or run; return who ran when."""
    trace = Trace()
    scheduler = CallScheduler()
    turns = [scheduler.admit(parallel=kind) for kind in kinds]
    scopes = [anyio.CancelScope() for _ in kinds]

    async def run(index: int) -> None:
        with scopes[index]:
            async with turns[index]:
                trace.mark(index)
                try:
                    for _ in range(lengths[index]):
                        await anyio.lowlevel.checkpoint()
                finally:
                    trace.mark(index)  # also when cancelled while running

    with anyio.fail_after(60):
        async with anyio.create_task_group() as tg:
            for index in range(len(kinds)):
                tg.start_soon(run, index)
            await anyio.lowlevel.checkpoint()
            for index in sorted(cancelled):
                scopes[index].cancel()
    assert len(scheduler) == 0
    return trace


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_exclusive_calls_run_alone_and_in_arrival_order(data: st.DataObject) -> None:
    count = data.draw(st.integers(1, 12))
    kinds = data.draw(st.lists(st.booleans(), min_size=count, max_size=count))
    lengths = data.draw(st.lists(st.integers(0, 4), min_size=count, max_size=count))
    cancelled = data.draw(st.sets(st.integers(0, count - 1), max_size=3))

    trace = anyio.run(_stream, kinds, lengths, cancelled)
    for i in range(count):
        if i not in cancelled:
            assert i in trace.spans, f"call {i} never ran"
    for i, (start, _) in trace.spans.items():
        for j, (_, other_end) in trace.spans.items():
            if j < i and not (kinds[i] and kinds[j]):
                # an exclusive call starts after everything that arrived before it ended, and
                # nothing that arrived after an exclusive call starts before it ended
                assert other_end < start, (kinds, i, j, trace.spans)
    safe_run = [i for i in range(count) if kinds[i] and i not in cancelled]
    for i, j in zip(safe_run, safe_run[1:]):
        if j == i + 1 and lengths[i] > 0 and lengths[j] > 0:
            # neighbouring safe calls overlap (neither waits for the other)
            assert trace.spans[j][0] < trace.spans[i][1], (kinds, i, j, trace.spans)


async def test_an_edit_waits_for_the_reads_sent_before_it_and_later_reads_wait_for_the_edit() -> None:
    log: list[str] = []
    scheduler = CallScheduler()
    gate = anyio.Event()

    async def call(name: str, parallel: bool, hold: bool = False) -> None:
        async with scheduler.admit(parallel=parallel):
            log.append(f"start {name}")
            if hold:
                await gate.wait()
            await anyio.lowlevel.checkpoint()
            log.append(f"end {name}")

    with anyio.fail_after(60):
        async with anyio.create_task_group() as tg:
            tg.start_soon(call, "read A", True, True)
            tg.start_soon(call, "read B", True)
            tg.start_soon(call, "edit A", False)
            tg.start_soon(call, "read C", True)
            await anyio.wait_all_tasks_blocked()
            assert log == ["start read A", "start read B", "end read B"]  # the edit waits for read A
            gate.set()
    assert log.index("end read A") < log.index("start edit A") < log.index("end edit A") < log.index("start read C")


async def test_a_barrier_cancelled_while_waiting_does_not_let_a_later_edit_overtake_an_earlier_read() -> None:
    log: list[str] = []
    scheduler = CallScheduler()
    gate = anyio.Event()
    first_edit = anyio.CancelScope()

    async def call(name: str, parallel: bool, scope: anyio.CancelScope | None = None) -> None:
        with scope or anyio.CancelScope():
            async with scheduler.admit(parallel=parallel):
                log.append(f"start {name}")
                if name == "read":
                    await gate.wait()
                log.append(f"end {name}")

    with anyio.fail_after(60):
        async with anyio.create_task_group() as tg:
            tg.start_soon(call, "read", True)
            tg.start_soon(call, "edit 1", False, first_edit)
            tg.start_soon(call, "edit 2", False)
            await anyio.wait_all_tasks_blocked()
            first_edit.cancel()
            await anyio.wait_all_tasks_blocked()
            assert log == ["start read"]  # edit 2 still waits for the read
            gate.set()
    assert log == ["start read", "end read", "start edit 2", "end edit 2"]


def test_a_turn_that_may_start_enters_at_once_and_leave_gives_a_place_up() -> None:
    async def main() -> None:
        scheduler = CallScheduler()
        first, second, third = (scheduler.admit(parallel=False) for _ in range(3))
        ran: list[str] = []

        async def other() -> None:
            ran.append("other")

        async with anyio.create_task_group() as tg:
            tg.start_soon(other)
            async with first:  # may start: no checkpoint, so the other task has not run yet
                assert ran == []
                second.leave()  # gives its place up without having run
                assert len(scheduler) == 2
            async with third:  # next once the first is done, the second gone
                pass
        assert ran == ["other"] and len(scheduler) == 0

    anyio.run(main)
