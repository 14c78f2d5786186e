"""Exec channels (``fs_channel.execs``, ``fs_channel.relay``; DEVIATIONS C6): the hub's two byte
streams kept by offsets (a repeated exec writes nothing twice, output is dropped only once the
near side has it, the helper's end reported after its last output), the transport made of
execs over it (failed execs tried again, input cut to ``max_send``, a hub gone), the relay
program end to end (start, base64 mode), and ``shell_exec``'s command and answer line."""

from __future__ import annotations

import asyncio
import base64
import os
import shlex
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from typing import Any

import pytest

from dsh_fs.fs_channel import relay
from dsh_fs.fs_channel.execs import ExecChannel, ExecTransport, relay_program, shell_exec
from dsh_fs.fs_channel.wire import ProtocolError, encode_frame
from dsh_fs.testing.channels import far_python

pytestmark = pytest.mark.anyio


def _ask(hub: relay.Hub, message: dict[str, Any], body: bytes = b"") -> tuple[dict[str, Any], bytes]:
    return relay.parse(hub.answer({"max": 1 << 20, **message}, body))


@pytest.fixture
def hub(tmp_path: Any) -> Any:
    made = relay.Hub(["cat"], str(tmp_path / "s.sock"))
    for target in (made.pump_stdout, made.pump_stderr):
        threading.Thread(target=target, daemon=True).start()
    yield made
    made.stop()


def test_the_hub_keeps_both_streams_by_offset(hub: relay.Hub) -> None:
    answer, data = _ask(hub, {"in_at": 0, "ack": 0, "wait": 2000}, b"hello ")
    assert (answer["out_at"], answer["in"], data) == (0, 6, b"hello ")
    answer, data = _ask(hub, {"in_at": 0, "ack": 0, "wait": 2000}, b"hello world")  # sent again: 6 bytes were counted
    assert answer["in"] == 11
    assert data.startswith(b"hello ")  # not acknowledged yet: still there
    while len(data) < 11:
        answer, data = _ask(hub, {"in_at": 11, "ack": 0, "wait": 2000})
    assert data == b"hello world" and answer["ended"] is None
    answer, data = _ask(hub, {"in_at": 11, "ack": 6, "wait": 0})
    assert (answer["out_at"], data) == (6, b"world")  # dropped up to what the near side has
    answer, data = _ask(hub, {"in_at": 11, "ack": 2, "wait": 0})
    assert (answer["out_at"], data) == (6, b"world")  # an older ack cannot bring dropped bytes back
    answer, data = _ask(hub, {"in_at": 11, "ack": 11, "wait": 0, "max": 3})
    assert data == b""
    answer, data = _ask(hub, {"in_at": 20, "ack": 11, "wait": 0}, b"gap")
    assert answer["in"] == 11  # past what was counted: nothing written
    _ask(hub, {"in_at": 11, "ack": 11, "wait": 0}, b"abcdef")
    answer, data = _ask(hub, {"in_at": 17, "ack": 11, "wait": 2000, "max": 3})
    assert data == b"abc"  # at most max


def test_the_hub_reports_the_helpers_end_after_its_last_output(hub: relay.Hub) -> None:
    _ask(hub, {"in_at": 0, "ack": 0, "wait": 0, "close": True}, b"bye")
    answer, data = _ask(hub, {"in_at": 3, "ack": 0, "wait": 2000})
    while answer["ended"] is None:
        answer, data = _ask(hub, {"in_at": 3, "ack": 0, "wait": 2000})
    assert (data, answer["ended"]) == (b"bye", 0)
    answer, data = _ask(hub, {"in_at": 3, "ack": 0, "wait": 0, "max": 1})
    assert (data, answer["ended"]) == (b"b", None)  # more output follows: not the end yet


class FakeHub:
    """The far side of an exec channel in this process: a real ``relay.Hub`` over ``cat``,
    reached by a ``run`` that fails on command (to see execs tried again)."""

    def __init__(self, tmp_path: Any) -> None:
        self.hub: relay.Hub | None = None
        self.path = str(tmp_path / "h.sock")
        self.failures = 0
        self.calls: list[dict[str, Any]] = []
        self.garble = 0

    async def run(self, argv: Sequence[str], stdin: bytes) -> bytes:
        message, body = relay.parse(stdin)
        self.calls.append({**message, "body": len(body)})
        if self.failures:
            self.failures -= 1
            raise RuntimeError("the sandbox API is busy")
        if self.garble:
            self.garble -= 1
            return b"garbage"
        if message.get("start") is not None:
            self.hub = relay.Hub(message["start"], self.path)
            for target in (self.hub.pump_stdout, self.hub.pump_stderr):
                threading.Thread(target=target, daemon=True).start()
        if self.hub is None:
            return relay.frame({"gone": True, "why": "the hub is not running"})
        hub = self.hub
        return await asyncio.get_running_loop().run_in_executor(None, hub.answer, message, body)


