"""``dsh-fs sessions history|rewind|diff NAME`` end to end (docs/HISTORY.md "CLI"), in real
subprocesses with ``DSH_FS_STATE_DIR`` in a tmp dir; the changes are made by the tool commands
of ``--session NAME`` (their durable history).

Covers: ``history`` lists numbered steps oldest first with time, tool, files (created,
deleted, moved) and the checkpoints after the step they follow, and says when the oldest steps
were dropped; ``rewind --dry-run`` prints each file's diff and writes nothing; ``rewind`` is
refused whole (exit 1, nothing written, the file and why on stderr) for a file someone else
changed, and ``--skip-changed``, ``--skip FILE``, ``--force FILE`` choose per file; a rewind is
a step a ``--last 1`` rewind takes back (redo); ``--to CHECKPOINT``; ``diff --since`` shows what
changed since a step, whoever changed it; ``sessions forget``/``prune`` remove the history too;
an unknown session or step exits 2.
Not covered here: the rewind's rules in depth (tests/integration/history/), the MCP server's
sessions (tests/e2e/mcp/test_mcp_history.py), bad option values (tests/robustness/cli/).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
import anyio
import pytest

from dsh_fs.testing.snapshot import snapshot

Run = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    (path / "a.txt").write_text("one\ntwo\n")
    return Path(os.path.realpath(path))


@pytest.fixture
def run(tmp_path: Path, ws: Path, monkeypatch: pytest.MonkeyPatch) -> Run:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DSH_FS_")}
    env.update(DSH_FS_STATE_DIR=str(tmp_path / "state"), DSH_FS_LOCK_DIR=str(tmp_path / "locks"))
    monkeypatch.setenv("DSH_FS_STATE_DIR", env["DSH_FS_STATE_DIR"])  # the library calls below: the same store

    def dsh_fs(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "dsh_fs.cli.main", *args], cwd=ws, env=env,
                              capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)

    return dsh_fs


def _agent(run: Run) -> None:
    """Session ``s1`` edits a.txt, creates b.txt (steps 1, 2)."""
    assert run("read", "a.txt", "--session", "s1").returncode == 0
    assert run("edit", "a.txt", "--old", "two", "--new", "2", "--session", "s1").returncode == 0
    assert run("write", "b.txt", "--content", "bee\n", "--session", "s1").returncode == 0


def _checkpoint(owner: str, name: str) -> str:
    from dsh_fs.history.sqlite_store import SqliteHistoryStore

    async def mark() -> str:
        store = SqliteHistoryStore()
        try:
            return await store.checkpoint(owner, name)
        finally:
            await store.aclose()

    return anyio.run(mark)


STEP = re.compile(r"^(\d+)  \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ  (\S+)  (.*)$")


def test_history_lists_numbered_steps_newest_last_with_checkpoints(run: Run, ws: Path) -> None:
    _checkpoint("s1", "start")
    _agent(run)
    mark = _checkpoint("s1", "after-b")
    done = run("sessions", "history", "s1")
    assert done.returncode == 0 and done.stderr == "", done.stderr
    lines = done.stdout.splitlines()
    assert re.fullmatch(r"   checkpoint start \([0-9a-f-]+\)", lines[0]), lines
    assert [STEP.match(line).groups() for line in lines[1:3]] == [  # type: ignore[union-attr]
        ("1", "edit", f"{ws}/a.txt"), ("2", "write", f"{ws}/b.txt (created)")]
    assert lines[3] == f"   checkpoint after-b ({mark})" and len(lines) == 4
    unknown = run("sessions", "history", "nobody")
    assert (unknown.returncode, unknown.stdout, unknown.stderr) == (2, "", "Error: session 'nobody' has no history\n")


def test_a_dry_run_shows_the_diffs_and_writes_nothing(run: Run, ws: Path) -> None:
    _agent(run)
    before = snapshot(str(ws), dir_times=False)
    done = run("sessions", "rewind", "s1", "--to", "0", "--dry-run")
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        f"would remove {ws}/b.txt\n--- {ws}/b.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bee\n"
        f"would restore {ws}/a.txt\n--- {ws}/a.txt\n+++ {ws}/a.txt\n@@ -1,2 +1,2 @@\n one\n-2\n+two\n"
        "dry run: rewinding session s1 to step 0 would take back steps 1-2; nothing was written\n")
    assert snapshot(str(ws), dir_times=False) == before


def test_a_rewind_over_someone_elses_change_is_refused_whole_then_chosen_per_file(run: Run, ws: Path) -> None:
    _agent(run)
    (ws / "a.txt").write_text("one\n2\nmine\n")  # a person's change after the agent's
    before = snapshot(str(ws), dir_times=False)
    refused = run("sessions", "rewind", "s1", "--to", "0")
    assert refused.returncode == 1 and snapshot(str(ws), dir_times=False) == before
    assert refused.stdout == f"would remove {ws}/b.txt\n"
    assert refused.stderr.startswith(f"refused {ws}/a.txt: changed since this owner's last change\n"
                                     "dsh-fs: rewind of session s1 to step 0 refused, nothing written"), refused.stderr
    skipped = run("sessions", "rewind", "s1", "--to", "0", "--skip", f"{ws}/a.txt")
    assert skipped.returncode == 0, skipped.stderr
    assert skipped.stdout.splitlines()[:2] == [f"removed {ws}/b.txt",
                                               f"skipped {ws}/a.txt: changed since this owner's last change"]
    assert not (ws / "b.txt").exists() and (ws / "a.txt").read_text() == "one\n2\nmine\n"
    forced = run("sessions", "rewind", "s1", "--to", "0", "--force", f"{ws}/a.txt")
    assert forced.returncode == 0, forced.stderr
    assert forced.stdout.splitlines()[0] == f"restored {ws}/a.txt (forced: its later changes are replaced)"
    assert (ws / "a.txt").read_text() == "one\ntwo\n"


def test_skip_changed_then_redo_with_last_and_to_a_checkpoint(run: Run, ws: Path) -> None:
    _agent(run)
    _checkpoint("s1", "agent-done")
    (ws / "b.txt").write_text("a person's bee\n")
    done = run("sessions", "rewind", "s1", "--to", "0", "--skip-changed")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"restored {ws}/a.txt", f"skipped {ws}/b.txt: changed since this owner's last change",
        "rewound session s1 to step 0 (steps 1-2 taken back); this rewind is step 3: rewind to step 2 to redo"]
    assert (ws / "a.txt").read_text() == "one\ntwo\n"
    redo = run("sessions", "rewind", "s1", "--last", "1")
    assert redo.returncode == 0 and (ws / "a.txt").read_text() == "one\n2\n", redo.stderr
    again = run("sessions", "rewind", "s1", "--to", "0", "--skip-changed")
    assert again.returncode == 0 and (ws / "a.txt").read_text() == "one\ntwo\n"
    back = run("sessions", "rewind", "s1", "--to", "agent-done", "--skip-changed")
    assert back.returncode == 0 and (ws / "a.txt").read_text() == "one\n2\n", back.stdout + back.stderr
    listed = run("sessions", "history", "s1").stdout.splitlines()
    assert [STEP.match(line).group(2) for line in listed if STEP.match(line)] == [  # type: ignore[union-attr]
        "edit", "write", "rewind", "rewind", "rewind", "rewind"]


def test_diff_since_a_step_shows_every_change_whoever_made_it(run: Run, ws: Path) -> None:
    _agent(run)
    (ws / "a.txt").write_text("one\n2\nmine\n")
    done = run("sessions", "diff", "s1", "--since", "0")
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        f"--- {ws}/a.txt (after step 0)\n+++ {ws}/a.txt (now)\n@@ -1,2 +1,3 @@\n one\n-two\n+2\n+mine\n"
        f"--- /dev/null\n+++ {ws}/b.txt (now)\n@@ -0,0 +1 @@\n+bee\n")
    last = run("sessions", "diff", "s1", "--since", "2")
    assert (last.returncode, last.stdout) == (0, "")


def test_unknown_sessions_and_points_exit_2(run: Run, ws: Path) -> None:
    _agent(run)
    for args, message in (
        (["rewind", "nobody", "--last", "1"], "Error: session 'nobody' has no history"),
        (["diff", "nobody", "--since", "0"], "Error: session 'nobody' has no history"),
        (["history", "nobody"], "Error: session 'nobody' has no history"),
        (["rewind", "s1", "--to", "9"], "Error: no step 9 (the history has steps up to 2)"),
        (["rewind", "s1", "--to", "nope"], "Error: no checkpoint named 'nope'"),
        (["rewind", "s1"], "Error: give either --to STEP|CHECKPOINT or --last K"),
    ):
        done = run("sessions", *args)
        assert (done.returncode, done.stdout) == (2, ""), (args, done.stdout, done.stderr)
        assert done.stderr.splitlines()[-1] == message, done.stderr


def test_the_dropped_oldest_steps_are_said(run: Run, ws: Path) -> None:
    from dsh_fs import Session, create_context
    from dsh_fs.history.sqlite_store import SqliteHistoryStore

    async def agent() -> None:
        store = SqliteHistoryStore(max_owner_bytes=64)
        ctx = create_context(root=str(ws), history=store, policy=False)
        session = Session(cwd=str(ws), id="small")
        async with ctx:
            for n in range(4):
                await ctx.tools.execute("write", {"file_path": "a.txt", "content": f"{n}" * 40 + "\n"}, session=session)

    anyio.run(agent)
    done = run("sessions", "history", "small")
    lines = done.stdout.splitlines()
    dropped = re.match(r"steps 1-(\d+) of session small were dropped \(oldest first\) to keep its history under"
                       r" its byte cap; it goes back to step (\d+) at the earliest$", lines[0])
    assert dropped and dropped.group(1) == dropped.group(2), lines
    assert [int(STEP.match(line).group(1)) for line in lines[1:]] == list(  # type: ignore[union-attr]
        range(int(dropped.group(1)) + 1, 5))


def test_forget_and_prune_remove_the_history_too(run: Run, ws: Path) -> None:
    _agent(run)
    done = run("sessions", "forget", "s1")
    assert done.stdout == "forgot session 's1' (2 observations, 2 history steps)\n", done.stdout + done.stderr
    assert run("sessions", "history", "s1").stderr == "Error: session 's1' has no history\n"
    assert run("write", "c.txt", "--content", "c\n", "--session", "s2").returncode == 0
    pruned = run("sessions", "prune", "--older-than", "0s")
    assert pruned.stdout == "forgot session s2 (1 observation, last used just now) and its history\n"
    assert run("sessions", "history", "s2").stdout == ""
