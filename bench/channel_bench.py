"""Providers over a command channel (DEVIATIONS C1–C6, docs/CHANNELS.md): what a tool call
costs through each channel that runs here.

usage::

    python bench/channel_bench.py [--quick] [--json]

Channels: the subprocess channel (the helper a child process), SSH to an ``sshd`` on
127.0.0.1 started for the run, ``podman exec -i`` into a podman box (``dsh_fs.testing.far_sides``;
each left out, with the reason, when it cannot start here), and an exec channel (one command
per exchange, the helper kept by the relay's hub).

Rows:

* round trips per tool call (``read`` of a small file, ``edit``, ``write``, ``list``,
  ``glob``, ``grep``, ``read_image``): requests the provider sent for one call, the helper warm
  (the same on every channel; an exec channel's execs are counted apart);
* a small ``read`` and a small ``edit`` through each channel → that channel's own echo round
  trip (``ChannelFileSystem.ping``) in the same run: medians of interleaved calls;
* the last 100 lines of a 1 GiB far file (``--quick``: 64 MiB) over the subprocess channel:
  bytes moved over the channel → the window's size (the window is computed on the far side);
* ``grep`` over 20k far files (``--quick``: 2k) → the same ripgrep run over the same channel
  (its output read back through the channel's own command), medians of 3.

Library use (``bench/run.py``): ``rows(work, quick=...)`` returns the table rows and notes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from typing import Any

__all__ = ("rows",)

Row = dict[str, Any]
MiB = 1 << 20


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


async def _round_trips(fs: Any, root: str) -> dict[str, int]:
    """Requests per tool call (the helper already running)."""
    import dsh_fs

    ctx = dsh_fs.create_context(provider=fs, cwd=root, images=True)
    session = dsh_fs.Session(cwd=root)
    counts: dict[str, int] = {}
    calls = [
        ("read", {"file_path": "small.py"}),
        ("edit", {"file_path": "small.py", "old_string": "step 1\n", "new_string": "step one\n"}),
        ("write", {"file_path": "new.txt", "content": "fresh\n"}),
        ("list", {"path": "."}),
        ("glob", {"pattern": "**/*.py"}),
        ("grep", {"pattern": "alpha"}),
        ("read_image", {"file_path": "pic.png"}),
    ]
    await fs.start()
    await ctx.tools.execute("glob", {"pattern": "*"}, session=session)  # ripgrep set up on the far side first
    for tool, args in calls:
        before = fs.round_trips
        result = await ctx.tools.execute(tool, args, session=session)
        assert not result.is_error, (tool, result.text)
        counts[tool] = fs.round_trips - before
    return counts


async def _latency(fs: Any, root: str, calls: int) -> dict[str, float]:
    """Median seconds of a small ``read``, a small ``edit`` (a read before each, untimed) and
    the channel's echo round trip, interleaved."""
    import dsh_fs

    ctx = dsh_fs.create_context(provider=fs, cwd=root)
    session = dsh_fs.Session(cwd=root)
    await fs.start()
    reads, edits, echoes = [], [], []
    for n in range(calls):
        start = time.perf_counter()
        await fs.ping()
        echoes.append(time.perf_counter() - start)
        start = time.perf_counter()
        result = await ctx.tools.execute("read", {"file_path": "small.py"}, session=session)
        reads.append(time.perf_counter() - start)
        assert not result.is_error
        old, new = (f"step {n}\n", f"step {n}!\n")
        start = time.perf_counter()
        result = await ctx.tools.execute("edit", {"file_path": "small.py", "old_string": old, "new_string": new},
                                         session=session)
        edits.append(time.perf_counter() - start)
        assert not result.is_error, result.text
    return {"read": _median(reads), "edit": _median(edits), "echo": _median(echoes)}


def _project(root: str) -> None:
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, "small.py"), "w", encoding="utf-8") as handle:
        handle.write("".join(f"value_{i} = compute(alpha, beta)  # step {i}\n" for i in range(200)))
    from io import BytesIO

    try:
        from PIL import Image

        out = BytesIO()
        Image.new("RGB", (32, 32), (10, 20, 30)).save(out, format="PNG")
        data = out.getvalue()
    except ImportError:  # Pillow missing: read_image's row is left out by the caller's check
        data = b""
    with open(os.path.join(root, "pic.png"), "wb") as handle:
        handle.write(data)