async def _echo(transport: ExecTransport, data: bytes) -> bytes:
    await transport.send(data)
    transport.busy(True)
    got = b""
    while len(got) < len(data):
        chunk = await asyncio.wait_for(transport.receive(), 30)
        assert chunk, await transport.reason()
        got += chunk
    transport.busy(False)
    return got


async def test_the_transport_carries_bytes_both_ways_in_order(tmp_path: Any) -> None:
    fake = FakeHub(tmp_path)
    transport = ExecTransport(fake.run, ["python3", "-c", "relay"], max_reply=5, max_send=7)
    await transport.start(["cat"])
    assert fake.calls[0]["start"] == ["cat"] and len(fake.calls[0]["session"]) == 32
    payload = bytes(range(200)) * 3
    assert await _echo(transport, payload) == payload
    assert max(call["body"] for call in fake.calls) == 7  # input cut to max_send per exec
    fake.failures = 2  # two failed execs: tried again, nothing written twice
    assert await _echo(transport, b"once and only once") == b"once and only once"
    assert transport.exit_status is None
    await transport.aclose()
    assert any(call.get("close") for call in fake.calls)
    assert await transport.receive() == b"" or True
    await transport.aclose()


async def test_a_transport_whose_execs_keep_failing_ends(tmp_path: Any) -> None:
    fake = FakeHub(tmp_path)
    transport = ExecTransport(fake.run, ["r"], max_reply=1 << 20, retries=1)
    await transport.start(["cat"])
    fake.failures = 5
    await transport.send(b"x")
    assert await asyncio.wait_for(transport.receive(), 30) == b""
    assert await transport.reason() == "the exec channel failed: the sandbox API is busy"
    with pytest.raises(ConnectionResetError):
        await transport.send(b"more")
    garbled = FakeHub(tmp_path / "g")
    os.makedirs(tmp_path / "g")
    other = ExecTransport(garbled.run, ["r"], max_reply=1 << 20, retries=0)
    await other.start(["cat"])
    garbled.garble = 1
    await other.send(b"x")
    assert await asyncio.wait_for(other.receive(), 30) == b""
    assert "the relay's answer is not a frame" in await other.reason()
    await other.aclose()


async def test_a_hub_that_is_gone_ends_the_transport(tmp_path: Any) -> None:
    fake = FakeHub(tmp_path)
    transport = ExecTransport(fake.run, ["r"], max_reply=1 << 20)
    await transport.start(["cat"])
    fake.hub = None
    await transport.send(b"x")
    assert await asyncio.wait_for(transport.receive(), 30) == b""
    assert await transport.reason() == "the helper's hub is gone (the hub is not running)"


async def test_the_relay_program_starts_a_hub_and_reaches_it(tmp_path: Any) -> None:
    session = os.urandom(16).hex()
    relay_argv = [far_python(), "-I", "-S", "-c", relay_program()]

    def exec_relay(message: dict[str, Any], body: bytes = b"", text: bool = False) -> tuple[dict[str, Any], bytes]:
        stdin = encode_frame({"session": session, **message}, body)
        argv = relay_argv + (["--base64"] if text else [])
        done = subprocess.run(argv, input=base64.encodebytes(stdin) if text else stdin, capture_output=True,
                              timeout=60, env={"XDG_RUNTIME_DIR": str(tmp_path)})
        out = done.stdout
        if text:
            assert out.startswith(b"DSHFS:") and out.endswith(b"\n")
            out = base64.b64decode(out[6:])
        return relay.parse(out)

    assert exec_relay({"in_at": 0, "ack": 0})[0]["gone"] is True
    answer, _ = exec_relay({"start": ["cat"], "in_at": 0, "ack": 0, "wait": 0})
    assert answer["in"] == 0
    answer, data = exec_relay({"in_at": 0, "ack": 0, "wait": 5000}, b"ping")
    while len(data) < 4:
        answer, data = exec_relay({"in_at": 4, "ack": 0, "wait": 5000}, text=True)
    assert data == b"ping"
    answer, _ = exec_relay({"in_at": 4, "ack": 4, "wait": 5000, "close": True})
    while answer.get("ended") is None and not answer.get("gone"):
        answer, _ = exec_relay({"in_at": 4, "ack": 4, "wait": 5000})
    assert answer.get("ended") == 0 or answer.get("gone")
    assert relay.parse(relay.request({"session": "not hex!"}, b""))[0] == {"gone": True, "why": "no session named"}


