"""Many agents on one ``dsh-fs mcp --http`` server (loopback), next to the same loop in process.

usage::

    python bench/http_agents_bench.py [--agents 64] [--seconds 60] [--json]

The server is the real command, ``dsh-fs mcp --root <workspace> --http 127.0.0.1:0`` with a
token file of ``--agents`` minted tokens (``--tokens N --token-file``); each agent is one MCP
session of its own token, driven by the MCP SDK's streamable HTTP client. Every agent loops
for ``--seconds``, alternating between its own file and one file all agents share:
``read`` the file, then ``edit`` it, replacing the line ``tail`` by a line of its own
(``a<agent>-<n>``) followed by ``tail``. The same loop then runs in this process: the same
number of agents as tasks of one event loop, each with its own ``Session`` (its own
observations), calling ``ctx.tools.execute`` on a fresh copy of the workspace.

Reported for each side: calls per second (all agents together), the p50 and p99 latency of
one call (``read`` and ``edit`` alike), edits that succeeded and edits that lost. Checked on
each side, from the files on disk after the run: every edit reported as done is present
exactly once in its file and no other line was added (``lost`` / ``unreported`` both 0),
an agent's own file never refuses its edit, and every refused edit of the shared file is
``FS_STALE_VERSION`` (another agent changed it between this agent's read and its edit).

Loopback only; bounded in time (the loop's deadline, then a hard limit of ``seconds + 120``
on the whole run); the server is stopped in every case. Library use (``bench/run.py``):
``rows(work, agents=…, seconds=…)``; ``run(work, agents=…, seconds=…)`` for one side's
figures (``tests/e2e/mcp/test_http_agents.py`` asserts the invariants with 8 agents).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import anyio

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "src"))

SHARED = "shared.txt"
TAIL = "tail"
STARTUP_TIMEOUT = 60.0
"""seconds the server may take to announce its URL"""
SLACK = 120.0
"""seconds a run may take past its loop's deadline before it is abandoned"""
STALE = "FS_STALE_VERSION"

Call = Callable[[str, dict[str, Any]], Awaitable[tuple[bool, str | None, str]]]
"""one tool call: ``(name, arguments) → (is_error, error code, text)``"""


@dataclass
class Side:
    """One side's figures and invariants (times in seconds)."""

    agents: int
    seconds: float
    calls: int = 0
    calls_per_s: float = 0.0
    p50: float = 0.0
    p99: float = 0.0
    edits_done: int = 0
    edits_lost_race: int = 0
    lost: int = 0
    """edits reported done that are not in their file exactly once"""
    unreported: int = 0
    """lines in the files that no reported edit accounts for"""
    bad_refusals: list[str] = field(default_factory=list)
    """refused edits that are not a shared-file ``FS_STALE_VERSION`` (at most 10 kept)"""
    refused_total: int = 0

    @property
    def ok(self) -> bool:
        """0 lost, nothing unreported, every refusal a shared-file stale version."""
        return self.lost == 0 and self.unreported == 0 and not self.bad_refusals and self.edits_done > 0


def make_workspace(root: str, agents: int) -> None:
    """The shared file and one file per agent, each holding the line ``tail``."""
    os.makedirs(root, exist_ok=True)
    for name in [SHARED, *(f"own-{i:02}.txt" for i in range(agents))]:
        with open(os.path.join(root, name), "w", encoding="utf-8") as handle:
            handle.write(f"{TAIL}\n")


async def _agent(index: int, call: Call, deadline: float, side: Side, times: list[float],
                 done: dict[str, list[str]]) -> None:
    own = f"own-{index:02}.txt"
    n = 0
    while time.monotonic() < deadline:
        for name in (own, SHARED):
            tag = f"a{index:02}-{n}"
            n += 1
            start = time.perf_counter()
            is_error, code, text = await call("read", {"file_path": name})
            times.append(time.perf_counter() - start)
            if is_error:
                side.bad_refusals.append(f"read {name}: {text[:200]}")
                return
            start = time.perf_counter()
            is_error, code, text = await call(
                "edit", {"file_path": name, "old_string": TAIL, "new_string": f"{tag}\n{TAIL}"})
            times.append(time.perf_counter() - start)
            if not is_error:
                done[name].append(tag)
                side.edits_done += 1
                continue
            side.refused_total += 1
            if name == SHARED and code == STALE:
                side.edits_lost_race += 1
            elif len(side.bad_refusals) < 10:
                side.bad_refusals.append(f"edit {name}: {code} {text[:200]}")


