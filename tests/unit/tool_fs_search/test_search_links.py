"""The pure parts of S8 (``tool_fs_search.links``, ``commands``): ripgrep's loop reports, the
excludes for links leading out, the ``--follow`` argument; and the link walk on a real tree.
Through the tools: tests/contract/test_search_misses.py, tests/robustness/tool_fs_search/test_search_containment.py.
"""

from __future__ import annotations

import os
from pathlib import Path

from dsh_fs.tool_fs_search.commands import glob_argv, grep_argv
from dsh_fs.tool_fs_search.links import LinkFilter, exclude_globs, walk_notices_only
from dsh_fs.tool_fs_search.linkwalk import outward_links


def test_only_walk_notices_excuse_exit_2() -> None:
    loop = "rg: File system loop found: ./up/ws/up points to an ancestor ./up"
    gone = "rg: ./d2: No such file or directory (os error 2)"
    dangling = "rg: ./broken: IO error for operation on ./broken: No such file or directory (os error 2)"
    both = {"loops": True, "vanished": True}
    assert walk_notices_only(loop + "\n" + loop + "\n", loops=True, vanished=False)
    assert not walk_notices_only(loop, loops=False, vanished=True)
    assert walk_notices_only(f"{gone}\n{dangling}\n", loops=False, vanished=True)
    assert not walk_notices_only(gone, loops=True, vanished=False)
    assert walk_notices_only(f"{loop}\n{gone}", **both)
    assert not walk_notices_only("", **both)
    assert not walk_notices_only(loop + "\nrg: ./x: Permission denied (os error 13)", **both)
    assert not walk_notices_only(gone + " and more", **both)
    assert not walk_notices_only("rg: regex parse error: No such file or directory (os error 2)x", **both)
    link_loop = "rg: ./self: IO error for operation on ./self: Too many levels of symbolic links (os error 40)"
    assert walk_notices_only(f"{link_loop}\n{gone}", loops=False, vanished=True)
    assert not walk_notices_only(link_loop, loops=True, vanished=False)
    assert not walk_notices_only("rg: ./d: Too many levels of symbolic links (os error 40)", **both)  # not a link's


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


def test_absolute_patterns_split_at_their_first_wildcard() -> None:  # S9
    from dsh_fs.tool_fs_search.anchoring import anchored, split_absolute

    assert split_absolute("/w/folder/*.md") == ("/w/folder", "*.md")
    assert split_absolute("/w/a.md") == ("/w", "a.md")
    assert split_absolute("/w/**/x/*.md") == ("/w", "**/x/*.md")
    assert split_absolute("/*.md") == ("/", "*.md")
    assert split_absolute("docs/*.md") is None and split_absolute("/w/../x/*.md") is None
    assert anchored("/w/folder", "*.md", "/w") == "/folder/*.md"
    assert anchored("/w", "*.md", "/w") == "/*.md"
    assert anchored("/w/b[1]", "*.md", "/w") == "/b\\[1\\]/*.md"
    assert anchored("/elsewhere", "*.md", "/w") is None


def test_patterns_with_a_directory_part_are_also_matched_from_path() -> None:  # S10
    from dsh_fs.tool_fs_search.anchoring import from_path

    assert from_path("testbooks/*.md", "/w/docs", "/w") == "/docs/testbooks/*.md"
    assert from_path("*.md", "/w/docs", "/w") is None  # no directory part: matched at any depth already
    assert from_path("**/t/*.md", "/w/docs", "/w") is None
    assert from_path("t/*.md", "/w", "/w") is None and from_path("t/*.md", "/x", "/w") is None
    assert from_path("t/", "/w/docs", "/w") is None


def test_literal_names_for_the_near_miss_hint() -> None:  # S7
    from dsh_fs.tool_fs_search.near_miss import literal_part

    assert literal_part("ROADMAP.md") == "ROADMAP.md" and literal_part("**/docs/A.md") == "docs/A.md"
    assert literal_part("*.md") is None and literal_part("/abs/A.md") is None and literal_part("../A.md") is None


