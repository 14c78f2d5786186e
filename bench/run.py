#!/usr/bin/env python3
"""dsh-fs benchmark (tracker issue 5): our time and peak memory next to a baseline, side by side.

usage::

    python bench/run.py                 # full run: 1 GiB log, 100 MB edit (a few minutes)
    python bench/run.py --quick         # smoke run: 64 MiB log, 40 MB edit
    python bench/run.py --big-gib 2 --edit-mb 200 --tmp /mnt/scratch --no-write

It builds its own inputs in a fresh temporary directory (``--tmp`` picks where; removed at
the end), runs every workload, prints one table and writes it with the machine description
to ``bench/RESULTS.md`` (``--results PATH``; ``--no-write`` to skip).

Workloads (ours → baseline):

* small-file ``read`` / ``edit`` through the registry (``ctx.tools.execute``) → the raw stdlib
  calls the same result needs: stat + read + decode + render the same text (asserted equal);
  read + replace + write a temp file + fsync + rename + fsync the directory (the durable
  atomic replace an edit needs, DEVIATIONS A3). Interleaved batches; the best batch mean of
  each side is reported (the usual way to take noise out of microbenchmarks).
* the last 100 lines of a 1 GiB log, first read on a fresh provider → ``wc -l`` on the file;
  then a second read of another window (line index) → ``wc -l`` again; and paging 20 windows
  spread over the whole file on another fresh provider → one scan: that first read plus 19
  second reads (a ratio near 1 means paging costs about one scan, not one per page).
* an edit near the end of a 100 MB file → copying that file (``shutil.copyfile`` + fsync of
  the copy: the durable copy an edit must at least make); medians of 3. The same for a
  many-match edit (``replace_all`` of a date on every line), and, for information, the
  worst case of a streamed ``replace_all`` (a match every 4 bytes, the output twice the input).
* MCP round trip per ``read`` call (``dsh-fs mcp`` over stdio, driven by a bare JSON-lines
  client: the server's share) → its floor: the same client against an echo server writing the
  same answer line over the same pipes, plus the same call in process as a process woken by
  each request runs it (``bench/mcp_floor.py``; target ≤ 2×); the server process's own CPU per
  round trip → the same call's CPU in process (target ≤ 2×); medians of 3 passes
  (``bench/mcp_bench.py``); skipped with a note when the command is not available. Info rows:
  the bare round trip → the same call in process (a hot loop); the same round trip driven by
  the MCP SDK's ``ClientSession`` (its own work is not the server's), and by the bare client
  with every line sent to the SDK (``DSH_FS_MCP_SDK_ONLY=1``); the echo floor alone.
* ``bench/startup_bench.py`` rows (DEVIATIONS M2): ``dsh-fs mcp`` spawn → its ``initialize``
  answer over stdio (target ≤ 0.35 s) → ``python -c pass`` in the same run; per-call clients'
  first ``tools/call`` (with and without declaring ``roots``), the first ``ping`` (info); the
  Node MCP filesystem server's start-up when npx installs it, in the same run.
  ``--only-mcp`` measures the MCP stdio rows alone. ``--mcp-before PYTHON`` (the interpreter
  of a checkout of the code before the MCP redesign, with its own venv) measures that
  checkout's server in the same passes and spawns, and writes both side by side in the
  section "MCP stdio: this code and the code before the redesign" (``mcp_bench.comparison``);
  a run without it keeps that section from the results file it replaces.
* ``bench/http_agents_bench.py`` row: 64 agents (tokens / MCP sessions) on one ``dsh-fs mcp
  --http`` server on loopback, each looping ``read`` → ``edit`` on its own file and on one shared
  file for 60 s (``--quick``: 10 s; ``--agents-seconds``) → the same loop in process: calls/s,
  p50/p99 per call; checked: 0 lost edits, every loser ``FS_STALE_VERSION``.
* ``bench/s3_bench.py`` rows (S3 provider over a loopback moto server), when the file exists.
* ``bench/faces_bench.py`` rows (issue 11): an ``apply_patch`` of 20 files / 200 hunks on a
  10k-line tree → ``git apply`` of the same changes followed by the same fsyncs (target; info:
  bare ``git apply``, and the fsyncs side by side); a text
  editor ``str_replace`` call → the ``edit`` call making the same change.
* ``bench/frameworks_bench.py`` rows: one LangChain tool call (``ainvoke``, ``invoke``) → the
  same ``read`` registry call in process (info: the adapter's overhead).
* ``bench/formats_bench.py`` rows: ``read_pdf`` of page 50 of a 200-page PDF, a notebook's cell
  view in tokens next to its raw JSON, an edit of a 10 MB Shift-JIS file next to the same edit
  in UTF-8 (docs/PDF.md, docs/NOTEBOOKS.md, docs/ENCODINGS.md).
* ``bench/images_bench.py`` rows: a 2 MB PNG through ``read_image`` in process and over MCP
  stdio → a raw read of its bytes (time and peak memory).
* ``bench/search_bench.py`` rows: ``glob``/``grep`` over a generated tree of 100k files / 1 GiB
  (``--quick``: 10k files / 100 MiB) → plain ``rg`` with the same flags; a ``grep`` matching
  every line (peak memory); ``glob``/``grep`` over 10k objects on moto (``--quick``: 1k) → a
  bare ListObjectsV2 walk of the same prefix. Symlink following is on (DEVIATIONS S8) in the
  tool and in the baseline's flags.
* ``bench/list_bench.py`` row: ``list`` of one directory of 100k entries (``--quick``: 10k) →
  ``os.scandir`` + sort of the same directory: time and peak memory.
* ``bench/history_bench.py`` rows (docs/HISTORY.md): a small ``edit``/``write`` with the history
  on → off, local (memory, SQLite) and S3 (with the extra requests per mutation), an edit near
  the end of the 100 MB file on → off, ``rewind`` of 100 steps over 20 files → ``git checkout``.
* ``bench/stale_bench.py`` row (DEVIATIONS D30): the tokens an agent pays to recover from a
  stale ``edit`` refusal when two agents race on a 2,000-line file: the refusal's diff and the
  retry → the refusal, a full re-read (page by page) and the retry.
* ``bench/channel_bench.py`` rows (providers over a command channel, docs/CHANNELS.md): round
  trips per tool call; a small ``read``/``edit`` through the subprocess channel, SSH, podman and
  an exec channel → that channel's echo round trip; the last 100 lines of a 1 GiB far file
  (``--quick``: 64 MiB): bytes moved → the window's size; ``grep`` over 20k far files
  (``--quick``: 2k) → ``rg`` run over the same channel.

Every big-file workload runs in its own child process, so its peak memory is honest: the
growth of the child's peak RSS (``ru_maxrss``) over the workload. ``wc -l`` reports its own
peak RSS. Files are written, then left alone for the version "racy window" (3 s, DEVIATIONS
A5) so versions are plain stat tokens, and read once so timings are from the page cache.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)  # the row families' modules (workloads.py, mcp_bench.py, *_bench.py)

import mcp_bench  # noqa: E402
from workloads import MiB, child, settle, write_log  # noqa: E402

Row = dict[str, Any]


# -- helpers ---------------------------------------------------------------------------------------

def fmt_time(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds:.2f} s"


def fmt_mem(mib: float | None) -> str:
    return "—" if mib is None else f"{mib:.1f} MiB"



def bench_s3(quick: bool) -> dict[str, Any] | str:
    script = os.path.join(HERE, "s3_bench.py")
    if not os.path.exists(script):
        return "bench/s3_bench.py is not there"
    proc = subprocess.run([sys.executable, script, "--json", "--iterations", "10" if quick else "50"],
                          capture_output=True, text=True, cwd=ROOT)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        return f"bench/s3_bench.py failed: {tail[0]}"
    return json.loads(proc.stdout)



# -- machine ------------------------------------------------------------------------------------------

def describe_machine(work: str) -> dict[str, str]:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    memory = "?"
    try:
        with open("/proc/meminfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("MemTotal:"):
                    memory = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    except OSError:
        pass
    filesystem = "?"
    proc = subprocess.run(["findmnt", "-T", work, "-n", "-o", "TARGET,FSTYPE,SOURCE,OPTIONS"], capture_output=True,
                          text=True)
    if proc.returncode == 0 and proc.stdout.strip():
        target, fstype, source, options = (proc.stdout.split() + ["", "", "", ""])[:4]
        filesystem = f"{fstype} on {source} (mounted at {target}; {options})"
        device = os.path.basename(source)
        rotational = f"/sys/block/{device}/queue/rotational"
        if os.path.exists(rotational):
            with open(rotational, encoding="ascii") as handle:
                filesystem += "; the kernel reports it rotational" if handle.read().strip() == "1" else "; non-rotational"
    free = shutil.disk_usage(work)
    try:
        load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        load = "?"
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT)
    return {
        "CPU": cpu,
        "cores": str(os.cpu_count()),
        "memory": memory,
        "temp dir": f"{work} — {filesystem}; {free.free / 2**30:.0f} GiB free",
        "Python": f"{platform.python_implementation()} {platform.python_version()} ({sys.executable})",
        "OS": platform.platform(),
        "load average at start": load,
        "dsh-fs": f"commit {commit.stdout.strip() or '?'} (working tree, uncommitted changes included)",
    }



# -- targets ----------------------------------------------------------------------------------------

READ_TARGETS = {"small-file read call": 2.0, "tiny-file read call": 4.0}
"""the speed issue's targets: a read call against stat + read + decode + render of the same file"""
EDIT_TARGET = 1.5
"""a small edit call against read + replace + write tmp + fsync + rename + fsync dir"""
S3_ROUND_TRIP_TARGETS = {"read": 1, "edit": 2, "write": 2, "apply_patch": 2, "read_image": 1}
"""S3 requests per call: a read of a file under the stream threshold is one GetObject; an edit's
floor (and a write's over an observed file) is its GetObject and its conditional PutObject; an
``apply_patch`` updating one small read file, an edit's; a small image's read, a read's"""


