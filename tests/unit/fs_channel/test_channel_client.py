"""One helper connection (``fs_channel.client.Connection``) against a scripted far side: the
start-up exchange (the bundle sent when asked, the code hash remembered, each refusal's text),
requests answered out of order, streams with credit, abort signals carried over (a read ends at
once, a mutation waits its grace: DEVIATIONS C3), cancellation, and a channel that ends or
garbles (C2)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from typing import Any

import pytest

from dsh_fs.core.signal import AbortSignal
from dsh_fs.fs.errors import FsError
from dsh_fs.fs_channel import client, errors
from dsh_fs.fs_channel.bundle import Bundle
from dsh_fs.fs_channel.channels import Channel, Transport
from dsh_fs.fs_channel.client import Aborted, Connection
from dsh_fs.fs_channel.wire import FrameReader, encode_frame

pytestmark = pytest.mark.anyio

BUNDLE = Bundle(data=b"zip bytes", digest="ab" * 32)
SETTINGS = {"root": "/w", "roots": None, "cwd": "/w", "profile": "default", "options": {}}


class FakeTransport(Transport):
    """The far side is the test: what the near side sent is in ``frames``; ``push`` answers."""

    def __init__(self) -> None:
        self.reader = FrameReader()
        self.frames: list[tuple[dict[str, Any], bytes]] = []
        self.incoming: asyncio.Queue[bytes] = asyncio.Queue()
        self.status: int | None = None
        self.why = "exit status 1: it failed"
        self.busy_calls: list[bool] = []
        self.closed = False
        self.refuse = False
        self.arrived = asyncio.Event()

    async def send(self, data: bytes) -> None:
        if self.refuse:
            raise ConnectionResetError("gone")
        self.frames += self.reader.feed(data)
        self.arrived.set()

    async def receive(self) -> bytes:
        return await self.incoming.get()

    def push(self, message: dict[str, Any], body: bytes = b"") -> None:
        self.incoming.put_nowait(encode_frame(message, body))

    def end(self, status: int | None = 1) -> None:
        self.status = status
        self.incoming.put_nowait(b"")

    async def reason(self) -> str:
        return self.why

    @property
    def exit_status(self) -> int | None:
        return self.status

    async def aclose(self) -> None:
        self.closed = True

    def busy(self, unanswered: bool) -> None:
        self.busy_calls.append(unanswered)

    async def next_frame(self) -> tuple[dict[str, Any], bytes]:
        while not self.frames:
            self.arrived.clear()
            await self.arrived.wait()
        return self.frames.pop(0)


class FakeChannel(Channel):
    def __init__(self, transport: FakeTransport) -> None:
        super().__init__("fake://far")
        self.transport = transport
        self.commands: list[Sequence[str]] = []

    async def start(self, command: Sequence[str]) -> Transport:
        self.commands.append(command)
        return self.transport


async def _open(transport: FakeTransport, answers: list[dict[str, Any]], **kw: Any) -> Connection:
    for answer in answers:
        transport.push(answer)
    return await Connection.open(FakeChannel(transport), SETTINGS, BUNDLE, **kw)


@pytest.fixture(autouse=True)
def _no_hints(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    monkeypatch.setattr(client, "CODE_HINTS", {})
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "near-cache"))


async def test_start_sends_boot_and_open_and_takes_ready() -> None:
    transport = FakeTransport()
    channel = FakeChannel(transport)
    transport.push({"ready": {"root": "/w", "pid": 7}})
    connection = await Connection.open(channel, SETTINGS, BUNDLE, python="/opt/python3")
    assert channel.commands[0][:4] == ["/opt/python3", "-I", "-S", "-c"]
    assert [m for m, _ in transport.frames] == [{"boot": {"hash": BUNDLE.digest, "code": None}}, {"open": SETTINGS}]
    assert connection.ready == {"root": "/w", "pid": 7} and connection.alive
    assert transport.busy_calls == [True, False]
    assert connection.bytes_sent == len(encode_frame({"boot": {"hash": BUNDLE.digest, "code": None}})) + len(
        encode_frame({"open": SETTINGS}))
    assert connection.bytes_received == len(encode_frame({"ready": {"root": "/w", "pid": 7}}))
    assert connection.round_trips == 0
    await connection.aclose()
    assert transport.closed and not connection.alive


async def test_start_sends_the_bundle_when_asked_and_remembers_the_code_hash() -> None:
    transport = FakeTransport()
    connection = await _open(transport, [{"need": True}, {"code": {"magic": "m", "hash": "h"}}, {"ready": {}}])
    assert transport.frames[2] == ({}, BUNDLE.data)
    assert client.CODE_HINTS == {("fake://far", "python3", BUNDLE.digest): {"magic": "m", "hash": "h"}}
    await connection.aclose()
    again = FakeTransport()
    await _open(again, [{"ready": {}}])
    assert again.frames[0][0] == {"boot": {"hash": BUNDLE.digest, "code": {"magic": "m", "hash": "h"}}}
    client.CODE_HINTS.clear()  # another process: the hint comes from the file
    assert client.remembered(("fake://far", "python3", BUNDLE.digest)) == {"magic": "m", "hash": "h"}
    assert client.remembered(("fake://far", "python2", BUNDLE.digest)) is None


def test_the_hints_file_keeps_the_newest(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    assert client.hints_file() == str(tmp_path / "near-cache" / "dsh-fs" / "channel-code.json")
    client.remember(("first", "p", "d"), {"magic": "m", "hash": "f"})
    assert os.stat(os.path.dirname(client.hints_file())).st_mode & 0o777 == 0o700
    monkeypatch.setattr(client, "HINTS_KEPT", 3)
    for n in range(5):
        client.remember((f"id{n}", "p", "d"), {"magic": "m", "hash": str(n)})
    client.CODE_HINTS.clear()
    assert [client.remembered((f"id{n}", "p", "d")) for n in range(5)] == [
        None, None, {"magic": "m", "hash": "2"}, {"magic": "m", "hash": "3"}, {"magic": "m", "hash": "4"}]
    client.remember(("id2", "p", "d"), {"magic": "m", "hash": "2b"})  # the newest again: kept last
    client.remember(("id5", "p", "d"), {"magic": "m", "hash": "5"})
    client.CODE_HINTS.clear()
    assert client.remembered(("id3", "p", "d")) is None and client.remembered(("id2", "p", "d"))["hash"] == "2b"
    with open(client.hints_file(), "w", encoding="utf-8") as handle:
        handle.write('{"id9\\u0000p\\u0000d": {"magic": 1}}')
    assert client.remembered(("id9", "p", "d")) is None  # a malformed entry is no hint
    with open(client.hints_file(), "w", encoding="utf-8") as handle:
        handle.write("[]")
    client.remember(("idA", "p", "d"), {"magic": "m", "hash": "a"})
    client.CODE_HINTS.clear()
    assert client.remembered(("idA", "p", "d")) == {"magic": "m", "hash": "a"}
    monkeypatch.setenv("XDG_CACHE_HOME", "/proc/nowhere")
    client.remember(("idB", "p", "d"), {"magic": "m", "hash": "b"})  # cannot be written: kept here only
    assert client.remembered(("idB", "p", "d")) == {"magic": "m", "hash": "b"}


@pytest.mark.parametrize(("answer", "message"), [
    ({"fail": "LocalFileSystem: root /w is not a directory"},
     "the dsh-fs helper could not start over fake://far: LocalFileSystem: root /w is not a directory"),
    ({"old": "3.9.2"}, "python3 on fake://far is Python 3.9.2; the dsh-fs helper needs 3.11 or later: install Python "
                       "3.11 or later there, or name it with python="),
    ({"bad": "the bundle's SHA-256 is x"}, "the dsh-fs helper could not start over fake://far: the bundle's SHA-256 is x"),
    ({"what": 1}, "the dsh-fs helper could not start over fake://far: it answered outside the protocol"),
])
async def test_a_refused_start_says_why(answer: dict[str, Any], message: str) -> None:
    transport = FakeTransport()
    with pytest.raises(errors.ChannelError) as caught:
        await _open(transport, [answer])
    assert str(caught.value) == message and caught.value.before_sent
    assert transport.closed


@pytest.mark.parametrize(("status", "why", "python", "missing"), [
    (127, "sh: 1: python3: not found", "python3", True),
    (127, "exec: python3: executable file not in $PATH", "python3", True),
    (126, "python3: Permission denied", "python3", True),
    (127, "sh: docker: not found", "python3", False),
    (1, "python3: can't open file", "python3", False),
    (1, "bash: /opt/py: not found", "/opt/py", True),
    (128, "python3 was killed", "python3", False),
    (255, "ssh: Could not resolve hostname", "python3", False),
])
async def test_an_interpreter_not_found_is_told_apart(status: int, why: str, python: str, missing: bool) -> None:
    transport = FakeTransport()
    transport.why = f"exit status {status}: {why}"
    transport.end(status)
    with pytest.raises(errors.ChannelError) as caught:
        await Connection.open(FakeChannel(transport), SETTINGS, BUNDLE, python=python)
    assert str(caught.value).startswith(f"there is no {python} on fake://far" if missing else
                                        "the dsh-fs helper could not start over fake://far: exit status")
    assert transport.closed


async def test_a_start_that_ends_says_why() -> None:
    transport = FakeTransport()
    transport.why = "exit status 127: sh: 1: python3: not found"
    transport.end(127)
    with pytest.raises(errors.ChannelError, match="there is no python3 on fake://far"):
        await Connection.open(FakeChannel(transport), SETTINGS, BUNDLE)
    other = FakeTransport()
    other.why = "exit status 255: ssh: Could not resolve hostname"
    other.end(255)
    with pytest.raises(errors.ChannelError) as caught:
        await Connection.open(FakeChannel(other), SETTINGS, BUNDLE)
    assert str(caught.value) == \
        "the dsh-fs helper could not start over fake://far: exit status 255: ssh: Could not resolve hostname"
    shell = FakeTransport()
    shell.why = "exit status 1: bash: line 1: /opt/py: No such file or directory; not found"
    shell.end(1)
    with pytest.raises(errors.ChannelError, match="there is no /opt/py on"):
        await Connection.open(FakeChannel(shell), SETTINGS, BUNDLE, python="/opt/py")


async def test_a_start_that_garbles_or_says_too_much_is_refused() -> None:
    transport = FakeTransport()
    transport.incoming.put_nowait(b"\x00\x00\x00\x05\x00\x00\x00\x00[1,2]")
    with pytest.raises(errors.ChannelError, match="answered outside the protocol"):
        await Connection.open(FakeChannel(transport), SETTINGS, BUNDLE)
    two = FakeTransport()
    two.incoming.put_nowait(encode_frame({"ready": {}}) + encode_frame({"id": 1, "r": None}))
    with pytest.raises(errors.ChannelError, match="answered outside the protocol"):
        await Connection.open(FakeChannel(two), SETTINGS, BUNDLE)


async def test_the_code_hint_and_the_ready_answer_may_come_in_one_read() -> None:
    """The boot's ``code`` frame is followed by the helper's ``ready`` without a request between:
    a slow reader (an exec channel's polling, a busy machine) gets both at once."""
    transport = FakeTransport()
    transport.incoming.put_nowait(encode_frame({"code": {"magic": "m", "hash": "h"}}) + encode_frame({"ready": {"pid": 7}}))
    connection = await Connection.open(FakeChannel(transport), SETTINGS, BUNDLE)
    assert connection.ready == {"pid": 7}
    await connection.aclose()


async def test_a_start_without_an_answer_times_out() -> None:
    transport = FakeTransport()
    with pytest.raises(errors.ChannelError) as caught:
        await Connection.open(FakeChannel(transport), SETTINGS, BUNDLE, start_timeout=0.05)
    assert str(caught.value) == "the dsh-fs helper could not start over fake://far: no answer within 0.05 s"
    assert transport.closed


async def test_a_channel_program_that_cannot_start_here() -> None:
    class Missing(Channel):
        async def start(self, command: Sequence[str]) -> Transport:
            raise FileNotFoundError(2, "No such file or directory", command[0] if self.identity == "x://py" else "ssh")

    with pytest.raises(errors.ChannelError, match="there is no python3 on x://py"):
        await Connection.open(Missing("x://py"), SETTINGS, BUNDLE)
    with pytest.raises(errors.ChannelError) as caught:
        await Connection.open(Missing("x://ssh"), SETTINGS, BUNDLE)
    assert str(caught.value) == "the dsh-fs helper could not start over x://ssh: No such file or directory"


async def test_requests_are_answered_by_id_in_any_order() -> None:
    transport = FakeTransport()
    connection = await _open(transport, [{"ready": {}}])
    transport.frames.clear()
    first = asyncio.ensure_future(connection.call("stat", {"t": ["/a", "/a"]}))
    second = asyncio.ensure_future(connection.call("read_bytes", {"t": ["/b", "/b"]}))
    one, _ = await transport.next_frame()
    two, _ = await transport.next_frame()
    assert (one["op"], one["a"], two["op"]) == ("stat", {"t": ["/a", "/a"]}, "read_bytes")
    assert transport.busy_calls[-1] is True
    transport.push({"id": 999, "r": "nobody's"})
    transport.push({"id": two["id"], "r": None}, b"bytes")
    transport.push({"id": one["id"], "e": {"c": "FS_NOT_FOUND", "m": 'cannot stat "/a": not found'}})
    assert await second == (None, b"bytes")
    with pytest.raises(FsError, match='cannot stat "/a": not found'):
        await first
    assert connection.round_trips == 2 and transport.busy_calls == [True, False, True, False]
    assert not connection._pending and not connection._watched  # nothing kept for answered requests
    odd = asyncio.ensure_future(connection.call("stat", {}))
    request, _ = await transport.next_frame()
    transport.push({"id": request["id"]})
    with pytest.raises(Exception, match="neither a result nor an error"):
        await odd


async def test_an_aborted_signal_is_sent_along() -> None:
    transport = FakeTransport()
    connection = await _open(transport, [{"ready": {}}])
    transport.frames.clear()
    call = asyncio.ensure_future(connection.call("write_text", {}, signal=AbortSignal.aborted_signal(), mutation=True))
    request, _ = await transport.next_frame()
    assert request["aborted"] is True
    transport.push({"id": request["id"], "e": {"c": "FS_ABORTED", "m": "read aborted"}})
    with pytest.raises(FsError, match="read aborted"):
        await call
    plain = asyncio.ensure_future(connection.call("stat", {}, signal=AbortSignal()))
    request, _ = await transport.next_frame()
    assert "aborted" not in request
    transport.push({"id": request["id"], "r": 1})
    assert await plain == (1, b"")


async def test_a_read_ends_at_its_abort_and_the_far_side_is_told() -> None:
    transport = FakeTransport()
    connection = await _open(transport, [{"ready": {}}])
    transport.frames.clear()
    signal = AbortSignal()
    call = asyncio.ensure_future(connection.call("read_text", {}, signal=signal))
    request, _ = await transport.next_frame()
    signal.abort()
    with pytest.raises(Aborted):
        await call
    assert [await transport.next_frame(), await transport.next_frame()] == [
        ({"abort": request["id"]}, b""), ({"cancel": request["id"]}, b"")]


async def test_a_mutation_waits_its_grace_after_the_abort() -> None:
    transport = FakeTransport()
    connection = await _open(transport, [{"ready": {}}], abort_grace=0.1)
    transport.frames.clear()
    signal = AbortSignal()
    call = asyncio.ensure_future(connection.call("edit_text", {}, signal=signal, mutation=True))
    request, _ = await transport.next_frame()
    signal.abort()
    aborted_at = asyncio.get_running_loop().time()
    assert await transport.next_frame() == ({"abort": request["id"]}, b"")
    with pytest.raises(errors.ChannelError) as caught:
        await call
    # the grace runs from the abort (a lower bound: a busy machine only makes it longer)
    assert asyncio.get_running_loop().time() - aborted_at >= 0.1 - 0.005
    assert str(caught.value) == ("aborted, and fake://far did not answer within 0.1 s; the file is unchanged or "
                                 "completely written (read it to see which)")
    answered = asyncio.ensure_future(connection.call("edit_text", {}, signal=(late := AbortSignal()), mutation=True))
    request, _ = await transport.next_frame()
    late.abort()
    await transport.next_frame()  # the abort
    transport.push({"id": request["id"], "r": ["v", None, None, None]})  # done before it saw the abort
    assert await answered == (["v", None, None, None], b"")


async def test_a_cancelled_caller() -> None:
    transport = FakeTransport()
    connection = await _open(transport, [{"ready": {}}], abort_grace=5.0)
    transport.frames.clear()
    read = asyncio.ensure_future(connection.call("read_text", {}))
    request, _ = await transport.next_frame()
    read.cancel()
    with pytest.raises(asyncio.CancelledError):
        await read
    assert await transport.next_frame() == ({"cancel": request["id"]}, b"")
    write = asyncio.ensure_future(connection.call("write_text", {}, mutation=True))
    request, _ = await transport.next_frame()
    write.cancel()
    assert await transport.next_frame() == ({"abort": request["id"]}, b"")
    await asyncio.sleep(0.01)
    assert not write.done()  # it waits for the far side's word on the mutation
    transport.push({"id": request["id"], "r": ["create", "v", None, ""]})
    with pytest.raises(asyncio.CancelledError):
        await write


async def test_a_channel_that_ends_fails_what_is_unanswered_and_what_follows() -> None:
    transport = FakeTransport()
    connection = await _open(transport, [{"ready": {}}])
    transport.frames.clear()
    call = asyncio.ensure_future(connection.call("stat", {}))
    await transport.next_frame()  # sent: unanswered
    transport.why = "killed by SIGKILL"
    transport.end(None)
    with pytest.raises(errors.ChannelError) as caught:
        await call
    assert str(caught.value) == "the channel to fake://far closed before the answer (killed by SIGKILL)"
    assert not connection.alive
    with pytest.raises(errors.ChannelError, match="killed by SIGKILL"):
        await connection.call("stat", {})


async def test_a_send_into_a_dead_channel_says_why() -> None:
    transport = FakeTransport()
    connection = await _open(transport, [{"ready": {}}])
    transport.refuse = True
    transport.why = "exit status 3"
    transport.end(3)
    with pytest.raises(errors.ChannelError, match=r"closed before the answer \(exit status 3\)"):
        await connection.call("stat", {})


async def test_a_garbled_answer_ends_the_connection() -> None:
    transport = FakeTransport()
    connection = await _open(transport, [{"ready": {}}])
    transport.frames.clear()
    call = asyncio.ensure_future(connection.call("stat", {}))
    await transport.next_frame()
    transport.incoming.put_nowait(b"\x00\x00\x00\x02\x00\x00\x00\x00[]")
    with pytest.raises(errors.ChannelError, match="answered outside the protocol"):
        await call
    assert transport.closed and not connection.alive


async def test_a_stream_takes_chunks_with_credit_and_its_end() -> None:
    transport = FakeTransport()
    connection = await _open(transport, [{"ready": {}}])
    transport.frames.clear()
    got: list[Any] = []

    async def consume() -> None:
        async for item in connection.stream("walk", {"t": 1}, credit=4, end=True):
            got.append(item)

    task = asyncio.ensure_future(consume())
    request, _ = await transport.next_frame()
    assert request == {"id": request["id"], "op": "walk", "a": {"t": 1, "n": 4}}
    for n in range(4):
        transport.push({"id": request["id"], "c": n}, bytes([n]))
    assert await transport.next_frame() == ({"more": request["id"], "n": 2}, b"")
    assert await transport.next_frame() == ({"more": request["id"], "n": 2}, b"")
    transport.push({"id": request["id"], "r": "done"})
    await task
    assert got == [(0, b"\x00"), (1, b"\x01"), (2, b"\x02"), (3, b"\x03"), ({"end": "done"}, b"")]
    await asyncio.sleep(0.02)
    assert transport.frames == []  # two grants of two, no cancel after the end
    assert not connection._pending and transport.busy_calls[-2:] == [True, False]
    default = connection.stream("walk", {})
    step = asyncio.ensure_future(default.__anext__())
    request, _ = await transport.next_frame()
    assert request["a"] == {"n": 4}
    transport.push({"id": request["id"], "r": None})
    with pytest.raises(StopAsyncIteration):
        await step


async def test_a_stream_abandoned_or_failed() -> None:
    transport = FakeTransport()
    connection = await _open(transport, [{"ready": {}}])
    transport.frames.clear()
    chunks = connection.stream("stream_bytes", {})
    first = asyncio.ensure_future(chunks.__anext__())
    request, _ = await transport.next_frame()
    transport.push({"id": request["id"], "c": None}, b"a")
    assert await first == (None, b"a")
    await chunks.aclose()  # given up before its end: the far side is told
    assert await transport.next_frame() == ({"cancel": request["id"]}, b"")
    failing = connection.stream("stream_bytes", {}, signal=(signal := AbortSignal()))
    step = asyncio.ensure_future(failing.__anext__())
    request, _ = await transport.next_frame()
    transport.push({"id": request["id"], "e": {"c": "FS_NOT_FOUND", "m": "gone"}})
    with pytest.raises(FsError, match="gone"):
        await step
    await asyncio.sleep(0.02)
    assert transport.frames == []  # ended by its error: nothing to cancel
    aborted = connection.stream("stream_bytes", {}, signal=signal)
    step = asyncio.ensure_future(aborted.__anext__())
    request, _ = await transport.next_frame()
    signal.abort()
    with pytest.raises(Aborted):
        await step
    assert [await transport.next_frame(), await transport.next_frame()] == [
        ({"abort": request["id"]}, b""), ({"cancel": request["id"]}, b"")]
    ended = connection.stream("stream_text", {})
    done = asyncio.ensure_future(ended.__anext__())
    request, _ = await transport.next_frame()
    transport.push({"id": request["id"], "r": None})
    with pytest.raises(StopAsyncIteration):
        await done
    assert client.settings_for("/r", None, "/r", "default", {}) == {
        "root": "/r", "roots": None, "cwd": "/r", "profile": "default", "options": {}}
    assert client.settings_for(None, ("/a", "/b"), "/a", "reference", {"x": 1})["roots"] == ["/a", "/b"]


async def test_only_the_aborted_request_is_aborted() -> None:
    transport = FakeTransport()
    connection = await _open(transport, [{"ready": {}}])
    transport.frames.clear()
    calm, hasty = AbortSignal(), AbortSignal()
    first = asyncio.ensure_future(connection.call("read_text", {}, signal=calm))
    one, _ = await transport.next_frame()
    second = asyncio.ensure_future(connection.call("read_text", {}, signal=hasty))
    two, _ = await transport.next_frame()
    hasty.abort()
    with pytest.raises(Aborted):
        await second
    assert [await transport.next_frame(), await transport.next_frame()] == [
        ({"abort": two["id"]}, b""), ({"cancel": two["id"]}, b"")]
    await asyncio.sleep(0.05)
    assert not transport.frames and not first.done()  # the other one was left alone
    transport.push({"id": one["id"], "r": "text"})
    assert await first == ("text", b"")


async def test_a_stream_under_way_when_the_channel_ends() -> None:
    transport = FakeTransport()
    connection = await _open(transport, [{"ready": {}}])
    transport.frames.clear()
    chunks = connection.stream("walk", {})
    step = asyncio.ensure_future(chunks.__anext__())
    await transport.next_frame()
    transport.why = "exit status 1"
    transport.end(1)
    with pytest.raises(errors.ChannelError, match=r"closed before the answer \(exit status 1\)"):
        await step


async def test_closing_fails_what_is_unanswered() -> None:
    transport = FakeTransport()
    connection = await _open(transport, [{"ready": {}}])
    transport.frames.clear()
    call = asyncio.ensure_future(connection.call("stat", {}))
    await transport.next_frame()
    await connection.aclose()
    with pytest.raises(errors.ChannelError) as caught:
        await call
    assert str(caught.value) == "the channel to fake://far closed before the answer (the connection was closed)"


async def test_a_fault_of_this_side_while_reading_ends_the_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    transport = FakeTransport()
    connection = await _open(transport, [{"ready": {}}])

    def broken(message: dict[str, Any], body: bytes) -> None:
        raise KeyError("boom")

    monkeypatch.setattr(connection, "_deliver", broken)
    transport.frames.clear()
    call = asyncio.ensure_future(connection.call("stat", {}))
    request, _ = await transport.next_frame()
    transport.push({"id": request["id"], "r": None})
    with pytest.raises(errors.ChannelError) as caught:
        await call
    assert str(caught.value) == "the dsh-fs helper on fake://far answered outside the protocol (KeyError: 'boom')"
    assert transport.closed


async def test_a_malformed_error_answer_is_a_protocol_error() -> None:
    from dsh_fs.fs_channel.wire import ProtocolError

    transport = FakeTransport()
    connection = await _open(transport, [{"ready": {}}])
    transport.frames.clear()
    call = asyncio.ensure_future(connection.call("stat", {}))
    request, _ = await transport.next_frame()
    transport.push({"id": request["id"], "e": {"c": "FS_WHAT", "m": "x"}})
    with pytest.raises(ProtocolError, match="not an FsError code"):
        await call
    assert connection.alive
