"""Shared helpers of the robustness tests (tracker issue 4). Not a test module.

* deterministic file contents per (name, generation, size), so a test can tell "old",
  "new" and "anything else" (a mix, a truncation) apart byte for byte;
* ``call`` — one registry call with a hard timeout;
* ``temp_entries`` / ``snapshot`` — what a failed or killed mutation may have left behind;
* ``Lines`` — a line-oriented JSON pipe to a helper process, with deadlines (no hang);
* ``run_as`` — Python code in a child process that drops root for another user (skips
  when not root; a switch refused to root fails, ``refused_privilege``);
* ``refused_privilege(reason)`` — a privileged step (a mount, a switch of user) the machine
  refused: skipped with ``reason`` when not root, a failure as root (CI runs as root: these
  tests never skip there);
* ``mcp_clients`` / ``mcp_call`` — ``dsh-fs mcp --root`` stdio servers driven by the MCP
  SDK's ``ClientSession`` (``needs_mcp`` skips when the server package is absent);
  ``RawMcp`` — the same server spoken to in raw JSON-RPC lines, for messages no SDK sends.

Imported by the test modules (pytest puts ``tests/`` on ``sys.path``) and by the helper
scripts run as child processes (``child_env`` puts ``tests/`` on ``PYTHONPATH``).
"""

from __future__ import annotations

import codecs
import contextlib
import importlib.util
import json
import os
import select
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from typing import Any, NoReturn

import anyio
import pytest

import dsh_fs
from dsh_fs.testing.snapshot import snapshot as snapshot  # re-exported for the robustness tests

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(os.path.abspath(dsh_fs.__file__)))
"""the source root of the ``dsh_fs`` this process imported: helper processes import the same one
(the work tree's ``src``, or under ``scripts/mutate.py`` the mutated copy)"""

__all__ = (
    "HERE",
    "Lines",
    "call",
    "child_env",
    "edit_content",
    "edit_head",
    "mcp_call",
    "mcp_clients",
    "needs_mcp",
    "python_argv",
    "RawMcp",
    "run_as",
    "snapshot",
    "temp_entries",
    "write_content",
)


# -- deterministic contents -------------------------------------------------------------

