"""Framework-adapter overhead: one LangChain tool call next to the same registry call in process.

usage::

    python bench/frameworks_bench.py [--calls 300] [--batches 5] [--json]

Rows (best batch mean per call of interleaved batches, warm cache, a 200-line file):

* ``DshFsTool.ainvoke`` of ``read`` with a model ``ToolCall`` (LangChain builds the callback
  manager, the ``ToolMessage``) → ``ctx.tools.execute("read", …)`` itself, same session;
* ``DshFsTool.invoke`` (sync: the call hops to the toolkit's event loop thread) → the same.

Both are information rows: the overhead is LangChain's own per-call machinery plus, for the
sync call, one thread hand-off. Library use (``bench/run.py``): ``rows(work)`` returns row dicts.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from typing import Any

import anyio


def rows(work: str, *, calls: int = 300, batches: int = 5) -> list[dict[str, Any]]:
    """The async and sync LangChain rows (needs langchain-core; ``[]`` without it)."""
    try:
        from dsh_fs.adapters.langchain import DshFsToolkit
    except ImportError:
        return []
    import dsh_fs

    folder = os.path.join(work, "frameworks")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "small.txt")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("".join(f"line {n} of a small file\n" for n in range(1, 201)))
    ctx = dsh_fs.create_context(root=folder)
    toolkit = DshFsToolkit(ctx)
    (read,) = [tool for tool in toolkit.get_tools() if tool.name == "read"]
    args = {"file_path": path}
    call = {"type": "tool_call", "id": "c1", "name": "read", "args": args}

    async def registry() -> None:
        if (await ctx.tools.execute("read", args, session=toolkit.session)).is_error:
            raise RuntimeError("read failed")

    async def langchain_async() -> None:
        if (await read.ainvoke(call)).status != "success":
            raise RuntimeError("read failed")

    def langchain_sync() -> None:
        if read.invoke(call).status != "success":
            raise RuntimeError("read failed")

    async def measure_async() -> tuple[float, float]:
        best_ours = best_base = float("inf")
        for _ in range(batches):
            start = time.perf_counter()
            for _ in range(calls):
                await langchain_async()
            best_ours = min(best_ours, (time.perf_counter() - start) / calls)
            start = time.perf_counter()
            for _ in range(calls):
                await registry()
            best_base = min(best_base, (time.perf_counter() - start) / calls)
        return best_ours, best_base

    try:
        ours_async, base = anyio.run(measure_async)
        best_sync = float("inf")
        for _ in range(batches):
            start = time.perf_counter()
            for _ in range(calls):
                langchain_sync()
            best_sync = min(best_sync, (time.perf_counter() - start) / calls)
    finally:
        toolkit.close()
    shared = {"ours_mem": None, "baseline": "the same `read` registry call in process", "base": base,
              "base_mem": None, "target": "(info)", "met": None}
    return [
        {"workload": "LangChain tool call (`DshFsTool.ainvoke`, `read` of a 200-line file)", "ours": ours_async,
         "ratio": ours_async / base, **shared},
        {"workload": "LangChain sync tool call (`DshFsTool.invoke`, same read)", "ours": best_sync,
         "ratio": best_sync / base, **shared},
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--batches", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    work = tempfile.mkdtemp(prefix="dsh-fs-frameworks-bench-")
    os.environ.setdefault("DSH_FS_LOCK_DIR", os.path.join(work, "locks"))
    try:
        found = rows(work, calls=args.calls, batches=args.batches)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps(found))
    else:
        for row in found:
            print(f"{row['workload']}: ours {row['ours'] * 1e6:.0f} µs, baseline {row['base'] * 1e6:.0f} µs, "
                  f"{row['ratio']:.2f}× (overhead {(row['ours'] - row['base']) * 1e6:.0f} µs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
