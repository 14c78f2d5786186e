"""A coroutine run on the current task until it suspends, then carried on there
(``dsh_fs.mcp.inline``): what the stdio reader does with a lean call. Real asyncio and anyio,
no fakes: a body that never suspends, one that does (a sleep, a worker thread, an anyio cancel
scope entered before suspending), one cancelled while suspended, one raising before and after
suspending, context variables kept to the call."""

from __future__ import annotations

import asyncio
import contextvars
from typing import Any

import anyio
import anyio.to_thread
import pytest

from dsh_fs.mcp.inline import Suspended, carry_on, first_step

VAR: contextvars.ContextVar[str] = contextvars.ContextVar("VAR", default="unset")


async def _nothing() -> None:
    return None


def _run(main: Any) -> Any:
    return asyncio.run(main())


def test_a_body_that_never_suspends_is_done_in_the_first_step() -> None:
    seen: list[Any] = []

    async def body() -> None:
        seen.append(asyncio.current_task())
        await _nothing()  # an await that does not suspend
        seen.append("done")

    async def main() -> None:
        assert first_step(body()) is None
        assert seen == [asyncio.current_task(), "done"]  # on the caller's task, at once

    _run(main)


@pytest.mark.parametrize("kind", ["sleep", "thread", "scope"])
def test_a_body_that_suspends_is_carried_on_by_the_same_task(kind: str) -> None:
    tasks: list[Any] = []

    async def body() -> str:
        tasks.append(asyncio.current_task())
        if kind == "sleep":
            await asyncio.sleep(0.01)
        elif kind == "thread":
            assert await anyio.to_thread.run_sync(lambda: 41) == 41
        else:
            with anyio.CancelScope():  # entered before suspending, exited after: the same task
                await anyio.sleep(0.01)
        tasks.append(asyncio.current_task())
        return "value"

    async def main() -> None:
        suspended = first_step(body())
        assert isinstance(suspended, Suspended)
        assert await carry_on(suspended) == "value"
        assert tasks == [asyncio.current_task()] * 2

    _run(main)


def test_a_task_cancelled_while_the_body_waits_hands_the_cancellation_to_it() -> None:
    events: list[str] = []

    async def body() -> str:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            events.append("cancelled inside")
            return "gave up"
        return "slept"

    async def holder() -> str:
        suspended = first_step(body())
        assert suspended is not None
        return await carry_on(suspended)

    async def main() -> None:
        task = asyncio.get_running_loop().create_task(holder())
        await asyncio.sleep(0.01)
        task.cancel()
        assert await task == "gave up"
        assert events == ["cancelled inside"]

    _run(main)


def test_a_cancellation_the_body_does_not_catch_ends_the_task_cancelled() -> None:
    async def body() -> None:
        await asyncio.sleep(10)

    async def holder() -> None:
        suspended = first_step(body())
        assert suspended is not None
        await carry_on(suspended)

    async def main() -> None:
        task = asyncio.get_running_loop().create_task(holder())
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    _run(main)


def test_what_the_body_raises_reaches_the_caller_before_or_after_suspending() -> None:
    async def early() -> None:
        raise ValueError("early")

    async def late() -> None:
        await asyncio.sleep(0)
        raise KeyError("late")

    async def main() -> None:
        with pytest.raises(ValueError, match="early"):
            first_step(early())
        suspended = first_step(late())
        assert suspended is not None
        with pytest.raises(KeyError, match="late"):
            await carry_on(suspended)

    _run(main)


def test_a_context_variable_the_body_sets_stays_the_bodys() -> None:
    async def body(gate: asyncio.Event) -> str:
        token = VAR.set("call")
        await gate.wait()
        value = VAR.get()
        VAR.reset(token)  # a token of the call's own context: valid after the suspension
        return value

    async def main() -> None:
        gate = asyncio.Event()
        suspended = first_step(body(gate))
        assert suspended is not None
        assert VAR.get() == "unset"  # the caller's context is untouched
        asyncio.get_running_loop().call_later(0.01, gate.set)
        assert await carry_on(suspended) == "call"
        assert VAR.get() == "unset"

    _run(main)


def test_two_bodies_suspended_at_once_keep_their_own_contexts() -> None:
    async def body(name: str, gate: asyncio.Event) -> str:
        VAR.set(name)
        await gate.wait()
        return VAR.get()

    async def holder(name: str, gate: asyncio.Event) -> str:
        suspended = first_step(body(name, gate))
        assert suspended is not None
        return await carry_on(suspended)

    async def main() -> None:
        gate = asyncio.Event()
        loop = asyncio.get_running_loop()
        one, two = loop.create_task(holder("one", gate)), loop.create_task(holder("two", gate))
        await asyncio.sleep(0.01)
        gate.set()
        assert await asyncio.gather(one, two) == ["one", "two"]

    _run(main)
