"""Calls one client sends without waiting (issue 13.7) run as the registry runs one assistant
message (REFERENCE-SPEC §5.5): a ``write``/``edit`` waits for every call of its owner sent
before it, later calls wait for it, reads overlap. Through the official SDK's clients:

* in-process over the SDK's memory transport, and over real HTTP (``httpkit.serve_in_process``)
  in both eras (a handshake session; stateless 2026-07-28 requests of one token), with a
  provider that holds chosen calls until released, so each order is observed, not raced;
* a real ``dsh-fs mcp`` process over stdio, the requests written in one go (both eras).

Not covered: the scheduling rule itself (``tests/unit/core/test_schedule.py``), different owners
racing (``test_mcp_concurrency.py``).
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from mcp import Client

import dsh_fs
from dsh_fs.core.signal import AbortSignal
from dsh_fs.fs_local import LocalFileSystem
from dsh_fs.mcp import build_server
from filekit import get, put
from httpkit import http_client, http_session, serve_in_process
from mcp_support import RawStdio, call_raw, row

pytestmark = pytest.mark.timeout(90)

Call = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]
"""``(tool, arguments) -> row`` through one client connection"""


class Holding(LocalFileSystem):
    """A local provider that holds the next ``resolve`` of a path named in ``hold`` (the first
    step of every tool call) until ``release(path)``; ``entered[path]`` is set when it is held."""

    def __init__(self, **config: Any) -> None:
        super().__init__(**config)
        self.held: set[str] = set()
        self.gates: dict[str, anyio.Event] = {}
        self.entered: dict[str, anyio.Event] = {}

    def hold(self, path: str) -> None:
        self.held.add(path)
        self.gates[path] = anyio.Event()
        self.entered[path] = anyio.Event()

    def release(self, path: str) -> None:
        self.gates[path].set()

    async def resolve(self, path: str, *, cwd: str | None = None, signal: AbortSignal | None = None) -> Any:
        if path in self.held:
            self.held.discard(path)
            self.entered[path].set()
            await self.gates[path].wait()
        return await super().resolve(path, cwd=cwd, signal=signal)


async def _orders(fs: Holding, root: str, call: Call) -> None:
    """The three orders, each made observable by holding one call in the provider."""
    put(os.path.join(root, "a.txt"), "alpha\n")
    put(os.path.join(root, "b.txt"), "beta\n")
    results: dict[str, dict[str, Any]] = {}

    async def send(key: str, tool: str, arguments: dict[str, Any]) -> None:
        results[key] = await call(tool, arguments)

    with anyio.fail_after(60):
        # 1. an edit sent while the read before it is still running waits for it
        fs.hold("a.txt")
        async with anyio.create_task_group() as tg:
            tg.start_soon(send, "read", "read", {"file_path": "a.txt"})
            await fs.entered["a.txt"].wait()
            tg.start_soon(send, "edit", "edit", {"file_path": "a.txt", "old_string": "alpha", "new_string": "ALPHA"})
            for _ in range(20):
                await anyio.sleep(0.01)
            assert "edit" not in results  # waiting for the read, not refused
            fs.release("a.txt")
        assert results["read"]["is_error"] is False
        assert results["edit"]["is_error"] is False, results["edit"]
        assert get(os.path.join(root, "a.txt")) == b"ALPHA\n"

        # 2. reads overlap: a second read runs while the first is held
        fs.hold("a.txt")
        fs.hold("b.txt")
        async with anyio.create_task_group() as tg:
            tg.start_soon(send, "first", "read", {"file_path": "a.txt"})
            await fs.entered["a.txt"].wait()
            tg.start_soon(send, "second", "read", {"file_path": "b.txt"})
            await fs.entered["b.txt"].wait()  # both in the provider at once
            fs.release("b.txt")
            fs.release("a.txt")
        assert "1: ALPHA" in results["first"]["text"] and "1: beta" in results["second"]["text"]

        # 3. a read sent after an edit sees the edit
        fs.hold("b.txt")
        async with anyio.create_task_group() as tg:
            tg.start_soon(send, "edit b", "edit", {"file_path": "b.txt", "old_string": "beta", "new_string": "BETA"})
            await fs.entered["b.txt"].wait()
            tg.start_soon(send, "read b", "read", {"file_path": "b.txt"})
            for _ in range(20):
                await anyio.sleep(0.01)
            assert "read b" not in results
            fs.release("b.txt")
        assert results["edit b"]["is_error"] is False, results["edit b"]
        assert "1: BETA" in results["read b"]["text"]


def _via_client(client: Client) -> Call:
    async def call(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        result = await client.call_tool(tool, arguments)
        text = "".join(getattr(block, "text", "") for block in result.content)
        return {"is_error": result.is_error, "text": text}

    return call


def test_one_connections_calls_keep_their_order_in_process(tmp_path: Any) -> None:
    root = os.path.realpath(tmp_path)

    async def main() -> None:
        fs = Holding(cwd=root)
        ctx = dsh_fs.create_context(cwd=root, provider=fs)
        session = dsh_fs.Session(root)
        async with Client(build_server(ctx, owner_for=lambda _request: session), mode="legacy") as client:
            await _orders(fs, root, _via_client(client))

    anyio.run(main)


@asynccontextmanager
async def _http(root: str) -> AsyncIterator[tuple[Holding, Any]]:
    fs = Holding(cwd=root)
    async with serve_in_process(dsh_fs.create_context(cwd=root, provider=fs), root) as served:
        yield fs, served.endpoint


@pytest.mark.parametrize("era", ["handshake", "2026-07-28"])
def test_one_owners_calls_keep_their_order_over_http(tmp_path: Any, era: str) -> None:
    root = os.path.realpath(tmp_path)

    async def main() -> None:
        async with _http(root) as (fs, endpoint):
            if era == "handshake":
                async with http_session(endpoint) as session:
                    await _orders(fs, root, lambda tool, args: _row(call_raw(session, tool, args)))
            else:
                async with http_client(endpoint, mode="2026-07-28") as client:
                    await _orders(fs, root, _via_client(client))

    anyio.run(main)


async def _row(raw: Awaitable[dict[str, Any]]) -> dict[str, Any]:
    return row(await raw)


ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
}


@pytest.mark.parametrize("era", ["handshake", "2026-07-28"])
def test_a_read_and_an_edit_written_together_over_stdio(tmp_path: Any, era: str) -> None:
    """The edit is written right behind the read, in the same write: it is never answered
    ``FS_NOT_OBSERVED`` (it waits for the read); a read behind the edit sees it."""
    root = os.path.realpath(tmp_path)
    with RawStdio(root) as raw:
        if era == "handshake":
            raw.initialize()
        meta = {"_meta": ENVELOPE} if era != "handshake" else {}
        for round_ in range(5):
            name = f"f{round_}.txt"
            put(os.path.join(root, name), "".join(f"line {n}\n" for n in range(20_000)))
            lines = [
                {"name": "read", "arguments": {"file_path": name, "offset": 19_990}},
                {"name": "edit", "arguments": {"file_path": name, "old_string": "line 19999\n", "new_string": "last\n"}},
                {"name": "read", "arguments": {"file_path": name, "offset": 20_000}},
            ]
            assert raw.proc.stdin is not None and raw.proc.stdout is not None
            raw.proc.stdin.write(b"".join(
                json.dumps({"jsonrpc": "2.0", "id": f"{round_}-{i}", "method": "tools/call", "params": {**params, **meta}}).encode()
                + b"\n"
                for i, params in enumerate(lines)
            ))
            raw.proc.stdin.flush()
            answers = {}
            for _ in lines:
                message = json.loads(raw.proc.stdout.readline())
                answers[message["id"]] = row(message["result"])
            assert answers[f"{round_}-0"]["is_error"] is False
            assert answers[f"{round_}-1"]["is_error"] is False, answers[f"{round_}-1"]
            assert "20000: last" in answers[f"{round_}-2"]["text"]
            assert get(os.path.join(root, name)).endswith(b"line 19998\nlast\n")
