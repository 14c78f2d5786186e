"""The README's first command: ``dsh-fs demo`` drives the real MCP server with the real client.

Covers: the scripted session completes and prints exactly what the model saw at the key
steps; its closing next steps (tracker issue 13, item 11) work exactly as printed: the MCP
client configuration starts a server over the demo's directory (the official SDK client, from
another directory), the two command lines share a session, the five-line library example
reads what they wrote. Not covered here: the individual MCP behaviours
(tests/e2e/mcp/).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest


@dataclass(frozen=True)
class Demo:
    out: str
    project: str
    env: dict[str, str]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    """One ``dsh-fs demo`` run in a fresh directory (which already holds the first scratch
    name, so the next steps must pick another)."""
    project = os.path.realpath(tmp_path_factory.mktemp("my project"))
    Path(project, "hello-dsh-fs.txt").write_text("taken\n")
    env = {**os.environ, "DSH_FS_STATE_DIR": str(tmp_path_factory.mktemp("state"))}
    proc = subprocess.run([sys.executable, "-m", "dsh_fs.cli.main", "demo"], capture_output=True, text=True,
                          timeout=180, cwd=project, env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return Demo(proc.stdout, project, env)


def _snippets(out: str) -> list[str]:
    """The indented blocks of the closing "Next steps" section, dedented, in order."""
    tail = out.split("\nNext steps\n", 1)[1]
    blocks: list[list[str]] = []
    previous = ""
    for line in tail.splitlines():
        if line.startswith("    "):
            if not previous.startswith("    "):
                blocks.append([])
            blocks[-1].append(line)
        previous = line
    return [textwrap.dedent("\n".join(block)) for block in blocks]


def test_demo_runs_the_scripted_session_end_to_end(demo: Demo) -> None:
    out = demo.out
    assert "Every step behaved as expected." in out
    assert "Use the read tool — not shell commands like cat — to inspect text files." in out  # instructions
    assert "DeepSeek Harness SDK" not in out  # a tool server sends no agent identity
    assert "first — read the file, then retry" in out  # the refused unread edit (D9 remedy)
    assert "file changed since it was read — re-read the file, then retry" in out  # the stale refusal
    assert "Created file" in out
    assert "dsh_fs/core/signal.py" in out and "class HarnessError(Exception):" in out  # glob and grep
    assert "Found 250 of " in out and "(Full grep result stored at: " in out  # a capped grep, saved…
    assert "(Showing lines 250-255 of " in out  # …and paged with read from outside the served root
    assert "4. …and the agent pages it with read (the server's own saved-results (spill) file, in its state" \
        " directory)." in out and "yet readable" not in out
    assert "(End of file - total 300000 lines)" in out
    assert "(Showing lines 150000-150002 of 300000. Use offset=150003 to continue.)" in out
    assert '"""A thread-safe, abortable cancellation token' in out  # the retry landed on disk


def test_the_demo_takes_back_what_the_agent_did_while_the_server_runs(demo: Demo) -> None:
    """Steps 16-20 (docs/HISTORY.md): the agent's changes listed, a dry run, a rewind, a rewind
    refused because someone else changed the file since (nothing clobbered)."""
    out = demo.out
    listed = out.split("$ dsh-fs sessions history demo-agent   [exit 0]\n", 1)[1].split("\n\n", 1)[0]
    steps = [line.split("  ") for line in listed.splitlines()[1:]]
    assert [(tool, paths) for _n, _time, tool, paths in steps] == [
        ("edit", "dsh_fs/core/signal.py"), ("edit", "dsh_fs/core/signal.py"), ("write", "notes/DEMO.md (created)")]
    assert "$ dsh-fs sessions rewind demo-agent --last 1 --dry-run   [exit 0]" in out
    assert "would remove notes/DEMO.md\n--- notes/DEMO.md\n+++ /dev/null\n@@ -1,3 +0,0 @@\n-# Demo\n" in out
    assert "\nremoved notes/DEMO.md\nrewound session demo-agent to step" in out
    refused = out.split("$ dsh-fs sessions rewind demo-agent --to 0   [exit 1]\n", 1)[1]
    assert "refused dsh_fs/core/signal.py: changed since this owner's last change\n" in refused
    assert "rewind of session demo-agent to step 0 refused, nothing written" in refused