def test_the_hubs_directory_is_private(monkeypatch: pytest.MonkeyPatch) -> None:
    short = tempfile.mkdtemp(prefix="r", dir="/tmp")
    try:
        monkeypatch.setenv("XDG_RUNTIME_DIR", short)
        path = relay.runtime_dir()
        assert path == os.path.join(short, f"dsh-fs-{os.getuid()}", "relay")
        assert os.stat(path).st_mode & 0o777 == 0o700
        os.chmod(path, 0o755)
        with pytest.raises(OSError, match="is not a private directory"):
            relay.runtime_dir()
        monkeypatch.setenv("XDG_RUNTIME_DIR", "/" + "x" * relay.SOCKET_ROOM)  # too long for a socket path
        assert relay.runtime_dir() == f"/tmp/dsh-fs-{os.getuid()}/relay"
    finally:
        shutil.rmtree(short)


async def test_shell_exec_quotes_the_vector_and_reads_the_answer_line() -> None:
    seen: list[str] = []

    async def execute(command: str) -> Any:
        seen.append(command)
        return type("Response", (), {"output": "noise\nDSHFS:" + base64.b64encode(b"answer").decode() + "\n[stderr] x"})()

    run = shell_exec(execute)
    assert await run(["python3", "-I", "-c", "print('$HOME')", "--base64"], b"\x00stdin") == b"answer"
    head, _, rest = seen[0].partition("\n")
    assert shlex.split(head.removesuffix(" <<'DSHFS_END'")) == ["python3", "-I", "-c", "print('$HOME')", "--base64"]
    assert head.endswith(" <<'DSHFS_END'") and rest.endswith("\nDSHFS_END")
    assert base64.b64decode(rest.removesuffix("DSHFS_END")) == b"\x00stdin"

    async def plain(command: str) -> str:
        return "DSHFS:" + base64.b64encode(b"ok").decode()

    assert await shell_exec(plain)(["x"], b"") == b"ok"
    for output in ("sh: python3: not found", "DSHFS:not base64!"):
        async def failing(command: str, output: str = output) -> str:
            return output

        with pytest.raises(ProtocolError, match="the command gave no answer line"):
            await shell_exec(failing)(["x"], b"")


async def test_an_exec_channel_runs_the_relay_with_the_helpers_interpreter() -> None:
    seen: list[Sequence[str]] = []

    async def run(argv: Sequence[str], stdin: bytes) -> bytes:
        seen.append(argv)
        raise OSError("no sandbox")

    channel = ExecChannel(run, identity="e2b://sb", text=True, max_reply=10, max_send=20)
    transport = await channel.start(["/opt/py3", "-I", "-S", "-c", "boot"])
    assert seen[0][:4] == ["/opt/py3", "-I", "-S", "-c"] and seen[0][5:] == ["--base64"]
    assert seen[0][4] == relay_program()
    assert await transport.receive() == b""  # it could not start: the transport ends
    assert (await transport.reason()).startswith("the exec channel failed: no sandbox")
    assert channel.identity == "e2b://sb" and channel.max_reply == 10 and channel.max_send == 20


def _fresh_transport() -> ExecTransport:
    async def never(argv: Sequence[str], stdin: bytes) -> bytes:
        raise AssertionError("no exec expected")

    return ExecTransport(never, ["r"], max_reply=1 << 20)


