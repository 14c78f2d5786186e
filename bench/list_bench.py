"""``list`` benchmark (docs/LIST.md): one directory of ``--entries`` files (100k by default),
listed through the registry (``list``, default profile: every child resolved and stat'ed by
the local provider, sorted, the first page rendered) next to ``os.scandir`` of the same
directory (names and types only, no stat).

usage::

    python bench/list_bench.py [--entries N] [--json]

Rows: the median time of 3 runs each, and the peak memory growth of one run of each in its
own child process (``ru_maxrss``). Library use (``bench/run.py``): ``rows(work, entries)``.
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

RUNS = 3


def make_dir(root: str, entries: int) -> None:
    """``entries`` small files directly in ``root`` (one in 100 a directory)."""
    os.makedirs(root, exist_ok=True)
    for i in range(entries):
        path = os.path.join(root, f"e{i:06}")
        if i % 100 == 0:
            os.mkdir(path)
        else:
            with open(path, "wb") as handle:
                handle.write(b"x\n")


def _ours(root: str) -> float:
    import dsh_fs

    ctx = dsh_fs.create_context(cwd=root)
    session = dsh_fs.Session(root)

    async def call() -> float:
        start = time.perf_counter()
        result = await ctx.tools.execute("list", {}, session=session)
        assert not result.is_error, result.text
        return time.perf_counter() - start

    return anyio.run(call)


def _scandir(root: str) -> float:
    start = time.perf_counter()
    with os.scandir(root) as entries:
        listed = sorted((e.name, e.is_dir(follow_symlinks=False)) for e in entries)
    assert listed
    return time.perf_counter() - start


def _hwm() -> int:
    """Peak resident memory of this process in KiB (Linux ``VmHWM``; else ``ru_maxrss``)."""
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _hwm_reset() -> int:
    """Reset the peak to the current resident size where Linux allows it (``clear_refs`` 5:
    ``ru_maxrss`` would keep the spawning parent's peak), then :func:`_hwm`."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as handle:
            handle.write("5")
    except OSError:
        pass
    return _hwm()


def _peak(which: str, root: str) -> float:
    """MiB of peak memory growth of one run of ``which`` in a child process."""
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--peak", which, root],
                          capture_output=True, text=True, check=True)
    return float(proc.stdout.strip().splitlines()[-1])


def rows(work: str, entries: int) -> list[dict[str, Any]]:
    """The rows (see the module docstring)."""
    root = os.path.join(work, "list-dir")
    if not os.path.isdir(root):
        make_dir(root, entries)
    _ours(root), _scandir(root)  # warm
    ours = statistics.median(_ours(root) for _ in range(RUNS))
    base = statistics.median(_scandir(root) for _ in range(RUNS))
    return [{"workload": f"`list` of one directory of {entries // 1000}k entries", "ours": ours,
             "ours_mem": _peak("ours", root), "baseline": "os.scandir + sort (names, types)", "base": base,
             "base_mem": _peak("scandir", root), "ratio": ours / base, "target": "(info)", "met": None}]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--peak", nargs=2, metavar=("WHICH", "ROOT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.peak:
        which, root = args.peak
        if which == "ours":
            import dsh_fs  # noqa: F401  (imports are not the listing's memory)
        before = _hwm_reset()
        (_ours if which == "ours" else _scandir)(root)
        print((_hwm() - before) / 1024)
        return
    import tempfile

    with tempfile.TemporaryDirectory(prefix="dsh-fs-list-bench-") as work:
        result = rows(work, args.entries)
    if args.json:
        print(json.dumps(result))
        return
    for row in result:
        print(f"{row['workload']}: ours {row['ours']:.3f}s / {row['ours_mem']:.1f} MiB; "
              f"{row['baseline']} {row['base']:.3f}s / {row['base_mem']:.1f} MiB; ratio {row['ratio']:.1f}x")


if __name__ == "__main__":
    main()
