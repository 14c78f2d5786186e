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
import subprocess
import tempfile
import threading
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