def _s3_target(tool: str, round_trips: int) -> dict[str, Any]:
    """The target and met columns of an S3 row (requests per call; ``(info)`` for other tools)."""
    want = S3_ROUND_TRIP_TARGETS.get(tool)
    if want is None:
        return {"target": "(info)", "met": None}
    return {"target": f"{want} round trip{'s' if want > 1 else ''}", "met": round_trips <= want}



# -- row families -------------------------------------------------------------------------------------

@dataclass
class Run:
    """One invocation as the row builders see it: the options, the work directory (removed at the
    end), the small files several families use (written and settled before the first), and the
    rows and notes gathered so far, in table order."""

    args: argparse.Namespace
    work: str
    small: str
    """a 200-line Python file (~11 KiB)"""
    tiny: str
    """its first ~1 KiB"""
    edit_ours: str
    edit_raw: str
    """two copies of ``small``, one edited by the tool, one by the baseline"""
    command: str = "python bench/run.py"
    """how this run was started (for the sections' provenance)"""
    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    sections: dict[str, str] = field(default_factory=dict)
    """sections of their own after the table, by heading (``## …``), each a markdown block"""

    @property
    def quick(self) -> bool:
        return bool(self.args.quick)

    def say(self, text: str) -> None:
        """Progress, on stderr."""
        print(text, file=sys.stderr, flush=True)


