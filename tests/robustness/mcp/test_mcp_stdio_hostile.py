"""A hostile or buggy client on ``dsh-fs mcp``'s stdio wire: raw bytes into a real process.

Each test spawns the real ``dsh-fs mcp --root DIR`` with pipes and writes bytes as a client
would, then reads what the server wrote. Our route (``mcp/stdio/``: ``pipe.py``, ``dispatch.py``,
``mcp/wire.py``) must change no byte and lose no answer:

* **Same bytes both ways**: a table of awkward request lines (duplicate keys, a BOM, CRLF,
  blanks around members, ids at and past 2**53, escapes, ``\\u2028``, lone surrogates, null
  or odd ``arguments``, ``_meta``, unknown tools, floats and big integers in the arguments,
  deep nesting) gets the same answer lines as with every line sent to the SDK
  (``DSH_FS_MCP_SDK_ONLY=1``).
* **Framing**: a request cut into single bytes with pauses, blank/CRLF/NUL/invalid UTF-8 lines,
  1,000 pipelined calls, a last line with no line end before the end of input: every request
  answered once, the server exits 0 with nothing on stderr.
* **The transport's own error replies** (a line that is no message) settle no request handed
  to the server, even one with the same ``id``, and are never taken for the SDK's reply to an
  ``initialize`` answered early (before: a reused id lost a call to ``Connection closed``; a
  bad line right after ``initialize`` got the handshake answered twice).
* **A non-blocking stdout** (a client that set ``O_NONBLOCK`` on the pipe it gave us): once
  the pipe fills, the rest of each answer waits for room (before: every answer after the
  first full pipe was dropped as if stdout were broken).
* **A non-blocking stdin** (``O_NONBLOCK``): a first line that arrives in two pieces is read
  whole before the event loop (before: the bytes read before ``EAGAIN`` were dropped, and the
  ``initialize`` was answered with a parse error); where the reader reads in a thread
  (``RWF_NOWAIT`` refused), its ``EAGAIN`` waits for bytes instead of ending the input (a read
  error after part of the first line: ``tests/unit/mcp/test_mcp_pipe.py``).
* **The end of input while calls run**: a call still searching when stdin closes is
  answered before the server exits.
* **A line too long** (DEVIATIONS M4): answered ``-32600`` ``Request body too large`` with its
  ``id``, the lines after it served, the server's memory bounded by the limit.
"""

from __future__ import annotations

import fcntl
import json
import os
import select
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from mcpkit import INITIALIZED, initialize, server_env
from mcpkit import call as _call

pytestmark = pytest.mark.timeout(60)

INIT = initialize(0, client="hostile")


def _argv(root: Path) -> list[str]:
    return [sys.executable, "-m", "dsh_fs.cli.main", "mcp", "--root", str(root)]


def _env(ours: bool) -> dict[str, str]:
    return server_env(sdk_only=not ours)


def _serve(root: Path, data: bytes, *, ours: bool = True) -> tuple[list[bytes], bytes]:
    """All of ``data`` written at once then stdin closed: the server's lines (the
    ``initialize`` answer left out) and its stderr; the server must exit 0."""
    proc = subprocess.run(_argv(root), input=INIT + INITIALIZED + data, capture_output=True,
                          env=_env(ours), timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert b'"protocolVersion"' in lines[0], lines[:1]
    return lines[1:], proc.stderr


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "a.txt").write_text("hello\nworld\n")
    (tmp_path / "big.txt").write_text("".join(f"line {i} {'y' * 80}\n" for i in range(600)))
    tree = tmp_path / "tree"
    for d in range(4):
        (tree / f"d{d}").mkdir(parents=True)
        for f in range(25):
            (tree / f"d{d}" / f"f{f}.txt").write_text(f"abc {f}\n" * 50)
    return tmp_path