async def test_what_an_exec_brought_is_taken_once_by_offset() -> None:
    transport = _fresh_transport()
    with pytest.raises(ProtocolError, match="not a frame"):
        transport._take(b"\x00\x00")
    with pytest.raises(ProtocolError, match="not one frame"):
        transport._take(relay.frame({"out_at": 0, "in": 0}, b"ab") + b"x")
    with pytest.raises(ProtocolError, match="has no offsets"):
        transport._take(relay.frame({"in": 0}))
    with pytest.raises(ProtocolError, match="has no offsets"):
        transport._take(relay.frame({"out_at": 0, "in": "0"}))
    transport._take(relay.frame({"out_at": 0, "in": 4}, b"hello"))
    assert (transport._received, transport._sent, await transport.receive()) == (5, 4, b"hello")
    transport._take(relay.frame({"out_at": 3, "in": 2}, b"lo world"))  # overlaps: only what is new
    assert (transport._received, transport._sent, await transport.receive()) == (11, 4, b" world")
    transport._take(relay.frame({"out_at": 11, "in": 9}))
    assert transport._incoming.empty() and transport._sent == 9
    with pytest.raises(ProtocolError, match="skipped helper output"):
        transport._take(relay.frame({"out_at": 12, "in": 9}, b"!"))
    transport._take(relay.frame({"out_at": 9, "in": 9, "ended": 0, "why": " bye \n"}, b"ld!"))
    assert await transport.receive() == b"!" and await transport.receive() == b""
    assert (transport.exit_status, await transport.reason()) == (0, "exit status 0: bye")
    transport._take(relay.frame({"out_at": 12, "in": 9, "ended": 5}))  # after the end: nothing changes
    assert transport.exit_status == 0


async def test_the_helpers_end_is_taken_only_with_its_last_output() -> None:
    early = _fresh_transport()
    early._take(relay.frame({"out_at": 0, "in": 0, "ended": None}, b"ab"))
    assert early._ended is None
    quiet = _fresh_transport()
    quiet._take(relay.frame({"out_at": 0, "in": 0, "ended": "?", "why": ""}))
    assert (quiet.exit_status, await quiet.reason()) == (None, "exit status ?")
    gone = _fresh_transport()
    gone._take(relay.frame({"gone": True, "why": "idle"}))
    assert await gone.reason() == "the helper's hub is gone (idle)" and await gone.receive() == b""
    with pytest.raises(ConnectionResetError, match="gone"):
        await gone.send(b"x")
    assert await _fresh_transport().reason() == "it ended"


async def test_a_hub_that_takes_nothing_ends_the_transport() -> None:
    async def stubborn(argv: Sequence[str], stdin: bytes) -> bytes:
        return relay.frame({"out_at": 0, "in": 0})

    transport = ExecTransport(stubborn, ["r"], max_reply=1 << 20)
    await transport.start(["cat"])
    await transport.send(b"x")
    assert await asyncio.wait_for(transport.receive(), 30) == b""
    assert await transport.reason() == "the helper's hub took none of the bytes sent"
    await transport.aclose()


async def test_failed_execs_are_tried_twice_more_by_default(tmp_path: Any) -> None:
    fake = FakeHub(tmp_path)
    transport = ExecTransport(fake.run, ["r"], max_reply=1 << 20)
    await transport.start(["cat"])
    fake.failures = 2
    assert await _echo(transport, b"ok") == b"ok"
    fake.failures = 3
    await transport.send(b"x")
    assert await asyncio.wait_for(transport.receive(), 30) == b""
    assert await transport.reason() == "the exec channel failed: the sandbox API is busy"


async def test_closing_ends_the_transport() -> None:
    async def answer(argv: Sequence[str], stdin: bytes) -> bytes:
        message, _ = relay.parse(stdin)
        return relay.frame({"out_at": 0, "in": message.get("in_at", 0)})

    transport = ExecTransport(answer, ["r"], max_reply=1 << 20)
    await transport.start(["cat"])
    await transport.aclose()
    assert await transport.reason() == "the channel was closed"
    assert all(task.done() for task in transport._tasks)


def test_an_exec_channels_defaults() -> None:
    async def run(argv: Sequence[str], stdin: bytes) -> bytes:
        return b""

    channel = ExecChannel(run, identity="x://y")
    assert (channel.text, channel.max_reply, channel.max_send) == (False, 1 << 20, None)


async def test_shell_exec_takes_only_a_whole_answer_line() -> None:
    good = base64.b64encode(b"yes").decode()
    for output in ("DSHFS:ab!cd", f"DSHFS:ab!cd\nDSHFS:{good}"):  # not base64: the first answer line decides
        async def say(command: str, output: str = output) -> str:
            return output

        with pytest.raises(ProtocolError, match="the command gave no answer line"):
            await shell_exec(say)(["x"], b"")


