"""When ripgrep exits with an error and its output also passes ``rawOutputMaxBytes``
(REFERENCE-SPEC §6.3: the exit status is checked before the output size).

* ``reference``: the exit status wins (``SEARCH_FAILED``), as the reference reports it —
  ripgrep is let finish, its output past the cap read and dropped (memory stays bounded).
* ``default``: the same while there is nothing to show; with a first page to show, S4 stops
  ripgrep at the cap and shows the page (the exit status is not waited for).
"""

from __future__ import annotations

import json
import os

import pytest

from dsh_fs import Session
from filekit import put
from searchkit import FakeRg, call, search_ctx

pytestmark = pytest.mark.anyio

NO_FILES = (
    "Error: grep search failed (exit 2): rg: No files were searched, which means ripgrep probably applied a "
    "filter you didn't expect.\nRunning with --debug will show why files are being skipped."
)


@pytest.mark.parametrize("profile", ["reference", "default"])
async def test_an_error_exit_wins_over_the_output_size_with_nothing_to_show(ws: str, profile: str) -> None:
    put(os.path.join(ws, "a.txt"), "alpha\n")
    ctx = search_ctx(ws, profile=profile, raw_output_max_bytes=80)
    result = await call(ctx, "grep", {"pattern": "alpha", "include": "*.nomatch"}, session=Session(ws))
    assert (result.error.code, result.text) == ("SEARCH_FAILED", NO_FILES)
    if profile == "reference":  # a missing path is ripgrep's own error there (S5 names it first in default)
        missing = await call(ctx, "grep", {"pattern": "alpha", "path": "missing"}, session=Session(ws))
        assert missing.error.code == "SEARCH_FAILED"
        assert missing.text.startswith("Error: grep search failed (exit 2): rg: missing: IO error")


def _match(path: str) -> str:
    return json.dumps({"type": "match", "data": {"path": {"text": path}, "lines": {"text": "hit\n"},
                                                 "line_number": 1, "absolute_offset": 0, "submatches": []}})


@pytest.mark.parametrize("profile", ["reference", "default"])
async def test_with_a_page_to_show(ws: str, tmp_path: object, profile: str) -> None:
    fake = FakeRg(tmp_path)
    fake.script(stdout="".join(_match(f"f{i:03}.txt") + "\n" for i in range(200)).encode(),
                stderr=b"rg: unreadable.txt: Permission denied (os error 13)\n", exit=2)
    ctx = search_ctx(ws, profile=profile, rg_path=fake.path, raw_output_max_bytes=4000, grep_max_matches=3)
    result = await call(ctx, "grep", {"pattern": "hit"}, session=Session(ws))
    if profile == "reference":
        assert (result.error.code, result.text) == (
            "SEARCH_FAILED", "Error: grep search failed (exit 2): rg: unreadable.txt: Permission denied (os error 13)")
    else:
        assert not result.is_error and result.text.startswith("Found 3 of more than ")


async def test_a_page_waiting_for_the_links_out_look_still_counts(
        ws: str, tmp_path: object, monkeypatch: pytest.MonkeyPatch) -> None:
    """S4 under S8: ripgrep passes the cap while its lines still wait for the look for links
    out of the root; those lines are a page to show, so ripgrep is stopped, not drained into
    its error exit."""
    import time

    from dsh_fs.tool_fs_search import followed

    def slow_look(top: str, root: str, **_: object) -> list[str]:
        deadline = time.monotonic() + 60  # a guard only: ripgrep (the fake) ends at once
        while not fake.ended() and time.monotonic() < deadline:  # ripgrep has written (or was stopped)
            time.sleep(0.01)
        return []

    monkeypatch.setattr(followed, "outward_links", slow_look)
    fake = FakeRg(tmp_path)
    fake.script(stdout="".join(_match(f"f{i:03}.txt") + "\n" for i in range(200)).encode(),
                stderr=b"rg: unreadable.txt: Permission denied (os error 13)\n", exit=2)
    ctx = search_ctx(ws, profile="default", rg_path=fake.path, raw_output_max_bytes=4000, grep_max_matches=3)
    result = await call(ctx, "grep", {"pattern": "hit"}, session=Session(ws))
    assert not result.is_error and result.text.startswith("Found 3 of more than "), result.text


