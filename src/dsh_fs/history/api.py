"""The library surface of the history (docs/HISTORY.md "Library"): ``ctx.history(session)``,
``ctx.checkpoint(session, name)`` and ``ctx.rewind(session, to=…)``, provided by the
``HistoryService`` plugin that ``create_context(history=True)`` loads.

The owner is the session: an in-process ``Session`` by its ``id``, a named session
(``--session NAME``) by its name; a ``str`` names an owner directly.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from ..core.session import Session
from .model import Checkpoint, Step
from .recorder import HistoryFileSystem
from .rewind import RewindResult, rewind_owner

if TYPE_CHECKING:
    from ..core.context import Context, Scope
    from ..core.signal import AbortSignal

__all__ = ("HistoryService", "StepList", "owner_of")


def owner_of(session: Session | str) -> str:
    """The history owner of ``session``: its ``history_owner`` when it has one (an HTTP
    deployment's sessions: ``http:<agent>``, one history per bearer token, docs/HISTORY.md
    "MCP"), else its ``id`` (a named session's is its name), or the string itself.

    :raises TypeError: anything else
    """
    if isinstance(session, Session):
        return getattr(session, "history_owner", None) or session.id
    if isinstance(session, str):
        return session
    raise TypeError(f"a Session or an owner name, not {type(session).__name__}")


class StepList(list[Step]):
    """An owner's steps, oldest first (``list[Step]``), with its ``checkpoints`` and ``dropped``:
    how many of its oldest steps were dropped to keep it under the byte cap (steps
    ``1 .. dropped`` are no longer held)."""

    def __init__(self, steps: Collection[Step], *, checkpoints: tuple[Checkpoint, ...] = (), dropped: int = 0,
                 kept_bytes: int = 0) -> None:
        super().__init__(steps)
        self.checkpoints = checkpoints
        self.dropped = dropped
        self.kept_bytes = kept_bytes


class HistoryService:
    """Plugin: provides ``history``, ``checkpoint`` and ``rewind`` on the context, over the
    ``fs`` service, which must be a ``HistoryFileSystem`` (``create_context(history=True)``
    wraps the provider in one)."""

    name = "history"
    inject = ("fs",)

    def __init__(self, ctx: "Context") -> None:
        self._ctx = ctx

    @classmethod
    def apply(cls, scope: "Scope", /, **config: Any) -> None:
        service = cls(scope.ctx)
        scope.provide("history", service.history)
        scope.provide("checkpoint", service.checkpoint)
        scope.provide("rewind", service.rewind)

    def _fs(self) -> HistoryFileSystem:
        fs = self._ctx.fs
        if not isinstance(fs, HistoryFileSystem):
            raise RuntimeError("the context's fs records no history (create_context(history=True))")
        return fs

    async def history(self, session: Session | str) -> StepList:
        """``await ctx.history(session)``: the owner's steps, oldest first (numbered from 1; each
        with its tool, time, changed paths and the names of checkpoints marked right after it).

        :returns: a ``StepList`` (a ``list[Step]`` that also says how many oldest steps were dropped)
        """
        found = await self._fs().store.history(owner_of(session))
        return StepList(found.steps, checkpoints=found.checkpoints, dropped=found.dropped, kept_bytes=found.bytes)

    async def checkpoint(self, session: Session | str, name: str) -> str:
        """``await ctx.checkpoint(session, name)``: mark the owner's current point (right after
        its newest step) as ``name``; returns the checkpoint's id (``rewind(to=)`` takes the id or
        the name: the newest checkpoint of that name).

        :raises ValueError: an empty name
        """
        if not isinstance(name, str) or not name:
            raise ValueError("a checkpoint needs a name")
        return await self._fs().store.checkpoint(owner_of(session), name)

    async def rewind(self, session: Session | str, *, to: int | str | None = None, last: int | None = None,
                     dry_run: bool = False, skip_changed: bool = False, skip: Collection[str] = (),
                     force: Collection[str] = (), signal: "AbortSignal | None" = None) -> RewindResult:
        """``await ctx.rewind(session, to=…)``: bring every file the owner changed after the point
        back to its state there: files created since are removed, deleted ones come back, moved
        ones move back. The rewind is itself a step (rewinding it is a redo).

        :param to: a step number (the state right after it; 0: before the first step) or a
            checkpoint's id or name
        :param last: instead of ``to``: take back the newest ``last`` steps
        :param dry_run: write nothing; every file's result carries the unified diff it would apply
        :param skip_changed: leave out every file someone else changed since (or whose content
            was not kept) instead of refusing the whole rewind
        :param skip: paths (as the history shows them) to leave out in the same way
        :param force: paths to restore even though someone else changed them (their content now
            is replaced; the rewind's own step keeps it, so it can be rewound)
        :returns: ``RewindResult`` (``refused``: nothing was written, see each refused file's reason)
        :raises RewindError: an unknown step or checkpoint, or one whose later steps were dropped
        """
        for name, value in (("skip", skip), ("force", force)):
            if isinstance(value, str):
                raise TypeError(f"{name}= takes a collection of paths, not one string")
        return await rewind_owner(self._fs(), owner_of(session), to=to, last=last, dry_run=dry_run,
                                  skip_changed=skip_changed, skip=skip, force=force, signal=signal)
