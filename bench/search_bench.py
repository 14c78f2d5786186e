"""glob/grep benchmark (tracker issue 10): the tools next to plain ripgrep with the same flags,
and on S3 next to a bare ListObjectsV2 walk.

usage::

    python bench/search_bench.py [--files N] [--total-mb N] [--s3-objects N] [--json]
    python bench/search_bench.py --only glob [--runs N] [--tree DIR]   # one tool's local rows

``--only glob|grep`` runs that tool's local rows alone (no S3 rows; ``grep`` keeps the peak
row), ``--runs`` sets the interleaved runs per row (default 5), ``--tree DIR`` builds the tree
there once and keeps it for the next run (a tree already there is used as it is).

Local rows (one generated tree of ``--files`` files, ``--total-mb`` MB in all, nested two
levels, a fifth of them ``.py``; read once so the cache is warm): each timing is the median of
5 interleaved runs of

* ``grep`` of a literal and of a regex through the registry (default profile: ``--sort=path``)
  → ``rg --no-config --json --follow --sort=path --regexp=…`` run by this script, its output read
  through a pipe (what the tool does before parsing);
* ``glob '**/*.py'`` (default profile: ``--sortr=modified``) → ``rg --files --follow --glob=**/*.py
  --sortr=modified --no-ignore --hidden <VCS excludes>``;
* a ``grep`` that matches about every line (about 10^7 matches over 1 GiB) in a child
  process: its peak memory growth (``ru_maxrss``) — the run stops at ``rawOutputMaxBytes``.

S3 rows (``--s3-objects`` small objects on a loopback moto server): ``glob '**/*.txt'`` and
``grep`` through the S3 provider (listing, mirror, ripgrep) → one bare ListObjectsV2 walk of
the same prefix (info: the walk is the floor for glob), and ``grep`` also → its request floor: the
same walk, then a GetObject of every object, ``tool_fs_search.mirror.FETCHES`` at a time (the mirror's own bound) (target ≤ 1.5×). Medians
of 3 runs (grep interleaved with its floor); the grep rows also report the requests one run sends. ``--s3-only`` runs only these.

Library use (``bench/run.py``): ``local(work, files, total_bytes)`` and ``s3(objects)``
return row dicts.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from typing import Any

import anyio

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "src"))

RUNS = 5


def make_tree(root: str, files: int, total_bytes: int) -> None:
    """``files`` files under ``root`` (100 per directory, two levels), ``total_bytes`` in all;
    one in 100 has the literal ``needle_token``; lines look like code and logs."""
    per_file = max(1, total_bytes // files)
    line = "    value = compute(alpha, beta)  # step {} of the pipeline\n"
    body = "".join(line.format(i) for i in range(per_file // len(line) + 2)).encode()[:per_file]
    for index in range(files):
        directory = os.path.join(root, f"pkg{index // 10000:02}", f"mod{(index // 100) % 100:02}")
        if index % 100 == 0:
            os.makedirs(directory, exist_ok=True)
        suffix = ".py" if index % 5 == 0 else (".txt", ".md", ".log", ".json")[index % 4]
        head = f"def handler_{index}(event):\n".encode()
        if index % 100 == 7:
            head += b"    needle_token = True\n"
        with open(os.path.join(directory, f"f{index:06}{suffix}"), "wb") as handle:
            handle.write(head + body[len(head):])


def _warm(root: str) -> None:
    for base, _dirs, names in os.walk(root):
        for name in names:
            with open(os.path.join(base, name), "rb") as handle:
                handle.read()


def _rg_time(rg: str, argv: list[str], cwd: str) -> float:
    start = time.perf_counter()
    with subprocess.Popen([rg, *argv], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL) as proc:
        assert proc.stdout is not None
        while proc.stdout.read(1 << 16):
            pass
    return time.perf_counter() - start


def _ours_time(ctx: Any, session: Any, tool: str, args: dict[str, Any]) -> tuple[float, str]:
    async def go() -> Any:
        return await ctx.tools.execute(tool, args, session=session)

    start = time.perf_counter()
    result = anyio.run(go)
    elapsed = time.perf_counter() - start
    if result.is_error:
        raise RuntimeError(f"{tool} failed: {result.text}")
    return elapsed, result.text


def peak_child(root: str, pattern: str) -> dict[str, Any]:
    """In this (child) process: one grep matching about every line; peak RSS growth (MiB)."""
    import dsh_fs

    ctx = dsh_fs.create_context(cwd=root)
    session = dsh_fs.Session(root)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    elapsed, text = _ours_time(ctx, session, "grep", {"pattern": pattern})
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"time": elapsed, "mem": (after - before) / 1024, "head": text.split("\n", 1)[0]}


def local(work: str, files: int, total_bytes: int, *, only: str | None = None, runs: int = RUNS,
          tree: str | None = None) -> list[dict[str, Any]]:
    """The local rows (see the module docstring): of one tool (``only``) or all; ``runs``
    interleaved runs per row; the tree in ``tree`` (built there when missing) or in ``work``."""
    import dsh_fs
    from dsh_fs.tool_fs_search.commands import glob_argv, grep_argv
    from dsh_fs.tool_fs_search.engine import find_ripgrep

    root = tree or os.path.join(work, "tree")
    if not os.path.isdir(root):
        make_tree(root, files, total_bytes)
    _warm(root)
    rg = find_ripgrep()
    assert rg is not None, "ripgrep is needed for the search rows"
    ctx = dsh_fs.create_context(cwd=root)
    session = dsh_fs.Session(root)
    size = f"{files // 1000}k files / {total_bytes / 2**30:.2f} GiB" if total_bytes >= 2**30 else \
        f"{files // 1000}k files / {total_bytes / 2**20:.0f} MiB"
    cases = [
        (f"`grep` literal over {size}", "grep", {"pattern": "needle_token"},
         grep_argv("needle_token", None, None, sorted_by_path=True, follow=True),
         "rg --json --follow --sort=path (same flags)"),
        (f"`grep` regex over {size}", "grep", {"pattern": r"def handler_\d*7\("},
         grep_argv(r"def handler_\d*7\(", None, None, sorted_by_path=True, follow=True),
         "rg --json --follow --sort=path (same flags)"),
        (f"`glob '**/*.py'` over {size}", "glob", {"pattern": "**/*.py"},
         glob_argv("**/*.py", None, newest_first=True, follow=True), "rg --files --follow --sortr=modified (same flags)"),
    ]
    rows = []
    for label, tool, args, argv, baseline in cases:
        if only is not None and tool != only:
            continue
        ours, base = [], []
        _ours_time(ctx, session, tool, args)  # warm
        for _ in range(runs):
            ours.append(_ours_time(ctx, session, tool, args)[0])
            base.append(_rg_time(rg, argv, root))
        o, b = statistics.median(ours), statistics.median(base)
        rows.append({"workload": label, "ours": o, "ours_mem": None, "baseline": baseline, "base": b,
                     "base_mem": None, "ratio": o / b, "target": "≤ 1.2×", "met": o / b <= 1.2})
    rows.extend(_ruled_rows(root, size, only, runs))
    if only not in (None, "grep"):
        return rows
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--peak", root], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr)
    peak = json.loads(proc.stdout.strip().splitlines()[-1])
    lines = total_bytes // 45
    rows.append({"workload": f"`grep .` (~{lines / 1e6:.0f}M matching lines) over {size}, stops at the raw cap: {peak['head']}",
                 "ours": peak["time"], "ours_mem": peak["mem"], "baseline": "—", "base": None, "base_mem": None,
                 "ratio": None, "target": "≤ 64 MiB", "met": peak["mem"] <= 64})
    return rows


def _ruled_rows(root: str, size: str, only: str | None, runs: int) -> list[dict[str, Any]]:
    """Info rows: the cost of deny rules (docs/PATH-RULES.md, P4: a walk of the searched tree
    before ripgrep runs, a judgement per printed path) — the same call with and without
    ``deny=[".env", "*.pem", "secrets/"]`` (nothing in the tree matches them)."""
    import dsh_fs

    plain, ruled = dsh_fs.create_context(cwd=root), dsh_fs.create_context(cwd=root, deny=[".env", "*.pem", "secrets/"])
    session = dsh_fs.Session(root)
    rows = []
    for tool, args in (("grep", {"pattern": "needle_token"}), ("glob", {"pattern": "**/*.py"})):
        if only is not None and tool != only:
            continue
        _ours_time(ruled, session, tool, args)  # warm
        with_rules, without = [], []
        for _ in range(runs):
            with_rules.append(_ours_time(ruled, session, tool, args)[0])
            without.append(_ours_time(plain, session, tool, args)[0])
        o, b = statistics.median(with_rules), statistics.median(without)
        rows.append({"workload": f"`{tool}` with 3 deny rules over {size}", "ours": o, "ours_mem": None,
                     "baseline": f"the same `{tool}` without rules", "base": b, "base_mem": None, "ratio": o / b,
                     "target": "(info)", "met": None})
    return rows


async def _s3(endpoint_url: str, objects: int) -> list[dict[str, Any]]:
    import dsh_fs
    from dsh_fs.testing.workspaces import S3Workspace
    from dsh_fs.tool_fs_search.mirror import FETCHES as FLOOR_FETCHES  # the mirror's own bound

    workspace = await S3Workspace(endpoint_url=endpoint_url).create()
    try:
        limiter = anyio.CapacityLimiter(16)

        async def put(i: int) -> None:
            async with limiter:
                await workspace.put(f"d{i // 100:03}/f{i:05}.txt", f"line one\nneedle {i}\n".encode())

        async with anyio.create_task_group() as tg:
            for i in range(objects):
                tg.start_soon(put, i)
        fs = await workspace.provider()
        ctx = dsh_fs.create_context(provider=fs, timeout_ms=1_800_000)  # moto is slow: no time budget here
        session = dsh_fs.Session()
        session.cwd = "/"

        async def timed(tool: str, args: dict[str, Any]) -> float:
            start = time.perf_counter()
            result = await ctx.tools.execute(tool, args, session=session)
            if result.is_error:
                raise RuntimeError(result.text)
            return time.perf_counter() - start

        async def walk() -> float:
            start = time.perf_counter()
            count = 0
            async for page in fs.store.list_all(workspace.location.prefix):  # type: ignore[attr-defined]
                count += len(page)
            assert count == objects
            return time.perf_counter() - start

        async def fetch_all() -> float:
            """The request floor of a grep: the same walk, then a GetObject of every object,
            FLOOR_FETCHES at a time (bodies read and dropped)."""
            start = time.perf_counter()
            limiter = anyio.CapacityLimiter(FLOOR_FETCHES)
            store = fs.store  # type: ignore[attr-defined]
            got = [0]

            async def get(key: str) -> None:
                async with limiter:
                    found = await store.get(key)
                    assert found is not None
                    got[0] += 1

            async with anyio.create_task_group() as tg:
                async for page in store.list_all(workspace.location.prefix):
                    for key, _, _ in page:
                        tg.start_soon(get, key)
            assert got[0] == objects
            return time.perf_counter() - start

        bare = statistics.median([await walk() for _ in range(3)])
        floors: list[float] = []
        rows = []
        for label, tool, args, runs in ((f"S3 `glob '**/*.txt'` over {objects} objects (loopback moto)", "glob",
                                         {"pattern": "**/*.txt"}, 3),
                                        (f"S3 `grep 'needle 1.*7'` over {objects} objects (loopback moto)", "grep",
                                         {"pattern": "needle 1.*7"}, 3)):
            times: list[float] = []
            sent = 0
            for _ in range(runs):  # grep interleaved with its floor: the machine's load hits both alike
                before = fs.store.requests  # type: ignore[attr-defined]
                times.append(await timed(tool, args))
                sent += fs.store.requests - before  # type: ignore[attr-defined]
                if tool == "grep":
                    floors.append(await fetch_all())
            ours = statistics.median(times)
            sent //= runs
            floor = statistics.median(floors) if floors else 0.0
            rows.append({"workload": label, "ours": ours, "ours_mem": None, "baseline": "bare ListObjectsV2 walk",
                         "base": bare, "base_mem": None, "ratio": ours / bare, "target": "(info)", "met": None,
                         "requests": sent})
            if tool == "grep":
                rows.append({"workload": label + f", next to its request floor ({sent:.0f} requests a run)",
                             "ours": ours, "ours_mem": None,
                             "baseline": f"ListObjectsV2 walk + GetObject of every object, {FLOOR_FETCHES} at a time",
                             "base": floor, "base_mem": None, "ratio": ours / floor, "target": "≤ 1.5×",
                             "met": ours / floor <= 1.5})
        await fs.aclose()  # type: ignore[attr-defined]
        return rows
    finally:
        await workspace.aclose()


def s3(objects: int, endpoint_url: str | None = None) -> list[dict[str, Any]]:
    """The S3 rows (a moto server is started unless ``endpoint_url`` or ``$DSH_FS_S3_ENDPOINT``)."""
    from dsh_fs.testing.moto_server import ENDPOINT_ENV, MotoServer

    endpoint_url = endpoint_url or os.environ.get(ENDPOINT_ENV)
    if endpoint_url:
        return anyio.run(_s3, endpoint_url, objects, backend="asyncio")
    with MotoServer() as server:
        assert server.endpoint_url is not None
        return anyio.run(_s3, server.endpoint_url, objects, backend="asyncio")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="glob/grep next to plain ripgrep and a bare S3 listing")
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--total-mb", type=float, default=1024)
    parser.add_argument("--s3-objects", type=int, default=10_000)
    parser.add_argument("--s3-only", action="store_true", help="only the S3 rows")
    parser.add_argument("--only", choices=("glob", "grep"), help="only this tool's local rows (no S3 rows)")
    parser.add_argument("--runs", type=int, default=RUNS, help=f"interleaved runs per row (default {RUNS})")
    parser.add_argument("--tree", help="build the tree here once and keep it (used as it is when there)")
    parser.add_argument("--peak", help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.peak:
        print(json.dumps(peak_child(args.peak, ".")))
        return 0
    import shutil
    import tempfile

    work = tempfile.mkdtemp(prefix="dsh-fs-search-bench-")
    try:
        rows = [] if args.s3_only else local(work, args.files, int(args.total_mb * 2**20), only=args.only,
                                             runs=args.runs, tree=args.tree)
        if args.only is None:
            rows += s3(args.s3_objects)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(rows, indent=1) if args.json else "\n".join(
        f"{r['workload']}: {r['ours']:.3f}s vs {r['baseline']} {r['base']:.3f}s = {r['ratio']:.2f}×" if r["base"] is not None
        else f"{r['workload']}: {r['ours']:.3f}s, peak {r['ours_mem']:.1f} MiB" for r in rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
