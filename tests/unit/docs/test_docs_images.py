"""docs/IMAGES.md's opening lines, run as printed (their ``/srv/project`` a temporary
directory): the line of Python (``dsh_fs`` imported as the page assumes) builds a context that
serves ``read_image`` beside the file tools, and the command, run through the shell, serves it
over MCP (an ``initialize`` and a ``tools/list`` on its stdin).

Not covered here: ``read_image`` itself (tests/integration/tool_image, tests/e2e/mcp/test_mcp_images.py).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import dsh_fs
from docskit import DOCS, code_blocks, python_blocks, run_printed, shell_env, shell_lines

PAGE = DOCS / "IMAGES.md"


def test_the_opening_line_serves_read_image(tmp_path: Path) -> None:
    [line] = python_blocks("# Images: `read_image`", PAGE)
    assert "/srv/project" in line
    scope = run_printed(line.replace("/srv/project", str(tmp_path)), PAGE.name, dsh_fs=dsh_fs)
    assert {"read_image", "read", "write", "edit"} <= set(scope["ctx"].tools.names())  # type: ignore[attr-defined]


def test_the_opening_command_serves_read_image(tmp_path: Path) -> None:
    [block] = code_blocks("# Images: `read_image`", PAGE, "sh")
    [command] = shell_lines(block)
    assert "/srv/project" in command
    requests = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
                 "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                            "clientInfo": {"name": "t", "version": "0"}}},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]
    done = subprocess.run(["bash", "-c", command.replace("/srv/project", str(tmp_path))], env=shell_env(tmp_path),
                          input="".join(json.dumps(request) + "\n" for request in requests), capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    answers = {answer["id"]: answer for answer in map(json.loads, done.stdout.splitlines()) if "id" in answer}
    assert "read_image" in {tool["name"] for tool in answers[2]["result"]["tools"]}