def test_the_relays_frames() -> None:
    message, body = relay.parse(relay.frame({"a": 1}, b"xyz") + b"trailing")
    assert (message, body) == ({"a": 1}, b"xyz")
    assert relay.parse(relay.frame({}, b"")) == ({}, b"")
    for bad in (relay.frame({"a": 1}, b"xyz")[:-1], relay.HEADER.pack(relay.LIMIT + 1, 0) + b"{}",
                relay.HEADER.pack(2, relay.LIMIT + 1) + b"{}"):
        with pytest.raises(ValueError, match="not a frame"):
            relay.parse(bad)
    assert relay.LIMIT == 1 << 30
    left, right = socket.socketpair()
    try:
        sender = threading.Thread(target=left.sendall, args=(relay.frame({"b": 2}, b"q" * 300_000),))
        sender.start()  # more than a socket buffer holds: sent while it is read
        assert relay.recv_frame(right) == ({"b": 2}, b"q" * 300_000)  # read whole across many recv calls
        sender.join()
        left.sendall(relay.HEADER.pack(relay.LIMIT + 1, 0))
        with pytest.raises(ValueError, match="not a frame"):
            relay.recv_frame(right)
        left.sendall(relay.HEADER.pack(0, relay.LIMIT + 1))
        with pytest.raises(ValueError, match="not a frame"):
            relay.recv_frame(right)
        left.sendall(b"\x00\x00")
        left.shutdown(socket.SHUT_WR)
        with pytest.raises(EOFError, match="the connection ended"):
            relay.recv_exact(right, 4)
    finally:
        left.close()
        right.close()


def test_a_hub_connection_is_answered_and_closed(hub: relay.Hub) -> None:
    left, right = socket.socketpair()
    left.sendall(relay.frame({"in_at": 0, "ack": 0, "wait": 2000}, b"via socket"))
    hub.handle(right)
    message, data = relay.recv_frame(left)
    assert message["in"] == 10 and data.startswith(b"via")
    assert left.recv(1) == b""  # the hub closed its end
    left.close()
    broken, other = socket.socketpair()
    broken.sendall(b"\x00")
    broken.close()
    hub.handle(other)  # a malformed request: no answer, no failure
    assert other.fileno() == -1


def test_a_requests_defaults_and_bounds(hub: relay.Hub) -> None:
    answer, data = relay.parse(hub.answer({}, b"no offsets"))  # in_at 0, ack 0, wait 0, max 1 MiB
    assert answer["in"] == 10 and answer["out_at"] == 0
    while len(data) < 10:
        answer, data = relay.parse(hub.answer({"in_at": 10, "wait": 2000}, b""))
    assert data == b"no offsets"
    answer, data = relay.parse(hub.answer({"in_at": 10, "max": 0}, b""))
    assert data == b"n"  # at least one byte
    answer, data = relay.parse(hub.answer({"in_at": 10, "ack": 99, "wait": -5}, b""))
    assert (answer["out_at"], data) == (99, b"")  # an ack past the output drops what there is
    assert (hub.out_base, bytes(hub.out)) == (10, b"")
    started = time.monotonic()
    relay.parse(hub.answer({"in_at": 10, "ack": 10, "wait": 100}, b""))
    assert time.monotonic() - started >= 0.09  # waited for output that did not come


def test_the_hub_keeps_the_end_of_the_helpers_stderr(tmp_path: Any) -> None:
    made = relay.Hub(["/bin/sh", "-c", f"head -c {relay.STDERR_KEEP + 100} /dev/zero | tr '\\000' e >&2; "
                                       "echo END >&2; exit 4"], str(tmp_path / "e.sock"))
    for target in (made.pump_stdout, made.pump_stderr):
        threading.Thread(target=target, daemon=True).start()
    answer, _ = relay.parse(made.answer({"wait": 5000}, b""))
    while answer["ended"] is None:
        answer, _ = relay.parse(made.answer({"wait": 5000}, b""))
    assert answer["ended"] == 4 and answer["why"].endswith("eEND\n") and len(answer["why"]) == relay.STDERR_KEEP
    assert relay.STDERR_KEEP == 4096


def test_the_runtime_directory_falls_back_only_when_too_long(monkeypatch: pytest.MonkeyPatch) -> None:
    assert relay.SOCKET_ROOM == 40
    fits = "/tmp/" + "r" * 35
    os.makedirs(fits, exist_ok=True)
    try:
        monkeypatch.setenv("XDG_RUNTIME_DIR", fits)  # 40 bytes: used
        assert relay.runtime_dir().startswith(fits + "/")
        monkeypatch.setenv("XDG_RUNTIME_DIR", fits + "s")  # 41: /tmp instead
        assert relay.runtime_dir() == f"/tmp/dsh-fs-{os.getuid()}/relay"
        monkeypatch.delenv("XDG_RUNTIME_DIR")
        assert relay.runtime_dir() == f"/tmp/dsh-fs-{os.getuid()}/relay"
    finally:
        shutil.rmtree(fits)
