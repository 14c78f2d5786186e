"""The MCP stdio rows of ``bench/run.py``: one ``read`` round trip with a bare JSON-lines client
against its floor, the server's own CPU per round trip, and the info rows (the SDK's client, every
line sent to the SDK, the echo floor alone).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
Row = dict[str, Any]
MCP_STDIO_TARGET = 2.0
"""one read over MCP stdio (a bare client) against its floor: the echo transport plus the call in process"""


def mcp_available() -> str | None:
    """Why ``dsh-fs mcp`` cannot be benchmarked, or ``None`` when it can."""
    try:
        import mcp  # noqa: F401
    except ImportError:
        return "the MCP SDK is not installed"
    proc = subprocess.run([sys.executable, "-m", "dsh_fs.cli.main", "mcp", "--help"], capture_output=True, text=True)
    return None if proc.returncode == 0 else "`dsh-fs mcp` is not available yet"


def bench_mcp(path: str, calls: int) -> dict[str, Any]:
    import anyio
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    import dsh_fs

    folder, name = os.path.split(path)

    async def main() -> dict[str, Any]:
        params = StdioServerParameters(command=sys.executable, args=["-m", "dsh_fs.cli.main", "mcp", "--root", folder],
                                       cwd=folder)
        with open(os.devnull, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    await session.send_ping()  # answered once the SDK has loaded (M2)
                    for _ in range(20):
                        await session.call_tool("read", {"file_path": name})
                    start = time.perf_counter()
                    for _ in range(calls):
                        result = await session.call_tool("read", {"file_path": name})
                        if result.is_error:
                            raise RuntimeError(str(result.content))
                    over_mcp = (time.perf_counter() - start) / calls
        ctx = dsh_fs.create_context(cwd=folder)
        agent = dsh_fs.Session(cwd=folder)
        for _ in range(20):
            await ctx.tools.execute("read", {"file_path": name}, session=agent)
        start, cpu = time.perf_counter(), time.thread_time()
        for _ in range(calls):
            await ctx.tools.execute("read", {"file_path": name}, session=agent)
        in_process, call_cpu = (time.perf_counter() - start) / calls, (time.thread_time() - cpu) / calls
        return {"ours": over_mcp, "base": in_process, "call_cpu": call_cpu}

    found = anyio.run(main)
    sys.path.insert(0, HERE)
    import mcp_floor

    bare = _bare_mcp_reads(folder, name, calls)
    return {**found, "bare": bare["wall_us"] / 1e6, "server_cpu": bare["server_cpu_us"] / 1e6,
            "bare_sdk": _bare_mcp_reads(folder, name, calls, sdk_only=True)["wall_us"] / 1e6,
            "floor": _transport_floor(folder, name, calls),
            "woken": mcp_floor._in_process(folder, name, calls, pause=0.0002) / 1e6}


def _bare_mcp_reads(folder: str, name: str, calls: int, *, sdk_only: bool = False) -> dict[str, Any]:
    """``read`` round trips of ``dsh-fs mcp`` driven by a bare JSON-lines client (blocking pipes,
    one ``json.dumps`` and one ``readline`` per call, ``mcp_floor.drive``): the server's share of
    the MCP round trip, without the SDK client's own Python work: wall µs and the server
    process's CPU µs per round trip (``sdk_only``: every line sent to the SDK,
    ``DSH_FS_MCP_SDK_ONLY=1``)."""
    sys.path.insert(0, HERE)
    import mcp_floor

    env = {**os.environ, "DSH_FS_MCP_SDK_ONLY": "1" if sdk_only else "0"}
    server = [sys.executable, "-m", "dsh_fs.cli.main", "mcp", "--root", folder]
    measured = mcp_floor.drive(server, folder, name, calls, env=env)
    if b'"isError":false' not in measured["answer"]:
        raise RuntimeError(measured["answer"][:300].decode("utf-8", "replace"))
    return measured


def _transport_floor(folder: str, name: str, calls: int) -> float:
    """Seconds per round trip of the same bare client against an echo server that writes the
    answer ``dsh-fs mcp`` gave to the same call (``bench/mcp_floor.py``): the pipes' floor."""
    sys.path.insert(0, HERE)
    import mcp_floor

    server = [sys.executable, "-m", "dsh_fs.cli.main", "mcp", "--root", folder]
    answer = mcp_floor.drive(server, folder, name, 1)["answer"]
    with tempfile.TemporaryDirectory(prefix="dsh-fs-mcp-floor-") as spare:
        canned = os.path.join(spare, "answer.json")
        with open(canned, "wb") as handle:
            handle.write(answer)
        return mcp_floor.drive([sys.executable, "-c", mcp_floor.ECHO, canned], folder, name, calls)["wall_us"] / 1e6