class _Channels:
    """The far sides of the run, each a provider factory over a project directory."""

    def __init__(self, work: str, notes: list[str]) -> None:
        from dsh_fs.testing.far_sides import FarSideUnavailable, PodmanBox, SshServer

        self.work = work
        self.stack: list[Any] = []
        self.made: dict[str, Any] = {}
        from dsh_fs.fs_channel import ChannelFileSystem, channel_for_url
        from dsh_fs.testing.channels import exec_channel, far_python, subprocess_channel

        base = os.path.join(work, "far")
        os.makedirs(base)
        self.made["subprocess"] = (base, lambda root: ChannelFileSystem(subprocess_channel(), root=root,
                                                                        python=far_python()), lambda p: p)
        self.made["exec"] = (base, lambda root: ChannelFileSystem(exec_channel(), root=root, python=far_python()),
                             lambda p: p)
        try:
            server = SshServer().__enter__()
            self.stack.append(server)
            self.made["ssh"] = (base, lambda root: ChannelFileSystem(
                channel_for_url("ssh", server.url(root).split("://", 1)[1], ssh_command=server.ssh_command).channel,
                root=root), lambda p: p)
        except FarSideUnavailable as exc:
            notes.append(f"SSH rows: left out — {exc}.")
        try:
            box_dir = os.path.join(work, "box")
            os.makedirs(box_dir)
            box = PodmanBox({box_dir: "/ws"}).__enter__()
            self.stack.append(box)
            self.box = box
            self.made["podman"] = (box_dir, lambda root: ChannelFileSystem(
                channel_for_url("podman", f"{box.name}{root}").channel, root=root),
                lambda p: "/ws" + p[len(box_dir):])
        except FarSideUnavailable as exc:
            notes.append(f"podman rows: left out — {exc}.")

    def project(self, kind: str) -> tuple[Any, str]:
        """A fresh project on ``kind``'s far side: (provider, far root)."""
        base, make, far = self.made[kind]
        here = os.path.join(base, uuid.uuid4().hex[:10])
        _project(here)
        root = far(here)
        return make(root), root

    def close(self) -> None:
        for item in reversed(self.stack):
            item.__exit__(None, None, None)


def _far_files(root: str, count: int) -> None:
    for n in range(count):
        directory = os.path.join(root, f"d{n % 200:03d}")
        os.makedirs(directory, exist_ok=True)
        with open(os.path.join(directory, f"f{n}.txt"), "w", encoding="utf-8") as handle:
            handle.write("".join(f"line {i} of file {n}\n" for i in range(20)) + ("needle here\n" if n % 97 == 0 else ""))


async def _grep_rows(channels: _Channels, quick: bool) -> list[Row]:
    import dsh_fs
    from dsh_fs.tool_fs_search.engine import find_ripgrep

    count = 2_000 if quick else 20_000
    out: list[Row] = []
    for kind in ("subprocess", "podman"):
        if kind not in channels.made:
            continue
        fs, root = channels.project(kind)
        base, _, far = channels.made[kind]
        here = os.path.join(base, os.path.basename(root))
        _far_files(here, count)
        ctx = dsh_fs.create_context(provider=fs, cwd=root)
        session = dsh_fs.Session(cwd=root)
        await ctx.tools.execute("grep", {"pattern": "needle"}, session=session)  # warm: ripgrep set up there
        ours = []
        for _ in range(3):
            start = time.perf_counter()
            result = await ctx.tools.execute("grep", {"pattern": "needle"}, session=session)
            ours.append(time.perf_counter() - start)
            assert result.text.startswith("Found "), result.text[:200]
        program = (await fs.connection()).notes.get("rg_program")
        rg = find_ripgrep() or "rg"
        if kind == "podman":
            helper_cache = "/root/.cache/dsh-fs/helper"
            listed = subprocess.run(channels.box.exec_argv(["/bin/ls", helper_cache]), capture_output=True, text=True)
            name = next((n for n in listed.stdout.split() if n.endswith(".rg")), None)
            argv = channels.box.exec_argv([f"{helper_cache}/{name}", "--json", "--sort=path", "needle", root])
        else:
            argv = [rg, "--json", "--sort=path", "needle", root]
        base_times = []
        for _ in range(3):
            start = time.perf_counter()
            subprocess.run(argv, capture_output=True, check=False)
            base_times.append(time.perf_counter() - start)
        await ctx.aclose()
        ratio = _median(ours) / _median(base_times)
        out.append({"workload": f"{kind} channel: `grep` over {count} far files → `rg --json --sort=path` over the same "
                                f"channel", "ours": _median(ours), "ours_mem": None, "baseline": "rg over the channel",
                    "base": _median(base_times), "base_mem": None, "ratio": ratio, "target": "(info)", "met": None})
        del program
    return out


