"""The MCP stdio rows of ``bench/run.py``, and the same rows for the code before the redesign.

The target (``MCP_STDIO_TARGET``): one ``read`` round trip of a bare JSON-lines client (blocking
pipes, one ``json.dumps`` and one ``readline`` a call: the server's share, not a client's) as a
ratio to its floor — the same client against an echo server writing the same answer over the
same pipes, plus the same call in process as a process woken by each request runs it
(``bench/mcp_floor.py``) — and the server process's own CPU per round trip; info rows: the same
round trip with the MCP SDK's ``ClientSession``, with every line sent to the SDK, the echo floor
alone.

``measure`` drives the servers of several checkouts, each named by its interpreter (a venv whose
editable install is that checkout), in interleaved passes: ``bench/run.py --mcp-before PYTHON``
runs this code and the code before the redesign in the same run, and ``comparison`` writes them
side by side with the start-up rows (``bench/startup_bench.py``) and the Node reference server.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import mcp_floor  # noqa: E402

Row = dict[str, Any]
MCP_STDIO_TARGET = 2.0
"""one read over MCP stdio (a bare client) against its floor: the echo transport plus the call in process"""
SDK_ONLY = {"DSH_FS_MCP_SDK_ONLY": "1", "DSH_FS_MCP_LEAN": "0"}
"""every line to the SDK: ``DSH_FS_MCP_SDK_ONLY=1`` (before the redesign: ``DSH_FS_MCP_LEAN=0``,
its lean ``tools/call`` path off); each checkout ignores the other's variable"""
OUR_ROUTE = {"DSH_FS_MCP_SDK_ONLY": "0", "DSH_FS_MCP_LEAN": "1"}
"""each checkout's own route for plain calls (the default)"""
SECTION = "## MCP stdio: this code and the code before the redesign, in the same run"
"""the heading of ``comparison``'s section of ``bench/RESULTS.md``"""


def mcp_available() -> str | None:
    """Why ``dsh-fs mcp`` cannot be benchmarked, or ``None`` when it can."""
    try:
        import mcp  # noqa: F401
    except ImportError:
        return "the MCP SDK is not installed"
    proc = subprocess.run([sys.executable, "-m", "dsh_fs.cli.main", "mcp", "--help"], capture_output=True, text=True)
    return None if proc.returncode == 0 else "`dsh-fs mcp` is not available yet"


def _server(python: str, folder: str) -> list[str]:
    return [python, "-m", "dsh_fs.cli.main", "mcp", "--root", folder]


