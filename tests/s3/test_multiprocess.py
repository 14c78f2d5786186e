"""Several processes read-then-edit one S3 object at once (moto's S3 wire protocol on
loopback): every edit reported successful is in the final object exactly once, every other
edit got ``FS_STALE_VERSION``, and nothing else happened — zero lost updates. Only the
service's conditional writes coordinate the processes (no shared lock).

Not covered here: MCP transport (the processes drive the tool registry directly).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import anyio

from dsh_fs.testing.workspaces import S3Workspace

WORKER = os.path.join(os.path.dirname(__file__), "_edit_worker.py")
WORKERS = 3
ITERATIONS = 15


def test_concurrent_processes_lose_no_update(s3_endpoint: str, tmp_path: os.PathLike[str]) -> None:
    workspace = S3Workspace(endpoint_url=s3_endpoint)

    async def setup() -> None:
        await workspace.create()
        await workspace.put("counter.txt", b"START\nEND\n")

    anyio.run(setup, backend="asyncio")
    go_file = os.path.join(os.fspath(tmp_path), "go")
    procs = [
        subprocess.Popen(
            [sys.executable, WORKER, s3_endpoint, workspace.location.bucket, workspace.location.prefix,
             f"w{n}", str(ITERATIONS), go_file],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for n in range(WORKERS)
    ]
    with open(go_file, "w", encoding="ascii"):
        pass
    rows = []
    for proc in procs:
        out, err = proc.communicate(timeout=240)
        assert proc.returncode == 0, err[-2000:]
        rows += [json.loads(line) for line in out.splitlines()]

    async def final() -> bytes | None:
        try:
            return await workspace.get("counter.txt")
        finally:
            await workspace.aclose()

    content = (anyio.run(final, backend="asyncio") or b"").decode()
    assert len(rows) == WORKERS * ITERATIONS
    assert not any(row["read_error"] for row in rows)
    assert {row["code"] for row in rows} <= {None, "FS_STALE_VERSION"}
    won = [row["token"] for row in rows if row["code"] is None]
    lines = content.splitlines()
    assert lines[0] == "START" and lines[-1] == "END"
    assert sorted(lines[1:-1]) == sorted(won), "an edit reported successful is missing (or one appeared twice)"
    assert won, "no edit succeeded"
    print(f"{len(won)} edits won, {len(rows) - len(won)} were refused as stale")
