"""A framework's checkpoints and runs tied to the agent's file history (docs/HISTORY.md
"Frameworks").

``FileCheckpoints(tools)`` takes the adapter object of one agent — LangChain's
``DshFsToolkit`` (a LangGraph graph, ``create_agent``), deepagents' ``DshFsBackend``,
pydantic-ai's ``DshFsToolset`` — whose context records a history (``create_context(history=…)``).
Before each tool call of that agent, the adapter names the framework's point the call starts
from; the first call from a point marks a dsh-fs checkpoint of that name in the agent's
history (``ctx.checkpoint``), before the call changes anything. ``rewind(point)`` then brings
every file the agent changed since back to its state at that point (``ctx.rewind``: never over
a file someone else changed since; a dry run shows the diffs), and records them as the agent's
observations there: the agent sent back to that point may change them as it could then.

The points, per framework (the adapter's ``checkpoint_name``):

* LangGraph (LangChain toolkit, deepagents backend): the graph checkpoint a tool task started
  from (``configurable.checkpoint_map[""]``), named ``langgraph:<checkpoint_id>``; ``rewind``
  takes a ``RunnableConfig`` naming a checkpoint (a ``StateSnapshot.config`` of
  ``graph.get_state_history``) — the state the graph resumes from when invoked with it. A
  checkpoint no tool call started from (one before a model turn, the last of a run) has the
  files the tool calls before it left (``FileCheckpoints.point``).
* pydantic-ai: the run (``RunContext.run_id``), named ``pydantic-ai:<run_id>``; ``rewind`` takes
  the run id (``AgentRunResult.run_id``): the files as they were when that run's first tool
  call began — the run taken back.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

import anyio

from ..core.session import Session
from ..history.model import Checkpoint, Step

__all__ = ("FileCheckpoints", "step_of_point")


def step_of_point(name: str, steps: Sequence[Step], checkpoints: Sequence[Checkpoint], *, newest: int) -> int:
    """The step a framework point named ``name`` (``<framework>:<id>``, ids sorting in the
    framework's order) stands for in an agent's history (pure; ``FileCheckpoints.point``).

    :param steps: the agent's steps, oldest first
    :param checkpoints: its checkpoints, in the order they were marked
    :param newest: the newest step's number (the history's ``last``)
    :returns: the step its mark follows; for a name never marked, the step before the mark or
        the rewind (``rewind``, ``undo_edit``) that came next after the marked point before it,
        else ``newest``; for a name before every mark, the first mark after it, else ``newest``
    """
    prefix = name.split(":", 1)[0] + ":"
    marks = [c for c in checkpoints if c.name.startswith(prefix)]
    exact = [c for c in marks if c.name == name]
    if exact:
        return exact[0].step
    earlier = [c for c in marks if c.name < name]
    if not earlier:
        later = [c for c in marks if c.name > name]
        return later[0].step if later else newest
    last = max(earlier, key=lambda c: c.name)
    end = newest
    following = marks[marks.index(last) + 1:]
    if following:
        end = min(end, following[0].step)
    for step in steps:
        if step.number > last.step and step.tool in ("rewind", "undo_edit"):
            return min(end, step.number - 1)
    return end


class FileCheckpoints:
    """One agent's framework points tied to dsh-fs checkpoints of its history.

    :param tools: the agent's adapter object (``DshFsToolkit``, ``DshFsBackend``,
        ``DshFsToolset``): it has ``ctx``, ``session``, ``call_hooks`` and ``checkpoint_name``
    :raises ValueError: the adapter's context records no history
        (``create_context(history=True)`` or a named session's store)
    :raises TypeError: ``tools`` is not such an adapter object
    """

    def __init__(self, tools: Any) -> None:
        if not all(hasattr(tools, name) for name in ("ctx", "session", "call_hooks", "checkpoint_name")):
            raise TypeError("FileCheckpoints takes a dsh-fs adapter object (DshFsToolkit, DshFsBackend, DshFsToolset)")
        ctx = tools.ctx
        if not (hasattr(ctx, "has") and ctx.has("history")):
            raise ValueError("FileCheckpoints needs a context that records a history: create_context(history=True)")
        self._tools = tools
        self.ctx = ctx
        self.session: Session = tools.session
        self._marked: dict[str, anyio.Event] = {}
        tools.call_hooks.append(self.mark)

    async def mark(self, name: str | None) -> None:
        """Mark checkpoint ``name`` at the agent's current point, once (the adapters call this
        before each tool call; a call from a point already marked waits until its mark is
        stored). ``None``: the call starts from no framework point (nothing to mark)."""
        if name is None:
            return
        event = self._marked.get(name)
        if event is not None:
            await event.wait()
            return
        event = self._marked[name] = anyio.Event()
        try:
            await self.ctx.checkpoint(self.session, name)
        except BaseException:
            del self._marked[name]
            raise
        finally:
            event.set()

    async def point(self, where: Any) -> int:
        """The step of the agent's history that framework point ``where`` stands for: the step
        its checkpoint was marked after (the files when the first tool call from it began).

        A point never marked (a LangGraph checkpoint before a model turn, or the last one of a
        run) has the files the tool calls from the marked point before it left (in the
        framework's order: LangGraph's checkpoint ids sort by time): the step before the next
        mark or the next rewind, whichever comes first, else the newest step. A point before
        every mark: the first mark after it, else the newest step.

        :raises ValueError: ``where`` names no point of this framework
        """
        name = self._tools.checkpoint_name(where)
        steps = await self.ctx.history(self.session)
        return step_of_point(name, steps, steps.checkpoints, newest=steps[-1].number if steps else steps.dropped)

    async def arewind(self, where: Any, *, dry_run: bool = False, skip_changed: bool = False,
                      skip: Collection[str] = (), force: Collection[str] = ()) -> Any:
        """Bring every file the agent changed after framework point ``where`` back to its state
        there (``ctx.rewind``: ``dry_run``, ``skip_changed``, ``skip``, ``force`` as there).

        :returns: the ``history.RewindResult`` (``refused``: nothing was written)
        :raises ValueError: ``where`` names no point; ``history.RewindError``: the point's
            steps were dropped from the history
        """
        to = await self.point(where)
        result = await self.ctx.rewind(self.session, to=to, dry_run=dry_run, skip_changed=skip_changed,
                                       skip=skip, force=force)
        await self._observe(result)
        return result

    async def _observe(self, result: Any) -> None:
        """The agent's observations follow its files back: every file the rewind wrote is
        recorded as observed by the agent at the version written (a removed one as absent, D8),
        so the agent, sent back to that point, changes them as it could there, without a
        ``read`` (a file someone else changes later is still refused as stale)."""
        from ..core.session import ToolExecution
        from ..fs.events import FS_OBSERVED
        from ..tool_common.switches import ToolSwitches
        from ..fs.types import Version

        absence = ToolSwitches.of(self.ctx.profile).record_absence
        execution = ToolExecution(session=self.session)
        for file in result.files:
            if not file.done:
                continue
            if file.version is None and not absence:
                continue
            target = await self.ctx.fs.resolve(file.path, cwd=self.session.cwd)
            self.ctx.emit(FS_OBSERVED, target, None if file.version is None else Version(file.version), execution)

    def rewind(self, where: Any, *, dry_run: bool = False, skip_changed: bool = False,
               skip: Collection[str] = (), force: Collection[str] = ()) -> Any:
        """:meth:`arewind` from sync code, on the adapter's own event loop (its ``runner``).

        :raises RuntimeError: called on a running event loop (use :meth:`arewind` there)
        """
        runner = getattr(self._tools, "runner", None)
        if runner is None:
            raise RuntimeError(f"{type(self._tools).__name__} is async only: await FileCheckpoints.arewind(...)")
        return runner.run(
            lambda: self.arewind(where, dry_run=dry_run, skip_changed=skip_changed, skip=skip, force=force))
