"""The small parts of ``tool-fs-search`` around a search: the places searches hold
(``limiter.SearchSlots``, DEVIATIONS D23), where one runs and how printed paths are shown
(``space.Space``, REFERENCE-SPEC §6.3), the UI presenters (§6.1, §6.2) and what the plugin
registers (§6 prompt sections and definitions). No ripgrep runs here.
"""

from __future__ import annotations

import os
from collections.abc import Hashable
from typing import Any

import anyio
from anyio import wait_all_tasks_blocked
import pytest
from anyio.abc import TaskGroup


import dsh_fs
from dsh_fs.tool_fs_search import presenters
from dsh_fs.tool_fs_search.errors import SearchError
from dsh_fs.tool_fs_search.limiter import SearchSlots
from dsh_fs.fs_memory import MemoryFileSystem
from dsh_fs.tool_fs_search.links import LinkFilter
from dsh_fs.tool_fs_search.mirror import Mirror
from dsh_fs.tool_fs_search.plugin import glob_params, grep_params
from dsh_fs.tool_fs_search.workdir import Space
from spectext import GLOB_DESCRIPTION, GREP_DESCRIPTION

BUSY = "grep refused: this session already has 2 searches running and 8 waiting; wait for them to finish, then retry"


class Holders:
    """Searches holding (or waiting for) places of ``slots`` until ``release`` is set."""

    def __init__(self, slots: SearchSlots, tg: TaskGroup) -> None:
        self.slots, self.tg = slots, tg
        self.release = anyio.Event()
        self.entered: list[Hashable] = []
        self.finished: list[Hashable] = []

    def start(self, owner: Hashable, count: int = 1) -> None:
        for _ in range(count):
            self.tg.start_soon(self._hold, owner)

    async def _hold(self, owner: Hashable) -> None:
        async with self.slots.hold(owner, "grep"):
            self.entered.append(owner)
            await self.release.wait()
        self.finished.append(owner)


async def _refused(slots: SearchSlots, owner: Hashable) -> str | None:
    """The refusal text if ``owner`` is refused at once, else ``None`` (it got or waits for a place)."""
    try:
        with anyio.move_on_after(0.05):
            async with slots.hold(owner, "grep"):
                pass
    except SearchError as err:
        return str(err)
    return None


@pytest.mark.anyio
async def test_at_most_four_searches_run_at_once_and_two_per_owner_by_default() -> None:
    slots = SearchSlots()
    assert (slots.total, slots.per_owner, slots.waiting_per_owner, slots.running) == (4, 2, 8, 0)
    async with anyio.create_task_group() as tg:
        holders = Holders(slots, tg)
        holders.start("a", 3)  # two run, one waits
        await wait_all_tasks_blocked()
        assert holders.entered == ["a", "a"] and slots.running == 2
        holders.start("b", 1)
        holders.start("c", 1)
        holders.start("d", 1)  # b and c run; d waits for the total
        await wait_all_tasks_blocked()
        assert sorted(holders.entered) == ["a", "a", "b", "c"] and slots.running == 4
        holders.release.set()
    assert sorted(holders.finished) == ["a", "a", "a", "b", "c", "d"] and slots.running == 0


@pytest.mark.anyio
async def test_an_owner_with_two_running_and_eight_waiting_is_refused_at_once() -> None:
    slots = SearchSlots()
    async with anyio.create_task_group() as tg:
        holders = Holders(slots, tg)
        holders.start("a", 9)  # 2 running, 7 waiting: one more may still wait
        await wait_all_tasks_blocked()
        assert await _refused(slots, "a") is None
        holders.start("a", 1)  # 2 running, 8 waiting
        await wait_all_tasks_blocked()
        assert await _refused(slots, "a") == BUSY
        assert await _refused(slots, "b") is None  # another owner is not refused
        holders.release.set()
    assert len(holders.finished) == 10 and slots.running == 0


@pytest.mark.anyio
async def test_places_given_back_count_exactly_so_the_refusal_stays_at_ten() -> None:
    slots = SearchSlots()
    for _ in range(3):  # one after another
        async with slots.hold("a", "grep"):
            assert slots.running == 1
    async with anyio.create_task_group() as tg:  # two side by side, both ending cleanly
        holders = Holders(slots, tg)
        holders.start("a", 2)
        await wait_all_tasks_blocked()
        holders.release.set()
    assert holders.finished == ["a", "a"] and slots.running == 0
    async with anyio.create_task_group() as tg:
        holders = Holders(slots, tg)
        holders.start("a", 10)
        await wait_all_tasks_blocked()
        assert slots.running == 2 and await _refused(slots, "a") == BUSY
        holders.release.set()
    assert len(holders.finished) == 10 and slots.running == 0


@pytest.mark.anyio
async def test_custom_counts_and_their_checks() -> None:
    slots = SearchSlots(total=1, per_owner=1, waiting_per_owner=1)
    async with anyio.create_task_group() as tg:
        holders = Holders(slots, tg)
        holders.start("a", 2)  # one runs, one waits
        await wait_all_tasks_blocked()
        assert slots.running == 1 and len(holders.entered) == 1
        assert await _refused(slots, "a") == (
            "grep refused: this session already has 1 searches running and 1 waiting; wait for them to finish, then retry")
        holders.release.set()
    for bad in ({"total": 0}, {"per_owner": 0}, {"waiting_per_owner": -1}):
        with pytest.raises(ValueError, match="^search slots: every count must be at least 1$"):
            SearchSlots(**bad)


