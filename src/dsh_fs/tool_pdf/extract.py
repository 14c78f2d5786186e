"""Run the PDF worker (``tool_pdf.worker``) for one read: a child process per call, inside
memory, CPU and wall-time limits, at most ``PdfConfig.pdf_workers`` at once (docs/PDF.md,
"Bounded").

The PDF's bytes are parsed only in the child: a file that decompresses into gigabytes, nests its
objects a million deep or crashes the parser costs the child, which is killed or dies, never
the server. The event loop only writes the bytes to the child's stdin and reads its answer,
both bounded; a cancelled or aborted call kills the child.
"""

from __future__ import annotations

import json
import os
import signal as signals
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.abc

from ..core.signal import AbortSignal, run_under_signal

__all__ = ("WORKER", "WorkerFailed", "WorkerLimits", "answer_limit", "run_worker")

WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "worker.py")
"""the worker program, run by path (``python -I``: it imports nothing of dsh-fs)"""

_STDERR_MAX = 64 * 1024


@dataclass(frozen=True, slots=True)
class WorkerLimits:
    """The child's limits."""

    memory: int
    """address space (bytes, ``RLIMIT_AS``)"""
    seconds: float
    """wall time (seconds); CPU time is capped at the same number of seconds (``RLIMIT_CPU``)"""
    answer_bytes: int
    """the most bytes of answer read from the child (more: it failed)"""


def answer_limit(pages: int, text_chars: int, image_bytes: int) -> int:
    """The most bytes a worker's answer may take: ``pages`` pages of at most ``text_chars``
    characters each — JSON-escaped, a character takes at most 12 bytes (an astral one is two
    ``\\uXXXX`` escapes) — and, with page images, one of at most ``image_bytes`` a page in base64,
    plus 64 KiB for the rest of the JSON.

    :param image_bytes: 0 when the call asks for no images
    """
    image = image_bytes * 4 // 3 + 4 if image_bytes else 0
    return pages * (text_chars * 12 + 256 + image) + 65536


class WorkerFailed(Exception):
    """The child did not answer: ``kind`` is ``time``, ``memory`` or ``crash`` (``how`` says
    how it ended: ``signal 11``, ``exit status 1``)."""

    def __init__(self, kind: str, how: str = "") -> None:
        super().__init__(kind, how)
        self.kind = kind
        self.how = how


async def _read_bounded(stream: anyio.abc.ByteReceiveStream, limit: int) -> bytes:
    """Everything ``stream`` sends until EOF; more than ``limit`` bytes is a failure."""
    chunks: list[bytes] = []
    total = 0
    async for chunk in stream:
        total += len(chunk)
        if total > limit:
            raise WorkerFailed("crash", f"an answer over {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


async def _tail(stream: anyio.abc.ByteReceiveStream, keep: int) -> bytes:
    """The last ``keep`` bytes ``stream`` sends until EOF (the rest is read and dropped: a child
    that writes much to stderr never blocks, and never fills memory)."""
    kept = b""
    async for chunk in stream:
        kept = (kept + chunk)[-keep:]
    return kept


def _ended(returncode: int, stderr: bytes) -> WorkerFailed:
    """What a child that gave no answer died of."""
    if returncode == -signals.SIGXCPU:
        return WorkerFailed("time")
    if b"MemoryError" in stderr or b"std::bad_alloc" in stderr or b"Out of memory" in stderr:
        return WorkerFailed("memory")
    if returncode < 0:
        return WorkerFailed("crash", f"signal {-returncode}")
    return WorkerFailed("crash", f"exit status {returncode}")


async def run_worker(data: bytes, request: dict[str, Any], limits: WorkerLimits, *,
                     signal: AbortSignal | None = None) -> dict[str, Any]:
    """The worker's answer for ``data`` (a PDF's bytes) and ``request`` (pages and caps; the
    limits are added here).

    :raises WorkerFailed: ``time`` (wall or CPU time ran out: the child is killed), ``memory``,
        ``crash`` (killed by a signal, a bad exit, an answer that is not JSON or too big)
    :raises FsError: ``FS_ABORTED`` ``read aborted`` when ``signal`` is aborted (the child is killed)
    """
    header = json.dumps({**request, "memory": limits.memory, "cpu": max(1, int(limits.seconds))}).encode() + b"\n"
    process = await anyio.open_process([sys.executable, "-I", WORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE)
    answer: dict[str, bytes] = {}

    async def talk() -> None:
        assert process.stdin is not None and process.stdout is not None and process.stderr is not None

        async def feed() -> None:
            try:
                await process.stdin.send(header)  # type: ignore[union-attr]
                if data:
                    await process.stdin.send(data)  # type: ignore[union-attr]
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                pass  # the child stopped reading: it died, which the wait below says
            finally:
                await process.stdin.aclose()  # type: ignore[union-attr]

        async def errors() -> None:
            answer["stderr"] = await _tail(process.stderr, _STDERR_MAX)  # type: ignore[arg-type]

        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(feed)
                tg.start_soon(errors)
                answer["stdout"] = await _read_bounded(process.stdout, limits.answer_bytes)
        except BaseExceptionGroup as group:  # one task's failure: the answer's own (too big)
            failed = group.subgroup(WorkerFailed)
            if failed is None:
                raise
            raise failed.exceptions[0] from None
        await process.wait()

    try:
        outcome = await run_under_signal(talk, signal=signal, timeout=limits.seconds)
    finally:
        if process.returncode is None:
            process.kill()
        with anyio.CancelScope(shield=True):
            await process.wait()
            await process.aclose()
    if outcome.error is not None:
        raise outcome.error
    if outcome.timed_out:
        raise WorkerFailed("time")
    if not outcome.returned:
        from ..fs.errors import aborted

        raise aborted("read")
    stdout = answer.get("stdout", b"")
    if process.returncode != 0 or not stdout:
        raise _ended(process.returncode or 0, answer.get("stderr", b""))
    try:
        parsed = json.loads(stdout)
    except ValueError:
        raise WorkerFailed("crash", "an answer that is not JSON") from None
    if not isinstance(parsed, dict):
        raise WorkerFailed("crash", "an answer that is not a JSON object")
    return parsed