_READ = '"method":"tools/call","params":{"name":"read","arguments":{"file_path":"a.txt"}}'
AWKWARD = [
    # arguments that are no object, or none
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","arguments":[1,2]}}',
    b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read","arguments":"x"}}',
    b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read","arguments":null}}',
    b'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"read"}}',
    b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"read","arguments":5}}',
    # duplicate keys: the last one wins on both paths
    b'{"jsonrpc":"2.0","id":6,"id":"six",' + _READ.encode() + b"}",
    b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope","name":"read",'
    b'"arguments":{"file_path":"a.txt"}}}',
    b'{"jsonrpc":"2.0","id":8,"method":"tools/list","method":"tools/call","params":{"name":"read",'
    b'"arguments":{"file_path":"a.txt"}}}',
    b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"read","arguments":'
    b'{"file_path":"zz","file_path":"a.txt"}}}',
    # line shapes
    b'\xef\xbb\xbf{"jsonrpc":"2.0","id":10,' + _READ.encode() + b"}",
    b'{"jsonrpc":"2.0","id":11,' + _READ.encode() + b"}\r",
    b'  { "jsonrpc" : "2.0" ,\t"id" : 12 , "method":"tools/call","params":{"name":"read",'
    b'"arguments":{"file_path":"a.txt"}} }  ',
    # ids
    b'{"jsonrpc":"2.0","id":"\\ud800x",' + _READ.encode() + b"}",
    ('{"jsonrpc":"2.0","id":"\u2028\u00e9\\u2029",' + _READ + "}").encode(),
    b'{"jsonrpc":"2.0","id":"a\\"b\\\\c\\n\\u0000",' + _READ.encode() + b"}",
    b'{"jsonrpc":"2.0","id":9007199254740993,' + _READ.encode() + b"}",
    b'{"jsonrpc":"2.0","id":-900719925474099,' + _READ.encode() + b"}",
    b'{"jsonrpc":"2.0","id":9223372036854775808,' + _READ.encode() + b"}",
    b'{"jsonrpc":"2.0","id":18446744073709551616,' + _READ.encode() + b"}",
    b'{"jsonrpc":"2.0","id":-0,' + _READ.encode() + b"}",
    b'{"jsonrpc":"2.0","id":true,' + _READ.encode() + b"}",
    b'{"jsonrpc":"2.0","id":null,' + _READ.encode() + b"}",
    b'{"jsonrpc":2.0,"id":23,' + _READ.encode() + b"}",
    # params
    b'{"jsonrpc":"2.0","id":24,"method":"tools/call","params":{"name":"read","arguments":'
    b'{"file_path":"a.txt"},"_meta":{}}}',
    b'{"jsonrpc":"2.0","id":25,"method":"tools/call","params":null}',
    b'{"jsonrpc":"2.0","id":26,"method":"tools/call","params":{"name":"zzz","arguments":{}}}',
    b'{"jsonrpc":"2.0","id":27,"method":"tools/call","params":{"name":5,"arguments":{}}}',
    b'{"jsonrpc":"2.0","id":28,"method":"tools/call","params":{"name":"read","arguments":'
    b'{"file_path":"nope.txt"}}}',
    # argument values
    b'{"jsonrpc":"2.0","id":29,"method":"tools/call","params":{"name":"read","arguments":'
    b'{"file_path":"a.txt","offset":1.0}}}',
    b'{"jsonrpc":"2.0","id":30,"method":"tools/call","params":{"name":"read","arguments":'
    b'{"file_path":"a.txt","offset":123456789012345678901234567890}}}',
    b'{"jsonrpc":"2.0","id":31,"method":"tools/call","params":{"name":"read","arguments":'
    b'{"file_path":"a.txt","offset":1e2}}}',
    b'{"jsonrpc":"2.0","id":32,"method":"tools/call","params":{"name":"read","arguments":'
    b'{"file_path":"\\udc80.txt"}}}',
    b'{"jsonrpc":"2.0","id":33,"method":"tools/call","params":{"name":"read","arguments":'
    b'{"file_path":"a\\u0000.txt"}}}',
    b'{"jsonrpc":"2.0","id":34,"method":"tools/call","params":{"name":"read","arguments":'
    b'{"file_path":"a\t.txt"}}}',
    b'{"jsonrpc":"2.0","id":35,"method":"tools/call","params":{"name":"read","arguments":'
    b'{"file_path":"a.txt","x":' + b"[" * 150 + b"]" * 150 + b"}}}",
    b'{"jsonrpc":"2.0","id":36,"method":"tools/call","params":{"name":"read","arguments":'
    b'{"file_path":"a.txt","x":' + b"[" * 500 + b"]" * 500 + b"}}}",
    b'{"jsonrpc":"2.0","id":37,"method":"tools/call","params":{"name":"grep","arguments":'
    b'{"pattern":"\xc3\xa9|abc 3$","path":"tree/d1"}}}',
]
"""request lines whose answers must not depend on the route (one line each, ``\\n`` added)"""


