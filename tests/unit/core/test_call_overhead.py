"""Work cut from the hot path of a small call (issue 24), each cut proven to keep its
behaviour: the call id minted only when read, blank paths found by one ``str.strip``, and
``run_abortable`` (every MCP call) an asyncio task of its own rather than a task group."""

from __future__ import annotations

import re
import sys
import uuid
from typing import Any

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

import dsh_fs
from dsh_fs.core import session as session_module
from dsh_fs.core import signal as signal_module
from dsh_fs.core.session import ToolExecution
from dsh_fs.core.signal import AbortSignal
from dsh_fs.fs.paths import JS_WHITESPACE, is_blank


@given(st.text(st.sampled_from(sorted(JS_WHITESPACE)) | st.characters(), max_size=12))
def test_blank_is_javascripts_trim_leaving_nothing(text: str) -> None:
    assert is_blank(text) == all(ch in JS_WHITESPACE for ch in text)


def test_a_call_id_given_is_kept_and_none_given_is_minted_once() -> None:
    assert ToolExecution(call_id="call-1").call_id == "call-1"
    execution = ToolExecution()
    minted = execution.call_id
    assert re.fullmatch(r"[0-9a-f]{32}", minted) and uuid.UUID(hex=minted).version == 4
    assert execution.call_id == minted
    assert ToolExecution().call_id != minted


def test_a_read_call_mints_no_call_id(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``read`` never reads its call id, so it pays no ``getrandom`` for one; a tool that
    reads it (a search saving its result) still gets one."""
    (tmp_path / "a.txt").write_text("one\n")
    minted: list[str] = []
    real = uuid.uuid4

    def counting() -> uuid.UUID:
        value = real()
        minted.append(value.hex)
        return value

    monkeypatch.setattr(session_module.uuid, "uuid4", counting)

    async def main() -> None:
        ctx = dsh_fs.create_context(cwd=tmp_path)
        agent = dsh_fs.Session(cwd=tmp_path)
        minted.clear()  # the session's own id
        result = await ctx.tools.execute("read", {"file_path": "a.txt"}, session=agent)
        assert not result.is_error and "1: one" in result.text
        assert minted == []
        seen: list[str] = []

        async def reads_its_id(args: dict[str, Any], execution: ToolExecution) -> Any:
            seen.append(execution.call_id)
            return []

        from dsh_fs.core.tools import ToolDefinition

        ctx.tools.register(ToolDefinition(name="t", description="t", parameters={}, execute=reads_its_id))
        await ctx.tools.execute("t", {}, session=agent)
        assert seen == minted and len(seen) == 1

    anyio.run(main)


@pytest.fixture(params=["asyncio task", "task group"])
def abortable(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """``run_abortable``'s two ways: its own asyncio task, or (another backend) a task group."""
    if request.param == "task group":
        monkeypatch.setattr(signal_module, "_on_asyncio", lambda: False)
    return str(request.param)


def test_run_abortable_returns_and_raises(abortable: str) -> None:
    async def main() -> None:
        async def value(signal: AbortSignal) -> str:
            await anyio.sleep(0)
            return "done"

        async def failing(signal: AbortSignal) -> None:
            raise ValueError("boom")

        assert await signal_module.run_abortable(value) == "done"
        with pytest.raises(ValueError, match="boom"):
            await signal_module.run_abortable(failing)

    anyio.run(main)


def test_a_cancelled_caller_aborts_at_once_waits_for_the_work_then_is_cancelled(
    abortable: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The work sees the abort while it runs, is not cut off (it finishes, and may even
    raise: nothing is reported), and only then does the caller's cancellation propagate."""
    events: list[str] = []

    async def main() -> None:
        async def work(signal: AbortSignal) -> None:
            events.append("started")
            while not signal.aborted:
                await anyio.sleep(0.001)
            events.append(f"aborted: {signal.reason}")
            await anyio.sleep(0.02)  # still running after the abort: shielded
            events.append("finished")
            raise RuntimeError("raised after the abort")

        with anyio.fail_after(60):
            with anyio.CancelScope() as outer:
                async with anyio.create_task_group() as tg:

                    async def call() -> None:
                        try:
                            await signal_module.run_abortable(work, reason="the client cancelled the request")
                        finally:
                            events.append("returned")

                    tg.start_soon(call)
                    while not events:
                        await anyio.sleep(0.001)
                    outer.cancel()
            assert outer.cancelled_caught

    anyio.run(main)
    import gc

    gc.collect()
    assert events == ["started", "aborted: the client cancelled the request", "finished", "returned"]
    assert "never retrieved" not in caplog.text


def test_run_abortable_on_asyncio_costs_well_under_half_a_task_group() -> None:
    counts: dict[str, int] = {}

    async def work(signal: AbortSignal) -> int:
        return 1

    def counted(label: str, run: Any) -> None:
        calls = [0]

        def profile(frame: Any, event: str, arg: Any) -> None:
            if event in ("call", "c_call"):
                calls[0] += 1

        async def main() -> None:
            await run()
            sys.setprofile(profile)
            try:
                await run()
            finally:
                sys.setprofile(None)

        anyio.run(main)
        counts[label] = calls[0]

    counted("task", lambda: signal_module.run_abortable(work))
    original = signal_module._on_asyncio
    signal_module._on_asyncio = lambda: False  # type: ignore[assignment]
    try:
        counted("task group", lambda: signal_module.run_abortable(work))
    finally:
        signal_module._on_asyncio = original  # type: ignore[assignment]
    assert counts["task"] * 2 < counts["task group"], counts  # here: about 110 against 290
