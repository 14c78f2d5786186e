"""Cancellation through the MCP server, in-process (the SDK's ``Client`` over its in-memory
transport, the handshake era), where the provider can observe it: when the client cancels a
request, the call's ``AbortSignal`` is aborted at once; a mutation already under way is not
cut off (the handler waits for it, shielded), and the connection keeps serving.

Also ``run_abortable`` on its own. Not covered: cancellation over a real pipe (the server
never answers a cancelled request, so there is nothing to observe from outside).
"""

from __future__ import annotations

import os
from typing import Any

import anyio
import pytest
from mcp import Client

import dsh_fs
from dsh_fs.core.signal import AbortSignal, run_abortable
from dsh_fs.fs_local import LocalFileSystem
from dsh_fs.mcp import build_server

pytestmark = pytest.mark.timeout(60)


class Stalling(LocalFileSystem):
    """A local provider where resolving ``stall.txt`` (the first step of every tool) waits
    for the abort signal, and whose ``slow.txt`` write waits for ``gate`` and then completes
    regardless of the signal (as a write already past its last abort checkpoint does)."""

    def __init__(self, **config: Any) -> None:
        super().__init__(**config)
        self.entered = anyio.Event()
        self.saw_abort = anyio.Event()
        self.gate = anyio.Event()
        self.finished = anyio.Event()
        self.signal: AbortSignal | None = None
        self.write_interrupted = False

    async def resolve(self, path: str, *, cwd: str | None = None, signal: AbortSignal | None = None) -> Any:
        if path == "stall.txt":
            self.signal = signal
            self.entered.set()
            while signal is None or not signal.aborted:
                await anyio.sleep(0.005)
            self.saw_abort.set()
        return await super().resolve(path, cwd=cwd, signal=signal)

    async def write_text(self, target: Any, content: str, expected: Any = None, *, signal: AbortSignal | None = None):  # type: ignore[no-untyped-def]
        if not target.display_path.endswith("slow.txt"):
            return await super().write_text(target, content, expected, signal=signal)
        self.signal = signal
        self.entered.set()
        try:
            await self.gate.wait()
            outcome = await super().write_text(target, content, expected)
        except BaseException:
            self.write_interrupted = True
            raise
        self.finished.set()
        return outcome


def _client(root: str, fs: Stalling) -> Client:
    ctx = dsh_fs.create_context(cwd=root, provider=fs)
    session = dsh_fs.Session(root)
    return Client(build_server(ctx, owner_for=lambda _request: session), mode="legacy")


async def _cancel_when_entered(fs: Stalling, client: Client, name: str, arguments: dict[str, Any]) -> None:
    scope = anyio.CancelScope()

    async def call() -> None:
        with scope:
            await client.call_tool(name, arguments)
            raise AssertionError("the call was expected to be cancelled before it returned")

    async with anyio.create_task_group() as tg:
        tg.start_soon(call)
        await fs.entered.wait()
        scope.cancel()


def test_a_cancelled_call_aborts_its_signal_and_the_connection_goes_on(tmp_path: Any) -> None:
    root = os.path.realpath(tmp_path)
    for name in ("stall.txt", "a.txt"):
        with open(os.path.join(root, name), "w", encoding="utf-8") as handle:
            handle.write("text\n")

    async def main() -> None:
        fs = Stalling(cwd=root)
        async with _client(root, fs) as client:
            with anyio.fail_after(60):
                await _cancel_when_entered(fs, client, "read", {"file_path": "stall.txt"})
                await fs.saw_abort.wait()
                after = await client.call_tool("read", {"file_path": "a.txt"})
            assert after.is_error is False
            assert "1: text" in after.content[0].text  # type: ignore[union-attr]

    anyio.run(main)


def test_a_mutation_under_way_is_finished_not_cut_off(tmp_path: Any) -> None:
    root = os.path.realpath(tmp_path)

    async def main() -> None:
        fs = Stalling(cwd=root)
        async with _client(root, fs) as client:
            with anyio.fail_after(60):
                await _cancel_when_entered(fs, client, "write", {"file_path": "slow.txt", "content": "all of it\n"})
                while fs.signal is None or not fs.signal.aborted:  # the server saw the cancellation
                    await anyio.sleep(0.005)
                fs.gate.set()
                await fs.finished.wait()
            assert fs.write_interrupted is False
            after = await client.call_tool("read", {"file_path": "slow.txt"})
            assert after.is_error is False

    anyio.run(main)
    with open(os.path.join(root, "slow.txt"), encoding="utf-8") as handle:
        assert handle.read() == "all of it\n"


def test_run_abortable_returns_raises_and_aborts() -> None:
    async def main() -> None:
        assert await run_abortable(lambda signal: _value(signal, 7)) == 7
        with pytest.raises(KeyError):
            await run_abortable(_fail)

        seen: list[AbortSignal] = []
        started = anyio.Event()
        returned = anyio.Event()

        async def work(signal: AbortSignal) -> str:
            seen.append(signal)
            started.set()
            while not signal.aborted:
                await anyio.sleep(0.005)
            await anyio.sleep(0.01)  # still shielded after the abort
            returned.set()
            return "done"

        with anyio.fail_after(60):
            async with anyio.create_task_group() as tg:
                tg.start_soon(run_abortable, work)
                await started.wait()
                tg.cancel_scope.cancel()
        assert seen[0].aborted
        assert returned.is_set()  # the cancelled caller waited for the work to return

    anyio.run(main)


async def _value(signal: AbortSignal, value: int) -> int:
    assert not signal.aborted
    return value


async def _fail(signal: AbortSignal) -> None:
    raise KeyError("boom")
