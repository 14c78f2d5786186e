#!/usr/bin/env python3
"""History rows of the benchmark (docs/HISTORY.md), ratios in one run.

* a small ``edit`` and ``write`` call with the history on (in memory, and the durable SQLite
  store of a named session) → the same call with it off (target ≤ 1.15× for memory; the SQLite
  row adds two committed transactions, info);
* the same on S3 (loopback moto), with the S3 history store: time on → off, and the extra
  requests per mutation (target: at most 1; reported as measured);
* an ``edit`` near the end of a 100 MB file (``--quick``: 40 MB) on → off (over the 16 MiB copy
  cap: the edit is kept as its replacement, a constant);
* ``rewind`` of 100 steps over 20 files → ``git checkout`` of the same trees (the same 20
  files back to the first commit).

usage::

    python bench/history_bench.py [--quick] [--json]

Library use (``bench/run.py``): ``rows(work, quick=…)`` returns the table's rows.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

import anyio

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "src"))

import dsh_fs  # noqa: E402
from dsh_fs import Session  # noqa: E402

TARGET = 1.15


def _row(workload: str, ours: float, base: float, baseline: str, target: str | None = None,
         limit: float | None = None) -> dict[str, Any]:
    ratio = ours / base
    return {"workload": workload, "ours": ours, "ours_mem": None, "baseline": baseline, "base": base,
            "base_mem": None, "ratio": ratio, "target": target or "(info)",
            "met": None if limit is None else ratio <= limit}


async def _calls(ctx: Any, session: Session, path: str, kind: str, calls: int) -> float:
    """Mean seconds per call of ``calls`` alternating edits (or writes) of ``path``."""
    text = open(path, encoding="utf-8").read()
    await ctx.tools.execute("read", {"file_path": path}, session=session)
    start = time.perf_counter()
    for i in range(calls):
        if kind == "edit":
            old, new = ("step 7\n", "STEP 7\n") if i % 2 == 0 else ("STEP 7\n", "step 7\n")
            result = await ctx.tools.execute("edit", {"file_path": path, "old_string": old, "new_string": new},
                                             session=session)
        else:
            result = await ctx.tools.execute("write", {"file_path": path, "content": text + str(i % 2)},
                                             session=session)
        assert not result.is_error, result.text
    return (time.perf_counter() - start) / calls


def _small_file(folder: str, name: str) -> str:
    path = os.path.join(folder, name)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("".join(f"    value_{i} = compute(alpha, beta)  # step {i}\n" for i in range(200)))
    return path


async def _local_small(work: str, quick: bool) -> list[dict[str, Any]]:
    from dsh_fs.history.sqlite_store import SqliteHistoryStore

    folder = os.path.join(work, "history-small")
    os.makedirs(folder)
    batches, calls = (3, 40) if quick else (9, 100)
    rows = []
    for kind in ("edit", "write"):
        times: dict[str, list[float]] = {"off": [], "memory": [], "sqlite": []}
        for batch in range(batches):
            for mode in times:
                path = _small_file(folder, f"{kind}-{mode}-{batch}.py")
                history: Any = {"off": False, "memory": True}.get(mode) or SqliteHistoryStore(
                    os.path.join(folder, f"h-{kind}-{batch}.sqlite3"), private=False)
                ctx = dsh_fs.create_context(root=folder, history=history)
                times[mode].append(await _calls(ctx, Session(cwd=folder), path, kind, calls))
                await ctx.aclose()
        off = min(times["off"])
        rows.append(_row(f"small-file {kind} call, history on (memory) (11 KiB, local)", min(times["memory"]), off,
                         f"the same {kind} call, history off", f"≤ {TARGET:g}×", TARGET))
        rows.append(_row(f"small-file {kind} call, history on (SQLite, named session)", min(times["sqlite"]), off,
                         f"the same {kind} call, history off"))
    return rows


async def _put_time(ws: Any, endpoint: str, size: int, calls: int) -> float:
    """Mean seconds of one PutObject of ``size`` bytes into ``ws``'s bucket (a client of its own,
    warmed by one first PUT)."""
    from dsh_fs.fs_s3.store import ObjectStore
    from dsh_fs.testing.workspaces import MOTO_CLIENT_OPTIONS

    objects = ObjectStore(ws.location.bucket, endpoint_url=endpoint, client_options=MOTO_CLIENT_OPTIONS)
    data = b"x" * size
    try:
        await objects.put("floor/warm", data)
        start = time.perf_counter()
        for i in range(calls):
            await objects.put(f"floor/{i}", data)
        return (time.perf_counter() - start) / calls
    finally:
        await objects.aclose()


async def _s3_calls(ws: Any, endpoint: str, body: str, kind: str, calls: int, *,
                    recorded: bool) -> tuple[float, float]:
    """Mean seconds and requests per call of ``calls`` alternating edits (or writes) of one S3
    object, with the S3 history store or without a history, after one warm-up call (every
    client's connection made before the clock starts)."""
    from dsh_fs.history.s3_store import S3HistoryStore
    from dsh_fs.testing.workspaces import MOTO_CLIENT_OPTIONS

    await ws.put("bench.py", body.encode())
    fs = await ws.provider()
    store = S3HistoryStore(ws.location.bucket, endpoint_url=endpoint, client_options=MOTO_CLIENT_OPTIONS) \
        if recorded else None
    ctx = dsh_fs.create_context(provider=fs, history=store or False)
    session = Session(cwd="/")
    await ctx.tools.execute("read", {"file_path": "/bench.py"}, session=session)
    warm = await ctx.tools.execute("edit", {"file_path": "/bench.py", "old_string": "step 9\n",
                                            "new_string": "step 9 \n"}, session=session)
    assert not warm.is_error, warm.text
    before = fs.store.requests + (store.objects.requests if store else 0)
    start = time.perf_counter()
    for i in range(calls):
        if kind == "edit":
            old, new = ("step 7\n", "STEP 7\n") if i % 2 == 0 else ("STEP 7\n", "step 7\n")
            args = {"file_path": "/bench.py", "old_string": old, "new_string": new}
        else:
            args = {"file_path": "/bench.py", "content": body + str(i % 2)}
        result = await ctx.tools.execute(kind, args, session=session)
        assert not result.is_error, result.text
    elapsed = (time.perf_counter() - start) / calls
    requests = (fs.store.requests + (store.objects.requests if store else 0) - before) / calls
    await ctx.aclose()
    return elapsed, requests


async def _s3_small(endpoint: str, quick: bool) -> list[dict[str, Any]]:
    from dsh_fs.testing.workspaces import S3Workspace

    calls, batches = (10, 2) if quick else (40, 3)
    rows = []
    ws = await S3Workspace(endpoint_url=endpoint).create()
    body = "".join(f"    value_{i} = compute(alpha, beta)  # step {i}\n" for i in range(200))
    try:
        for kind in ("edit", "write"):
            out: dict[str, tuple[float, float]] = {}
            for _batch in range(batches):  # off and on in turn; the fastest batch of each
                for mode in ("off", "on"):
                    elapsed, requests = await _s3_calls(ws, endpoint, body, kind, calls, recorded=mode == "on")
                    if mode not in out or elapsed < out[mode][0]:
                        out[mode] = (elapsed, requests)
            extra = out["on"][1] - out["off"][1]
            rows.append(_row(f"S3 {kind} call, history on (S3 store; loopback moto), {extra:g} extra "
                             f"request{'' if extra == 1 else 's'} per mutation ({out['off'][1]:g} → {out['on'][1]:g})",
                             out["on"][0], out["off"][0], f"the same {kind} call, history off",
                             f"≤ {TARGET:g}×, ≤ 1 extra request", TARGET))
            rows[-1]["met"] = rows[-1]["met"] and extra <= 1
            floor = out["off"][0] + await _put_time(ws, endpoint, len(body) + 512, calls)
            rows.append(_row(f"S3 {kind} call, history on, against its floor (loopback moto)", out["on"][0], floor,
                             f"the same call off + one PutObject of the intent's size (the record stored before "
                             f"the change: bench/README.md)"))
    finally:
        await ws.aclose()
    return rows


async def _big_edit(work: str, quick: bool) -> list[dict[str, Any]]:
    size = (40 if quick else 100) * 1_000_000
    folder = os.path.join(work, "history-big")
    os.makedirs(folder)
    path = os.path.join(folder, "big.txt")
    line = "2024-01-01 12:00:00 INFO the quick brown fox jumps over the lazy dog\n"
    with open(path, "w", encoding="utf-8") as handle:
        count = size // len(line)
        for start in range(0, count, 100_000):
            handle.write("".join(f"{i:09d} {line}" for i in range(start, min(count, start + 100_000))))
        marker = f"{count - 50:09d} 2024"
    times: dict[str, list[float]] = {"off": [], "on": []}
    for i in range(2 if quick else 3):
        for mode in ("off", "on"):
            ctx = dsh_fs.create_context(root=folder, history=mode == "on")
            session = Session(cwd=folder)
            await ctx.tools.execute("read", {"file_path": path, "limit": 1}, session=session)
            old, new = (marker, marker + "!") if (i * 2 + (mode == "on")) % 2 == 0 else (marker + "!", marker)
            start = time.perf_counter()
            result = await ctx.tools.execute("edit", {"file_path": path, "old_string": old, "new_string": new},
                                             session=session)
            times[mode].append(time.perf_counter() - start)
            assert not result.is_error, result.text
            if mode == "on":
                (step,) = await ctx.history(session)
                assert step.changes[0].before.kind == "replacement"
            await ctx.aclose()
    os.unlink(path)
    return [_row(f"edit near the end of a {size // 1_000_000} MB file, history on (kept as its replacement: "
                 "no copy)", statistics.median(times["on"]), statistics.median(times["off"]),
                 "the same edit, history off", "report: a constant over off")]


async def _rewind(work: str, quick: bool) -> list[dict[str, Any]]:
    folder = os.path.join(work, "history-rewind")
    os.makedirs(folder)
    names = [f"f{i:02d}.py" for i in range(20)]
    for name in names:
        _small_file(folder, name)
    git = shutil.which("git")
    rows = []
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@b"}
    if git:
        for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "start"]):
            subprocess.run([git, *args], cwd=folder, check=True, env=env)
    ctx = dsh_fs.create_context(root=folder, history=True)
    session = Session(cwd=folder)
    for name in names:
        await ctx.tools.execute("read", {"file_path": name}, session=session)
    for step in range(100):
        name = names[step % 20]
        result = await ctx.tools.execute("edit", {"file_path": name, "old_string": f"# step {step // 20 * 10 + 5}\n",
                                                  "new_string": f"# step {step // 20 * 10 + 5} changed\n"},
                                         session=session)
        assert not result.is_error, result.text
    if git:
        subprocess.run([git, "commit", "-qam", "end"], cwd=folder, check=True, env=env)
    start = time.perf_counter()
    result = await ctx.rewind(session, to=0)
    ours = time.perf_counter() - start
    assert not result.refused and result.error is None
    await ctx.aclose()
    if not git:
        return [{"workload": "rewind of 100 steps over 20 files", "ours": ours, "ours_mem": None, "baseline": "—",
                 "base": None, "base_mem": None, "ratio": None, "target": "(git not found)", "met": None}]
    base = []
    for _ in range(3):
        subprocess.run([git, "checkout", "-q", "HEAD", "--", "."], cwd=folder, check=True)  # the end tree again
        start = time.perf_counter()
        subprocess.run([git, "checkout", "-q", "HEAD~1", "--", "."], cwd=folder, check=True)
        subprocess.run(["sync"], check=False)
        base.append(time.perf_counter() - start)
    rows.append(_row("rewind of 100 steps over 20 files (durable: 20 atomic writes + fsyncs)", ours,
                     statistics.median(base), "`git checkout` of the first commit's tree + `sync`", "report"))
    return rows


