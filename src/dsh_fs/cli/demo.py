"""A scripted agent session over the real MCP client and server (the README's first command).

It copies the package's own sources to a temporary workspace, starts ``dsh-fs mcp --root
--session demo-agent`` on it over stdio (its history and session store in the workspace's own
state directory), and plays the calls an agent would make, printing each call and exactly
the text the model sees: a glob and a grep to find its way, a capped grep whose complete
result it pages with read, a read, an edit refused without a read, a read, a successful edit,
a change by another process and the resulting stale refusal, a re-read and a successful
retry, a new file written, and a huge file paged. Then the person takes back what the agent
did, from the command line while the server runs (docs/HISTORY.md): the agent's changes
listed (``dsh-fs sessions history``), a dry run, a rewind, and a rewind refused because someone
else changed the file since. It ends with the next steps for the directory it was run in
(``next_steps``).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import textwrap
from collections.abc import Callable
from typing import Any

from .next_steps import dsh_fs_command, next_steps, scratch_name

__all__ = ("run_demo",)

_RULE = "─" * 78


def _show(out: Callable[[str], None], title: str, body: str) -> None:
    out(f"\n{_RULE}\n{title}\n{_RULE}")
    out(body)


def _prepare_workspace(base: str) -> str:
    """Copy ``dsh_fs`` sources into ``base/project`` and add a large log file."""
    import dsh_fs

    source = os.path.dirname(os.path.abspath(dsh_fs.__file__))
    project = os.path.join(base, "project")
    shutil.copytree(source, os.path.join(project, "dsh_fs"), ignore=shutil.ignore_patterns("__pycache__"))
    with open(os.path.join(project, "server.log"), "w", encoding="utf-8") as log:
        for i in range(1, 300_001):
            log.write(f"2026-11-29T12:{(i // 60) % 60:02d}:{i % 60:02d}Z INFO request {i} served in {i % 97} ms\n")
    return project


SESSION = "demo-agent"
"""the demo server's ``--session``: the history the person lists and rewinds"""


async def _take_back(out: Callable[[str], None], project: str, env: dict[str, str], target: str,
                     surprises: list[str]) -> None:
    """Steps 16-19: the person lists the agent's changes and takes them back from the command line
    while the server runs (``dsh-fs sessions history|rewind``, another process)."""
    import anyio

    async def person(step: str, args: list[str], expect: int) -> str:
        done = await anyio.run_process([sys.executable, "-m", "dsh_fs.cli.main", "sessions", *args], cwd=project,
                                       env=env, check=False)
        said = (done.stdout.decode() + done.stderr.decode()).replace(project + "/", "")
        _show(out, f"{step}\n$ dsh-fs sessions {' '.join(args)}   [exit {done.returncode}]", said.rstrip("\n"))
        if done.returncode != expect:
            surprises.append(step)
        return said

    listed = await person("16. The person lists what the agent changed (while the server runs):",
                          ["history", SESSION], 0)
    if "write  notes/DEMO.md (created)" not in listed:
        surprises.append("16. (the new file is not in the history)")
    await person("17. A dry run of taking back the agent's last change: the diff, nothing written.",
                 ["rewind", SESSION, "--last", "1", "--dry-run"], 0)
    await person("18. The rewind: the file the agent created is gone.", ["rewind", SESSION, "--last", "1"], 0)
    if os.path.exists(os.path.join(project, "notes", "DEMO.md")):
        surprises.append("18. (notes/DEMO.md is still there)")
    with open(os.path.join(project, target), "a", encoding="utf-8") as person_edit:
        person_edit.write("# a person's later change\n")
    _show(out, f"19. Someone else changes {target} after the agent:", "it appends '# a person's later change'")
    await person("20. Taking back all the agent's edits is refused: nothing is written, nothing clobbered.",
                 ["rewind", SESSION, "--to", "0"], 1)
    with open(os.path.join(project, target), encoding="utf-8") as kept:
        if not kept.read().endswith("# a person's later change\n"):
            surprises.append("20. (the person's change was lost)")


