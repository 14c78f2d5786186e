"""MCP stdio start-up (DEVIATIONS M2): spawn → the ``initialize`` answer of ``dsh-fs mcp``.

    python bench/startup_bench.py [--runs N] [--json]

Rows (medians of ``--runs`` interleaved spawns, each a fresh process in a directory holding one
small file; the ``dsh_fs`` package compiled first, as an installed wheel is):

* ``dsh-fs mcp`` spawn → its ``initialize`` answer (target ≤ 0.35 s), as a ratio to ``python
  -c pass`` (spawn → exit) measured in the same run;
* for information, spawn → the first ``ping`` answer (the first request the early phase leaves
  to the SDK: the SDK is loaded by then);
* for information, what a per-call client's tool invocation waits for: spawn → ``initialize``
  → ``notifications/initialized`` + a ``tools/call`` ``read`` → its answer (answered before the
  SDK is loaded: ``mcp/stdio/dispatch.py``); the same followed by the ``tools/list`` the ``mcp<2``
  SDK client (langchain-mcp-adapters) sends after each call → its answer → stdin closed → the
  process gone (the whole invocation as LangChain's adapter waits for it); the same ``read``
  from a client that declares ``roots`` (the Inspector CLI, IDE clients): the server asks
  ``roots/list`` first (DEVIATIONS M3), the client answers, then the call's answer;
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
INITIALIZED = '{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
PING = INITIALIZED + '{"jsonrpc":"2.0","id":2,"method":"ping"}\n'
CALL = INITIALIZED + '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read","arguments":{"file_path":"a.txt"}}}\n'
"""what a per-call client sends after ``initialize``"""
LIST = '{"jsonrpc":"2.0","id":3,"method":"tools/list"}\n'
"""what the ``mcp<2`` client (langchain-mcp-adapters) sends after each call's answer"""
INITIALIZE_ROOTS = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {"roots": {"listChanged": True}},
    "clientInfo": {"name": "bench", "version": "1"}}}) + "\n"
"""the ``initialize`` of a client that declares ``roots`` (the Inspector CLI, IDE clients)"""
TARGET = 0.35


def _conversation(argv: list[str], cwd: str, steps: tuple[str, ...] = ()) -> tuple[float, list[float], float]:
    """Seconds from spawn to the ``initialize`` answer, to the answer to each of ``steps``
    (each sent once the previous answer is read), and to the process's exit once its stdin
    is closed."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=cwd)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(INITIALIZE.encode())
    proc.stdin.flush()
    line = proc.stdout.readline()
    first = time.perf_counter() - start
    assert b'"id":1' in line.replace(b" ", b""), line
    answered = []
    for step in steps:
        proc.stdin.write(step.encode())
        proc.stdin.flush()
        assert proc.stdout.readline()
        answered.append(time.perf_counter() - start)
    proc.stdin.close()
    proc.wait(timeout=30)
    exited = time.perf_counter() - start
    proc.stdout.close()
    return first, answered, exited


def _roots_call(argv: list[str], cwd: str) -> float:
    """Seconds from spawn to the answer of a ``read`` from a client that declared ``roots``: its
    ``initialize``, the call, the server's ``roots/list`` answered with ``cwd``, the answer."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=cwd)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(INITIALIZE_ROOTS.encode())
    proc.stdin.flush()
    assert b'"id":1' in proc.stdout.readline().replace(b" ", b"")
    proc.stdin.write(CALL.encode())
    proc.stdin.flush()
    while True:
        message = json.loads(proc.stdout.readline())
        if message.get("method") == "roots/list":
            answer = {"jsonrpc": "2.0", "id": message["id"], "result": {"roots": [{"uri": f"file://{cwd}"}]}}
            proc.stdin.write(json.dumps(answer).encode() + b"\n")
            proc.stdin.flush()
        elif message.get("id") == 2:
            break
    answered = time.perf_counter() - start
    proc.stdin.close()
    proc.wait(timeout=30)
    proc.stdout.close()
    return answered


def _compile_package(python: str) -> None:
    """Write the bytecode of the ``dsh_fs`` that ``python`` imports, as an installed wheel has it:
    an editable checkout under ``PYTHONDONTWRITEBYTECODE=1`` has none, and compiling every module
    at each spawn made every row here about 100 ms slower."""
    subprocess.run([python, "-c", "import compileall, os, dsh_fs; "
                    "compileall.compile_dir(os.path.dirname(dsh_fs.__file__), quiet=1)"], check=True)


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


def server_argv(python: str, folder: str) -> list[str]:
    """``dsh-fs mcp --root folder`` as the checkout whose interpreter is ``python`` installs it:
    its console script when there is one, else ``python -m dsh_fs.cli.main``."""
    script = os.path.join(os.path.dirname(python), "dsh-fs")
    if os.path.exists(script):
        return [script, "mcp", "--root", folder]
    return [python, "-m", "dsh_fs.cli.main", "mcp", "--root", folder]


