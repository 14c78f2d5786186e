"""Concurrency through the real ``dsh-fs mcp`` server: many overlapping reads on one
connection, and two agents racing to change one file — two HTTP sessions on one server, and
two stdio server processes on one workspace (cross-process lock, DEVIATIONS A4). Whatever
the interleaving, a race ends with exactly one success and one ``FS_STALE_VERSION``, and the
file holds exactly the winner's change: never a lost update, never a mix.

Not covered: cancellation (``test_mcp_cancel.py``, in-process, where it can be observed).
"""

from __future__ import annotations

import os
from typing import Any

import anyio
import pytest
from mcp import ClientSession

from mcp_support import call_raw, http_server, http_session, row, stdio_session

pytestmark = pytest.mark.timeout(120)

ROUNDS = 4


def _put(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def _get(path: str) -> str:
    with open(path, encoding="utf-8") as handle:
        return handle.read()


async def _concurrent_reads(session: ClientSession, root: str) -> None:
    names = [f"r{i}.txt" for i in range(8)]
    for i, name in enumerate(names):
        _put(os.path.join(root, name), "".join(f"file {i} line {n}\n" for n in range(1, 201)))
    results: dict[tuple[str, int], dict[str, Any]] = {}

    async def read(name: str, offset: int) -> None:
        raw = await call_raw(session, "read", {"file_path": name, "offset": offset, "limit": 3})
        results[(name, offset)] = row(raw)

    with anyio.fail_after(60):
        async with anyio.create_task_group() as tg:
            for name in names:
                for offset in (1, 50, 198):
                    tg.start_soon(read, name, offset)
    assert len(results) == len(names) * 3
    for (name, offset), result in results.items():
        i = names.index(name)
        assert result["is_error"] is False, result
        lines = [f"{n}: file {i} line {n}" for n in range(offset, offset + 3)]
        assert "\n".join(lines) in result["text"]


async def _race(first: ClientSession, second: ClientSession, path: str, tool: str) -> None:
    """Both read ``path``, then both change it at once; check the outcome."""
    _put(path, "shared line\n")
    for session in (first, second):
        assert row(await call_raw(session, "read", {"file_path": path}))["is_error"] is False
    changes = {
        "edit": [
            {"file_path": path, "old_string": "shared", "new_string": "first's"},
            {"file_path": path, "old_string": "shared", "new_string": "second's"},
        ],
        "write": [{"file_path": path, "content": "first's file\n"}, {"file_path": path, "content": "second's file\n"}],
    }[tool]
    outcomes: dict[int, dict[str, Any]] = {}

    async def change(index: int, session: ClientSession) -> None:
        outcomes[index] = row(await call_raw(session, tool, changes[index]))

    with anyio.fail_after(60):
        async with anyio.create_task_group() as tg:
            tg.start_soon(change, 0, first)
            tg.start_soon(change, 1, second)
    winners = [i for i, r in outcomes.items() if not r["is_error"]]
    losers = [r for r in outcomes.values() if r["is_error"]]
    assert len(winners) == 1 and len(losers) == 1, outcomes
    assert losers[0]["code"] == "FS_STALE_VERSION"
    first_line, _, changes = losers[0]["text"].partition("\n")
    assert first_line == f'Error: cannot {tool} "{path}": file changed since it was read — re-read the file, then retry'
    winner = ("first's", "second's")[winners[0]]
    assert changes == "", changes  # a one-line file: D30 adds no diff (re-read as cheaply)
    assert _get(path) == (f"{winner} line\n" if tool == "edit" else f"{winner} file\n")


def test_concurrent_reads_on_one_stdio_connection(tmp_path: Any) -> None:
    root = os.path.realpath(tmp_path)

    async def main() -> None:
        async with stdio_session(root) as session:
            await _concurrent_reads(session, root)

    anyio.run(main)


def test_concurrent_reads_and_races_between_two_http_sessions(tmp_path: Any) -> None:
    root = os.path.realpath(tmp_path)

    async def main(url: str) -> None:
        async with http_session(url) as first, http_session(url) as second:
            await _concurrent_reads(first, root)
            for round_ in range(ROUNDS):
                for tool in ("edit", "write"):
                    await _race(first, second, os.path.join(root, f"race-{tool}-{round_}.txt"), tool)

    with http_server(root) as url:
        anyio.run(main, url)


def test_races_between_two_stdio_servers_on_one_workspace(tmp_path: Any) -> None:
    root = os.path.realpath(tmp_path)

    async def main() -> None:
        async with stdio_session(root) as first, stdio_session(root) as second:
            for round_ in range(ROUNDS):
                for tool in ("edit", "write"):
                    await _race(first, second, os.path.join(root, f"race-{tool}-{round_}.txt"), tool)

    anyio.run(main)
