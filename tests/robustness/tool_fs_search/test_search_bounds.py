"""Concurrent searches are bounded (deviation D23; ``tool_fs_search.limiter``).

* At most 4 ripgrep processes run at once in a context (an MCP server), at most 2 for one
  owner (session): 24 greps from 8 sessions at once, through the registry, never have more
  running — counted by a scripted ripgrep that logs its starts and ends. The rest wait and
  all succeed.
* An owner with 2 running and 8 waiting is refused at once, with a text that says why.
* ripgrep's own memory bounds: a 13-byte regex that compiles to ~250 MB fails with
  ripgrep's error instead (the real ripgrep), and the memory stays with the caller.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import anyio
import pytest

import dsh_fs
from dsh_fs import Session

pytestmark = pytest.mark.timeout(120)


def _logging_rg(directory: Path, *, sleep: float) -> tuple[str, Path]:
    """A ripgrep stand-in that logs ``start <cwd>`` / ``end <cwd>`` and prints nothing (exit 1)."""
    log = directory / "log"
    script = directory / "rg"
    script.write_text(f'#!/bin/sh\necho "start $(pwd)" >> "{log}"\nsleep {sleep}\necho "end $(pwd)" >> "{log}"\nexit 1\n')
    script.chmod(stat.S_IRWXU)
    return str(script), log


def _most_at_once(lines: list[str], cwd: str | None = None) -> int:
    running = most = 0
    for line in lines:
        verb, where = line.split(" ", 1)
        if cwd is None or where == cwd:
            running += 1 if verb == "start" else -1
            most = max(most, running)
    return most


def test_ripgrep_processes_are_bounded_in_all_and_per_session(tmp_path: Path) -> None:
    root = os.path.realpath(tmp_path / "ws")
    sessions = [os.path.join(root, f"s{index}") for index in range(8)]
    for cwd in sessions:
        os.makedirs(cwd)
    rg, log = _logging_rg(tmp_path, sleep=0.3)
    ctx = dsh_fs.create_context(cwd=root, rg_path=rg)
    results: list[dsh_fs.ToolResult] = []

    async def main() -> None:
        async with ctx:
            owners = [Session(cwd) for cwd in sessions]

            async def one(owner: Session) -> None:
                results.append(await ctx.tools.execute("grep", {"pattern": "x"}, session=owner))

            with anyio.fail_after(60):
                async with anyio.create_task_group() as tg:
                    for index in range(24):
                        tg.start_soon(one, owners[index % 8])

    anyio.run(main)
    assert [result.text for result in results] == ["No matches found"] * 24
    lines = log.read_text().splitlines()
    assert len(lines) == 48
    assert _most_at_once(lines) <= 4
    assert all(_most_at_once(lines, cwd) <= 2 for cwd in sessions)


def test_an_owner_with_too_many_waiting_is_refused_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Events, not elapsed time: the eleventh call is made once the slots hold 2 running and 8
    waiting (ripgrep sleeps ten minutes, so none ends meanwhile), and a call that waited
    instead of being refused would outlast its 60 s guard."""
    from dsh_fs.tool_fs_search import search_core
    from dsh_fs.tool_fs_search.limiter import SearchSlots

    made: list[SearchSlots] = []

    class Watched(SearchSlots):
        def __init__(self, **kw: int) -> None:
            super().__init__(**kw)
            made.append(self)

    monkeypatch.setattr(search_core, "SearchSlots", Watched)
    root = os.path.realpath(tmp_path / "ws")
    os.makedirs(root)
    rg, _ = _logging_rg(tmp_path, sleep=600)
    ctx = dsh_fs.create_context(cwd=root, rg_path=rg)

    async def main() -> None:
        async with ctx:
            owner = Session(root)
            async with anyio.create_task_group() as tg:
                async def held() -> None:
                    await ctx.tools.execute("grep", {"pattern": "x"}, session=owner)

                for _ in range(10):  # 2 running, 8 waiting
                    tg.start_soon(held)
                (slots,) = made
                with anyio.fail_after(60):
                    while slots.running < 2 or sum(slots._users.values()) < 10:
                        await anyio.sleep(0.01)
                with anyio.fail_after(60):
                    refused = await ctx.tools.execute("grep", {"pattern": "x"}, session=owner)
                tg.cancel_scope.cancel()
            assert refused.is_error and refused.error.code == "SEARCH_FAILED"
            assert refused.text == (
                "Error: grep refused: this session already has 2 searches running and 8 waiting; wait for them"
                " to finish, then retry"
            )

    anyio.run(main)


@pytest.mark.parametrize("profile", ["default", "reference"])
def test_ripgrep_memory_is_bounded(tmp_path: Path, profile: str) -> None:
    root = os.path.realpath(tmp_path)
    (tmp_path / "a.txt").write_text("alpha\n")

    async def main() -> dsh_fs.ToolResult:
        ctx = dsh_fs.create_context(cwd=root, profile=profile)
        async with ctx:
            return await ctx.tools.execute("grep", {"pattern": r"(\w{50}){40}"}, session=Session(root))

    result = anyio.run(main)
    assert result.is_error
    assert result.text == "Error: grep search failed (exit 2): rg: compiled regex exceeds size limit of 33554432"