def test_a_window_around_a_match_in_a_long_line() -> None:  # S11
    from dsh_fs.tool_fs_search.output import first_submatch, window_line

    line = "é" * 10 + "x" * 30 + "NEEDLE" + "y" * 30
    start = len(("é" * 10 + "x" * 30).encode())
    assert window_line(line, start, start + 6, 100) is None  # the usual preview shows it
    shown = window_line(line, start, start + 6, 20)
    assert shown is not None and "NEEDLE" in shown and shown.startswith("... ") and " ... (line truncated: " in shown
    assert shown.endswith(f"of {len(line)} shown; the match starts at column 41)")
    at_end = window_line("a" * 50 + "END", 50, 53, 10)
    assert at_end == "... aaaaaaaEND (line truncated: characters 44-53 of 53 shown; the match starts at column 51)"
    record = b'{"type":"match","data":{"path":{"text":"a"},"lines":{"text":"xx\\n"},"line_number":1,' \
             b'"absolute_offset":0,"submatches":[{"match":{"text":"x"},"start":1,"end":2}]}}'
    assert first_submatch(record) == (1, 2)
    assert first_submatch(b'{"type":"match","data":{}}') is None


def test_the_filter_judges_each_printed_directory_once(tmp_path: Path) -> None:
    """One verdict per printed directory: the lines of other files in it get the same; a
    link inside on the way is followed, a link out anywhere on the way (or a file link out)
    hides the path, whatever the directory part looks like; absolute or outside the root
    lexically is a path argument containment already checked."""
    root = tmp_path / "ws"
    (root / "a" / "b").mkdir(parents=True)
    (tmp_path / "outside" / "deep").mkdir(parents=True)
    os.symlink("../../outside", root / "a" / "out")
    os.symlink("b", root / "a" / "in")
    os.symlink("../../../outside/deep", root / "a" / "b" / "far")
    os.symlink("../outside/x.md", root / "x.md")
    os.symlink("../../outside", root / "a" / "o")  # a link out whose name starts "oo.md"'s
    (root / "a" / "oo.md").write_text("o")
    os.symlink("a/oo.md", root / "in-file.md")  # a link to a file inside: shown
    grep = LinkFilter(str(root), str(root))
    glob = LinkFilter(str(root), str(root), check_files=False)
    cases = {"a/b/f.md": True, "a/in/f.md": True, "./a/in/g.md": True, "a/out/f.md": False,
             "a/out/deep/f.md": False, "a/in/far/f.md": False, "a/b/far/f.md": False, "a/../a/out/f.md": False,
             "f.md": True, "in-file.md": True, "a/oo.md": True, "a/o/oo.md": False, f"{root}/a/in/f.md": True, f"{root}/a/out/f.md": False, "/etc/passwd": True}
    for printed, shown in cases.items():
        assert grep.admit(printed) is shown, printed
        assert grep.admit(printed) is shown, printed  # the next line of the same file: the same answer
        assert glob.admit(printed) is shown, printed
    assert not grep.admit("x.md") and glob.admit("x.md")  # glob shows names: its walk excluded the file link
    assert grep.admit("a/b/gone.md")  # not there (any more): no link to follow
    assert grep._heads["a/in/"] == grep._heads["./a/in/"] and len(grep._dirs) < len(cases)


def test_paths_printed_absolute_or_not_normal_get_the_same_verdicts(tmp_path: Path) -> None:
    """ripgrep prints absolute paths for an absolute path argument (S9) and keeps ``./`` or
    ``../`` as given: each is judged at its normalized host directory"""
    root = tmp_path / "ws"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "a.txt").write_text("a\n")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "x.txt").write_text("x\n")
    os.symlink(outside, root / "out")
    for printed, shown in ((f"{root}/sub/a.txt", True), (f"{root}/out/x.txt", False), ("./sub/a.txt", True),
                           ("./out/x.txt", False), ("sub/../out/x.txt", False), ("../ws/sub/a.txt", True),
                           ("sub//a.txt", True)):
        links = LinkFilter(str(root), str(root))
        assert links.admit(printed) is shown, printed
        assert LinkFilter(str(root), str(root)).admit_many([printed]) == ([printed] if shown else []), printed
