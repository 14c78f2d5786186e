"""docs/MCP.md's one-line install onto PATH from a checkout (``uv tool install '.[mcp]'``), and
``dsh-fs client-config`` from that install: the configuration it prints starts a working MCP
server, as printed (absolute paths, whatever the client's cwd and PATH).

uv installs into a temporary tool directory and bin directory (``UV_TOOL_DIR``,
``UV_TOOL_BIN_DIR``); it fetches the dependencies from the package index, as the printed
command does.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CHECKOUT = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.timeout(600)


def test_uv_tool_install_puts_dsh_fs_on_path_and_client_config_works_as_printed(tmp_path: Path) -> None:
    uv = shutil.which("uv", path=os.path.dirname(sys.executable)) or shutil.which("uv")
    assert uv is not None, "uv is a [dev] dependency"
    bin_dir = tmp_path / "bin"
    env = {**os.environ, "UV_TOOL_DIR": str(tmp_path / "tools"), "UV_TOOL_BIN_DIR": str(bin_dir)}
    done = subprocess.run([uv, "tool", "install", ".[mcp]"], cwd=CHECKOUT, env=env, capture_output=True, text=True,
                          timeout=540, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    installed = bin_dir / "dsh-fs"
    assert installed.exists()
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("alpha\n")
    printed = subprocess.run([str(installed), "client-config"], cwd=project, capture_output=True, text=True,
                             timeout=60, stdin=subprocess.DEVNULL)
    assert printed.returncode == 0, printed.stderr
    server = json.loads(printed.stdout)["mcpServers"]["dsh-fs"]
    assert server == {"command": str(installed), "args": ["mcp", "--root", str(project)]}
    # as a GUI client starts it: another cwd, a bare PATH
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "read", "arguments": {"file_path": "notes.txt"}}},
    ]
    ran = subprocess.run([server["command"], *server["args"]], cwd="/", env={"PATH": "/usr/bin:/bin"},
                         input="".join(json.dumps(r) + "\n" for r in requests), capture_output=True, text=True, timeout=60)
    answers = {a["id"]: a for a in map(json.loads, ran.stdout.splitlines()) if "id" in a}
    assert "1: alpha" in answers[2]["result"]["content"][0]["text"], ran.stdout + ran.stderr
