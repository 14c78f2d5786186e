"""A command channel's local process (``fs_channel.channels.ProcessTransport``): bytes both
ways, why it ended (exit status or signal, and the end of its stderr, bounded), and its close
(stdin closed, waited for, killed when it does not end)."""

from __future__ import annotations

import asyncio
import os
import signal
from typing import Any

import pytest

from dsh_fs.fs_channel import channels
from dsh_fs.fs_channel.channels import CommandChannel, ProcessTransport

pytestmark = pytest.mark.anyio


async def _start(script: str) -> ProcessTransport:
    transport = await CommandChannel(["/bin/sh", "-c", script, "sh"]).start([])
    assert isinstance(transport, ProcessTransport)
    return transport


async def _all(transport: ProcessTransport) -> bytes:
    out = b""
    while chunk := await transport.receive():
        out += chunk
    return out


async def test_bytes_go_both_ways_and_the_end_says_why() -> None:
    transport = await _start("cat; echo 'it ends here' >&2; exit 3")
    await transport.send(b"hello")
    assert transport.exit_status is None
    transport.process.stdin.close()  # type: ignore[union-attr]
    assert await _all(transport) == b"hello"
    assert await transport.reason() == "exit status 3: it ends here"
    assert transport.exit_status == 3
    with pytest.raises(ConnectionResetError):
        await transport.send(b"more")
    await transport.aclose()
    await transport.aclose()


async def test_a_signal_and_a_silent_end() -> None:
    killed = await _start("kill -9 $$")
    assert await _all(killed) == b""
    assert await killed.reason() == "killed by SIGKILL"
    quiet = await _start("exit 0")
    await _all(quiet)
    assert await quiet.reason() == "exit status 0"


async def test_only_the_end_of_stderr_is_kept() -> None:
    transport = await _start(f"head -c {channels.STDERR_KEEP * 3} /dev/zero | tr '\\000' x >&2; echo LAST >&2")
    await _all(transport)
    why = await transport.reason()
    assert why.endswith("xLAST") and len(why) <= len("exit status 0: ") + channels.STDERR_KEEP


async def test_close_waits_then_kills(monkeypatch: pytest.MonkeyPatch) -> None:
    polite = await _start("cat >/dev/null; exit 0")
    await polite.aclose()  # stdin closed: it ends by itself
    assert polite.exit_status == 0
    monkeypatch.setattr(channels, "CLOSE_GRACE_S", 0.2)
    stubborn = await _start("trap '' TERM; exec sleep 30")
    await stubborn.aclose()
    assert stubborn.exit_status == -signal.SIGKILL


async def test_a_command_that_does_not_end_when_asked_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(channels, "REASON_WAIT_S", 0.1)
    running = await _start("exec sleep 30")
    assert await running.reason() == "it stopped answering"
    running.process.kill()
    await running.aclose()


async def test_a_far_side_that_does_not_read_holds_the_sender_back() -> None:
    """Writes wait for the pipe (backpressure): nothing is buffered here without bound."""
    transport = await _start("exec sleep 30")
    try:
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(transport.send(b"x" * (16 << 20)), 0.5)
        assert os.getsid(transport.process.pid) == transport.process.pid  # a session of its own
    finally:
        transport.process.kill()
        await transport.aclose()


async def test_the_channel_runs_the_prefix_and_the_command() -> None:
    transport = await CommandChannel(["/bin/echo", "-n"], env={"PATH": "/usr/bin:/bin"}).start(["a", "b c"])
    assert await _all(transport) == b"a b c"  # the vector as is: no shell split "b c"
    await transport.aclose()
