"""docs/MCP.md's client configurations and its HTTP command, as printed, with the SDK's client.

* The stdio configuration ("On your PATH, and a client's configuration") is what ``dsh-fs
  client-config`` prints in the project (its ``/home/me/.local/bin/dsh-fs`` this checkout's
  ``dsh-fs``, its ``/path/to/project`` a temporary project); started as a GUI client starts it
  (cwd ``/``, the SDK's default environment), it serves the project.
* The HTTP command ("Over HTTP") runs through the shell as printed (``~`` a temporary ``HOME``,
  the port ``0`` in place of ``8765``: the machine is shared); the Claude Code configuration
  printed after it, its ``${DSH_FS_TOKEN}`` expanded from the environment as Claude Code does
  and holding the first token line of the token file the command wrote, reaches that server
  (the printed URL's port replaced by the one it announced) and reads a file; a request
  without the header gets ``401``.

Not covered here: the HTTP client program (test_mcp_http_program.py), what
``client-config`` prints for other options (tests/e2e/cli/test_client_config_starts.py).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp.types as types
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, get_default_environment, stdio_client
from mcp.client.streamable_http import streamable_http_client

from docskit import DOCS, code_blocks, shell_env, shell_lines
from httpkit import INITIALIZE, stop

PAGE = DOCS / "MCP.md"
DSH_FS = str(Path(sys.executable).with_name("dsh-fs"))
PRINTED_PROJECT = "/path/to/project"
PRINTED_DSH_FS = "/home/me/.local/bin/dsh-fs"
PRINTED_URL = "http://127.0.0.1:8765/mcp"
pytestmark = pytest.mark.timeout(300)


def _text(result: types.CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, types.TextContent))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "notes.txt").write_text("alpha\n")
    return Path(os.path.realpath(root))


async def _read_over_stdio(server: dict[str, Any]) -> str:
    params = StdioServerParameters(command=server["command"], args=server["args"], cwd="/",
                                   env={**get_default_environment(), **server.get("env", {})})
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            return _text(await session.call_tool("read", {"file_path": "notes.txt"}))


def test_the_stdio_configuration_starts_as_printed(project: Path, tmp_path: Path) -> None:
    [printed] = code_blocks("## On your PATH, and a client's configuration", PAGE, "json")
    assert PRINTED_DSH_FS in printed and PRINTED_PROJECT in printed
    config = json.loads(printed.replace(PRINTED_DSH_FS, DSH_FS).replace(PRINTED_PROJECT, str(project)))
    made = subprocess.run([DSH_FS, "client-config"], cwd=project, env=shell_env(tmp_path), capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, timeout=120)
    assert made.returncode == 0, made.stderr
    assert json.loads(made.stdout) == config  # the page prints what the command prints
    assert "1: alpha" in anyio.run(_read_over_stdio, config["mcpServers"]["dsh-fs"])


def _expand(value: str, env: dict[str, str]) -> str:
    """``${VAR}`` replaced by its value, as Claude Code expands a configuration's headers."""
    return re.sub(r"\$\{(\w+)\}", lambda found: env[found.group(1)], value)


async def _read_over_http(server: dict[str, Any]) -> str:
    async with httpx2.AsyncClient(headers=server["headers"], timeout=httpx2.Timeout(60.0)) as http:
        async with streamable_http_client(server["url"], http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return _text(await session.call_tool("read", {"file_path": "notes.txt"}))


def _announced(proc: subprocess.Popen[str]) -> str:
    """The URL the server announces on stderr (whatever the load: waits for the line)."""
    assert proc.stderr is not None
    for line in proc.stderr:
        found = re.search(r" at (http://127\.0\.0\.1:\d+/mcp)$", line.rstrip())
        if found:
            return found.group(1)
    raise AssertionError(f"the server ended without announcing itself: {proc.wait()}")


def test_the_http_command_and_configuration_as_printed(project: Path, tmp_path: Path) -> None:
    [command_block] = code_blocks("## Over HTTP", PAGE, "sh")
    [command] = shell_lines(command_block)
    assert PRINTED_PROJECT in command and "127.0.0.1:8765" in command
    [printed_config] = code_blocks("## Over HTTP", PAGE, "json")
    env = shell_env(tmp_path)
    line = command.replace(PRINTED_PROJECT, str(project)).replace("127.0.0.1:8765", "127.0.0.1:0")
    proc = subprocess.Popen(["bash", "-c", f"exec {line}"], env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        url = _announced(proc)
        tokens = Path(env["HOME"], ".dsh-fs-tokens")  # ~ is the shell's: the HOME it ran with
        assert tokens.stat().st_mode & 0o777 == 0o600
        first = next(line for line in tokens.read_text().splitlines() if line and not line.startswith("#"))
        server = json.loads(printed_config)["mcpServers"]["dsh-fs"]
        assert server["type"] == "http" and server["url"] == PRINTED_URL
        server = {"url": url, "headers": {name: _expand(value, {**env, "DSH_FS_TOKEN": first})
                                          for name, value in server["headers"].items()}}
        assert "1: alpha" in anyio.run(_read_over_http, server)
        bare = httpx2.post(url, json=INITIALIZE, headers={"Accept": "application/json, text/event-stream"})
        assert bare.status_code == 401
    finally:
        stop(proc)
