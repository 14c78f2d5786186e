"""Patches that ask the engine for too much work (``dsh_fs.patch``; EDITING-FACES-DESIGN §2.3).

A hunk is searched through a per-line index of the file. Measured without a clock (the Python
lines of ``dsh_fs.patch.locate`` executed, ``stepcount``): the candidate places a hunk is
compared at grow with the occurrences of its *rarest* expected line, not with those of its
first one — a patch of thousands of hunks that each start with a blank context line on a file
with thousands of blank lines used to compare every hunk at every blank line (quadratic:
~9 s for 2000 hunks on a 60 000-line file).
"""

from __future__ import annotations

import os
import threading

import anyio
import pytest

import dsh_fs
from dsh_fs import Session
from dsh_fs.patch import FileState, PatchRejected, locate, parse_patch, plan_patch
from stepcount import traced_lines

pytestmark = pytest.mark.timeout(120)


def _functions(count: int) -> str:
    return "".join(f"def f{i}():\n    return {i}\n\n" for i in range(count))


def _renames(count: int, every: int) -> str:
    hunks = []
    for i in range(0, count, every):
        hunks += ["@@", "", f"-def f{i}():", f"+def g{i}():"] if i else ["@@", f"-def f{i}():", f"+def g{i}():"]
    return "*** Begin Patch\n*** Update File: a\n" + "\n".join(hunks) + "\n*** End Patch\n"


def _work(count: int, every: int) -> int:
    patch = parse_patch(_renames(count, every))
    state = {"a": FileState(display="/a", key="a", text=_functions(count))}
    (change,), lines = traced_lines(lambda: plan_patch(patch, state), locate)
    assert all(f"def g{i}():\n" in change.after for i in range(0, count, every))
    return lines


def test_hunks_are_compared_where_their_rarest_line_is() -> None:
    small, large = _work(1000, 10), _work(4000, 10)  # 4 times the hunks on a 4 times longer file
    assert large < 5 * small, (small, large)  # linear; comparing at every blank line was ~16 times


def test_a_hunk_of_common_lines_ending_in_a_missing_one_is_refused_at_once() -> None:
    state = {"a": FileState(display="/a", key="a", text="x\n" * 50_000)}

    def work(body: str) -> tuple[str, int]:
        patch = parse_patch("*** Begin Patch\n*** Update File: a\n@@\n" + body + "*** End Patch\n")

        def refused() -> str:
            with pytest.raises(PatchRejected) as info:
                plan_patch(patch, state)
            return str(info.value)

        return traced_lines(refused, locate)

    alone, alone_lines = work("-y\n")
    common, common_lines = work(" x\n" * 500 + "-y\n")
    assert (alone, common) == ("Failed to find expected lines in /a:\ny", "Failed to find expected lines in /a:\n"
                               + "x\n" * 500 + "y")
    # indexing the file is the same work both times; the 500 "x" lines add their own folding
    # (4 tiers), not one comparison per "x" line of the file (50 000 per tier)
    assert common_lines < alone_lines + 20 * 500, (alone_lines, common_lines)


def _anchored_work(count: int) -> int:
    text = "".join(f"    x = 1\ndef f{i}():\n    return {i}\n" for i in range(count))
    hunks = [row for i in range(0, count, 10) for row in ("@@     x = 1", f"-def f{i}():", f"+def g{i}():")]
    patch = parse_patch("*** Begin Patch\n*** Update File: a\n" + "\n".join(hunks) + "\n*** End Patch\n")
    (change,), lines = traced_lines(lambda: plan_patch(patch, {"a": FileState(display="/a", key="a", text=text)}),
                                    locate)
    assert all(f"    x = 1\ndef g{i}():\n" in change.after for i in range(0, count, 10))
    return lines


def test_an_anchor_that_occurs_everywhere_is_found_from_the_cursor_without_listing_every_place() -> None:
    small, large = _anchored_work(1000), _anchored_work(4000)
    assert large < 5 * small, (small, large)


