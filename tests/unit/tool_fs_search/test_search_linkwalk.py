"""The look for links out of the root before ripgrep follows links (S8, ``tool_fs_search.linkwalk``)
on real trees: links inside and out, loops, many links, and the directory cache (kept while a
directory's stamp is unchanged, read again when it moves, never kept while racy, bounded).
Through the tools: tests/integration/tool_fs_search/test_search_link_cache.py."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from dsh_fs.tool_fs_search import linkwalk
from dsh_fs.tool_fs_search.engine import find_ripgrep
from dsh_fs.tool_fs_search.linkwalk import DirCache, outward_links

_TICK = 0.05
"""seconds slept so that a change gets a later stamp than a kept read (file times are coarse)"""


def _tree(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "ws"
    (root / "real" / "deep").mkdir(parents=True)
    (root / "real" / "a.md").write_text("a")
    (root / ".git" / "objects").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    os.symlink("../outside", root / ".git" / "objects" / "out")  # in VCS metadata: never walked
    os.symlink("..", root / "real" / "deep" / "up")  # to real: a loop inside the root
    os.symlink("real", root / "in")
    os.symlink("../outside", root / "out")
    os.symlink("../../outside/x.md", root / "real" / "leak.md")  # a link to a file outside (missing)
    os.symlink("..", root / "parent")
    (tmp_path / "outside" / "secret.txt").write_text("s")
    os.symlink("../outside/secret.txt", root / "secret.md")  # a link to a file outside
    return root, tmp_path / "outside"


def _fresh_cache() -> DirCache:
    return DirCache(racy_ns=0)


def test_links_out_are_found_wherever_they_are(tmp_path: Path) -> None:
    root, _ = _tree(tmp_path)
    expected = sorted(str(root / p) for p in ("out", "parent", "secret.md", "real/leak.md", "in/leak.md"))  # + behind `in`
    assert sorted(outward_links(str(root), str(root))) == expected
    cache = _fresh_cache()
    assert sorted(outward_links(str(root), str(root), cache=cache)) == expected
    assert sorted(outward_links(str(root), str(root), cache=cache)) == expected  # served from the cache
    assert sorted(outward_links(str(root / "real"), str(root))) == [str(root / "real/leak.md")]
    assert outward_links(str(root / "real" / "deep"), str(root)) == [str(root / "real/deep/up/leak.md")]


def test_an_unchanged_directory_is_not_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, _ = _tree(tmp_path)
    cache = _fresh_cache()
    outward_links(str(root), str(root), cache=cache)
    reads: list[str] = []
    real_scandir = os.scandir

    def counted(path: str) -> object:
        reads.append(path)
        return real_scandir(path)

    monkeypatch.setattr(linkwalk.os, "scandir", counted)
    outward_links(str(root), str(root), cache=cache)
    assert reads == []
    time.sleep(_TICK)
    (root / "real" / "new.md").write_text("n")  # one directory changes: only it is read again
    outward_links(str(root), str(root), cache=cache)
    assert reads == [str(root / "real")]


def test_a_link_out_made_in_a_kept_directory_is_found(tmp_path: Path) -> None:
    root, _ = _tree(tmp_path)
    cache = _fresh_cache()
    before = outward_links(str(root), str(root), cache=cache)
    time.sleep(_TICK)
    os.symlink("/etc", root / "real" / "deep" / "etc")
    assert sorted(outward_links(str(root), str(root), cache=cache)) == sorted(
        [*before, str(root / "real" / "deep" / "etc"), str(root / "in" / "deep" / "etc")])


def test_a_kept_link_is_resolved_again_on_every_look(tmp_path: Path) -> None:
    """``x/l -> ../y``: ``x`` never changes, but ``y`` becomes a link out."""
    root = tmp_path / "ws"
    (root / "x").mkdir(parents=True)
    (root / "y").mkdir()
    (tmp_path / "outside").mkdir()
    os.symlink("../y", root / "x" / "l")
    cache = _fresh_cache()
    assert outward_links(str(root), str(root), cache=cache) == []
    time.sleep(_TICK)
    os.rmdir(root / "y")
    os.symlink("../outside", root / "y")
    assert sorted(outward_links(str(root), str(root), cache=cache)) == [str(root / "x" / "l"), str(root / "y")]


def test_a_link_replaced_by_a_directory_is_walked(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (tmp_path / "outside").mkdir()
    os.symlink("../outside", root / "d")
    cache = _fresh_cache()
    assert outward_links(str(root), str(root), cache=cache) == [str(root / "d")]
    time.sleep(_TICK)
    os.unlink(root / "d")
    (root / "d").mkdir()
    os.symlink("/", root / "d" / "slash")
    assert outward_links(str(root), str(root), cache=cache) == [str(root / "d" / "slash")]


def test_racy_directories_are_not_kept(tmp_path: Path) -> None:
    root, _ = _tree(tmp_path)
    cache = DirCache()  # the 3 s window: the tree was just made
    outward_links(str(root), str(root), cache=cache)
    assert len(cache) == 0
    old = DirCache(racy_ns=0)
    outward_links(str(root), str(root), cache=old)
    assert sorted(old._entries) == [str(root), str(root / "real"), str(root / "real" / "deep")]  # not .git, not links


def test_a_top_given_as_a_link_is_kept_under_its_target(tmp_path: Path) -> None:
    root, _ = _tree(tmp_path)
    (root / "other").mkdir()
    cache = _fresh_cache()
    top = str(root / "in")  # -> real
    assert outward_links(top, str(root), cache=cache) == [top + "/leak.md"]
    assert top not in cache._entries and str(root / "real") in cache._entries  # a link's stamp is not its target's
    time.sleep(_TICK)
    os.symlink("/", root / "real" / "slash")
    assert sorted(outward_links(top, str(root), cache=cache)) == [top + "/leak.md", top + "/slash"]
    os.unlink(top)
    os.symlink("other", top)  # repointed: the new target is read
    assert outward_links(top, str(root), cache=cache) == []


def test_the_cache_is_bounded(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    for i in range(20):
        (root / f"d{i:02}" / "sub").mkdir(parents=True)
    cache = DirCache(max_names=12, racy_ns=0)
    outward_links(str(root), str(root), cache=cache)
    kept = cache._entries
    assert sum(len(e[1]) + len(e[2]) + 1 for e in kept.values()) <= 12
    assert str(root) not in kept  # 21 names: never fits
    assert str(root / "d00") in kept and str(root / "d00" / "sub") in kept  # the newest are kept
    assert str(root / "d19") not in kept  # the oldest went first
    nothing = DirCache(max_names=0, racy_ns=0)
    outward_links(str(root), str(root), cache=nothing)
    assert len(nothing) == 0


def test_many_links_inside_and_one_out(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "target").mkdir(parents=True)
    for i in range(500):
        os.symlink("target", root / f"l{i:03}") if i % 2 else os.symlink(f"l{i + 1:03}", root / f"l{i:03}")
    os.symlink("/usr", root / "target" / "usr")
    found = outward_links(str(root), str(root), cache=_fresh_cache())
    assert sorted(found) == sorted([str(root / "target" / "usr"), *(str(root / f"l{i:03}" / "usr") for i in range(500))])


def test_a_given_up_look_stops(tmp_path: Path) -> None:
    root, _ = _tree(tmp_path)
    asked: list[int] = []

    def stopped() -> bool:
        asked.append(1)
        return len(asked) > 1

    found = outward_links(str(root), str(root), stopped=stopped)  # the root read, nothing below it
    assert sorted(found) == [str(root / "out"), str(root / "parent"), str(root / "secret.md")]
    assert len(asked) == 2


def test_links_in_behind_links_in_and_loops_between_them(tmp_path: Path) -> None:
    """ripgrep reaches a link out by every name a link inside gives its directory; loops
    (a link to a directory on its own way) are walked once, as ripgrep stops at them."""
    root = tmp_path / "ws"
    (root / "a" / "b").mkdir(parents=True)
    (root / "c").mkdir()
    os.symlink("../../c", root / "a" / "b" / "to-c")
    os.symlink("../a", root / "c" / "to-a")  # a -> b -> to-c -> to-a: a loop
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "f").write_text("f")
    os.symlink("../../etc", root / "c" / "etc")
    os.symlink(".", root / "c" / "self")
    os.symlink("..", root / "a" / "b" / "up")  # to a: an ancestor
    found = outward_links(str(root), str(root), cache=_fresh_cache())
    assert sorted(found) == sorted(str(root / p) for p in ("a/b/to-c/etc", "c/etc"))  # c/to-a/b/to-c: a loop
    assert outward_links(str(root / "c"), str(root)) == [str(root / "c" / "etc")]  # a/b/to-c from c: a loop
    assert _reached_out(root, root) == set(found) and _reached_out(root / "c", root) == {str(root / "c" / "etc")}


def _reached_out(top: Path, root: Path) -> set[str]:
    """The links out through which ripgrep itself (``--files --follow``) lists a file: each
    printed path's first step whose real path is outside ``root``."""
    rg = find_ripgrep()
    assert rg is not None
    done = subprocess.run([rg, "--no-config", "--files", "--follow", "--no-ignore", "--hidden", "--null"], cwd=top,
                          capture_output=True, check=False)
    reached: set[str] = set()
    real_root = os.path.realpath(root) + "/"
    for printed in filter(None, done.stdout.decode().split("\0")):
        parts = printed.split("/")
        for n in range(1, len(parts) + 1):
            step = os.path.join(str(top), *parts[:n])
            if not (os.path.realpath(step) + "/").startswith(real_root):
                reached.add(step)
                break
    return reached


