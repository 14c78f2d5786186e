"""The floor under one ``read`` round trip over MCP stdio: the same bare client against servers
that do nothing but answer (bench/README.md, "One dispatcher"; ``bench/run.py``'s MCP target row
is the bare client's round trip against this floor).

``python bench/mcp_floor.py`` drives, interleaved in one run and over the same kind of pipes
(``subprocess.PIPE``), with the bare JSON-lines client of ``bench/run.py`` (one ``json.dumps``,
one write + flush, one ``readline`` a call):

* ``echo``: a Python process that reads each line with a blocking ``readline`` and writes the
  answer ``dsh-fs mcp`` gave to the same call (the same bytes, read from a file): the transport
  floor (two pipe wake-ups, the client's own work, the answer's copy);
* ``asyncio echo``: the same answer from an asyncio loop whose reader stays registered
  (``loop.add_reader``, reads and writes that never block): the floor of a server on asyncio;
* ``dsh-fs mcp``: the real server;
* the same ``read`` in process (``ctx.tools.execute`` awaited in a loop: the target's
  baseline), and the same loop with a 200 µs ``time.sleep`` between calls (timed without the
  sleep): the call as a server runs it, in a process that has just been woken up (its caches
  and predictors cold: measured about twice the hot loop's time on the bench VM).

For each it prints the median wall time per round trip over ``--runs`` passes, the client's
own CPU per round trip (its thread's CPU time) and the server process's CPU per round trip
(every thread's time on a CPU, ``/proc/PID/task/*/schedstat``; the clock ticks of
``/proc/PID/stat`` when a thread came or went meanwhile).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))

ECHO = r"""
import sys
answer = open(sys.argv[1], "rb").read()
read, write, flush = sys.stdin.buffer.readline, sys.stdout.buffer.write, sys.stdout.buffer.flush
while line := read():
    if b'"id"' in line:
        write(answer)
        flush()
"""

ASYNC_ECHO = r"""
import asyncio, os, sys
answer = open(sys.argv[1], "rb").read()
chunk = bytearray(65536)
buffer = bytearray()

def readable():
    try:
        count = os.preadv(0, [chunk], -1, os.RWF_NOWAIT)
    except BlockingIOError:
        return
    if not count:
        loop.remove_reader(0)
        done.set_result(None)
        return
    buffer.extend(memoryview(chunk)[:count])
    while (end := buffer.find(b"\n")) >= 0:
        line = bytes(buffer[: end + 1])
        del buffer[: end + 1]
        if b'"id"' in line:
            view = memoryview(answer)
            while view:
                try:
                    view = view[os.pwritev(1, [view], -1, os.RWF_NOWAIT):]
                except BlockingIOError:
                    os.write(1, view)  # (blocking: a floor, not a server)
                    break

async def main():
    global loop, done
    loop = asyncio.get_running_loop()
    done = loop.create_future()
    loop.add_reader(0, readable)
    await done

asyncio.run(main())
"""


def _file(folder: str) -> str:
    path = os.path.join(folder, "module.py")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("".join(f"    value_{i} = compute(alpha, beta, gamma)  # step {i}\n" for i in range(200)))
    return "module.py"


def _cpu_of(pid: int) -> tuple[float, dict[str, int]]:
    """Seconds of CPU (user + system, every thread, those ended included) process ``pid`` used
    so far, in clock ticks (``/proc/PID/stat``), and the nanoseconds on a CPU of each of its live
    threads (``/proc/PID/task/TID/schedstat``)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    threads: dict[str, int] = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat", encoding="ascii") as handle:
                threads[tid] = int(handle.read().split()[0])
        except (OSError, ValueError, IndexError):
            continue
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"), threads


def _cpu_used(before: tuple[float, dict[str, int]], after: tuple[float, dict[str, int]]) -> float:
    """Seconds of CPU between two ``_cpu_of``: from the threads' nanoseconds when the same
    threads lived at both ends (no thread's time lost), else from the clock ticks (10 ms steps)."""
    if before[1] and set(before[1]) == set(after[1]):
        return sum(after[1][tid] - before[1][tid] for tid in after[1]) / 1e9
    return after[0] - before[0]


