"""stdio helpers for the MCP tests (imported as ``mcpkit``; no tests here).

* JSON-RPC lines (``bytes`` with their ``\\n``): ``initialize``, ``INITIALIZED``, ``call``,
  ``list_tools``, ``ping``, ``cancel``, ``request``, ``notification``, ``response``; ``raw_request``
  (text with ``params`` spliced in as written).
* ``DSH_FS`` / ``server_env`` — the ``dsh-fs`` console script of this environment and a child
  environment: ``sdk_only`` sends every line to the SDK (``DSH_FS_MCP_SDK_ONLY=1``, the oracle
  the other route is held to); ``hold`` names a file while which the background SDK import
  waits (``DSH_FS_MCP_TEST_HOLD_IMPORT``), so an answer read while it exists was given without
  the SDK.
* ``Server`` — a real ``dsh-fs mcp --root ROOT`` process over pipes: ``send``, ``line`` (the next
  answer, waited for at most ``WAIT`` seconds), ``finish`` (stdin closed: the rest of stdout and
  stderr, exit 0 checked), ``converse`` (bytes in at once, stdin closed, the lines out).
* ``InProcess`` — ``serve_stdio`` on a thread of its own over two pipes, with a blocking client
  here (``send``, ``recv``, ``initialize``, ``close``), its ``counts`` once done.
* ``serve_sdk_standin`` — the transport alone: ``serve_stdio`` with every line sent to a stand-in
  for the SDK's ``Server.run`` (an echo server, a server that answers late or never).
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import dsh_fs

__all__ = (
    "DSH_FS",
    "INITIALIZED",
    "InProcess",
    "Server",
    "WAIT",
    "call",
    "cancel",
    "converse",
    "initialize",
    "list_tools",
    "notification",
    "ping",
    "request",
    "response",
    "serve_sdk_standin",
    "server_env",
)

WAIT = 60.0
"""seconds an answer may take on a loaded machine before a test gives up"""

DSH_FS = str(Path(sys.executable).with_name("dsh-fs"))
"""the ``dsh-fs`` console script installed beside this interpreter"""

INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'


def _line(message: Mapping[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def request(request_id: Any, method: str, params: Any = None) -> bytes:
    """A request line (``params`` left out when ``None``)."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return _line(message)


def notification(method: str, params: Any = None) -> bytes:
    """A notification line (``params`` left out when ``None``)."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return _line(message)


def response(request_id: Any, result: Any) -> bytes:
    """A client's answer to a server request."""
    return _line({"jsonrpc": "2.0", "id": request_id, "result": result})


def initialize(request_id: Any = 1, *, version: str = "2025-06-18", capabilities: Mapping[str, Any] | None = None,
               client: str = "test") -> bytes:
    """A plain ``initialize`` (answered before the SDK is loaded)."""
    return request(request_id, "initialize", {"protocolVersion": version, "capabilities": dict(capabilities or {}),
                                              "clientInfo": {"name": client, "version": "1"}})


def call(request_id: Any, name: str, arguments: Any = None, **params: Any) -> bytes:
    """A ``tools/call``: ``arguments`` left out when ``None``; ``params`` beside ``name`` as given."""
    body: dict[str, Any] = {"name": name, **params}
    if arguments is not None:
        body["arguments"] = arguments
    return request(request_id, "tools/call", body)


def raw_request(request_id: Any, params_json: str, method: str = "tools/call") -> str:
    """A request as compact text without its ``\\n``, ``params_json`` spliced in as written (odd
    spacing, duplicate keys, deep nesting: bytes the test chooses)."""
    return f'{{"jsonrpc":"2.0","id":{json.dumps(request_id)},"method":"{method}","params":{params_json}}}'


def list_tools(request_id: Any) -> bytes:
    return request(request_id, "tools/list")


def ping(request_id: Any) -> bytes:
    return request(request_id, "ping")


def cancel(request_id: Any, reason: str | None = None) -> bytes:
    """``notifications/cancelled`` naming ``request_id``."""
    params: dict[str, Any] = {"requestId": request_id}
    if reason is not None:
        params["reason"] = reason
    return notification("notifications/cancelled", params)


