"""The provider contract's tests of ``list_dir`` (mixins of ``dsh_fs.testing.contract``)."""

from __future__ import annotations

from ...core.signal import AbortSignal
from ..workspaces import Workspace
from .base import ContractBase, _fails

__all__ = ("ListDirContract",)


class ListDirContract(ContractBase):
    """``list_dir``: children in code-point order, the root, refusals, abort."""

    async def test_list_dir_children_in_code_point_order(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        for rel in ("d/b.txt", "d/a.md", "d/Z.txt", "d/sub/x.txt", "d/sub/y/z.txt", "other.txt"):
            await workspace.put(rel, rel.encode())
        await workspace.mkdir("d/empty")
        folder = await fs.resolve("d")
        entries = await fs.list_dir(folder)
        assert [(e.name, e.type) for e in entries] == [
            ("Z.txt", "file"), ("a.md", "file"), ("b.txt", "file"), ("empty", "directory"), ("sub", "directory"),
        ]
        for entry in entries:
            child = await fs.resolve(entry.name, cwd=folder.display_path)
            assert entry.target == child
            assert entry.target.display_path == workspace.path("d/" + entry.name)
            info = await fs.stat(child)
            assert info is not None
            if entry.type == "file":
                # versions are opaque: a listing never opens files, so a provider whose stat
                # digests recently changed files (local, A5) may mint a different token here
                assert entry.size == len(("d/" + entry.name).encode()) and isinstance(entry.version, str)
                assert set(entry.as_dict()) == {"name", "type", "target", "version", "size"}
            else:
                assert entry.size is None and "size" not in entry.as_dict()

    async def test_list_dir_of_the_root(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        assert await fs.list_dir(await fs.resolve(".")) == []
        await workspace.put("x/y.txt", b"1")
        await workspace.put("a.txt", b"2")
        assert [(e.name, e.type) for e in await fs.list_dir(await fs.resolve("."))] == [("a.txt", "file"), ("x", "directory")]

    async def test_list_dir_rejects_missing_files_and_abort(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("f.txt", b"x")
        missing = await fs.resolve("nope")
        file = await fs.resolve("f.txt")
        await _fails(fs.list_dir(missing), "FS_NOT_FOUND", f'cannot list "{missing.display_path}": not found')
        await _fails(fs.list_dir(file), "FS_NOT_DIRECTORY", f'cannot list "{file.display_path}": not a directory')
        root = await fs.resolve(".")
        await _fails(fs.list_dir(root, signal=AbortSignal.aborted_signal()), "FS_ABORTED", "list aborted")
