"""``list`` and the editors' directory ``view`` over a command channel are bounded as on the
local disk (deviation L5; ``ChannelFileSystem.iter_dir``).

The far side's provider reads a directory in batches; the channel streams those batches under
its credit, so neither side holds a huge far directory whole for one page. Memory on this side
is measured with ``tracemalloc`` against the channel's whole ``list_dir`` of the same
directory (a ratio, not a machine figure); the batches show the far side streamed them.
"""

from __future__ import annotations

import os

import pytest
from channelkit import channel_fs
from filekit import many_empty_files, traced_peak

import dsh_fs
from dsh_fs import Session

pytestmark = pytest.mark.anyio

N = 20_000


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> str:
    return many_empty_files(os.path.realpath(tmp_path_factory.mktemp("big")), N)


async def test_L5_the_far_directory_arrives_in_batches(big: str) -> None:
    fs = channel_fs(big)
    try:
        target = await fs.resolve(".", cwd=big)
        sizes = [len(batch) async for batch in fs.iter_dir(target)]
        assert sum(sizes) == N + 1 and len(sizes) > 1 and max(sizes) <= 512, sizes[:5]
        names = sorted([entry.name async for batch in fs.iter_dir(target) for entry in batch])
        assert names == sorted(entry.name for entry in await fs.list_dir(target))
    finally:
        await fs.aclose()


async def test_L5_a_list_over_a_channel_holds_about_its_page_not_the_directory(big: str) -> None:
    ctx = dsh_fs.create_context(provider=channel_fs(big), faces=["str_replace_based_edit_tool"])
    session = Session(big)
    async with ctx:
        target = await ctx.fs.resolve(".", cwd=big)
        whole, listed = await traced_peak(lambda: ctx.fs.list_dir(target))
        assert len(listed) == N + 1
        del listed
        first, result = await traced_peak(lambda: ctx.tools.execute("list", {}, session=session))
        assert result.text.splitlines()[3:5] == ["sub/", "f000000.txt (0 bytes)"], result.text[:300]
        assert f"(Showing entries 1-200 of {N + 1}: 1 directory, {N} files. Use offset=201 to continue.)" in result.text
        view, shown = await traced_peak(lambda: ctx.tools.execute(
            "str_replace_based_edit_tool", {"command": "view", "path": big}, session=session))
        assert f"f\t{big}/f000000.txt\n" in shown.text and "<response clipped>" in shown.text
    assert first < whole / 8, (first, whole)
    assert view < whole / 8, (view, whole)