def test_the_demo_ends_with_its_next_steps(demo: Demo) -> None:
    config, history, shell, library = _snippets(demo.out)
    server = json.loads(config)["mcpServers"]["dsh-fs"]
    assert os.path.isabs(server["command"]) and os.access(server["command"], os.X_OK), server
    assert server["args"][-5:] == ["mcp", "--root", demo.project, "--session", "my-client"]
    assert history.split()[-3:] == ["sessions", "history", "my-client"] and len(history.splitlines()) == 1
    assert [line.split()[1:3] for line in shell.splitlines()] == [["write", "hello-dsh-fs-2.txt"],
                                                                   ["edit", "hello-dsh-fs-2.txt"]]
    assert all("--session my-agent" in line for line in shell.splitlines())
    assert len(library.splitlines()) == 5 and f'create_context(root="{demo.project}")' in library


@pytest.mark.timeout(120)
def test_the_printed_mcp_config_serves_the_directory(demo: Demo, tmp_path: Path) -> None:
    """Started as a client would start it — from another directory, with the SDK's stdio
    client — the configured server lists the tools and resolves paths in the demo's directory;
    what it writes, the printed history line lists."""
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    config, history = _snippets(demo.out)[:2]
    server = json.loads(config)["mcpServers"]["dsh-fs"]
    Path(demo.project, "notes.txt").write_text("served\n")

    async def session() -> tuple[list[str], str]:
        params = StdioServerParameters(command=server["command"], args=server["args"], cwd=str(tmp_path), env=demo.env)
        async with stdio_client(params) as streams, ClientSession(*streams) as client:
            await client.initialize()
            names = sorted(tool.name for tool in (await client.list_tools()).tools)
            result = await client.call_tool("read", {"file_path": "notes.txt"})
            wrote = await client.call_tool("write", {"file_path": "from-client.txt", "content": "hi\n"})
            assert not wrote.is_error, wrote.content
            return names, "".join(getattr(block, "text", "") for block in result.content)

    names, text = anyio.run(session)
    assert names == ["edit", "glob", "grep", "list", "read", "write"]
    assert text.startswith(f"<path>{demo.project}/notes.txt</path>") and "1: served" in text, text
    listed = subprocess.run(["/bin/sh", "-c", history], cwd=tmp_path, env=demo.env, capture_output=True, text=True,
                            timeout=60)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.endswith(f"  write  {demo.project}/from-client.txt (created)\n"), listed.stdout


def test_the_printed_command_lines_and_library_example_work(demo: Demo, tmp_path: Path) -> None:
    """The two command lines, pasted into a shell in the demo's directory, create and then edit
    a file in one session; the library example, run from anywhere, reads the result."""
    _, _, shell, library = _snippets(demo.out)
    for line in shell.splitlines():
        done = subprocess.run(["/bin/sh", "-c", line], cwd=demo.project, env=demo.env, capture_output=True, text=True,
                              timeout=60)
        assert done.returncode == 0, (line, done.stdout, done.stderr)
    assert Path(demo.project, "hello-dsh-fs-2.txt").read_text() == "Hello, agent."
    assert Path(demo.project, "hello-dsh-fs.txt").read_text() == "taken\n"
    done = subprocess.run([sys.executable, "-c", library], cwd=tmp_path, env=demo.env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == (f"<path>{demo.project}/hello-dsh-fs-2.txt</path>\n<type>file</type>\n<content>\n"
                           "1: Hello, agent.\n\n(End of file - total 1 lines)\n</content>\n")
