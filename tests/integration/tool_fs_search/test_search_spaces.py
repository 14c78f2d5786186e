"""Where a search runs (``search_core.SearchCore._space``): the checks made before ripgrep starts and the
mirror a memory provider's search is copied into, through the ``glob`` and ``grep`` tools.

* a FIFO named as ``path`` is refused up front in both profiles (ripgrep would block on it);
* on a mirrored provider, a working directory that is missing or a file is ``could not
  start``; a ``path`` outside the working directory still searches from it (the working
  directory is made in the mirror); a spawn failure names the display working directory,
  never the mirror's; a search ended while the mirror is being filled removes the mirror;
* a run that prints nothing finds nothing, whatever its exit status; an absolute pattern
  (S9) searches its own directory, or only the ``path`` given with it;
* a page cut at the raw cap (S4) or a failed run past the page leaves no spill file.
"""

from __future__ import annotations

import os
import stat
import tempfile
from typing import Any

import anyio
import pytest

import dsh_fs
from dsh_fs import Session
from dsh_fs.fs_memory import MemoryFileSystem
from dsh_fs.tool_fs_search import mirror as mirror_module
from searchkit import call

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("profile", ["default", "reference"])
@pytest.mark.parametrize("tool", ["grep", "glob"])
async def test_a_fifo_named_as_path_is_refused_before_ripgrep_runs(ws: str, profile: str, tool: str) -> None:
    fifo = os.path.join(ws, "pipe")
    os.mkfifo(fifo)
    result = await call(dsh_fs.create_context(cwd=ws, profile=profile), tool, {"pattern": "x", "path": "pipe"},
                        session=Session(ws))
    assert (result.error.code, result.text) == (
        "FS_NOT_REGULAR_FILE", f'Error: cannot search "{fifo}": not a regular file or directory')
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def _memory(files: dict[str, bytes]) -> MemoryFileSystem:
    fs = MemoryFileSystem()
    for rel, data in files.items():
        fs.put(rel, data)
    return fs


def _session(cwd: str) -> Session:
    session = Session()
    session.cwd = cwd
    return session


@pytest.mark.parametrize(("profile", "text"), [
    ("default", 'Error: {tool} could not start ripgrep: the working directory "{cwd}" is not a directory'),
    ("reference", "Error: {tool} could not start its search command (unusable working directory or missing shell)"),
])
@pytest.mark.parametrize("cwd", ["/ws/a.txt", "/ws/none"])
@pytest.mark.parametrize("tool", ["grep", "glob"])
async def test_a_mirrored_search_needs_a_directory_as_working_directory(profile: str, text: str, cwd: str,
                                                                        tool: str) -> None:
    fs = _memory({"ws/a.txt": b"needle\n"})
    ctx = dsh_fs.create_context(provider=fs.with_profile(profile), profile=profile)
    result = await call(ctx, tool, {"pattern": "*" if tool == "glob" else "needle", "path": "/ws"},
                        session=_session(cwd))
    assert (result.error.code, result.text) == ("SEARCH_FAILED", text.format(tool=tool, cwd=cwd))


async def test_a_mirrored_path_outside_the_working_directory_is_searched_from_it() -> None:
    fs = _memory({"ws/here/x.txt": b"other\n", "ws/there/y.txt": b"needle\n"})
    ctx = dsh_fs.create_context(provider=fs, profile="default")
    found = await call(ctx, "grep", {"pattern": "needle", "path": "/ws/there"}, session=_session("/ws/here"))
    assert found.text == "Found 1 match\n\n/ws/there/y.txt\nLine 1: needle", found.text  # as ripgrep prints it
    listed = await call(ctx, "glob", {"pattern": "*.txt", "path": "../there"}, session=_session("/ws/here"))
    assert listed.text == "../there/y.txt", listed.text


@pytest.mark.parametrize("tool", ["grep", "glob"])
async def test_a_spawn_failure_in_a_mirror_names_the_display_working_directory(tmp_path: Any, tool: str) -> None:
    program = os.path.join(os.fspath(tmp_path), "rg")
    with open(program, "w") as handle:  # not executable
        handle.write("#!/bin/sh\n")
    fs = _memory({"ws/a.txt": b"needle\n"})
    ctx = dsh_fs.create_context(provider=fs, profile="default", rg_path=program)
    result = await call(ctx, tool, {"pattern": "needle" if tool == "grep" else "*"}, session=_session("/ws"))
    assert (result.error.code, result.text) == (
        "SEARCH_FAILED", f'Error: {tool} could not start ripgrep: Permission denied (working directory "/ws")')


