"""What the mixins of the provider contract share: the test class base and the helpers
their tests call (expected failures, draining a stream, comparable outcomes, the windowing a
caller does without ``read_window``, races). Helpers are private to the contract package."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

import anyio
import pytest

from ...core.signal import AbortSignal
from ...fs.errors import FsError
from ...fs.filesystem import FileSystem
from ...fs.types import EditRequest
from ...fs.window import ReadWindow
from ...tool_fs.read_render import build_window

__all__ = ("BOM", "ContractBase")

BOM = b"\xef\xbb\xbf"


async def _fails(awaitable: Awaitable[Any], code: str, message: str | None = None) -> FsError:
    with pytest.raises(FsError) as caught:
        await awaitable
    assert caught.value.code == code, f"{caught.value.code}: {caught.value}"
    if message is not None:
        assert str(caught.value) == message
    return caught.value


async def _drain(fs: FileSystem, target: Any, signal: AbortSignal | None = None) -> str:
    return "".join([chunk async for chunk in fs.stream_text(target, signal=signal)])


async def _outcome(awaitable: Awaitable[Any]) -> tuple[str, Any]:
    """``("ok", result)`` or ``(code, message)``: what a read gave, comparable across paths."""
    try:
        return "ok", await awaitable
    except FsError as err:
        return err.code, str(err)


async def _windowed(fs: FileSystem, target: Any, window: ReadWindow, streamed: bool) -> Any:
    """What the read tool computes without ``read_window``: the window over ``read_text``
    (whole) or over ``stream_text``, abandoned once the window stops (streamed)."""
    chunks = fs.stream_text(target) if streamed else [await fs.read_text(target)]
    return await build_window(chunks, window, target.display_path)


async def _race(calls: dict[str, Awaitable[Any]]) -> dict[str, Any]:
    """Run ``calls`` concurrently: name → its outcome, or the ``FsError`` it raised."""
    results: dict[str, Any] = {}

    async def attempt(name: str, call: Awaitable[Any]) -> None:
        try:
            results[name] = await call
        except FsError as err:
            results[name] = err

    async with anyio.create_task_group() as tg:
        for name, call in calls.items():
            tg.start_soon(attempt, name, call)
    return results


def _edit(old: str, new: str, replace_all: bool = False) -> EditRequest:
    return EditRequest(old_string=old, new_string=new, replace_all=replace_all)


class ContractBase:
    """What every mixin of the contract shares: the anyio mark and backend; requires a
    ``workspace`` fixture yielding an empty ``Workspace``."""

    pytestmark = [pytest.mark.anyio]

    @pytest.fixture
    def anyio_backend(self) -> str:
        """asyncio: the S3 client library runs on asyncio only."""
        return "asyncio"