async def run_demo(out: Callable[[str], None] = print, *, keep: bool = False) -> int:
    """Play the scripted session; returns 0 when every step behaved as expected (then the next
    steps for the current directory follow).

    :param out: where to print (one call per line group)
    :param keep: keep the temporary workspace (its path is printed)
    """
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    here = os.getcwd()  # the directory the closing next steps are for
    base = tempfile.mkdtemp(prefix="dsh-fs-demo-")
    project = _prepare_workspace(base)
    env = {**os.environ, "DSH_FS_STATE_DIR": os.path.join(base, "state")}  # the demo's history, removed with it
    env.pop("DSH_FS_SESSION", None)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "dsh_fs.cli.main", "mcp", "--root", project, "--session", SESSION],
        cwd=project, env=env,
    )
    surprises: list[str] = []
    try:
        async with stdio_client(params) as streams:
            async with ClientSession(*streams) as session:
                init = await session.initialize()
                _show(out, f"MCP server started on a copy of the dsh_fs sources: {project}",
                      f"server: {init.server_info.name}\ninstructions (the tools' guidance):\n\n"
                      + textwrap.indent(init.instructions or "", "  "))
                listed = await session.list_tools()
                out("\ntools: " + ", ".join(t.name for t in listed.tools))

                async def call(step: str, tool: str, args: dict[str, Any], expect_error: bool, clip: int = 0) -> str:
                    shown = {k: (v if not isinstance(v, str) or len(v) < 70 else v[:67] + "...") for k, v in args.items()}
                    result = await session.call_tool(tool, args)
                    text = "".join(getattr(block, "text", "") for block in result.content)
                    verdict = "error result" if result.is_error else "ok"
                    lines = text.split("\n")
                    body = text
                    if clip and len(lines) > clip + 3:  # long results: the head and the footer
                        body = "\n".join([*lines[:clip], f"  [… {len(lines) - clip - 2} more lines …]", *lines[-2:]])
                    _show(out, f"{step}\n→ {tool} {json.dumps(shown, ensure_ascii=False)}   [{verdict}]", body)
                    if bool(result.is_error) != expect_error:
                        surprises.append(step)
                    return text

                target = "dsh_fs/core/signal.py"
                await call("1. The agent finds files by name (glob, newest first).", "glob",
                           {"pattern": "**/s*.py", "path": "dsh_fs/core"}, False)
                await call("2. It searches file contents (grep; ripgrep regex, one include glob).", "grep",
                           {"pattern": "class \\w+Error\\(", "include": "*.py"}, False)
                capped = await call("3. A broad search is capped; the complete result is saved for paging…", "grep",
                                    {"pattern": "^def ", "path": "dsh_fs"}, False, clip=8)
                if "stored at: " not in capped:
                    surprises.append("3. (the result was not capped and saved)")
                locator = capped.rsplit("stored at: ", 1)[-1].split(". Use read", 1)[0]
                await call("4. …and the agent pages it with read (the server's own saved-results (spill) file, in its"
                           " state directory).", "read",
                           {"file_path": locator, "offset": 250, "limit": 6}, False)
                await call("5. The agent reads a file.", "read", {"file_path": "dsh_fs/fs/paths.py", "limit": 12}, False)
                await call("6. It tries to edit a file it has not read: refused.", "edit",
                           {"file_path": target, "old_string": "__slots__", "new_string": "__slots__  # demo"}, True)
                await call("7. It reads that file (a window is enough).", "read",
                           {"file_path": target, "offset": 1, "limit": 20}, False)
                await call("8. The edit now succeeds.", "edit",
                           {"file_path": target, "old_string": '"""A cancellation token',
                            "new_string": '"""A thread-safe cancellation token'}, False)
                with open(os.path.join(project, target), "a", encoding="utf-8") as other:
                    other.write("\n# touched by another process\n")
                _show(out, f"9. Another process changes {target} behind the agent's back:",
                      "it appends the line '# touched by another process'")
                await call("10. The agent's next edit is refused as stale: nothing is overwritten.", "edit",
                           {"file_path": target, "old_string": "thread-safe cancellation token",
                            "new_string": "thread-safe, abortable cancellation token"}, True)
                await call("11. It re-reads the file…", "read", {"file_path": target, "offset": 1, "limit": 5}, False)
                await call("12. …and the retry succeeds on the fresh content.", "edit",
                           {"file_path": target, "old_string": "thread-safe cancellation token",
                            "new_string": "thread-safe, abortable cancellation token"}, False)
                await call("13. It writes a new file (no read needed to create).", "write",
                           {"file_path": "notes/DEMO.md", "content": "# Demo\n\nWritten through MCP.\n"}, False)
                await call("14. It pages through a 300,000-line (20 MB) log: the last lines…", "read",
                           {"file_path": "server.log", "offset": 299_996, "limit": 5}, False)
                await call("15. …and a window in the middle.", "read",
                           {"file_path": "server.log", "offset": 150_000, "limit": 3}, False)
                await _take_back(out, project, env, target, surprises)
        with open(os.path.join(project, target), encoding="utf-8") as edited:
            first = edited.readline().rstrip("\n")
        _show(out, "On disk afterwards (first line of the edited file):", first)
    finally:
        if keep:
            out(f"\nworkspace kept at {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)
    if surprises:
        out("\nUNEXPECTED outcomes in steps: " + "; ".join(surprises))
        return 1
    out("\nEvery step behaved as expected.")
    _show(out, "Next steps", next_steps(here, dsh_fs_command(), scratch_name(here)))
    return 0
