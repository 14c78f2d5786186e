"""Many agents on one real ``dsh-fs mcp --http`` server (``bench/http_agents_bench.py``, 8
agents, a few seconds): each agent its own token and MCP session, looping ``read`` → ``edit``
on its own file and on one shared file. Whatever the interleaving: every edit reported done is
in its file exactly once and nothing else was added (0 lost), and every refused edit is a
shared-file ``FS_STALE_VERSION`` — over HTTP and in process alike. The checker itself is shown
to catch a lost and an unreported edit.

Not covered: timing (the bench reports it; the suite has no timing assertions).
"""

from __future__ import annotations

import os
import sys
from typing import Any

import anyio
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))), "bench"))

import http_agents_bench as bench  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

AGENTS = 8
SECONDS = 3.0


def _lockstep(calls: list[bench.Call]) -> list[bench.Call]:
    """The agents' calls, but no agent's first read of the shared file returns before every
    agent has made it: their first edits of it all start from one version, so all but one of
    them lose the race by construction (how the rest of the run interleaves is the scheduler's)."""
    state: dict[str, Any] = {"arrived": 0, "everyone": None}

    def wrap(call: bench.Call) -> bench.Call:
        first = [True]

        async def wrapped(name: str, args: dict[str, Any]) -> tuple[bool, str | None, str]:
            got = await call(name, args)
            if name == "read" and args["file_path"] == bench.SHARED and first[0]:
                first[0] = False
                if state["everyone"] is None:
                    state["everyone"] = anyio.Event()
                state["arrived"] += 1
                if state["arrived"] == len(calls):
                    state["everyone"].set()
                await state["everyone"].wait()
            return got

        return wrapped

    return [wrap(call) for call in calls]


def test_many_agents_over_http_lose_nothing_and_every_loser_is_stale(tmp_path: Any,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    loop = bench._loop

    async def in_lockstep(root: str, agents: int, seconds: float, calls: list[bench.Call]) -> bench.Side:
        return await loop(root, agents, seconds, _lockstep(calls))

    monkeypatch.setattr(bench, "_loop", in_lockstep)
    sides = bench.run(str(tmp_path), agents=AGENTS, seconds=SECONDS)
    for kind, side in sides.items():
        assert side.bad_refusals == [], (kind, side)
        assert (side.lost, side.unreported) == (0, 0), (kind, side)
        assert side.edits_done >= AGENTS, (kind, side)  # every agent's own file took edits
        assert side.edits_lost_race >= AGENTS - 1, (kind, side)  # the shared file was raced for (lockstep)
        assert side.refused_total == side.edits_lost_race
        assert side.ok


def _lying(call: bench.Call, *, report_undone: bool) -> bench.Call:
    """A call that, for one edit of an own file, reports success without making it
    (``report_undone``) or makes an extra change it does not report."""
    state = {"done": False}

    async def wrapped(name: str, args: dict[str, Any]) -> tuple[bool, str | None, str]:
        if name == "edit" and args["file_path"].startswith("own-") and not state["done"]:
            state["done"] = True
            if report_undone:
                return False, None, "pretend"
            await call(name, {**args, "new_string": f"ghost\n{bench.TAIL}"})
        return await call(name, args)

    return wrapped


@pytest.mark.parametrize("report_undone", [True, False], ids=["lost", "unreported"])
def test_the_checker_sees_a_lost_or_unreported_edit(tmp_path: Any, report_undone: bool) -> None:
    import dsh_fs

    root = os.path.realpath(tmp_path)
    bench.make_workspace(root, 2)
    ctx = dsh_fs.create_context(cwd=root)

    def caller() -> bench.Call:
        session = dsh_fs.Session(root)

        async def call(name: str, args: dict[str, Any]) -> tuple[bool, str | None, str]:
            result = await ctx.tools.execute(name, args, session=session)
            return result.is_error, result.error.code if result.error else None, result.text

        return call

    side = anyio.run(bench._loop, root, 2, 0.3, [_lying(caller(), report_undone=report_undone), caller()])
    assert not side.ok
    assert (side.lost, side.unreported) == ((1, 0) if report_undone else (0, 1))
