"""``dsh-fs mcp --session NAME`` end to end (DEVIATIONS M1): one observation owner across
server processes, as a client that starts a server per tool call (LangChain's MCP adapter,
LlamaIndex's ``BasicMCPClient``, the Inspector's CLI) needs it.

Every call here is its own ``dsh-fs mcp`` process driven by the official SDK client (spawn,
``initialize``, one ``tools/call``, close), with ``DSH_FS_STATE_DIR`` in a tmp dir. Covers: a
read in one process authorizes the edit in the next; without ``--session`` the edit is refused
as before; a change made by someone else in between is ``FS_STALE_VERSION``; the environment
variable names the session too; the CLI's tool commands and the server share one session;
several servers of one session at once (concurrent processes, each reading and editing one
file in a loop) lose no edit and leave an intact store; ``--session`` over HTTP is a usage
error. Not here: the store itself (``tests/unit/session_store/test_session_store.py``).
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

pytestmark = pytest.mark.anyio

STALE = "file changed since it was read"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("DSH_FS_")}
    environ.update(DSH_FS_STATE_DIR=str(tmp_path / "state"), DSH_FS_LOCK_DIR=str(tmp_path / "locks"))
    return environ


async def call(ws: str, env: dict[str, str], tool: str, arguments: dict[str, Any], *flags: str) -> tuple[bool, str]:
    """One tool call in a fresh ``dsh-fs mcp`` process: ``(is_error, text)``."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "dsh_fs.cli.main", "mcp", "--root", ws, *flags], cwd=ws, env=env
    )
    with anyio.fail_after(60):
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                result = await session.call_tool(tool, arguments)
    return bool(result.is_error), "".join(block.text for block in result.content if block.type == "text")


def _file(ws: str, text: str = "alpha\nbeta\n") -> str:
    path = os.path.join(ws, "a.txt")
    with open(path, "w") as handle:
        handle.write(text)
    return path


async def test_a_read_in_one_process_authorizes_the_edit_in_the_next(ws: str, env: dict[str, str]) -> None:
    path = _file(ws)
    assert (await call(ws, env, "read", {"file_path": "a.txt"}, "--session", "s1"))[0] is False
    edited = await call(ws, env, "edit", {"file_path": "a.txt", "old_string": "beta", "new_string": "gamma"},
                        "--session", "s1")
    assert edited == (False, f"The file {path} has been updated successfully.")
    # the edit recorded its own version: the next process edits again without a read
    assert (await call(ws, env, "edit", {"file_path": "a.txt", "old_string": "alpha", "new_string": "one"},
                       "--session", "s1"))[0] is False
    assert Path(path).read_text() == "one\ngamma\n"
    # another name is another owner: it has observed nothing
    assert await call(ws, env, "edit", {"file_path": "a.txt", "old_string": "one", "new_string": "x"},
                      "--session", "s2") == (True, f'Error: edit requires reading "{path}" first — read the file, then retry')


async def test_without_a_session_each_process_is_its_own_owner(ws: str, env: dict[str, str]) -> None:
    path = _file(ws)
    assert (await call(ws, env, "read", {"file_path": "a.txt"}))[0] is False
    assert await call(ws, env, "edit", {"file_path": "a.txt", "old_string": "beta", "new_string": "gamma"}) == (
        True, f'Error: edit requires reading "{path}" first — read the file, then retry')
    assert Path(path).read_text() == "alpha\nbeta\n"
    assert not os.path.exists(env["DSH_FS_STATE_DIR"])  # nothing is stored without a name


async def test_a_change_by_someone_else_between_the_processes_is_stale(ws: str, env: dict[str, str]) -> None:
    path = _file(ws)
    assert (await call(ws, env, "read", {"file_path": "a.txt"}, "--session", "s"))[0] is False
    with open(path, "a") as handle:
        handle.write("added behind the agent's back\n")
    is_error, text = await call(ws, env, "edit", {"file_path": "a.txt", "old_string": "beta", "new_string": "gamma"},
                                "--session", "s")
    assert is_error and text.startswith(f'Error: cannot edit "{path}": {STALE}'), text
    assert Path(path).read_text() == "alpha\nbeta\nadded behind the agent's back\n"


