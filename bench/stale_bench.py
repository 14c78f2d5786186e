"""Stale-refusal benchmark (DEVIATIONS D30): the tokens an agent pays to recover when another
agent changed the file it was about to edit.

usage::

    python bench/stale_bench.py [--lines 2000] [--json]

Two agents read a file of ``--lines`` lines of code (page by page, as ``read``'s answers say),
the first changes one line, the second's
edit of that line is refused. With D30 (``default`` profile) the refusal ends with a diff and
the retry is built from it: the cost is the refusal plus the retry's answer. Without it (the
``reference`` profile) the agent re-reads the file before its retry: the refusal, every page
of the ``read`` and the retry's answer. Tokens are
estimated as UTF-8 bytes / 4 (as ``bench/formats_bench.py``); the calls run in process on the
local disk. Library use (``bench/run.py``): ``rows(work)``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "src"))

import anyio  # noqa: E402

import dsh_fs  # noqa: E402


def tokens(text: str) -> float:
    return len(text.encode()) / 4


def source(lines: int) -> str:
    """A module of ``lines`` lines with one setting the agents both change."""
    body = [f"    value_{i} = compute(alpha, beta, gamma)  # step {i}\n" for i in range(lines - 1)]
    body.insert(lines // 2, "TIMEOUT_SECONDS = 30\n")
    return "".join(body)


async def read_all(ctx: Any, name: str, agent: Any) -> float:
    """Read the whole file page by page as a model does (each ``Use offset=N to continue``
    followed); the tokens of every answer."""
    paid, offset = 0.0, 1
    while True:
        read = await ctx.tools.execute("read", {"file_path": name, "offset": offset}, session=agent)
        assert not read.is_error, read.text
        paid += tokens(read.text)
        more = re.search(r"Use offset=(\d+) to continue", read.text)
        if more is None:
            return paid
        offset = int(more.group(1))


async def recover(folder: str, lines: int, profile: str) -> dict[str, float]:
    """The race in ``profile``: tokens of each answer the loser receives until its edit lands."""
    path = os.path.join(folder, f"race-{profile}.py")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(source(lines))
    ctx = dsh_fs.create_context(cwd=folder, root=folder, profile=profile)
    winner, loser = dsh_fs.Session(cwd=folder), dsh_fs.Session(cwd=folder)
    name = os.path.basename(path)
    for agent in (winner, loser):
        await read_all(ctx, name, agent)
    won = await ctx.tools.execute("edit", {"file_path": name, "old_string": "TIMEOUT_SECONDS = 30",
                                           "new_string": "TIMEOUT_SECONDS = 60"}, session=winner)
    assert not won.is_error, won.text
    refused = await ctx.tools.execute("edit", {"file_path": name, "old_string": "TIMEOUT_SECONDS = 30",
                                               "new_string": "TIMEOUT_SECONDS = 45"}, session=loser)
    assert refused.error is not None and refused.error.code == "FS_STALE_VERSION", refused.text
    paid = tokens(refused.text)
    reread = 0.0
    if "\n+TIMEOUT_SECONDS = 60" in refused.text:  # D30: the retry is built from the diff alone
        old = next(line[1:] for line in refused.text.split("\n") if line.startswith("+TIMEOUT"))
    else:  # the full re-read
        reread = await read_all(ctx, name, loser)
        old = "TIMEOUT_SECONDS = 60"
    retried = await ctx.tools.execute("edit", {"file_path": name, "old_string": old,
                                               "new_string": "TIMEOUT_SECONDS = 45"}, session=loser)
    assert not retried.is_error, retried.text
    return {"refusal": paid, "reread": reread, "retry": tokens(retried.text),
            "total": paid + reread + tokens(retried.text)}


def rows(work: str, *, lines: int = 2000) -> list[dict[str, Any]]:
    """The row: tokens to recover with the diff → with a full re-read (see the module docstring)."""
    folder = os.path.join(work, "stale")
    os.makedirs(folder, exist_ok=True)

    async def both() -> tuple[dict[str, float], dict[str, float]]:
        return await recover(folder, lines, "default"), await recover(folder, lines, "reference")

    diff, full = anyio.run(both)
    return [{
        "workload": (f"tokens to recover from a stale edit refusal, two agents racing on a {lines}-line file: "
                     f"≈{diff['total']:.0f} with the diff (D30) vs ≈{full['total']:.0f} with a full re-read "
                     f"(≈{full['reread']:.0f} of them the read)"),
        "ours": None, "ours_mem": None, "baseline": "tokens: diff ÷ full re-read", "base": None, "base_mem": None,
        "ratio": diff["total"] / full["total"], "target": "(info)", "met": None,
    }]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=2000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    work = tempfile.mkdtemp(prefix="dsh-fs-stale-bench-")
    os.environ.setdefault("DSH_FS_LOCK_DIR", os.path.join(work, "locks"))
    try:
        found = rows(work, lines=args.lines)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps(found))
    else:
        for row in found:
            print(f"{row['workload']}: ratio {row['ratio']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