def _sdk_client(server: list[str], folder: str, name: str, calls: int) -> float:
    """Seconds per ``read`` round trip driven by the MCP SDK's ``ClientSession`` (after a
    ``ping``: the SDK loaded in the server, M2)."""
    import anyio
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    async def main() -> float:
        params = StdioServerParameters(command=server[0], args=server[1:], cwd=folder)
        with open(os.devnull, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    await session.send_ping()
                    for _ in range(20):
                        await session.call_tool("read", {"file_path": name})
                    start = time.perf_counter()
                    for _ in range(calls):
                        result = await session.call_tool("read", {"file_path": name})
                        if result.is_error:
                            raise RuntimeError(str(result.content))
                    return (time.perf_counter() - start) / calls

    return anyio.run(main)


def _bare(server: list[str], folder: str, name: str, calls: int, route: dict[str, str]) -> dict[str, Any]:
    """The bare client's round trips (``mcp_floor.drive``), the answer checked."""
    measured = mcp_floor.drive(server, folder, name, calls, env={**os.environ, **route})
    if b'"isError":false' not in measured["answer"]:
        raise RuntimeError(measured["answer"][:300].decode("utf-8", "replace"))
    return measured


def _echo_floor(answer: bytes, folder: str, name: str, calls: int) -> float:
    """Seconds per round trip of the bare client against an echo server writing ``answer``."""
    with tempfile.TemporaryDirectory(prefix="dsh-fs-mcp-floor-") as spare:
        canned = os.path.join(spare, "answer.json")
        with open(canned, "wb") as handle:
            handle.write(answer)
        return mcp_floor.drive([sys.executable, "-c", mcp_floor.ECHO, canned], folder, name, calls)["wall_us"] / 1e6


COUNTING = r"""
import os, signal, sys, threading
out, sys.argv = sys.argv[1], ["dsh-fs", *sys.argv[2:]]
on, counts = [False], {"call": 0, "c_call": 0}

def profile(frame, event, arg):
    if on[0] and event in counts:
        counts[event] += 1

def start(signum, frame):
    counts.update(call=0, c_call=0)
    on[0] = True

def stop(signum, frame):
    on[0] = False
    with open(out + ".part", "w") as handle:
        handle.write("%d %d" % (counts["call"], counts["c_call"]))
    os.rename(out + ".part", out)

def thread_start(frame, event, arg):  # every other thread leaves the two signals to the main one
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1, signal.SIGUSR2})
    sys.setprofile(profile)
    profile(frame, event, arg)

signal.signal(signal.SIGUSR1, start)
signal.signal(signal.SIGUSR2, stop)
sys.setprofile(profile)
threading.setprofile(thread_start)
from dsh_fs.cli.main import run
run()
"""
"""``dsh-fs`` (``python -c COUNTING OUT mcp …``) with every thread's function calls counted
between SIGUSR1 and SIGUSR2 (``sys.setprofile`` from the start, so threads started later count
too; they block the two signals, so the main thread takes them, at once even when it waits in
``epoll_wait``); SIGUSR2 writes ``"PYTHON_CALLS C_CALLS"`` to ``OUT``"""


def count_calls(python: str, path: str, calls: int, route: dict[str, str]) -> dict[str, float]:
    """Interpreter calls per ``read`` round trip in the server of the checkout whose interpreter
    is ``python`` (every thread; counted, not timed, so the machine's load does not move it):
    ``python_calls`` (Python functions) and ``c_calls`` (builtins), over ``calls`` round trips of
    the bare client after a ``ping``. The signals are handled on the server's main thread (the
    others block them), which they interrupt where it waits; a ``ping`` after SIGUSR2 only wakes
    a main thread that is not waiting (its calls before the handler runs would be counted)."""
    import signal

    folder, name = os.path.split(path)
    out = os.path.join(folder, f"counts-{os.getpid()}-{time.monotonic_ns()}")
    proc, ask, call, line = mcp_floor.warmed([python, "-c", COUNTING, out, "mcp", "--root", folder], folder, name,
                                             env={**os.environ, **route})
    try:
        proc.send_signal(signal.SIGUSR1)
        for number in range(calls):
            call["id"] = 100 + number
            line = ask(call)
        proc.send_signal(signal.SIGUSR2)
        ask({"jsonrpc": "2.0", "id": "wake", "method": "ping"})
        deadline = time.monotonic() + 30
        while not os.path.exists(out):
            if time.monotonic() > deadline:
                raise RuntimeError("the counting server wrote no counts")
            time.sleep(0.01)
        if b'"isError":false' not in line:
            raise RuntimeError(line[:300].decode("utf-8", "replace"))
        with open(out, encoding="ascii") as handle:
            python_calls, c_calls = (int(x) for x in handle.read().split())
        return {"python_calls": python_calls / calls, "c_calls": c_calls / calls}
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
        if os.path.exists(out):
            os.unlink(out)


def one_pass(python: str, path: str, calls: int) -> dict[str, float]:
    """One pass against the checkout whose interpreter is ``python``, seconds per ``read``:
    ``bare`` (wall) and ``server_cpu`` (the server process's user + system CPU, every thread),
    ``bare_sdk`` (every line to the SDK), ``sdk_client``, ``floor`` (the echo server with that
    server's answer), and that checkout's call in process (a fresh process): ``hot``,
    ``call_cpu`` and ``woken``."""
    folder, name = os.path.split(path)
    server = _server(python, folder)
    bare = _bare(server, folder, name, calls, OUR_ROUTE)
    call = mcp_floor.in_process_of(python, folder, name, calls)
    return {"bare": bare["wall_us"] / 1e6, "server_cpu": bare["server_cpu_us"] / 1e6,
            "bare_sdk": _bare(server, folder, name, calls, SDK_ONLY)["wall_us"] / 1e6,
            "sdk_client": _sdk_client(server, folder, name, calls),
            "floor": _echo_floor(bare["answer"], folder, name, calls),
            "hot": call["hot_us"] / 1e6, "call_cpu": call["cpu_us"] / 1e6, "woken": call["woken_us"] / 1e6,
            "call_python_calls": call["python_calls"], "call_c_calls": call["c_calls"]}


def measure(path: str, calls: int, pythons: dict[str, str], runs: int) -> dict[str, list[dict[str, float]]]:
    """``runs`` interleaved passes (``one_pass``) of each ``label → python``: the passes by label."""
    passes: dict[str, list[dict[str, float]]] = {label: [] for label in pythons}
    for _ in range(runs):
        for label, python in pythons.items():
            passes[label].append(one_pass(python, path, calls))
    return passes


def _median(passes: list[dict[str, float]], key: str | Callable[[dict[str, float]], float]) -> float:
    return statistics.median(p[key] if isinstance(key, str) else key(p) for p in passes)


def _to_floor(p: dict[str, float]) -> float:
    return p["bare"] / (p["floor"] + p["woken"])


def _cpu_ratio(p: dict[str, float]) -> float:
    return p["server_cpu"] / p["call_cpu"]


def mcp_rows(passes: list[dict[str, float]], notes: list[str]) -> list[Row]:
    """The MCP stdio round-trip rows from one checkout's passes (medians): the target row is the
    bare JSON-lines client's round trip against its floor (the echo transport plus the call as a
    woken process runs it), with the server's own CPU per round trip; the rest is info."""
    r = {key: _median(passes, key) for key in passes[0]}
    floor = r["floor"] + r["woken"]
    base = {"ours_mem": None, "baseline": "the same call in process", "base": r["hot"], "base_mem": None}
    notes.append(f"MCP stdio rows: medians of {len(passes)} passes. The bare JSON-lines client (blocking pipes, one "
                 "`json.dumps` and one `readline` a call) measures the server, not a client's own work; its floor is "
                 "the same client against a Python echo server writing the same answer line over the same pipes plus "
                 "the same `read` in process with a 200 µs sleep before each call (a process woken by each request: "
                 f"caches and predictors cold; {r['woken'] * 1e6:.1f} µs here against {r['hot'] * 1e6:.1f} µs in a hot "
                 "loop) (bench/mcp_floor.py). The server's CPU is its process's time on a CPU per round trip (every "
                 "thread, `/proc/PID/task/*/schedstat`), against the same call's CPU in a hot loop in process. The "
                 "SDK-client row drives the same server with the MCP SDK's `ClientSession`, whose own work is not "
                 "the server's; `DSH_FS_MCP_SDK_ONLY=1` sends every line to the SDK.")
    return [
        {"workload": "MCP round trip per read call (stdio, small file), a bare JSON-lines client, against its floor",
         "ours": r["bare"], "ours_mem": None,
         "baseline": "the echo transport + the same call in process, woken per call (`bench/mcp_floor.py`)",
         "base": floor, "base_mem": None, "ratio": r["bare"] / floor, "target": f"≤ {MCP_STDIO_TARGET:g}×",
         "met": r["bare"] / floor <= MCP_STDIO_TARGET},
        {"workload": "MCP stdio: the server process's own CPU per read round trip (bare client)",
         "ours": r["server_cpu"], "ours_mem": None, "baseline": "the same call's CPU in process",
         "base": r["call_cpu"], "base_mem": None, "ratio": r["server_cpu"] / r["call_cpu"],
         "target": f"≤ {MCP_STDIO_TARGET:g}×", "met": r["server_cpu"] / r["call_cpu"] <= MCP_STDIO_TARGET},
        {"workload": "MCP round trip per read call (stdio, small file), a bare JSON-lines client", "ours": r["bare"],
         **base, "ratio": r["bare"] / r["hot"], "target": "(info)", "met": None},
        {"workload": "MCP round trip per read call (stdio, small file), the MCP SDK's client",
         "ours": r["sdk_client"], **base, "ratio": r["sdk_client"] / r["hot"], "target": "(info)", "met": None},
        {"workload": "MCP round trip per read call (stdio, small file), bare client, every line to the SDK",
         "ours": r["bare_sdk"], **base, "ratio": r["bare_sdk"] / r["hot"], "target": "(info)", "met": None},
        {"workload": "MCP stdio transport floor: the bare client against an echo server writing the same answer",
         "ours": r["floor"], **base, "ratio": r["floor"] / r["hot"], "target": "(info)", "met": None},
    ]


def _fmt(value: float, unit: str) -> str:
    if unit == "×":
        return f"{value:.2f}×"
    if value < 1e-3:
        return f"{value * 1e6:.1f} µs"
    return f"{value * 1e3:.1f} ms" if value < 1 else f"{value:.2f} s"


def _side_by_side(label: str, ours: list[float], before: list[float], unit: str) -> str:
    """One row: medians with the range of the passes, this / before, and the verdict: better or
    worse only when every pass of one side beats every pass of the other, else the same within
    the noise."""
    mine, theirs = statistics.median(ours), statistics.median(before)
    if max(ours) < min(before):
        verdict = "better"
    elif min(ours) > max(before):
        verdict = "**worse**"
    else:
        verdict = "same within noise"
    return (f"| {label} | {_fmt(mine, unit)} ({_fmt(min(ours), unit)}–{_fmt(max(ours), unit)}) | "
            f"{_fmt(theirs, unit)} ({_fmt(min(before), unit)}–{_fmt(max(before), unit)}) | "
            f"{mine / theirs:.2f}× | {verdict} |")


def _commit_of(python: str) -> str:
    """The short commit of the checkout whose ``dsh_fs`` ``python`` imports (``?`` if none)."""
    where = subprocess.run([python, "-c", "import dsh_fs, os; print(os.path.dirname(dsh_fs.__file__))"],
                           capture_output=True, text=True)
    if where.returncode != 0:
        return "?"
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=where.stdout.strip())
    return commit.stdout.strip() or "?"


