"""Exec channels: a far side reached by an async "run this command with this stdin, give me its
stdout" callable — a sandbox SDK's ``commands.run``, deepagents' ``execute`` (DEVIATIONS C6;
docs/CHANNELS.md).

Such a channel has no long-lived pipes, so the helper lives in a *hub* on the far side
(``relay``): the first exec starts it (``{"start": argv}``), and every later exec runs the
relay (``python3 -I -c <relay>``, a constant command) with one request on stdin, which passes
bytes for the helper's stdin to the hub and brings back what the helper wrote to stdout.
``ExecTransport`` turns those execs into the byte stream a ``Transport`` is: a sender exec for
each batch of bytes to send (waiting a little for the answer, so a quick request costs one
exec), and, while requests are unanswered, one long-polling exec for answers that take longer.
Offsets make every exec repeatable: one that failed is sent again (``retries`` times) without
writing anything twice.

``ExecChannel(run, identity=…)`` wraps the callable; ``shell_exec(execute)`` adapts a
shell-command runner that returns text (deepagents' ``SandboxBackendProtocol.aexecute``): the
command is the constant relay vector quoted with ``shlex.join``, its stdin travels base64 in a
quoted here-document (no expansion), and its answer comes back as one base64 line.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import secrets
import shlex
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from .channels import Channel, Transport
from .wire import HEADER, ProtocolError, decode_json, encode_frame

__all__ = ("ExecChannel", "ExecTransport", "RunCommand", "relay_program", "shell_exec")

RunCommand = Callable[[Sequence[str], bytes], Awaitable[bytes]]
"""``await run(argv, stdin) -> stdout``: run ``argv`` on the far side with ``stdin``, return its stdout"""

SEND_WAIT_MS = 200
"""how long a sender exec waits on the far side for the answer to what it sent (milliseconds)"""

POLL_WAIT_MS = 2000
"""how long a polling exec waits on the far side for answers (milliseconds)"""

_SETTLE_S = 0.005
"""how long the poller lets the event loop settle before it decides that answers are still awaited"""


def relay_program() -> str:
    """The relay's text (``relay.py``), as sent to ``python3 -I -c``."""
    import os

    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "relay.py"), encoding="utf-8") as handle:
        return handle.read()


class ExecTransport(Transport):
    """The helper's stdin and stdout, carried by execs of the relay (see the module docstring).

    :param run: the channel's callable
    :param relay: the relay's command (interpreter, ``-I``, ``-c``, its text, maybe ``--base64``)
    :param max_reply: the most helper output one exec brings back (bytes)
    :param max_send: the most helper input one exec carries (bytes; ``None``: all there is)
    :param retries: times a failed exec is tried again before the channel is taken for dead
    """

    def __init__(self, run: RunCommand, relay: list[str], *, max_reply: int, max_send: int | None = None,
                 retries: int = 2) -> None:
        self.run = run
        self.relay = relay
        self.max_reply = max_reply
        self.max_send = max_send
        self.retries = retries
        self.session = secrets.token_hex(16)
        self._outgoing = bytearray()
        self._sent = 0  # helper stdin bytes the hub counted
        self._received = 0  # helper stdout bytes delivered to receive()
        self._incoming: asyncio.Queue[bytes] = asyncio.Queue()
        self._wake_sender = asyncio.Event()
        self._busy = asyncio.Event()
        self._idle_sender = asyncio.Event()
        self._idle_sender.set()
        self._closing = False
        self._ended: str | None = None
        self._status: int | None = None
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self, command: Sequence[str]) -> None:
        """Start the hub and the helper's ``command`` on the far side."""
        await self._exec({"start": list(command), "wait": 0})
        self._tasks = [asyncio.ensure_future(self._send_loop()), asyncio.ensure_future(self._poll_loop())]

    async def _exec(self, extra: dict[str, Any], body: bytes = b"") -> None:
        """One relay exec from the current offsets; what it brings back is delivered."""
        message = {"session": self.session, "in_at": self._sent, "ack": self._received, "max": self.max_reply,
                   **extra}
        failure: BaseException | None = None
        for _ in range(self.retries + 1):
            try:
                answer = await self.run(self.relay, encode_frame(message, body))
                self._take(answer)
                return
            except Exception as exc:  # the callable's own failure (a sandbox API error, …): tried again
                failure = exc
            message["ack"] = self._received
        self._end(f"the exec channel failed: {failure}")

    def _take(self, answer: bytes) -> None:
        if len(answer) < HEADER.size:
            raise ProtocolError("the relay's answer is not a frame")
        jlen, blen = HEADER.unpack_from(answer)
        if len(answer) != HEADER.size + jlen + blen:
            raise ProtocolError("the relay's answer is not one frame")
        message = decode_json(answer[HEADER.size:HEADER.size + jlen])
        data = answer[HEADER.size + jlen:]
        if message.get("gone"):
            self._end(f"the helper's hub is gone ({message.get('why')})")
            return
        out_at, counted = message.get("out_at"), message.get("in")
        if not isinstance(out_at, int) or not isinstance(counted, int):
            raise ProtocolError("the relay's answer has no offsets")
        self._sent = max(self._sent, counted)
        skip = self._received - out_at
        if skip < 0:
            raise ProtocolError("the relay skipped helper output")
        fresh = data[skip:]
        if fresh:
            self._received += len(fresh)
            self._incoming.put_nowait(fresh)
        if message.get("ended") is not None and out_at + len(data) >= self._received and self._ended is None:
            self._status = message["ended"] if isinstance(message["ended"], int) else None
            self._end(f"exit status {message['ended']}: {str(message.get('why') or '').strip()}".rstrip(": "))

    def _end(self, why: str) -> None:
        if self._ended is None:
            self._ended = why
            self._incoming.put_nowait(b"")
            self._wake_sender.set()
            self._busy.set()

    async def _send_loop(self) -> None:
        while self._ended is None:
            await self._wake_sender.wait()
            self._wake_sender.clear()
            self._idle_sender.clear()
            try:
                while self._outgoing and self._ended is None:
                    body = bytes(self._outgoing[:self.max_send] if self.max_send else self._outgoing)
                    start = self._sent
                    await self._exec({"wait": SEND_WAIT_MS}, body)
                    del self._outgoing[:max(0, self._sent - start)]
                    if self._sent == start and self._ended is None:
                        self._end("the helper's hub took none of the bytes sent")
                if self._closing and self._ended is None:
                    await self._exec({"close": True, "wait": POLL_WAIT_MS})
            finally:
                self._idle_sender.set()

    async def _poll_loop(self) -> None:
        """While answers are awaited and no sender exec is under way (which brings back what
        comes within ``SEND_WAIT_MS``), one long-polling exec at a time."""
        while self._ended is None:
            await self._busy.wait()
            await self._idle_sender.wait()
            seen = self._received
            # let the sender start, and what the last exec brought reach its callers (who may
            # then need nothing more): a poll is for answers still awaited
            await asyncio.sleep(_SETTLE_S)
            if self._ended is None and self._busy.is_set() and not self._outgoing and self._idle_sender.is_set() \
                    and self._received == seen:
                await self._exec({"wait": POLL_WAIT_MS})

    def busy(self, unanswered: bool) -> None:
        """The connection has requests waiting for answers (poll) or none (stop polling)."""
        if unanswered:
            self._busy.set()
        else:
            self._busy.clear()

    async def send(self, data: bytes) -> None:
        if self._ended is not None:
            raise ConnectionResetError(self._ended)
        self._outgoing += data
        self._wake_sender.set()

    async def receive(self) -> bytes:
        return await self._incoming.get()

    @property
    def exit_status(self) -> int | None:
        return self._status

    async def reason(self) -> str:
        return self._ended or "it ended"

    async def aclose(self) -> None:
        if self._closing:
            return
        self._closing = True
        self._wake_sender.set()
        if self._tasks:
            try:
                await asyncio.wait_for(asyncio.shield(self._tasks[0]), 10.0)
            except (asyncio.TimeoutError, Exception):
                pass
        self._end("the channel was closed")
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


