"""``core.signal``: ``run_under_signal`` (work cancelled by an abort or a time budget, its
outcome collected outside the task group) and ``run_abortable``'s reason.

Covers: each way an ``Outcome`` ends (returned, raised — a plain exception, never an
exception group —, timed out, aborted midway, aborted before the start), the caller's own
cancellation propagating, a thread wait abandoned by an abort. ``run_abortable``'s shielding
is tested in ``tests/e2e/mcp/test_mcp_cancel.py``.
"""

from __future__ import annotations

import threading

import anyio
import anyio.to_thread
import pytest

from dsh_fs.core.signal import AbortSignal, Outcome, run_abortable, run_under_signal


def test_work_that_returns_or_raises() -> None:
    async def main() -> None:
        async def value() -> int:
            return 7

        got = await run_under_signal(value, signal=AbortSignal(), timeout=60)
        assert (got.returned, got.value, got.error, got.timed_out, got.aborted) == (True, 7, None, False, False)

        async def fail() -> None:
            raise KeyError("boom")

        got = await run_under_signal(fail)
        assert type(got.error) is KeyError and not got.returned and not got.aborted and not got.timed_out

        async def none() -> None:
            return None

        got = await run_under_signal(none)
        assert got.returned and got.value is None and not got.aborted

    anyio.run(main)


def test_the_time_budget_cancels_the_work() -> None:
    cancelled = []

    async def main() -> Outcome[None]:
        async def slow() -> None:
            try:
                await anyio.sleep(30)
            except anyio.get_cancelled_exc_class():
                cancelled.append(True)
                raise

        with anyio.fail_after(60):
            return await run_under_signal(slow, signal=AbortSignal(), timeout=0.05)

    got = anyio.run(main)
    assert got.timed_out and not got.aborted and not got.returned and cancelled == [True]


def test_an_abort_cancels_the_work_even_from_another_thread() -> None:
    signal = AbortSignal()

    async def main() -> Outcome[None]:
        async def slow() -> None:
            threading.Timer(0.05, signal.abort).start()
            await anyio.sleep(30)

        with anyio.fail_after(60):
            return await run_under_signal(slow, signal=signal, poll=0.005)

    got = anyio.run(main)
    assert got.aborted and not got.timed_out and got.error is None


def test_an_aborted_signal_runs_nothing() -> None:
    ran = []

    async def main() -> Outcome[None]:
        async def work() -> None:
            ran.append(True)

        return await run_under_signal(work, signal=AbortSignal.aborted_signal())

    assert anyio.run(main).aborted and ran == []


def test_a_thread_wait_is_abandoned_on_abort() -> None:
    """As the local provider's lock waits: the thread is left to finish on its own."""
    release = threading.Event()
    signal = AbortSignal()

    async def main() -> Outcome[bool]:
        def wait() -> bool:
            return release.wait(60)

        threading.Timer(0.05, signal.abort).start()
        with anyio.fail_after(60):
            return await run_under_signal(
                lambda: anyio.to_thread.run_sync(wait, abandon_on_cancel=True), signal=signal, poll=0.005
            )

    try:
        assert anyio.run(main).aborted
    finally:
        release.set()


def test_the_callers_cancellation_propagates() -> None:
    reached = []

    async def main() -> None:
        async def slow() -> None:
            await anyio.sleep(30)

        with anyio.move_on_after(0.05) as outer:
            await run_under_signal(slow, signal=AbortSignal(), timeout=20)
            reached.append(True)
        assert outer.cancelled_caught

    anyio.run(main)
    assert reached == []


def test_run_abortable_aborts_with_the_reason() -> None:
    seen: list[AbortSignal] = []

    async def main() -> None:
        async def work(signal: AbortSignal) -> None:
            seen.append(signal)
            while not signal.aborted:
                await anyio.sleep(0.005)

        with anyio.fail_after(60):
            async with anyio.create_task_group() as tg:
                tg.start_soon(lambda: run_abortable(work, reason="the client cancelled the request"))
                while not seen:
                    await anyio.sleep(0.005)
                tg.cancel_scope.cancel()

    anyio.run(main)
    assert seen[0].reason == "the client cancelled the request"


@pytest.mark.parametrize("timeout", [None, 60.0])
def test_no_budget_or_a_long_one_lets_work_finish(timeout: float | None) -> None:
    async def main() -> Outcome[str]:
        async def work() -> str:
            await anyio.sleep(0.01)
            return "done"

        return await run_under_signal(work, timeout=timeout)

    got = anyio.run(main)
    assert got.returned and got.value == "done"
