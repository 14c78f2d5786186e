"""Command channels: how the near side starts the helper's command on the far side and talks
to it (DEVIATIONS C1).

A ``Channel`` starts one far-side command (an argument vector: the interpreter and the
bootstrap program, ``bundle.boot_program``) and gives a ``Transport``: bytes to its stdin,
bytes from its stdout, and why it ended. One ``Channel`` serves one provider and may start
its command again after the last one died.

* ``CommandChannel(prefix)`` — a local process: ``prefix`` + the far command. The container
  runtimes (``docker exec -i``, ``podman exec -i``, ``kubectl exec -i … --``) and the
  subprocess channel of the tests are this with their own prefix (no shell anywhere: the
  runtime passes the vector to the container as is).
* ``SshChannel`` — ``ssh`` (the user's own configuration; ``$DSH_FS_SSH_COMMAND`` replaces
  the program and its options, as ``GIT_SSH_COMMAND`` does for git). ssh hands its command to
  the remote user's shell as one string, so the far command is sent quoted
  (``shlex.join``): the shell only splits it back into the same vector, and that vector is a
  constant of dsh-fs (every value of the caller travels on stdin).
* ``ExecChannel`` (``execs``) — any async "run this command with this stdin, give me its
  stdout" callable.

``channel_for_url`` maps ``docker://``, ``podman://``, ``kubectl://`` and ``ssh://`` URLs to
their channel and far-side root.
"""

from __future__ import annotations

import abc
import asyncio
import os
import shlex
import signal as signals
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

__all__ = (
    "CHANNEL_SCHEMES",
    "CLOSE_GRACE_S",
    "Channel",
    "CommandChannel",
    "ProcessTransport",
    "REASON_WAIT_S",
    "SSH_COMMAND_ENV",
    "STDERR_KEEP",
    "SshChannel",
    "Transport",
    "channel_for_url",
    "container_channel",
    "kubectl_channel",
)

SSH_COMMAND_ENV = "DSH_FS_SSH_COMMAND"
"""the environment variable that replaces ``ssh`` (split as a shell splits words, without
expansions), as ``GIT_SSH_COMMAND`` does for git"""

STDERR_KEEP = 4096
"""bytes of the far command's stderr kept to say why it ended"""

CLOSE_GRACE_S = 10.0
"""how long a closed command may take to end by itself (the helper finishes a mutation under
way) before it is killed, seconds"""

REASON_WAIT_S = 2.0
"""how long an ended channel's command is awaited to say why it ended, seconds"""

_READ = 1 << 20


class Transport(abc.ABC):
    """One running far-side command: its stdin, its stdout, and why it ended."""

    @abc.abstractmethod
    async def send(self, data: bytes) -> None:
        """Write ``data`` to the command's stdin.

        :raises ConnectionError: the command is gone (its stdin is closed)
        """

    @abc.abstractmethod
    async def receive(self) -> bytes:
        """The next bytes of the command's stdout; ``b""`` once it ended."""

    @abc.abstractmethod
    async def aclose(self) -> None:
        """End the command: close its stdin (the helper stops when stdin ends, after a mutation
        under way), wait for it a little, then kill it. Idempotent."""

    @abc.abstractmethod
    async def reason(self) -> str:
        """Why the command ended, for a message: its exit status and the end of its stderr."""

    @property
    @abc.abstractmethod
    def exit_status(self) -> int | None:
        """The exit status once the command ended (``None`` before, or when unknown)."""

    def busy(self, unanswered: bool) -> None:
        """Told whether answers are awaited (a transport that must ask for output, as an exec
        channel's, asks only then). Pipes deliver by themselves: nothing to do."""


class Channel(abc.ABC):
    """A way to run one command on the far side (see the module docstring).

    :param identity: what names this far side: the prefix of every target key of the provider
        (so two far sides never share a key, also in a shared session store) and the channel's
        name in messages, e.g. ``docker://box``
    """

    def __init__(self, identity: str) -> None:
        self.identity = identity

    @abc.abstractmethod
    async def start(self, command: Sequence[str]) -> Transport:
        """Start ``command`` (an argument vector) on the far side.

        :raises OSError: the channel's own program cannot be started here (not installed, …)
        """

    def describe(self) -> str:
        """How the channel runs commands, for messages (the identity by default)."""
        return self.identity


