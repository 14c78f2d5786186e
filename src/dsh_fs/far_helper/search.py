"""The search tools' host operations on the far side (``fs.search_host``, DEVIATIONS C4): ripgrep
run where the files are, with the symlink rules of the local disk (S8), and the directory
questions the tools ask.

Which ripgrep (``op_rg_use``): the far side's own ``rg`` when its version is the near side's;
else one the near side sent before and this side kept in its cache (checked against the
SHA-256 the near side names, and run once to be sure it runs here); else, when both sides are
the same platform, the near side sends its own (``op_rg_install``, compressed; kept only when
its hash matches). Otherwise the search tools read the files through the provider instead.

A run (``op_search``) is ``followed.run_followed`` (symlinks followed under the containment
root) or one plain run, exactly as on the local disk; every output line travels, with the
paths S8 does not admit named beside them (the near side's pages drop those), and the results
counted here decide what S4 does at the output cap, as the near side's page would.
"""

from __future__ import annotations

import asyncio
import errno
import hashlib
import os
import platform
import shutil
import subprocess
import sys
import zlib
from collections.abc import Callable
from typing import Any

import anyio.to_thread

from ..core.signal import AbortSignal
from ..fs_channel import codec
from ..fs_channel.boot import cache_dirs, keep
from ..fs_channel.wire import encode_frame
from ..tool_fs_search.engine import Run, run_ripgrep
from ..tool_fs_search.followed import run_followed
from ..tool_fs_search.links import LinkFilter
from ..tool_fs_search.linkwalk import DirCache
from ..tool_fs_search.output import parse_match

__all__ = ("SearchOps", "verdicts")

MAX_PROGRAM = 512 * 1024 * 1024
"""the largest ripgrep program accepted from the near side (bytes, uncompressed)"""


def verdicts(lines: list[bytes], results: str, links: LinkFilter | None,
             bytes_paths: bool) -> tuple[list[str], int]:
    """The printed paths of ``lines`` that S8 does not admit (as the near side's page reads
    them: a ``glob`` line decoded, a ``grep`` match's path), and how many results the others are.

    :param results: ``paths``, ``matches``, ``lines`` or ``none`` (``fs.search_host.HostSearch``)
    """
    rejected: list[str] = []
    count = 0
    for line in lines:
        if results == "lines":
            count += 1 if line else 0
        elif results == "paths" and line:
            try:
                printed = line.decode()
            except UnicodeDecodeError:
                printed = line.decode("utf-8", "replace")
            if links is not None and not links.admit(printed):
                rejected.append(printed)
            else:
                count += 1
        elif results == "matches" and line:
            try:
                match = parse_match(line, bytes_paths=bytes_paths)
            except Exception:  # the near side's parse says what is wrong with it
                match = None
            if match is None:
                continue
            if links is not None and not links.admit(match.path):
                rejected.append(match.path)
            else:
                count += 1
    return rejected, count


class _Outbox:
    """A search's output on its way to the near side: lines and debug messages queued by
    ripgrep's (synchronous) callbacks, sent as stream chunks by one task, in order."""

    def __init__(self, send: Callable[[bytes], Any], request: int, separator: bytes) -> None:
        self.send = send
        self.request = request
        self.separator = separator
        self.queue: list[tuple[dict[str, Any], bytes]] = []
        self.wake = asyncio.Event()
        self.done = False
        self.task = asyncio.ensure_future(self._run())

    def lines(self, lines: list[bytes], rejected: list[str]) -> None:
        self.queue.append(({"n": len(lines), "x": rejected}, self.separator.join(lines)))
        self.wake.set()

    def debug(self, message: str) -> None:
        self.queue.append(({"d": [message]}, b""))
        self.wake.set()

    async def _run(self) -> None:
        while True:
            await self.wake.wait()
            self.wake.clear()
            batch, self.queue = self.queue, []
            for value, body in batch:
                await self.send(encode_frame({"id": self.request, "c": value}, body))
            if self.done and not self.queue:
                return

    async def close(self) -> None:
        """Send what is queued, then stop."""
        self.done = True
        self.wake.set()
        await self.task