def test_awkward_requests_get_the_same_bytes_on_both_routes(root: Path) -> None:
    data = b"".join(line + b"\n" for line in AWKWARD)
    ours, ours_err = _serve(root, data, ours=True)
    sdk, sdk_err = _serve(root, data, ours=False)
    assert Counter(ours) == Counter(sdk), set(ours) ^ set(sdk)
    assert len(ours) == len(AWKWARD) - 1  # the id:null notification-like call is not answered twice
    assert b"Traceback" not in ours_err + sdk_err


def test_framing_every_request_answered_once(root: Path) -> None:
    proc = subprocess.Popen(_argv(root), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=_env(True))
    assert proc.stdin is not None and proc.stdout is not None
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(proc.stdout.read()))  # type: ignore[union-attr]
    reader.start()  # answers read all along: the server holds back a client that reads none
    try:
        proc.stdin.write(INIT + INITIALIZED)
        proc.stdin.flush()
        for byte in _call(1, "read", {"file_path": "a.txt"}):  # one byte at a time
            proc.stdin.write(bytes([byte]))
            proc.stdin.flush()
            time.sleep(0.0005)
        proc.stdin.write(b"\n\r\n   \n\x00\x00\n\xff\xfe{\n")  # blank lines skipped; two unreadable
        proc.stdin.write(b"".join(_call(i, "read", {"file_path": "a.txt"}) for i in range(100, 1100)))
        proc.stdin.write(_call(2, "read", {"file_path": "a.txt", "pad": "x" * (3 << 20)}))  # 3 MiB line
        proc.stdin.write(_call(3, "read", {"file_path": "a.txt"}).rstrip(b"\n"))  # no line end, then EOF
        proc.stdin.close()
        assert proc.wait(60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        reader.join(60)
    lines = received[0].splitlines()[1:]
    replies = [json.loads(line) for line in lines]
    ids = Counter(reply["id"] for reply in replies)
    assert ids == Counter([1, None, None, *range(100, 1100), 2, 3]), ids - Counter(range(100, 1100))
    assert all(r["error"]["code"] == -32700 for r in replies if r["id"] is None)
    assert proc.stderr is not None and proc.stderr.read() == b""


@pytest.mark.parametrize("ours", [True, False])
def test_a_bad_line_right_after_initialize_leaves_one_handshake_answer(root: Path, ours: bool) -> None:
    proc = subprocess.run(_argv(root), input=INIT + b"garbage\n" * 3, capture_output=True, env=_env(ours),
                          timeout=60)
    assert proc.returncode == 0
    assert proc.stdout.count(b'"protocolVersion"') == 1, proc.stdout
    assert proc.stdout.count(b'"code":-32700') == 3
    assert proc.stderr == b"", proc.stderr


@pytest.mark.parametrize("ours", [True, False])
def test_an_error_reply_with_a_reused_id_settles_no_call(root: Path, ours: bool) -> None:
    data = (
        _call(1, "read", {"file_path": "nope.txt"})  # served by the SDK (right after the handshake)
        + b'{"jsonrpc":2.0,"id":1,"method":"tools/call"}\n'  # no message: the transport answers it
        + _call(1, "read", {"file_path": "a.txt", "offset": 123456789012345678901234567890})
    )
    lines, _ = _serve(root, data, ours=ours)
    texts = sorted(line.decode() for line in lines)
    assert len(texts) == 3, texts
    assert not any("Connection closed" in text for text in texts), texts
    assert any('cannot read \\"' in text and 'nope.txt\\": not found' in text for text in texts), texts
    assert any("Invalid request: not a JSON-RPC 2.0 message" in text for text in texts), texts


@pytest.mark.parametrize("ours", [True, False])
def test_a_non_blocking_stdout_loses_no_answer(root: Path, ours: bool) -> None:
    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, fcntl.F_SETFL, fcntl.fcntl(write_end, fcntl.F_GETFL) | os.O_NONBLOCK)
    calls = 40  # 40 answers of ~55 KB: the pipe fills many times over
    try:
        proc = subprocess.Popen(_argv(root), stdin=subprocess.PIPE, stdout=write_end,
                                stderr=subprocess.PIPE, env=_env(ours))
    finally:
        os.close(write_end)
    assert proc.stdin is not None and proc.stderr is not None
    out = bytearray()
    try:
        proc.stdin.write(INIT + INITIALIZED + b"".join(_call(i, "read", {"file_path": "big.txt"})
                                                       for i in range(1, calls + 1)))
        proc.stdin.flush()
        time.sleep(1.0)  # not reading: the server meets a full pipe
        proc.stdin.close()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if not select.select([read_end], [], [], 1)[0]:
                continue
            chunk = os.read(read_end, 1 << 20)
            if not chunk:
                break
            out += chunk
        assert proc.wait(60) == 0
    finally:
        os.close(read_end)
        if proc.poll() is None:
            proc.kill()
    ids = [json.loads(line)["id"] for line in bytes(out).splitlines()[1:]]
    assert sorted(ids) == list(range(1, calls + 1))
    assert proc.stderr.read() == b""


