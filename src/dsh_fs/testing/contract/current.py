"""The provider contract's tests of ``is_current`` (mixins of ``dsh_fs.testing.contract``)."""

from __future__ import annotations

from ..workspaces import Workspace
from .base import ContractBase, _fails

__all__ = ("IsCurrentContract", "ReadTextAtContract")


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


class ReadTextAtContract(ContractBase):
    """``read_text_at``: the text of exactly the version asked for, or ``None``."""

    async def test_read_text_at_is_the_text_of_that_version(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("a.txt", b"\xef\xbb\xbfone\r\n")
        target = await fs.resolve("a.txt")
        seen = await fs.stat(target)
        assert seen is not None
        assert await fs.read_text_at(target, seen.version, info=seen) == await fs.read_text(target)
        assert await fs.read_text_at(target, seen.version) == await fs.read_text(target)
        await workspace.put("a.txt", b"two\n")
        now = await fs.stat(target)
        assert now is not None
        assert await fs.read_text_at(target, seen.version, info=now) is None  # never another version's text
        assert await fs.read_text_at(target, seen.version) is None
        assert await fs.read_text_at(target, now.version, info=now) == "two\n"
        await workspace.put("bin.dat", b"a\x00b")
        binary = await fs.resolve("bin.dat")
        binary_info = await fs.stat(binary)
        assert binary_info is not None
        await _fails(fs.read_text_at(binary, binary_info.version, info=binary_info), "FS_NOT_TEXT")
        await workspace.delete("a.txt")
        await _fails(fs.read_text_at(target, now.version), "FS_NOT_FOUND")
