"""The provider contract's tests of ``stat`` and ``lstat`` (mixins of
``dsh_fs.testing.contract``)."""

from __future__ import annotations

from ...core.signal import AbortSignal
from ..workspaces import Workspace
from .base import ContractBase, _fails

__all__ = ("IdenticalRewriteContract", "StatContract")


class StatContract(ContractBase):
    """``stat`` and ``lstat``: types, versions, abort."""

    async def test_stat_file_directory_and_absent(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("dir/f.txt", "héllo".encode())
        info = await fs.stat(await fs.resolve("dir/f.txt"))
        assert info is not None and info.type == "file" and info.size == 6 and isinstance(info.version, str)
        directory = await fs.stat(await fs.resolve("dir"))
        assert directory is not None and directory.type == "directory"
        root = await fs.stat(await fs.resolve("."))
        assert root is not None and root.type == "directory"
        assert await fs.stat(await fs.resolve("missing.txt")) is None
        assert await fs.stat(await fs.resolve("dir/missing/deeper.txt")) is None

    async def test_stat_version_is_stable_until_a_change(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("a.txt", b"one\n")
        target = await fs.resolve("a.txt")
        first = await fs.stat(target)
        again = await fs.stat(target)
        assert first is not None and again is not None and first.version == again.version
        await workspace.put("a.txt", b"two\n")  # same size, other bytes
        changed = await fs.stat(target)
        assert changed is not None and changed.version != first.version

    async def test_stat_honors_a_pre_aborted_signal(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        target = await fs.resolve("a.txt")
        await _fails(fs.stat(target, signal=AbortSignal.aborted_signal()), "FS_ABORTED", "stat aborted")

    async def test_lstat_is_path_shaped(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("sub/a.txt", b"abc")
        info = await fs.lstat("a.txt", cwd=workspace.path("sub"))
        assert info is not None and info.type == "file" and info.size == 3
        folder = await fs.lstat("sub")
        assert folder is not None and folder.type == "directory"
        assert await fs.lstat("nope.txt") is None
        await _fails(fs.lstat("  "), "FS_NOT_FOUND", "file_path must be a non-empty string")
        await _fails(fs.lstat("a.txt", signal=AbortSignal.aborted_signal()), "FS_ABORTED", "lstat aborted")


class IdenticalRewriteContract(ContractBase):
    """Optional: for a provider whose versions are not content hashes (a local disk, a versioned
    bucket, memory): rewriting the same bytes is a change. Leave it out where the version is a
    content hash (an unversioned S3 bucket's ETag)."""

    async def test_stat_sees_an_identical_rewrite_where_versions_are_not_content_hashes(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("a.txt", b"same\n")
        target = await fs.resolve("a.txt")
        first = await fs.stat(target)
        await workspace.put("a.txt", b"same\n")
        second = await fs.stat(target)
        assert first is not None and second is not None and first.version != second.version