def test_the_end_of_input_waits_for_calls_still_running(root: Path) -> None:
    data = (_call(1, "grep", {"pattern": "abc 1[0-9]", "path": "tree"}) + _call(2, "read", {"file_path": "a.txt"})
            + _call(3, "glob", {"pattern": "**/f1.txt"}))
    lines, err = _serve(root, data)
    replies = {json.loads(line)["id"]: json.loads(line) for line in lines}
    assert sorted(replies) == [1, 2, 3]
    assert all("result" in reply and not reply["result"]["isError"] for reply in replies.values()), replies
    assert err == b""


def test_a_non_blocking_stdin_loses_no_byte_of_a_first_line_cut_in_two(root: Path) -> None:
    read_end, write_end = os.pipe()
    fcntl.fcntl(read_end, fcntl.F_SETFL, fcntl.fcntl(read_end, fcntl.F_GETFL) | os.O_NONBLOCK)
    os.write(write_end, INIT[:50])  # there before the server starts: the read before the loop takes it
    try:
        proc = subprocess.Popen(_argv(root), stdin=read_end, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=_env(True))
    finally:
        os.close(read_end)
    try:
        time.sleep(1.0)  # the read before the loop meets an empty non-blocking pipe (EAGAIN) mid-line
        os.write(write_end, INIT[50:] + INITIALIZED + _call(1, "read", {"file_path": "a.txt"}))
    finally:
        os.close(write_end)
    out, err = proc.communicate(timeout=60)
    replies = [json.loads(line) for line in out.splitlines()]
    assert [reply["id"] for reply in replies] == [0, 1], replies
    assert replies[0]["result"]["protocolVersion"] == "2025-06-18"
    assert err == b""


def test_a_non_blocking_pipe_read_in_the_thread_waits_for_its_bytes() -> None:
    """Where ``RWF_NOWAIT`` is refused (an older kernel) the reader reads in a thread: a
    non-blocking stdin's ``EAGAIN`` there waits for bytes (before: taken for a read error,
    which ended the input)."""
    import anyio

    from dsh_fs.mcp.stdio import pipe

    read_end, write_end = os.pipe()
    os.set_blocking(read_end, False)

    async def main() -> list[bytes]:
        reader = pipe.LineReader(os.fdopen(read_end, "rb", buffering=0, closefd=False), fresh=True, limit=1 << 20)
        reader._start()
        reader._registered = False  # as when the kernel refuses RWF_NOWAIT for this pipe
        lines = []
        async with anyio.create_task_group() as tg:
            async def feed() -> None:
                await anyio.sleep(0.2)
                os.write(write_end, b"one\ntw")
                await anyio.sleep(0.2)
                os.write(write_end, b"o\n")
                os.close(write_end)

            tg.start_soon(feed)
            while line := await reader.readline():
                lines.append(line)
        return lines

    try:
        assert anyio.run(main) == [b"one\n", b"two\n"]
    finally:
        os.close(read_end)


