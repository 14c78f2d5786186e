"""The provider contract's tests of ``edit_text`` (mixins of ``dsh_fs.testing.contract``)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from ...core.signal import AbortSignal
from ...fs.errors import FsError
from ...fs.types import CreateIfAbsent, EditIntent, ReplaceIfVersion, Version
from ..workspaces import Workspace
from .base import BOM, ContractBase, _edit, _fails

__all__ = ("EditTextContract",)


class EditTextContract(ContractBase):
    """``edit_text``: intents, exact messages, D1/D2/D4 per profile, D15 overlapping matches, D16 the size
    limit, abort ordering, races (nothing lost)."""

    async def test_edit_at_the_matching_version(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("a.txt", b"hello world\n")
        target = await fs.resolve("a.txt")
        seen = await fs.stat(target)
        assert seen is not None
        outcome = await fs.edit_text(target, _edit("world", "there"), EditIntent(seen.version))
        assert (outcome.before, outcome.after) == ("hello world\n", "hello there\n")
        assert await workspace.get("a.txt") == b"hello there\n"
        now = await fs.stat(target)
        assert now is not None and now.version == outcome.version != seen.version
        again = await fs.edit_text(target, _edit("there", "again"), EditIntent(outcome.version))
        assert await workspace.get("a.txt") == b"hello again\n" and again.version != outcome.version

    async def test_edit_matches_lf_against_crlf_and_keeps_crlf(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("a.txt", b"one\r\ntwo\r\nthree\r\n")
        outcome = await fs.edit_text(await fs.resolve("a.txt"), _edit("one\ntwo", "one\nTWO"))
        assert (outcome.before, outcome.after) == ("one\ntwo\nthree\n", "one\nTWO\nthree\n")
        assert await workspace.get("a.txt") == b"one\r\nTWO\r\nthree\r\n"

    async def test_edit_checks_the_version_before_matching(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("a.txt", b"alpha\n")
        target = await fs.resolve("a.txt")
        seen = await fs.stat(target)
        assert seen is not None
        await workspace.put("a.txt", b"gamma\n")
        await _fails(
            fs.edit_text(target, _edit("no such text", "x"), EditIntent(seen.version)),
            "FS_STALE_VERSION",
            f'cannot edit "{target.display_path}": file changed since it was read',
        )
        assert await workspace.get("a.txt") == b"gamma\n"

    async def test_unguarded_edit_uses_the_current_content(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("a.txt", b"alpha\n")
        await workspace.put("a.txt", b"beta\n")
        await fs.edit_text(await fs.resolve("a.txt"), _edit("beta", "BETA"))
        assert await workspace.get("a.txt") == b"BETA\n"

    async def test_edit_of_a_missing_file_is_stale(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        target = await fs.resolve("gone.txt")
        message = f'cannot edit "{target.display_path}": file changed since it was read'
        await _fails(fs.edit_text(target, _edit("a", "b")), "FS_STALE_VERSION", message)
        await _fails(fs.edit_text(target, _edit("a", "b"), EditIntent(Version("v"))), "FS_STALE_VERSION", message)
        assert await workspace.get("gone.txt") is None

    async def test_edit_literal_failures(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("a.txt", b"b b b\n")
        target = await fs.resolve("a.txt")
        dp = target.display_path
        await _fails(fs.edit_text(target, _edit("zzz", "y")), "FS_EDIT_NOT_FOUND", f'old_string was not found in "{dp}"')
        await _fails(
            fs.edit_text(target, _edit("b", "c")),
            "FS_AMBIGUOUS_EDIT",
            f'old_string matched 3 times in "{dp}"; provide a more specific old_string or set replace_all to true',
        )
        await _fails(fs.edit_text(target, _edit("", "c")), "FS_EDIT_NOT_FOUND", "old_string must be a non-empty string")
        assert await workspace.get("a.txt") == b"b b b\n"
        await fs.edit_text(target, _edit("b", "c", replace_all=True))
        assert await workspace.get("a.txt") == b"c c c\n"

    async def test_edit_counts_overlapping_matches_in_the_default_profile(self, workspace: Workspace) -> None:
        """DEVIATIONS D15: without ``replace_all`` every occurrence counts, overlapping ones
        included; the reference profile and ``replace_all`` keep the left-to-right scan."""
        default = await workspace.provider()
        reference = await workspace.provider(profile="reference")
        for rel, raw, old, count in (("lines.txt", b"foo\nfoo\nfoo\n", "foo\nfoo\n", 2), ("a.txt", b"aaa\n", "aa", 2),
                                     ("crlf.txt", b"x\r\nx\r\nx\r\n", "x\nx\n", 2)):
            await workspace.put(rel, raw)
            target = await default.resolve(rel)
            await _fails(default.edit_text(target, _edit(old, "Z")), "FS_AMBIGUOUS_EDIT",
                         f'old_string matched {count} times in "{target.display_path}" (some matches overlap); '
                         "provide a more specific old_string or set replace_all to true")
            assert await workspace.get(rel) == raw
        await default.edit_text(await default.resolve("lines.txt"), _edit("foo\nfoo\n", "Z", replace_all=True))
        assert await workspace.get("lines.txt") == b"Zfoo\n"
        await reference.edit_text(await reference.resolve("a.txt"), _edit("aa", "b"))
        assert await workspace.get("a.txt") == b"ba\n"

    @pytest.mark.parametrize("profile", ["default", "reference"])
    async def test_a_write_or_edit_over_write_max_size_changes_nothing(self, workspace: Workspace, profile: str) -> None:
        """DEVIATIONS D16 (both profiles): the size of the new file is computed before it is
        built; over the limit the call fails with it and the stored bytes stay."""
        fs = await workspace.provider(profile=profile, write_max_size=1000)
        await workspace.put("a.txt", b"ab\n" * 100)
        target = await fs.resolve("a.txt")
        dp = target.display_path
        await _fails(fs.edit_text(target, _edit("a", "a" * 30, replace_all=True)), "FS_IO_ERROR",
                     f'cannot edit "{dp}": the file would be 3200 bytes, more than the limit of 1000 bytes')
        await _fails(fs.write_text(target, "é" * 501), "FS_IO_ERROR",
                     f'cannot write "{dp}": the file would be 1002 bytes, more than the limit of 1000 bytes')
        await _fails(fs.write_text(await fs.resolve("new.txt"), "x" * 1001, CreateIfAbsent()), "FS_IO_ERROR",
                     f'cannot write "{workspace.path("new.txt")}": the file would be 1001 bytes, more than the limit of 1000 bytes')
        assert await workspace.files() == {"a.txt": b"ab\n" * 100}
        await fs.edit_text(target, _edit("a", "a" * 8, replace_all=True))
        assert len(await workspace.get("a.txt") or b"") == 1000
        await fs.write_text(target, "x" * 1000)
        assert await workspace.get("a.txt") == b"x" * 1000

    async def test_edit_keeps_the_not_found_search_basis(self, workspace: Workspace) -> None:
        """The tool layer's near-match hint (D5) needs the searched text."""
        fs = await workspace.provider()
        await workspace.put("a.txt", b"x\r\n\tindented\r\n")
        err = await _fails(fs.edit_text(await fs.resolve("a.txt"), _edit("    indented", "y")), "FS_EDIT_NOT_FOUND")
        assert err.searched_text == "x\n\tindented\n" and err.needle == "    indented"

    @pytest.mark.parametrize(
        ("profile", "raw", "reason"),
        [
            ("default", b"ok\n" + b"a" * 9000 + b"\x00", "binary file (NUL byte at offset 9003, line 2)"),
            ("reference", b"ok\n" + b"a" * 9000 + b"\x00", "binary file"),
            ("default", b"caf\xe9\n", "invalid UTF-8 text (byte 0xE9 at offset 3, line 1)"),
            ("reference", b"caf\xe9\n", "invalid UTF-8 text"),
        ],
    )
    async def test_edit_refuses_non_text_and_leaves_it_untouched(
        self, workspace: Workspace, profile: str, raw: bytes, reason: str
    ) -> None:
        fs = await workspace.provider(profile=profile)
        await workspace.put("bad.txt", raw)
        target = await fs.resolve("bad.txt")
        await _fails(fs.edit_text(target, _edit("a", "b")), "FS_NOT_TEXT", f'cannot edit "{target.display_path}": {reason}')
        assert await workspace.get("bad.txt") == raw

    async def test_edit_refuses_directories_before_the_version(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("dir/x.txt", b"x")
        for rel in ("dir", "."):
            target = await fs.resolve(rel)
            await _fails(
                fs.edit_text(target, _edit("a", "b"), EditIntent(Version("bogus"))),
                "FS_NOT_REGULAR_FILE",
                f'cannot edit "{target.display_path}": not a regular file',
            )

    async def test_edit_abort_ordering(self, workspace: Workspace) -> None:
        """§2.12: existence and version failures win over a pre-aborted signal."""
        fs = await workspace.provider()
        await workspace.put("a.txt", b"alpha\n")
        target = await fs.resolve("a.txt")
        aborted = AbortSignal.aborted_signal()
        await _fails(fs.edit_text(target, _edit("zzz", "b"), signal=aborted), "FS_ABORTED", "edit aborted")
        await _fails(fs.edit_text(target, _edit("alpha", "b"), EditIntent(Version("old")), signal=aborted), "FS_STALE_VERSION")
        await _fails(fs.edit_text(await fs.resolve("nope.txt"), _edit("a", "b"), signal=aborted), "FS_STALE_VERSION")
        assert await workspace.get("a.txt") == b"alpha\n"

    async def test_edit_keeps_the_bom_in_the_default_profile_only(self, workspace: Workspace) -> None:
        """DEVIATIONS D1."""
        await workspace.put("d.txt", BOM + b"one\n")
        await workspace.put("r.txt", BOM + b"one\n")
        default = await workspace.provider()
        reference = await workspace.provider(profile="reference")
        outcome = await default.edit_text(await default.resolve("d.txt"), _edit("one", "two"))
        await reference.edit_text(await reference.resolve("r.txt"), _edit("one", "two"))
        assert outcome.before == "one\n" and outcome.after == "two\n"
        assert await workspace.get("d.txt") == BOM + b"two\n"
        assert await workspace.get("r.txt") == b"two\n"

    async def test_edit_of_mixed_line_endings_per_profile(self, workspace: Workspace) -> None:
        """DEVIATIONS D2: only the matched span changes in the default profile."""
        raw = b"a\r\nb\r\nc\nd\r\n"
        await workspace.put("d.txt", raw)
        await workspace.put("r.txt", raw)
        default = await workspace.provider()
        reference = await workspace.provider(profile="reference")
        await default.edit_text(await default.resolve("d.txt"), _edit("d", "D\nE"))
        await reference.edit_text(await reference.resolve("r.txt"), _edit("d", "D\nE"))
        assert await workspace.get("d.txt") == b"a\r\nb\r\nc\nD\r\nE\r\n"
        assert await workspace.get("r.txt") == b"a\r\nb\r\nc\r\nD\r\nE\r\n"

    async def test_concurrent_guarded_edits_one_wins_nothing_lost(self, workspace: Workspace) -> None:
        await workspace.put("a.txt", b"count\nEND\n")
        providers = [await workspace.provider(), await workspace.provider()]
        target = await providers[0].resolve("a.txt")
        seen = await providers[0].stat(target)
        assert seen is not None
        results: dict[int, Any] = {}

        async def attempt(index: int) -> None:
            fs = providers[index % 2]
            try:
                results[index] = await fs.edit_text(target, _edit("END\n", f"edit-{index}\nEND\n"), EditIntent(seen.version))
            except FsError as err:
                results[index] = err

        async with anyio.create_task_group() as tg:
            for index in range(4):
                tg.start_soon(attempt, index)
        winners = [i for i, r in results.items() if not isinstance(r, FsError)]
        assert len(winners) == 1, results
        assert all(results[i].code == "FS_STALE_VERSION" for i in results if i not in winners)
        assert await workspace.get("a.txt") == f"count\nedit-{winners[0]}\nEND\n".encode()

    async def test_concurrent_unguarded_edits_all_apply(self, workspace: Workspace) -> None:
        await workspace.put("a.txt", b"END\n")
        providers = [await workspace.provider(), await workspace.provider(), await workspace.provider()]
        target = await providers[0].resolve("a.txt")

        async def attempt(index: int) -> None:
            await providers[index % 3].edit_text(target, _edit("END\n", f"edit-{index}\nEND\n"))

        async with anyio.create_task_group() as tg:
            for index in range(6):
                tg.start_soon(attempt, index)
        final = (await workspace.get("a.txt") or b"").decode()
        assert sorted(final.splitlines()) == sorted([f"edit-{i}" for i in range(6)] + ["END"])

    async def test_concurrent_write_and_edit_at_one_version(self, workspace: Workspace) -> None:
        await workspace.put("a.txt", b"base\n")
        first, second = await workspace.provider(), await workspace.provider()
        target = await first.resolve("a.txt")
        seen = await first.stat(target)
        assert seen is not None
        results: dict[str, Any] = {}

        async def write() -> None:
            try:
                results["write"] = await first.write_text(target, "written\n", ReplaceIfVersion(seen.version))
            except FsError as err:
                results["write"] = err

        async def edit() -> None:
            try:
                results["edit"] = await second.edit_text(target, _edit("base", "edited"), EditIntent(seen.version))
            except FsError as err:
                results["edit"] = err

        async with anyio.create_task_group() as tg:
            tg.start_soon(write)
            tg.start_soon(edit)
        losers = [n for n, r in results.items() if isinstance(r, FsError)]
        assert len(losers) == 1 and results[losers[0]].code == "FS_STALE_VERSION", results
        assert await workspace.get("a.txt") == (b"edited\n" if losers == ["write"] else b"written\n")
