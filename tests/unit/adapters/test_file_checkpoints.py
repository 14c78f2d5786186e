"""``dsh_fs.adapters.checkpoints`` without a framework: which step a framework point stands for
(``step_of_point``, pure), a point marked once while calls from it wait for the mark, and the
agent's observations after a rewind (the files written are observed, a dry run or a refused
rewind changes none). With the real frameworks: tests/e2e/adapters/test_history_checkpoints.py."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import pytest

from dsh_fs import Session, create_context
from dsh_fs.adapters.checkpoints import FileCheckpoints, step_of_point
from dsh_fs.history.model import Checkpoint, Step

pytestmark = pytest.mark.anyio


def steps(*tools: str) -> list[Step]:
    return [Step(number=n, time=0.0, tool=tool, owner="o") for n, tool in enumerate(tools, start=1)]


def marks(*pairs: tuple[str, int]) -> list[Checkpoint]:
    return [Checkpoint(id=f"i{n}", name=name, step=step, time=0.0) for n, (name, step) in enumerate(pairs)]


def test_a_marked_point_is_its_step_and_other_frameworks_do_not_count() -> None:
    history = steps("edit", "write", "edit")
    points = marks(("g:b", 1), ("g:b", 2), ("p:c", 0), ("g:d", 3))
    assert step_of_point("g:b", history, points, newest=3) == 1  # the first mark of that name
    assert step_of_point("g:d", history, points, newest=3) == 3
    assert step_of_point("g:a", history, points, newest=3) == 1  # before every mark: the first after it
    assert step_of_point("p:b", history, points, newest=3) == 0  # p:c is p's first mark after it
    assert step_of_point("q:a", history, points, newest=3) == 3  # no mark of q at all: as now
    assert step_of_point("p:d", history, points, newest=3) == 3  # after p's every mark: as now


def test_a_point_never_marked_has_the_files_the_calls_before_it_left() -> None:
    history = steps("edit", "write", "edit", "rewind", "edit")
    points = marks(("g:1", 0), ("g:5", 2), ("g:3", 4))
    assert step_of_point("g:2", history, points, newest=5) == 2  # up to the next mark (g:5 at step 2)
    assert step_of_point("g:6", history, points, newest=5) == 3  # after g:5: up to the rewind at step 4
    assert step_of_point("g:4", history, points, newest=5) == 5  # after g:3 (marked at 4): no rewind later
    points = marks(("g:1", 0))
    assert step_of_point("g:2", steps("edit", "edit"), points, newest=2) == 2
    assert step_of_point("g:2", steps("edit", "undo_edit", "edit", "rewind"), points, newest=4) == 1
    assert step_of_point("g:2", steps("rewind", "edit"), marks(("g:1", 1)), newest=2) == 2


class Slow:
    """A stand-in context whose ``checkpoint`` waits until released."""

    def __init__(self) -> None:
        self.release = anyio.Event()
        self.marked: list[str] = []

    def has(self, name: str) -> bool:
        return name == "history"

    async def checkpoint(self, session: Any, name: str) -> str:
        await self.release.wait()
        self.marked.append(name)
        return name


class Tools:
    def __init__(self, ctx: Any) -> None:
        self.ctx, self.session, self.call_hooks = ctx, Session(), []

    @staticmethod
    def checkpoint_name(where: Any) -> str:
        return f"g:{where}"


async def test_a_point_is_marked_once_and_calls_from_it_wait_for_the_mark() -> None:
    ctx = Slow()
    tools = Tools(ctx)
    files = FileCheckpoints(tools)
    assert tools.call_hooks == [files.mark]
    done: list[str] = []

    async def call(who: str) -> None:
        await files.mark("g:1")
        done.append(who)

    async with anyio.create_task_group() as tg:
        tg.start_soon(call, "first")
        await anyio.wait_all_tasks_blocked()
        tg.start_soon(call, "second")
        await anyio.wait_all_tasks_blocked()
        assert done == [] and ctx.marked == []  # the second waits for the first's mark
        ctx.release.set()
    assert sorted(done) == ["first", "second"] and ctx.marked == ["g:1"]
    await files.mark(None)
    assert ctx.marked == ["g:1"]


async def test_a_failed_mark_is_tried_again() -> None:
    class Failing(Slow):
        async def checkpoint(self, session: Any, name: str) -> str:
            if not self.marked:
                self.marked.append("failed")
                raise OSError("disk full")
            return await super().checkpoint(session, name)

    ctx = Failing()
    ctx.release.set()
    files = FileCheckpoints(Tools(ctx))
    with pytest.raises(OSError):
        await files.mark("g:1")
    await files.mark("g:1")
    assert ctx.marked == ["failed", "g:1"]


async def test_the_agent_observes_what_a_rewind_wrote_and_nothing_else(tmp_path: Path) -> None:
    ws = os.path.realpath(tmp_path)
    Path(ws, "a.txt").write_text("one\n")
    ctx = create_context(root=ws, history=True)
    tools = Tools(ctx)
    tools.session = Session(cwd=ws)
    files = FileCheckpoints(tools)

    async def run(tool: str, **args: Any) -> Any:
        return await ctx.tools.execute(tool, args, session=tools.session)

    async with ctx:
        await run("read", file_path="a.txt")
        await files.mark("g:1")
        assert not (await run("edit", file_path="a.txt", old_string="one", new_string="two")).is_error
        assert not (await run("write", file_path="b.txt", content="bee\n")).is_error
        await files.arewind(1, dry_run=True)
        assert not (await run("edit", file_path="a.txt", old_string="two", new_string="2")).is_error
        Path(ws, "b.txt").write_text("a person's\n")
        refused = await files.arewind(1)
        assert refused.refused
        stale = await run("edit", file_path="a.txt", old_string="2", new_string="3")
        assert not stale.is_error, stale.text  # a refused rewind wrote nothing: the agent's view stands
        done = await files.arewind(1, skip_changed=True)
        assert not done.refused and Path(ws, "a.txt").read_text() == "one\n"
        again = await run("edit", file_path="a.txt", old_string="one", new_string="uno")
        assert not again.is_error, again.text  # what the rewind wrote is observed: no read needed


@pytest.mark.parametrize("profile", ["default", "reference"])
async def test_a_file_the_rewind_removed_is_observed_absent_in_the_default_profile(tmp_path: Path,
                                                                                   profile: str) -> None:
    """D8: the agent saw the file gone, so one someone creates later is a file it has not read; the
    reference keeps no absence, so the agent's view is still the file it wrote: changed since."""
    ws = os.path.realpath(tmp_path)
    ctx = create_context(root=ws, history=True, profile=profile)
    tools = Tools(ctx)
    tools.session = Session(cwd=ws)
    files = FileCheckpoints(tools)
    Path(ws, "a.txt").write_text("one\n")

    async def run(tool: str, **args: Any) -> Any:
        return await ctx.tools.execute(tool, args, session=tools.session)

    async with ctx:
        await run("read", file_path="a.txt")
        await files.mark("g:1")
        assert not (await run("edit", file_path="a.txt", old_string="one", new_string="two")).is_error
        assert not (await run("write", file_path="b.txt", content="bee\n")).is_error
        assert await files.point(9) == 2  # after every mark, no rewind since: the files as now
        assert not (await files.arewind(1)).refused and not Path(ws, "b.txt").exists()
        restored = await run("edit", file_path="a.txt", old_string="one", new_string="uno")
        assert not restored.is_error, restored.text  # in both profiles: a restored file is observed
        Path(ws, "b.txt").write_text("a person's\n")
        again = await ctx.tools.execute("write", {"file_path": "b.txt", "content": "mine\n"}, session=tools.session)
        assert again.is_error and again.error is not None
        assert again.error.code == ("FS_NOT_OBSERVED" if profile == "default" else "FS_STALE_VERSION"), again.text