Ask = Callable[[dict[str, Any]], bytes]
"""write one JSON-RPC message; its answer line when it has an ``id``, else ``b""``"""


def warmed(command: list[str], folder: str, name: str,
           env: dict[str, str] | None = None) -> tuple["subprocess.Popen[bytes]", Ask, dict[str, Any], bytes]:
    """``command`` spawned as a bare JSON-lines client's server in ``folder``, initialized, a
    ``ping`` answered (``dsh-fs mcp`` answers it only once the SDK has loaded, so later calls are
    served as a long-lived client's are, not by the early phase that answers them while the SDK
    loads, M2), then warmed by 20 ``read`` calls of ``name``: the process (the caller closes its
    stdin and waits), the ``ask`` function, the ``tools/call`` message to reuse (set its ``id``)
    and the last answer. The process is killed when the warm-up fails."""
    proc = subprocess.Popen(command, cwd=folder, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=env)
    assert proc.stdin is not None and proc.stdout is not None

    def ask(message: dict[str, Any]) -> bytes:
        proc.stdin.write(json.dumps(message).encode() + b"\n")  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]
        return proc.stdout.readline() if "id" in message else b""  # type: ignore[union-attr]

    try:
        ask({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}})
        ask({"jsonrpc": "2.0", "method": "notifications/initialized"})
        ask({"jsonrpc": "2.0", "id": "loaded", "method": "ping"})
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "read", "arguments": {"file_path": name}}}
        line = b""
        for number in range(20):
            call["id"] = number + 1
            line = ask(call)
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    return proc, ask, call, line


def drive(command: list[str], folder: str, name: str, calls: int,
          env: dict[str, str] | None = None) -> dict[str, Any]:
    """The bare client against ``command`` (``warmed``): wall µs, client CPU µs and server CPU µs
    per round trip, and the last warm-up answer."""
    proc, ask, call, line = warmed(command, folder, name, env)
    try:
        server_cpu = _cpu_of(proc.pid)
        client_cpu = time.thread_time()
        start = time.perf_counter()
        for number in range(calls):
            call["id"] = 100 + number
            ask(call)
        wall = time.perf_counter() - start
        client_cpu = time.thread_time() - client_cpu
        server_cpu = _cpu_used(server_cpu, _cpu_of(proc.pid))
        return {"wall_us": wall / calls * 1e6, "client_cpu_us": client_cpu / calls * 1e6,
                "server_cpu_us": server_cpu / calls * 1e6, "answer": line}
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)


def _in_process(folder: str, name: str, calls: int, *, pause: float = 0.0) -> float:
    """µs per ``read`` in process; ``pause``: seconds slept before each call (not timed)."""
    return _in_process_with_cpu(folder, name, calls, pause=pause)[0]


def _in_process_with_cpu(folder: str, name: str, calls: int, *, pause: float = 0.0) -> tuple[float, float]:
    """µs per ``read`` in process and the loop thread's CPU µs per call (``time.thread_time``);
    ``pause``: seconds slept before each call (neither timed nor counted)."""
    import anyio

    import dsh_fs

    ctx = dsh_fs.create_context(cwd=folder)
    agent = dsh_fs.Session(cwd=folder)

    async def loop() -> tuple[float, float]:
        for _ in range(20):
            await ctx.tools.execute("read", {"file_path": name}, session=agent)
        if not pause:
            start, used = time.perf_counter(), time.thread_time()
            for _ in range(calls):
                await ctx.tools.execute("read", {"file_path": name}, session=agent)
            return (time.perf_counter() - start) / calls * 1e6, (time.thread_time() - used) / calls * 1e6
        wall = cpu = 0.0
        for _ in range(calls):
            time.sleep(pause)
            start, used = time.perf_counter(), time.thread_time()
            await ctx.tools.execute("read", {"file_path": name}, session=agent)
            cpu += time.thread_time() - used
            wall += time.perf_counter() - start
        return wall / calls * 1e6, cpu / calls * 1e6

    return anyio.run(loop)