class ExecChannel(Channel):
    """A far side reached by ``run`` (see the module docstring).

    :param run: ``await run(argv, stdin) -> stdout`` on the far side (calls may overlap: at
        most two at once)
    :param identity: the far side's name (key prefix and messages), e.g. ``e2b://sandbox-id``
    :param text: the callable carries text only: requests and answers travel base64
        (``shell_exec`` sets it)
    :param max_reply: the most helper output one exec brings back (bytes); keep it under the
        channel's own output limit
    :param max_send: the most helper input one exec carries (bytes); keep it under the
        channel's own command or input limit (``None``: no limit)
    """

    def __init__(self, run: RunCommand, *, identity: str, text: bool = False, max_reply: int = 1 << 20,
                 max_send: int | None = None) -> None:
        super().__init__(identity)
        self.run = run
        self.text = text
        self.max_reply = max_reply
        self.max_send = max_send

    async def start(self, command: Sequence[str]) -> Transport:
        python = command[0] if command else "python3"
        relay = [python, "-I", "-S", "-c", relay_program(), *(["--base64"] if self.text else [])]
        transport = ExecTransport(self.run, relay, max_reply=self.max_reply, max_send=self.max_send)
        await transport.start(command)
        return transport


def shell_exec(execute: Callable[[str], Awaitable[Any]]) -> RunCommand:
    """A ``RunCommand`` over a shell-command runner that returns text, as deepagents'
    ``SandboxBackendProtocol.aexecute`` (its ``ExecuteResponse.output``: stdout and stderr
    together). Use with ``ExecChannel(…, text=True)``.

    The command is ``shlex.join(argv)`` — the relay's constant vector, each word quoted — fed a
    quoted here-document of base64 text (``<<'DSHFS_END'``: the shell expands nothing in it, and
    the base64 alphabet holds no quote, no ``$`` and no line ``DSHFS_END``); the answer is the
    output line starting ``DSHFS:`` (other lines, the shell's or stderr's, are ignored).

    :param execute: ``await execute(command) -> response`` with the output as ``response.output``
        (or the response itself, a ``str``)
    """

    async def run(argv: Sequence[str], stdin: bytes) -> bytes:
        payload = base64.encodebytes(stdin).decode("ascii")
        command = f"{shlex.join(argv)} <<'DSHFS_END'\n{payload}DSHFS_END"
        response = await execute(command)
        output = response if isinstance(response, str) else getattr(response, "output", "")
        for line in str(output).splitlines():
            if line.startswith("DSHFS:"):
                try:
                    return base64.b64decode(line[len("DSHFS:"):].strip(), validate=True)
                except (binascii.Error, ValueError):
                    break
        raise ProtocolError(f"the command gave no answer line: {str(output)[-300:]!r}")

    return run
