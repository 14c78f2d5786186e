"""The pure parts of S8 (``tool_fs_search.links``, ``commands``): ripgrep's loop reports, the
excludes for links leading out, the ``--follow`` argument; and the link walk on a real tree.
Through the tools: tests/contract/test_search_misses.py, tests/robustness/test_search_containment.py.
"""

from __future__ import annotations

import os
from pathlib import Path

from dsh_fs.tool_fs_search.commands import glob_argv, grep_argv
from dsh_fs.tool_fs_search.links import LinkFilter, exclude_globs, loops_only, outward_links


def test_only_loop_reports_excuse_exit_2() -> None:
    loop = "rg: File system loop found: ./up/ws/up points to an ancestor ./up"
    assert loops_only(loop + "\n" + loop + "\n")
    assert not loops_only("")
    assert not loops_only(loop + "\nrg: ./x: Permission denied (os error 13)")


def test_excludes_are_anchored_and_escaped() -> None:
    assert exclude_globs(["/w/a/b[1]", "/w/x*y{z}", "/w/!n", "/other/z"], "/w") == [
        "--glob=!/a/b\\[1\\]", "--glob=!/x\\*y\\{z\\}", "--glob=!/\\!n"]


def test_follow_goes_in_the_argument_vector() -> None:
    assert glob_argv("*.md", None, newest_first=True, follow=True)[:3] == ["--no-config", "--files", "--follow"]
    assert grep_argv("x", "p", None, sorted_by_path=True, follow=True) == [
        "--no-config", "--json", "--follow", "--sort=path", "--regexp=x", "--", "p"]
    assert "--follow" not in glob_argv("*.md", None, newest_first=False)


def test_the_walk_finds_links_out_and_the_filter_drops_them(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "real").mkdir(parents=True)
    (root / "real" / "a.md").write_text("a")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "s.md").write_text("s")
    os.symlink("real", root / "in")
    os.symlink("../outside", root / "out")
    os.symlink("../outside/s.md", root / "leak.md")
    os.symlink("..", root / "up")
    os.symlink("nowhere", root / "broken")
    assert sorted(outward_links(str(root), str(root))) == sorted(
        str(root / name) for name in ("out", "leak.md", "up"))  # a broken link inside leads nowhere
    links = LinkFilter(str(root), str(root))
    assert [p for p in ["real/a.md", "in/a.md", "out/s.md", "leak.md", "up/ws/real/a.md", "up/outside/s.md"]
            if links.admit(p)] == ["real/a.md", "in/a.md"]
    assert LinkFilter(str(root), None).admit("out/s.md")  # no containment root: nothing to keep out
