"""``dsh-fs mcp`` answers plain ``tools/call`` requests before the MCP SDK is loaded
(DEVIATIONS M2, ``mcp/prelude.py``), for real: subprocesses over pipes.

The proof that an answer came before the SDK import: ``$DSH_FS_MCP_TEST_HOLD_IMPORT`` names a
file; while it exists the background import does not start (``early.HOLD_ENV_VAR``), so an
answer read while it exists was given without the SDK. The file is then removed and the rest
of the conversation is served by the SDK path.

Covers: a read answered early, then an edit served after the handover (the observation
carries over); ``--session`` across processes (both calls early); the per-call hint without
``--session``; a client that declared ``roots`` (no early call: M3 asks them); and hostile
input during the early phase (a line split across writes, the end of input mid-line,
invalid UTF-8, a huge line, ``ping``, an unknown tool, a call before
``notifications/initialized``), each compared byte for byte with the SDK path's answers
(``DSH_FS_MCP_LEAN=0``: no early calls).
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

DSH_FS = str(Path(sys.executable).with_name("dsh-fs"))
WAIT = 30.0


def _initialize(request_id: int = 1, capabilities: dict[str, Any] | None = None) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": capabilities or {},
        "clientInfo": {"name": "t", "version": "1"}}}).encode() + b"\n"


INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'


def _call(request_id: int, name: str, **arguments: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                       "params": {"name": name, "arguments": arguments}}).encode() + b"\n"


class Server:
    """One ``dsh-fs mcp`` subprocess; ``hold``: the SDK import waits while that file exists."""

    def __init__(self, root: Path, *args: str, hold: Path | None = None, env: dict[str, str] | None = None) -> None:
        environ = {**os.environ, **(env or {})}
        if hold is not None:
            hold.touch()
            environ["DSH_FS_MCP_TEST_HOLD_IMPORT"] = str(hold)
        self.hold = hold
        self.proc = subprocess.Popen([DSH_FS, "mcp", "--root", str(root), *args], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environ, cwd=root)
        self._out = b""

    def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def line(self) -> bytes:
        """The next answer line (fails after ``WAIT`` seconds)."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + WAIT
        while b"\n" not in self._out:
            ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
            assert ready, "no answer"
            chunk = os.read(fd, 65536)
            assert chunk, "stdout ended"
            self._out += chunk
        line, _, self._out = self._out.partition(b"\n")
        return line + b"\n"

    def release(self) -> None:
        if self.hold is not None:
            self.hold.unlink(missing_ok=True)

    def finish(self) -> tuple[bytes, str]:
        """Close stdin (after releasing the import); the rest of stdout, and stderr."""
        self.release()
        out, err = self.proc.communicate(timeout=WAIT)
        assert self.proc.returncode == 0, err
        return self._out + out, err.decode()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("alpha\nbeta\n")
    return ws


