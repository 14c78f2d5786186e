"""Pure parts behind the search pins (tests/contract/test_search_pins.py): display paths of
names that begin with ``..`` (§6.3 "Display paths") and how the mirror cuts ``grep``'s files
into batches (``Mirror.batches``), and its path mapping and clean-up."""

from __future__ import annotations

import os
import shutil

import anyio

from dsh_fs.tool_fs_search.mirror import Mirror
from dsh_fs.tool_fs_search.output import to_workdir_relative


def test_dot_dot_names_inside_the_workdir_are_relative() -> None:
    assert to_workdir_relative("/w/..foo", "/w") == "..foo"
    assert to_workdir_relative("/w/...", "/w") == "..."
    assert to_workdir_relative("/w/a/..b/c", "/w") == "a/..b/c"
    assert to_workdir_relative("/w/../up.ts", "/w") == "/w/../up.ts"
    assert to_workdir_relative("/up.ts", "/w") == "/up.ts"


def _mirror(sizes: dict[str, int]) -> Mirror:
    mirror = Mirror(None, signal=None)  # type: ignore[arg-type]  (batches never reads the provider)
    for host, size in sizes.items():
        mirror.files[host] = (None, size)  # type: ignore[assignment]  (only the size is read)
    return mirror


def test_batches_cut_at_the_byte_budget_in_order() -> None:
    mirror = _mirror({"/a": 4, "/b": 4, "/c": 3, "/big": 50, "/d": 1, "/e": 0})
    try:
        assert mirror.batches(["/a", "/b", "/c", "/big", "/d", "/e"], 8) == [["/a", "/b"], ["/c"], ["/big"], ["/d", "/e"]]
        assert mirror.batches(["/a", "/b", "/c"], 11) == [["/a", "/b", "/c"]]  # exactly the budget: one batch
        assert mirror.batches(["/a", "/unknown", "/b"], 1) == [["/a"], ["/b"]]  # unknown hosts are left out
        assert mirror.batches([], 8) == []
        assert mirror.batches(["/unknown"], 8) == []
    finally:
        shutil.rmtree(mirror.root, True)


def test_mirror_paths_map_both_ways() -> None:
    mirror = _mirror({})
    root = mirror.root
    try:
        assert mirror.host("/") == root + "/"
        assert mirror.host("/a/b") == root + "/a/b"
        assert [mirror.unmap(p) for p in (root, root + "/", root + "/a/b", "a/b", root + "x/y")] == [
            "/", "/", "/a/b", "a/b", root + "x/y"]
        assert mirror.scrub(f"rg: {root}/a: not found; {root}: here") == "rg: /a: not found; /: here"
    finally:
        shutil.rmtree(root, True)


async def _enter_and_leave() -> tuple[bool, bool]:
    mirror = Mirror(None, signal=None)  # type: ignore[arg-type]
    async with mirror as entered:
        inside = entered is mirror and os.path.isdir(mirror.root)
    return inside, os.path.exists(mirror.root)


def test_mirror_context_removes_its_directory() -> None:
    assert anyio.run(_enter_and_leave) == (True, False)
