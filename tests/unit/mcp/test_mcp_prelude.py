"""The early phase (``dsh_fs.mcp.prelude``) in process, over real pipes, with the SDK import
stood in for by a thread the test ends: when the phase serves calls at all
(``early_calls_allowed``), a cancellation of a running early call (aborted, never
answered, the notification left for the SDK), answers that need the SDK's encoding (a lone
surrogate, a registry that raises: written once the import is done, the SDK path's bytes),
the bytes handed over, and the end of input."""

from __future__ import annotations

import json
import os
import select
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp_types import methods as sdk_methods

import dsh_fs
from dsh_fs.core.session import Session
from dsh_fs.core.tools import ToolDefinition, ToolRegistry, ToolResult, text_block
from dsh_fs.mcp.early import EarlyStart
from dsh_fs.mcp.handshake import early_reply
from dsh_fs.mcp.prelude import EarlyCalls, early_calls_allowed, serve_early_calls
from dsh_fs.mcp.server import handler_result
from dsh_fs.mcp.stdio import encode_message

WAIT = 20.0
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'


def _initialize(capabilities: dict[str, Any] | None = None) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-03-26", "capabilities": capabilities or {},
        "clientInfo": {"name": "t", "version": "1"}}}).encode() + b"\n"


def _early(capabilities: dict[str, Any] | None = None) -> EarlyStart:
    line = _initialize(capabilities)
    reply = early_reply(line, version="1", instructions=None)
    assert reply is not None
    return EarlyStart(line, reply[0], reply[1])


def _call(request_id: Any, name: str, **arguments: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                       "params": {"name": name, "arguments": arguments}}).encode() + b"\n"


class Phase:
    """``serve_early_calls`` on a thread of its own over two pipes; ``imported`` ends the
    stand-in import."""

    def __init__(self, ctx: dsh_fs.Context, root: Path) -> None:
        self.stdin_r, self.stdin_w = os.pipe()
        self.stdout_r, self.stdout_w = os.pipe()
        self.imported = threading.Event()
        importing = threading.Thread(target=self.imported.wait, daemon=True)
        importing.start()
        self.outcome: EarlyCalls | None = None

        async def run() -> None:
            self.outcome = await serve_early_calls(ctx, _early(), owner=Session(str(root)), importing=importing,
                                                   stdin_fd=self.stdin_r, stdout_fd=self.stdout_w)

        self.thread = threading.Thread(target=anyio.run, args=(run,), daemon=True)
        self.thread.start()

    def send(self, data: bytes) -> None:
        os.write(self.stdin_w, data)

    def output(self, timeout: float = 0.0) -> bytes:
        ready, _, _ = select.select([self.stdout_r], [], [], timeout)
        return os.read(self.stdout_r, 1 << 20) if ready else b""

    def done(self) -> EarlyCalls:
        self.thread.join(WAIT)
        assert not self.thread.is_alive() and self.outcome is not None
        return self.outcome


class Gate:
    def __init__(self) -> None:
        self.started = threading.Event()
        self.release = threading.Event()
        self.aborted = False

    async def body(self, arguments: dict[str, Any], execution: Any) -> list[Any]:
        self.started.set()
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline and not self.release.is_set():
            if execution.signal is not None and execution.signal.aborted:
                self.aborted = True
                return [text_block("aborted")]
            await anyio.sleep(0.005)
        return [text_block("released")]


def _context(root: Path, gate: Gate | None = None) -> dsh_fs.Context:
    root.mkdir(exist_ok=True)
    (root / "a.txt").write_text("alpha\n")
    ctx = dsh_fs.create_context(root=str(root))
    ctx.tools.register(ToolDefinition(name="hold", description="waits", parameters={},
                                      execute=(gate or Gate()).body))

    async def lone(arguments: dict[str, Any], execution: Any) -> list[Any]:
        return [text_block("lone \ud800 surrogate")]

    ctx.tools.register(ToolDefinition(name="lone", description="l", parameters={}, execute=lone))
    return ctx


def test_a_cancelled_early_call_is_aborted_never_answered_and_the_notification_reaches_the_sdk(tmp_path: Path) -> None:
    gate = Gate()
    phase = Phase(_context(tmp_path / "w", gate), tmp_path / "w")
    phase.send(INITIALIZED + _call(2, "hold"))
    assert gate.started.wait(WAIT)
    cancel = b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"2"}}\n'  # coerced
    phase.send(cancel)
    time.sleep(0.3)
    phase.imported.set()
    outcome = phase.done()
    assert gate.aborted and outcome.served == 1
    assert phase.output() == b""  # a cancelled call is never answered (as the SDK)
    assert outcome.start.preread == _initialize() + INITIALIZED + cancel
    assert not outcome.finished