def _held(root: Path, tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> Server:
    server = Server(root, *args, hold=tmp_path / "hold", env=env)
    server.send(_initialize())
    assert b'"id":1' in server.line()
    return server


def test_a_read_is_answered_before_the_sdk_and_an_edit_after_the_handover_sees_it(root: Path, tmp_path: Path) -> None:
    server = _held(root, tmp_path)
    server.send(INITIALIZED + _call(2, "read", file_path=str(root / "a.txt")))
    answer = server.line()  # the import is held: no SDK in the process
    text = json.loads(answer)["result"]["content"][0]["text"]
    assert "alpha" in text and "beta" in text, text
    assert server.hold is not None and server.hold.exists()
    server.release()
    server.send(b'{"jsonrpc":"2.0","id":3,"method":"ping"}\n')  # ends the early phase (the SDK answers it)
    assert json.loads(server.line()) == {"jsonrpc": "2.0", "id": 3, "result": {}}
    server.send(_call(4, "edit", file_path=str(root / "a.txt"), old_string="beta", new_string="gamma"))
    edited = json.loads(server.line())
    assert edited["id"] == 4 and edited["result"]["isError"] is False, edited
    server.finish()
    assert (root / "a.txt").read_text() == "alpha\ngamma\n"


def test_the_early_answer_is_the_sdk_paths_byte_for_byte(root: Path, tmp_path: Path) -> None:
    script = INITIALIZED + _call(2, "read", file_path=str(root / "a.txt")) + _call(3, "read", file_path="missing.txt")
    server = _held(root, tmp_path)
    server.send(script)
    early = server.line() + server.line()
    assert server.hold is not None and server.hold.exists()  # both answered without the SDK
    server.finish()
    sdk = Server(root, env={"DSH_FS_MCP_LEAN": "0"})
    sdk.send(_initialize() + script)
    sdk.line()
    assert sdk.line() + sdk.line() == early
    sdk.finish()


def test_session_observations_cross_processes_answered_early(root: Path, tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path / "home"), "XDG_STATE_HOME": str(tmp_path / "state")}
    first = _held(root, tmp_path, "--session", "s8", env=env)
    first.send(INITIALIZED + _call(2, "read", file_path=str(root / "a.txt")))
    assert b'"isError":false' in first.line()
    first.finish()
    second = _held(root, tmp_path, "--session", "s8", env=env)
    second.send(INITIALIZED + _call(2, "edit", file_path=str(root / "a.txt"), old_string="alpha", new_string="omega"))
    answer = second.line()
    assert second.hold is not None and second.hold.exists()
    assert b'"isError":false' in answer, answer
    second.finish()
    assert (root / "a.txt").read_text() == "omega\nbeta\n"


def test_without_session_a_first_edit_is_refused_with_the_hint(root: Path, tmp_path: Path) -> None:
    server = _held(root, tmp_path)
    server.send(INITIALIZED + _call(2, "edit", file_path=str(root / "a.txt"), old_string="alpha", new_string="x"))
    assert b'"isError":true' in server.line()
    _, err = server.finish()
    assert "hint: a call was refused for want of a read" in err
    assert (root / "a.txt").read_text() == "alpha\nbeta\n"


def test_a_client_that_declared_roots_gets_no_early_call(root: Path, tmp_path: Path) -> None:
    server = Server(root, hold=tmp_path / "hold")
    server.send(_initialize(capabilities={"roots": {"listChanged": True}}))
    server.line()
    server.send(INITIALIZED + _call(2, "read", file_path=str(root / "a.txt")))
    server.release()
    asked = json.loads(server.line())  # the SDK path asks the roots first (M3): no early answer
    assert asked["method"] == "roots/list"
    server.send(json.dumps({"jsonrpc": "2.0", "id": asked["id"], "result": {"roots": [
        {"uri": root.as_uri()}]}}).encode() + b"\n")
    assert json.loads(server.line())["id"] == 2
    server.finish()


HUGE = _call(5, "read", file_path="x" * 100_000)
HOSTILE = {
    "split-line": [_call(5, "read", file_path="a.txt")[:20], _call(5, "read", file_path="a.txt")[20:]],
    "eof-mid-line": [_call(5, "read", file_path="a.txt")[:-5]],
    "invalid-utf8": [b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"read","arguments":{"file_path":"\xff"}}}\n'],
    "huge-line": [HUGE],
    "ping": [b'{"jsonrpc":"2.0","id":5,"method":"ping"}\n', _call(6, "read", file_path="a.txt")],
    "unknown-tool": [_call(5, "nope"), _call(6, "read", file_path="a.txt")],
    "cancelled": [b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}\n',
                  _call(6, "read", file_path="a.txt")],
    "blank-lines": [b"\n  \n", _call(6, "read", file_path="a.txt")],
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_lines_in_the_early_phase_get_the_sdk_paths_answers(root: Path, tmp_path: Path, name: str) -> None:
    def run(server: Server, early: bool) -> bytes:
        server.send(INITIALIZED + _call(2, "read", file_path="a.txt"))
        first = server.line()
        if early:
            assert server.hold is not None and server.hold.exists()  # answered before the SDK
        for part in HOSTILE[name]:
            server.send(part)
            time.sleep(0.05)
        out, _ = server.finish()
        return first + out

    early = run(_held(root, tmp_path), True)
    sdk = Server(root, env={"DSH_FS_MCP_LEAN": "0"})
    sdk.send(_initialize())
    sdk.line()
    assert run(sdk, False) == early


