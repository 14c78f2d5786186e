"""What ``dsh-fs sessions history|rewind|diff`` print (``dsh_fs.cli.history_text``, pure): the step
lines, checkpoints and the dropped-steps line; a rewind's lines per file and its summary (done,
dry run, refused, stopped midway, nothing to do); a file's diff between two states.
Not covered here: the commands in real processes (tests/e2e/cli/test_cli_history.py)."""

from __future__ import annotations

import calendar

from dsh_fs.cli.history_text import DIFF_MAX_BYTES, diff_text, history_lines, rewind_lines
from dsh_fs.history.model import Before, Checkpoint, FileChange, Step
from dsh_fs.history.rewind import FileResult, RewindResult

T0 = calendar.timegm((2026, 12, 6, 9, 30, 0, 0, 0, 0))  # 2026-12-06T09:30:00Z


def change(path: str, *, op: str = "write", before: Before | None = None, after: str | None = "v",
           dest: str | None = None) -> FileChange:
    return FileChange(id=1, op=op, key=path, path=path, before=before or Before.blob("d", 1), after_version=after,
                      dest_key=dest, dest_path=dest)


def test_steps_are_numbered_lines_with_their_time_tool_and_files() -> None:
    steps = [Step(number=1, time=T0, tool="write", owner="o", changes=(change("/p/a", before=Before.absent()),)),
             Step(number=2, time=T0 + 61, tool="apply_patch", owner="o",
                  changes=(change("/p/b", op="delete"), change("/p/c", op="rename", dest="/p/d"), change("/p/e"))),
             Step(number=10, time=T0, tool="edit", owner="o", changes=(change("/p/a", after=None),)),
             Step(number=11, time=T0, tool="rewind", owner="o")]
    marks = (Checkpoint(id="c0", name="start", step=0, time=T0), Checkpoint(id="c2", name="mid", step=2, time=T0),
             Checkpoint(id="c2b", name="mid\nline", step=2, time=T0))
    assert history_lines("s", steps, checkpoints=marks) == [
        "    checkpoint start (c0)",
        " 1  2026-12-06T09:30:00Z  write  /p/a (created)",
        " 2  2026-12-06T09:31:01Z  apply_patch  /p/b (deleted), /p/c -> /p/d, /p/e",
        "    checkpoint mid (c2)",
        '    checkpoint "mid\\nline" (c2b)',
        "10  2026-12-06T09:30:00Z  edit  /p/a (may be incomplete)",
        "11  2026-12-06T09:30:00Z  rewind  (no change)",
    ]
    assert history_lines("s", []) == []
    assert history_lines("s", [], checkpoints=marks[:1]) == ["   checkpoint start (c0)"]


def test_the_dropped_steps_are_said_first() -> None:
    steps = [Step(number=4, time=T0, tool="edit", owner="o", changes=(change("/p/a"),))]
    marks = (Checkpoint(id="c3", name="kept", step=3, time=T0),)
    assert history_lines("s", steps, checkpoints=marks, dropped=3) == [
        "steps 1-3 of session s were dropped (oldest first) to keep its history under its byte cap; it goes back"
        " to step 3 at the earliest",
        "   checkpoint kept (c3)",
        "4  2026-12-06T09:30:00Z  edit  /p/a",
    ]


def result(*files: FileResult, dry_run: bool = False, refused: bool = False, steps: tuple[int, ...] = (2, 3),
           step: int | None = None, error: str | None = None) -> RewindResult:
    return RewindResult(to=1, steps=steps, files=files, dry_run=dry_run, refused=refused, step=step, error=error)


