"""Counts of one ``read`` round trip over MCP stdio, on the server's side: interpreter calls,
CPU time, system calls (bench/README.md, "The MCP stdio round trip").

Counted, not timed, so a loaded machine changes them little: ``python bench/mcp_counts.py``
prints, for the server on our route and with every line sent to the SDK (``DSH_FS_MCP_SDK_ONLY``),

* interpreter calls per round trip on the server's event loop thread (``sys.setprofile``
  in that thread; ``serve_stdio`` in process, a bare JSON-lines client in another thread);
* the server thread's CPU time per round trip (median of ``--runs`` passes, no profiler),
  next to the same ``read`` in process (``ctx.tools.execute``: calls and CPU time), and
  their ratio;
* with ``--strace`` (needs ``strace``): system calls per round trip of a ``dsh-fs mcp``
  process (``strace -f -c``), by name.

Each pass: ``initialize``, 20 warm-up calls, then ``--calls`` calls of ``read`` on a 10 KiB file,
one at a time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "src"))


def _file(folder: str) -> str:
    path = os.path.join(folder, "module.py")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("".join(f"    value_{i} = compute(alpha, beta, gamma)  # step {i}\n" for i in range(200)))
    return "module.py"


def _requests(name: str, calls: int) -> tuple[list[bytes], list[bytes]]:
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "count", "version": "1"}}
    warm = [json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello}).encode(),
            b'{"jsonrpc":"2.0","method":"notifications/initialized"}']
    arguments = {"file_path": name}
    call = {"jsonrpc": "2.0", "id": 0, "method": "tools/call", "params": {"name": "read", "arguments": arguments}}
    warm += [json.dumps({**call, "id": n + 1}).encode() for n in range(20)]
    timed = [json.dumps({**call, "id": 100 + n}).encode() for n in range(calls)]
    return warm, timed


class _Pass:
    """One in-process server over two pipes and a blocking client; ``counting`` counts the
    server thread's interpreter calls while the timed calls run, else its CPU time."""

    def __init__(self, folder: str, *, ours: bool, counting: bool, detail: bool = False) -> None:
        """:param detail: also count the calls by function (``by_function``: ``file:name`` or
        ``C <builtin>``), to find where they go"""
        import dsh_fs
        from dsh_fs.mcp.stdio import serve_stdio

        self.calls = 0
        self.by_function: Counter[str] = Counter()
        self.cpu = 0.0
        self._armed = False
        stdin_r, self.stdin_w = os.pipe()
        self.stdout_r, stdout_w = os.pipe()
        ctx = dsh_fs.create_context(root=folder)
        stdin, stdout = open(stdin_r, "rb", buffering=0), open(stdout_w, "wb", buffering=0)  # noqa: SIM115
        self.clock: int | None = None

        def profile(frame: Any, event: str, arg: Any) -> None:
            if self._armed and (event == "call" or event == "c_call"):
                self.calls += 1
                if detail:
                    code = frame.f_code
                    where = (f"{'/'.join(code.co_filename.rsplit('/', 2)[-2:])}:{code.co_name}" if event == "call"
                             else f"C {arg!r}"[:90])
                    self.by_function[where] += 1

        def run() -> None:
            self.clock = time.pthread_getcpuclockid(threading.get_ident())
            if counting:
                sys.setprofile(profile)
            try:
                serve_stdio(ctx, root=folder, sdk_only=not ours, stdin=stdin, stdout=stdout)
            finally:
                sys.setprofile(None)
                stdout.close()
                stdin.close()

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()
        self.reader = open(self.stdout_r, "rb")  # noqa: SIM115

    def ask(self, line: bytes) -> None:
        os.write(self.stdin_w, line + b"\n")
        if b'"id"' in line:
            self.reader.readline()

    def run(self, warm: list[bytes], timed: list[bytes]) -> None:
        for line in warm:
            self.ask(line)
        assert self.clock is not None
        self._armed = True
        start = time.clock_gettime(self.clock)
        for line in timed:
            self.ask(line)
        self.cpu = time.clock_gettime(self.clock) - start
        self._armed = False
        os.close(self.stdin_w)
        self.reader.read()
        self.thread.join(30)