def test_an_unreadable_directory_is_skipped(tmp_path: Path) -> None:
    root, _ = _tree(tmp_path)
    assert outward_links(str(root / "missing"), str(root), cache=_fresh_cache()) == []


_NAMES = st.sampled_from(["a", "b", "c"])
_STEPS = st.lists(st.tuples(st.sampled_from(["dir", "in", "out", "loop", "rm"]),
                            st.lists(_NAMES, min_size=1, max_size=3)), max_size=12)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(first=_STEPS, then=_STEPS)
def test_the_kept_look_matches_a_fresh_one(tmp_path_factory: pytest.TempPathFactory,
                                           first: list[tuple[str, list[str]]],
                                           then: list[tuple[str, list[str]]]) -> None:
    """Any tree, a look, any changes, a look: the kept look finds what an uncached one does,
    and every link out through which ripgrep lists a file."""
    base = tmp_path_factory.mktemp("walk")
    root = base / "ws"
    root.mkdir()
    (base / "outside").mkdir()
    (base / "outside" / "o").write_text("o")
    cache = _fresh_cache()

    def apply(steps: list[tuple[str, list[str]]]) -> None:
        for kind, parts in steps:
            path = root.joinpath(*parts)
            if not path.parent.is_dir() or path.parent.is_symlink() or os.path.lexists(path) != (kind == "rm"):
                continue
            if kind == "dir":
                path.mkdir()
            elif kind == "in":  # to the root (a loop) or to the first top-level directory
                os.symlink(os.path.relpath(root / ("a" if len(parts) > 1 else ""), path.parent), path)
            elif kind == "out":
                os.symlink(str(base / "outside"), path)
            elif kind == "loop":
                os.symlink(".", path)
            elif path.is_symlink():
                path.unlink()
            elif not any(path.iterdir()):
                path.rmdir()

    apply(first)
    found = outward_links(str(root), str(root), cache=cache)
    assert sorted(found) == sorted(outward_links(str(root), str(root)))
    assert _reached_out(root, root) <= set(found)  # every link out ripgrep would walk through
    time.sleep(_TICK)
    apply(then)
    found = outward_links(str(root), str(root), cache=cache)
    assert sorted(found) == sorted(outward_links(str(root), str(root)))
    assert _reached_out(root, root) <= set(found)