def test_a_rewind_says_what_it_did_per_file_then_how_to_redo() -> None:
    out, err = rewind_lines("s", result(
        FileResult(path="/p/a", action="restore", done=True), FileResult(path="/p/b", action="remove", done=True),
        FileResult(path="/p/c", action="move", moved_from="/p/d", done=True),
        FileResult(path="/p/e", action="reverse_edit", done=True, forced=True),
        FileResult(path="/p/f", action="unchanged"),
        FileResult(path="/p/g", action="skipped", reason="changed since this owner's last change"), step=4))
    assert err == []
    assert out == ["restored /p/a", "removed /p/b", "moved back /p/c (from /p/d)",
                   "reversed the edits of /p/e (forced: its later changes are replaced)", "unchanged /p/f",
                   "skipped /p/g: changed since this owner's last change",
                   "rewound session s to step 1 (steps 2-3 taken back); this rewind is step 4: rewind to step 3 to redo"]
    one, _ = rewind_lines("s", result(FileResult(path="/p/a", action="restore", done=True), steps=(2,), step=3))
    assert one[-1] == "rewound session s to step 1 (step 2 taken back); this rewind is step 3: rewind to step 2 to redo"
    nothing, _ = rewind_lines("s", result(FileResult(path="/p/a", action="unchanged"), steps=(), step=None))
    assert nothing == ["unchanged /p/a", "session s is already as at step 1: nothing to write"]


def test_a_dry_run_shows_each_diff_and_writes_nothing() -> None:
    out, err = rewind_lines("s", result(FileResult(path="/p/a", action="restore", diff="--- a\n+++ a\n-x\n+y\n"),
                                        FileResult(path="/p/b", action="skipped", reason="why"), dry_run=True))
    assert err == [] and out == ["would restore /p/a", "--- a", "+++ a", "-x", "+y", "would skip /p/b: why",
                                 "dry run: rewinding session s to step 1 would take back steps 2-3; nothing was written"]
    none, _ = rewind_lines("s", result(dry_run=True, steps=()))
    assert none == ["dry run: rewinding session s to step 1 would take back no step; nothing was written"]


def test_a_refused_rewind_names_the_files_on_stderr_and_what_it_would_have_done() -> None:
    out, err = rewind_lines("s", result(FileResult(path="/p/a", action="remove"),
                                        FileResult(path="/p/b", action="refused", reason="deleted since x"),
                                        refused=True))
    assert out == ["would remove /p/a"]
    assert err == ["refused /p/b: deleted since x",
                   "dsh-fs: rewind of session s to step 1 refused, nothing written: the files above changed since this"
                   " session's last change to them (or their content was not kept); leave them out with"
                   " --skip-changed (or --skip FILE), or overwrite one with --force FILE"]


def test_a_rewind_stopped_midway_says_to_run_it_again() -> None:
    out, err = rewind_lines("s", result(FileResult(path="/p/a", action="restore", done=True),
                                        FileResult(path="/p/b", action="remove"), error="disk full", step=4))
    assert out == ["restored /p/a", "removed /p/b (not written)"]
    assert err == ["dsh-fs: the rewind stopped: disk full; the files marked (not written) are as they were: run the"
                   " same rewind again to complete it"]


def test_a_diff_between_two_states() -> None:
    assert diff_text("/p/a", b"x\n", b"x\n", then_label="after step 1") == ""
    assert diff_text("/p/a", b"one\ntwo\n", b"one\n2", then_label="after step 1") == (
        "--- /p/a (after step 1)\n+++ /p/a (now)\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n\\ No newline at end of file\n")
    assert diff_text("/p/n", None, b"new\n", then_label="t").startswith("--- /dev/null\n+++ /p/n (now)\n")
    assert diff_text("/p/g", b"gone\n", None, then_label="t", now_label="n").startswith("--- /p/g (t)\n+++ /dev/null\n")
    assert diff_text("/p/b", b"\0bin", b"text", then_label="t") == "Binary file /p/b differs\n"
    assert diff_text("/p/b", b"t\n", b"\0", then_label="t") == "Binary file /p/b differs\n"
    assert diff_text("/p/c", b"text", b"x" * 8192 + b"\0", then_label="t").startswith("--- /p/c (t)\n")  # past 8 KiB


def test_a_long_diff_is_cut_and_says_so() -> None:
    assert DIFF_MAX_BYTES == 64 * 1024  # docs/HISTORY.md: a diff is cut after 64 KiB
    big = b"".join(b"line %d\n" % n for n in range(20_000))
    text = diff_text("/p/a", None, big, then_label="t")
    assert len(text.encode()) <= DIFF_MAX_BYTES + 40 and text.endswith(f"\n[diff cut at {DIFF_MAX_BYTES} bytes]\n")
    assert text.count("\n") > 1000
