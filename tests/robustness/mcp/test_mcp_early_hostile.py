"""A hostile or buggy client during ``dsh-fs mcp``'s early phase over stdio (DEVIATIONS M2,
``mcp/prelude.py``): the calls answered before the MCP SDK is loaded.

Real processes over pipes and socket pairs. ``$DSH_FS_MCP_TEST_HOLD_IMPORT`` holds the SDK
import while its file exists (``early.HOLD_ENV_VAR``), so whatever the server writes while it
exists came from the early phase; the answers are compared with the SDK path's
(``DSH_FS_MCP_LEAN=0``: no early phase). The later (lean) stdio path's own attacks are in
``test_mcp_stdio_hostile.py``.

* **A full non-blocking stdout** (the client set ``O_NONBLOCK`` on the pipe it gave us and
  reads late): every answer whole (before: a partial line, then the rest of the early
  answers lost, as if stdout were broken).
* **A stdin socket whose peer left answers unread and closed** (``ECONNRESET`` on the next
  read): exit 0 with nothing on stderr, as the SDK path (before: a traceback, exit 1).
* **Lines the SDK path's reader refuses** (a UTF-8 BOM, a form feed as a "blank" line):
  answered as the SDK path answers them (before: a BOM'd ``tools/list`` got the tool list
  instead of a parse error, and a BOM'd ``notifications/initialized`` or a form-feed line,
  kept for the SDK, got no answer at all when stdin ended in the early phase).
* **Cancellations read ahead** while a call runs: looked at as the SDK's dispatcher would
  (before: one read before the end of input was ignored by the next call; with a reused id
  the older call was cancelled instead of the newer).
* **A client that never reads stdout**: the early phase stops reading stdin (bounded).
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

pytestmark = pytest.mark.timeout(60)

DSH_FS = str(Path(sys.executable).with_name("dsh-fs"))
INIT = (
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
    b'"capabilities":{},"clientInfo":{"name":"hostile","version":"1"}}}\n'
)
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
BOM = b"\xef\xbb\xbf"
WAIT = 30.0


def _call(request_id: Any, name: str, **arguments: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                       "params": {"name": name, "arguments": arguments}}).encode() + b"\n"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("alpha\nbeta\n")
    (ws / "big.txt").write_text("".join(f"line {i} {'y' * 80}\n" for i in range(600)))  # ~55 KB answers
    return ws


def _spawn(root: Path, hold: Path | None, **streams: Any) -> subprocess.Popen[bytes]:
    env = {**os.environ}
    if hold is not None:
        hold.touch()
        env["DSH_FS_MCP_TEST_HOLD_IMPORT"] = str(hold)
    else:
        env["DSH_FS_MCP_LEAN"] = "0"  # the SDK path
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


def test_the_line_checks_read_text_as_the_sdk_path_does() -> None:
    """The pure checks behind the test above: a BOM is no part of a JSON text there
    (``stdio.parse_line``), nor are encoded surrogates (strict UTF-8)."""
    from dsh_fs.mcp import prelude

    cancel = b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}\n'
    assert prelude._cancels(cancel, 2)
    assert not prelude._cancels(BOM + cancel, 2)
    listing = b'{"jsonrpc":"2.0","id":"x","method":"tools/list"}\n'
    assert prelude._list_request(listing) == "x"
    assert prelude._list_request(BOM + listing) is None
    assert prelude._list_request(listing.replace(b'"x"', b'"\xed\xa0\x80"')) is None
    assert prelude._is_initialized(INITIALIZED) and not prelude._is_initialized(BOM + INITIALIZED)


def test_a_full_non_blocking_stdout_in_the_early_phase_loses_no_answer(root: Path, tmp_path: Path) -> None:
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
        time.sleep(1.0)  # not reading: the early phase meets a full pipe (64 KiB; three ~55 KB answers)
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline and select.select([read_end], [], [], deadline - time.monotonic())[0]:
            chunk = os.read(read_end, 1 << 20)
            if not chunk:
                break
            out += chunk
        assert proc.wait(timeout=WAIT) == 0
        assert hold.exists()  # all answered early: the process ended with the import held
    finally:
        os.close(read_end)
        hold.unlink(missing_ok=True)
        if proc.poll() is None:
            proc.kill()
    answers = [json.loads(line) for line in bytes(out).splitlines()[1:]]
    assert [answer["id"] for answer in answers] == [2, 3, 4]
    assert all(answer["result"]["isError"] is False for answer in answers)
    assert proc.stderr.read() == b""


def test_a_reset_stdin_socket_in_the_early_phase_ends_quietly(root: Path, tmp_path: Path) -> None:
    """stdin and stdout one socket; the client leaves answers unread and closes its end, so
    the server's next read fails with ``ECONNRESET``. The SDK path then reads the end of
    input and exits 0 (checked with ``DSH_FS_MCP_LEAN=0``); the early phase hands over so."""
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


def _cancel(request_id: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled",
                       "params": {"requestId": request_id}}).encode() + b"\n"


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
    """All in one write, stdin then closed. Early (the import held, so every call is served
    here): exactly the calls the SDK's dispatcher would leave uncancelled are answered (before:
    a cancellation read before the end of input was ignored by the next call, and a reused id
    cancelled the older call instead of the newer). The SDK path's answer to the first call
    (which no cancellation can reach there) is the same bytes."""
    data, answered = CANCELLED[name]
    early = _answers(root, data, tmp_path / "hold")
    assert [json.loads(line)["id"] for line in early] == answered
    assert b"alpha" in early[0]  # the first call's answer (in "reused-id": not the missing file's)
    sdk = _answers(root, data, None)
    assert early[0] in sdk


def test_a_client_that_never_reads_stdout_is_not_buffered_without_bound(root: Path, tmp_path: Path) -> None:
    """Calls answered early go out one at a time, each written before the next line is read:
    a client that writes calls without reading its answers meets a full stdin pipe once a
    few answers fill stdout (the early phase holds at most the first-line read and two
    :data:`prelude.LINE_LIMIT` reads ahead)."""
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
        time.sleep(2.0)
        first = sent[0]
        time.sleep(1.0)
        assert sent[0] == first < 4 << 20  # the server stopped reading; nothing piles up
        assert hold.exists()
    finally:
        proc.kill()
        proc.wait(timeout=WAIT)
        hold.unlink(missing_ok=True)