class ProcessTransport(Transport):
    """A local process's pipes (``CommandChannel``, ``SshChannel``).

    :param process: a process started with stdin, stdout and stderr pipes
    """

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self._stderr = bytearray()
        self._stderr_done = asyncio.ensure_future(self._keep_stderr())
        self._closed = False

    async def _keep_stderr(self) -> None:
        stream = self.process.stderr
        if stream is None:
            return
        while True:
            data = await stream.read(_READ)
            if not data:
                return
            self._stderr += data
            del self._stderr[:-STDERR_KEEP]

    async def send(self, data: bytes) -> None:
        stdin = self.process.stdin
        if stdin is None or stdin.is_closing():
            raise ConnectionResetError("the channel's stdin is closed")
        stdin.write(data)
        await stdin.drain()

    async def receive(self) -> bytes:
        stdout = self.process.stdout
        if stdout is None:
            return b""
        try:
            return await stdout.read(_READ)
        except (ConnectionError, OSError):
            return b""

    @property
    def exit_status(self) -> int | None:
        return self.process.returncode

    def stderr_text(self) -> str:
        """The kept end of stderr, decoded (U+FFFD for bad bytes), trimmed."""
        return bytes(self._stderr).decode("utf-8", "replace").strip()

    async def reason(self) -> str:
        try:
            await asyncio.wait_for(asyncio.shield(self.process.wait()), REASON_WAIT_S)
        except asyncio.TimeoutError:
            return "it stopped answering"
        try:
            await asyncio.wait_for(asyncio.shield(self._stderr_done), 1.0)
        except asyncio.TimeoutError:
            pass
        status = self.process.returncode
        said = self.stderr_text()
        where = f"exit status {status}" if status is not None and status >= 0 else \
            f"killed by {signals.Signals(-status).name}" if status is not None else "ended"
        return f"{where}: {said}" if said else where

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        process = self.process
        if process.stdin is not None and not process.stdin.is_closing():
            process.stdin.close()
        try:
            await asyncio.wait_for(asyncio.shield(process.wait()), CLOSE_GRACE_S)
        except asyncio.TimeoutError:
            if process.returncode is None:
                process.kill()
            await process.wait()
        self._stderr_done.cancel()


class CommandChannel(Channel):
    """The far command runs as ``prefix`` + the command, a local process (no shell).

    :param prefix: the program and arguments that reach the far side (``["docker", "exec",
        "-i", "box"]``); empty: the command runs here (the subprocess channel)
    :param identity: see ``Channel`` (default: ``command://`` and the prefix, quoted)
    :param env: the environment of the local process (default: this process's)
    """

    def __init__(self, prefix: Sequence[str], *, identity: str | None = None,
                 env: dict[str, str] | None = None) -> None:
        super().__init__(identity or "command://" + (shlex.join(prefix) if prefix else "local"))
        self.prefix = list(prefix)
        self.env = env

    def argv(self, command: Sequence[str]) -> list[str]:
        """The local process's argument vector for the far ``command``."""
        return [*self.prefix, *command]

    async def start(self, command: Sequence[str]) -> Transport:
        argv = self.argv(command)
        process = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            env=self.env, start_new_session=True, limit=_READ,
        )
        return ProcessTransport(process)


