"""Helpers for the search-tool tests (imported as ``searchkit``; no tests here).

* ``FakeRg(tmp_path)`` — a stand-in ripgrep program (the reference tests' "fake bash
  executor"): a shell script that records its argv and working directory, prints scripted
  stdout/stderr, optionally sleeps or kills itself, and exits with a scripted status. Pass
  ``fake.path`` as ``rg_path``; ``fake.ended()`` says its last run is over.
* ``search_ctx(ws, **config)`` — the default deployment over ``ws`` with the search tools.
* ``call(ctx, tool, args, session=…)`` — one registry call (async).
"""

from __future__ import annotations

import os
import stat
from typing import Any

import dsh_fs


class FakeRg:
    """A scripted ripgrep (see the module docstring)."""

    def __init__(self, directory: Any) -> None:
        self.dir = os.path.join(str(directory), "fake-rg")
        os.makedirs(self.dir, exist_ok=True)
        self.path = os.path.join(self.dir, "rg")
        self.script(stdout=b"")

    def script(self, *, stdout: bytes = b"", stderr: bytes = b"", exit: int = 0, sleep: float = 0,
               kill_self: bool = False) -> "FakeRg":
        with open(os.path.join(self.dir, "stdout"), "wb") as handle:
            handle.write(stdout)
        with open(os.path.join(self.dir, "stderr"), "wb") as handle:
            handle.write(stderr)
        lines = [
            "#!/bin/sh",
            f'd="{self.dir}"',
            'echo $$ > "$d/pid"',
            'pwd > "$d/cwd"',
            ': > "$d/argv"',
            'for a in "$@"; do printf "%s\\n" "$a" >> "$d/argv"; done',
            'cat "$d/stdout"',
            'cat "$d/stderr" >&2',
        ]
        if sleep:
            lines.append(f"sleep {sleep} & echo $! > \"$d/child\"; wait")
        if kill_self:
            lines.append("kill -KILL $$")
        lines.append(f"exit {exit}")
        with open(self.path, "w", encoding="utf-8") as handle:
            handle.write("\n".join(lines) + "\n")
        os.chmod(self.path, stat.S_IRWXU)
        return self

    @property
    def argv(self) -> list[str]:
        with open(os.path.join(self.dir, "argv"), encoding="utf-8") as handle:
            return handle.read().splitlines()

    @property
    def cwd(self) -> str:
        with open(os.path.join(self.dir, "cwd"), encoding="utf-8") as handle:
            return handle.read().strip()

    def ended(self) -> bool:
        """The last run of the program has ended (exited or killed; a zombie counts as ended)."""
        try:
            with open(os.path.join(self.dir, "pid"), encoding="utf-8") as handle:
                pid = int(handle.read())
        except (OSError, ValueError):  # not started yet, or its pid not written whole yet
            return False
        return not alive(pid)

    @property
    def child(self) -> int:
        with open(os.path.join(self.dir, "child"), encoding="utf-8") as handle:
            return int(handle.read())


def search_ctx(ws: str, *, profile: str = "default", **config: Any) -> dsh_fs.Context:
    """The default deployment over ``ws`` (local provider, policy, all five tools)."""
    return dsh_fs.create_context(cwd=ws, profile=profile, **config)


async def call(ctx: dsh_fs.Context, tool: str, args: Any, *, session: Any = None, **options: Any) -> dsh_fs.ToolResult:
    """One registry call."""
    return await ctx.tools.execute(tool, args, session=session, **options)


def gone(pid: int, *, within: float = 15.0) -> bool:
    """Wait up to ``within`` seconds for process ``pid`` to end; ``True`` once it has."""
    import time

    deadline = time.monotonic() + within
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def alive(pid: int) -> bool:
    """Is process ``pid`` still running (not a zombie)?"""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False