def test_the_cache_counts_names_exactly() -> None:
    """``max_names`` is a bound on the names kept: an entry as big as the bound fits, a
    full cache takes no more without dropping its oldest, a re-read replaces its entry."""
    now = time.time_ns()
    old = now - 10**10

    def stamp(n: int) -> tuple[int, int, int, int]:
        return (1, n, old, old)

    assert DirCache().max_names == 2**20  # docs/SEARCH.md
    exact = DirCache(max_names=3, racy_ns=0)
    exact.put("/a", stamp(1), ("x", "y"), (), now)  # 3 names
    assert list(exact._entries) == ["/a"]
    cache = DirCache(max_names=6, racy_ns=0)
    cache.put("/a", stamp(1), ("x", "y"), ("l",), now)  # 4
    cache.put("/a", stamp(2), ("x", "y"), ("l",), now)  # re-read: still 4
    cache.put("/b", stamp(3), (), ("l",), now)  # 2: full
    assert list(cache._entries) == ["/a", "/b"]
    cache.put("/c", stamp(4), (), (), now)  # 1: the oldest goes
    assert list(cache._entries) == ["/b", "/c"]
    cache.put("/d", stamp(5), (), (), now)  # 1: fits (2 + 1 + 1)
    assert list(cache._entries) == ["/b", "/c", "/d"]
    cache.put("/e", stamp(6), ("p", "q", "r"), (), now)  # 4: /b goes (2 + 4 = 6)
    assert list(cache._entries) == ["/c", "/d", "/e"]
    cache.put("/f", stamp(7), (), ("m",), now)  # 2: /c and /d go
    assert list(cache._entries) == ["/e", "/f"]
    assert cache.get("/e", stamp(6)) == (stamp(6), ("p", "q", "r"), ()) and cache.get("/e", stamp(7)) is None
    cache.put("/big", stamp(8), ("1", "2", "3", "4", "5", "6"), (), now)  # 7 > 6: never kept, nothing dropped
    assert list(cache._entries) == ["/e", "/f"]


def test_a_directory_whose_change_time_is_fresh_is_racy(tmp_path: Path) -> None:
    """A chmod stamps the change time only: the directory is racy by its ctime."""
    root = tmp_path / "ws"
    (root / "d").mkdir(parents=True)
    past = time.time() - 60
    os.utime(root / "d", (past, past))
    cache = DirCache(racy_ns=30 * 10**9)
    outward_links(str(root), str(root), cache=cache)
    assert str(root / "d") not in cache._entries  # mtime a minute old, ctime now


def test_a_top_that_is_no_directory_finds_nothing(tmp_path: Path) -> None:
    root, _ = _tree(tmp_path)
    assert outward_links(str(root / "real" / "a.md"), str(root), cache=_fresh_cache()) == []
    assert outward_links(str(root / "real" / "a.md"), str(root)) == []