def test_a_line_too_long_is_answered_and_the_next_ones_served(root: Path) -> None:
    """A ``write`` whose line passes ``LINE_MAX`` (DEVIATIONS M4): ``-32600`` ``Request body too
    large`` with its ``id`` (found at the line's start), nothing written, the next call served;
    the server's memory stays near the limit (what it reads of the line is held at most once,
    never copied), not a multiple of the line.

    The peak is the server's own (``VmHWM`` of its address space, read before it exits), not
    ``ru_maxrss``: Linux counts in a spawned process's ``ru_maxrss`` the peak of the process that
    spawned it (the address space it had before ``exec``), so the test runner's own size would
    count."""
    from dsh_fs.mcp.stdio import LINE_MAX

    head = b'{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"write","arguments":{"file_path":"w.txt","content":"'
    proc = subprocess.Popen(_argv(root), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=_env(True))
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    chunk = b"x" * (1 << 20)
    proc.stdin.write(INIT + INITIALIZED + head)
    for _ in range(LINE_MAX // len(chunk) + 2):
        proc.stdin.write(chunk)
    proc.stdin.write(b'"}}}\n' + _call(42, "read", {"file_path": "a.txt"}))
    proc.stdin.flush()
    lines = [proc.stdout.readline() for _ in range(3)]  # the initialize answer, then both replies
    with open(f"/proc/{proc.pid}/status", encoding="ascii") as handle:
        (peak,) = [int(line.split()[1]) * 1024 for line in handle if line.startswith("VmHWM:")]
    proc.stdin.close()
    assert proc.stdout.read() == b""
    assert proc.wait() == 0
    assert peak < 2 * LINE_MAX  # the line is held at most once (up to the limit), never copied
    replies = [json.loads(line) for line in lines[1:]]
    assert replies[0] == {"jsonrpc": "2.0", "id": 41, "error": {"code": -32600, "message": "Request body too large"}}
    assert replies[1]["id"] == 42 and replies[1]["result"]["isError"] is False
    assert not (root / "w.txt").exists()
    assert proc.stderr.read() == b""


def test_a_client_that_never_reads_stderr_does_not_stall_the_server(root: Path) -> None:
    """stderr a pipe nobody reads: 3,000 malformed notifications make the SDK log a warning each
    (~150 KB, past the pipe's 64 KiB); the server still answers what follows, and once the client
    reads stderr it learns how much log output was dropped (before: the server blocked on its
    first warning past the pipe's size, for good)."""
    read_end, write_end = os.pipe()
    try:
        proc = subprocess.Popen(_argv(root), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=write_end,
                                env=_env(True))
    finally:
        os.close(write_end)
    assert proc.stdin is not None and proc.stdout is not None
    bad = b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":[1],"progress":"x"}}\n'
    try:
        proc.stdin.write(INIT + INITIALIZED + bad * 3000 + b'{"jsonrpc":"2.0","id":7,"method":"ping"}\n')
        proc.stdin.flush()
        assert b'"protocolVersion"' in proc.stdout.readline()
        assert json.loads(proc.stdout.readline()) == {"jsonrpc": "2.0", "id": 7, "result": {}}  # not stalled
        logged = b""
        while select.select([read_end], [], [], 1)[0]:
            chunk = os.read(read_end, 1 << 20)
            if not chunk:
                break
            logged += chunk
        proc.stdin.write(b'{"jsonrpc":"2.0","id":8,"method":"ping"}\n' + bad)  # one more warning, room now
        proc.stdin.close()
        assert json.loads(proc.stdout.readline())["id"] == 8
        assert proc.wait(60) == 0
        while chunk := os.read(read_end, 1 << 20):
            logged += chunk
    finally:
        os.close(read_end)
        if proc.poll() is None:
            proc.kill()
    assert b"malformed params" in logged and b"bytes of log output dropped (stderr was full)" in logged