ROUND_TRIP_ROWS: tuple[tuple[str, str | Callable[[dict[str, float]], float], str], ...] = (
    ("one `read` round trip, a bare JSON-lines client", "bare", "s"),
    ("that round trip ÷ its floor (echo transport + the call woken in process; target ≤ 2×)", _to_floor, "×"),
    ("the server process's own CPU per round trip", "server_cpu", "s"),
    ("that CPU ÷ the same call's CPU in process", _cpu_ratio, "×"),
    ("the same round trip, the MCP SDK's client", "sdk_client", "s"),
    ("the same round trip, every line to the SDK", "bare_sdk", "s"),
    ("the echo transport floor (the same answer)", "floor", "s"),
    ("the call in process, a hot loop", "hot", "s"),
    ("the call in process, woken per call", "woken", "s"),
)
STARTUP_ROWS = (
    ("spawn → `initialize` answer", "initialize"),
    ("spawn → first `ping` answer (the SDK loaded)", "ping"),
    ("per-call client: spawn → `initialize` → first `tools/call` answer", "call"),
    ("per-call client (`mcp<2`): → `tools/list` answer → stdin closed → exit", "invoked"),
    ("per-call client declaring `roots`: → `roots/list` answered → the call's answer", "roots"),
)


def comparison(passes: dict[str, list[dict[str, float]]], startup: dict[str, Any] | None, *, before: str,
               command: str, calls: int, counts: dict[str, dict[str, dict[str, float]]] | None = None) -> str:
    """The ``SECTION`` of ``bench/RESULTS.md``: each round-trip and start-up row of this code
    (``passes["ours"]``, ``startup["ours"]``) next to the code before the redesign (``"before"``),
    measured in the same run (``before``: that checkout's interpreter); ``counts``: by side,
    ``count_calls`` on our route (``"route"``) and with every line to the SDK (``"sdk"``)."""
    try:
        load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        load = "?"
    lines = [
        SECTION, "",
        f"Produced by `{command}` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} (load average at its end "
        f"{load}, {os.cpu_count()} cores). This code: commit {_commit_of(sys.executable)}; before the redesign: "
        f"commit {_commit_of(before)} (`{before}`). Round trips: {len(passes['ours'])} interleaved passes of "
        f"{calls} calls per side; start-up: "
        + (f"{len(startup['pass'])} interleaved spawns per row and side. " if startup else "not measured. ")
        + "Medians, with the range of the passes in brackets; *better*/*worse* only when every pass of one side "
          "beats every pass of the other.", "",
        "| row | this code | before the redesign | this ÷ before | verdict |", "|---|---|---|---|---|",
    ]
    for label, key, unit in ROUND_TRIP_ROWS:
        values = {side: [p[key] if isinstance(key, str) else key(p) for p in passes[side]] for side in passes}
        lines.append(_side_by_side(label, values["ours"], values["before"], unit))
    call = {side: (passes[side][0]["call_python_calls"], passes[side][0]["call_c_calls"]) for side in passes}
    lines.append(f"| interpreter calls of the call in process (counted: Python functions + builtins) | "
                 f"{call['ours'][0]:.0f} + {call['ours'][1]:.0f} | {call['before'][0]:.0f} + {call['before'][1]:.0f} | "
                 f"{sum(call['ours']) / sum(call['before']):.2f}× | (counted) |")
    for route, said in (("route", "our route"), ("sdk", "every line to the SDK")):
        if counts:
            mine, theirs = counts["ours"][route], counts["before"][route]
            lines.append(f"| interpreter calls per round trip in the server, {said} (every thread) | "
                         f"{mine['python_calls']:.0f} + {mine['c_calls']:.0f} | "
                         f"{theirs['python_calls']:.0f} + {theirs['c_calls']:.0f} | "
                         f"{(mine['python_calls'] + mine['c_calls']) / (theirs['python_calls'] + theirs['c_calls']):.2f}× "
                         "| (counted) |")
            own = {side: (counts[side][route]["python_calls"] - call[side][0], counts[side][route]["c_calls"] - call[side][1])
                   for side in ("ours", "before")}
            lines.append(f"| the same less the call in process: the MCP server's own, {said} | "
                         f"{own['ours'][0]:.0f} + {own['ours'][1]:.0f} | {own['before'][0]:.0f} + {own['before'][1]:.0f} | "
                         f"{sum(own['ours']) / sum(own['before']):.2f}× | (counted) |")
    if startup:
        for label, step in STARTUP_ROWS:
            lines.append(_side_by_side(label, startup["ours"][step], startup["before"][step], "s"))
        if startup["node"]:
            node = startup["node"]
            lines.append(f"| the Node reference server (`server-filesystem`): spawn → `initialize` answer | "
                         f"{_fmt(statistics.median(node), 's')} ({_fmt(min(node), 's')}–{_fmt(max(node), 's')}) | "
                         "(the same spawns) | — | reference |")
    return "\n".join(lines) + "\n"