def server_env(*, sdk_only: bool = False, hold: Path | None = None, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a ``dsh-fs mcp`` child (``hold``: the file is created)."""
    env = {k: v for k, v in os.environ.items() if k not in ("DSH_FS_SESSION", "DSH_FS_MCP_SDK_ONLY")}
    if sdk_only:
        env["DSH_FS_MCP_SDK_ONLY"] = "1"
    if hold is not None:
        hold.touch()
        env["DSH_FS_MCP_TEST_HOLD_IMPORT"] = str(hold)
    env.update(extra or {})
    return env


def converse(root: Path, data: bytes, *args: str, sdk_only: bool = False, hold: Path | None = None,
             initialized: bytes = INITIALIZED, first: bytes | None = None) -> tuple[list[bytes], str]:
    """``initialize`` + ``initialized`` + ``data`` written at once, stdin closed: the answer lines
    after the ``initialize`` one (``hold``: the import is released once stdout ends or after
    1.5 s) and stderr. The server must exit 0."""
    server = Server(root, *args, sdk_only=sdk_only, hold=hold)
    server.send((first if first is not None else initialize()) + initialized + data)
    out, err = server.finish(release_after=1.5)
    lines = out.splitlines(keepends=True)
    assert lines and b'"protocolVersion"' in lines[0], (lines[:1], err[-2000:])
    return lines[1:], err


class Server:
    """One ``dsh-fs mcp --root ROOT *args`` subprocess over pipes (module docstring)."""

    def __init__(self, root: Path, *args: str, sdk_only: bool = False, hold: Path | None = None,
                 env: Mapping[str, str] | None = None, cwd: Path | None = None, **streams: Any) -> None:
        self.hold = hold
        streams.setdefault("stdin", subprocess.PIPE)
        streams.setdefault("stdout", subprocess.PIPE)
        streams.setdefault("stderr", subprocess.PIPE)
        self.proc = subprocess.Popen([DSH_FS, "mcp", "--root", str(root), *args],
                                     env=server_env(sdk_only=sdk_only, hold=hold, extra=env), cwd=cwd or root,
                                     **streams)
        self._out = b""

    def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def line(self, timeout: float = WAIT) -> bytes:
        """The next answer line, its ``\\n`` included (fails after ``timeout`` seconds)."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self._out:
            ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
            assert ready, f"no answer; stderr so far: {self._stderr_so_far()!r}; threads: {self._waits()}"
            chunk = os.read(fd, 65536)
            assert chunk, "stdout ended"
            self._out += chunk
        line, _, self._out = self._out.partition(b"\n")
        return line + b"\n"

    def _stderr_so_far(self) -> bytes:
        """What the server wrote on stderr until now (a piped stderr, read without waiting)."""
        if self.proc.stderr is None:
            return b""
        fd = self.proc.stderr.fileno()
        data = b""
        while select.select([fd], [], [], 0)[0]:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            data += chunk
        return data[-4000:]

    def _waits(self) -> dict[str, str]:
        """Where each thread of the server waits in the kernel (``/proc/<pid>/task/*/wchan``)."""
        out: dict[str, str] = {}
        base = f"/proc/{self.proc.pid}/task"
        try:
            for task in os.listdir(base):
                with open(f"{base}/{task}/comm") as comm, open(f"{base}/{task}/wchan") as wchan:
                    out[f"{task} {comm.read().strip()}"] = wchan.read().strip()
        except OSError as exc:
            out["?"] = str(exc)
        return out

    def quiet(self, seconds: float) -> bool:
        """Nothing was written within ``seconds`` (a negative check)."""
        assert self.proc.stdout is not None
        return b"\n" not in self._out and not select.select([self.proc.stdout.fileno()], [], [], seconds)[0]

    def release(self) -> None:
        """Let the background SDK import start."""
        if self.hold is not None:
            self.hold.unlink(missing_ok=True)

    def finish(self, *, release_after: float | None = None) -> tuple[bytes, str]:
        """Close stdin; the rest of stdout, and stderr (text), once the process exits 0. The import is
        released at once, or (``release_after``) once the process ends or that many seconds
        passed (a line left to the SDK needs it)."""
        if release_after is None:
            self.release()
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.stdin = None  # (communicate would flush it)
        if release_after is not None:
            try:
                self.proc.wait(timeout=release_after)
            except subprocess.TimeoutExpired:
                pass
            self.release()
        out, err = self.proc.communicate(timeout=WAIT)
        text = err.decode("utf-8", "replace")
        assert self.proc.returncode == 0, text[-2000:]
        return self._out + out, text

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=WAIT)
        self.release()


