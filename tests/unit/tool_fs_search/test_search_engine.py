"""``tool_fs_search.engine``: one ripgrep run (REFERENCE-SPEC §6.3 shared execution), driven
here by small ``/bin/sh`` programs in ripgrep's place: lines streamed as they arrive, the raw
output cap (stop or drain), the stderr tail, ripgrep's debug lines (DEVIATIONS S13), exit
status and signal, and no process outliving its call."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from dsh_fs.tool_fs_search import engine
from dsh_fs.tool_fs_search.engine import Run, find_ripgrep, run_ripgrep
from searchkit import gone

pytestmark = pytest.mark.anyio

SH = "/bin/sh"


async def _run(script: str, *, cap: int = 1 << 20, **kw: Any) -> tuple[Run, list[bytes]]:
    lines: list[bytes] = []
    run = await run_ripgrep(SH, ["-c", script], cwd="/", on_line=lines.append, raw_cap=cap, **kw)
    return run, lines


def test_the_wheel_s_ripgrep_is_found_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wheel = engine._wheel_ripgrep()
    assert wheel is not None and os.path.basename(wheel) == "rg" and os.access(wheel, os.X_OK)
    assert wheel == os.path.realpath(wheel)
    other = tmp_path / "rg"
    other.write_text("#!/bin/sh\n")
    other.chmod(stat.S_IRWXU)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert find_ripgrep() == wheel  # the wheel's, even with another rg on PATH
    monkeypatch.setattr(engine, "_wheel_ripgrep", lambda: None)
    assert find_ripgrep() == str(other)
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    assert find_ripgrep() is None


def test_a_run_s_defaults_and_slots() -> None:
    assert Run() == Run(exit_code=None, signal_name=None, stderr="", stderr_truncated=False, raw_bytes=0,
                        stopped=False, drained=False)
    with pytest.raises((AttributeError, TypeError)):
        Run().other = 1  # type: ignore[attr-defined]


async def test_lines_stream_in_order_and_a_last_line_without_its_break_is_delivered() -> None:
    run, lines = await _run("printf 'a\\nbb\\n'; sleep 0.2; printf 'c'; exit 3")
    assert lines == [b"a", b"bb", b"c"]
    assert (run.exit_code, run.signal_name, run.raw_bytes, run.stopped, run.drained) == (3, None, 6, False, False)
    run, lines = await _run("printf 'a\\0b\\nc\\0'", separator=b"\0")
    assert (lines, run.exit_code) == ([b"a", b"b\nc"], 0)


async def test_the_program_runs_in_its_own_session_in_cwd_with_no_stdin(tmp_path: Path) -> None:
    lines: list[bytes] = []
    script = "import os, sys; print(os.getsid(0) == os.getpid(), os.getcwd(), repr(sys.stdin.read()))"
    await run_ripgrep(sys.executable, ["-c", script], cwd=str(tmp_path), on_line=lines.append, raw_cap=1000)
    assert lines == [f"True {os.path.realpath(tmp_path)} ''".encode()]


async def test_a_signal_ending_the_program_is_named() -> None:
    run, _ = await _run("kill -KILL $$")
    assert (run.exit_code, run.signal_name) == (None, "SIGKILL")


async def test_the_exit_status_is_waited_for_after_stdout_closes() -> None:
    run, _ = await _run("exec >&- 2>&-; sleep 0.3; exit 4")
    assert (run.exit_code, run.signal_name) == (4, None)


async def test_past_the_cap_the_run_stops_and_its_process_group_is_killed(tmp_path: Path) -> None:
    child = tmp_path / "child"
    run, lines = await _run(f"sleep 600 & echo $! > {child}; printf 'aaaa\\nbbbb\\ncccc\\n'; wait", cap=12)
    assert gone(int(child.read_text()), within=60)  # the sleeping child was killed too (it sleeps 10 minutes)
    assert lines == [b"aaaa", b"bbbb"]  # "cc", being read at the cap, is not delivered
    assert (run.stopped, run.drained, run.signal_name, run.exit_code, run.raw_bytes) == (True, False, "SIGKILL",
                                                                                          None, 15)


async def test_output_of_exactly_the_cap_is_not_stopped() -> None:
    run, lines = await _run("printf 'aaaa\\nbbbb\\n'", cap=10)
    assert (lines, run.stopped, run.exit_code) == ([b"aaaa", b"bbbb"], False, 0)


async def test_the_cap_counts_every_chunk() -> None:
    run, lines = await _run("printf 'aaaa\\n'; sleep 0.3; printf 'bbbb\\ncccc\\n'; sleep 5", cap=10)
    assert (lines, run.stopped, run.raw_bytes) == ([b"aaaa", b"bbbb"], True, 15)
    run, lines = await _run("printf 'aaaa'; sleep 0.3; printf '\\nbbbb\\n'; sleep 5", cap=4)
    assert (lines, run.stopped) == ([], True)  # the break past the cap never ends "aaaa"


async def test_drained_past_the_cap_the_exit_status_is_the_program_s() -> None:
    asked: list[int] = []

    def drain() -> bool:
        asked.append(1)
        return True

    run, lines = await _run("printf 'aaaa\\nbbbb\\ncccc\\n'; sleep 0.3; printf 'dddd\\n'; exit 2", cap=10,
                            drain_past_cap=drain)
    assert lines == [b"aaaa", b"bbbb"] and asked == [1]
    assert (run.stopped, run.drained, run.exit_code, run.signal_name, run.raw_bytes) == (True, True, 2, None, 20)


async def test_a_consumer_error_kills_the_program_and_is_raised(tmp_path: Path) -> None:
    def refuse(line: bytes) -> None:
        raise ValueError(line)

    child = tmp_path / "child"
    with pytest.raises(ValueError, match="first"):
        await run_ripgrep(SH, ["-c", f"sleep 600 & echo $! > {child}; printf 'first\\n'; wait"], cwd="/",
                          on_line=refuse, raw_cap=100)
    assert gone(int(child.read_text()), within=60)  # killed, not waited for (it sleeps 10 minutes)


async def test_a_cancelled_run_kills_and_reaps_its_program(tmp_path: Path) -> None:
    pid_file, child = tmp_path / "pid", tmp_path / "child"
    async with anyio.create_task_group() as tg:
        tg.start_soon(_run, f"echo $$ > {pid_file}; sleep 600 & echo $! > {child}; wait")
        while not (child.exists() and child.read_text().endswith("\n")):  # cancelled once both are running
            await anyio.sleep(0.01)
        tg.cancel_scope.cancel()
    with pytest.raises(ProcessLookupError):  # gone, not even a zombie
        os.kill(int(pid_file.read_text()), 0)
    assert gone(int(child.read_text()), within=60)


async def test_stderr_keeps_its_last_64000_bytes() -> None:
    run, _ = await _run("head -c 64000 /dev/zero | tr '\\0' x >&2")
    assert (run.stderr, run.stderr_truncated) == ("x" * 64000, False)
    run, _ = await _run("head -c 70000 /dev/zero | tr '\\0' x >&2; printf 'END' >&2")
    assert (len(run.stderr), run.stderr.endswith("xEND"), run.stderr_truncated) == (64000, True, True)
    run, _ = await _run("printf 'bad \\377\\n' >&2")
    assert run.stderr == "bad \ufffd\n"


async def test_debug_lines_go_to_on_debug_and_not_to_stderr() -> None:
    debug: list[str] = []
    script = "printf 'rg: DEBUG|one\\nrg: real\\n' >&2; sleep 0.2; printf 'rg: DEBUG|t' >&2; sleep 0.2; " \
             "printf 'wo\\nlast' >&2"
    run, _ = await _run(script, on_debug=debug.append)
    assert debug == ["rg: DEBUG|one", "rg: DEBUG|two"]
    assert run.stderr == "rg: real\nlast"  # a last line without its break is kept
    debug.clear()
    run, _ = await _run("printf 'rg: real\\nrg: DEBUG|unended' >&2", on_debug=debug.append)
    assert (run.stderr, debug) == ("rg: real\n", [])
    run, _ = await _run("printf 'rg: DEBUG|x\\n' >&2")  # without on_debug: kept as any stderr
    assert run.stderr == "rg: DEBUG|x\n"


async def test_an_endless_stderr_line_is_bounded() -> None:
    debug: list[str] = []
    run, _ = await _run("head -c 70000 /dev/zero | tr '\\0' y >&2; printf 'Z\\n' >&2", on_debug=debug.append)
    assert (len(run.stderr), run.stderr.endswith("yZ\n"), run.stderr_truncated, debug) == (64000, True, True, [])
    run, _ = await _run("printf 'rg: DEBUG|' >&2; head -c 70000 /dev/zero | tr '\\0' y >&2; printf 'Z\\nok\\n' >&2",
                        on_debug=debug.append)
    # an over-long debug line is never kept as stderr (read whole, it is a debug line; cut, its head
    # is dropped and what follows is plain stderr)
    assert run.stderr.endswith("ok\n") and "DEBUG" not in run.stderr and len(run.stderr) < 70000
    assert all(line.startswith("rg: DEBUG|y") for line in debug)


async def test_a_debug_line_split_across_reads_is_still_a_debug_line() -> None:
    debug: list[str] = []
    run, _ = await _run("printf 'rg: DEB' >&2; sleep 0.3; printf 'UG|x\\nrg: err\\n' >&2", on_debug=debug.append)
    assert (run.stderr, debug) == ("rg: err\n", ["rg: DEBUG|x"])


async def test_a_debug_line_of_exactly_the_kept_size_is_still_a_debug_line() -> None:
    debug: list[str] = []
    run, _ = await _run("printf 'rg: DEBUG|' >&2; head -c 63990 /dev/zero | tr '\\0' y >&2; sleep 0.3; printf '\\n' >&2",
                        on_debug=debug.append)
    assert (run.stderr, len(debug), len(debug[0])) == ("", 1, 64000)


@pytest.mark.parametrize("prefix", ["", "rg: DEBUG|"])
async def test_memory_stays_bounded_by_an_endless_stderr_line(prefix: str) -> None:
    import tracemalloc

    tracemalloc.start()
    try:
        run, _ = await _run(f"printf '{prefix}' >&2; head -c 8000000 /dev/zero | tr '\\0' y >&2",
                            on_debug=lambda line: None)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 3_000_000, peak
    assert run.stderr == "y" * 64000 and run.stderr_truncated


def test_only_an_executable_file_named_rg_of_the_wheel_counts(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    class Dist:
        files = [Path("ripgrep-14.1.0.dist-info/METADATA"), Path("bin/rg")]

        @staticmethod
        def locate_file(file: Path) -> Path:
            return tmp_path / file

    (tmp_path / "ripgrep-14.1.0.dist-info").mkdir()
    (tmp_path / "ripgrep-14.1.0.dist-info" / "METADATA").write_text("")
    (tmp_path / "ripgrep-14.1.0.dist-info" / "METADATA").chmod(stat.S_IRWXU)  # executable, not named rg
    (tmp_path / "bin").mkdir()
    rg = tmp_path / "bin" / "rg"
    rg.write_text("#!/bin/sh\n")
    monkeypatch.setattr(engine.importlib.metadata, "distribution", lambda name: Dist())
    engine._wheel_ripgrep.cache_clear()
    try:
        assert engine._wheel_ripgrep() is None  # named rg, but not executable
        engine._wheel_ripgrep.cache_clear()
        rg.chmod(stat.S_IRWXU)
        assert engine._wheel_ripgrep() == str(rg)
        engine._wheel_ripgrep.cache_clear()
        rg.unlink()
        rg.mkdir(mode=0o700)  # a directory named rg is no program
        assert engine._wheel_ripgrep() is None
    finally:
        engine._wheel_ripgrep.cache_clear()


async def test_on_lines_gets_each_read_s_complete_lines_at_once() -> None:
    batches: list[list[bytes]] = []
    run = await run_ripgrep(SH, ["-c", "printf 'a\\n\\nb\\nc'; sleep 0.3; printf 'd\\ne\\n'"], cwd="/",
                            on_lines=batches.append, raw_cap=1000)
    assert batches == [[b"a", b"", b"b"], [b"cd", b"e"]] and run.exit_code == 0
    batches.clear()
    await run_ripgrep(SH, ["-c", "printf 'x\\n'; sleep 0.3; printf 'tail'"], cwd="/", on_lines=batches.append,
                      raw_cap=1000)
    assert batches == [[b"x"], [b"tail"]]  # never an empty list; the unended last line alone


async def test_exactly_one_of_on_line_and_on_lines() -> None:
    with pytest.raises(TypeError, match="exactly one of on_line and on_lines"):
        await run_ripgrep(SH, ["-c", "true"], cwd="/", raw_cap=10)
    with pytest.raises(TypeError, match="exactly one of on_line and on_lines"):
        await run_ripgrep(SH, ["-c", "true"], cwd="/", raw_cap=10, on_line=print, on_lines=print)