def _count_in_process(folder: str, name: str, calls: int) -> tuple[float, float]:
    """Interpreter calls per ``read`` in process (Python functions, builtins; this thread and any
    thread started meanwhile), counted as ``mcp_bench.count_calls`` counts the server's."""
    import threading

    import anyio

    import dsh_fs

    ctx = dsh_fs.create_context(cwd=folder)
    agent = dsh_fs.Session(cwd=folder)
    counts = {"call": 0, "c_call": 0}

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event in counts:
            counts[event] += 1

    async def loop() -> None:
        for _ in range(20):
            await ctx.tools.execute("read", {"file_path": name}, session=agent)
        threading.setprofile(profile)
        sys.setprofile(profile)
        for _ in range(calls):
            await ctx.tools.execute("read", {"file_path": name}, session=agent)
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]

    anyio.run(loop)
    return counts["call"] / calls, counts["c_call"] / calls


def in_process_of(python: str, folder: str, name: str, calls: int) -> dict[str, float]:
    """The same ``read`` in process, run by ``python`` (a checkout's interpreter: the ``dsh_fs``
    it imports is that checkout's) in a fresh process: ``hot_us`` and ``cpu_us`` per call in a
    loop, and ``woken_us`` with a 200 µs sleep before each call; ``python_calls`` and ``c_calls``:
    its interpreter calls (counted)."""
    proc = subprocess.run([python, os.path.abspath(__file__), "--in-process", folder, name, "--calls", str(calls)],
                          capture_output=True, text=True, cwd=folder, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{python} bench/mcp_floor.py --in-process failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="the floor under one read round trip over MCP stdio")
    parser.add_argument("--calls", type=int, default=500, help="round trips per pass (default 500)")
    parser.add_argument("--runs", type=int, default=5, help="interleaved passes (default 5; medians)")
    parser.add_argument("--in-process", nargs=2, metavar=("FOLDER", "NAME"),
                        help="only the in-process call on FOLDER/NAME, as JSON (``in_process_of``)")
    args = parser.parse_args(argv)
    try:
        import dsh_fs  # noqa: F401
    except ImportError:  # run from a checkout without the package installed
        sys.path.insert(0, os.path.join(os.path.dirname(HERE), "src"))
    if args.in_process:
        folder, name = args.in_process
        hot, cpu = _in_process_with_cpu(folder, name, args.calls)
        woken = _in_process(folder, name, args.calls, pause=0.0002)
        python_calls, c_calls = _count_in_process(folder, name, min(args.calls, 500))
        print(json.dumps({"hot_us": hot, "cpu_us": cpu, "woken_us": woken, "python_calls": python_calls,
                          "c_calls": c_calls}))
        return 0
    with tempfile.TemporaryDirectory(prefix="dsh-fs-mcp-floor-") as folder:
        os.environ.setdefault("DSH_FS_LOCK_DIR", os.path.join(folder, "locks"))
        name = _file(folder)
        time.sleep(3)  # no racy content digest in the versions (A5)
        server = [sys.executable, "-m", "dsh_fs.cli.main", "mcp", "--root", folder]
        answer = drive(server, folder, name, 1)["answer"]
        if b'"isError":false' not in answer:
            raise RuntimeError(answer[:300].decode("utf-8", "replace"))
        canned = os.path.join(folder, "answer.json")
        with open(canned, "wb") as handle:
            handle.write(answer)
        commands = {"echo": [sys.executable, "-c", ECHO, canned],
                    "asyncio echo": [sys.executable, "-c", ASYNC_ECHO, canned],
                    "dsh-fs mcp": server}
        passes: dict[str, list[dict[str, Any]]] = {label: [] for label in commands}
        in_process: list[float] = []
        woken: list[float] = []
        for _ in range(args.runs):
            for label, command in commands.items():
                passes[label].append(drive(command, folder, name, args.calls))
            in_process.append(_in_process(folder, name, args.calls))
            woken.append(_in_process(folder, name, args.calls, pause=0.0002))
        base = statistics.median(in_process)
        result: dict[str, Any] = {"answer_bytes": len(answer), "in_process_us": base,
                                  "in_process_after_a_sleep_us": statistics.median(woken)}
        for label, found in passes.items():
            medians = {key: statistics.median(p[key] for p in found)
                       for key in ("wall_us", "client_cpu_us", "server_cpu_us")}
            result[label] = {**medians, "ratio_to_in_process": medians["wall_us"] / base}
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
