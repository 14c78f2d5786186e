"""The search mirror's copies (``tool_fs_search.mirror``): what ``fill`` writes is exactly the
provider's bytes, whether the file is held in memory whole (at most ``HELD_BYTES``) or streamed,
and whatever the mirror file held before; a file gone since the walk stays empty; emptied files
give their bytes back. Through the in-memory provider (no host path)."""

from __future__ import annotations

import os

import pytest

from dsh_fs.fs_memory import MemoryFileSystem
from dsh_fs.tool_fs_search.mirror import HELD_BYTES, Mirror

pytestmark = pytest.mark.anyio

SIZES = [0, 1, 5000, HELD_BYTES - 1, HELD_BYTES, HELD_BYTES + 1, 3 * HELD_BYTES + 17]


def _content(size: int, seed: int) -> bytes:
    return bytes((i * 7 + seed) % 251 for i in range(size))


async def test_fill_copies_exact_bytes_small_and_streamed() -> None:
    fs = MemoryFileSystem(files={f"d/f{size}.bin": _content(size, size) for size in SIZES})
    async with Mirror(fs, signal=None) as mirror:
        root = await fs.resolve("d")
        info = await fs.stat(root)
        assert info is not None
        await mirror.add_tree(root, info, contents=True)
        hosts = sorted(mirror.files)
        assert len(hosts) == len(SIZES) and all(os.path.getsize(h) == 0 for h in hosts)
        await mirror.fill(hosts)
        for size in SIZES:
            with open(mirror.host(f"/d/f{size}.bin"), "rb") as f:
                assert f.read() == _content(size, size), size
        # a mirror file that holds more than the provider's file now is cut to the bytes copied
        for size in SIZES:
            fs.put(f"d/f{size}.bin", _content(size, 3))
            with open(mirror.host(f"/d/f{size}.bin"), "ab") as f:
                f.write(b"stale tail" * 1000)
        await mirror.fill(hosts)
        for size in SIZES:
            with open(mirror.host(f"/d/f{size}.bin"), "rb") as f:
                assert f.read() == _content(size, 3), size
        await mirror.empty(hosts)
        assert all(os.path.getsize(h) == 0 for h in hosts)


async def test_a_file_gone_since_the_walk_stays_empty() -> None:
    fs = MemoryFileSystem(files={"a.txt": "needle\n", "b.txt": "needle b\n"})
    async with Mirror(fs, signal=None) as mirror:
        root = await fs.resolve("/")
        info = await fs.stat(root)
        assert info is not None
        await mirror.add_tree(root, info, contents=True)
        await fs.delete(await fs.resolve("a.txt"))
        await mirror.fill(sorted(mirror.files))
        assert os.path.getsize(mirror.host("/a.txt")) == 0
        with open(mirror.host("/b.txt"), "rb") as f:
            assert f.read() == b"needle b\n"
    assert not os.path.exists(mirror.root)
