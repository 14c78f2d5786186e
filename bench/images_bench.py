"""``read_image`` benchmark (docs/IMAGES.md): a 2 MB PNG through ``read_image`` in process and
over MCP stdio, next to reading the file's bytes raw.

usage::

    python bench/images_bench.py [--calls 20] [--json]

Rows (each timing the median of ``--calls`` calls after two warm-up calls; every workload runs
in its own child process, so its peak memory — growth of ``ru_maxrss`` over the process before
the first call — is its own):

* ``read_image`` in process (registry call: resolve, stat, bounded read, header checks, a full
  Pillow decode, base64 for the image block) → ``open(path, "rb").read()`` of the same file.
* ``read_image`` over MCP stdio (``dsh-fs mcp --images``, the MCP SDK client; the JSON-RPC line
  carries the base64 image) → the same raw read. Peak memory is the server's (``RUSAGE_CHILDREN``
  after it exits; its baseline is a server that served one text ``read``).

The input is 820×820 RGB noise (incompressible), about 2 MB as PNG. Library use
(``bench/run.py``): ``rows(work)`` returns row dicts.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from typing import Any

from workloads import script_result

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(HERE), "src")


def make_png(path: str, side: int = 820) -> int:
    """``side``×``side`` RGB noise as PNG at ``path``; returns its size in bytes."""
    from PIL import Image

    Image.frombytes("RGB", (side, side), os.urandom(side * side * 3)).save(path, format="PNG")
    return os.path.getsize(path)


_IN_PROCESS = """
import anyio, json, resource, statistics, sys, time
sys.path.insert(0, {src!r})
import dsh_fs
folder, name, calls = {folder!r}, {name!r}, {calls}
def raw():
    with open(folder + "/" + name, "rb") as handle:
        return handle.read()
async def main():
    ctx = dsh_fs.create_context(cwd=folder, images=True)
    session = dsh_fs.Session(cwd=folder)
    base_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    times, raws = [], []
    for i in range(calls + 2):
        start = time.perf_counter()
        result = await ctx.tools.execute("read_image", {{"file_path": name}}, session=session)
        if result.is_error:
            raise SystemExit(result.text)
        times.append(time.perf_counter() - start)
        del result
        start = time.perf_counter(); raw(); raws.append(time.perf_counter() - start)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base_rss
    print(json.dumps({{"ours": statistics.median(times[2:]), "base": statistics.median(raws[2:]), "ours_mem": peak / 1024}}))
anyio.run(main)
"""

_OVER_MCP = """
import anyio, json, resource, statistics, sys, time
sys.path.insert(0, {src!r})
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
folder, name, calls, images = {folder!r}, {name!r}, {calls}, {images}
async def main():
    args = ["-m", "dsh_fs.cli.main", "mcp", "--root", folder] + (["--images"] if images else [])
    params = StdioServerParameters(command=sys.executable, args=args, cwd=folder)
    times = []
    with open("/dev/null", "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                for i in range(calls + 2):
                    start = time.perf_counter()
                    if images:
                        result = await session.call_tool("read_image", {{"file_path": name}})
                    else:
                        result = await session.call_tool("read", {{"file_path": "small.txt"}})
                    if result.is_error:
                        raise SystemExit(str(result.content))
                    times.append(time.perf_counter() - start)
    server_peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(json.dumps({{"ours": statistics.median(times[2:]), "server_peak": server_peak / 1024}}))
anyio.run(main)
"""


def rows(work: str, *, calls: int = 20) -> list[dict[str, Any]]:
    """Both rows (see the module docstring)."""
    folder = os.path.join(work, "images")
    os.makedirs(folder, exist_ok=True)
    size = make_png(os.path.join(folder, "noise.png"))
    with open(os.path.join(folder, "small.txt"), "w") as handle:
        handle.write("hello\n")
    label = f"{size / 1e6:.1f} MB PNG (820×820)"
    local = script_result(_IN_PROCESS.format(src=SRC, folder=folder, name="noise.png", calls=calls), timeout=600)
    mcp = script_result(_OVER_MCP.format(src=SRC, folder=folder, name="noise.png", calls=calls, images=True),
                        timeout=600)
    text_server = script_result(_OVER_MCP.format(src=SRC, folder=folder, name="noise.png", calls=2, images=False),
                                timeout=600)
    raw = local["base"]
    return [
        {"workload": f"read_image of a {label}, in process", "ours": local["ours"], "ours_mem": local["ours_mem"],
         "baseline": "raw read of its bytes", "base": raw, "base_mem": None, "ratio": local["ours"] / raw,
         "target": "(info)", "met": None},
        {"workload": f"read_image of a {label}, over MCP stdio", "ours": mcp["ours"],
         "ours_mem": mcp["server_peak"] - text_server["server_peak"],
         "baseline": "raw read of its bytes", "base": raw, "base_mem": None, "ratio": mcp["ours"] / raw,
         "target": "(info)", "met": None},
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    work = tempfile.mkdtemp(prefix="dsh-fs-images-bench-")
    os.environ.setdefault("DSH_FS_LOCK_DIR", os.path.join(work, "locks"))
    try:
        found = rows(work, calls=args.calls)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps(found))
    else:
        for row in found:
            print(f"{row['workload']}: ours {row['ours'] * 1e3:.2f} ms (peak +{row['ours_mem']:.1f} MiB), "
                  f"raw read {row['base'] * 1e3:.3f} ms, {row['ratio']:.0f}×")
    return 0


if __name__ == "__main__":
    sys.exit(main())
