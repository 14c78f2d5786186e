"""The ``workspace-write`` fence holds without a containment root (docs/SANDBOX.md "What is
fenced"; ``fs_sandbox.filesystem``).

``create_context(root=None)`` and the CLI tool commands have no containment root: a write was
checked on a fresh resolution and then made by path, so a directory of the workspace toggled
between a real directory and a symlink out (any local user can own one under a granted
``/tmp``) let writes land outside every writable place (109 and 128 of 300 in two runs). Now a
mutation runs in a view of the provider rooted at the writable place that holds its target,
whose every step is an ``O_NOFOLLOW`` walk from that place: a symlink swapped in is refused.

A helper process swaps ``ws/d`` with a symlink to ``out/`` (``renameat2(RENAME_EXCHANGE)``,
atomically, as fast as it can) while the test writes, edits and patches under ``d/``; no file
may ever appear in ``out/``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from sandboxkit import base  # noqa: F401  (fixture)

import dsh_fs
from dsh_fs import Session

TOGGLER = textwrap.dedent("""
    import ctypes, os, sys
    libc = ctypes.CDLL(None, use_errno=True)
    os.chdir(sys.argv[1])
    print("ready", flush=True)
    while True:
        if libc.renameat2(-100, b"d_link", -100, b"d", 2) != 0:
            raise SystemExit(ctypes.get_errno())
""")


class Toggled:
    """``<place>/d`` swapped with a symlink to ``base/out`` by a running process, until
    ``settle`` stops it with ``d`` a real directory again."""

    def __init__(self, place: Path, proc: subprocess.Popen[str]) -> None:
        self.place = place
        self._proc = proc

    def settle(self) -> None:
        """Stop the swapping; leave ``d`` the real directory (one more exchange when it was
        stopped with the link in place)."""
        self._proc.kill()
        self._proc.wait()
        if (self.place / "d").is_symlink():
            os.rename(self.place / "d", self.place / "d_swap")
            os.rename(self.place / "d_link", self.place / "d")
            os.rename(self.place / "d_swap", self.place / "d_link")
        assert not (self.place / "d").is_symlink() and (self.place / "d" / "keep.txt").is_file()


@pytest.fixture(params=["workspace", "temp area"])
def toggled(base: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Toggled]:  # noqa: F811
    """``<place>/d`` swapped by a running process; ``<place>`` is the workspace ``base/ws`` or a
    granted temp area (``$TMPDIR`` set to ``base/tmp``, as any local user can own a directory
    under ``/tmp``)."""
    ws = base / "ws"
    if request.param == "temp area":
        ws = base / "tmp"
        ws.mkdir()
        monkeypatch.setenv("TMPDIR", str(ws))
    (ws / "d").mkdir()
    (ws / "d" / "keep.txt").write_text("a\n")
    os.symlink(base / "out", ws / "d_link")
    proc = subprocess.Popen([sys.executable, "-c", TOGGLER, str(ws)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
        yield Toggled(ws, proc)
    finally:
        proc.kill()
        proc.wait()


def escaped(base: Path) -> list[str]:
    return sorted(os.listdir(base / "out"))


async def _calls(ctx: dsh_fs.Context, session: Session, place: Path, i: int) -> list[dsh_fs.ToolResult]:
    """A write below ``place/d``, an edit of the file it wrote and an apply_patch add."""
    patch = f"*** Begin Patch\n*** Add File: {place}/d/p{i}.txt\n+p\n*** End Patch\n"
    return [
        await ctx.tools.execute("write", {"file_path": f"{place}/d/w{i}.txt", "content": "x\n"}, session=session),
        await ctx.tools.execute("edit", {"file_path": f"{place}/d/w{i}.txt", "old_string": "x", "new_string": "y"},
                                session=session),
        await ctx.tools.execute("apply_patch", {"input": patch}, session=session),
    ]


def test_writes_never_land_outside_while_a_directory_is_swapped_for_a_symlink(toggled: Toggled, base: Path) -> None:  # noqa: F811
    """While ``d`` flips, each call lands inside or is refused (how many of each is the
    scheduler's luck, so it is not asserted); nothing ever lands in ``out/``. Once the flipping
    stops, the same context writes, edits and patches there: the fence admits the place."""

    async def main() -> list[dsh_fs.ToolResult]:
        ctx = dsh_fs.create_context(root=None, cwd=base / "ws", sandbox="workspace-write", policy=False,
                                    faces=["apply_patch"])
        session = Session(base / "ws")
        async with ctx:
            for i in range(50):
                await _calls(ctx, session, toggled.place, i)
            assert escaped(base) == []
            await anyio.to_thread.run_sync(toggled.settle)
            return await _calls(ctx, Session(base / "ws"), toggled.place, 1000)

    settled = anyio.run(main)
    assert escaped(base) == []
    assert [r.text for r in settled if r.is_error] == []
    assert (toggled.place / "d" / "w1000.txt").read_text() == "y\n"
    assert (toggled.place / "d" / "p1000.txt").read_text() == "p\n"


def test_the_cli_tool_commands_hold_too(toggled: Toggled, base: Path) -> None:  # noqa: F811
    env = {k: v for k, v in os.environ.items() if not k.startswith("DSH_FS_")}
    for i in range(12):
        subprocess.run([sys.executable, "-m", "dsh_fs.cli.main", "write", "--sandbox", "workspace-write", "--no-policy",
                        f"{toggled.place}/d/c{i}.txt", "--content", "x"], cwd=base / "ws", env=env, capture_output=True,
                       timeout=120, stdin=subprocess.DEVNULL)
    assert escaped(base) == []
