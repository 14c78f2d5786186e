"""MCP clients that start one ``dsh-fs mcp`` per tool call, for real (DEVIATIONS M1).

* LangChain's MCP adapter (``langchain-mcp-adapters`` 0.3.2, in its own environment:
  ``tests/clientenv.py``), in its documented default flow ``MultiServerMCPClient({...
  "transport": "stdio"}).get_tools()`` with each tool invoked directly: docs/MCP.md's program
  as printed (read then edit with ``--session``); without ``--session`` the edit is refused as
  before; a change in between is stale; a path outside the root is refused. The tool results
  are what the adapter hands the model (its error handler turns an ``isError`` result into the
  tool message text).
* The MCP Inspector's CLI (``npx @modelcontextprotocol/inspector --cli``): read, then edit,
  each its own process, with ``--session``.

The client's environment is what it passes a server by default (``HOME``, ``PATH``, …):
``HOME`` is a tmp dir, so the session store is ``$HOME/.local/state/dsh-fs``, and this
checkout's ``dsh-fs`` is first on ``PATH``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from clientenv import client_python
from docskit import DOCS, python_blocks


_SCENARIO = """
import asyncio, sys
from langchain_mcp_adapters.client import MultiServerMCPClient

async def main():
    args = ["mcp", "--root", "."] + sys.argv[1:]
    client = MultiServerMCPClient({"files": {"command": "dsh-fs", "args": args, "transport": "stdio"}})
    tools = {tool.name: tool for tool in await client.get_tools()}
    for line in sys.stdin:
        name, arguments = line.split(" ", 1)
        if name == "change":
            with open("notes.txt", "a") as handle:
                handle.write(arguments)
            continue
        tool = tools[name]
        result = await tool.ainvoke({"type": "tool_call", "id": "c", "name": name, "args": eval(arguments)})
        print(result.status, result.content if isinstance(result.content, str) else result.content[0]["text"])

asyncio.run(main())
"""
"""reads calls from stdin (``tool {args}``, or ``change TEXT`` to append to notes.txt behind the
agent's back) and invokes each as a tool call (so the adapter's error handler runs, as in an
agent); prints ``status text``"""


@pytest.fixture
def client(tmp_path: Path) -> tuple[str, str, dict[str, str]]:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("alpha draft\n")
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "PATH": f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}",
           "DSH_FS_LOCK_DIR": os.environ.get("DSH_FS_LOCK_DIR", "")}
    return client_python("langchain-mcp"), str(ws.resolve()), env


def _langchain_block() -> str:
    return python_blocks("## Clients that start a server per call", DOCS / "MCP.md")[0]


def test_the_printed_langchain_program_runs_as_printed(client: tuple[str, str, dict[str, str]]) -> None:
    python, ws, env = client
    Path(ws, "program.py").write_text(_langchain_block())
    done = subprocess.run([python, "program.py"], cwd=ws, env=env, capture_output=True, text=True, timeout=240,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout == f"The file {ws}/notes.txt has been updated successfully.\n"
    assert Path(ws, "notes.txt").read_text() == "alpha final\n"
    assert Path(env["HOME"], ".local", "state", "dsh-fs", "observations.sqlite3").exists()


def _scenario(client: tuple[str, str, dict[str, str]], calls: str, *flags: str) -> list[str]:
    python, ws, env = client
    done = subprocess.run([python, "-c", _SCENARIO, *flags], cwd=ws, env=env, input=calls, capture_output=True,
                          text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.splitlines()


EDIT = 'edit {"file_path": "notes.txt", "old_string": "draft", "new_string": "final"}\n'
READ = 'read {"file_path": "notes.txt"}\n'


def test_without_a_session_the_edit_is_refused_as_before(client: tuple[str, str, dict[str, str]]) -> None:
    ws = client[1]
    assert _scenario(client, READ + EDIT)[-1] == (
        f'error Error: edit requires reading "{ws}/notes.txt" first — read the file, then retry')
    assert Path(ws, "notes.txt").read_text() == "alpha draft\n"


def test_a_change_between_the_calls_is_stale(client: tuple[str, str, dict[str, str]]) -> None:
    ws = client[1]
    out = _scenario(client, READ + "change more\n" + EDIT, "--session", "s")
    assert out[-1].startswith(f'error Error: cannot edit "{ws}/notes.txt": file changed since it was read'), out
    assert Path(ws, "notes.txt").read_text() == "alpha draft\nmore\n"


def test_a_path_outside_the_root_is_refused(client: tuple[str, str, dict[str, str]]) -> None:
    ws = client[1]
    out = _scenario(client, 'read {"file_path": "../secret.txt"}\n', "--session", "s")
    outside = os.path.join(os.path.dirname(ws), "secret.txt")
    assert out == [f'error Error: cannot resolve "{outside}": outside the workspace "{ws}"']


def test_the_inspector_cli_with_a_session(client: tuple[str, str, dict[str, str]]) -> None:
    _, ws, env = client
    env = {**os.environ, **env}

    def call(*tool: str) -> dict[str, object]:
        done = subprocess.run(["npx", "-y", "@modelcontextprotocol/inspector", "--cli", "dsh-fs", "mcp", "--root", ws,
                               "--session", "insp", "--method", "tools/call", *tool], cwd=ws, env=env,
                              capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
        assert done.returncode == 0, done.stderr[-3000:]
        return json.loads(done.stdout)

    assert call("--tool-name", "read", "--tool-arg", "file_path=notes.txt")["isError"] is False
    edited = call("--tool-name", "edit", "--tool-arg", "file_path=notes.txt", "--tool-arg", "old_string=draft",
                  "--tool-arg", "new_string=final")
    assert edited["content"] == [{"type": "text", "text": f"The file {ws}/notes.txt has been updated successfully."}]
    assert Path(ws, "notes.txt").read_text() == "alpha final\n"