def test_a_call_before_notifications_initialized_goes_to_the_sdk(root: Path, tmp_path: Path) -> None:
    script = _call(2, "read", file_path="a.txt") + INITIALIZED + _call(3, "read", file_path="a.txt")
    server = _held(root, tmp_path)
    server.send(script)
    early, _ = server.finish()
    sdk = Server(root, env={"DSH_FS_MCP_LEAN": "0"})
    sdk.send(_initialize() + script)
    sdk.line()
    out, _ = sdk.finish()
    assert out == early


def test_stdin_ending_in_the_early_phase_needs_no_sdk(root: Path, tmp_path: Path) -> None:
    server = _held(root, tmp_path)
    server.send(INITIALIZED + _call(2, "read", file_path="a.txt") + _call(3, "read", file_path="a.txt"))
    assert server.proc.stdin is not None
    server.proc.stdin.close()  # the import is still held: only the early phase can answer
    assert server.proc.wait(timeout=WAIT) == 0
    assert server.proc.stdout is not None and server.proc.stderr is not None
    out, err = server.proc.stdout.read(), server.proc.stderr.read()
    assert server.proc.returncode == 0, err
    answers = [json.loads(line) for line in out.splitlines()]
    assert [answer["id"] for answer in answers] == [2, 3]
    assert server.hold is not None and server.hold.exists()
    server.release()


LIST = b'{"jsonrpc":"2.0","id":3,"method":"tools/list"}\n'


@pytest.mark.parametrize("args", [(), ("--images",), ("--profile", "reference"), ("--sandbox", "read-only")],
                         ids=["default", "images", "reference", "sandbox"])
def test_tools_list_after_a_call_is_answered_early_with_the_sdk_paths_bytes(root: Path, tmp_path: Path,
                                                                             args: tuple[str, ...]) -> None:
    """The ``mcp<2`` client (LangChain's adapter) lists the tools after each call: that answer
    too comes before the SDK import, with the SDK path's bytes."""
    script = INITIALIZED + _call(2, "read", file_path="a.txt") + LIST + b'{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{}}\n'
    server = _held(root, tmp_path, *args)
    server.send(script)
    early = server.line() + server.line() + server.line()
    assert server.hold is not None and server.hold.exists()  # all three without the SDK
    server.finish()
    sdk = Server(root, *args, env={"DSH_FS_MCP_LEAN": "0"})
    sdk.send(_initialize() + script)
    sdk.line()
    by_id = {json.loads(line)["id"]: line for line in (sdk.line(), sdk.line(), sdk.line())}
    sdk.finish()  # (the SDK path may answer a list before a call sent ahead of it: compared by id)
    assert [by_id[2], by_id[3], by_id[4]] == early.splitlines(keepends=True)
    assert [tool["name"] for tool in json.loads(early.splitlines()[1])["result"]["tools"]][:2] == ["edit", "glob"]


@pytest.mark.parametrize("line", [b'{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"x"}}\n',
                                  b'{"jsonrpc":"2.0","id":3,"method":"tools/list","params":null}\n',
                                  b'{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{}}}\n'],
                         ids=["cursor", "null", "meta"])
def test_a_tools_list_with_params_ends_the_early_phase(root: Path, tmp_path: Path, line: bytes) -> None:
    server = _held(root, tmp_path)
    server.send(INITIALIZED + line)
    time.sleep(0.3)
    assert select.select([server.proc.stdout], [], [], 0)[0] == []  # left for the SDK
    server.release()
    early = server.line()
    server.finish()
    sdk = Server(root, env={"DSH_FS_MCP_LEAN": "0"})
    sdk.send(_initialize() + INITIALIZED + line)
    sdk.line()
    assert sdk.line() == early
    sdk.finish()
