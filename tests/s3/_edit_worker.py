"""A separate process that reads then edits one S3 object in a loop through the tool stack
(helper for ``test_multiprocess.py``; not a test module).

usage: python _edit_worker.py ENDPOINT BUCKET PREFIX WORKER ITERATIONS GO_FILE

Waits until GO_FILE exists (so the workers start together), then for each iteration: ``read``
``counter.txt``, then ``edit`` it to insert ``<worker>-<i>`` before ``END``. Prints one JSON
line per iteration: the token, whether the read failed, and the edit's error code (or null).
"""

from __future__ import annotations

import json
import os
import sys
import time

import anyio

import dsh_fs
from dsh_fs.fs_s3 import S3FileSystem
from dsh_fs.testing.workspaces import MOTO_CLIENT_OPTIONS


async def main(endpoint: str, bucket: str, prefix: str, worker: str, iterations: int, go_file: str) -> None:
    deadline = time.monotonic() + 60
    while not os.path.exists(go_file):
        if time.monotonic() > deadline:
            raise SystemExit("no go signal")
        await anyio.sleep(0.005)
    async with S3FileSystem(bucket=bucket, prefix=prefix, endpoint_url=endpoint, client_options=MOTO_CLIENT_OPTIONS) as fs:
        ctx = dsh_fs.create_context(provider=fs)
        session = dsh_fs.Session("/")
        for i in range(iterations):
            token = f"{worker}-{i}"
            read = await ctx.tools.execute("read", {"file_path": "counter.txt"}, session=session)
            edit = await ctx.tools.execute(
                "edit",
                {"file_path": "counter.txt", "old_string": "END\n", "new_string": f"{token}\nEND\n"},
                session=session,
            )
            row = {"token": token, "read_error": read.is_error, "code": edit.error.code if edit.error else None}
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    endpoint, bucket, prefix, worker, iterations, go_file = sys.argv[1:7]
    anyio.run(main, endpoint, bucket, prefix, worker, int(iterations), go_file)
