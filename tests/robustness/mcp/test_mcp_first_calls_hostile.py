"""A hostile or buggy client of ``dsh-fs mcp`` over stdio before the MCP SDK is loaded (DEVIATIONS
M2): the first calls, answered on our route (``mcp/stdio/dispatch.py``) while the SDK imports.

Real processes over pipes and socket pairs. ``$DSH_FS_MCP_TEST_HOLD_IMPORT`` holds the SDK
import while its file exists (``stdio.dispatch.HOLD_ENV_VAR``), so whatever the server writes
while it exists came from our route without the SDK; the answers are compared with the SDK
route's (``DSH_FS_MCP_SDK_ONLY=1``). Attacks once the SDK is loaded: ``test_mcp_stdio_hostile.py``.

* **A full non-blocking stdout** (the client set ``O_NONBLOCK`` on the pipe it gave us and
  reads late): every answer whole (before: a partial line, then the rest of the early
  answers lost, as if stdout were broken).
* **A stdin socket whose peer left answers unread and closed** (``ECONNRESET`` on the next
  read): exit 0 with nothing on stderr, as the SDK path (before: a traceback, exit 1).
* **Lines the SDK path's reader refuses** (a UTF-8 BOM, a form feed as a "blank" line):
  answered as the SDK path answers them (before: a BOM'd ``tools/list`` got the tool list
  instead of a parse error, and a BOM'd ``notifications/initialized`` or a form-feed line,
  kept for the SDK, got no answer at all when stdin ended in the early phase).
* **Cancellations** sent behind a call: looked at in order, as the SDK's dispatcher does (before:
  one read before the end of input was ignored by the next call; with a reused id the older
  call was cancelled instead of the newer; read ahead, one aborted a call the SDK path runs:
  ``tests/e2e/mcp/test_mcp_cancel_routes.py``).
* **A client that never reads stdout**: stdin is read no further (bounded).
"""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from mcpkit import DSH_FS, INITIALIZED, WAIT, call, initialize, server_env
from mcpkit import cancel as _cancel

pytestmark = pytest.mark.timeout(60)

INIT = initialize(1, client="hostile")
BOM = b"\xef\xbb\xbf"


def _call(request_id: Any, name: str, **arguments: Any) -> bytes:
    return call(request_id, name, arguments)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("alpha\nbeta\n")
    (ws / "big.txt").write_text("".join(f"line {i} {'y' * 80}\n" for i in range(600)))  # ~55 KB answers
    return ws


def _spawn(root: Path, hold: Path | None, **streams: Any) -> subprocess.Popen[bytes]:
    env = server_env(sdk_only=hold is None, hold=hold)  # no hold: the SDK route
    streams.setdefault("stdin", subprocess.PIPE)
    streams.setdefault("stdout", subprocess.PIPE)
    return subprocess.Popen([DSH_FS, "mcp", "--root", str(root)], stderr=subprocess.PIPE, env=env, cwd=root,
                            **streams)


def _answers(root: Path, data: bytes, hold: Path | None, *, initialized: bytes = INITIALIZED) -> list[bytes]:
    """``INIT + initialized + data`` written at once, then stdin closed: the answer lines after
    the ``initialize`` one (``hold``: the import is released after 1.5 s, for a line that ends
    the early phase). The server must exit 0 with nothing on stderr."""
    proc = _spawn(root, hold)
    assert proc.stdin is not None
    proc.stdin.write(INIT + initialized + data)
    proc.stdin.close()
    try:
        proc.wait(timeout=1.5)
    except subprocess.TimeoutExpired:
        pass
    if hold is not None:
        hold.unlink()
    assert proc.stdout is not None and proc.stderr is not None
    out, err = proc.stdout.read(), proc.stderr.read()
    assert proc.wait(timeout=WAIT) == 0, err[-2000:]
    assert err == b"", err[-2000:]
    lines = out.splitlines(keepends=True)
    assert b'"protocolVersion"' in lines[0], lines[:1]
    return lines[1:]