@pytest.mark.parametrize("tool", ["grep", "glob"])
async def test_a_search_ended_while_the_mirror_fills_removes_the_mirror(tmp_path: Any, tool: str,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    place = os.path.join(os.fspath(tmp_path), "tmp")
    os.mkdir(place)
    monkeypatch.setattr(tempfile, "tempdir", place)
    real_add_tree = mirror_module.Mirror.add_tree
    started: list[str] = []

    async def slow_add_tree(self: Any, *args: Any, **kwargs: Any) -> None:
        started.append(self.root)
        await anyio.sleep(30)  # a provider too slow for the time budget
        await real_add_tree(self, *args, **kwargs)

    monkeypatch.setattr(mirror_module.Mirror, "add_tree", slow_add_tree)
    fs = _memory({"ws/a.txt": b"needle\n"})
    ctx = dsh_fs.create_context(provider=fs, profile="default", timeout_ms=2000)  # (time to start the fill)
    with anyio.fail_after(60):
        result = await call(ctx, tool, {"pattern": "needle" if tool == "grep" else "*"}, session=_session("/ws"))
    assert result.error.code == "SEARCH_ABORTED", result.text
    assert started and os.listdir(place) == []


@pytest.mark.parametrize("profile", ["default", "reference"])
@pytest.mark.parametrize(("tool", "text"), [("glob", "No files found"), ("grep", "No matches found")])
async def test_a_run_that_prints_nothing_finds_nothing_whatever_its_exit(ws: str, tmp_path: Any, profile: str,
                                                                         tool: str, text: str) -> None:
    from searchkit import FakeRg

    fake = FakeRg(tmp_path).script(stdout=b"", exit=0)
    ctx = dsh_fs.create_context(cwd=ws, profile=profile, rg_path=fake.path)
    assert (await call(ctx, tool, {"pattern": "x"}, session=Session(ws))).text == text


async def test_an_absolute_pattern_searches_its_own_directory_even_if_ignored_above(ws: str) -> None:  # S9
    os.mkdir(os.path.join(ws, ".git"))
    os.mkdir(os.path.join(ws, "sub"))
    with open(os.path.join(ws, ".gitignore"), "w") as out:
        out.write("sub/\n")
    with open(os.path.join(ws, "sub", "a.txt"), "w") as out:
        out.write("a\n")
    ctx = dsh_fs.create_context(cwd=ws, profile="default")
    found = await call(ctx, "glob", {"pattern": os.path.join(ws, "sub", "*.txt")}, session=Session(ws))
    assert found.text == "sub/a.txt", found.text


async def test_an_absolute_pattern_with_a_path_searches_only_that_path(ws: str) -> None:  # S9
    for rel in ("sub/a.txt", "sub/deep/b.txt"):
        os.makedirs(os.path.dirname(os.path.join(ws, rel)), exist_ok=True)
        with open(os.path.join(ws, rel), "w") as out:
            out.write("x\n")
    ctx = dsh_fs.create_context(cwd=ws, profile="default")
    pattern = os.path.join(ws, "sub", "**", "*.txt")
    assert (await call(ctx, "glob", {"pattern": pattern, "path": "sub/deep"}, session=Session(ws))).text == "sub/deep/b.txt"
    assert sorted((await call(ctx, "glob", {"pattern": pattern}, session=Session(ws))).text.split("\n")) == [
        "sub/a.txt", "sub/deep/b.txt"]


def _spilled(root: str) -> list[str]:
    return sorted(os.path.join(d, f) for d, _, files in os.walk(root) for f in files)


def _grep_lines(count: int) -> bytes:
    import json

    return b"".join(json.dumps({"type": "match", "data": {
        "path": {"text": f"f{i:03}.txt"}, "lines": {"text": "hit\n"}, "line_number": 1, "absolute_offset": 0,
        "submatches": []}}).encode() + b"\n" for i in range(count))


@pytest.mark.parametrize("tool", ["glob", "grep"])
async def test_a_first_page_cut_at_the_raw_cap_saves_nothing(ws: str, tmp_path: Any, tool: str) -> None:  # S4
    from searchkit import FakeRg

    out = _grep_lines(200) if tool == "grep" else b"".join(b"f%03d.txt\0" % i for i in range(200))
    fake = FakeRg(tmp_path).script(stdout=out)
    spill = os.path.join(os.fspath(tmp_path), "spill")
    ctx = dsh_fs.create_context(cwd=ws, profile="default", rg_path=fake.path, spill_root=spill, raw_output_max_bytes=1000,
                                glob_max_results=2, grep_max_matches=2)
    result = await call(ctx, tool, {"pattern": "hit"}, session=Session(ws))
    assert not result.is_error and "the complete result was not saved" in result.text, result.text
    assert _spilled(spill) == []


@pytest.mark.parametrize("tool", ["glob", "grep"])
async def test_a_failed_run_past_the_page_leaves_no_spill_file(ws: str, tmp_path: Any, tool: str) -> None:
    from searchkit import FakeRg

    out = _grep_lines(5) if tool == "grep" else b"".join(b"f%03d.txt\0" % i for i in range(5))
    fake = FakeRg(tmp_path).script(stdout=out, stderr=b"rg: boom\n", exit=2)
    spill = os.path.join(os.fspath(tmp_path), "spill")
    ctx = dsh_fs.create_context(cwd=ws, profile="default", rg_path=fake.path, spill_root=spill,
                                glob_max_results=2, grep_max_matches=2)
    result = await call(ctx, tool, {"pattern": "hit"}, session=Session(ws))
    assert (result.error.code, result.text) == ("SEARCH_FAILED", f"Error: {tool} search failed (exit 2): rg: boom")
    assert _spilled(spill) == []


async def test_a_path_above_the_working_directory_is_searched_by_the_usual_rules(ws: str) -> None:  # S13
    """Only a directory below the working directory that the rules skip is searched whole; one
    above it (``../b``, holding only a hidden file) is searched as it is, the hidden file
    named in S13's note."""
    os.makedirs(os.path.join(ws, "a"))
    os.makedirs(os.path.join(ws, "b"))
    with open(os.path.join(ws, "b", ".hidden.txt"), "w") as out:
        out.write("needle\n")
    ctx = dsh_fs.create_context(cwd=ws, profile="default")
    found = await call(ctx, "grep", {"pattern": "needle", "path": "../b"}, session=Session(os.path.join(ws, "a")))
    assert found.text == ("No matches found\n\n(1 file was not searched: ignored or hidden (../b/.hidden.txt); "
                          "name one as path to search it.)"), found.text


async def test_a_path_below_an_ignored_directory_is_searched_whole(ws: str) -> None:  # S13
    """``path`` inside a directory the rules skip (``build/`` ignored, ``build/sub`` named) is
    searched whole: hidden entries below it included."""
    os.mkdir(os.path.join(ws, ".git"))
    with open(os.path.join(ws, ".gitignore"), "w") as out:
        out.write("build/\n")
    for rel in ("build/sub/a.txt", "build/sub/.hidden/b.txt"):
        os.makedirs(os.path.dirname(os.path.join(ws, rel)), exist_ok=True)
        with open(os.path.join(ws, rel), "w") as out:
            out.write("needle\n")
    ctx = dsh_fs.create_context(cwd=ws, profile="default")
    found = await call(ctx, "grep", {"pattern": "needle", "path": "build/sub"}, session=Session(ws))
    assert found.text == ("Found 2 matches\n\nbuild/sub/.hidden/b.txt\nLine 1: needle\n\n"
                          "build/sub/a.txt\nLine 1: needle"), found.text


@pytest.mark.parametrize("tool", ["grep", "glob"])
async def test_a_ripgrep_config_file_is_never_read_by_a_mirrored_search(tool: str, tmp_path: Any,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Every ripgrep run (the mirror's listing too) has ``--no-config``: a user's
    ``RIPGREP_CONFIG_PATH`` cannot change what is searched."""
    config = os.path.join(os.fspath(tmp_path), "ripgreprc")
    with open(config, "w") as out:
        out.write("--glob=!a.txt\n")
    monkeypatch.setenv("RIPGREP_CONFIG_PATH", config)
    fs = _memory({"ws/a.txt": b"needle\n"})
    ctx = dsh_fs.create_context(provider=fs, profile="default")
    result = await call(ctx, tool, {"pattern": "needle" if tool == "grep" else "*.txt"}, session=_session("/ws"))
    assert result.text == ("Found 1 match\n\na.txt\nLine 1: needle" if tool == "grep" else "a.txt"), result.text


async def test_a_hidden_directory_named_as_path_is_searched_whole(ws: str) -> None:  # S13
    for rel in (".cfg/a.txt", ".cfg/.inner/b.txt"):
        os.makedirs(os.path.dirname(os.path.join(ws, rel)), exist_ok=True)
        with open(os.path.join(ws, rel), "w") as out:
            out.write("needle\n")
    ctx = dsh_fs.create_context(cwd=ws, profile="default")
    found = await call(ctx, "grep", {"pattern": "needle", "path": ".cfg"}, session=Session(ws))
    assert found.text == "Found 2 matches\n\n.cfg/.inner/b.txt\nLine 1: needle\n\n.cfg/a.txt\nLine 1: needle", found.text


async def test_the_skipped_note_names_entries_as_the_path_was_given(ws: str) -> None:  # S13
    os.makedirs(os.path.join(ws, "sub"))
    for name in ("a.txt", ".hidden"):
        with open(os.path.join(ws, "sub", name), "w") as out:
            out.write("needle\n")
    ctx = dsh_fs.create_context(cwd=ws, profile="default")
    note = "\n\n(1 file was not searched: ignored or hidden ({}); name one as path to search it.)"
    found = await call(ctx, "grep", {"pattern": "needle", "path": "sub"}, session=Session(ws))
    assert found.text == "Found 1 match\n\nsub/a.txt\nLine 1: needle" + note.format("sub/.hidden"), found.text
    absolute = os.path.join(ws, "sub")
    found = await call(ctx, "grep", {"pattern": "needle", "path": absolute}, session=Session(ws))
    assert found.text == "Found 1 match\n\nsub/a.txt\nLine 1: needle" + note.format("sub/.hidden"), found.text