class InProcess:
    """``serve_stdio`` on a thread of its own over two pipes, a blocking client here.

    :param sdk_only: every line to the SDK (``None``: the environment says)
    """

    def __init__(self, ctx: dsh_fs.Context, root: Path, *, sdk_only: bool | None = False) -> None:
        from dsh_fs.mcp.stdio import serve_stdio

        stdin_r, stdin_w = os.pipe()
        self._stdin_w: int | None = stdin_w
        self._stdout_r, stdout_w = os.pipe()
        self._buffer = b""
        self.counts: Any = None
        self.error: BaseException | None = None
        stdin = open(stdin_r, "rb", buffering=0)  # noqa: SIM115 (closed by the server thread)
        stdout = open(stdout_w, "wb", buffering=0)  # noqa: SIM115

        def run() -> None:
            try:
                self.counts = serve_stdio(ctx, root=str(root), stdin=stdin, stdout=stdout, sdk_only=sdk_only)
            except BaseException as exc:  # reported by close()
                self.error = exc
            finally:
                stdout.close()
                stdin.close()

        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()

    def send(self, message: Mapping[str, Any] | bytes) -> None:
        """One line (a dict: as JSON; bytes: as given, a ``\\n`` added if missing)."""
        line = message if isinstance(message, bytes) else json.dumps(message).encode()
        assert self._stdin_w is not None
        os.write(self._stdin_w, line if line.endswith(b"\n") else line + b"\n")

    def recv(self, timeout: float = WAIT) -> bytes:
        """The next line the server wrote, without its ``\\n`` (``b""``: none within ``timeout``)."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._stdout_r], [], [], left)[0]:
                return b""
            chunk = os.read(self._stdout_r, 1 << 20)
            if not chunk:
                break
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def initialize(self, version: str, capabilities: Mapping[str, Any] | None = None) -> bytes:
        """``initialize`` (id 0) and ``notifications/initialized``; the ``initialize`` answer."""
        self.send(initialize(0, version=version, capabilities=capabilities))
        answer = self.recv()
        self.send(INITIALIZED)
        return answer

    def end_input(self) -> None:
        """Close the server's stdin."""
        if self._stdin_w is not None:
            os.close(self._stdin_w)
            self._stdin_w = None

    def close(self) -> bytes:
        """End stdin; the rest of what the server writes until it exits."""
        self.end_input()
        rest = []
        while line := self.recv():
            rest.append(line)
        self._thread.join(WAIT)
        assert not self._thread.is_alive()
        os.close(self._stdout_r)
        if self.error is not None:
            raise self.error
        return b"\n".join(rest)


class _Standin:
    """What the SDK route runs in place of the SDK's ``Server``: ``handler(read, write)``."""

    def __init__(self, handler: Any) -> None:
        self._handler = handler

    def create_initialization_options(self) -> None:
        return None

    async def run(self, read_stream: Any, write_stream: Any, options: Any) -> None:
        await self._handler(read_stream, write_stream)


def serve_sdk_standin(handler: Any, stdin: Any, stdout: Any, *, root: str | None = None) -> Any:
    """``serve_stdio`` with every line sent to the SDK route, whose server is ``handler(read,
    write)``: an async function reading ``SessionMessage`` items and writing replies, as the
    SDK's ``Server.run`` does (it closes ``write`` when done). The transport alone, without our
    tools; returns the dispatcher's ``Counts``."""
    from dsh_fs.mcp import server
    from dsh_fs.mcp.stdio import serve_stdio

    real = server.build_server
    server.build_server = lambda *args, **kwargs: _Standin(handler)  # type: ignore[assignment]
    try:
        ctx = dsh_fs.create_context(root=root or os.getcwd())
        return serve_stdio(ctx, root=root or os.getcwd(), stdin=stdin, stdout=stdout, sdk_only=True)
    finally:
        server.build_server = real  # type: ignore[assignment]
