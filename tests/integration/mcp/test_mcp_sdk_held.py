"""Our stdio route while the SDK is not loaded yet (DEVIATIONS M2), in process: the background
import is held by ``$DSH_FS_MCP_TEST_HOLD_IMPORT`` (``stdio.dispatch.SdkLoader``), so whatever
needs the SDK waits for the test to release it.

Covers: plain calls answered with the SDK never attached; a cancellation naming another request
leaves the call alone (and needs no SDK); answers that need the SDK's own encoding (a lone
surrogate, a registry that raises) are written once it is loaded, with the SDK route's bytes,
while a plain call after them is answered meanwhile; a line only the SDK serves waits for it,
the lines after it too.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

import dsh_fs
from dsh_fs.core.tools import ToolDefinition, ToolRegistry, ToolResult, text_block
from mcpkit import WAIT, InProcess, call, cancel, ping

HELD = 0.3
"""seconds a negative check waits for an answer that must not come while the SDK is held"""


class Gate:
    def __init__(self) -> None:
        self.started = threading.Event()
        self.release = threading.Event()
        self.aborted = False

    async def body(self, arguments: dict[str, Any], execution: Any) -> list[Any]:
        self.started.set()
        while not self.release.is_set():
            if execution.signal is not None and execution.signal.aborted:
                self.aborted = True
                return [text_block("aborted")]
            await anyio.sleep(0.005)
        return [text_block("released")]


@pytest.fixture
def hold(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    path = tmp_path / "hold"
    path.touch()
    monkeypatch.setenv("DSH_FS_MCP_TEST_HOLD_IMPORT", str(path))
    yield path
    path.unlink(missing_ok=True)


def _context(root: Path, gate: Gate | None = None) -> dsh_fs.Context:
    root.mkdir(exist_ok=True)
    (root / "a.txt").write_text("alpha\n")
    ctx = dsh_fs.create_context(root=str(root))
    ctx.tools.register(ToolDefinition(name="hold", description="waits", parameters={}, execute=(gate or Gate()).body))

    async def lone(arguments: dict[str, Any], execution: Any) -> list[Any]:
        return [text_block("lone \ud800 surrogate")]

    ctx.tools.register(ToolDefinition(name="lone", description="l", parameters={}, execute=lone))
    return ctx


def _sdk_route(root: Path, *lines: bytes) -> list[bytes]:
    """The SDK route's answers to ``lines`` (after the handshake), in order."""
    client = InProcess(_context(root), root, sdk_only=True)
    client.initialize("2025-03-26")
    answers = []
    for line in lines:
        client.send(line)
        answers.append(client.recv())
    client.close()
    return answers


def test_plain_calls_need_no_sdk(tmp_path: Path, hold: Path) -> None:
    client = InProcess(_context(tmp_path / "w"), tmp_path / "w")
    client.initialize("2025-03-26")
    client.send(call(2, "read", {"file_path": "a.txt"}))
    assert b"alpha" in client.recv()
    client.close()
    assert hold.exists() and client.counts.calls == 1 and not client.counts.sdk


def test_a_cancellation_of_another_id_does_not_abort(tmp_path: Path, hold: Path) -> None:
    gate = Gate()
    client = InProcess(_context(tmp_path / "w", gate), tmp_path / "w")
    client.initialize("2025-03-26")
    client.send(call(2, "hold"))
    assert gate.started.wait(WAIT)
    client.send(cancel(3))
    assert client.recv(timeout=HELD) == b""
    gate.release.set()
    assert b'"released"' in client.recv()  # answered: the cancellation was another request's
    client.close()
    assert not gate.aborted and not client.counts.sdk


def test_an_answer_that_needs_the_sdk_is_written_once_it_is_loaded(tmp_path: Path, hold: Path) -> None:
    client = InProcess(_context(tmp_path / "w"), tmp_path / "w")
    client.initialize("2025-03-26")
    client.send(call(2, "lone"))
    client.send(call(3, "read", {"file_path": "a.txt"}))
    assert b'"id":3' in client.recv()  # the read is answered, the lone surrogate's answer waits
    assert client.recv(timeout=HELD) == b""
    hold.unlink()
    held = client.recv()
    client.close()
    assert held == _sdk_route(tmp_path / "s", call(2, "lone"))[0]
    assert b"\\ufffd" in held or "\ufffd".encode() in held  # encode_message's repair
    assert client.counts.calls == 2 and not client.counts.sdk  # the SDK's encoding, not its route


def test_a_registry_that_raises_gets_the_sdks_error_once_it_is_loaded(tmp_path: Path, hold: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    async def broken(self: Any, *args: Any, **kwargs: Any) -> ToolResult:
        raise RuntimeError("registry bug")

    monkeypatch.setattr(ToolRegistry, "execute", broken)
    client = InProcess(_context(tmp_path / "w"), tmp_path / "w")
    client.initialize("2025-03-26")
    client.send(call(2, "read", {"file_path": "a.txt"}))
    assert client.recv(timeout=HELD) == b""
    hold.unlink()
    assert json.loads(client.recv()) == {"jsonrpc": "2.0", "id": 2, "error": {"code": 0, "message": "registry bug"}}
    client.close()


def test_a_line_only_the_sdk_serves_waits_for_it_and_the_lines_after_it_too(tmp_path: Path, hold: Path) -> None:
    client = InProcess(_context(tmp_path / "w"), tmp_path / "w")
    client.initialize("2025-03-26")
    client.send(ping(2))
    client.send(call(3, "read", {"file_path": "a.txt"}))
    assert client.recv(timeout=HELD) == b""  # in order: the read waits behind the ping
    hold.unlink()
    answers = {json.loads(client.recv())["id"] for _ in range(2)}
    assert answers == {2, 3}
    client.close()
    assert client.counts.sdk
