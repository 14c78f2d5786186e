"""The provider contract's tests of ``rename`` (mixins of ``dsh_fs.testing.contract``)."""

from __future__ import annotations

from ...core.signal import AbortSignal
from ...fs.errors import FsError
from ...fs.types import RenameIntent, ReplaceIfVersion, Version
from ..workspaces import Workspace
from .base import BOM, ContractBase, _fails, _race

__all__ = ("RenameContract",)


class RenameContract(ContractBase):
    """``rename``: guards, bytes moved unchanged, a destination never replaced, parents created, abort
    ordering, races."""

    async def test_rename_moves_the_bytes_unchanged(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        raw = BOM + b"one\r\ntwo\n\xff"
        await workspace.put("a.bin", raw)
        await workspace.put("other.txt", b"o")
        source, dest = await fs.resolve("a.bin"), await fs.resolve("moved/deeper/b.bin")
        seen = await fs.stat(source)
        assert seen is not None
        outcome = await fs.rename(source, dest, RenameIntent(seen.version))
        assert await workspace.files() == {"moved/deeper/b.bin": raw, "other.txt": b"o"}
        now = await fs.stat(dest)
        assert now is not None and now.version == outcome.version
        assert await fs.stat(source) is None
        written = await fs.write_text(dest, "text\n", ReplaceIfVersion(outcome.version))
        assert written.operation == "update"

    async def test_unguarded_rename(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("a.txt", b"one\n")
        await workspace.put("a.txt", b"two\n")
        await fs.rename(await fs.resolve("a.txt"), await fs.resolve("b.txt"))
        assert await workspace.files() == {"b.txt": b"two\n"}

    async def test_rename_never_replaces_the_destination(self, workspace: Workspace) -> None:
        # DEVIATIONS E5
        fs = await workspace.provider()
        await workspace.put("a.txt", b"a")
        await workspace.put("b.txt", b"b")
        await workspace.put("dir/inner.txt", b"i")
        source = await fs.resolve("a.txt")
        seen = await fs.stat(source)
        assert seen is not None
        for rel in ("b.txt", "dir", "a.txt", "./a.txt"):
            dest = await fs.resolve(rel)
            for intent in (None, RenameIntent(seen.version)):
                await _fails(fs.rename(source, dest, intent), "FS_NOT_OBSERVED",
                             f'cannot rename "{source.display_path}" to "{dest.display_path}": '
                             "the destination already exists")
        assert await workspace.files() == {"a.txt": b"a", "b.txt": b"b", "dir/inner.txt": b"i"}

    async def test_rename_refuses_a_changed_or_missing_source(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("a.txt", b"old\n")
        source, dest = await fs.resolve("a.txt"), await fs.resolve("b.txt")
        seen = await fs.stat(source)
        assert seen is not None
        await workspace.put("a.txt", b"new\n")
        await _fails(fs.rename(source, dest, RenameIntent(seen.version)), "FS_STALE_VERSION",
                     f'cannot rename "{source.display_path}": file changed since it was read')
        assert await workspace.files() == {"a.txt": b"new\n"}
        missing = await fs.resolve("nope.txt")
        await _fails(fs.rename(missing, dest, RenameIntent(seen.version)), "FS_STALE_VERSION",
                     f'cannot rename "{missing.display_path}": file no longer exists')
        await _fails(fs.rename(missing, dest), "FS_NOT_FOUND", f'cannot rename "{missing.display_path}": not found')
        assert await workspace.files() == {"a.txt": b"new\n"}

    async def test_rename_refuses_directories(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("dir/inner.txt", b"i")
        for rel in ("dir", "."):
            source = await fs.resolve(rel)
            await _fails(fs.rename(source, await fs.resolve("elsewhere")), "FS_NOT_REGULAR_FILE",
                         f'cannot rename "{source.display_path}": not a regular file')
        assert await workspace.files() == {"dir/inner.txt": b"i"}

    async def test_rename_abort_ordering(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("a.txt", b"keep")
        await workspace.put("b.txt", b"other")
        source = await fs.resolve("a.txt")
        aborted = AbortSignal.aborted_signal()
        await _fails(fs.rename(source, await fs.resolve("c.txt"), signal=aborted), "FS_ABORTED", "rename aborted")
        await _fails(fs.rename(source, await fs.resolve("b.txt"), signal=aborted), "FS_NOT_OBSERVED")
        await _fails(fs.rename(source, await fs.resolve("c.txt"), RenameIntent(Version("old")), signal=aborted),
                     "FS_STALE_VERSION")
        assert await workspace.files() == {"a.txt": b"keep", "b.txt": b"other"}

    async def test_concurrent_renames_onto_one_name_one_wins_nothing_lost(self, workspace: Workspace) -> None:
        await workspace.put("a.txt", b"a")
        await workspace.put("b.txt", b"b")
        first, second = await workspace.provider(), await workspace.provider()
        results = await _race({name: fs.rename(await fs.resolve(name), await fs.resolve("c.txt"))
                               for name, fs in (("a.txt", first), ("b.txt", second))})
        winners = [n for n, r in results.items() if not isinstance(r, FsError)]
        assert len(winners) == 1, results
        loser = "b.txt" if winners == ["a.txt"] else "a.txt"
        assert results[loser].code == "FS_NOT_OBSERVED"
        assert await workspace.files() == {"c.txt": winners[0][0].encode(), loser: loser[0].encode()}

    async def test_concurrent_renames_of_one_file_one_wins(self, workspace: Workspace) -> None:
        await workspace.put("a.txt", b"a")
        first, second = await workspace.provider(), await workspace.provider()
        source = await first.resolve("a.txt")
        seen = await first.stat(source)
        assert seen is not None
        results = await _race({dest: fs.rename(source, await fs.resolve(dest), RenameIntent(seen.version))
                               for dest, fs in (("x.txt", first), ("y.txt", second))})
        winners = [n for n, r in results.items() if not isinstance(r, FsError)]
        assert len(winners) == 1, results
        assert all(r.code == "FS_STALE_VERSION" for r in results.values() if isinstance(r, FsError))
        assert await workspace.files() == {winners[0]: b"a"}