def test_a_space_without_mirror_or_links_shows_paths_relative_to_its_workdir(tmp_path: Any) -> None:
    space = Space(cwd="/w/sub", path_arg=None, workdir="/w")
    assert space.admit("a.txt") is True
    assert space.shown("/w/sub/a.txt") == "sub/a.txt"
    assert space.shown("/elsewhere/b") == "/elsewhere/b"
    assert space.shown("/w/bad\nname") == '"bad\\nname"'  # D22: a name that could forge a line is quoted
    assert space.scrub("rg: /w/x: denied") == "rg: /w/x: denied"
    assert space.host("a.txt") == "/w/sub/a.txt" and space.host("../c/./d") == "/w/c/d"
    assert space.host("/abs/e") == "/abs/e"
    as_printed = Space(cwd="/w", path_arg="x", workdir=None)  # a spill artifact: shown as given
    assert as_printed.shown("/spill/s1/artifact.txt") == "/spill/s1/artifact.txt"


def test_a_space_following_links_admits_only_paths_inside_the_root(tmp_path: Any) -> None:
    root = os.path.realpath(tmp_path / "root")
    outside = os.path.realpath(tmp_path / "outside")
    os.makedirs(root)
    os.makedirs(outside)
    for directory in (root, outside):
        with open(os.path.join(directory, "f.txt"), "w") as out:
            out.write("x\n")
    os.symlink(outside, os.path.join(root, "out"))
    space = Space(cwd=root, path_arg=None, workdir=root, links=LinkFilter(root, root))
    assert space.admit("f.txt") is True
    assert space.admit("out/f.txt") is False


def test_presenters_give_the_title_or_none_for_arguments_that_fail_the_schema() -> None:
    glob, grep = glob_params(), grep_params()
    assert presenters.glob_present_call({"pattern": "*.md"}, glob) == {
        "card": "generic", "title": "Glob *.md", "kind": "search", "rawInput": "*.md"}
    assert presenters.glob_present_call({"pattern": "*.md", "path": "docs"}, glob)["title"] == "Glob *.md in docs"  # type: ignore[index]
    assert presenters.grep_present_call({"pattern": "todo"}, grep) == {
        "card": "generic", "title": "Grep todo", "kind": "search", "rawInput": "todo"}
    assert presenters.grep_present_call({"pattern": "t", "include": "*.ts"}, grep)["title"] == "Grep t (*.ts)"  # type: ignore[index]
    assert presenters.grep_present_call({"pattern": "t", "path": "src"}, grep)["title"] == "Grep t in src"  # type: ignore[index]
    for present, params in ((presenters.glob_present_call, glob), (presenters.grep_present_call, grep)):
        for bad in ({"pattern": 3}, {"path": "x"}, ["pattern"], None, "pattern"):
            assert present(bad, params) is None


def test_the_plugin_registers_both_tools_their_prompt_sections_and_requires_pattern(tmp_path: Any) -> None:
    ctx = dsh_fs.create_context(cwd=str(tmp_path))
    orders = {section.name: section.order for section in ctx.system_prompt.sections()}
    assert (orders["tool:glob"], orders["tool:grep"]) == (103, 104)  # §6 prompt sections
    for name, description in (("glob", GLOB_DESCRIPTION), ("grep", GREP_DESCRIPTION)):
        definition = ctx.tools.get(name)
        assert definition is not None and definition.description == description  # §6.1, §6.2 verbatim
        assert definition is not None and definition.is_concurrency_safe({"pattern": "x"}) is True
        assert definition.parameters["pattern"].required is True
        assert definition.present_call is not None and definition.present_call({"path": "x"}) is None


@pytest.mark.anyio
async def test_many_printed_paths_are_shown_and_admitted_as_each_alone_would_be(tmp_path: Any) -> None:
    async with Mirror(MemoryFileSystem(), signal=None) as mirror:  # a provider without host paths
        space = Space(cwd=mirror.host("/w"), path_arg=None, workdir="/w", mirror=mirror)
        printed = [mirror.host("/w/a.txt"), mirror.host("/w/sub/b.txt"), mirror.host("/up.txt")]
        assert space.shown_many(printed) == ["a.txt", "sub/b.txt", "/up.txt"] == [space.shown(p) for p in printed]
        at_top = Space(cwd=mirror.host("/"), path_arg=None, workdir="/", mirror=mirror)  # the provider's root
        printed = [mirror.host("/a.txt"), mirror.host("/sub/b.txt")]
        assert at_top.shown_many(printed) == ["a.txt", "sub/b.txt"] == [at_top.shown(p) for p in printed]
    plain = Space(cwd="/w", path_arg=None, workdir="/w")
    assert plain.admit_many(["a.txt", "out/f.txt"]) == ["a.txt", "out/f.txt"]
    root = os.path.realpath(tmp_path / "root")
    os.makedirs(os.path.join(root, "in"))
    os.makedirs(tmp_path / "outside")
    os.symlink(tmp_path / "outside", os.path.join(root, "out"))
    for check_files in (True, False):  # grep and glob
        linked = Space(cwd=root, path_arg=None, workdir=root, links=LinkFilter(root, root, check_files=check_files))
        assert linked.admit_many(["in/f.txt", "out/f.txt", "g.txt"]) == ["in/f.txt", "g.txt"]
