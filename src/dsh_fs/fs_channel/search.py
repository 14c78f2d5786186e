"""The far side as the search tools' search host (``fs.search_host``, DEVIATIONS C4): ripgrep
runs where the files are and only its output travels.

``available(program)`` makes sure once per helper that a ripgrep of this side's version runs
there: the far side's own ``rg`` when its version is the same, else this side's ``program``
sent over (zlib-compressed, checked against its SHA-256 there and kept in the far side's cache,
so it travels once per far side and version) when both sides are the same platform (``sys.platform``
and machine); otherwise ``False`` and the tools read the files through the provider instead
(``tool_fs_search.mirror``), with the same ripgrep semantics.
"""

from __future__ import annotations

import functools
import hashlib
import os
import platform
import subprocess
import sys
import zlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio.to_thread

from ..core.signal import AbortSignal
from ..fs.search_host import HostSearch, SearchHost
from . import codec, errors
from .wire import ProtocolError

if TYPE_CHECKING:
    from .filesystem import ChannelFileSystem

__all__ = ("ChannelSearchHost", "program_facts")


@functools.lru_cache(maxsize=4)
def _facts(program: str, size: int, mtime_ns: int) -> tuple[str, str] | None:
    try:
        done = subprocess.run([program, "--version"], capture_output=True, check=False, timeout=30)
        with open(program, "rb") as handle:
            digest = hashlib.sha256(handle.read()).hexdigest()
    except (OSError, subprocess.SubprocessError):
        return None
    lines = done.stdout.decode("utf-8", "replace").splitlines()
    return (lines[0].strip(), digest) if done.returncode == 0 and lines else None


def program_facts(program: str) -> tuple[str, str] | None:
    """``(first line of --version, SHA-256)`` of this side's ripgrep, or ``None`` when it does
    not run (kept per program file)."""
    try:
        st = os.stat(program)
    except OSError:
        return None
    return _facts(program, st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=2)
def _compressed(program: str, digest: str) -> bytes:
    with open(program, "rb") as handle:
        return zlib.compress(handle.read(), 6)


class ChannelSearchHost(SearchHost):
    """The far side of ``fs`` as a search host (see the module docstring)."""

    def __init__(self, fs: ChannelFileSystem) -> None:
        self.fs = fs

    async def available(self, program: str) -> bool:
        connection = await self._connection("list", self.fs.cwd)
        known = connection.notes.get("rg")
        if known is not None:
            return bool(known)
        facts = await anyio.to_thread.run_sync(program_facts, program)
        ready = False
        if facts is not None:
            version, digest = facts
            args = {"version": version, "hash": digest, "platform": [sys.platform, platform.machine()]}
            answer = await self._call("rg_use", args)
            if answer == "need":
                body = await anyio.to_thread.run_sync(_compressed, program, digest)
                answer = await self._call("rg_install", {"version": version, "hash": digest}, body=body)
            ready = answer in ("own", "cached", "installed")
        connection.notes["rg"] = ready
        return ready

    async def _connection(self, verb: Any, display: str) -> Any:
        try:
            return await self.fs.connection()
        except errors.ChannelError as exc:
            raise exc.as_fs_error(verb, display) from None

    async def _call(self, op: str, args: dict[str, Any], *, body: bytes = b"",
                    signal: AbortSignal | None = None) -> Any:
        result, _ = await self.fs._request(op, args, verb="list", display=self.fs.cwd, stage="list", signal=signal,
                                           body=body)
        return result

    async def search(self, request: HostSearch, *, on_lines: Callable[[list[bytes]], None],
                     on_debug: Callable[[str], None] | None = None,
                     on_rejected: Callable[[list[str]], None] | None = None,
                     signal: AbortSignal | None = None) -> dict[str, Any]:
        connection = await self._connection("list", request.cwd)
        separator = request.separator
        end: dict[str, Any] | None = None
        try:
            chunks = connection.stream("search", codec.encode_host_search(request), signal=signal, credit=1 << 30,
                                       end=True)
            async for value, body in chunks:
                if isinstance(value, dict) and "end" in value:
                    end = codec.decode_run(value["end"])
                    continue
                if not isinstance(value, dict):
                    raise ProtocolError("a search chunk is not an object")
                for message in value.get("d") or ():
                    if on_debug is not None:
                        on_debug(codec.string(message, "a debug message"))
                if "n" in value:
                    count = codec.integer(value["n"], "a line count")
                    if on_rejected is not None and value.get("x"):
                        on_rejected([codec.string(p, "a path") for p in value["x"]])
                    if count:
                        lines = body.split(separator) if count > 1 or body else [b""]
                        if len(lines) != count:
                            raise ProtocolError("a search chunk's lines are not its count")
                        on_lines(lines)
        except errors.ChannelError as exc:
            raise exc.as_fs_error("list", request.cwd) from None
        except ProtocolError as exc:
            raise errors.garbled(self.fs.channel.describe(), str(exc)).as_fs_error("list", request.cwd) from None
        if end is None:
            raise errors.garbled(self.fs.channel.describe(), "a search ended without its run").as_fs_error(
                "list", request.cwd)
        return end

    async def directories(self, paths: list[str], *, signal: AbortSignal | None = None) -> list[bool]:
        if not paths:
            return []
        found = await self._call("is_dirs", {"p": paths}, signal=signal)
        if not isinstance(found, list) or len(found) != len(paths) or not all(isinstance(f, bool) for f in found):
            raise errors.garbled(self.fs.channel.describe(), "is_dirs").as_fs_error("list", paths[0])
        return found

    async def names(self, path: str, *, signal: AbortSignal | None = None) -> list[str]:
        found = await self._call("names", {"p": path}, signal=signal)
        if not isinstance(found, list):
            raise errors.garbled(self.fs.channel.describe(), "names").as_fs_error("list", path)
        return [codec.string(name, "a name") for name in found]
