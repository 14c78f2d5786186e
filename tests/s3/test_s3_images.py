"""``read_image`` on the S3 provider: one ranged GET bounded by the byte cap, so an object of
any size named ``x.png`` is never downloaded whole (docs/IMAGES.md)."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from dsh_fs import create_context
from dsh_fs.fs_s3 import store as s3_store
from dsh_fs.testing.workspaces import S3Workspace
from imagekit import encoded, gradient

pytestmark = pytest.mark.anyio

PNG = encoded(gradient(), "PNG")


@pytest.fixture
def received(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Byte counts of every body chunk the S3 provider reads."""
    counts: list[int] = []
    original = s3_store.read_chunk

    async def counting(body: Any, size: int) -> bytes:
        chunk = await original(body, size)
        counts.append(len(chunk))
        return chunk

    monkeypatch.setattr("dsh_fs.fs_s3.filesystem.read_chunk", counting)
    return counts


async def test_read_image_on_a_bucket(bucket: S3Workspace) -> None:
    await bucket.put("pics/a.png", PNG)
    ctx = create_context(provider=await bucket.provider(), images=True, search=False)
    result = await ctx.tools.execute("read_image", {"file_path": "pics/a.png"})
    assert result.content[0]["text"] == (
        f"<path>/pics/a.png</path>\n<type>image</type>\n<content>\nimage/png image, 37x23 px, {len(PNG)} bytes\n</content>")
    assert base64.b64decode(result.images[0]["data"]) == PNG
    await bucket.put("empty.png", b"")
    assert (await ctx.tools.execute("read_image", {"file_path": "empty.png"})).text == (
        'Error: cannot read "/empty.png": Image is empty.')
    await ctx.aclose()


async def test_an_object_over_the_cap_is_refused_on_its_size_without_a_get(bucket: S3Workspace, received: list[int]) -> None:
    big = b"\x89PNG\r\n\x1a\n" + bytes(8 << 20)
    await bucket.put("x.png", big)
    fs = await bucket.provider()
    ctx = create_context(provider=fs, images=True, search=False)
    result = await ctx.tools.execute("read_image", {"file_path": "x.png"})
    assert result.text == f'Error: cannot read "/x.png": {len(big)} bytes exceeds the {int(3.5 * 1024 * 1024)}-byte limit'
    assert received == []
    await ctx.aclose()


async def test_the_ranged_get_stops_at_the_cap_plus_one_byte(bucket: S3Workspace, received: list[int]) -> None:
    """The file grew after the stat (the caller's size is stale): the GET still asks for no
    more than ``max_bytes + 1`` bytes, and the surplus byte proves the object is over the cap."""
    await bucket.put("x.png", bytes(8 << 20))
    fs = await bucket.provider()
    target = await fs.resolve("x.png")
    with pytest.raises(Exception, match=r'cannot read "/x.png": content exceeds the 1000-byte limit'):
        await fs.read_bytes(target, max_bytes=1000, size=10)
    assert sum(received) == 1001
    assert await fs.read_bytes(target, max_bytes=(8 << 20)) == bytes(8 << 20)
    await fs.aclose()
