"""A named session's history is shared by every process serving the name: two command-line
processes of one ``--session`` interleave their changes, and a rewind from a third process (the
library over the same durable store) sees and takes back all of them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

import dsh_fs
from dsh_fs.history.sqlite_store import SqliteHistoryStore, forget_history, prune_history


def cli(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "dsh_fs.cli.main", *args], cwd=cwd, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def env_for(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DSH_FS_")}
    env.update(DSH_FS_STATE_DIR=str(tmp_path / "state"), DSH_FS_LOCK_DIR=str(tmp_path / "locks"))
    return env


def test_two_processes_interleave_and_a_third_rewinds_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "shared.txt").write_text("base\n")
    env = env_for(tmp_path)
    rounds = 4
    for i in range(rounds):  # two processes at once each round, on their own files
        both = [cli(["write", f"a{i}.txt", "--content", f"a{i}\n", "--session", "S"], ws, env),
                cli(["write", f"b{i}.txt", "--content", f"b{i}\n", "--session", "S"], ws, env)]
        for proc in both:
            out, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, (out, err)
    done = cli(["read", "shared.txt", "--session", "S"], ws, env)
    assert done.wait(timeout=120) == 0
    done = cli(["edit", "shared.txt", "--old", "base", "--new", "changed", "--session", "S"], ws, env)
    assert done.wait(timeout=120) == 0, done.communicate()
    assert (ws / "shared.txt").read_text() == "changed\n"
    monkeypatch.setenv("DSH_FS_STATE_DIR", str(tmp_path / "state"))

    async def third() -> None:
        ctx = dsh_fs.create_context(root=str(ws), history=SqliteHistoryStore())
        steps = await ctx.history("S")
        assert [s.number for s in steps] == list(range(1, 2 * rounds + 2))
        assert sorted(p.rsplit("/", 1)[1] for s in steps[:-1] for p in s.paths) == sorted(
            [f"a{i}.txt" for i in range(rounds)] + [f"b{i}.txt" for i in range(rounds)])
        assert steps[-1].tool == "edit"
        result = await ctx.rewind("S", to=0)
        assert not result.refused and result.error is None
        await ctx.aclose()

    anyio.run(third)
    assert sorted(os.listdir(ws)) == ["shared.txt"] and (ws / "shared.txt").read_text() == "base\n"


def test_forget_and_prune_remove_a_history(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"

    async def record() -> None:
        ctx = dsh_fs.create_context(root=str(tmp_path), history=SqliteHistoryStore(path, private=False))
        for name in ("one", "two"):
            await ctx.tools.execute("write", {"file_path": f"{name}.txt", "content": "x"}, session=dsh_fs.Session(id=name))
        await ctx.checkpoint("one", "c")
        await ctx.aclose()

    anyio.run(record)
    import sqlite3

    conn = sqlite3.connect(path, isolation_level=None)
    assert forget_history(conn, "one") == 1
    assert forget_history(conn, "one") == 0
    assert conn.execute("SELECT COUNT(*) FROM checkpoints").fetchone()[0] == 0
    assert conn.execute("SELECT COUNT(*) FROM blobs").fetchone()[0] == 0
    assert prune_history(conn, 3600) == []
    assert prune_history(conn, 0, now=10**12) == ["two"]
    assert conn.execute("SELECT COUNT(*) FROM steps").fetchone()[0] == 0
    conn.close()
