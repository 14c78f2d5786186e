"""The provider contract's tests of ``delete`` (mixins of ``dsh_fs.testing.contract``)."""

from __future__ import annotations

from ...core.signal import AbortSignal
from ...fs.errors import FsError
from ...fs.types import DeleteIntent, Version
from ..workspaces import Workspace
from .base import ContractBase, _fails, _race

__all__ = ("DeleteContract",)


class DeleteContract(ContractBase):
    """``delete``: guards, exact messages, directories, abort ordering, races."""

    async def test_delete_at_the_version_removes_only_that_file(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("dir/a.txt", b"a\n")
        await workspace.put("dir/b.txt", b"b\n")
        target = await fs.resolve("dir/a.txt")
        seen = await fs.stat(target)
        assert seen is not None
        outcome = await fs.delete(target, DeleteIntent(seen.version))
        assert outcome.version == seen.version
        assert await workspace.files() == {"dir/b.txt": b"b\n"}
        assert await fs.stat(target) is None

    async def test_unguarded_delete_removes_whatever_is_there(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("a.txt", b"one\n")
        await workspace.put("a.txt", b"two\n")
        await fs.delete(await fs.resolve("a.txt"))
        assert await workspace.files() == {}

    async def test_delete_refuses_a_changed_file(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("a.txt", b"old\n")
        target = await fs.resolve("a.txt")
        seen = await fs.stat(target)
        assert seen is not None
        await workspace.put("a.txt", b"new\n")
        await _fails(fs.delete(target, DeleteIntent(seen.version)), "FS_STALE_VERSION",
                     f'cannot delete "{target.display_path}": file changed since it was read')
        assert await workspace.get("a.txt") == b"new\n"

    async def test_delete_of_a_missing_file(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        target = await fs.resolve("gone.txt")
        await _fails(fs.delete(target, DeleteIntent(Version("v"))), "FS_STALE_VERSION",
                     f'cannot delete "{target.display_path}": file no longer exists')
        await _fails(fs.delete(target), "FS_NOT_FOUND", f'cannot delete "{target.display_path}": not found')

    async def test_delete_refuses_directories(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("dir/inner.txt", b"i")
        for rel in ("dir", "."):
            target = await fs.resolve(rel)
            info = await fs.stat(target)
            assert info is not None
            for intent in (None, DeleteIntent(info.version)):
                await _fails(fs.delete(target, intent), "FS_NOT_REGULAR_FILE",
                             f'cannot delete "{target.display_path}": not a regular file')
        assert await workspace.files() == {"dir/inner.txt": b"i"}

    async def test_delete_abort_ordering(self, workspace: Workspace) -> None:
        """§2.12 order: existence and version failures win over a pre-aborted signal."""
        fs = await workspace.provider()
        await workspace.put("a.txt", b"keep")
        target = await fs.resolve("a.txt")
        aborted = AbortSignal.aborted_signal()
        await _fails(fs.delete(target, signal=aborted), "FS_ABORTED", "delete aborted")
        await _fails(fs.delete(target, DeleteIntent(Version("old")), signal=aborted), "FS_STALE_VERSION")
        await _fails(fs.delete(await fs.resolve("nope.txt"), signal=aborted), "FS_NOT_FOUND")
        assert await workspace.get("a.txt") == b"keep"

    async def test_concurrent_guarded_deletes_one_wins(self, workspace: Workspace) -> None:
        await workspace.put("a.txt", b"x\n")
        first, second = await workspace.provider(), await workspace.provider()
        target = await first.resolve("a.txt")
        seen = await first.stat(target)
        assert seen is not None
        results = await _race({f"{n}": fs.delete(target, DeleteIntent(seen.version))
                               for n, fs in enumerate((first, second, first))})
        assert sum(not isinstance(r, FsError) for r in results.values()) == 1, results
        assert all(r.code == "FS_STALE_VERSION" for r in results.values() if isinstance(r, FsError))
        assert await workspace.files() == {}
