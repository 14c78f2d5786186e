"""The child workloads of ``bench/run.py``: each runs in a fresh interpreter (``child``), so its
peak memory (the growth of ``ru_maxrss``) is its own, and prints its result as one JSON line.

    python bench/workloads.py NAME JSON_PARAMS

Also the input helpers the row builders share (``write_log``, ``settle``).
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MiB = 1024 * 1024
RACY_WAIT = 3.2
"""seconds to leave a new file alone so its version carries no content digest (A5)"""


# -- helpers ---------------------------------------------------------------------------------------

def peak_rss_mib() -> float:
    """This process's peak resident set so far (MiB; ``ru_maxrss`` is KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def write_log(path: str, size: int) -> int:
    """A log of numbered lines (~100 bytes each, ASCII) of about ``size`` bytes; returns its line count."""
    block_lines = 10_000
    lines = 0
    with open(path, "wb") as handle:
        while True:
            block = b"".join(
                b"%09d 2024-05-01T12:00:00.000Z INFO api request_id=%016x latency_ms=%04d path=/v1/items\n"
                % (lines + i, (lines + i) * 2654435761 % (1 << 64), (lines + i) % 9973)
                for i in range(block_lines)
            )
            if handle.tell() + len(block) > size:
                break
            handle.write(block)
            lines += block_lines
    return lines


def settle(*paths: str) -> None:
    """Wait out the racy window of the newest path, then read each once (page cache)."""
    newest = max(os.stat(p).st_mtime for p in paths)
    wait = newest + RACY_WAIT - time.time()
    if wait > 0:
        time.sleep(wait)
    for path in paths:
        with open(path, "rb") as handle:
            while handle.read(8 * MiB):
                pass


def script_result(script: str, *, timeout: float) -> dict[str, Any]:
    """Run the Python ``script`` (dedented) in a fresh interpreter, at most ``timeout`` seconds;
    the JSON it prints. ``RuntimeError`` with the last line of its stderr when it fails."""
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True,
                          timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "child failed")
    return json.loads(proc.stdout)


def child(name: str, **params: Any) -> dict[str, Any]:
    """Run workload ``name`` in a fresh interpreter; returns its JSON result."""
    proc = subprocess.run(
        [sys.executable, os.path.abspath(__file__), name, json.dumps(params)],
        capture_output=True, text=True, cwd=ROOT,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"child {name} failed:\n{proc.stdout}\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


# -- child workloads ------------------------------------------------------------------------------------

async def _best_of(batches: int, calls: int, ours: Callable[[], Any], raw: Callable[[], Any]) -> dict[str, float]:
    """Interleaved batches (``ours`` awaited, ``raw`` called); the best batch mean per call
    of each side (seconds)."""
    best = {"ours": float("inf"), "raw": float("inf")}
    for _ in range(batches):
        start = time.perf_counter()
        for _ in range(calls):
            await ours()
        best["ours"] = min(best["ours"], (time.perf_counter() - start) / calls)
        start = time.perf_counter()
        for _ in range(calls):
            raw()
        best["raw"] = min(best["raw"], (time.perf_counter() - start) / calls)
    return best


def work_small_read(path: str, batches: int, calls: int) -> dict[str, Any]:
    import anyio

    import dsh_fs

    folder, name = os.path.split(path)

    def raw() -> str:
        st = os.stat(path)
        fd = os.open(path, os.O_RDONLY)
        try:
            data = os.read(fd, st.st_size + 1)
        finally:
            os.close(fd)
        lines = data.decode("utf-8").split("\n")
        if not lines[-1]:
            lines.pop()
        body = "\n".join([f"{number}: {text}" for number, text in enumerate(lines, 1)])
        return f"<path>{path}</path>\n<type>file</type>\n<content>\n{body}\n\n(End of file - total {len(lines)} lines)\n</content>"

    async def main() -> dict[str, Any]:
        ctx = dsh_fs.create_context(cwd=folder)
        session = dsh_fs.Session(cwd=folder)
        args = {"file_path": name}
        result = await ctx.tools.execute("read", args, session=session)
        assert result.text == raw(), "the baseline must render the same text"

        async def ours() -> None:
            if (await ctx.tools.execute("read", args, session=session)).is_error:
                raise RuntimeError("read failed")

        before = peak_rss_mib()
        best = await _best_of(batches, calls, ours, raw)
        return {"ours": best["ours"], "base": best["raw"], "ours_mem": peak_rss_mib() - before,
                "bytes": os.path.getsize(path), "lines": result.text.count("\n") - 5}

    return anyio.run(main)


def work_small_edit(ours_path: str, raw_path: str, batches: int, calls: int) -> dict[str, Any]:
    import anyio

    import dsh_fs

    folder, name = os.path.split(ours_path)
    state = {"raw": 0}

    def raw() -> None:
        with open(raw_path, "rb") as handle:
            text = handle.read().decode("utf-8")
        old, new = ("# step 100\n", "# STEP 100\n") if state["raw"] % 2 == 0 else ("# STEP 100\n", "# step 100\n")
        state["raw"] += 1
        data = text.replace(old, new, 1).encode("utf-8")
        directory = os.path.dirname(raw_path)
        temp = raw_path + ".tmp"
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(temp, raw_path)
        dfd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)

    async def main() -> dict[str, Any]:
        ctx = dsh_fs.create_context(cwd=folder)
        session = dsh_fs.Session(cwd=folder)
        assert not (await ctx.tools.execute("read", {"file_path": name}, session=session)).is_error
        count = [0]

        async def ours() -> None:
            old, new = ("# step 100\n", "# STEP 100\n") if count[0] % 2 == 0 else ("# STEP 100\n", "# step 100\n")
            count[0] += 1
            result = await ctx.tools.execute("edit", {"file_path": name, "old_string": old, "new_string": new},
                                             session=session)
            if result.is_error:
                raise RuntimeError(result.text)

        before = peak_rss_mib()
        best = await _best_of(batches, calls, ours, raw)
        return {"ours": best["ours"], "base": best["raw"], "ours_mem": peak_rss_mib() - before,
                "bytes": os.path.getsize(ours_path)}

    return anyio.run(main)