async def _window_row(channels: _Channels, quick: bool) -> Row:
    import dsh_fs

    fs, root = channels.project("subprocess")
    path = os.path.join(root, "big.log")
    size = 64 * MiB if quick else 1024 * MiB
    line = "2026-12-06T04:00:00 INFO request served in 12 ms from the cache of node seven\n"
    with open(path, "w", encoding="utf-8") as handle:
        block = line * (MiB // len(line))
        written = 0
        while written < size:
            handle.write(block)
            written += len(block)
    total_lines = written // len(line)
    ctx = dsh_fs.create_context(provider=fs, cwd=root)
    session = dsh_fs.Session(cwd=root)
    connection = await fs.connection()
    before = connection.bytes_sent + connection.bytes_received
    start = time.perf_counter()
    result = await ctx.tools.execute("read", {"file_path": "big.log", "offset": total_lines - 99, "limit": 100},
                                     session=session)
    took = time.perf_counter() - start
    moved = connection.bytes_sent + connection.bytes_received - before
    window = 100 * len(line)
    assert not result.is_error, result.text[:300]
    await ctx.aclose()
    return {"workload": f"subprocess channel: last 100 lines of a {written // MiB} MiB far file: {moved} bytes moved "
                        f"for a {window}-byte window", "ours": took, "ours_mem": None, "baseline": "window size (bytes)",
            "base": None, "base_mem": None, "ratio": moved / window, "target": "≤ 2× the window", "met": moved <= 2 * window}


async def _rows(work: str, quick: bool, notes: list[str]) -> list[Row]:
    channels = _Channels(work, notes)
    out: list[Row] = []
    try:
        fs, root = channels.project("subprocess")
        counts = await _round_trips(fs, root)
        await fs.aclose()
        for tool, trips in counts.items():
            want = {"read": 1, "edit": 2, "write": 2}.get(tool)
            out.append({"workload": f"channel round trips per `{tool}` call", "ours": None, "ours_mem": None,
                        "baseline": "—", "base": None, "base_mem": None, "ratio": None, "trips": trips,
                        "target": f"{want} round trip{'s' if want and want > 1 else ''}" if want else "(info)",
                        "met": trips <= want if want else None, "note": f"{trips} round trips"})
        calls = 30 if quick else 100
        for kind in ("subprocess", "ssh", "podman", "exec"):
            if kind not in channels.made:
                continue
            fs, root = channels.project(kind)
            timed = await _latency(fs, root, max(5, calls // 5) if kind == "exec" else calls)
            await fs.aclose()
            for tool in ("read", "edit"):
                out.append({"workload": f"{kind} channel: small `{tool}` call → the channel's echo round trip",
                            "ours": timed[tool], "ours_mem": None, "baseline": "echo round trip",
                            "base": timed["echo"], "base_mem": None, "ratio": timed[tool] / timed["echo"],
                            "target": "(info)", "met": None})
        out.append(await _window_row(channels, quick))
        out.extend(await _grep_rows(channels, quick))
    finally:
        channels.close()
    notes.append("Channel rows (bench/channel_bench.py): round trips are the provider's requests for one call with "
                 "the helper running (a small `read` is one: `resolve` brings the stat and the text, C5); the "
                 "ratios divide a tool call by the same channel's echo round trip (`ping`) measured interleaved; "
                 "the window row counts every byte both ways over the channel.")
    return out


def rows(work: str, *, quick: bool) -> tuple[list[Row], list[str]]:
    """The channel rows and their notes (``work``: a scratch directory, removed by the caller)."""
    notes: list[str] = []
    found = asyncio.run(_rows(os.path.join(work, "channels"), quick, notes))
    for row in found:
        row.pop("trips", None)
        if row.get("note"):
            row["workload"] = f"{row['workload']}: {row.pop('note')}"
    return found, notes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="dsh-fs-channel-bench-")
    try:
        found, notes = rows(work, quick=args.quick)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps({"rows": found, "notes": notes}, indent=2, default=str))
    else:
        for row in found:
            ours = f"{row['ours'] * 1000:.2f} ms" if row["ours"] is not None else "—"
            base = f"{row['base'] * 1000:.2f} ms" if row["base"] is not None else "—"
            ratio = f"{row['ratio']:.2f}×" if row["ratio"] is not None else "—"
            print(f"{row['workload']}: {ours} vs {base} ({ratio})")
        for note in notes:
            print(f"note: {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