def prepare(args: argparse.Namespace, work: str, command: str) -> Run:
    """Write and settle the small files; the ``Run`` the builders share."""
    folder = os.path.join(work, "small")
    os.makedirs(folder)
    source = "".join(f"    value_{i} = compute(alpha, beta, gamma)  # step {i}\n" for i in range(200))
    run = Run(args, work, small=os.path.join(folder, "module.py"), tiny=os.path.join(folder, "tiny.py"),
              edit_ours=os.path.join(folder, "edit_ours.py"), edit_raw=os.path.join(folder, "edit_raw.py"),
              command=command)
    for path, text in ((run.small, source), (run.tiny, source[: source.index("\n", 1000) + 1]),
                       (run.edit_ours, source), (run.edit_raw, source)):
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    settle(run.small, run.tiny, run.edit_ours, run.edit_raw)
    return run


def small_call_rows(run: Run) -> None:
    """Small-file ``read`` (a 200-line and a 1 KiB file) and ``edit`` calls against the stdlib calls."""
    batches, calls = (5, 200) if run.quick else (15, 1000)
    run.notes.append("Tiny file: a read call has about 50 µs of fixed work the bare read does not (argument checks, "
                     "path resolution to a real path, the version token, the policy's observation, the result "
                     "objects); it shows against a 1 KiB file and fades as files grow.")
    for label, path in (("small-file read call", run.small), ("tiny-file read call", run.tiny)):
        run.say(f"{label} …")
        r = child("small_read", path=path, batches=batches, calls=calls)
        run.rows.append({"workload": f"{label} ({r['bytes'] // 1024 or r['bytes']} {'KiB' if r['bytes'] >= 1024 else 'B'}, "
                                     f"{r['lines']} lines)",
                         "ours": r["ours"], "ours_mem": r["ours_mem"],
                         "baseline": "stat + read + decode + render (same text)", "base": r["base"], "base_mem": None,
                         "ratio": r["ours"] / r["base"], "target": f"≤ {READ_TARGETS[label]:g}×",
                         "met": r["ours"] / r["base"] <= READ_TARGETS[label]})
    run.say("small-file edit call …")
    r = child("small_edit", ours_path=run.edit_ours, raw_path=run.edit_raw, batches=3 if run.quick else 8, calls=10 if run.quick else 25)
    run.notes.append("Small edit: besides the write + fsync + rename + directory fsync of the baseline, an edit "
                     "call resolves the path, takes the cross-process lock, checks the version guard (a content "
                     "digest while the file is freshly written, A5), matches the literal and computes the hunk "
                     "diff for the UI: about 0.3 ms of fixed work, so the ratio depends on how long this disk "
                     "takes to fsync. It runs on the event-loop thread (a small mutation on a fast disk).")
    run.rows.append({"workload": f"small-file edit call ({r['bytes'] // 1024} KiB)", "ours": r["ours"],
                     "ours_mem": r["ours_mem"],
                     "baseline": "read + replace + write tmp + fsync + rename + fsync dir", "base": r["base"],
                     "base_mem": None, "ratio": r["ours"] / r["base"], "target": f"≤ {EDIT_TARGET:g}×",
                     "met": r["ours"] / r["base"] <= EDIT_TARGET})


