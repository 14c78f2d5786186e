"""SIGKILL during a mutation and during a rewind, many times (the crash suite's style): a child
process keeps changing files of a named session (writes, edits, patch deletes and adds, some of a
megabyte) with the durable history, rewinding to step 0 every few changes; it is killed at a
random moment. After each kill: every file holds one whole content the child wrote (never a mix),
the history is consistent (every completed change's file is at its recorded version unless a
later change of it follows), and the same rewind run again (to step 0) completes: the files are
exactly the starting tree."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

import dsh_fs
from dsh_fs.fs_local import atomic
from dsh_fs.history.sqlite_store import SqliteHistoryStore

KILLS = 25
"""kills per test run (each one a fresh child)"""

START = {"small.txt": "small.txt gen 0\n", "big.txt": "big.txt gen 0\n" + "x" * (1 << 20) + "\n"}

CHILD = r"""
import os, random, sys
import anyio
import dsh_fs
from dsh_fs.history.sqlite_store import SqliteHistoryStore

ws, db, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
rng = random.Random(seed)

def body(name, gen):
    filler = "x" * (1 << 20) if name.startswith("big") else "y" * rng.choice([0, 10, 5000])
    return f"{name} gen {gen}\n{filler}\n"

async def main():
    ctx = dsh_fs.create_context(root=ws, policy=False, history=SqliteHistoryStore(db, private=False),
                                faces=["apply_patch"])
    session = dsh_fs.Session(cwd=ws, id="S")
    gen = 1
    print("ready", flush=True)
    while True:
        gen += 1
        op = rng.choice(["write", "write", "edit", "patch", "rewind"])
        name = rng.choice(["small.txt", "big.txt", "new.txt", "big-new.txt"])
        path = os.path.join(ws, name)
        if op == "write":
            r = await ctx.tools.execute("write", {"file_path": path, "content": body(name, gen)}, session=session)
        elif op == "edit" and os.path.exists(path):
            first = open(path).readline().rstrip("\n")
            r = await ctx.tools.execute("edit", {"file_path": path, "old_string": first,
                                                 "new_string": f"{name} gen {gen}"}, session=session)
        elif op == "patch":
            if os.path.exists(path):
                patch = f"*** Begin Patch\n*** Delete File: {path}\n*** End Patch"
            else:
                patch = f"*** Begin Patch\n*** Add File: {path}\n+{name} gen {gen}\n*** End Patch"
            r = await ctx.tools.execute("apply_patch", {"input": patch}, session=session)
        else:
            await ctx.rewind("S", to=0)

anyio.run(main)
"""


def tree(ws: Path) -> dict[str, bytes]:
    return {name: (ws / name).read_bytes() for name in sorted(os.listdir(ws))}


def check_whole(ws: Path, killed: int) -> None:
    """Every file is one content the child (or the start) wrote: its first line names it and a
    generation, and the rest is one filler (never a mix or a cut). The only other names allowed
    are temp files of the killed child (``killed``: its pid), which a kill between a temp file's
    link and its rename leaves (rare, but a matter of timing); they are removed here, as the
    stale-temp sweep would once they are old."""
    for name in os.listdir(ws):
        if name.startswith("."):
            found = atomic.TEMP_NAME.fullmatch(name)
            assert found and int(found.group(1)) == killed, f"temp file left: {name}"
            (ws / name).unlink()
    for name, data in tree(ws).items():
        assert not name.startswith("."), f"temp file left: {name}"
        first, _, rest = data.decode().partition("\n")
        assert first.startswith(f"{name} gen "), (name, first[:80])
        filler = rest.rstrip("\n")
        assert set(filler) <= {"x"} or set(filler) <= {"y"}, (name, len(rest))
        assert rest == "" or rest.endswith("\n")
        if name.startswith("big") and filler:
            assert len(filler) == 1 << 20, (name, len(filler))


async def consistent_then_rewound(ws: Path, db: Path) -> None:
    ctx = dsh_fs.create_context(root=str(ws), policy=False, history=SqliteHistoryStore(db, private=False))
    steps = await ctx.history("S")
    last: dict[str, object] = {}
    for step in steps:
        for change in step.changes:
            last[change.key] = change
            if change.dest_key is not None:
                last[change.dest_key] = change
    fs = ctx.fs.inner
    for key, change in last.items():
        if change.pending or change.op in ("delete", "rename"):  # type: ignore[attr-defined]
            continue
        target = await fs.resolve(key)
        assert await fs.is_current(target, change.after_version), (key, change)  # type: ignore[attr-defined]
    result = await ctx.rewind("S", to=0)
    assert not result.refused and result.error is None, result
    await ctx.aclose()


@pytest.mark.timeout(600)
def test_sigkill_during_mutations_and_rewinds(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    for name, text in START.items():
        (ws / name).write_text(text)
    start = tree(ws)
    db = tmp_path / "history.sqlite3"
    env = {k: v for k, v in os.environ.items() if not k.startswith("DSH_FS_")}
    env["DSH_FS_LOCK_DIR"] = str(tmp_path / "locks")
    rng = random.Random(20261206)
    for kill in range(KILLS):
        child = subprocess.Popen([sys.executable, "-c", CHILD, str(ws), str(db), str(kill)], env=env, text=True,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert child.stdout is not None
        assert child.stdout.readline() == "ready\n", child.stderr.read() if child.stderr else ""
        time.sleep(rng.uniform(0.0, 0.6))
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
        assert child.returncode == -signal.SIGKILL, child.stderr.read() if child.stderr else ""
        check_whole(ws, child.pid)
        anyio.run(consistent_then_rewound, ws, db)
        assert tree(ws) == start, kill
