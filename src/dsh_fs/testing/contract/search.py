"""The provider contract's tests of the search capabilities: ``walk``, ``stream_bytes``,
``host_path`` (mixins of ``dsh_fs.testing.contract``)."""

from __future__ import annotations

import anyio
import pytest

from ...core.signal import AbortSignal
from ...fs.errors import FsError
from ..workspaces import Workspace
from .base import BOM, ContractBase

__all__ = ("SearchContract",)


class SearchContract(ContractBase):
    """``walk`` (sizes, modification times), ``stream_bytes`` (exact, binary-safe), ``host_path``."""

    async def test_walk_reports_every_file_and_directory_once(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        for rel, data in {"a.txt": b"a", "d/b.txt": b"bb", "d/e/c.bin": b"\x00\xff\xfe", ".hidden/h": b""}.items():
            await workspace.put(rel, data)
        await workspace.mkdir("empty")
        root = await fs.resolve(workspace.root)
        entries = [entry async for entry in fs.walk(root)]
        shape = sorted((e.rel, e.type, e.size) for e in entries)
        assert shape == [(".hidden", "directory", None), (".hidden/h", "file", 0), ("a.txt", "file", 1),
                         ("d", "directory", None), ("d/b.txt", "file", 2), ("d/e", "directory", None),
                         ("d/e/c.bin", "file", 3), ("empty", "directory", None)]
        for entry in entries:
            assert entry.target.display_path == workspace.path(entry.rel)
            assert entry.target == await fs.resolve(entry.rel)
            if entry.type == "file":
                assert entry.mtime_ns is not None and entry.mtime_ns > 1_000_000_000 * 1_000_000_000
        seen = [e.rel for e in entries]
        assert all(seen.index(e.rel.rsplit("/", 1)[0]) < seen.index(e.rel) for e in entries if "/" in e.rel)
        below = sorted(e.rel for e in [entry async for entry in fs.walk(await fs.resolve("d"))])
        assert below == ["b.txt", "e", "e/c.bin"]

    async def test_walk_refuses_files_missing_paths_and_abort(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("a.txt", b"a")
        file, missing = await fs.resolve("a.txt"), await fs.resolve("nope")
        with pytest.raises(FsError) as caught:
            [e async for e in fs.walk(file)]
        assert (caught.value.code, str(caught.value)) == ("FS_NOT_DIRECTORY", f'cannot list "{file.display_path}": not a directory')
        with pytest.raises(FsError) as caught:
            [e async for e in fs.walk(missing)]
        assert (caught.value.code, str(caught.value)) == ("FS_NOT_FOUND", f'cannot list "{missing.display_path}": not found')
        with pytest.raises(FsError) as caught:
            [e async for e in fs.walk(await fs.resolve(workspace.root), signal=AbortSignal.aborted_signal())]
        assert (caught.value.code, str(caught.value)) == ("FS_ABORTED", "list aborted")

    async def test_walk_sees_later_files_as_newer(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("old.txt", b"o")
        await anyio.sleep(1.1)  # S3's LastModified has whole seconds
        await workspace.put("new.txt", b"n")
        times = {e.rel: e.mtime_ns async for e in fs.walk(await fs.resolve(workspace.root))}
        assert times["new.txt"] > times["old.txt"]

    async def test_stream_bytes_is_exact_and_binary_safe(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        data = BOM + b"caf\xe9\x00\r\n" + bytes(range(256)) * 700
        await workspace.put("blob.bin", data)
        target = await fs.resolve("blob.bin")
        assert b"".join([chunk async for chunk in fs.stream_bytes(target)]) == data
        host = fs.host_path(target)
        if host is not None:  # a provider with host paths names these very bytes
            with open(host, "rb") as handle:
                assert handle.read() == data
        await workspace.mkdir("dir")
        for rel, code in (("nope", "FS_NOT_FOUND"), ("dir", "FS_NOT_REGULAR_FILE")):
            with pytest.raises(FsError) as caught:
                [c async for c in fs.stream_bytes(await fs.resolve(rel))]
            assert caught.value.code == code
        with pytest.raises(FsError) as caught:
            [c async for c in fs.stream_bytes(target, signal=AbortSignal.aborted_signal())]
        assert (caught.value.code, str(caught.value)) == ("FS_ABORTED", "read aborted")