async def test_the_environment_variable_and_the_cli_share_the_session(ws: str, env: dict[str, str]) -> None:
    path = _file(ws)
    done = subprocess.run([sys.executable, "-m", "dsh_fs.cli.main", "read", "a.txt", "--session", "shared"],
                          cwd=ws, env=env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    edited = await call(ws, {**env, "DSH_FS_SESSION": "shared"}, "edit",
                        {"file_path": "a.txt", "old_string": "beta", "new_string": "gamma"})
    assert edited == (False, f"The file {path} has been updated successfully.")


async def test_servers_of_one_session_at_once_lose_no_edit(ws: str, env: dict[str, str]) -> None:
    """Four long-lived servers of one session, each in a loop: read, then replace the end
    marker with its own line. Every edit reported done is in the file exactly once; a loser
    gets a refusal, never a lost update; the store stays intact."""
    path = _file(ws, "END\n")
    workers, rounds = 4, 6
    done: list[str] = []
    refused: list[str] = []

    async def worker(index: int) -> None:
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "dsh_fs.cli.main", "mcp", "--root", ws, "--session", "many"],
            cwd=ws, env=env,
        )
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                for turn in range(rounds):
                    line = f"w{index}.{turn}"
                    await session.call_tool("read", {"file_path": "a.txt"})
                    result = await session.call_tool(
                        "edit", {"file_path": "a.txt", "old_string": "END", "new_string": f"{line}\nEND"})
                    text = result.content[0].text  # type: ignore[union-attr]
                    (refused if result.is_error else done).append(line if not result.is_error else text)

    with anyio.fail_after(240):
        async with anyio.create_task_group() as tg:
            for index in range(workers):
                tg.start_soon(worker, index)
    lines = Path(path).read_text().splitlines()
    assert lines[-1] == "END"
    assert sorted(lines[:-1]) == sorted(done)  # each done edit once, nothing else
    assert len(done) + len(refused) == workers * rounds and done
    assert all(STALE in text for text in refused), refused
    with sqlite3.connect(os.path.join(env["DSH_FS_STATE_DIR"], "observations.sqlite3")) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert conn.execute("SELECT COUNT(*) FROM observations WHERE session = ?", (b"many",)).fetchone() == (1,)


def test_a_session_over_http_is_a_usage_error(ws: str, env: dict[str, str]) -> None:
    args = [sys.executable, "-m", "dsh_fs.cli.main", "mcp", "--root", ws, "--http", "127.0.0.1:0", "--session", "s"]
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.endswith(
        "Error: --session applies only to stdio: over HTTP each MCP session (a stateless client: its token)"
        " is its own observation owner\n"), done.stderr
    assert "bearer token" not in done.stderr  # refused before any token is minted


def test_an_exported_session_is_ignored_over_http_with_a_warning(ws: str, env: dict[str, str]) -> None:
    """``$DSH_FS_SESSION`` exported for the tool commands does not stop ``mcp --http`` (M1)."""
    args = [sys.executable, "-m", "dsh_fs.cli.main", "mcp", "--root", ws, "--http", "127.0.0.1:0", "--no-auth"]
    proc = subprocess.Popen(args, env={**env, "DSH_FS_SESSION": "s"}, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = proc.stderr.readline()
        served = proc.stderr.readline()
    finally:
        proc.kill()
        proc.communicate(timeout=30)
    assert first == ("dsh-fs mcp: $DSH_FS_SESSION is ignored: it applies only to stdio; over HTTP each MCP"
                     " session (a stateless client: its token) is its own observation owner\n"), first
    assert served.startswith(f"dsh-fs mcp: serving {ws} at http://127.0.0.1:"), served