class SearchOps:
    """The search operations of ``serve.Helper`` (a mixin: ``fs``, ``answer``, ``send``)."""

    fs: Any
    send: Callable[[bytes], Any]
    answer: Callable[..., Any]

    def __init__(self) -> None:
        self.rg_program: str | None = None
        self.dirs = DirCache()

    # -- which ripgrep ------------------------------------------------------------------------
    async def op_rg_use(self, request: int, args: dict[str, Any], body: bytes, signal: AbortSignal) -> None:
        """``{"version", "hash", "platform"}`` of the near side's ripgrep → ``"own"``,
        ``"cached"``, ``"need"`` (send it: same platform) or ``None`` (none can run here)."""
        version = codec.string(args.get("version"), "a version")
        digest = codec.string(args.get("hash"), "a hash")
        own = shutil.which("rg")
        if own is not None and await _version(own) == version:
            self.rg_program = own
            return await self.answer(request, "own")
        path = await anyio.to_thread.run_sync(_cached_program, digest)
        if path is not None and await _version(path) == version:
            self.rg_program = path
            return await self.answer(request, "cached")
        same = args.get("platform") == [sys.platform, platform.machine()]
        await self.answer(request, "need" if same else None)

    async def op_rg_install(self, request: int, args: dict[str, Any], body: bytes, signal: AbortSignal) -> None:
        """The near side's ripgrep, zlib-compressed in the body: kept in the cache when its
        SHA-256 is ``hash``, made executable, and used when it runs here."""
        digest = codec.string(args.get("hash"), "a hash")
        version = codec.string(args.get("version"), "a version")
        path = await anyio.to_thread.run_sync(_install_program, body, digest)
        if path is not None and await _version(path) == version:
            self.rg_program = path
            return await self.answer(request, "installed")
        await self.answer(request, None)

    # -- a run ------------------------------------------------------------------------------
    async def op_search(self, request: int, args: dict[str, Any], body: bytes, signal: AbortSignal) -> None:
        search = codec.decode_host_search(args)
        program = self.rg_program
        if program is None:
            raise OSError(errno.ENOENT, "ripgrep is not set up on the far side")
        for path in (search.cwd, *((search.follow.root, search.follow.top) if search.follow else ())):
            if not self._inside(path):
                raise OSError(errno.EACCES, f"{path} is outside the workspace")
        out = _Outbox(self.send, request, search.separator)
        follow = search.follow
        links = LinkFilter(search.cwd, follow.root, check_files=follow.check_files) if follow is not None else None
        count = 0

        def deliver(lines: list[bytes]) -> None:
            nonlocal count
            rejected, results = verdicts(lines, search.results, links, search.bytes_paths)
            count += results
            out.lines(lines, rejected)

        on_debug = out.debug if search.debug else None

        async def run(argv: list[str], *, shown: Callable[[], int], on_lines: Callable[[list[bytes]], None],
                      on_debug: Callable[[str], None] | None) -> Run:
            return await run_ripgrep(program, argv, cwd=search.cwd, on_lines=on_lines, raw_cap=search.raw_cap,
                                     separator=search.separator, on_debug=on_debug,
                                     drain_past_cap=lambda: not search.first_page_on_overflow or shown() == 0)

        try:
            if follow is not None:
                ended = await run_followed(run, list(search.argv), cwd=search.cwd, top=follow.top, root=follow.root,
                                           cache=self.dirs, deliver=deliver, on_debug=on_debug, shown=lambda: count)
            else:
                ended = await run(list(search.argv), shown=lambda: count, on_lines=deliver, on_debug=on_debug)
        finally:
            await out.close()
        await self.answer(request, {name: getattr(ended, name) for name in codec.RUN_FIELDS})

    # -- directory questions --------------------------------------------------------------------
    async def op_is_dirs(self, request: int, args: dict[str, Any], body: bytes, signal: AbortSignal) -> None:
        paths = [codec.string(p, "a path") for p in args.get("p") or []]
        flags = await anyio.to_thread.run_sync(lambda: [self._inside(p) and os.path.isdir(p) for p in paths])
        await self.answer(request, flags)

    async def op_names(self, request: int, args: dict[str, Any], body: bytes, signal: AbortSignal) -> None:
        path = codec.string(args.get("p"), "a path")

        def names() -> list[str]:
            if not self._inside(path):
                return []
            try:
                return os.listdir(path)
            except OSError:
                return []

        await self.answer(request, await anyio.to_thread.run_sync(names))

    def _inside(self, path: str) -> bool:
        """Is ``path`` (symlinks resolved) inside a containment root of the provider (always,
        without containment)? The directory questions and the runs answer nothing outside."""
        roots = getattr(getattr(self.fs, "rules", None), "roots", None)
        if roots is None:
            return True
        real = os.path.realpath(path)
        return any(real == root.real or real.startswith(root.real.rstrip("/") + "/") for root in roots)


async def _version(program: str) -> str | None:
    """The first line of ``program --version``, or ``None`` when it does not run."""
    try:
        done = await anyio.run_process([program, "--version"], check=False, stdin=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL)
    except OSError:
        return None
    lines = done.stdout.decode("utf-8", "replace").splitlines()
    return lines[0].strip() if done.returncode == 0 and lines else None


def _cached_program(digest: str) -> str | None:
    """The path of the cached ripgrep of ``digest`` whose bytes have that SHA-256 (made
    executable), else ``None``."""
    for directory in cache_dirs():
        path = os.path.join(directory, digest + ".rg")
        try:
            with open(path, "rb") as handle:
                data = handle.read(MAX_PROGRAM + 1)
        except OSError:
            continue
        if hashlib.sha256(data).hexdigest() == digest:
            os.chmod(path, 0o700)
            return path
    return None


def _install_program(body: bytes, digest: str) -> str | None:
    """Decompress and check ``body``; keep it as the cached ripgrep of ``digest``."""
    try:
        inflater = zlib.decompressobj()
        data = inflater.decompress(body, MAX_PROGRAM + 1)
    except zlib.error:
        return None
    if len(data) > MAX_PROGRAM or hashlib.sha256(data).hexdigest() != digest:
        return None
    keep(digest + ".rg", data)
    return _cached_program(digest)