def big_log_rows(run: Run) -> None:
    """The tail, a second window and 20 pages of a big log against ``wc -l`` and one scan."""
    size = int((64 * MiB) if run.quick and run.args.big_gib is None else (run.args.big_gib or 1) * 1024 * MiB)
    log = os.path.join(run.work, "big", "app.log")
    os.makedirs(os.path.dirname(log))
    run.say(f"writing a {size / MiB:.0f} MiB log …")
    lines = write_log(log, size)
    settle(log)
    wc = [child("wc", path=log) for _ in range(3)]
    assert all(w["lines"] == lines for w in wc)
    wc_time = statistics.median(w["time"] for w in wc)
    wc_mem = max((w["mem"] for w in wc if w["mem"] is not None), default=None)
    label = f"{os.path.getsize(log) / 2**30:.2f} GiB" if size >= 1024 * MiB else f"{os.path.getsize(log) / MiB:.0f} MiB"
    run.say("tail read …")
    tails = [child("tail", path=log, lines=lines) for _ in range(3)]
    first = statistics.median(t["first"] for t in tails)
    first_mem = max(t["first_mem"] for t in tails)
    run.rows.append({"workload": f"last 100 lines of a {label} log, first read", "ours": first, "ours_mem": first_mem,
                     "baseline": "`wc -l` on it", "base": wc_time, "base_mem": wc_mem, "ratio": first / wc_time,
                     "target": "≤ 5×, ≤ 64 MiB", "met": first / wc_time <= 5 and first_mem <= 64})
    second = statistics.median(t["second"] for t in tails)
    run.rows.append({"workload": "second read, another window of the same file", "ours": second,
                     "ours_mem": max(t["second_mem"] for t in tails), "baseline": "`wc -l` on it", "base": wc_time,
                     "base_mem": wc_mem, "ratio": second / wc_time, "target": "≤ 20 ms", "met": second <= 0.020})
    run.say("paging …")
    pages = [child("paging", path=log, lines=lines, pages=20) for _ in range(3)]
    paging = statistics.median(p["total"] for p in pages)
    one_scan = first + 19 * second  # the first window pays the scan, the other 19 are indexed reads
    run.rows.append({"workload": f"paging 20 windows spread over the {label} log (fresh provider)", "ours": paging,
                     "ours_mem": max(p["mem"] for p in pages),
                     "baseline": "one scan: our first read + 19 second reads (above)", "base": one_scan,
                     "base_mem": first_mem, "ratio": paging / one_scan, "target": "≈ one scan (≤ 1.5×)",
                     "met": paging / one_scan <= 1.5})
    run.notes.append(f"Paging: slowest single page {fmt_time(max(p['max_page'] for p in pages))} (the first ones pay for "
                     f"the scan up to their offset; the index makes the later ones cheap).")
    os.unlink(log)


