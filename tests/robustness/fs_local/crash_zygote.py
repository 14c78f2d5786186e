"""Fork server for ``test_crash_safety`` (run as a child process; not a test module).

It imports ``dsh_fs`` once, then for every JSON line on stdin
``{"dir": ..., "progress": ..., "named_temp": bool, "jobs": [{"tool", "name", "gen", "size"}, ...]}``
it forks a child that runs the jobs through the local provider's ``write_text``/``edit_text``
(the layer that owns atomicity; unguarded, as in the bare deployment — the tool layer only
adds result-time diffs, whose CPU cost for multi-MB rewrites would slow the rounds), with
named temp files instead of ``O_TMPFILE`` ones when ``named_temp``, appending ``start <i>``
to the progress file before each job and ``done <i>`` after each reported success, then
``finished``, and then waits to be killed. With ``"pause": true`` the child appends ``paused``
at its first ``fsync`` of a regular file and waits there for its kill: inside its first write,
the temp file written and fsynced, not yet renamed — a kill point fixed by construction, not by
the scheduler. The server answers
``{"pid": pid}`` at once and ``{"pid": pid, "status": status}`` when the child is gone.

Children never exit on their own (not even after an exception: they report ``crashed``),
so the test's ``SIGKILL`` always hits the live child and never a recycled pid.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import sys
import time
import traceback

import anyio

import dsh_fs
from dsh_fs.fs.types import EditRequest
from dsh_fs.fs_local import LocalFileSystem, atomic
from robustkit import edit_head, write_content


async def _run_job(fs: LocalFileSystem, job: dict) -> None:
    name, gen, size = job["name"], job["gen"], job["size"]
    target = await fs.resolve(name)
    if job["tool"] == "write":
        await fs.write_text(target, write_content(name, gen + 1, size))
    else:
        await fs.edit_text(target, EditRequest(old_string=edit_head(gen), new_string=edit_head(gen + 1)))


def _child(spec: dict) -> None:
    progress = os.open(spec["progress"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        if spec.get("named_temp"):
            atomic.ANONYMOUS_TEMP = False
        if spec.get("pause"):
            real_fsync = os.fsync

            def fsync(fd: int) -> None:
                real_fsync(fd)
                if stat.S_ISREG(os.fstat(fd).st_mode):
                    os.write(progress, b"paused\n")
                    while True:  # never returns: the kill comes here (not SIGSTOP: job control may continue it)
                        time.sleep(3600)

            os.fsync = fsync  # type: ignore[assignment]
        # edits of 1 MiB and more take the streaming path (``large_edit``), smaller ones not
        fs = LocalFileSystem(cwd=spec["dir"], stream_edit_min_size=1 << 20)

        async def run() -> None:
            for index, job in enumerate(spec["jobs"]):
                os.write(progress, f"start {index}\n".encode())
                try:
                    await _run_job(fs, job)
                except dsh_fs.FsError as exc:
                    os.write(progress, f"error {index} {json.dumps(str(exc))}\n".encode())
                else:
                    os.write(progress, f"done {index}\n".encode())

        anyio.run(run)
        os.write(progress, b"finished\n")
    except BaseException:
        os.write(progress, ("crashed " + json.dumps(traceback.format_exc()) + "\n").encode())
    while True:
        signal.pause()


def main() -> None:
    for line in sys.stdin:
        spec = json.loads(line)
        pid = os.fork()
        if pid == 0:
            try:
                _child(spec)
            finally:
                os._exit(3)
        print(json.dumps({"pid": pid}), flush=True)
        _, status = os.waitpid(pid, 0)
        print(json.dumps({"pid": pid, "status": status}), flush=True)


if __name__ == "__main__":
    main()