def rows(work: str, *, quick: bool = False, endpoint_url: str | None = None) -> list[dict[str, Any]]:
    """Every history row (S3 over ``endpoint_url``, else ``$DSH_FS_S3_ENDPOINT``, else a moto server
    started for them; left out with no moto)."""
    out: list[dict[str, Any]] = []
    out += anyio.run(_local_small, work, quick)
    out += anyio.run(_big_edit, work, quick)
    out += anyio.run(_rewind, work, quick)
    from dsh_fs.testing.moto_server import ENDPOINT_ENV, MotoServer

    endpoint = endpoint_url or os.environ.get(ENDPOINT_ENV)
    if endpoint:
        out += anyio.run(_s3_small, endpoint, quick, backend="asyncio")
    else:
        with MotoServer() as server:
            assert server.endpoint_url is not None
            out += anyio.run(_s3_small, server.endpoint_url, quick, backend="asyncio")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="history on vs off, rewind vs git checkout")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    work = tempfile.mkdtemp(prefix="dsh-fs-history-bench-")
    try:
        found = rows(work, quick=args.quick)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps(found))
    else:
        for row in found:
            ratio = "—" if row["ratio"] is None else f"{row['ratio']:.2f}×"
            print(f"{row['workload']}: {row['ours'] * 1000:.2f} ms vs {row['baseline']} "
                  f"{(row['base'] or 0) * 1000:.2f} ms = {ratio} ({row['target']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