def big_edit_rows(run: Run) -> None:
    """Edits of a big file (near its end, every line, the dense worst case) against a durable copy."""
    edit_size = int((run.args.edit_mb or (40 if run.quick else 100)) * 1_000_000)
    big = os.path.join(run.work, "edit", "generated.txt")
    os.makedirs(os.path.dirname(big))
    run.say(f"writing a {edit_size / 1e6:.0f} MB file to edit …")
    edit_lines = write_log(big, edit_size)
    marker = "%09d 2024" % (edit_lines - 50)
    settle(big)
    edits, copies = [], []
    for i in range(3):
        old, new = (marker, marker.upper() + "!") if i % 2 == 0 else (marker.upper() + "!", marker)
        copies.append(child("copy", src=big, dst=big + ".copy"))
        settle(big)
        edits.append(child("edit_big", path=big, old=old, new=new))
        settle(big)
    edit_time = statistics.median(e["time"] for e in edits)
    edit_mem = max(e["mem"] for e in edits)
    copy_time = statistics.median(c["time"] for c in copies)
    run.rows.append({"workload": f"edit near the end of a {os.path.getsize(big) / 1e6:.0f} MB file", "ours": edit_time,
                     "ours_mem": edit_mem, "baseline": "copy it (`shutil.copyfile` + fsync)", "base": copy_time,
                     "base_mem": max(c["mem"] for c in copies), "ratio": edit_time / copy_time, "target": "≤ 3×, ≤ 64 MiB",
                     "met": edit_time / copy_time <= 3 and edit_mem <= 64})
    run.notes.append(f"Copy without the fsync: {fmt_time(statistics.median(c['plain'] for c in copies))} "
                     f"(edit / plain copy = {edit_time / statistics.median(c['plain'] for c in copies):.2f}×). "
                     "The edit reads the file twice (check + count, then write), fsyncs the new file and its "
                     "directory, and frees the old file's blocks when it is replaced; the copy baseline does "
                     "none of the last two.")

    # many matches: a streamed replace_all on every line (tracker issue 12, item 4: linear)
    run.say(f"many-match edits of the {edit_size / 1e6:.0f} MB file …")
    many, copies = [], []
    for i in range(3):
        old, new = ("2024-05-01", "2025-05-01") if i % 2 == 0 else ("2025-05-01", "2024-05-01")
        copies.append(child("copy", src=big, dst=big + ".copy"))
        settle(big)
        many.append(child("edit_big", path=big, old=old, new=new, replace_all=True))
        settle(big)
    many_time = statistics.median(e["time"] for e in many)
    copy_time = statistics.median(c["time"] for c in copies)
    run.rows.append({"workload": f"many-match streamed edit of {os.path.getsize(big) / 1e6:.0f} MB "
                                 f"(`replace_all`, {edit_lines:,} matches, one per line)", "ours": many_time,
                     "ours_mem": max(e["mem"] for e in many), "baseline": "copy it (`shutil.copyfile` + fsync)",
                     "base": copy_time, "base_mem": max(c["mem"] for c in copies), "ratio": many_time / copy_time,
                     "target": "≤ 3×", "met": many_time / copy_time <= 3})
    os.unlink(big)
    # the worst case of issue 12.4: every 4 bytes a match, and the file doubles (was ~200 s for 33 MiB)
    dense = os.path.join(run.work, "edit", "dense.txt")
    with open(dense, "wb") as handle:
        handle.write(b"aaaa" * (33 * MiB // 4))
    settle(dense)
    copy = child("copy", src=dense, dst=dense + ".copy")
    settle(dense)
    worst = child("edit_big", path=dense, old="aaaa", new="bbbbbbbb", replace_all=True)
    run.rows.append({"workload": "`aaaa` → `bbbbbbbb` in 33 MiB of `a` (`replace_all`, 8.7 M matches, the file doubles)",
                     "ours": worst["time"], "ours_mem": worst["mem"], "baseline": "copy it (`shutil.copyfile` + fsync)",
                     "base": copy["time"], "base_mem": copy["mem"], "ratio": worst["time"] / copy["time"],
                     "target": "(info)", "met": None})
    os.unlink(dense)


def mcp_stdio_rows(run: Run) -> None:
    """The MCP stdio round-trip and start-up rows (``bench/mcp_bench.py``, ``bench/startup_bench.py``);
    with ``--mcp-before PYTHON``, the same rows of that checkout measured in the same passes and
    spawns, side by side in their own section (``mcp_bench.comparison``)."""
    if run.args.skip_mcp:
        run.notes.append("MCP round trip: skipped (--skip-mcp).")
        return
    why = mcp_bench.mcp_available()
    if why is not None:
        run.notes.append(f"MCP round trip: skipped — {why}.")
        return
    import startup_bench

    before = run.args.mcp_before
    pythons = {"ours": sys.executable, **({"before": before} if before else {})}
    calls = 300 if run.quick else 2000
    run.say("MCP round trip" + (f" (and {before}'s) …" if before else " …"))
    passes = mcp_bench.measure(run.small, calls, pythons, runs=(1 if run.quick else 3) + (2 if before else 0))
    run.rows.extend(mcp_bench.mcp_rows(passes["ours"], run.notes))
    run.say("MCP stdio start-up (bench/startup_bench.py) …")
    spawns = startup_bench.measure(run.work, runs=5 if run.quick else 9, pythons=pythons)
    found, startup_notes = startup_bench.rows_from(spawns)
    run.rows.extend(found)
    run.notes.extend(startup_notes)
    run.say("MCP interpreter calls per round trip (counted) …")
    counts = {side: {"route": mcp_bench.count_calls(python, run.small, calls // 4, mcp_bench.OUR_ROUTE),
                     "sdk": mcp_bench.count_calls(python, run.small, calls // 4, mcp_bench.SDK_ONLY)}
              for side, python in pythons.items()}
    ours = counts["ours"]
    run.notes.append("MCP stdio, counted (not timed): interpreter calls per `read` round trip in the server, every "
                     f"thread (Python functions + builtins): {ours['route']['python_calls']:.0f} + "
                     f"{ours['route']['c_calls']:.0f} on our route, {ours['sdk']['python_calls']:.0f} + "
                     f"{ours['sdk']['c_calls']:.0f} with every line to the SDK (`mcp_bench.count_calls`).")
    if before:
        run.sections[mcp_bench.SECTION] = mcp_bench.comparison(passes, spawns, before=before, command=run.command,
                                                               calls=calls, counts=counts)


def http_agents_rows(run: Run) -> None:
    """64 agents on one MCP HTTP server (``bench/http_agents_bench.py``)."""
    if run.args.skip_mcp or run.args.skip_agents:
        run.notes.append("MCP HTTP agents: skipped (--skip-mcp / --skip-agents).")
    else:
        import http_agents_bench

        seconds = run.args.agents_seconds if run.args.agents_seconds is not None else (10.0 if run.quick else 60.0)
        run.say(f"MCP over HTTP, 64 agents, {seconds:g} s (bench/http_agents_bench.py) …")
        try:
            run.rows.extend(http_agents_bench.rows(run.work, agents=64, seconds=seconds))
            run.notes.append("MCP HTTP agents row: one `dsh-fs mcp --http` process on loopback, 64 tokens, one MCP "
                             "session per agent (the SDK's streamable HTTP client, all in this process's event loop); "
                             "latency of every read and edit call. 'lost'/'unreported' are checked on the files "
                             "afterwards; every refused edit must be a shared-file FS_STALE_VERSION.")
        except Exception as exc:  # the MCP SDK missing, the server not starting
            run.notes.append(f"MCP HTTP agents: skipped — {exc}.")


def s3_rows(run: Run) -> None:
    """The S3 provider's rows (``bench/s3_bench.py``)."""
    if run.args.skip_s3:
        run.notes.append("S3 rows: skipped (--skip-s3).")
    else:
        run.say("S3 (bench/s3_bench.py) …")
        s3 = bench_s3(run.quick)
        if isinstance(s3, str):
            run.notes.append(f"S3 rows: skipped — {s3}.")
        else:
            for tool, stats in s3["calls"].items():
                run.rows.append({"workload": f"S3 `{tool}` call ({s3['file_bytes'] // 1024} KiB, loopback moto), "
                                             f"{stats['round_trips']} round trips", "ours": stats["p50_ms"] / 1000,
                                 "ours_mem": None, "baseline": "—", "base": None, "base_mem": None, "ratio": None,
                                 **_s3_target(tool, stats["round_trips"])})
            run.notes.append("S3 rows come from bench/s3_bench.py (median latency per call; see that script).")


def faces_rows(run: Run) -> None:
    """``apply_patch`` and ``str_replace`` (``bench/faces_bench.py``)."""
    if run.args.skip_faces:
        run.notes.append("Editing-face rows: skipped (--skip-faces).")
    else:
        import faces_bench

        run.say("editing faces (apply_patch, str_replace) …")
        run.rows.extend(faces_bench.rows(run.work))
        run.notes.append("apply_patch: one registry call with the policy on (the files read before, untimed): parse, "
                         "check every file (resolve, stat, read, version), locate 200 hunks, then 20 atomic durable "
                         "writes (fsync of each file and directory, A3; the first alone, the rest side by side) with "
                         "the diff metadata computed meanwhile. `git apply` runs as a subprocess and does not fsync; "
                         "the third row is the durable floor (the same fsyncs side by side; bench/README.md).")


def framework_rows(run: Run) -> None:
    """A LangChain tool call (``bench/frameworks_bench.py``)."""
    if run.args.skip_frameworks:
        run.notes.append("Framework rows: skipped (--skip-frameworks).")
    else:
        import frameworks_bench

        run.say("framework adapters (LangChain tool call) …")
        found = frameworks_bench.rows(run.work, calls=100 if run.quick else 300)
        run.rows.extend(found)
        run.notes.append("LangChain rows: the overhead over the registry call is LangChain's per-call machinery "
                         "(callback manager, ToolMessage) and, for invoke, the hop to the toolkit's event loop thread."
                         if found else "Framework rows: skipped — langchain-core is not installed.")


def image_rows(run: Run) -> None:
    """``read_image`` in process and over MCP (``bench/images_bench.py``)."""
    if run.args.skip_images:
        run.notes.append("Image rows: skipped (--skip-images).")
    else:
        import images_bench

        run.say("read_image (2 MB PNG, in process and over MCP) …")
        try:
            run.rows.extend(images_bench.rows(run.work, calls=10 if run.quick else 20))
            run.notes.append("read_image rows: the call decodes the whole image (Pillow) to prove it complete and "
                             "base64-encodes it for the image block; over MCP the base64 rides one JSON-RPC line. "
                             "Peak memory: the in-process growth, and the MCP server's peak over a text-only server's.")
        except Exception as exc:  # Pillow or the MCP SDK missing
            run.notes.append(f"Image rows: skipped — {exc}.")


def format_rows(run: Run) -> None:
    """``read_pdf``, a notebook's view, a legacy-encoded edit (``bench/formats_bench.py``)."""
    if run.args.skip_formats:
        run.notes.append("Format rows: skipped (--skip-formats).")
    else:
        import formats_bench

        run.say("formats (read_pdf, notebook view, Shift-JIS edit) …")
        try:
            run.rows.extend(formats_bench.rows(run.work, calls=3 if run.quick else 10))
            run.notes.append("Format rows: read_pdf's time is mostly its worker process (start, PDFium's import) — the "
                             "price of parsing a PDF outside the server; the notebook row's ratio is tokens (cell view, "
                             "images as image content ÷ the raw JSON); the Shift-JIS edit decodes, proves and encodes the "
                             "whole file (docs/ENCODINGS.md).")
        except Exception as exc:  # pypdfium2, nbformat or Pillow missing
            run.notes.append(f"Format rows: skipped — {exc}.")


def search_rows(run: Run) -> None:
    """``glob``/``grep`` locally and on S3, ``list`` of a big directory (``bench/search_bench.py``, ``bench/list_bench.py``)."""
    if run.args.skip_search:
        run.notes.append("Search rows: skipped (--skip-search).")
    else:
        import search_bench

        files, total = (10_000, 100 * MiB) if run.quick else (100_000, 1024 * MiB)
        run.say(f"search: writing {files} files ({total // MiB} MiB) …")
        run.rows.extend(search_bench.local(os.path.join(run.work, "search"), files, total))
        run.notes.append("Search rows: medians of 5 interleaved runs, warm cache; the baseline is the same ripgrep "
                         "argument vector the tool runs (default profile: grep --sort=path, glob --sortr=modified), its "
                         "output read through a pipe. The every-line grep stops at rawOutputMaxBytes (DEVIATIONS S4).")
        if not run.args.skip_s3:
            run.say("search on S3 …")
            try:
                run.rows.extend(search_bench.s3(1_000 if run.quick else 10_000))
                run.notes.append("S3 search rows: the ListObjectsV2 walk is the floor for glob; grep reads every "
                                 "object, so its floor is that walk plus a GetObject of every object at the mirror's "
                                 "concurrency (moto's GET rate bounds both).")
            except Exception as exc:  # moto or aiobotocore missing
                run.notes.append(f"S3 search rows: skipped — {exc}.")
        import list_bench

        entries = 10_000 if run.quick else 100_000
        run.say(f"list: one directory of {entries} entries …")
        run.rows.extend(list_bench.rows(run.work, entries))
        run.notes.append("list row: median of 3 runs, warm cache; peak memory of one run in its own child. The local "
                         "provider resolves and stats every child (REFERENCE-SPEC §2.6) before the page is cut.")


def channel_rows(run: Run) -> None:
    """Providers over a command channel (``bench/channel_bench.py``)."""
    if run.args.skip_channels:
        run.notes.append("Channel rows: skipped (--skip-channels).")
    else:
        import channel_bench

        run.say("command channels (subprocess, SSH, podman, exec) …")
        try:
            found, said = channel_bench.rows(run.work, quick=run.quick)
            run.rows.extend(found)
            run.notes.extend(said)
        except Exception as exc:  # a far side that cannot start here
            run.notes.append(f"Channel rows: skipped — {exc}.")



def history_rows(run: Run) -> None:
    """History on vs off, and a rewind vs ``git checkout`` (``bench/history_bench.py``)."""
    if run.args.skip_history:
        run.notes.append("History rows: skipped (--skip-history).")
        return
    import history_bench

    run.say("history (on vs off, rewind) …")
    try:
        run.rows.extend(history_bench.rows(run.work, quick=run.quick))
    except Exception as exc:  # moto missing, git missing: said, not fatal
        run.notes.append(f"History rows: skipped — {exc}.")
        return
    run.notes.append("History rows (docs/HISTORY.md): a recorded mutation first reads the file's bytes and stores "
                     "them with a pending entry, then completes the entry after the mutation; in memory that is a "
                     "read and a hash, with SQLite two committed transactions, on S3 the before-state's read plus "
                     "three requests (the copy, the intent, the end). Over the 16 MiB copy cap an edit is kept as "
                     "its replacement (no copy). The rewind row writes 20 files atomically and durably (fsyncs); "
                     "git's checkout is followed by `sync` so both sides are durable.")


def stale_rows(run: Run) -> None:
    """Tokens to recover from a stale refusal, with the diff and with a re-read (``bench/stale_bench.py``)."""
    import stale_bench

    run.say("stale refusal (tokens to recover) …")
    run.rows.extend(stale_bench.rows(run.work))
    run.notes.append("Stale row (DEVIATIONS D30): tokens are UTF-8 bytes / 4 of every answer the losing agent gets "
                     "from its refused edit to its retry's success; the re-read follows read's pages.")


ROW_BUILDERS: tuple[Callable[[Run], None], ...] = (
    small_call_rows, big_log_rows, big_edit_rows, mcp_stdio_rows, http_agents_rows, s3_rows, faces_rows,
    framework_rows, image_rows, format_rows, search_rows, channel_rows, history_rows, stale_rows,
)
"""the row families in table order: each appends its rows and notes to the ``Run`` (or a note
saying why it was skipped); a new family is one function here"""


def run_all(args: argparse.Namespace, work: str, command: str = "python bench/run.py") -> Run:
    """Every row family (``--only-mcp``: the MCP stdio family alone); the ``Run`` with its rows,
    notes and sections."""
    run = prepare(args, work, command)
    for build in (mcp_stdio_rows,) if args.only_mcp else ROW_BUILDERS:
        build(run)
    return run


def sections_of(text: str) -> dict[str, str]:
    """The ``## `` sections of a results file by heading (each from its heading to the next)."""
    found: dict[str, str] = {}
    heading = None
    for line in text.splitlines(keepends=True):
        if line.startswith("## "):
            heading = line.rstrip("\n")
            found[heading] = ""
        if heading is not None:
            found[heading] += line
    return found


CARRIED = (mcp_bench.SECTION,)
"""sections a run that does not measure them keeps from the results file it replaces: each says
how, when and at which commits it was measured"""


def write_results(path: str, report: str, run: Run, *, partial: bool) -> None:
    """Write ``report`` (the table and notes) and ``run``'s sections to ``path``; a ``CARRIED``
    section this run did not measure is kept from the file it replaces. ``partial`` (an
    ``--only-mcp`` run into an existing file): only ``run``'s sections are replaced or added,
    the rest of the file is kept."""
    old = ""
    if os.path.exists(path):
        with open(path, encoding="utf-8") as handle:
            old = handle.read()
    kept = sections_of(old)
    if partial and old:
        text = old
        for heading, body in run.sections.items():
            text = text.replace(kept[heading].rstrip("\n"), body.rstrip("\n")) if heading in kept else text.rstrip("\n") + "\n\n" + body
    else:
        blocks = [report]
        blocks += [run.sections.get(heading) or kept[heading] for heading in CARRIED
                   if heading in run.sections or heading in kept]
        blocks += [body for heading, body in run.sections.items() if heading not in CARRIED]
        text = "\n".join(block.rstrip("\n") + "\n" for block in blocks)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)




def table(rows: list[Row]) -> str:
    head = "| workload | ours | ours peak mem | baseline | baseline time | baseline peak mem | ratio | target | met |"
    lines = [head, "|" + "---|" * 9]
    for r in rows:
        met = "—" if r["met"] is None else ("yes" if r["met"] else "**no**")
        base = "—" if r["base"] is None else fmt_time(r["base"])
        ratio = "—" if r["ratio"] is None else f"{r['ratio']:.2f}×"
        lines.append(
            f"| {r['workload']} | {fmt_time(r['ours'])} | {fmt_mem(r['ours_mem'])} | {r['baseline']} | {base} | "
            f"{fmt_mem(r['base_mem'])} | {ratio} | {r['target']} | {met} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="dsh-fs benchmark: our time and memory next to a baseline")
    parser.add_argument("--quick", action="store_true", help="small smoke run (64 MiB log, 40 MB edit, fewer calls)")
    parser.add_argument("--big-gib", type=float, default=None, help="size of the big log in GiB (default 1)")
    parser.add_argument("--edit-mb", type=float, default=None, help="size of the edited file in MB (default 100)")
    parser.add_argument("--tmp", default=None, help="where to build the inputs (default: the system temp dir)")
    parser.add_argument("--results", default=None,
                        help="where to write the results (default: bench/RESULTS.md; with --quick: nowhere)")
    parser.add_argument("--no-write", action="store_true", help="print only; do not write the results file")
    parser.add_argument("--skip-mcp", action="store_true")
    parser.add_argument("--only-mcp", action="store_true",
                        help="measure only the MCP stdio rows (round trip and start-up; prints only, unless --results "
                             "is given: then with --mcp-before only its section of that file is replaced)")
    parser.add_argument("--mcp-before", metavar="PYTHON", default=None,
                        help="also measure the MCP stdio rows of the checkout this interpreter imports dsh_fs from "
                             "(the code before the MCP redesign), in the same passes, side by side in their own section")
    parser.add_argument("--skip-s3", action="store_true")
    parser.add_argument("--skip-history", action="store_true", help="leave out the history rows")
    parser.add_argument("--skip-agents", action="store_true", help="leave out the 64-agent MCP HTTP row")
    parser.add_argument("--agents-seconds", type=float, default=None,
                        help="how long the 64 agents loop, each side (default 60; with --quick: 10)")
    parser.add_argument("--skip-search", action="store_true", help="leave out the glob/grep rows")
    parser.add_argument("--skip-faces", action="store_true", help="leave out the editing-face rows")
    parser.add_argument("--skip-frameworks", action="store_true", help="leave out the framework-adapter rows")
    parser.add_argument("--skip-images", action="store_true", help="leave out the read_image rows")
    parser.add_argument("--skip-formats", action="store_true",
                        help="leave out the read_pdf, notebook and legacy-encoding rows")
    parser.add_argument("--skip-channels", action="store_true",
                        help="leave out the command-channel rows (bench/channel_bench.py)")
    args = parser.parse_args(argv)
    if args.results is None and not args.quick and not args.only_mcp:
        args.results = os.path.join(HERE, "RESULTS.md")
    command = ("python bench/run.py " + " ".join(argv if argv is not None else sys.argv[1:])).strip()
    work = tempfile.mkdtemp(prefix="dsh-fs-bench-", dir=args.tmp)
    os.environ.setdefault("DSH_FS_LOCK_DIR", os.path.join(work, "locks"))  # leave nothing behind
    try:
        machine = describe_machine(work)
        started = time.time()
        run = run_all(args, work, command)
        took = time.time() - started
    finally:
        shutil.rmtree(work, ignore_errors=True)
    rows, notes = run.rows, run.notes
    text = table(rows)
    print(text)
    for note in notes:
        print("- " + note)
    for section in run.sections.values():
        print("\n" + section)
    if not args.no_write and args.results is not None:
        report = [
            "# dsh-fs benchmark results",
            "",
            f"Produced by `{command}` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(started))} "
            f"({took:.0f} s). Ratios are ours / baseline, measured side by side in the same invocation; "
            "see the docstring of `bench/run.py` for what each baseline is and how memory is measured.",
            "",
            "## Machine",
            "",
            *[f"- **{key}**: {value}" for key, value in machine.items()],
            "",
            "## Results",
            "",
            text,
            "",
            "## Notes",
            "",
            *[f"- {note}" for note in notes],
            "",
        ]
        write_results(args.results, "\n".join(report), run, partial=args.only_mcp and bool(run.sections))
        print(f"written to {args.results}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
