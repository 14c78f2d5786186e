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


def test_many_agents_over_http_lose_nothing_and_every_loser_is_stale(tmp_path: Any) -> None:
    sides = bench.run(str(tmp_path), agents=AGENTS, seconds=SECONDS)
    for kind, side in sides.items():
        assert side.bad_refusals == [], (kind, side)
        assert (side.lost, side.unreported) == (0, 0), (kind, side)
        assert side.edits_done >= AGENTS, (kind, side)  # every agent's own file took edits
        assert side.edits_lost_race > 0, (kind, side)  # the shared file was raced for
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