async def _loop(root: str, agents: int, seconds: float, calls: list[Call]) -> Side:
    """Run every agent's loop (``calls[i]`` is agent ``i``'s call), then check the files."""
    side = Side(agents=agents, seconds=seconds)
    times: list[float] = []
    done: dict[str, list[str]] = {SHARED: [], **{f"own-{i:02}.txt": [] for i in range(agents)}}
    started = time.monotonic()
    deadline = started + seconds
    async with anyio.create_task_group() as tg:
        for i in range(agents):
            tg.start_soon(_agent, i, calls[i], deadline, side, times, done)
    took = time.monotonic() - started
    side.calls = len(times)
    side.calls_per_s = len(times) / took if took > 0 else 0.0
    if times:
        ordered = sorted(times)
        side.p50 = statistics.median(ordered)
        side.p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    for name, tags in done.items():
        with open(os.path.join(root, name), encoding="utf-8") as handle:
            lines = handle.read().split("\n")
        if lines[-2:] != [TAIL, ""]:
            side.unreported += 1  # the file no longer ends with the tail line: something else wrote it
        present: dict[str, int] = {}
        for line in lines[:-2]:
            present[line] = present.get(line, 0) + 1
        side.lost += sum(1 for tag in tags if present.get(tag) != 1)
        side.unreported += len(set(present) - set(tags))
    return side


# -- in process ----------------------------------------------------------------------------


async def _in_process(root: str, agents: int, seconds: float) -> Side:
    import dsh_fs

    ctx = dsh_fs.create_context(cwd=root)

    def caller() -> Call:
        session = dsh_fs.Session(root)

        async def call(name: str, args: dict[str, Any]) -> tuple[bool, str | None, str]:
            result = await ctx.tools.execute(name, args, session=session)
            code = result.error.code if result.error is not None else None
            return result.is_error, code, result.text

        return call

    return await _loop(root, agents, seconds, [caller() for _ in range(agents)])


# -- over HTTP -----------------------------------------------------------------------------


@contextlib.contextmanager
def _server(root: str, agents: int, private: str) -> Any:
    """``dsh-fs mcp --http 127.0.0.1:0`` with ``agents`` minted tokens; yields ``(url, tokens)``."""
    from dsh_fs.mcp import load_token_file

    token_file = os.path.join(private, "tokens")
    errlog = tempfile.TemporaryFile("w+")
    proc = subprocess.Popen(
        [sys.executable, "-m", "dsh_fs.cli.main", "mcp", "--root", root, "--tokens", str(agents),
         "--token-file", token_file, "--http", "127.0.0.1:0"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=errlog,
    )
    try:
        give_up = time.monotonic() + STARTUP_TIMEOUT
        while True:
            errlog.seek(0)
            log = errlog.read()
            found = re.search(r" at (http://127\.0\.0\.1:\d+/mcp)\n", log)
            if found:
                break
            if proc.poll() is not None or time.monotonic() > give_up:
                raise RuntimeError(f"dsh-fs mcp --http did not start: {log[-2000:]}")
            time.sleep(0.05)
        yield found.group(1), list(load_token_file(token_file))
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        errlog.close()


@contextlib.asynccontextmanager
async def _mcp_caller(url: str, token: str) -> AsyncIterator[Call]:
    """One initialized MCP session (the SDK's streamable HTTP client) as a ``Call``."""
    import httpx2
    import mcp.types as types
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from pydantic import TypeAdapter

    class _Raw(types.Request[dict[str, Any] | None, str]):
        """``tools/call`` with the raw result (the error code is in ``_meta.dsh_fs``)."""

    raw = TypeAdapter(dict[str, Any])
    timeout = httpx2.Timeout(30.0, read=120.0)
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=timeout) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                with anyio.fail_after(STARTUP_TIMEOUT):
                    await session.initialize()

                async def call(name: str, args: dict[str, Any]) -> tuple[bool, str | None, str]:
                    got = await session.send_request(
                        _Raw(method="tools/call", params={"name": name, "arguments": args}), raw)
                    error = ((got.get("_meta") or {}).get("dsh_fs") or {}).get("error")
                    text = "".join(b.get("text", "") for b in got.get("content", []) if b.get("type") == "text")
                    return bool(got.get("isError", False)), (error or {}).get("code"), text

                yield call


