"""The provider contract's tests of ``write_text`` (mixins of ``dsh_fs.testing.contract``)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from ...core.signal import AbortSignal
from ...fs.errors import FsError
from ...fs.filesystem import FileSystem
from ...fs.types import CreateIfAbsent, ReplaceIfVersion, Version
from ..workspaces import Workspace
from .base import BOM, ContractBase, _fails

__all__ = ("WriteTextContract",)


class WriteTextContract(ContractBase):
    """``write_text``: intents, exact messages, the diff basis, D1/D2/D4 per profile, abort ordering, races."""

    async def test_create_if_absent_creates(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        target = await fs.resolve("new.txt")
        outcome = await fs.write_text(target, "line one\r\nline two\n", CreateIfAbsent())
        assert outcome.operation == "create" and outcome.before is None
        assert outcome.after == "line one\nline two\n"
        assert await workspace.get("new.txt") == b"line one\r\nline two\n"
        info = await fs.stat(target)
        assert info is not None and info.version == outcome.version

    async def test_create_if_absent_refuses_an_existing_file(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("a.txt", b"keep")
        target = await fs.resolve("a.txt")
        await _fails(
            fs.write_text(target, "clobber", CreateIfAbsent()),
            "FS_NOT_OBSERVED",
            f'cannot overwrite existing "{target.display_path}" without reading it first',
        )
        assert await workspace.get("a.txt") == b"keep"

    async def test_replace_if_version_replaces_at_the_version(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("a.txt", b"old\n")
        target = await fs.resolve("a.txt")
        seen = await fs.stat(target)
        assert seen is not None
        outcome = await fs.write_text(target, "new\n", ReplaceIfVersion(seen.version))
        assert (outcome.operation, outcome.before, outcome.after) == ("update", "old\n", "new\n")
        assert await workspace.get("a.txt") == b"new\n"
        now = await fs.stat(target)
        assert now is not None and now.version == outcome.version != seen.version

    async def test_replace_if_version_refuses_a_changed_file(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("a.txt", b"old\n")
        target = await fs.resolve("a.txt")
        seen = await fs.stat(target)
        assert seen is not None
        await workspace.put("a.txt", b"theirs\n")
        await _fails(
            fs.write_text(target, "mine\n", ReplaceIfVersion(seen.version)),
            "FS_STALE_VERSION",
            f'cannot write "{target.display_path}": file changed since it was read',
        )
        assert await workspace.get("a.txt") == b"theirs\n"

    async def test_replace_if_version_never_recreates_a_deleted_file(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("a.txt", b"old\n")
        target = await fs.resolve("a.txt")
        seen = await fs.stat(target)
        assert seen is not None
        await workspace.delete("a.txt")
        await _fails(
            fs.write_text(target, "mine\n", ReplaceIfVersion(seen.version)),
            "FS_STALE_VERSION",
            f'cannot write "{target.display_path}": file no longer exists',
        )
        assert await workspace.get("a.txt") is None

    async def test_write_refuses_directories_with_or_without_a_guard(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("dir/inner.txt", b"i")
        await workspace.mkdir("empty")
        for rel in ("dir", "empty", "."):
            target = await fs.resolve(rel)
            info = await fs.stat(target)
            assert info is not None
            message = f'cannot write "{target.display_path}": not a regular file'
            for intent in (None, CreateIfAbsent(), ReplaceIfVersion(info.version)):
                await _fails(fs.write_text(target, "x", intent), "FS_NOT_REGULAR_FILE", message)
        assert await workspace.files() == {"dir/inner.txt": b"i"}

    async def test_unguarded_write_creates_then_overwrites(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        target = await fs.resolve("d1/d2/deep.txt")
        created = await fs.write_text(target, "deep")
        assert created.operation == "create" and created.before is None
        info = await fs.stat(await fs.resolve("d1"))
        assert info is not None and info.type == "directory"
        await workspace.put("d1/d2/deep.txt", b"external\n")
        updated = await fs.write_text(target, "clobbered")
        assert (updated.operation, updated.before, updated.after) == ("update", "external\n", "clobbered")
        assert await workspace.get("d1/d2/deep.txt") == b"clobbered"

    async def test_write_reports_lf_normalized_before_and_after(self, workspace: Workspace) -> None:
        fs = await workspace.provider(profile="reference")
        await workspace.put("a.txt", BOM + b"a\r\nb\r\nc\r\n")
        outcome = await fs.write_text(await fs.resolve("a.txt"), "a\r\nB\r\nc\r\n")
        assert (outcome.before, outcome.after) == ("a\nb\nc\n", "a\nB\nc\n")
        assert await workspace.get("a.txt") == b"a\r\nB\r\nc\r\n"

    @pytest.mark.parametrize("prior", [b"bin\x00ary", b"caf\xe9\n"])
    async def test_write_over_undiffable_bytes_has_no_before(self, workspace: Workspace, prior: bytes) -> None:
        fs = await workspace.provider()
        await workspace.put("a.txt", prior)
        outcome = await fs.write_text(await fs.resolve("a.txt"), "text\n")
        assert outcome.operation == "update" and outcome.before is None
        assert await workspace.get("a.txt") == b"text\n"

    async def test_write_keeps_bom_and_crlf_in_the_default_profile_only(self, workspace: Workspace) -> None:
        """DEVIATIONS D4."""
        await workspace.put("win.txt", BOM + b"one\r\ntwo\r\n")
        await workspace.put("ref.txt", BOM + b"one\r\ntwo\r\n")
        default = await workspace.provider()
        reference = await workspace.provider(profile="reference")
        await default.write_text(await default.resolve("win.txt"), "one\nTWO\n")
        await reference.write_text(await reference.resolve("ref.txt"), "one\nTWO\n")
        assert await workspace.get("win.txt") == BOM + b"one\r\nTWO\r\n"
        assert await workspace.get("ref.txt") == b"one\nTWO\n"
        created = await default.write_text(await default.resolve("new.txt"), "a\nb\n")
        assert created.operation == "create" and await workspace.get("new.txt") == b"a\nb\n"

    async def test_write_turns_lone_surrogates_into_replacement_characters(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await fs.write_text(await fs.resolve("s.txt"), "a\ud800b")
        assert await workspace.get("s.txt") == b"a\xef\xbf\xbdb"

    async def test_write_abort_ordering(self, workspace: Workspace) -> None:
        """§2.8 notes: guards first; then ``read aborted`` (existing) or ``write aborted`` (new)."""
        fs = await workspace.provider()
        aborted = AbortSignal.aborted_signal()
        new = await fs.resolve("new.txt")
        await _fails(fs.write_text(new, "x", CreateIfAbsent(), signal=aborted), "FS_ABORTED", "write aborted")
        await _fails(fs.write_text(new, "x", signal=aborted), "FS_ABORTED", "write aborted")
        assert await workspace.get("new.txt") is None
        await workspace.put("a.txt", b"keep")
        existing = await fs.resolve("a.txt")
        await _fails(fs.write_text(existing, "x", signal=aborted), "FS_ABORTED", "read aborted")
        await _fails(fs.write_text(existing, "x", CreateIfAbsent(), signal=aborted), "FS_NOT_OBSERVED")
        await _fails(fs.write_text(existing, "x", ReplaceIfVersion(Version("nope")), signal=aborted), "FS_STALE_VERSION")
        assert await workspace.get("a.txt") == b"keep"

    async def test_concurrent_guarded_writes_one_wins(self, workspace: Workspace) -> None:
        await workspace.put("a.txt", b"base\n")
        first, second = await workspace.provider(), await workspace.provider()
        target = await first.resolve("a.txt")
        seen = await first.stat(target)
        assert seen is not None
        results: dict[str, Any] = {}

        async def attempt(name: str, fs: FileSystem) -> None:
            try:
                results[name] = await fs.write_text(target, f"{name}\n", ReplaceIfVersion(seen.version))
            except FsError as err:
                results[name] = err

        async with anyio.create_task_group() as tg:
            for name, fs in (("one", first), ("two", second), ("three", first)):
                tg.start_soon(attempt, name, fs)
        winners = [n for n, r in results.items() if not isinstance(r, FsError)]
        assert len(winners) == 1, results
        assert all(r.code == "FS_STALE_VERSION" for n, r in results.items() if n not in winners)
        assert await workspace.get("a.txt") == f"{winners[0]}\n".encode()

    async def test_concurrent_creates_one_wins(self, workspace: Workspace) -> None:
        first, second = await workspace.provider(), await workspace.provider()
        target = await first.resolve("fresh.txt")
        results: dict[str, Any] = {}

        async def attempt(name: str, fs: FileSystem) -> None:
            try:
                results[name] = await fs.write_text(target, name, CreateIfAbsent())
            except FsError as err:
                results[name] = err

        async with anyio.create_task_group() as tg:
            for name, fs in (("one", first), ("two", second), ("three", second)):
                tg.start_soon(attempt, name, fs)
        winners = [n for n, r in results.items() if not isinstance(r, FsError)]
        assert len(winners) == 1, results
        assert all(r.code == "FS_NOT_OBSERVED" for n, r in results.items() if n not in winners)
        assert await workspace.get("fresh.txt") == winners[0].encode()
