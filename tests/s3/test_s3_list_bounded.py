"""A directory of the S3 provider is listed page by page (deviation L5;
``S3FileSystem.iter_dir``): ``list`` and the editors' directory ``view`` keep only what they
show, so a prefix with many keys is never held whole for one page. The pages give the entries
``list_dir`` gives — a name that is both an object and a common prefix is one file, also when
the object ends one page and the prefix starts the next."""

from __future__ import annotations

import anyio
import pytest

from dsh_fs import Session, create_context
from dsh_fs.testing.workspaces import S3Workspace

pytestmark = pytest.mark.anyio

FIRST_PAGE = 1000
"""keys and common prefixes of one ListObjectsV2 page (S3's and moto's default)"""


async def _fill(bucket: S3Workspace) -> None:
    names = [f"d/a{i:04d}" for i in range(FIRST_PAGE - 1)]
    limiter = anyio.Semaphore(16)

    async def put(rel: str, data: bytes) -> None:
        async with limiter:
            await bucket.put(rel, data)

    async with anyio.create_task_group() as tg:
        for rel in names:
            tg.start_soon(put, rel, b"")
        # "m" ends the first page; its prefix "m/" starts the second; "n" and "n/" share a page
        for rel, data in (("d/m", b"m"), ("d/m/child", b"c"), ("d/n", b"nn"), ("d/n/x", b""), ("d/sub/y", b"y"),
                          ("d/z", b"zzz")):
            tg.start_soon(put, rel, data)


async def test_L5_an_s3_directory_arrives_page_by_page(bucket: S3Workspace) -> None:
    await _fill(bucket)
    fs = await bucket.provider()
    try:
        target = await fs.resolve("d")
        sizes: list[int] = []
        paged = []
        async for batch in fs.iter_dir(target):
            sizes.append(len(batch))
            paged += [(e.name, e.type, e.size, e.version, e.target) for e in batch]
        whole = [(e.name, e.type, e.size, e.version, e.target) for e in await fs.list_dir(target)]
        assert sizes == [FIRST_PAGE, 3], sizes  # "m" ends the first page, "m/" (left out) starts the second
        assert sorted(paged, key=lambda row: row[0]) == whole
        assert [row[:3] for row in whole[-4:]] == [("m", "file", 1), ("n", "file", 2), ("sub", "directory", None),
                                                   ("z", "file", 3)]
    finally:
        await fs.aclose()


async def test_L5_a_list_page_of_a_big_s3_directory(bucket: S3Workspace) -> None:
    await _fill(bucket)
    ctx = create_context(provider=await bucket.provider(), faces=["str_replace_based_edit_tool"])
    async with ctx:
        session = Session()
        result = await ctx.tools.execute("list", {"path": "d", "offset": FIRST_PAGE - 1}, session=session)
        assert "a0998 (0 bytes)\nm (1 byte)\nn (2 bytes)\nz (3 bytes)\n\n" in result.text, result.text
        assert f"(Showing entries {FIRST_PAGE - 1}-{FIRST_PAGE + 3} of {FIRST_PAGE + 3}: 1 directory, {FIRST_PAGE + 2} files.)" \
            in result.text, result.text
        result = await ctx.tools.execute("str_replace_based_edit_tool", {"command": "view", "path": "/d"}, session=session)
        assert "d\t/d/sub\n" in result.text and "f\t/d/m\n" in result.text and "d\t/d/m\n" not in result.text, result.text