def _repeated_work(count: int) -> int:
    """``count`` hunks ``@@ a`` / ``-a`` / ``+b`` on a file of ``2 * count`` lines ``a``."""
    patch = parse_patch("*** Begin Patch\n*** Update File: a\n" + "@@ a\n-a\n+b\n" * count + "*** End Patch\n")
    state = {"a": FileState(display="/a", key="a", text="a\n" * (2 * count))}
    (change,), lines = traced_lines(lambda: plan_patch(patch, state), locate)
    assert change.after == "a\nb\n" * count
    return lines


def test_repeated_anchored_hunks_on_a_file_of_the_same_line_cost_linear_work() -> None:
    # the attack of a 33 KB patch on a 60 KB file: every hunk used to list every later place of "a"
    small, large = _repeated_work(750), _repeated_work(3000)
    assert large < 5 * small, (small, large)


def _slow_patch(marks: int, filler: int) -> tuple[str, str]:
    """A file whose hunks each fail the exact tier over the rest of the file before a looser
    tier finds them just after their anchor (the worst a hunk can cost)."""
    block = "".join("a\nx\nc\n" for _ in range(filler))
    text = "".join(f"mark{i}\na\nc \n{block}" for i in range(marks))
    hunks = "".join(f"@@ mark{i}\n a\n c\n+new{i}\n" for i in range(marks))
    return text, "*** Begin Patch\n*** Update File: a\n" + hunks + "*** End Patch\n"


def test_a_patch_past_the_work_budget_is_refused_with_a_clear_error() -> None:
    text, patch_text = _slow_patch(400, 100)  # ~400 × 20 000 candidate places
    with pytest.raises(PatchRejected) as info:
        plan_patch(parse_patch(patch_text), {"a": FileState(display="/a", key="a", text=text)})
    assert str(info.value) == ("Locating the hunks of /a needs more than 4000000 comparisons; split the patch into "
                               "smaller ones or give its hunks more distinctive context lines")
    # the same kind of patch within the budget applies
    text, patch_text = _slow_patch(20, 100)
    (change,) = plan_patch(parse_patch(patch_text), {"a": FileState(display="/a", key="a", text=text)})
    assert all(f"mark{i}\na\nc \nnew{i}\n" in change.after for i in range(20))


@pytest.mark.anyio
async def test_a_heavy_patch_is_planned_off_the_event_loop(tmp_path: object, monkeypatch: pytest.MonkeyPatch) -> None:
    """The planning waits, once started, until a ``read`` of another file has been served: it
    can only be served meanwhile when the planning is off the event loop (events, not elapsed
    time: the wait's 60 s only ends a planning that blocks the loop)."""
    from dsh_fs.tool_patch import executor

    ws = os.path.realpath(str(tmp_path))
    text, patch_text = _slow_patch(400, 100)
    with open(f"{ws}/a", "w") as handle:
        handle.write(text)
    with open(f"{ws}/b.txt", "w") as handle:
        handle.write("hello\n")
    ctx = dsh_fs.create_context(root=ws, cwd=ws, faces=["apply_patch"], policy=False)
    planning, served = threading.Event(), threading.Event()
    order: list[str] = []

    def gated_plan(*args: object) -> object:
        planning.set()
        order.append("read served while planning" if served.wait(60) else "planning blocked the read")
        return plan_patch(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(executor, "plan_patch", gated_plan)

    async def patch() -> None:
        result = await ctx.tools.execute("apply_patch", {"input": patch_text}, session=Session(cwd=ws))
        assert result.text.startswith("Error: Locating the hunks of")
        order.append("patch refused")

    async def read() -> None:
        assert await anyio.to_thread.run_sync(planning.wait, 60)
        result = await ctx.tools.execute("read", {"file_path": "b.txt"}, session=Session(cwd=ws))
        assert "hello" in result.text
        served.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(patch)
        tg.start_soon(read)
    assert order == ["read served while planning", "patch refused"]
