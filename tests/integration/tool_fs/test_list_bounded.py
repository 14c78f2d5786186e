"""``list`` and the editors' directory ``view`` are bounded (deviation L5; ``tool_fs.listing``).

A directory of 200,000 empty files cost ~150 MB per ``list`` whatever the ``offset`` (every
child's entry held), and nothing limited how many ran at once. Now both read the children in
batches (``FileSystem.iter_dir``) and keep only what can reach the page or the clip, and run
under the context's listing places: 4 at once, 2 per owner, the rest waiting. Memory is
measured with ``tracemalloc`` against the provider's whole ``list_dir`` of the same directory
(a ratio, not a wall-clock or machine figure).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import pytest
from filekit import many_empty_files, traced_peak

import dsh_fs
from dsh_fs import Session
from dsh_fs.fs_local import LocalFileSystem

pytestmark = pytest.mark.anyio

N = 20_000
LISTINGS_AT_ONCE, LISTINGS_PER_OWNER = 4, 2  # tool_fs.listing's (checked below)


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> str:
    return many_empty_files(os.path.realpath(tmp_path_factory.mktemp("big")), N)


async def test_L5_a_list_holds_about_its_page_not_the_directory(big: str) -> None:
    ctx = dsh_fs.create_context(cwd=big, faces=["str_replace_based_edit_tool"])
    session = Session(big)
    target = await ctx.fs.resolve(".", cwd=big)
    whole, listed = await traced_peak(lambda: ctx.fs.list_dir(target))
    assert len(listed) == N + 1
    del listed
    first, result = await traced_peak(lambda: ctx.tools.execute("list", {}, session=session))
    assert result.text.splitlines()[3:5] == ["sub/", "f000000.txt (0 bytes)"]
    assert f"(Showing entries 1-200 of {N + 1}: 1 directory, {N} files. Use offset=201 to continue.)" in result.text
    last, tail = await traced_peak(lambda: ctx.tools.execute("list", {"offset": N - 9}, session=session))
    assert "f019999.txt (0 bytes)" in tail.text and f"(Showing entries {N - 9}-{N + 1} of {N + 1}" in tail.text
    view, shown = await traced_peak(lambda: ctx.tools.execute(
        "str_replace_based_edit_tool", {"command": "view", "path": big}, session=session))
    assert f"f\t{big}/f000000.txt\n" in shown.text and "<response clipped>" in shown.text
    assert first < whole / 8, (first, whole)
    assert view < whole / 8, (view, whole)
    assert last < whole / 2, (last, whole)  # a deep page keeps the compact rows before it, no entries


class Gate(LocalFileSystem):
    """A local provider whose ``iter_dir`` waits for the test to let it go, counting how many
    run at once, in all and per directory listed (one owner lists one directory)."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.running: dict[str, int] = {}
        self.most = 0
        self.most_per: dict[str, int] = {}
        self.go = anyio.Event()

    async def iter_dir(self, target: Any, *, signal: Any = None) -> Any:  # type: ignore[override]
        name = os.path.basename(target.display_path)
        self.running[name] = self.running.get(name, 0) + 1
        self.most = max(self.most, sum(self.running.values()))
        self.most_per[name] = max(self.most_per.get(name, 0), self.running[name])
        try:
            await self.go.wait()
            async for batch in super().iter_dir(target, signal=signal):
                yield batch
        finally:
            self.running[name] -= 1


async def test_L5_listings_run_four_at_once_two_per_owner(tmp_path: Path) -> None:
    root = os.path.realpath(tmp_path)
    owners = ["a", "b", "c"]
    for name in owners:
        os.mkdir(os.path.join(root, name))
    fs = Gate(cwd=root, root=root)
    ctx = dsh_fs.create_context(provider=fs, faces=["str_replace_editor"])
    results: list[Any] = []

    async def one(owner: str, tool: str) -> None:
        args = {"path": owner} if tool == "list" else {"command": "view", "path": os.path.join(root, owner)}
        results.append(await ctx.tools.execute(tool, args, session=Session(root, id=owner)))

    async with anyio.create_task_group() as tg:
        for owner in owners:
            for tool in ("list", "list", "str_replace_editor", "list"):
                tg.start_soon(one, owner, tool)
        with anyio.fail_after(60):
            while sum(fs.running.values()) < LISTINGS_AT_ONCE:
                await anyio.sleep(0.01)
        await anyio.sleep(0.2)  # nothing more may start while the four wait
        assert sum(fs.running.values()) == LISTINGS_AT_ONCE
        fs.go.set()
    assert fs.most == LISTINGS_AT_ONCE and max(fs.most_per.values()) == LISTINGS_PER_OWNER
    from dsh_fs.tool_fs import listing

    assert (listing.LISTINGS_AT_ONCE, listing.LISTINGS_PER_OWNER) == (LISTINGS_AT_ONCE, LISTINGS_PER_OWNER)
    assert len(results) == 12 and not any(r.is_error for r in results)