def work_wc(path: str) -> dict[str, Any]:
    start = time.perf_counter()
    out = subprocess.run(["wc", "-l", path], capture_output=True, text=True, check=True).stdout
    elapsed = time.perf_counter() - start
    # wc's own peak RSS: GNU time forks it from a small process (a child forked from this
    # interpreter would inherit the interpreter's high-water mark)
    mem = None
    if os.path.exists("/usr/bin/time"):
        timed = subprocess.run(["/usr/bin/time", "-f", "%M", "wc", "-l", path], capture_output=True, text=True)
        if timed.returncode == 0:
            mem = int(timed.stderr.strip().splitlines()[-1]) / 1024
    return {"time": elapsed, "mem": mem, "lines": int(out.split()[0])}


def work_tail(path: str, lines: int) -> dict[str, Any]:
    import anyio

    import dsh_fs

    folder, name = os.path.split(path)

    async def main() -> dict[str, Any]:
        ctx = dsh_fs.create_context(cwd=folder)
        session = dsh_fs.Session(cwd=folder)
        before = peak_rss_mib()
        start = time.perf_counter()
        tail = await ctx.tools.execute("read", {"file_path": name, "offset": lines - 99, "limit": 100}, session=session)
        first = time.perf_counter() - start
        grew = peak_rss_mib() - before
        if tail.is_error or f"(End of file - total {lines} lines)" not in tail.text:
            raise RuntimeError(tail.text[-300:])
        start = time.perf_counter()
        second = await ctx.tools.execute("read", {"file_path": name, "offset": lines // 3, "limit": 100},
                                         session=session)
        again = time.perf_counter() - start
        if second.is_error or f"{lines // 3}: " not in second.text:
            raise RuntimeError(second.text[-300:])
        return {"first": first, "first_mem": grew, "second": again, "second_mem": peak_rss_mib() - before}

    return anyio.run(main)


def work_paging(path: str, lines: int, pages: int) -> dict[str, Any]:
    import anyio

    import dsh_fs

    folder, name = os.path.split(path)

    async def main() -> dict[str, Any]:
        ctx = dsh_fs.create_context(cwd=folder)
        session = dsh_fs.Session(cwd=folder)
        before = peak_rss_mib()
        times = []
        for page in range(pages):
            offset = 1 + page * (lines // pages)
            start = time.perf_counter()
            result = await ctx.tools.execute("read", {"file_path": name, "offset": offset}, session=session)
            times.append(time.perf_counter() - start)
            if result.is_error or f"\n{offset}: " not in result.text:
                raise RuntimeError(result.text[-300:])
        return {"total": sum(times), "max_page": max(times), "mem": peak_rss_mib() - before}

    return anyio.run(main)


def work_edit_big(path: str, old: str, new: str, replace_all: bool = False) -> dict[str, Any]:
    import anyio

    import dsh_fs

    folder, name = os.path.split(path)

    async def main() -> dict[str, Any]:
        ctx = dsh_fs.create_context(cwd=folder, policy=False)  # unguarded: measure the edit alone
        session = dsh_fs.Session(cwd=folder)
        before = peak_rss_mib()
        start = time.perf_counter()
        result = await ctx.tools.execute("edit", {"file_path": name, "old_string": old, "new_string": new,
                                                  "replace_all": replace_all}, session=session)
        elapsed = time.perf_counter() - start
        if result.is_error:
            raise RuntimeError(result.text)
        return {"time": elapsed, "mem": peak_rss_mib() - before}

    return anyio.run(main)


def work_copy(src: str, dst: str) -> dict[str, Any]:
    before = peak_rss_mib()
    start = time.perf_counter()
    shutil.copyfile(src, dst)
    plain = time.perf_counter() - start
    fd = os.open(dst, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    durable = time.perf_counter() - start
    os.unlink(dst)
    return {"time": durable, "plain": plain, "mem": peak_rss_mib() - before}


WORKLOADS: dict[str, Callable[..., dict[str, Any]]] = {
    "small_read": work_small_read,
    "small_edit": work_small_edit,
    "wc": work_wc,
    "tail": work_tail,
    "paging": work_paging,
    "edit_big": work_edit_big,
    "copy": work_copy,
}


def main(argv: list[str]) -> int:
    """``NAME JSON_PARAMS``: run workload ``NAME`` with those keyword arguments and print its result."""
    sys.path.insert(0, os.path.join(ROOT, "src"))
    name, params = argv
    print(json.dumps(WORKLOADS[name](**json.loads(params))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
