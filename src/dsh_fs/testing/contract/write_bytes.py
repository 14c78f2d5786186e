"""The provider contract's tests of the optional ``write_bytes`` (what a history rewind writes):
exact bytes, ``write_text``'s guards and messages, directories refused, abort before any change."""

from __future__ import annotations

from ...core.signal import AbortSignal
from ...fs.types import CreateIfAbsent, ReplaceIfVersion, Version
from ..workspaces import Workspace
from .base import ContractBase, _fails

__all__ = ("WriteBytesContract",)

RAW = b"\xef\xbb\xbfbom, CRLF\r\nlone CR\r\xff\xfe not UTF-8\x00 NUL\n"


class WriteBytesContract(ContractBase):
    """``write_bytes``: exactly the bytes given, guarded as ``write_text`` is (leave the mixin out
    for a provider without raw writes)."""

    async def test_creates_and_replaces_with_exactly_the_bytes(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        target = await fs.resolve("sub/raw.bin")
        version = await fs.write_bytes(target, RAW, CreateIfAbsent())
        assert await workspace.get("sub/raw.bin") == RAW
        seen = await fs.stat(target)
        assert seen is not None and await fs.is_current(target, version)
        again = await fs.write_bytes(target, b"", ReplaceIfVersion(version))
        assert await workspace.get("sub/raw.bin") == b""
        assert await fs.is_current(target, again)
        await fs.write_bytes(target, b"unguarded\r\n")
        assert await workspace.get("sub/raw.bin") == b"unguarded\r\n"

    async def test_guards_and_their_messages(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("a.txt", b"old\n")
        target = await fs.resolve("a.txt")
        seen = await fs.stat(target)
        assert seen is not None
        dp = target.display_path
        await _fails(fs.write_bytes(target, b"x", CreateIfAbsent()), "FS_NOT_OBSERVED",
                     f'cannot overwrite existing "{dp}" without reading it first')
        await workspace.put("a.txt", b"theirs\n")
        await _fails(fs.write_bytes(target, b"x", ReplaceIfVersion(seen.version)), "FS_STALE_VERSION",
                     f'cannot write "{dp}": file changed since it was read')
        assert await workspace.get("a.txt") == b"theirs\n"
        gone = await fs.resolve("gone.txt")
        await _fails(fs.write_bytes(gone, b"x", ReplaceIfVersion(Version("v"))), "FS_STALE_VERSION",
                     f'cannot write "{gone.display_path}": file no longer exists')
        assert await workspace.files() == {"a.txt": b"theirs\n"}

    async def test_a_directory_is_refused(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("dir/inner.txt", b"i")
        target = await fs.resolve("dir")
        await _fails(fs.write_bytes(target, b"x"), "FS_NOT_REGULAR_FILE", f'cannot write "{target.display_path}": not a regular file')
        assert await workspace.files() == {"dir/inner.txt": b"i"}

    async def test_an_abort_changes_nothing(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("a.txt", b"keep\n")
        signal = AbortSignal()
        signal.abort()
        await _fails(fs.write_bytes(await fs.resolve("a.txt"), b"x", signal=signal), "FS_ABORTED")
        assert await workspace.get("a.txt") == b"keep\n"
