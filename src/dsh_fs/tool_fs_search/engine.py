"""Running ripgrep: where the program is, and one run with streamed output (REFERENCE-SPEC
§6.3 shared execution).

* **Where.** ``find_ripgrep``: the ``rg`` of the ``ripgrep`` wheel (a dependency of dsh-fs
  where a wheel exists), else ``rg`` on ``PATH``; ``None`` when there is neither.
* **How.** ``run_ripgrep`` starts the program with a fixed ``argv`` (no shell), stdin from
  ``/dev/null``, in a session of its own (``start_new_session``), and hands stdout to the
  caller line by line as it arrives (or, with ``on_lines``, as the list of the complete lines
  of each pipe read: one call per read instead of one per line, for callers that work on
  batches): memory stays bounded by one read and the caller's own caps. stderr keeps its last ``STDERR_KEEP`` bytes (the reference executor's 64 000). Once
  more than ``raw_cap`` bytes came out, the run stops (``Run.stopped``): ripgrep is killed,
  or (``drain_past_cap``) the rest of its output is read and dropped until it exits, so that
  its exit status is known (``Run.drained``; §6.3 checks the exit status first).
* **Ending.** Whatever ends the run early — the caller's stop, a consumer error, a
  cancellation of the calling task (a time budget, an abort watcher, a client going away) —
  the whole process group gets ``SIGKILL`` and is reaped before ``run_ripgrep`` returns or
  raises, shielded from cancellation; no ripgrep outlives its call.
"""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import signal as signals
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import anyio
import anyio.abc

__all__ = ("INSTALL_HINT", "Run", "STDERR_KEEP", "find_ripgrep", "run_ripgrep")

STDERR_KEEP = 64_000
"""bytes of stderr kept (the tail)"""

INSTALL_HINT = "install the ripgrep wheel (pip install 'ripgrep==14.1.0') or put rg on PATH"
"""what to do when ``find_ripgrep`` finds nothing"""

_READ = 1 << 16


@lru_cache(maxsize=1)
def _wheel_ripgrep() -> str | None:
    """The ``rg`` executable the ``ripgrep`` distribution installed, if any."""
    try:
        dist = importlib.metadata.distribution("ripgrep")
    except importlib.metadata.PackageNotFoundError:
        return None
    for file in dist.files or ():
        if file.name in ("rg", "rg.exe"):
            path = os.path.realpath(str(dist.locate_file(file)))
            if os.path.isfile(path) and os.access(path, os.X_OK):
                return path
    return None


def find_ripgrep() -> str | None:
    """The ripgrep program to run: the wheel's, else ``rg`` on ``PATH``, else ``None``."""
    return _wheel_ripgrep() or shutil.which("rg")


@dataclass(slots=True)
class Run:
    """How one ripgrep run ended."""

    exit_code: int | None = None
    """the exit status; ``None`` when killed by a signal"""
    signal_name: str | None = None
    """``SIGKILL`` etc. when a signal ended it (ours, after ``stopped``, included)"""
    stderr: str = ""
    """the kept stderr, decoded (U+FFFD for bad bytes)"""
    stderr_truncated: bool = False
    """``True`` when the head of stderr was dropped"""
    raw_bytes: int = 0
    """stdout bytes read"""
    stopped: bool = False
    """``True`` when the run was stopped after ``raw_cap`` bytes (its output is incomplete)"""
    drained: bool = False
    """``True`` when, past ``raw_cap``, the rest of the output was read and dropped so that
    ripgrep could exit by itself (``exit_code`` is then its own)"""


def _kill(process: anyio.abc.Process) -> None:
    if process.returncode is not None:
        return
    try:
        os.killpg(process.pid, signals.SIGKILL)  # the session leader's pid is its group id
    except (ProcessLookupError, PermissionError):
        try:
            process.kill()
        except ProcessLookupError:
            pass


