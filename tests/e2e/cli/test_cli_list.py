"""``list`` through its real clients: ``dsh-fs list [PATH]`` (a subprocess, both profiles) and
``dsh-fs mcp`` (stdio; served by default, by ``--tools`` under ``--profile reference``).
The texts themselves: tests/integration/tool_fs/test_list_tool.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_support import RawStdio, row

pytestmark = pytest.mark.timeout(120)


def _tree(root: Path) -> None:
    (root / "src").mkdir()
    (root / "empty").mkdir()
    (root / "a.txt").write_text("alpha\n")


def _cli(root: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DSH_FS_")}
    env["DSH_FS_STATE_DIR"] = str(root.parent / "state")
    return subprocess.run([sys.executable, "-m", "dsh_fs.cli.main", "list", *args], cwd=root, env=env,
                          capture_output=True, timeout=60, stdin=subprocess.DEVNULL)


def test_the_command_prints_what_the_model_sees(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    _tree(root)
    done = _cli(root)
    assert (done.returncode, done.stderr) == (0, b"")
    assert done.stdout.decode() == (f"<path>{root}</path>\n<type>directory</type>\n<content>\nempty/\nsrc/\n"
                                    "a.txt (6 bytes)\n\n(3 entries: 2 directories, 1 file)\n</content>\n")
    reference = _cli(root, "--profile", "reference", "--offset", "3")
    assert reference.stdout.decode().endswith("<content>\na.txt\n\n(Showing entries 3-3 of 3: 2 directories, 1 file.)\n</content>\n")
    missing = _cli(root, "nope")
    assert (missing.returncode, missing.stdout) == (1, f'Error: cannot list "{root}/nope": not found\n'.encode())
    bad = _cli(root, "--offset", "x")
    assert bad.returncode == 2 and bad.stdout == b""


def _served(root: str, *flags: str) -> tuple[list[str], dict[str, Any]]:
    with RawStdio(root, *flags) as server:
        server.initialize()
        listed = [t["name"] for t in server.request("tools/list")["result"]["tools"]]
        result = row(server.request("tools/call", {"name": "list", "arguments": {}})["result"]) if "list" in listed else {}
    return listed, result


def test_mcp_serves_list(tmp_path: Path) -> None:
    root = tmp_path / "served"
    root.mkdir()
    _tree(root)
    os.symlink("/etc", root / "etc-link")  # leads out of the served root: listed, never followed
    real = os.path.realpath(root)
    listed, result = _served(real)
    assert "list" in listed
    assert result["text"].split("<content>\n")[1] == (
        "empty/\nsrc/\na.txt (6 bytes)\netc-link@\n\n(4 entries: 2 directories, 1 file, 1 other)\n</content>")
    assert "list" not in _served(real, "--profile", "reference")[0]
    listed, result = _served(real, "--profile", "reference", "--tools", "list,read")
    assert listed == ["list", "read"] and "a.txt\netc-link@\n" in result["text"]
