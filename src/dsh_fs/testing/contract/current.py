"""The provider contract's tests of ``is_current`` (mixins of ``dsh_fs.testing.contract``)."""

from __future__ import annotations

from ..workspaces import Workspace
from .base import ContractBase

__all__ = ("IsCurrentContract",)


class IsCurrentContract(ContractBase):
    """``is_current``: compares versions as the guards do."""

    async def test_is_current_compares_as_the_guards_do(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("a.txt", b"one\n")
        await workspace.put("dir/x.txt", b"x")
        target = await fs.resolve("a.txt")
        seen = await fs.stat(target)
        assert seen is not None
        assert await fs.is_current(target, seen.version)
        await workspace.put("a.txt", b"two\n")
        assert not await fs.is_current(target, seen.version)
        directory = await fs.resolve("dir")
        info = await fs.stat(directory)
        assert info is not None and not await fs.is_current(directory, info.version)
        await workspace.delete("a.txt")
        assert not await fs.is_current(target, seen.version)
