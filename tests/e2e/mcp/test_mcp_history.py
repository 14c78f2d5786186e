"""The history of ``dsh-fs mcp`` end to end (docs/HISTORY.md "MCP"): the person running the
server lists and rewinds what its agent did from the command line while the server runs.

Real server processes driven by the official SDK clients, the CLI in subprocesses, one
``DSH_FS_STATE_DIR`` in a tmp dir. Covers: ``--session NAME`` over stdio records every change
into the durable history; ``dsh-fs sessions history NAME`` lists it and ``sessions rewind``
takes it back while the server runs (the agent's next edit of a rewound file is then stale, so
it re-reads; a file it changed again after the rewind is never clobbered by a second rewind);
a second server process of the name adds its steps to the same history; over HTTP each bearer
token's changes are one history, ``http:agent-<n>``, rewound without touching another token's;
``undo_edit`` over MCP.
Not covered here: the CLI's output in detail (tests/e2e/cli/test_cli_history.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from httpkit import http_server_async, http_session

pytestmark = pytest.mark.anyio


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.setenv("DSH_FS_STATE_DIR", str(tmp_path / "state"))  # the HTTP server inherits it
    monkeypatch.setenv("DSH_FS_LOCK_DIR", str(tmp_path / "locks"))
    monkeypatch.delenv("DSH_FS_SESSION", raising=False)
    return dict(os.environ)


@pytest.fixture
def ws(tmp_path: Path) -> str:
    path = tmp_path / "ws"
    path.mkdir()
    (path / "a.txt").write_text("alpha\nbeta\n")
    return os.path.realpath(path)


def cli(env: dict[str, str], ws: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dsh_fs.cli.main", "sessions", *args], cwd=ws, env=env,
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)


async def text(session: ClientSession, tool: str, arguments: dict[str, Any]) -> tuple[bool, str]:
    result = await session.call_tool(tool, arguments)
    return bool(result.is_error), "".join(getattr(block, "text", "") for block in result.content)


def stdio(ws: str, env: dict[str, str], *flags: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "dsh_fs.cli.main", "mcp", "--root", ws, *flags],
                                 cwd=ws, env=env)


async def test_a_named_sessions_history_is_listed_and_rewound_while_the_server_runs(ws: str,
                                                                                    env: dict[str, str]) -> None:
    a = f"{ws}/a.txt"
    with anyio.fail_after(120):
        async with stdio_client(stdio(ws, env, "--session", "agent")) as streams, ClientSession(*streams) as agent:
            await agent.initialize()
            assert not (await text(agent, "read", {"file_path": "a.txt"}))[0]
            assert (await text(agent, "edit", {"file_path": "a.txt", "old_string": "beta",
                                               "new_string": "BETA"}))[1] == \
                f"The file {a} has been updated successfully."
            assert not (await text(agent, "write", {"file_path": "notes.md", "content": "# notes\n"}))[0]
            listed = await anyio.to_thread.run_sync(lambda: cli(env, ws, "history", "agent"))
            assert [line.split("  ")[2:] for line in listed.stdout.splitlines()] == [
                ["edit", a], ["write", f"{ws}/notes.md (created)"]], listed.stdout + listed.stderr
            done = await anyio.to_thread.run_sync(lambda: cli(env, ws, "rewind", "agent", "--to", "0"))
            assert done.returncode == 0, done.stderr
            assert open(a).read() == "alpha\nbeta\n" and not os.path.exists(f"{ws}/notes.md")
            stale, said = await text(agent, "edit", {"file_path": "a.txt", "old_string": "alpha", "new_string": "A"})
            assert stale and "re-read the file" in said  # the server's agent sees the rewind as a change
            await text(agent, "read", {"file_path": "a.txt"})
            assert not (await text(agent, "edit", {"file_path": "a.txt", "old_string": "alpha",
                                                   "new_string": "A"}))[0]
            with open(a, "a") as person:  # someone else changes the file after the agent
                person.write("a person's line\n")
            redo = await anyio.to_thread.run_sync(lambda: cli(env, ws, "rewind", "agent", "--last", "2"))
            assert redo.returncode == 1 and f"refused {a}: changed since" in redo.stderr, redo.stderr
            assert open(a).read() == "A\nbeta\na person's line\n"
    # another process of the session: its steps follow in the same history
    with anyio.fail_after(60):
        async with stdio_client(stdio(ws, env, "--session", "agent")) as streams, ClientSession(*streams) as later:
            await later.initialize()
            assert not (await text(later, "write", {"file_path": "later.txt", "content": "x\n"}))[0]
    listed = cli(env, ws, "history", "agent").stdout.splitlines()
    assert [line.split("  ")[2] for line in listed] == ["edit", "write", "rewind", "edit", "write"]
    undone = cli(env, ws, "rewind", "agent", "--last", "1")
    assert undone.returncode == 0 and not os.path.exists(f"{ws}/later.txt"), undone.stdout + undone.stderr


async def test_undo_edit_over_mcp(ws: str, env: dict[str, str]) -> None:
    a = f"{ws}/a.txt"
    with anyio.fail_after(60):
        async with stdio_client(stdio(ws, env, "--tools", "str_replace_editor")) as streams, \
                ClientSession(*streams) as agent:
            await agent.initialize()
            tools = {tool.name: tool for tool in (await agent.list_tools()).tools}
            assert "undo_edit" in tools["str_replace_editor"].input_schema["properties"]["command"]["enum"]
            await text(agent, "str_replace_editor", {"command": "view", "path": a})
            await text(agent, "str_replace_editor", {"command": "str_replace", "path": a, "old_str": "beta",
                                                     "new_str": "gamma"})
            error, said = await text(agent, "str_replace_editor", {"command": "undo_edit", "path": a})
            assert not error and said.startswith(f"Last edit to {a} undone successfully."), said
    assert open(a).read() == "alpha\nbeta\n"


async def test_each_http_token_has_one_history(ws: str, env: dict[str, str]) -> None:
    with anyio.fail_after(120):
        async with http_server_async(ws, "--tokens", "2") as endpoint:
            async with http_session(endpoint, agent=0) as first:
                assert not (await text(first, "write", {"file_path": "one.txt", "content": "1\n"}))[0]
            async with http_session(endpoint, agent=0) as again:  # another MCP session of the same token
                assert not (await text(again, "write", {"file_path": "one-more.txt", "content": "1\n"}))[0]
            async with http_session(endpoint, agent=1) as second:
                assert not (await text(second, "write", {"file_path": "two.txt", "content": "2\n"}))[0]
            listed = await anyio.to_thread.run_sync(lambda: cli(env, ws, "history", "http:agent-1"))
            assert [line.split("  ")[3] for line in listed.stdout.splitlines()] == [
                f"{ws}/one.txt (created)", f"{ws}/one-more.txt (created)"], listed.stdout + listed.stderr
            done = await anyio.to_thread.run_sync(lambda: cli(env, ws, "rewind", "http:agent-2", "--to", "0"))
            assert done.returncode == 0, done.stderr
    assert sorted(os.listdir(ws)) == ["a.txt", "one-more.txt", "one.txt"]
