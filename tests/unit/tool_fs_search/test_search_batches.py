"""The list-at-a-time stages of ``glob``'s pipeline give exactly what their one-path-at-a-time
forms give (bench/README.md "Search and `list` speed"): ``LinkFilter.admit_many`` (S8),
``Space.shown_many`` (§6.3 display paths, D22 quoting), ``GlobPage.extend`` and the spill
sink's counted pieces (§6.1), and ``run_ripgrep``'s ``on_lines``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from dsh_fs.tool_fs_search.engine import find_ripgrep, run_ripgrep
from dsh_fs.tool_fs_search.search_core import SpillSink
from dsh_fs.tool_fs_search.links import LinkFilter
from dsh_fs.tool_fs_search.output import GlobPage
from dsh_fs.tool_fs_search.workdir import Space


def _tree(tmp_path: Path) -> Path:
    """A root with links in, out, out-and-back and to a file outside."""
    root = tmp_path / "ws"
    (root / "a" / "b").mkdir(parents=True)
    (tmp_path / "outside" / "deep").mkdir(parents=True)
    os.symlink("../../outside", root / "a" / "out")
    os.symlink("b", root / "a" / "in")
    os.symlink("../../../outside/deep", root / "a" / "b" / "far")
    os.symlink("../outside/x.md", root / "x.md")
    os.symlink("..", root / "up")
    return root


_PRINTED = ["a/b/f.md", "a/in/f.md", "./a/in/g.md", "a/out/f.md", "a/out/deep/f.md", "a/in/far/f.md",
            "a/b/far/f.md", "a/../a/out/f.md", "f.md", "x.md", "a//b/f.md", "a/./b/f.md", "up/ws/a/b/f.md",
            "up/outside/s.md", "/etc/passwd", "a/b/", "a/b/gone.md"]


def _batches(items: list[str], cuts: list[int]) -> list[list[str]]:
    """``items`` cut at ``cuts`` (positions, any order, repeats allowed): consecutive lists."""
    edges = sorted({0, len(items), *(c % (len(items) + 1) for c in cuts)})
    return [items[a:b] for a, b in zip(edges, edges[1:])]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(order=st.lists(st.sampled_from(_PRINTED), max_size=40), cuts=st.lists(st.integers(0, 40), max_size=6),
       check_files=st.booleans())
def test_admit_many_is_admit_of_each(tmp_path: Path, order: list[str], cuts: list[int], check_files: bool) -> None:
    """Whatever the batches, ``admit_many`` keeps exactly the paths ``admit`` shows, in order
    (links in followed, any link out on the way hides, normal and odd spellings alike)."""
    root = tmp_path / "ws"
    if not root.exists():
        _tree(tmp_path)
    one = LinkFilter(str(root), str(root), check_files=check_files)
    many = LinkFilter(str(root), str(root), check_files=check_files)
    expected = [path for path in order if one.admit(path)]
    assert [path for batch in _batches(order, cuts) for path in many.admit_many(batch)] == expected


def test_admit_many_hides_a_directory_behind_a_link_out(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    glob = LinkFilter(str(root), str(root), check_files=False)
    assert glob.admit_many(["a/b/f.md", "a/out/f.md", "a/in/f.md", "up/ws/f.md", "x.md"]) == [
        "a/b/f.md", "a/in/f.md", "x.md"]  # a file link out is the walk's to exclude (glob shows names)
    assert LinkFilter(str(root), None, check_files=False).admit_many(["a/out/f.md"]) == ["a/out/f.md"]


_NAME = st.text(alphabet=st.sampled_from(["a", "é", "/", ".", " ", "\n", "\x1b", "\u00a0", "\u2028", "\x85", "\\", '"']),
                max_size=8)


@settings(max_examples=300, deadline=None)
@given(workdir=st.sampled_from([None, "/w", "/w/", "/", "/w/sub", "//w", "/w/./x", "/w/../w", "rel"]),
       names=st.lists(st.tuples(st.sampled_from(["", "/w/", "/w/sub/", "/", "/other/", "/w", "/w/../"]), _NAME),
                      max_size=12))
def test_shown_many_is_shown_of_each(workdir: str | None, names: list[tuple[str, str]]) -> None:
    """Display paths of a batch are each path's own: relative ones as printed, absolute ones
    below the working directory relative to it (not when either is not normal), others as
    printed, a name that could forge a line quoted (D22)."""
    space = Space(cwd="/w", path_arg=None, workdir=workdir)
    printed = [head + tail for head, tail in names if head + tail]
    assert space.shown_many(printed) == [space.shown(path) for path in printed]


def test_shown_many_cuts_the_working_directory_by_prefix() -> None:
    space = Space(cwd="/w", path_arg="/w/sub", workdir="/w")
    assert space.shown_many(["/w/sub/a.py", "/w/sub/b/c.py"]) == ["sub/a.py", "sub/b/c.py"]
    assert space.shown_many(["/w/sub/a.py", "/w/../up.py"]) == ["sub/a.py", "/w/../up.py"]  # §6.3: outside passes
    assert space.shown_many(["a\nb.py", "c.py"]) == ['"a\\nb.py"', "c.py"]


@settings(max_examples=200, deadline=None)
@given(limit=st.integers(0, 6), batches=st.lists(st.lists(st.sampled_from(["a.ts", "b/c.ts", "d é.ts"]), max_size=5),
                                                 max_size=6))
def test_extend_is_add_of_each(limit: int, batches: list[list[str]]) -> None:
    """``GlobPage.extend`` keeps, counts and sends to the sink what ``add`` of each path does;
    the spill sink opens its writer exactly when a result beyond the page arrives and gets
    the complete list (§6.1's spill content)."""
    pieces: list[str] = []
    one = GlobPage(limit, lambda piece, count=1: pieces.append(piece))
    for batch in batches:
        for path in batch:
            one.add(path)
    opened: list[_Writer] = []

    def opener() -> _Writer:
        opened.append(_Writer())
        return opened[-1]

    sink = SpillSink(limit, opener)  # type: ignore[arg-type]
    many = GlobPage(limit, sink)
    for batch in batches:
        many.extend(batch)
    assert (many.kept, many.seen, many.truncated) == (one.kept, one.seen, one.truncated)
    assert sink.count == one.seen
    if one.truncated:
        assert len(opened) == 1 and "".join(opened[0].parts) == "".join(pieces)
    else:
        assert opened == [] and "".join(sink.pending or ()) == "".join(pieces)


class _Writer:
    """A spill writer that keeps what it is given."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def write(self, text: str) -> None:
        self.parts.append(text)


def _rg() -> str:
    program = find_ripgrep()
    assert program is not None, "the ripgrep wheel is a dependency"
    return program


def test_on_lines_gets_each_pipe_reads_complete_lines(tmp_path: Path) -> None:
    """The lines ``on_lines`` is handed, joined, are the lines ``on_line`` gets one by one, in
    order, never as an empty list; a raw cap stops both after the same lines."""
    for index in range(3000):  # about 70 KiB of names: more than one pipe read
        (tmp_path / f"name-{index:05}-{'x' * 12}.txt").write_text("")
    argv = ["--no-config", "--files", "--null", "--sort=path"]

    async def go(cap: int) -> tuple[list[bytes], list[list[bytes]], Any, Any]:
        single: list[bytes] = []
        lists: list[list[bytes]] = []
        one = await run_ripgrep(_rg(), argv, cwd=str(tmp_path), on_line=single.append, raw_cap=cap, separator=b"\0")
        many = await run_ripgrep(_rg(), argv, cwd=str(tmp_path), on_lines=lists.append, raw_cap=cap, separator=b"\0")
        return single, lists, one, many

    single, lists, one, many = anyio.run(go, 1 << 20)
    assert len(single) == 3000 and [line for batch in lists for line in batch] == single
    assert len(lists) > 1 and all(lists)
    assert (one.exit_code, one.raw_bytes, many.exit_code, many.raw_bytes) == (0, many.raw_bytes, 0, one.raw_bytes)
    single, lists, one, many = anyio.run(go, 40_000)
    assert one.stopped and many.stopped and 0 < len(single) < 3000
    assert [line for batch in lists for line in batch] == single


def test_run_ripgrep_takes_one_consumer(tmp_path: Path) -> None:
    for consumers in ({}, {"on_line": print, "on_lines": print}):
        with pytest.raises(TypeError, match="exactly one of on_line and on_lines"):
            anyio.run(lambda: run_ripgrep(_rg(), ["--files"], cwd=str(tmp_path), raw_cap=1 << 20,
                                          **consumers))  # type: ignore[arg-type]