def in_process(folder: str, name: str, calls: int, runs: int) -> dict[str, dict[str, float]]:
    """Interpreter calls and CPU µs per round trip, on our route and the SDK's."""
    warm, timed = _requests(name, calls)
    found: dict[str, dict[str, float]] = {}
    for ours in (True, False):
        counted = _Pass(folder, ours=ours, counting=True)
        counted.run(warm, timed)
        cpus = []
        for _ in range(runs):
            timing = _Pass(folder, ours=ours, counting=False)
            timing.run(warm, timed)
            cpus.append(timing.cpu / calls * 1e6)
        found["ours" if ours else "sdk"] = {"calls": counted.calls / calls, "cpu_us": statistics.median(cpus)}
    return found


def registry(folder: str, name: str, calls: int, runs: int) -> dict[str, float]:
    """The same ``read`` in process (``ctx.tools.execute`` awaited in a loop): interpreter
    calls and CPU µs per call, measured as the server's thread is."""
    import anyio

    import dsh_fs

    ctx = dsh_fs.create_context(root=folder)
    agent = dsh_fs.Session(cwd=folder)
    counted = [0]

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call" or event == "c_call":
            counted[0] += 1

    async def loop(count: int, profiled: bool) -> float:
        for _ in range(20):
            await ctx.tools.execute("read", {"file_path": name}, session=agent)
        start = time.thread_time()
        if profiled:
            sys.setprofile(profile)
        for _ in range(count):
            await ctx.tools.execute("read", {"file_path": name}, session=agent)
        sys.setprofile(None)
        return time.thread_time() - start

    anyio.run(loop, calls, True)
    cpus = [anyio.run(loop, calls, False) / calls * 1e6 for _ in range(runs)]
    return {"calls": counted[0] / calls, "cpu_us": statistics.median(cpus)}


def syscalls(folder: str, name: str, calls: int) -> dict[str, dict[str, float]]:
    """System calls per round trip of a ``dsh-fs mcp`` process (``strace -f -c``), on our route and
    the SDK's: the counts of the timed calls (a pass with them less a pass without)."""
    found: dict[str, dict[str, float]] = {}
    for ours in (True, False):
        totals = []
        for count in (0, calls):
            warm, timed = _requests(name, count)
            report = os.path.join(folder, "strace.txt")
            env = {**os.environ, "DSH_FS_MCP_SDK_ONLY": "0" if ours else "1"}
            proc = subprocess.Popen(["strace", "-f", "-c", "-o", report, sys.executable, "-m", "dsh_fs.cli.main", "mcp",
                                     "--root", folder], cwd=folder, env=env, stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            assert proc.stdin is not None and proc.stdout is not None
            for line in warm + timed:
                proc.stdin.write(line + b"\n")
                proc.stdin.flush()
                if b'"id"' in line:
                    proc.stdout.readline()
            proc.stdin.close()
            proc.wait(60)
            totals.append(_strace_counts(report))
        names = set(totals[0]) | set(totals[1])
        per = {key: (totals[1].get(key, 0) - totals[0].get(key, 0)) / calls for key in names}
        found["ours" if ours else "sdk"] = {key: value for key, value in sorted(per.items()) if value >= 0.05}
    return found


def _strace_counts(report: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    with open(report, encoding="utf-8") as handle:
        for line in handle:
            parts = line.split()
            if len(parts) >= 5 and parts[0][0].isdigit() and parts[-1] not in ("total",):
                calls = parts[3] if len(parts) >= 6 else parts[3]
                if calls.isdigit():
                    counts[parts[-1]] = int(calls)
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="server-side counts of one read over MCP stdio, our route and the SDK's")
    parser.add_argument("--calls", type=int, default=500, help="timed calls per pass (default 500)")
    parser.add_argument("--runs", type=int, default=5, help="CPU-time passes per side (default 5; the median)")
    parser.add_argument("--strace", action="store_true", help="also count system calls (needs strace)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="dsh-fs-mcp-counts-") as folder:
        os.environ.setdefault("DSH_FS_LOCK_DIR", os.path.join(folder, "locks"))
        name = _file(folder)
        time.sleep(3)  # no racy content digest in the versions (A5)
        result: dict[str, Any] = {"per_round_trip": in_process(folder, name, args.calls, args.runs),
                                  "in_process_call": registry(folder, name, args.calls, args.runs)}
        base = result["in_process_call"]["cpu_us"]
        result["cpu_ratio"] = {side: found["cpu_us"] / base for side, found in result["per_round_trip"].items()}
        if args.strace:
            result["syscalls"] = syscalls(folder, name, args.calls)
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
