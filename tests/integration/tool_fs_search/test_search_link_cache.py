"""S8 through the registry: the look for links out of the root keeps what it read of unchanged
directories between searches (``linkwalk.DirCache``), and a link out made since, in a
directory it kept, still keeps ripgrep out, also where it is reached through a link inside
(the real ripgrep, its argument vectors recorded by a wrapper) and out of the result."""

from __future__ import annotations

import os
import shlex
import stat
import threading
import time
from typing import Any

import anyio
import pytest

from dsh_fs import Session
from dsh_fs.tool_fs_search.engine import find_ripgrep
from dsh_fs.tool_fs_search.linkwalk import RACY_NS
from filekit import put
from searchkit import call, search_ctx

pytestmark = pytest.mark.anyio


def _recording_rg(directory: str) -> tuple[str, str]:
    """A wrapper that appends each argument vector (one line) to a log and runs ripgrep."""
    real = find_ripgrep()
    assert real is not None
    log = os.path.join(directory, "argv.log")
    wrapper = os.path.join(directory, "rg")
    with open(wrapper, "w", encoding="utf-8") as handle:
        handle.write(f'#!/bin/sh\nprintf "%s\\n" "$*" >> {shlex.quote(log)}\nexec {shlex.quote(real)} "$@"\n')
    os.chmod(wrapper, stat.S_IRWXU)
    return wrapper, log


def _runs(log: str) -> list[str]:
    with open(log, encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    os.unlink(log)
    return lines


async def test_a_link_out_made_in_a_kept_directory_keeps_ripgrep_out(tmp_path: Any) -> None:
    base = os.path.realpath(str(tmp_path))
    proj = os.path.join(base, "proj")
    put(os.path.join(base, "outside", "secret.txt"), "TOP SECRET needle\n")
    put(os.path.join(proj, "inside.txt"), "needle inside\n")
    put(os.path.join(proj, "sub", "deeper.txt"), "needle deeper\n")
    os.symlink("sub", os.path.join(proj, "in-dir"))
    tools = os.path.join(base, "bin")
    os.mkdir(tools)
    rg, log = _recording_rg(tools)
    ctx = search_ctx(proj, rg_path=rg)
    session = Session(proj)
    time.sleep(RACY_NS / 1e9 + 0.1)  # the directories are no longer racy: the first look keeps them

    first = await call(ctx, "glob", {"pattern": "**/*.txt"}, session=session)
    assert sorted(first.text.split("\n")) == ["in-dir/deeper.txt", "inside.txt", "sub/deeper.txt"]
    assert all("--glob=!/" not in run for run in _runs(log))

    os.symlink("../../outside", os.path.join(proj, "sub", "late-out"))
    again = await call(ctx, "glob", {"pattern": "**/*.txt"}, session=session)
    assert sorted(again.text.split("\n")) == ["in-dir/deeper.txt", "inside.txt", "sub/deeper.txt"]
    last = _runs(log)[-1].split(" ")
    assert "--glob=!/sub/late-out" in last  # the kept look read sub again
    assert "--glob=!/in-dir/late-out" in last  # and found the link out behind the link in

    found = await call(ctx, "grep", {"pattern": "needle"}, session=session)
    assert "TOP SECRET" not in found.text and "in-dir/deeper.txt" in found.text
    last = _runs(log)[-1].split(" ")
    assert "--glob=!/sub/late-out" in last and "--glob=!/in-dir/late-out" in last


async def test_a_search_out_of_time_leaves_a_slow_look(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The look runs in a worker thread the call does not wait for once its time budget is
    spent; told so, the look stops at its next directory. (Events, not elapsed time: the look
    goes on until the call has answered, so a call that waited for it would never answer before
    the look's 120 s guard.)"""
    from dsh_fs.tool_fs_search import followed

    asked: list[str] = []
    answered = threading.Event()

    def slow_look(top: str, root: str, *, stopped: Any, **_: object) -> list[str]:
        if not answered.wait(120):
            asked.append("the call waited for the look")
            return []
        deadline = time.monotonic() + 120  # a guard: told to stop, the look stops at once
        while not stopped() and time.monotonic() < deadline:
            time.sleep(0.01)
        asked.append("stopped" if stopped() else "never told to stop")
        return []

    monkeypatch.setattr(followed, "outward_links", slow_look)
    proj = os.path.realpath(str(tmp_path))
    put(os.path.join(proj, "a.txt"), "needle\n")
    ctx = search_ctx(proj, timeout_ms=2000)  # (time for a busy machine to start the look first)
    result = await call(ctx, "grep", {"pattern": "needle"}, session=Session(proj))
    answered.set()
    assert (result.error.code, result.text) == (
        "SEARCH_ABORTED", "Error: grep timed out after 2000ms; narrow pattern, path, or include and retry")
    deadline = time.monotonic() + 240  # a guard only: the look answers at its next check
    while not asked and time.monotonic() < deadline:
        await anyio.sleep(0.01)
    assert asked == ["stopped"]