STEPS = ("initialize", "ping", "call", "invoked", "roots")
"""what ``measure`` times for each ``dsh-fs mcp``: spawn → the ``initialize`` answer, → the first
``ping`` answer, → a per-call client's first ``tools/call`` answer, → that client's ``tools/list``
answer, stdin closed and the process gone (``mcp<2``), and → the call's answer for a client
declaring ``roots``"""


def measure(work: str, *, runs: int = 9, pythons: dict[str, str] | None = None,
            node: bool = True) -> dict[str, Any]:
    """Seconds of every spawn, ``runs`` rounds interleaved: ``{"pass": [...], "node": [...] or
    None, label: {step: [...]}}`` for each ``label → python`` of ``pythons`` (default ``{"ours":
    sys.executable}``; another checkout's interpreter measures that checkout's server in the same
    rounds), the steps of ``STEPS``; ``node``: the Node reference server's spawn → ``initialize``
    too, when npx can install it."""
    folder = os.path.join(work, "startup")
    os.makedirs(folder, exist_ok=True)
    pythons = pythons or {"ours": sys.executable}
    servers = {label: server_argv(python, folder) for label, python in pythons.items()}
    reference = _node_filesystem_server() if node else None
    with open(os.path.join(folder, "a.txt"), "w") as handle:
        handle.write("".join(f"line {i}\n" for i in range(1, 40)))
    for label, python in pythons.items():
        _compile_package(python)
        _conversation(servers[label], folder)  # warm the page cache
    found: dict[str, Any] = {"pass": [], "node": [] if reference is not None else None}
    found.update({label: {step: [] for step in STEPS} for label in servers})
    for _ in range(runs):
        found["pass"].append(_python_pass())
        for label, argv in servers.items():
            times = found[label]
            first, (pong,), _ = _conversation(argv, folder, (PING,))
            times["initialize"].append(first)
            times["ping"].append(pong)
            _, (answer, _listed), gone = _conversation(argv, folder, (CALL, LIST))
            times["call"].append(answer)
            times["invoked"].append(gone)
            times["roots"].append(_roots_call(argv, folder))
        if reference is not None:
            found["node"].append(_conversation([*reference, folder], folder)[0])
    return found


def rows_from(found: dict[str, Any], label: str = "ours") -> tuple[list[dict[str, Any]], list[str]]:
    """The start-up rows and notes of ``label``'s server from ``measure``'s spawns (medians)."""
    mine = {step: statistics.median(times) for step, times in found[label].items()}
    p_pass = statistics.median(found["pass"])
    base = {"ours_mem": None, "baseline": "`python -c pass` (spawn → exit)", "base": p_pass, "base_mem": None}
    rows = [
        {"workload": "MCP stdio start-up: spawn → `initialize` answer (`dsh-fs mcp`)", "ours": mine["initialize"],
         **base, "ratio": mine["initialize"] / p_pass, "target": f"≤ {TARGET} s", "met": mine["initialize"] <= TARGET},
        {"workload": "MCP stdio start-up: spawn → first `ping` answer (the SDK loaded)", "ours": mine["ping"],
         **base, "ratio": mine["ping"] / p_pass, "target": "(info)", "met": None},
        {"workload": "MCP stdio per-call client: spawn → `initialize` → first `tools/call` (`read`) answer",
         "ours": mine["call"], **base, "ratio": mine["call"] / p_pass, "target": "(info)", "met": None},
        {"workload": "MCP stdio per-call client (`mcp<2`, LangChain): spawn → `read` answer → `tools/list` answer "
                     "→ stdin closed → exit", "ours": mine["invoked"], **base, "ratio": mine["invoked"] / p_pass,
         "target": "(info)", "met": None},
        {"workload": "MCP stdio per-call client declaring `roots` (Inspector CLI, IDE clients): spawn → `initialize` "
                     "→ `tools/call` → `roots/list` answered → the call's answer", "ours": mine["roots"], **base,
         "ratio": mine["roots"] / p_pass, "target": "(info)", "met": None},
    ]
    notes = [f"MCP start-up rows: medians of {len(found['pass'])} interleaved spawns (M2: the SDK is imported in the "
             "background while `initialize`, plain calls and `tools/list` are answered without it)."]
    if found["node"] is not None:
        p_node = statistics.median(found["node"])
        rows.append({"workload": "MCP stdio start-up: spawn → `initialize` answer (Node `server-filesystem`)",
                     "ours": mine["initialize"], "ours_mem": None, "baseline": "`node …/server-filesystem/dist/index.js`",
                     "base": p_node, "base_mem": None, "ratio": mine["initialize"] / p_node, "target": "(info)",
                     "met": None})
    else:
        notes.append("Node MCP filesystem server: not measured (npx/node missing or the package did not install).")
    notes.append("LangChain tool call vs registry call: not measured here (langchain-mcp-adapters needs mcp<2, "
                 "which cannot share dsh-fs's environment).")
    return rows, notes


def rows(work: str, *, runs: int = 9) -> tuple[list[dict[str, Any]], list[str]]:
    """The start-up rows and notes of this checkout's server (``measure``, then ``rows_from``)."""
    return rows_from(measure(work, runs=runs))


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