def test_a_cancellation_of_another_id_does_not_abort(tmp_path: Path) -> None:
    gate = Gate()
    phase = Phase(_context(tmp_path / "w", gate), tmp_path / "w")
    phase.send(INITIALIZED + _call(2, "hold"))
    assert gate.started.wait(WAIT)
    phase.send(b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}\n')
    time.sleep(0.3)
    assert not gate.aborted
    gate.release.set()
    assert b'"released"' in phase.output(WAIT)  # answered: the cancellation was another request's
    phase.imported.set()
    phase.done()
    assert not gate.aborted


def _sdk_answer(request_id: int | str, result: ToolResult) -> bytes:
    dumped = sdk_methods.serialize_server_result("tools/call", "2025-03-26", handler_result(result))
    return encode_message(types.JSONRPCResponse(jsonrpc="2.0", id=request_id, result=dumped)).encode() + b"\n"


def test_an_answer_that_needs_the_sdk_is_written_once_it_is_loaded(tmp_path: Path) -> None:
    phase = Phase(_context(tmp_path / "w"), tmp_path / "w")
    phase.send(INITIALIZED + _call(2, "lone") + _call(3, "read", file_path="a.txt"))
    read = phase.output(WAIT)
    assert b'"id":3' in read and b'"id":2' not in read  # the read is answered, the lone one waits
    os.close(phase.stdin_w)
    time.sleep(0.2)
    assert phase.output() == b""
    phase.imported.set()
    outcome = phase.done()
    expected = _sdk_answer(2, ToolResult(content=[text_block("lone \ud800 surrogate")]))
    assert phase.output(WAIT) == expected
    assert expected.count(b"\\ufffd") or "\ufffd".encode() in expected  # encode_message's repair
    assert outcome.finished and outcome.served == 2


def test_a_registry_that_raises_gets_the_sdks_error_once_it_is_loaded(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    async def broken(self: Any, *args: Any, **kwargs: Any) -> ToolResult:
        raise RuntimeError("registry bug")

    monkeypatch.setattr(ToolRegistry, "execute", broken)
    phase = Phase(_context(tmp_path / "w"), tmp_path / "w")
    phase.send(INITIALIZED + _call(2, "read", file_path="a.txt"))
    os.close(phase.stdin_w)
    time.sleep(0.2)
    phase.imported.set()
    phase.done()
    assert json.loads(phase.output(WAIT)) == {"jsonrpc": "2.0", "id": 2, "error": {"code": 0, "message": "registry bug"}}


def test_the_bytes_not_served_are_handed_over_in_order(tmp_path: Path) -> None:
    phase = Phase(_context(tmp_path / "w"), tmp_path / "w")
    rest = b'{"jsonrpc":"2.0","id":4,"method":"ping"}\n' + _call(5, "read", file_path="a.txt") + b'{"par'
    phase.send(INITIALIZED + b"\n" + _call(3, "read", file_path="a.txt") + rest)
    outcome = phase.done()  # ends at ping, without the import
    assert outcome.start.preread == _initialize() + INITIALIZED + b"\n" + rest
    assert outcome.served == 1 and b'"id":3' in phase.output(WAIT)
    assert outcome.start.answered_id == 1


def test_when_the_phase_serves_calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = _context(tmp_path / "w")
    read_end, write_end = os.pipe()
    try:
        assert early_calls_allowed(ctx, _early(), stdin_fd=read_end)
        assert not early_calls_allowed(ctx, _early({"roots": {"listChanged": True}}), stdin_fd=read_end)  # M3
        assert not early_calls_allowed(ctx, EarlyStart(_initialize()), stdin_fd=read_end)  # not answered early
        assert not early_calls_allowed(ctx, None, stdin_fd=read_end)
        with open(tmp_path / "file", "wb") as regular:
            assert not early_calls_allowed(ctx, _early(), stdin_fd=regular.fileno())
        monkeypatch.setenv("DSH_FS_MCP_LEAN", "off")
        assert not early_calls_allowed(ctx, _early(), stdin_fd=read_end)
        monkeypatch.delenv("DSH_FS_MCP_LEAN")
        sandboxed = dsh_fs.create_context(root=str(tmp_path / "w"), sandbox="read-only", approval=lambda *a: True)
        assert early_calls_allowed(sandboxed, _early(), stdin_fd=read_end)
        assert not early_calls_allowed(sandboxed, _early({"elicitation": {}}), stdin_fd=read_end)
    finally:
        os.close(read_end)
        os.close(write_end)


def test_the_early_phase_imports_no_sdk_module() -> None:
    import subprocess
    import sys

    code = ("import sys, dsh_fs.cli.mcp_cmd, dsh_fs.mcp.prelude, dsh_fs.mcp.earlywire;"
            "print(sorted(m for m in sys.modules if m == 'mcp' or m.startswith(('mcp.', 'mcp_types'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