def mcp_rows(path: str, calls: int, notes: list[str]) -> list[Row]:
    """The MCP stdio round-trip rows: the target row is the bare JSON-lines client's round trip
    against its floor (the echo transport plus the call as a woken process runs it); the
    server's own CPU per round trip; the rest is info."""
    r = bench_mcp(path, calls)
    floor = r["floor"] + r["woken"]
    base = {"ours_mem": None, "baseline": "the same call in process", "base": r["base"], "base_mem": None}
    notes.append("MCP stdio rows: the bare JSON-lines client (blocking pipes, one `json.dumps` and one `readline` a "
                 "call) measures the server, not a client's own work; its floor is the same client against a Python "
                 "echo server writing the same answer line over the same pipes plus the same `read` in process with "
                 "a 200 µs sleep before each call (a process woken by each request: caches and predictors cold; "
                 f"{r['woken'] * 1e6:.1f} µs here against {r['base'] * 1e6:.1f} µs in a hot loop) "
                 "(bench/mcp_floor.py). The server's CPU is its process's user + system time per round trip (every "
                 "thread, `/proc/PID/stat`). The SDK-client row drives the same server with the MCP SDK's "
                 "`ClientSession`, whose own work (~6× an in-process call) is not ours; `DSH_FS_MCP_SDK_ONLY=1` sends "
                 "every line to the SDK (bench/README.md, \"One dispatcher\").")
    return [
        {"workload": "MCP round trip per read call (stdio, small file), a bare JSON-lines client, against its floor",
         "ours": r["bare"], "ours_mem": None,
         "baseline": "the echo transport + the same call in process, woken per call (`bench/mcp_floor.py`)",
         "base": floor, "base_mem": None, "ratio": r["bare"] / floor, "target": f"≤ {MCP_STDIO_TARGET:g}×",
         "met": r["bare"] / floor <= MCP_STDIO_TARGET},
        {"workload": "MCP stdio: the server process's own CPU per read round trip (bare client)",
         "ours": r["server_cpu"], "ours_mem": None, "baseline": "the same call's CPU in process",
         "base": r["call_cpu"], "base_mem": None, "ratio": r["server_cpu"] / r["call_cpu"], "target": "(info)",
         "met": None},
        {"workload": "MCP round trip per read call (stdio, small file), a bare JSON-lines client", "ours": r["bare"],
         **base, "ratio": r["bare"] / r["base"], "target": "(info)", "met": None},
        {"workload": "MCP round trip per read call (stdio, small file), the MCP SDK's client", "ours": r["ours"],
         **base, "ratio": r["ours"] / r["base"], "target": "(info)", "met": None},
        {"workload": "MCP round trip per read call (stdio, small file), bare client, every line to the SDK",
         "ours": r["bare_sdk"], **base, "ratio": r["bare_sdk"] / r["base"], "target": "(info)", "met": None},
        {"workload": "MCP stdio transport floor: the bare client against an echo server writing the same answer",
         "ours": r["floor"], **base, "ratio": r["floor"] / r["base"], "target": "(info)", "met": None},
    ]
