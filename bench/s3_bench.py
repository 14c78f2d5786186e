"""S3 provider benchmark: round trips and per-call latency of the read, edit and write tools
against a loopback S3 endpoint (moto, serialized; see ``dsh_fs.testing.moto_server``).

usage::

    python bench/s3_bench.py [--endpoint-url URL] [--iterations N] [--size BYTES] [--json]

Without ``--endpoint-url`` (and without ``$DSH_FS_S3_ENDPOINT``) a moto server is started for
the run. Each tool call goes through the whole stack (registry, policy, tools, provider,
HTTP): ``read`` of a file, ``edit`` of the file just read (guarded by the policy), ``write``
over it, an ``apply_patch`` updating it (one file, one hunk), and ``read_image`` of a small PNG
(when Pillow is installed); round trips are the provider's S3 requests per call. Latencies on loopback measure
the client-side cost plus moto; on a real service add the network round-trip time per request.

Library use (``bench/run.py``): ``results = run(endpoint_url=None, iterations=50)`` returns
``{"endpoint": …, "file_bytes": …, "calls": {"read": {"round_trips": 1, "mean_ms": …,
"p50_ms": …, "p95_ms": …}, …}}``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from typing import Any

import anyio

__all__ = ("run",)


def _summary(samples: list[float], trips: list[int]) -> dict[str, Any]:
    ordered = sorted(samples)
    return {
        "round_trips": max(set(trips), key=trips.count),
        "round_trips_max": max(trips),
        "mean_ms": round(statistics.fmean(ordered) * 1000, 3),
        "p50_ms": round(ordered[len(ordered) // 2] * 1000, 3),
        "p95_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))] * 1000, 3),
        "calls": len(ordered),
    }


async def _bench(endpoint_url: str, iterations: int, size: int) -> dict[str, Any]:
    import dsh_fs
    from dsh_fs.fs_s3 import S3FileSystem
    from dsh_fs.testing.workspaces import S3Workspace

    workspace = await S3Workspace(endpoint_url=endpoint_url).create()
    line = "the quick brown fox jumps over the lazy dog 0123456789\n"
    body = (line * (size // len(line) + 1))[:size]
    body = "MARKER-0\n" + body[9:]
    try:
        await workspace.put("bench.txt", body.encode())
        image = _small_png()
        if image is not None:
            await workspace.put("bench.png", image)
        fs = await workspace.provider()
        assert isinstance(fs, S3FileSystem)
        ctx = dsh_fs.create_context(provider=fs, faces=["apply_patch"], images=image is not None)
        session = dsh_fs.Session("/")
        names = ("read", "edit", "write", "apply_patch") + (("read_image",) if image is not None else ())
        samples: dict[str, tuple[list[float], list[int]]] = {k: ([], []) for k in names}

        async def call(name: str, args: dict[str, Any]) -> None:
            start_requests = fs.store.requests
            start = time.perf_counter()
            result = await ctx.tools.execute(name, args, session=session)
            elapsed = time.perf_counter() - start
            if result.is_error:
                raise RuntimeError(f"{name} failed: {result.text}")
            samples[name][0].append(elapsed)
            samples[name][1].append(fs.store.requests - start_requests)

        await call("read", {"file_path": "bench.txt"})  # warm the connection pool
        for k in samples:
            samples[k] = ([], [])
        mark = 0
        for _ in range(iterations):
            await call("read", {"file_path": "bench.txt"})
            await call("edit", {"file_path": "bench.txt", "old_string": f"MARKER-{mark}\n",
                                "new_string": f"MARKER-{mark + 1}\n"})
            content = body.replace("MARKER-0\n", f"MARKER-{mark + 2}\n", 1)
            await call("write", {"file_path": "bench.txt", "content": content})
            patch = f"*** Begin Patch\n*** Update File: bench.txt\n@@\n-MARKER-{mark + 2}\n+MARKER-{mark + 3}\n*** End Patch"
            await call("apply_patch", {"input": patch})
            mark += 3
            if image is not None:
                await call("read_image", {"file_path": "bench.png"})
        return {
            "endpoint": endpoint_url,
            "file_bytes": len(body.encode()),
            "iterations": iterations,
            "calls": {name: _summary(*pair) for name, pair in samples.items()},
        }
    finally:
        await workspace.aclose()


def _small_png() -> bytes | None:
    """A 64×48 PNG (a few KiB: under the stat's 256 KiB fetch), or ``None`` without Pillow."""
    try:
        from PIL import Image
    except ImportError:
        return None
    import io

    picture = Image.new("RGB", (64, 48))
    picture.putdata([((x * 7) % 256, (y * 11) % 256, (x + y) % 256) for y in range(48) for x in range(64)])
    out = io.BytesIO()
    picture.save(out, "PNG")
    return out.getvalue()


def run(*, endpoint_url: str | None = None, iterations: int = 50, size: int = 16 * 1024) -> dict[str, Any]:
    """Benchmark the tools over S3 and return the results (see the module docstring).

    :param endpoint_url: an S3 endpoint; default ``$DSH_FS_S3_ENDPOINT`` or a moto server
        started (and stopped) for the run
    :param iterations: read/edit/write rounds
    :param size: bytes of the benchmarked file
    """
    from dsh_fs.testing.moto_server import ENDPOINT_ENV, MotoServer

    endpoint_url = endpoint_url or os.environ.get(ENDPOINT_ENV)
    if endpoint_url:
        return anyio.run(_bench, endpoint_url, iterations, size, backend="asyncio")
    with MotoServer() as server:
        assert server.endpoint_url is not None
        return anyio.run(_bench, server.endpoint_url, iterations, size, backend="asyncio")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="S3 provider round trips and latency (loopback moto by default)")
    parser.add_argument("--endpoint-url", default=None)
    parser.add_argument("--iterations", type=int, default=50)
    parser.add_argument("--size", type=int, default=16 * 1024, help="file size in bytes")
    parser.add_argument("--json", action="store_true", help="print the raw JSON")
    args = parser.parse_args(argv)
    results = run(endpoint_url=args.endpoint_url, iterations=args.iterations, size=args.size)
    if args.json:
        json.dump(results, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    print(f"S3 provider over {results['endpoint']} — {results['file_bytes']} byte file, {results['iterations']} rounds")
    print(f"{'tool':<6} {'round trips':>11} {'mean ms':>9} {'p50 ms':>8} {'p95 ms':>8}")
    for name, row in results["calls"].items():
        print(f"{name:<6} {row['round_trips']:>11} {row['mean_ms']:>9.2f} {row['p50_ms']:>8.2f} {row['p95_ms']:>8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