REFUSED = {
    "bom-tools-list": _call(2, "read", file_path="a.txt") + BOM + b'{"jsonrpc":"2.0","id":3,"method":"tools/list"}\n',
    "bom-initialized": _call(2, "read", file_path="a.txt"),  # after a BOM'd notifications/initialized
    "form-feed-line": _call(2, "read", file_path="a.txt") + b"\x0c\n" + _call(3, "read", file_path="a.txt"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_lines_the_sdk_path_refuses_get_its_answers(root: Path, tmp_path: Path, name: str) -> None:
    data = REFUSED[name]
    initialized = BOM + INITIALIZED if name == "bom-initialized" else INITIALIZED
    early = _answers(root, data, tmp_path / "hold", initialized=initialized)
    sdk = _answers(root, data, None, initialized=initialized)
    assert sorted(early) == sorted(sdk)  # (the SDK path writes a parse error as it reads the line)
    assert any(b'"code":-32700' in line for line in sdk), sdk


def test_a_full_non_blocking_stdout_before_the_sdk_loses_no_answer(root: Path, tmp_path: Path) -> None:
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)  # the client's pipe, made non-blocking by the client
    hold = tmp_path / "hold"
    try:
        proc = _spawn(root, hold, stdout=write_end)
    finally:
        os.close(write_end)
    assert proc.stdin is not None and proc.stderr is not None
    out = bytearray()
    try:
        proc.stdin.write(INIT + INITIALIZED + b"".join(_call(i, "read", file_path="big.txt") for i in (2, 3, 4)))
        proc.stdin.close()
        time.sleep(1.0)  # not reading: the server meets a full pipe (64 KiB; three ~55 KB answers)
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline and select.select([read_end], [], [], deadline - time.monotonic())[0]:
            chunk = os.read(read_end, 1 << 20)
            if not chunk:
                break
            out += chunk
        assert proc.wait(timeout=WAIT) == 0
        assert hold.exists()  # all answered without the SDK: the process ended with the import held
    finally:
        os.close(read_end)
        hold.unlink(missing_ok=True)
        if proc.poll() is None:
            proc.kill()
    answers = [json.loads(line) for line in bytes(out).splitlines()[1:]]
    assert sorted(answer["id"] for answer in answers) == [2, 3, 4]
    assert all(answer["result"]["isError"] is False for answer in answers)
    assert proc.stderr.read() == b""


def test_a_reset_stdin_socket_before_the_sdk_ends_quietly(root: Path, tmp_path: Path) -> None:
    """stdin and stdout one socket; the client leaves answers unread and closes its end, so
    the server's next read fails with ``ECONNRESET``. The SDK path then reads the end of
    input and exits 0 (checked with ``DSH_FS_MCP_SDK_ONLY=1``); so does our route."""
    for hold in (tmp_path / "hold", None):
        ours, theirs = socket.socketpair()
        proc = _spawn(root, hold, stdin=theirs.fileno(), stdout=theirs.fileno())
        theirs.close()
        assert proc.stderr is not None
        with ours:
            ours.sendall(INIT)
            assert b'"protocolVersion"' in ours.recv(65536)
            ours.sendall(INITIALIZED + _call(2, "read", file_path="a.txt"))
            time.sleep(0.5)  # its answer waits unread on our side
            ours.sendall(_call(3, "read", file_path="a.txt"))
            time.sleep(0.3)
        time.sleep(0.3)
        if hold is not None:
            hold.unlink()
        assert proc.wait(timeout=WAIT) == 0
        assert proc.stderr.read() == b""


CANCELLED = {
    # stdin's end read while call 2 ran: call 3's cancellation, already read, still applies
    "after-the-end-of-input": (_call(2, "read", file_path="a.txt") + _call(3, "read", file_path="a.txt") + _cancel(3),
                               [2]),
    # a reused id: the dispatcher's latest request of an id is the one a cancellation reaches
    "reused-id": (_call(2, "read", file_path="a.txt") + _call(2, "read", file_path="missing.txt") + _cancel(2), [2]),
}


@pytest.mark.parametrize("name", sorted(CANCELLED))
def test_a_cancellation_read_ahead_reaches_the_call_the_sdk_path_cancels(root: Path, tmp_path: Path,
                                                                         name: str) -> None:
    """All in one write, stdin then closed. With the import held (every call served on our
    route): exactly the calls the SDK's dispatcher leaves uncancelled are answered (before: a
    cancellation read before the end of input was ignored by the next call, and a reused id
    cancelled the older call instead of the newer); the SDK route answers the same."""
    data, answered = CANCELLED[name]
    early = _answers(root, data, tmp_path / "hold")
    assert [json.loads(line)["id"] for line in early] == answered
    assert b"alpha" in early[0]  # the first call's answer (in "reused-id": not the missing file's)
    sdk = _answers(root, data, None)
    assert early == sdk


def test_a_client_that_never_reads_stdout_is_not_buffered_without_bound(root: Path, tmp_path: Path) -> None:
    """A client that writes calls without reading its answers meets a full stdin pipe once
    stdout is full and ``IN_FLIGHT_MAX`` calls are unanswered: nothing piles up."""
    import threading

    hold = tmp_path / "hold"
    proc = _spawn(root, hold)
    assert proc.stdin is not None
    stdin = proc.stdin
    sent = [0]

    def feed() -> None:
        one = _call(2, "read", file_path="big.txt")
        try:
            stdin.write(INIT + INITIALIZED)
            while sent[0] < 64 << 20:
                stdin.write(one * 10)
                stdin.flush()
                sent[0] += len(one) * 10
        except (OSError, ValueError):
            pass

    threading.Thread(target=feed, daemon=True).start()
    try:
        # the server stops reading: wait until nothing more went in for a second (under a guard,
        # not a budget: a busy machine only makes this take longer), then that is bounded
        deadline = time.monotonic() + WAIT
        first = -1
        while sent[0] != first and time.monotonic() < deadline:
            first = sent[0]
            time.sleep(1.0)
        assert sent[0] == first < 4 << 20  # the server stopped reading; nothing piles up
        assert hold.exists()
    finally:
        proc.kill()
        proc.wait(timeout=WAIT)
        hold.unlink(missing_ok=True)
