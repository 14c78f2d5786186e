"""MCP stdio start-up (DEVIATIONS M2): spawn → the ``initialize`` answer of ``dsh-fs mcp``.

    python bench/startup_bench.py [--runs N] [--json]

Rows (medians of ``--runs`` interleaved spawns, each a fresh process in an empty directory):

* ``dsh-fs mcp`` spawn → its ``initialize`` answer (target ≤ 0.35 s), as a ratio to ``python
  -c pass`` (spawn → exit) measured in the same run;
* for information, spawn → the first ``tools/list`` answer (the SDK is loaded by then: what a
  per-call client waits for before it can call a tool), and spawn → that answer → stdin closed
  → the process gone (a client that starts a server per tool call waits for its exit too);
* the Node MCP filesystem server (``@modelcontextprotocol/server-filesystem``, run with
  ``node`` from the npx cache, so npx's own start is not counted) spawn → its ``initialize``
  answer, when ``npx`` can install it (else a note).

The LangChain adapter row (one tool call vs the same registry call in process) is not here:
``langchain-mcp-adapters`` needs ``mcp<2`` and cannot share this environment.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

INITIALIZE = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}) + "\n"
LIST = '{"jsonrpc":"2.0","method":"notifications/initialized"}\n{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n'
TARGET = 0.35


def _spawn_to_answer(argv: list[str], cwd: str, *, then_list: bool = False) -> tuple[float, float | None, float]:
    """Seconds from spawn to the first answer line (and to the ``tools/list`` answer), and to
    the process's exit once its stdin is closed."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=cwd)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(INITIALIZE.encode())
    proc.stdin.flush()
    line = proc.stdout.readline()
    first = time.perf_counter() - start
    assert b'"id":1' in line.replace(b" ", b""), line
    listed = None
    if then_list:
        proc.stdin.write(LIST.encode())
        proc.stdin.flush()
        proc.stdout.readline()
        listed = time.perf_counter() - start
    proc.stdin.close()
    proc.wait(timeout=30)
    exited = time.perf_counter() - start
    proc.stdout.close()
    return first, listed, exited


def _python_pass() -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter() - start


def _node_filesystem_server() -> list[str] | None:
    """``node <server-filesystem>/dist/index.js``, installing it with npx once; ``None`` if not possible."""
    if shutil.which("npx") is None or shutil.which("node") is None:
        return None
    try:
        subprocess.run(["npx", "-y", "@modelcontextprotocol/server-filesystem", "--help"], capture_output=True,
                       timeout=600, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = glob.glob(os.path.expanduser("~/.npm/_npx/*/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"))
    return ["node", found[0]] if found else None


def rows(work: str, *, runs: int = 9) -> tuple[list[dict[str, Any]], list[str]]:
    """The start-up rows and notes."""
    folder = os.path.join(work, "startup")
    os.makedirs(folder, exist_ok=True)
    ours_argv = [os.path.join(os.path.dirname(sys.executable), "dsh-fs"), "mcp", "--root", folder]
    if not os.path.exists(ours_argv[0]):
        ours_argv = [sys.executable, "-m", "dsh_fs.cli.main", *ours_argv[1:]]
    node = _node_filesystem_server()
    _spawn_to_answer(ours_argv, folder)  # warm the page cache
    ours, listed, exits, base, theirs = [], [], [], [], []
    for _ in range(runs):
        base.append(_python_pass())
        first, second, gone = _spawn_to_answer(ours_argv, folder, then_list=True)
        ours.append(first)
        listed.append(second)
        exits.append(gone)
        if node is not None:
            theirs.append(_spawn_to_answer([*node, folder], folder)[0])
    p_pass, p_ours, p_list = statistics.median(base), statistics.median(ours), statistics.median(listed)
    p_exit = statistics.median(exits)
    found = [
        {"workload": "MCP stdio start-up: spawn → `initialize` answer (`dsh-fs mcp`)", "ours": p_ours, "ours_mem": None,
         "baseline": "`python -c pass` (spawn → exit)", "base": p_pass, "base_mem": None, "ratio": p_ours / p_pass,
         "target": f"≤ {TARGET} s", "met": p_ours <= TARGET},
        {"workload": "MCP stdio start-up: spawn → first `tools/list` answer (the SDK loaded)", "ours": p_list,
         "ours_mem": None, "baseline": "`python -c pass` (spawn → exit)", "base": p_pass, "base_mem": None,
         "ratio": p_list / p_pass, "target": "(info)", "met": None},
        {"workload": "MCP stdio per-call client: spawn → `tools/list` answer → stdin closed → exit", "ours": p_exit,
         "ours_mem": None, "baseline": "`python -c pass` (spawn → exit)", "base": p_pass, "base_mem": None,
         "ratio": p_exit / p_pass, "target": "(info)", "met": None},
    ]
    notes = [f"MCP start-up rows: medians of {runs} interleaved spawns (M2: the SDK is imported in the background "
             "while the early path answers `initialize`)."]
    if node is not None:
        p_node = statistics.median(theirs)
        found.append({"workload": "MCP stdio start-up: spawn → `initialize` answer (Node `server-filesystem`)",
                      "ours": p_ours, "ours_mem": None, "baseline": "`node …/server-filesystem/dist/index.js`",
                      "base": p_node, "base_mem": None, "ratio": p_ours / p_node, "target": "(info)", "met": None})
    else:
        notes.append("Node MCP filesystem server: not measured (npx/node missing or the package did not install).")
    notes.append("LangChain tool call vs registry call: not measured here (langchain-mcp-adapters needs mcp<2, "
                 "which cannot share dsh-fs's environment).")
    return found, notes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    work = tempfile.mkdtemp(prefix="dsh-fs-startup-bench-")
    try:
        found, notes = rows(work, runs=args.runs)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps({"rows": found, "notes": notes}))
    else:
        for row in found:
            print(f"{row['workload']}: ours {row['ours'] * 1e3:.0f} ms, baseline {row['base'] * 1e3:.0f} ms, "
                  f"{row['ratio']:.2f}× (target {row['target']})")
        print("\n".join(notes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
