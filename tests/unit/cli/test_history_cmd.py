"""``dsh-fs sessions history|rewind|diff`` in this process (``dsh_fs.cli.history_cmd``, click's
``CliRunner``), over a history the library recorded into the state directory's store: exit
statuses, what goes to stdout and stderr, the options reaching the rewind, the store's
failures. The same commands in real processes: tests/e2e/cli/test_cli_history.py."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner

from dsh_fs import Session, create_context
from dsh_fs.cli.main import main
from dsh_fs.history.sqlite_store import SqliteHistoryStore


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("DSH_FS_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.delenv("DSH_FS_SESSION", raising=False)
    path = Path(os.path.realpath(tmp_path / "ws"))
    path.mkdir()
    (path / "a.txt").write_text("one\n")
    monkeypatch.chdir(path)
    return path


def agent(ws: Path, *calls: tuple[str, dict[str, Any]], name: str = "s1") -> None:
    async def run() -> None:
        ctx = create_context(root=str(ws), history=SqliteHistoryStore(), policy=False)
        session = Session(cwd=str(ws), id=name)
        async with ctx:
            for tool, args in calls:
                done = await ctx.tools.execute(tool, args, session=session)
                assert not done.is_error, done.text

    anyio.run(run)


def sessions(*args: str) -> Any:
    return CliRunner().invoke(main, ["sessions", *args], prog_name="dsh-fs")


EDIT = ("edit", {"file_path": "a.txt", "old_string": "one", "new_string": "two"})
WRITE = ("write", {"file_path": "b.txt", "content": "bee\n"})


def test_history_and_no_history(ws: Path) -> None:
    agent(ws, EDIT, WRITE)
    done = sessions("history", "s1")
    assert done.exit_code == 0 and done.stderr == ""
    assert [line.split("  ", 2)[::2] for line in done.stdout.splitlines()] == [
        ["1", f"edit  {ws}/a.txt"], ["2", f"write  {ws}/b.txt (created)"]]
    none = sessions("history", "nobody")
    assert (none.exit_code, none.stdout, none.stderr) == (2, "", "Error: session 'nobody' has no history\n")


def test_rewind_options_reach_the_rewind(ws: Path) -> None:
    agent(ws, EDIT, WRITE)
    dry = sessions("rewind", "s1", "--last", "1", "--dry-run")
    assert dry.exit_code == 0 and dry.stdout.startswith(f"would remove {ws}/b.txt\n") and (ws / "b.txt").exists()
    (ws / "a.txt").write_text("mine\n")
    refused = sessions("rewind", "s1", "--to", "0")
    assert refused.exit_code == 1 and refused.stdout == f"would remove {ws}/b.txt\n"
    assert refused.stderr.startswith(f"refused {ws}/a.txt: changed since this owner's last change\n")
    assert (ws / "b.txt").exists() and (ws / "a.txt").read_text() == "mine\n"
    skipped = sessions("rewind", "s1", "--to", "0", "--skip", f"{ws}/a.txt")
    assert skipped.exit_code == 0 and not (ws / "b.txt").exists() and (ws / "a.txt").read_text() == "mine\n"
    redo = sessions("rewind", "s1", "--last", "1")
    assert redo.exit_code == 0 and (ws / "b.txt").read_text() == "bee\n"
    changed = sessions("rewind", "s1", "--to", "0", "--skip-changed")
    assert changed.exit_code == 0 and not (ws / "b.txt").exists() and (ws / "a.txt").read_text() == "mine\n"
    forced = sessions("rewind", "s1", "--to", "0", "--force", f"{ws}/a.txt")
    assert forced.exit_code == 0 and (ws / "a.txt").read_text() == "one\n", forced.stdout + forced.stderr


def test_skip_and_force_take_relative_paths_from_the_current_directory(ws: Path) -> None:
    agent(ws, EDIT, WRITE)
    (ws / "a.txt").write_text("mine\n")
    skipped = sessions("rewind", "s1", "--to", "0", "--skip", "a.txt")
    assert skipped.exit_code == 0, skipped.stdout + skipped.stderr
    assert not (ws / "b.txt").exists() and (ws / "a.txt").read_text() == "mine\n"
    sessions("rewind", "s1", "--last", "1")
    (ws / "sub").mkdir()
    os.chdir(ws / "sub")
    forced = sessions("rewind", "s1", "--to", "0", "--force", "../a.txt")
    assert forced.exit_code == 0 and (ws / "a.txt").read_text() == "one\n", forced.stdout + forced.stderr


def test_a_skip_or_force_matching_no_file_of_the_rewind_is_refused(ws: Path) -> None:
    agent(ws, EDIT, WRITE)
    (ws / "a.txt").write_text("mine\n")
    for args in (["--to", "0", "--skip", "notes.txt"], ["--to", "0", "--skip", "a.txt", "--force", "nope/a.txt"],
                 ["--last", "1", "--skip", f"{ws}/a.txt"]):  # a.txt changed at step 1 only: not taken back
        option, path = args[-2:]
        done = sessions("rewind", "s1", *args)
        shown = os.path.normpath(os.path.join(ws, path))
        assert (done.exit_code, done.stdout) == (2, ""), done.stdout + done.stderr
        assert done.stderr == f"Error: {option} {shown}: no file of this rewind (see 'dsh-fs sessions history')\n"
        assert (ws / "a.txt").read_text() == "mine\n" and (ws / "b.txt").exists()


def test_rewind_to_a_checkpoint_by_name_and_digits_as_steps(ws: Path) -> None:
    agent(ws, EDIT)

    async def mark() -> str:
        store = SqliteHistoryStore()
        try:
            return await store.checkpoint("s1", "7")
        finally:
            await store.aclose()

    anyio.run(mark)
    agent(ws, WRITE)
    by_number = sessions("rewind", "s1", "--to", "7", "--dry-run")
    assert by_number.exit_code == 2 and by_number.stderr.endswith("Error: no step 7 (the history has steps up to 2)\n")
    assert sessions("rewind", "s1", "--to", "1").exit_code == 0 and not (ws / "b.txt").exists()


def test_diff_since(ws: Path) -> None:
    agent(ws, EDIT, WRITE)
    (ws / "b.txt").unlink()
    done = sessions("diff", "s1", "--since", "1")
    assert done.exit_code == 0 and done.stdout == ""  # created after step 1 and gone again: no difference
    done = sessions("diff", "s1", "--since", "0")
    assert done.stdout == f"--- {ws}/a.txt (after step 0)\n+++ {ws}/a.txt (now)\n@@ -1 +1 @@\n-one\n+two\n"


def test_diff_of_a_file_whose_content_was_not_kept(ws: Path) -> None:
    async def run() -> None:
        store = SqliteHistoryStore()
        ctx = create_context(root=str(ws), history=store, policy=False)
        ctx.fs._max_file_bytes = 2  # a tiny size cap: a.txt's content is not kept
        async with ctx:
            await ctx.tools.execute(*WRITE[:1], {"file_path": "a.txt", "content": "new\n"},
                                    session=Session(cwd=str(ws), id="s1"))

    anyio.run(run)
    done = sessions("diff", "s1", "--since", "0")
    assert done.exit_code == 0 and done.stdout == (
        f"{ws}/a.txt: its content at step 0 was not kept (4 bytes, over the 2-byte cap)\n")


def test_diff_of_a_copy_no_longer_kept_and_of_a_file_that_cannot_be_read(ws: Path, tmp_path: Path) -> None:
    agent(ws, EDIT, WRITE)
    with sqlite3.connect(tmp_path / "state" / "history.sqlite3") as db:
        db.execute("DELETE FROM blobs")  # as if dropped
    done = sessions("diff", "s1", "--since", "0")
    assert done.exit_code == 0 and done.stdout == (
        f"{ws}/a.txt: its content at step 0 is no longer kept\n--- /dev/null\n+++ {ws}/b.txt (now)\n"
        "@@ -0,0 +1 @@\n+bee\n")
    agent(ws, ("edit", {"file_path": "b.txt", "old_string": "bee", "new_string": "B"}))  # step 3: b.txt kept
    with open(ws / "b.txt", "wb") as big:  # past the history's size cap: not read for a diff
        big.truncate(16 * 1024 * 1024 + 1)
    done = sessions("diff", "s1", "--since", "2")
    assert done.exit_code == 0 and done.stdout.startswith(f"{ws}/b.txt: cannot be read now (") and \
        done.stdout.count("\n") == 1, done.stdout[:300]


def test_usage_errors_and_an_unusable_store_exit_2(ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    agent(ws, EDIT)
    for args, message in ((["rewind", "s1"], "Error: give either --to STEP|CHECKPOINT or --last K"),
                          (["rewind", "s1", "--to", "1", "--last", "1"], "Error: give either --to STEP|CHECKPOINT or --last K"),
                          (["rewind", "nobody", "--last", "1"], "Error: session 'nobody' has no history"),
                          (["diff", "s1", "--since", "nope"], "Error: no checkpoint named 'nope'")):
        done = sessions(*args)
        assert (done.exit_code, done.stdout) == (2, "") and done.stderr.splitlines()[-1] == message, done.stderr
    for args, message in ((["rewind", "s1", "--to", ""], "give a step number or a checkpoint's name or id"),
                          (["rewind", "s1", "--last", "1", "--skip", ""], "give a file's path as"),
                          (["diff", "s1"], "Error: Missing option '--since'."),
                          (["rewind", "s1", "--last", "-1"], "Error: Invalid value for '--last'")):
        done = sessions(*args)
        assert done.exit_code == 2 and message in done.stderr, done.stderr
    nothing = sessions("rewind", "s1", "--last", "0")
    assert (nothing.exit_code, nothing.stdout) == (0, "session s1 is already as at step 1: nothing to write\n")
    (tmp_path / "state" / "history.sqlite3").write_bytes(b"not a database " * 100)
    for name in ("history.sqlite3-wal", "history.sqlite3-shm"):
        (tmp_path / "state" / name).unlink(missing_ok=True)
    broken = sessions("history", "s1")
    assert broken.exit_code == 2 and broken.stderr.startswith("Error: cannot use the history store "), broken.stderr
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("DSH_FS_STATE_DIR", str(tmp_path / "file"))
    for args in (["history", "s1"], ["rewind", "s1", "--last", "1"], ["diff", "s1", "--since", "0"]):
        done = sessions(*args)
        assert done.exit_code == 2 and done.stderr.startswith("Error: cannot open the history store "), done.stderr


def test_the_group_help_says_forgetting_drops_the_history() -> None:
    done = CliRunner().invoke(main, ["sessions", "--help"], prog_name="dsh-fs", terminal_width=200)
    text = " ".join(done.stdout.split())
    assert done.exit_code == 0 and "only means" not in text
    assert "and its history (its steps can no longer be rewound); no file is touched." in text