class SshChannel(CommandChannel):
    """The far command runs on ``destination`` over ``ssh`` (see the module docstring).

    :param destination: ``[user@]host``
    :param port: the SSH port (``-p``), when not the configured one
    :param ssh_command: the ssh program and options (default: ``$DSH_FS_SSH_COMMAND``, else
        ``ssh``); a string is split as a shell splits words
    :param env: the environment of the ``ssh`` process
    """

    def __init__(self, destination: str, *, port: int | None = None,
                 ssh_command: str | Sequence[str] | None = None, env: dict[str, str] | None = None) -> None:
        given = ssh_command if ssh_command is not None else (env or os.environ).get(SSH_COMMAND_ENV) or "ssh"
        program = shlex.split(given) if isinstance(given, str) else list(given)
        if not program:
            raise ValueError(f"SshChannel: {SSH_COMMAND_ENV} names no program")
        port_args = ["-p", str(port)] if port is not None else []
        user, at, host = destination.rpartition("@")
        shown = f"ssh://{user}{at}{f'[{host}]' if ':' in host else host}" + (f":{port}" if port is not None else "")
        super().__init__([*program, *port_args, destination, "--"], identity=shown, env=env)

    def argv(self, command: Sequence[str]) -> list[str]:
        """ssh joins its command into one string for the remote shell: send it quoted."""
        return [*self.prefix, shlex.join(command)]


def container_channel(runtime: str, container: str, *, user: str | None = None,
                      exec_args: Sequence[str] = (), program: str | None = None) -> CommandChannel:
    """``<runtime> exec -i [--user U] [exec_args…] CONTAINER <command>`` (docker, podman).

    :param runtime: ``docker`` or ``podman`` (the URL scheme)
    :param program: the runtime's program (default: ``runtime``; e.g. ``podman`` for
        ``docker://`` on a machine whose docker is podman)
    """
    prefix = [program or runtime, "exec", "-i", *(["--user", user] if user else []), *exec_args, container]
    return CommandChannel(prefix, identity=f"{runtime}://{container}")


def kubectl_channel(pod: str, *, namespace: str | None = None, container: str | None = None,
                    context: str | None = None, program: str = "kubectl") -> CommandChannel:
    """``kubectl exec -i [--context C] [-n NS] [-c CONTAINER] POD -- <command>``."""
    prefix = [program, "exec", "-i", *(["--context", context] if context else []),
              *(["-n", namespace] if namespace else []), *(["-c", container] if container else []), pod, "--"]
    shown = f"kubectl://{namespace + '/' if namespace else ''}{pod}"
    return CommandChannel(prefix, identity=shown)


@dataclass(frozen=True, slots=True)
class ChannelUrl:
    """What a channel URL names."""

    channel: Channel
    root: str
    """the far-side directory (absolute, or ``~/…``: below the far user's home)"""


CHANNEL_SCHEMES = ("docker", "podman", "kubectl", "ssh")
"""the URL schemes of the command channels (``open_provider`` has one entry each)"""


def channel_for_url(scheme: str, location: str, **options: object) -> ChannelUrl:
    """The channel and far-side root of ``<scheme>://<location>``.

    ``docker://CONTAINER/path``, ``podman://CONTAINER/path``, ``kubectl://POD/path``,
    ``ssh://[user@]host[:port]/path`` (``/~/path``: below the far user's home). A missing
    path is ``/``.

    :param options: ``user``, ``exec_args``, ``program`` (docker/podman); ``namespace``,
        ``container``, ``context``, ``program`` (kubectl); ``ssh_command``, ``env`` (ssh)
    :raises ValueError: an unknown scheme, no container/pod/host, an unknown option
    """
    if scheme not in CHANNEL_SCHEMES:
        raise ValueError(f"channel_for_url: {scheme!r} is not one of {', '.join(CHANNEL_SCHEMES)}")
    head, slash, path = location.partition("/")
    root = "/" + unquote(path) if slash else "/"
    if root.startswith("/~"):
        root = root[1:]
    if scheme == "ssh":
        parts = urlsplit("ssh://" + head)
        host = parts.hostname
        if not host:
            raise ValueError(f'open_provider: "ssh://{location}" names no host')
        destination = (unquote(parts.username) + "@" if parts.username else "") + host
        channel: Channel = SshChannel(destination, port=parts.port, **options)  # type: ignore[arg-type]
        return ChannelUrl(channel, root)
    name = unquote(head)
    if not name:
        raise ValueError(f'open_provider: "{scheme}://{location}" names no {"pod" if scheme == "kubectl" else "container"}')
    if scheme == "kubectl":
        return ChannelUrl(kubectl_channel(name, **options), root)  # type: ignore[arg-type]
    return ChannelUrl(container_channel(scheme, name, **options), root)  # type: ignore[arg-type]