def write_content(name: str, gen: int, size: int) -> str:
    """The text a ``write`` of generation ``gen`` puts in ``name``: ``size`` characters
    (``size == 0`` alternates between empty and one line). Every line, even a cut one,
    starts with a letter that differs between consecutive generations, so any mix of two
    generations differs from both (and the result-time diff takes its linear path)."""
    if size == 0:
        return "" if gen % 2 == 0 else f"{name} g{gen}\n"
    line = f"{'ABCDEFGHIJ'[gen % 10]}{gen:06d} {name} ĀéЖ€😀 lorem ipsum dolor\n"
    return (line * (size // len(line) + 1))[:size]


def edit_head(gen: int) -> str:
    """The unique head line of an edited file at generation ``gen`` (length varies with ``gen``)."""
    return f"HEAD {gen:06d}\n" + "+" * (gen % 5) + "\n"


def edit_content(name: str, gen: int, size: int) -> str:
    """The text of an edited file at generation ``gen``: ``edit_head(gen)`` then a fixed body
    of about ``size`` characters. An ``edit`` of ``edit_head(gen)`` → ``edit_head(gen + 1)``
    moves it to the next generation."""
    line = f"{name} body ÄÖÜ ßẞ line\n"
    return edit_head(gen) + (line * (size // len(line) + 1))[:size]


# -- calls and snapshots ----------------------------------------------------------------

async def call(ctx: Any, tool: str, args: Any, session: Any, *, timeout: float = 60.0) -> Any:
    """``ctx.tools.execute(tool, args, session=session)`` that fails the test after ``timeout`` s."""
    with anyio.fail_after(timeout):
        return await ctx.tools.execute(tool, args, session=session)


def temp_entries(directory: str) -> list[str]:
    """Names in ``directory`` that look like temp-file litter (``*.tmp``; ``*.tmpdir`` too: the
    reference's staging directories)."""
    return sorted(n for n in os.listdir(directory) if n.endswith(".tmpdir") or n.endswith(".tmp"))


# -- child processes --------------------------------------------------------------------

def child_env() -> dict[str, str]:
    """The environment for helper processes: this one's (incl. ``DSH_FS_LOCK_DIR``), with the
    package sources and this directory importable."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (SRC, HERE, env.get("PYTHONPATH", "")) if p)
    env["PYTHONUNBUFFERED"] = "1"
    return env


class Lines:
    """A helper process spoken to in JSON lines over its stdin/stdout, with deadlines.

    :param argv: the command (``[sys.executable, script, ...]``)
    :raises TimeoutError: (from ``recv``) when no line arrives in time
    """

    def __init__(self, argv: list[str], *, cwd: str | None = None) -> None:
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            cwd=cwd, env=child_env(), text=True, bufsize=1,
        )
        self._buffer = ""
        self._decoder = codecs.getincrementaldecoder("utf-8")()

    def send(self, message: Any) -> None:
        """Write one JSON line."""
        self.send_text(json.dumps(message))

    def send_text(self, text: str) -> None:
        """Write one line of raw text (need not be valid JSON)."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(text + "\n")
        self.proc.stdin.flush()

    def recv(self, timeout: float = 60.0) -> Any:
        """The next JSON line (waits at most ``timeout`` seconds)."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        while "\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no answer from {self.proc.args!r} within {timeout} s")
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                raw = os.read(fd, 65536)
                chunk = self._decoder.decode(raw)
                if not raw:
                    err = self.proc.stderr.read() if self.proc.stderr is not None else ""
                    raise EOFError(f"helper {self.proc.args!r} exited: {err[-4000:]}")
                self._buffer += chunk
        line, self._buffer = self._buffer.split("\n", 1)
        return json.loads(line)

    def close(self) -> None:
        """Close stdin, wait briefly, then kill (idempotent)."""
        if self.proc.poll() is None:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.close()
                self.proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait(timeout=10)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


_DROP = """
import json, os, sys
def drop():
    \"\"\"Become the test's user (call it after importing what the python install may close to them).\"\"\"
    uid, gid, groups = json.loads(os.environ["DSH_FS_TEST_USER"])
    os.setgroups(groups); os.setgid(gid); os.setuid(uid)
"""


def run_as(code: str, *args: str, uid: int, gid: int, groups: tuple[int, ...] = (), cwd: str,
           env: dict[str, str] | None = None, timeout: float = 50.0) -> Any:
    """Run the Python ``code`` (with ``args`` as ``sys.argv[1:]``) in a child process, as root
    until it calls ``drop()`` (defined for it), which switches to ``uid``/``gid``/``groups``;
    return the JSON the child prints last. Skips the test when not root; a switch refused to
    root (e.g. in a user namespace) is ``refused_privilege``.
    """
    if os.geteuid() != 0:
        pytest.skip("switching to another user needs root")
    child = {**child_env(), **(env or {}), "DSH_FS_TEST_USER": json.dumps([uid, gid, list(groups)])}
    proc = subprocess.run([sys.executable, "-c", _DROP + code, *args], capture_output=True, text=True,
                          timeout=timeout, env=child, cwd=cwd)
    if proc.returncode != 0 and "drop()" in proc.stderr and "PermissionError" in proc.stderr:
        refused_privilege(f"cannot switch to uid {uid}: {proc.stderr[-300:]}")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def refused_privilege(reason: str) -> NoReturn:
    """End a test whose privileged step (mounting a tmpfs, switching to another user) this
    machine refused: skipped with ``reason`` when not running as root; as root, where the step
    must work (CI runs the suite as root), a failure with ``reason``."""
    if os.geteuid() == 0:
        pytest.fail(f"as root this test must run, but: {reason}")
    pytest.skip(reason)


def python_argv(script: str, *args: str) -> list[str]:
    """``[sys.executable, <tests/>script, *args]`` (``script`` relative to ``tests/``, e.g.
    ``robustness/fs_local/edit_worker.py``)."""
    return [sys.executable, os.path.join(HERE, script), *args]


# -- MCP servers ----------------------------------------------------------------------------

def _mcp_available() -> bool:
    return importlib.util.find_spec("dsh_fs.mcp") is not None and importlib.util.find_spec("mcp") is not None


needs_mcp = pytest.mark.skipif(not _mcp_available(), reason="dsh_fs.mcp (the MCP server) is not available")


@contextlib.asynccontextmanager
async def mcp_clients(root: str | list[str], count: int, *, cwd: str | None = None) -> AsyncIterator[list[Any]]:
    """``count`` ``dsh-fs mcp --root ROOT`` stdio servers (one ``--root`` per entry of a list),
    each with an initialized ClientSession; the process cwd is ``cwd``, else the first root."""
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    roots = [root] if isinstance(root, str) else root
    args = ["-m", "dsh_fs.cli.main", "mcp", *(a for r in roots for a in ("--root", r))]
    params = StdioServerParameters(command=sys.executable, args=args, cwd=cwd or roots[0], env=child_env())
    async with contextlib.AsyncExitStack() as stack:
        sessions = []
        for _ in range(count):
            streams = await stack.enter_async_context(stdio_client(params))
            session = await stack.enter_async_context(ClientSession(*streams))
            with anyio.fail_after(60):
                await session.initialize()
            sessions.append(session)
        yield sessions


def mcp_reply(result: Any) -> dict[str, Any]:
    """A ``CallToolResult`` as ``{"ok", "code", "text"}`` (the code from ``_meta.dsh_fs.error``)."""
    text = "".join(getattr(block, "text", "") for block in result.content)
    meta = (result.meta or {}).get("dsh_fs", {})
    code = meta.get("error", {}).get("code") if isinstance(meta, dict) else None
    return {"ok": not result.is_error, "code": code, "text": text}


async def mcp_call(session: Any, tool: str, args: Any, *, timeout: float = 60.0) -> dict[str, Any]:
    """One ``tools/call`` with a hard timeout, as ``mcp_reply``."""
    with anyio.fail_after(timeout):
        return mcp_reply(await session.call_tool(tool, args))


class RawMcp(Lines):
    """A ``dsh-fs mcp --root ROOT`` stdio server driven with raw JSON-RPC lines (initialized)."""

    PROTOCOL = "2025-06-18"

    def __init__(self, root: str) -> None:
        super().__init__([sys.executable, "-m", "dsh_fs.cli.main", "mcp", "--root", root], cwd=root)
        self._id = 0
        params = {"protocolVersion": self.PROTOCOL, "capabilities": {},
                  "clientInfo": {"name": "robustness", "version": "0"}}
        reply = self.request("initialize", json.dumps(params))
        assert "result" in reply, reply
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def request(self, method: str, params_json: str, *, timeout: float = 30.0) -> dict[str, Any]:
        """Send one request whose ``params`` is the raw JSON text ``params_json``; return the
        response with its id (notifications in between are skipped).

        :raises TimeoutError: when the server does not answer in time
        """
        self._id += 1
        self.send_text(f'{{"jsonrpc":"2.0","id":{self._id},"method":{json.dumps(method)},"params":{params_json}}}')
        deadline = time.monotonic() + timeout
        while True:
            reply = self.recv(max(0.01, deadline - time.monotonic()))
            if isinstance(reply, dict) and reply.get("id") == self._id:
                return reply

    def call(self, name_json: str, arguments_json: str | None, *, timeout: float = 30.0) -> dict[str, Any]:
        """``tools/call`` with raw JSON for the name and the arguments (``None``: left out)."""
        args = "" if arguments_json is None else f',"arguments":{arguments_json}'
        return self.request("tools/call", f'{{"name":{name_json}{args}}}', timeout=timeout)
