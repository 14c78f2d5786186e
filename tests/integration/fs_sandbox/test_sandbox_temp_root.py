"""``TMPDIR=/`` never makes ``workspace-write`` allow every path (DEVIATIONS X5): the temp area
that is the filesystem root is not granted, and that is said once on stderr."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from sandboxkit import base  # noqa: F401  (fixture)

from dsh_fs.fs_sandbox.roots import granted_temp_areas, temp_area_refused, temp_areas

LINE = "dsh-fs: temp area / is not writable under workspace-write: it is the filesystem root (set TMPDIR to a temp directory)"


@pytest.mark.parametrize("env", [{"TMPDIR": "/"}, {"TMPDIR": "//"}, {"TMP": "/"}, {"TEMP": "/"}])
def test_a_temp_area_that_is_the_filesystem_root_is_not_granted(env: dict[str, str]) -> None:
    lines: list[str] = []
    assert "/" in temp_areas(env)  # the reference's set: it would grant everything
    assert granted_temp_areas(env, report=lines.append) == (os.path.realpath("/tmp"),)
    assert lines == [LINE] == [temp_area_refused("/")]


def test_an_ordinary_temp_area_is_granted_without_a_word(tmp_path: Path) -> None:
    lines: list[str] = []
    env = {"TMPDIR": str(tmp_path)}
    assert granted_temp_areas(env, report=lines.append) == temp_areas(env) and lines == []


SCRIPT = r"""
import asyncio, sys
import dsh_fs
from dsh_fs import Session

async def main(ws, out):
    ctx = dsh_fs.create_context(root=None, cwd=ws, sandbox="workspace-write")
    for name in ("a.txt", "b.txt"):
        result = await ctx.tools.execute("write", {"file_path": f"{out}/{name}", "content": "x"}, session=Session(ws))
        print(result.error.code if result.is_error else "written")
    inside = await ctx.tools.execute("write", {"file_path": "in.txt", "content": "x"}, session=Session(ws))
    print(inside.error.code if inside.is_error else "written")

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


def test_tmpdir_root_denies_outside_writes_and_warns_once(base: Path) -> None:
    env = {**os.environ, "TMPDIR": "/"}
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(base / "ws"), str(base / "out")], capture_output=True,
                          text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["FS_SANDBOX_DENIED", "FS_SANDBOX_DENIED", "written"]
    assert done.stderr.splitlines() == [LINE]
    assert sorted(os.listdir(base / "out")) == [] and (base / "ws" / "in.txt").read_text() == "x"
