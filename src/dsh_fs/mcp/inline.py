"""A coroutine run on the current task until it first suspends, and carried on there if it does.

The stdio reader (``stdio.py``) runs a lean ``tools/call`` (``lean.LeanCalls.prepare``) inside
its own task, with ``first_step``: a small local ``read`` finishes without ever suspending, so
it is answered with no task of its own and no loop turn beyond the one that read its line
(bench/README.md, "The MCP stdio round trip, fourth pass"). Python 3.11 has no eager tasks, so
a call that does suspend (a worker thread, its turn behind another call, a full stdout pipe) is
carried on by ``carry_on`` *in the same task*, which then stops reading (a new reader task takes
over): every anyio cancel scope the call entered stays in the task it entered it in, and
``asyncio.current_task()`` stays the call's for its whole life.

Each call runs in a context of its own (``contextvars.copy_context()``, as a task of its own
would), entered for every step, so a context variable a call sets never reaches the reader or
another call. ``carry_on`` passes to the call what the task is sent or thrown (a cancellation
of the task is the call's: ``lean.LeanCalls`` cancels a call waiting for its turn that way).
"""

from __future__ import annotations

import contextvars
from collections.abc import Coroutine, Generator
from typing import Any

__all__ = ("Suspended", "carry_on", "first_step")


class Suspended:
    """A coroutine that suspended in ``first_step``: what it yielded, and its context."""

    __slots__ = ("context", "coro", "yielded")

    def __init__(self, coro: Coroutine[Any, Any, Any], yielded: Any, context: contextvars.Context) -> None:
        self.coro = coro
        self.yielded = yielded
        self.context = context


def first_step(coro: Coroutine[Any, Any, Any]) -> Suspended | None:
    """Run ``coro`` in a fresh context until it returns (``None``; its value is dropped) or
    suspends (``Suspended``: hand it to ``carry_on`` on this same task, at once).

    :raises BaseException: what ``coro`` raised (it is then finished)
    """
    context = contextvars.copy_context()
    try:
        yielded = context.run(coro.send, None)
    except StopIteration:
        return None
    return Suspended(coro, yielded, context)


async def carry_on(suspended: Suspended) -> Any:
    """Drive ``suspended`` to its end on the current task; its return value.

    :raises BaseException: what the coroutine raises (a cancellation it does not catch too)
    """
    return await _Resume(suspended)


class _Resume:
    """``await`` of a coroutine already started: its first yield handed to the task, then each
    value sent or exception thrown into the task passed to the coroutine, in its context."""

    __slots__ = ("_suspended",)

    def __init__(self, suspended: Suspended) -> None:
        self._suspended = suspended

    def __await__(self) -> Generator[Any, Any, Any]:
        coro, context, yielded = self._suspended.coro, self._suspended.context, self._suspended.yielded
        while True:
            try:
                sent = yield yielded
            except GeneratorExit:
                coro.close()
                raise
            except BaseException as exc:  # a cancellation of the task: the coroutine's
                try:
                    yielded = context.run(coro.throw, exc)
                except StopIteration as stop:
                    return stop.value
                continue
            try:
                yielded = context.run(coro.send, sent)
            except StopIteration as stop:
                return stop.value