async def run_ripgrep(
    program: str,
    argv: list[str],
    *,
    cwd: str,
    on_line: Callable[[bytes], None] | None = None,
    raw_cap: int,
    on_lines: Callable[[list[bytes]], None] | None = None,
    separator: bytes = b"\n",
    drain_past_cap: Callable[[], bool] = lambda: False,
    on_debug: Callable[[str], None] | None = None,
) -> Run:
    """Run ``program argv`` in ``cwd``, calling ``on_line`` with each stdout line (without
    its ``\\n``) as it arrives.

    :param on_lines: instead of ``on_line`` (give exactly one): called with the list of the
        complete lines (each without its separator, empty ones included) that one pipe read
        (at most 64 KiB) completed, in output order; never with an empty list

    :param drain_past_cap: asked once, when stdout passes ``raw_cap``: ``True`` to read and
        drop the rest of the output and let ripgrep exit by itself (its exit status is then
        known: §6.3 checks it before the output size), ``False`` to kill it at once
    :param separator: what ends a line (``b"\\0"`` for ripgrep's ``--null`` output, where a
        name may hold a line break)

    :param on_debug: with ``--debug`` in ``argv``: called with each stderr line that is one of
        ripgrep's debug messages (``rg: DEBUG|…``, decoded, without its ``\\n``); those lines are
        not kept in ``Run.stderr`` (DEVIATIONS S13)
    :param raw_cap: stop the run (kill it, ``Run.stopped``) once stdout exceeds this many
        bytes; the line being read at that point is not delivered
    :raises OSError: when the process cannot be started (``cwd`` unusable, not executable)
    :raises Exception: whatever ``on_line``/``on_lines`` raises (the process is killed first)
    :raises TypeError: given both or neither of ``on_line`` and ``on_lines``
    """
    if (on_line is None) == (on_lines is None):
        raise TypeError("run_ripgrep takes exactly one of on_line and on_lines")
    deliver: Callable[[list[bytes]], None]
    if on_lines is not None:
        deliver = on_lines
    else:
        assert on_line is not None
        each = on_line

        def deliver(lines: list[bytes]) -> None:
            for line in lines:
                each(line)

    run = Run()
    # Shielded: a cancellation landing inside the spawn would have asyncio kill the direct
    # child alone and drop the handle, leaving whatever it started behind; here it lands on the
    # first checkpoint below, inside the ``finally`` that kills the whole group.
    with anyio.CancelScope(shield=True):
        process = await anyio.open_process(
            [program, *argv],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            start_new_session=True,
        )
    tail = bytearray()

    partial = bytearray()

    def debug_lines(chunk: bytes) -> bytes:
        """``chunk`` without ripgrep's debug lines (handed to ``on_debug``); a line not ended
        yet waits in ``partial``."""
        assert on_debug is not None
        partial.extend(chunk)
        cut = partial.rfind(b"\n") + 1
        kept = bytearray()
        for line in bytes(partial[:cut]).splitlines(keepends=True):
            if line.startswith(b"rg: DEBUG|"):
                on_debug(line.rstrip(b"\n").decode("utf-8", "surrogateescape"))
            else:
                kept.extend(line)
        del partial[:cut]
        if len(partial) > STDERR_KEEP and not partial.startswith(b"rg: DEBUG|"):
            kept.extend(partial)
            partial.clear()
        elif len(partial) > STDERR_KEEP:  # a debug line that long: not ours to keep
            partial.clear()
        return bytes(kept)

    def keep(chunk: bytes) -> None:
        """Add ``chunk`` to the kept stderr, of which only the last ``STDERR_KEEP`` bytes stay."""
        tail.extend(chunk)
        if len(tail) > STDERR_KEEP:
            del tail[: len(tail) - STDERR_KEEP]
            run.stderr_truncated = True

    async def read_stderr() -> None:
        assert process.stderr is not None
        async for chunk in process.stderr:
            if on_debug is not None:
                chunk = debug_lines(chunk)
            keep(chunk)

    failure: list[Exception] = []

    async def read_stdout() -> None:
        assert process.stdout is not None
        pending = b""
        while True:
            try:
                chunk = await process.stdout.receive(_READ)
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                break
            if run.drained:  # past the cap: only counted, until ripgrep exits
                run.raw_bytes += len(chunk)
                continue
            room = raw_cap - run.raw_bytes
            run.raw_bytes += len(chunk)
            over = len(chunk) > room
            if over:  # deliver the complete lines within the cap, then stop
                run.stopped = True
                chunk = chunk[: max(0, room)]
            lines = (pending + chunk).split(separator)
            pending = lines.pop()
            if lines:
                deliver(lines)
            if over:
                run.drained = drain_past_cap()
                if not run.drained:
                    _kill(process)
                    return
                pending = b""
        if pending:
            deliver([pending])

    async def consume() -> None:
        try:
            await read_stdout()
        except Exception as exc:  # re-raised below, outside the task group
            failure.append(exc)
            _kill(process)

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(read_stderr)
            await consume()
        if failure:
            raise failure[0]
        await process.wait()
    finally:
        with anyio.CancelScope(shield=True):
            _kill(process)
            await process.wait()
            await process.aclose()
    code = process.returncode
    if code is not None and code < 0:
        try:
            run.signal_name = signals.Signals(-code).name
        except ValueError:
            run.signal_name = None
    else:
        run.exit_code = code
    if partial and not partial.startswith(b"rg: DEBUG|"):
        keep(bytes(partial))  # a last line without its break: kept within the same bound
    run.stderr = bytes(tail).decode("utf-8", "replace")
    return run