async def _over_http(root: str, agents: int, seconds: float, private: str) -> Side:
    with _server(root, agents, private) as (url, tokens):
        async with contextlib.AsyncExitStack() as stack:
            calls = [await stack.enter_async_context(_mcp_caller(url, tokens[i])) for i in range(agents)]
            return await _loop(root, agents, seconds, calls)


# -- both ----------------------------------------------------------------------------------


def run(work: str, *, agents: int = 64, seconds: float = 60.0) -> dict[str, Side]:
    """Both sides, each on a fresh workspace under ``work``: ``{"http": …, "in_process": …}``.

    :raises TimeoutError: a side did not finish within ``seconds + SLACK``
    :raises RuntimeError: the server did not start
    """
    out: dict[str, Side] = {}
    private = tempfile.mkdtemp(prefix="dsh-fs-agents-")
    os.chmod(private, 0o700)
    try:
        for kind in ("in_process", "http"):
            root = os.path.realpath(os.path.join(work, f"agents-{kind}"))
            shutil.rmtree(root, ignore_errors=True)
            make_workspace(root, agents)

            async def main(root: str = root, kind: str = kind) -> Side:
                with anyio.fail_after(seconds + SLACK):
                    if kind == "http":
                        return await _over_http(root, agents, seconds, private)
                    return await _in_process(root, agents, seconds)

            out[kind] = anyio.run(main)
            shutil.rmtree(root, ignore_errors=True)
    finally:
        shutil.rmtree(private, ignore_errors=True)
    return out


def rows(work: str, *, agents: int = 64, seconds: float = 60.0) -> list[dict[str, Any]]:
    """The bench table's row (``bench/run.py``): p50 per call over HTTP next to in process."""
    sides = run(work, agents=agents, seconds=seconds)
    http, local = sides["http"], sides["in_process"]

    def figures(side: Side) -> str:
        return (f"{side.calls_per_s:.0f} calls/s, p99 {side.p99 * 1000:.1f} ms, {side.edits_done} edits, "
                f"{side.edits_lost_race} stale")

    return [{
        "workload": f"MCP over HTTP, {agents} agents (tokens / sessions) each looping read → edit on its own file "
                    f"and on one shared file, {seconds:g} s: p50 per call; {figures(http)}; "
                    f"lost {http.lost}, unreported {http.unreported}, other refusals {len(http.bad_refusals)}",
        "ours": http.p50, "ours_mem": None,
        "baseline": f"the same loop in process ({figures(local)}; lost {local.lost})",
        "base": local.p50, "base_mem": None, "ratio": http.p50 / local.p50 if local.p50 else None,
        "target": "0 lost, every loser FS_STALE_VERSION (report)",
        "met": http.ok and local.ok,
    }]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--agents", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--json", action="store_true", help="print both sides' figures as JSON")
    args = parser.parse_args(argv)
    work = tempfile.mkdtemp(prefix="dsh-fs-agents-bench-")
    os.environ.setdefault("DSH_FS_LOCK_DIR", os.path.join(work, "locks"))
    try:
        sides = run(work, agents=args.agents, seconds=args.seconds)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps({k: {**asdict(v), "ok": v.ok} for k, v in sides.items()}, indent=2))
    else:
        for kind, side in sides.items():
            print(f"{kind:>10}: {side.calls_per_s:8.1f} calls/s  p50 {side.p50 * 1000:7.2f} ms  "
                  f"p99 {side.p99 * 1000:7.2f} ms  edits {side.edits_done}  stale {side.edits_lost_race}  "
                  f"lost {side.lost}  unreported {side.unreported}  other refusals {side.bad_refusals}")
    return 0 if all(side.ok for side in sides.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