async def test_a_bad_line_waiting_for_the_links_out_look_is_the_run_s_own_error(
        ws: str, tmp_path: object, monkeypatch: pytest.MonkeyPatch) -> None:
    """S8: a malformed ``--json`` line delivered after the look (not by the run) gives the
    same error as one delivered by the run, never an exception group."""
    import time

    from dsh_fs.tool_fs_search import followed

    def slow_look(top: str, root: str, **_: object) -> list[str]:
        deadline = time.monotonic() + 60  # a guard only: ripgrep (the fake) ends at once
        while not fake.ended() and time.monotonic() < deadline:  # the bad line is written by then
            time.sleep(0.01)
        return []

    monkeypatch.setattr(followed, "outward_links", slow_look)
    fake = FakeRg(tmp_path)
    fake.script(stdout=b"{not json\n")
    ctx = search_ctx(ws, profile="default", rg_path=fake.path)
    result = await call(ctx, "grep", {"pattern": "x"}, session=Session(ws))
    assert result.text == "Error: grep received malformed ripgrep --json output (a line is not JSON)"


async def test_a_bad_line_after_the_look_stops_a_ripgrep_still_running(
        ws: str, tmp_path: object, monkeypatch: pytest.MonkeyPatch) -> None:
    """S8: the error of a line delivered after the look ends the call at once, ripgrep's process
    group killed, never waited for (the fake would run an hour more)."""
    import time

    from dsh_fs.tool_fs_search import followed
    from searchkit import gone

    def slow_look(top: str, root: str, **_: object) -> list[str]:
        deadline = time.monotonic() + 60  # a guard only: the fake writes its line at once
        while not os.path.exists(os.path.join(fake.dir, "child")) and time.monotonic() < deadline:
            time.sleep(0.01)  # its bad line is written before it starts sleeping
        return []

    monkeypatch.setattr(followed, "outward_links", slow_look)
    fake = FakeRg(tmp_path)
    # an hour's sleep and time budget: waiting for the fake would outlast the test's timeout
    fake.script(stdout=b"{not json\n", sleep=3600)
    ctx = search_ctx(ws, profile="default", rg_path=fake.path, timeout_ms=3_600_000)
    result = await call(ctx, "grep", {"pattern": "x"}, session=Session(ws))
    assert result.text == "Error: grep received malformed ripgrep --json output (a line is not JSON)"
    assert gone(fake.child, within=60)


async def test_a_run_that_found_links_out_is_ended_before_the_run_that_excludes_them(ws: str, tmp_path: object) -> None:
    """S8: once the look finds a link out of the root, the first ripgrep run (following it) is
    killed at once and the search runs again with the link excluded; the first is never let
    finish. The fake ripgrep stays an hour unless it is given the link's exclusion."""
    import time

    outside = os.path.join(str(tmp_path), "outside")
    os.mkdir(outside)
    os.symlink(outside, os.path.join(ws, "zzlinkout"))
    log = os.path.join(str(tmp_path), "runs.log")
    program = os.path.join(str(tmp_path), "bin", "rg")
    os.makedirs(os.path.dirname(program))
    with open(program, "w") as handle:
        handle.write("#!/bin/sh\n"
                     f'for a in "$@"; do case "$a" in *zzlinkout*) echo excluded >> "{log}"; exit 1;; esac; done\n'
                     f'echo following >> "{log}"\n'
                     "sleep 3600 & wait\n")
    os.chmod(program, 0o700)
    # an hour's time budget: a first run let finish would outlast the test's timeout
    ctx = search_ctx(ws, profile="default", rg_path=program, timeout_ms=3_600_000)
    result = await call(ctx, "grep", {"pattern": "x"}, session=Session(ws))
    assert result.text == "No matches found", result.text
    with open(log) as handle:
        assert handle.read().splitlines() == ["following", "excluded"]
