"""The stdio server: one MCP client on stdin/stdout, one reader and one writer from the first byte.

:func:`serve_stdio` is the whole of ``dsh-fs mcp`` over stdio. It owns the process's standard
descriptors and its event loop:

* **The descriptors.** As the SDK's own transport does, while serving, fd 0 reads the null
  device and fd 1 goes to stderr; the wire is served from private duplicates, so stray output
  of a tool, of a child process or of a library (the SDK's included, whose import starts in a
  background thread after this) never corrupts it. Both are restored on exit. Meanwhile
  ``sys.stderr`` and ``sys.stdout`` never wait for room (``pipe.Unblocking``): a client that
  pipes stderr and never reads it loses log lines (their count is said once there is room), not
  the server (the SDK's warnings, our hints and roots lines, a tool's stray prints).
* **The first line** is read, and a plain ``initialize`` answered with the SDK's bytes, before
  the event loop starts (DEVIATIONS M2; ``stdio/pipe.py``): the answer comes about 160 ms after
  the spawn (bench/RESULTS.md, start-up rows).
* **Then every line, in order**, goes to the dispatcher (``stdio/dispatch.py``): served by us or
  by the SDK (attached when a line first needs it). Every request line is answered, even one the
  SDK's parser would drop (``server.parse_line``); a line longer than :data:`LINE_MAX` is
  answered ``-32600`` ``Request body too large`` (DEVIATIONS M4) with nothing of it kept beyond
  its first 64 KiB.
* **The end of stdin.** The SDK cancels every request in flight when its input ends, so a client
  that sends a request and closes stdin (``echo … | dsh-fs mcp``) would get no answer for a
  call that may have written a file. The end is held back until every request read is settled:
  answered, or known never to be (the client cancelled it), or stdout broke. A process whose
  every line was served on our route never loads the SDK.
* **stdout broken** (the client has gone): answers are discarded until stdin ends.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
import sys
from collections.abc import Awaitable, Callable
from typing import IO, Any, BinaryIO, Final

import anyio

from ... import __version__
from ...core.context import Context
from ...core.session import Session
from ...fs.provider_rules import WRITE_MAX_SIZE
from ..wire import server_instructions
from .dispatch import Counts, Dispatcher, SdkLoader, sdk_only_from_env
from .per_call_hint import FirstCallHint
from .pipe import LineReader, LineWriter, Oversized, Unblocking

__all__ = ("LINE_MAX", "serve_stdio")

logger = logging.getLogger(__name__)

LINE_MAX: Final = WRITE_MAX_SIZE + (1 << 20)
"""the longest line read, in bytes (DEVIATIONS M4): a ``write`` of the largest file a provider
takes (``WRITE_MAX_SIZE``, 256 MiB) with 1 MiB for the rest of its request; a ``write`` whose
JSON-escaped content is longer is refused as too large before it is parsed"""


def serve_stdio(
    ctx: Context,
    *,
    root: str,
    owner: Session | None = None,
    before: Callable[[], Awaitable[None]] | None = None,
    stdin: BinaryIO | None = None,
    stdout: BinaryIO | None = None,
    sdk_only: bool | None = None,
    close_context: bool = False,
    client_roots: bool = True,
) -> Counts:
    """Serve ``ctx``'s tools to one MCP client on stdin/stdout until it closes stdin; blocking
    (the server runs its own event loop, started after the first line is answered: module
    docstring).

    One process serves one client: every call's observation owner is ``owner`` (``dsh-fs mcp
    --session NAME``: the ``Session`` bound to the persistent store, DEVIATIONS M1), or else one
    ``Session(cwd=root)`` for the connection, with the per-call hint on stderr
    (``per_call_hint.FirstCallHint``).

    :param before: awaited on the loop before the first line is read (``dsh-fs mcp --s3``: the
        credentials are checked before any answer); the first line is then read on the loop
    :param stdin: read from this binary stream instead of fd 0
    :param stdout: write to this binary stream instead of fd 1
    :param sdk_only: every line to the SDK; ``None``: ``$DSH_FS_MCP_SDK_ONLY``
    :param close_context: close ``ctx`` on the way out, on the loop that served it (``dsh-fs mcp``:
        an S3 provider's HTTP client belongs to that loop)
    :param client_roots: a client's declared roots narrow its calls (M3); ``False``: every
        root is served whatever it declares (``dsh-fs mcp --ignore-client-roots``, D36)
    :return: what the dispatcher served on its own route
    :raises ModuleNotFoundError: the MCP SDK is not installed (the ``[mcp]`` extra)
    :raises Exception: what ``before`` raised
    """
    if importlib.util.find_spec("mcp") is None:
        raise ModuleNotFoundError("No module named 'mcp' (install dsh-fs with its [mcp] extra)", name="mcp")
    session = owner if owner is not None else Session(root)
    hint = FirstCallHint(ctx.tools) if owner is None else None
    restores: list[Callable[[], None]] = []
    fresh = stdin is None
    try:
        if stdin is None:
            stdin, restore = _claim(0, sys.stdin, "rb")
            restores.append(restore)
        if stdout is None:
            stdout, restore = _claim(1, sys.stdout, "wb")
            restores.append(restore)
            restores.append(_unblocking())
        loader = SdkLoader()
        with ctx.scoped("tools", hint) if hint is not None else contextlib.nullcontext():
            sdk_only = sdk_only_from_env() if sdk_only is None else sdk_only
            connection = _Connection(ctx, session, loader, stdin, stdout, fresh=fresh, sdk_only=sdk_only,
                                     close_context=close_context, client_roots=client_roots)
            if before is None and not sdk_only:
                connection.first_line()
            loader.start()  # after the first answer: the import thread would take the interpreter lock from it
            anyio.run(connection.run, before)
        return connection.dispatcher.counts
    finally:
        for restore in reversed(restores):
            restore()


class _Connection:
    """The reader, the writer and the dispatcher of one stdio connection."""

    def __init__(self, ctx: Context, owner: Session, loader: SdkLoader, stdin: IO[bytes], stdout: IO[bytes], *,
                 fresh: bool, sdk_only: bool, close_context: bool, client_roots: bool = True) -> None:
        self._ctx = ctx
        self._close_context = close_context
        self._reader = LineReader(stdin, fresh=fresh, limit=LINE_MAX)
        self._writer = LineWriter(stdout)
        self._broken = False
        self.dispatcher = Dispatcher(
            ctx, owner=owner, loader=loader, version=__version__, instructions=server_instructions(ctx),
            write=self._write, write_blocking=self._writer.write_blocking, has_line=self._reader.has_line,
            sdk_only=sdk_only, client_roots=client_roots,
        )

    def first_line(self) -> None:
        """Before the loop: the first line read (blocking), and answered if it is a plain
        ``initialize`` (else it is dispatched on the loop)."""
        line = self._reader.first_line()
        if line is not None and self.dispatcher.first_line(line):
            self._reader.skip(len(line))

    async def run(self, before: Callable[[], Awaitable[None]] | None) -> None:
        """Serve until stdin ends and every request read is settled (then close ``ctx`` if asked)."""
        try:
            if before is not None:
                await before()
            async with anyio.create_task_group() as tg:
                self.dispatcher.spawn = tg.start_soon
                try:
                    await self._read()
                    await self.dispatcher.end_of_input()
                finally:
                    self._reader.close()
                    await self.dispatcher.stop()
        finally:
            if self._close_context:
                with anyio.CancelScope(shield=True):
                    await self._ctx.aclose()

    async def _read(self) -> None:
        dispatcher, reader = self.dispatcher, self._reader
        try:
            while True:
                if not reader.has_line():
                    dispatcher.idle()
                line = await reader.readline()
                if not line:
                    return
                if isinstance(line, Oversized):
                    await dispatcher.oversized(line)
                else:
                    await dispatcher.dispatch(line)
        except Exception:  # stdin failed (a socket reset by its peer); a bug
            logger.debug("stopped reading stdin", exc_info=True)

    async def _write(self, data: bytes) -> bool:
        """Write one line; ``False`` once stdout is broken (the client has gone: answers are
        discarded until stdin ends)."""
        if self._broken:
            return False
        try:
            await self._writer.write(data)
        except OSError:
            logger.debug("stdout is broken", exc_info=True)
            self._broken = True
            self.dispatcher.give_up()
            return False
        return True


def _claim(fd: int, stream: Any, mode: str) -> tuple[BinaryIO, Callable[[], None]]:
    """The wire of standard descriptor ``fd``, served from a private duplicate, with ``fd``
    pointed at the null device (stdin) or at stderr (stdout). Returns the binary stream and a
    function that restores ``fd``. Best effort: when anything fails, the wire is served in place.
    """
    buffer = getattr(stream, "buffer", None)
    try:
        backed = buffer is not None and buffer.fileno() == fd
    except (AttributeError, OSError, ValueError):
        backed = False
    if not backed:
        in_place = buffer if buffer is not None else os.fdopen(fd, mode, closefd=False)
        return in_place, lambda: None
    try:
        import fcntl  # POSIX only

        private = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    except (ImportError, OSError):
        return buffer, lambda: None
    try:
        diversion = _diversion(fd)
        try:
            os.dup2(diversion, fd)
        finally:
            os.close(diversion)
    except OSError:
        with contextlib.suppress(OSError):
            os.dup2(private, fd)  # a failed dup2 may have closed fd
        os.close(private)
        return buffer, lambda: None

    def restore() -> None:
        with contextlib.suppress(OSError):
            os.dup2(private, fd)

    # never closed: a reading thread may still be blocked on it after exit
    return os.fdopen(private, mode, buffering=0, closefd=False), restore


def _unblocking() -> Callable[[], None]:
    """``sys.stderr`` and ``sys.stdout`` (fd 1 is stderr now) as writes that never wait for room;
    returns what puts them back."""
    saved = sys.stderr, sys.stdout
    sys.stderr, sys.stdout = Unblocking(2), Unblocking(1)

    def restore() -> None:
        for stream in (sys.stderr, sys.stdout):
            stream.flush()
        sys.stderr, sys.stdout = saved

    return restore


def _diversion(fd: int) -> int:
    if fd == 0:
        return os.open(os.devnull, os.O_RDONLY)
    try:
        return os.dup(2)
    except OSError:
        return os.open(os.devnull, os.O_WRONLY)
