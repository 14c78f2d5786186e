"""``glob``/``grep`` behaviours that no other test pinned, on every provider where they apply
(the local disk, memory and S3 through the mirror): each test fails if its behaviour breaks.

* on a mirrored provider the raw-output cap (``rawOutputMaxBytes``, §6.3) is shared by all of a
  ``grep``'s batches (``mirror_batch_bytes``), as one ripgrep run's output would be;
* a reference-profile ``glob`` over the raw cap is the overflow error (§6.1/§6.3), not a page;
* a file named ``..foo`` in the workspace is shown relative (§6.3 "Display paths");
* equal modification times list in path order (the mirror's tie order) in both profiles;
* ``grep`` of a subdirectory honours the ignore rules of the root above it;
* a file deleted between the mirror's listing and its copy does not fail the search;
* the mirror's own rules: an empty ``.git`` marker and ``.git/info/exclude`` count, paths a
  local disk cannot hold are left out, error messages show display paths, and the mirror is
  removed after every search.
"""

from __future__ import annotations

import os
import re
import tempfile
import time
from typing import Any

import anyio
import pytest

import dsh_fs
from dsh_fs import Session
from dsh_fs.testing.fixtures import LocalFixtures, MemoryFixtures, S3Fixtures
from dsh_fs.testing.workspaces import MemoryWorkspace, Workspace
from dsh_fs.tool_fs_search import mirror as mirror_module

def _matches(text: str) -> str:
    """``text`` without S13's closing line on the files ignore rules left out (pinned in
    tests/contract/test_search_misses.py); what these tests pin is which files were searched."""
    return re.sub(r"\n\n\((?:more than )?\d+ files? (?:was|were) not searched: .*\)$", "", text)


class Pins:
    """Expectations shared by all providers; mixed with a ``workspace`` fixture."""

    pytestmark = [pytest.mark.anyio]


    async def _ctx(self, workspace: Workspace, profile: str, **config: Any) -> dsh_fs.Context:
        return dsh_fs.create_context(provider=await workspace.provider(profile=profile), profile=profile, **config)

    def _session(self, workspace: Workspace, rel: str = "") -> Session:
        session = Session()
        session.cwd = workspace.path(rel) if rel else workspace.root
        return session

    async def _run(self, ctx: dsh_fs.Context, workspace: Workspace, tool: str, **args: Any) -> Any:
        return await ctx.tools.execute(tool, args, session=self._session(workspace))

    async def test_reference_glob_over_raw_cap_is_the_overflow_error(self, workspace: Workspace) -> None:
        for name in ("a.txt", "b.txt", "c.txt", "d.txt"):
            await workspace.put(name, b"x")
        reference = await self._ctx(workspace, "reference", raw_output_max_bytes=12)
        result = await self._run(reference, workspace, "glob", pattern="*.txt")
        assert result.error is not None and result.error.code == "SEARCH_RAW_OUTPUT_OVERFLOW"
        assert result.text == (
            "Error: glob produced more raw output than the bash executor retained within the 12-byte cap; "
            "narrow pattern, path, or include and retry"
        )
        default = await self._ctx(workspace, "default", raw_output_max_bytes=12)
        paged = await self._run(default, workspace, "glob", pattern="*.txt")  # S4: the first page instead
        assert paged.error is None and "the search stopped after 12 bytes of ripgrep output" in paged.text

    async def test_dot_dot_name_is_shown_relative(self, workspace: Workspace) -> None:
        await workspace.put("..foo", b"needle\n")
        await workspace.put("a.txt", b"needle\n")
        ctx = await self._ctx(workspace, "default")
        for path in (None, workspace.root):
            args = {} if path is None else {"path": path}
            globbed = await self._run(ctx, workspace, "glob", pattern="*", **args)
            assert sorted(globbed.text.split("\n")) == ["..foo", "a.txt"]
        grepped = await self._run(ctx, workspace, "grep", pattern="needle", path=workspace.path("..foo"))
        assert grepped.text == "Found 1 match\n\n..foo\nLine 1: needle"  # (a hidden name: searched when named)

    async def test_grep_of_subdirectory_honours_root_ignore_rules(self, workspace: Workspace) -> None:
        await workspace.put(".git/HEAD", b"ref: main\n")
        await workspace.put(".gitignore", b"skip.txt\n")
        await workspace.put(".ignore", b"*.log\n")
        await workspace.put("sub/skip.txt", b"needle\n")
        await workspace.put("sub/run.log", b"needle\n")
        await workspace.put("sub/keep.txt", b"needle\n")
        ctx = await self._ctx(workspace, "default")
        for path in ("sub", workspace.path("sub")):
            result = await self._run(ctx, workspace, "grep", pattern="needle", path=path)
            assert _matches(result.text) == "Found 1 match\n\nsub/keep.txt\nLine 1: needle"
        inside = await ctx.tools.execute("grep", {"pattern": "needle"}, session=self._session(workspace, "sub"))
        assert _matches(inside.text) == "Found 1 match\n\nkeep.txt\nLine 1: needle"

    async def test_empty_directory_searches_find_nothing(self, workspace: Workspace) -> None:
        await workspace.put("a.txt", b"needle\n")
        await workspace.mkdir("empty")
        for profile in ("default", "reference"):
            ctx = await self._ctx(workspace, profile)
            assert (await self._run(ctx, workspace, "glob", pattern="*", path="empty")).text == "No files found"
            assert (await self._run(ctx, workspace, "grep", pattern="needle", path="empty")).text == "No matches found"


class MirrorPins(Pins):
    """Expectations of the providers searched through a mirror (memory, S3)."""

    async def test_raw_cap_is_shared_by_all_batches(self, workspace: Workspace) -> None:
        for index in range(8):
            await workspace.put(f"f{index}.txt", b"needle " + b"y" * 100 + b"\n")
        one = await self._ctx(workspace, "reference", mirror_batch_bytes=1)  # one file a batch
        single = await self._run(one, workspace, "grep", pattern="needle", path="f0.txt")
        assert single.error is None  # one batch alone stays well under the cap below
        cap = 3000
        # every batch's output is under the cap, their sum is not
        reference = await self._ctx(workspace, "reference", mirror_batch_bytes=1, raw_output_max_bytes=cap)
        result = await self._run(reference, workspace, "grep", pattern="needle", path="f0.txt")
        assert result.error is None
        whole = await self._run(reference, workspace, "grep", pattern="needle")
        assert whole.error is not None and whole.error.code == "SEARCH_RAW_OUTPUT_OVERFLOW", whole.text
        default = await self._ctx(workspace, "default", mirror_batch_bytes=1, raw_output_max_bytes=cap)
        paged = await self._run(default, workspace, "grep", pattern="needle")
        assert paged.error is None
        assert paged.text.startswith("Found ") and " of more than " in paged.text.split("\n")[0], paged.text
        assert f"(The search stopped after {cap} bytes of ripgrep output" in paged.text
        assert "f7.txt" not in paged.text
        roomy = await self._ctx(workspace, "default", mirror_batch_bytes=1, raw_output_max_bytes=10 * cap)
        assert (await self._run(roomy, workspace, "grep", pattern="needle")).text.startswith("Found 8 matches\n\n")

    async def test_equal_times_keep_path_order(self, workspace: Workspace) -> None:
        groups = [["m.txt"], ["c.txt", "a.txt", "b.txt"], ["0.txt"]]
        await _put_groups(workspace, groups)
        fs = await workspace.provider()
        root = await fs.resolve(".")
        times = {entry.rel: entry.mtime_ns async for entry in fs.walk(root) if entry.type == "file"}
        assert times["a.txt"] == times["b.txt"] == times["c.txt"] > times["m.txt"]  # the ties are real
        assert times["0.txt"] > times["a.txt"]
        reference = await self._ctx(workspace, "reference")
        oldest = await self._run(reference, workspace, "glob", pattern="*.txt")
        assert oldest.text.split("\n") == ["m.txt", "a.txt", "b.txt", "c.txt", "0.txt"]
        default = await self._ctx(workspace, "default")
        newest = await self._run(default, workspace, "glob", pattern="*.txt")
        assert newest.text.split("\n") == ["0.txt", "a.txt", "b.txt", "c.txt", "m.txt"]

    async def test_file_deleted_before_its_copy_does_not_fail(self, workspace: Workspace,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
        await workspace.put("gone.txt", b"needle gone\n")
        await workspace.put("kept.txt", b"needle kept\n")
        original = mirror_module.Mirror.fill
        deleted: list[bool] = []

        async def fill_after_delete(self: mirror_module.Mirror, hosts: list[str]) -> None:
            if not deleted:  # listed by ripgrep already: now another process deletes it
                await workspace.delete("gone.txt")
                deleted.append(True)
            await original(self, hosts)

        monkeypatch.setattr(mirror_module.Mirror, "fill", fill_after_delete)
        for profile in ("default", "reference"):
            deleted.clear()
            await workspace.put("gone.txt", b"needle gone\n")
            ctx = await self._ctx(workspace, profile, mirror_batch_bytes=1)
            result = await self._run(ctx, workspace, "grep", pattern="needle")
            assert deleted and result.error is None, result.text
            assert result.text == "Found 1 match\n\nkept.txt\nLine 1: needle kept"

    async def test_file_deleted_after_the_walk_does_not_fail(self, workspace: Workspace) -> None:
        """Deleted once the mirror's walk listed it, before its bytes are read: an ignore file
        (copied at once) or an ordinary one (copied with its batch)."""
        for name in ("gone.txt", "sub/.gitignore", "sub/gone.txt"):
            for profile in ("default", "reference"):
                await workspace.put(".gitignore", b"*.log\n")
                await workspace.put("kept.txt", b"needle kept\n")
                await workspace.put(name, b"needle gone\n")
                provider = await workspace.provider(profile=profile)
                walk = provider.walk
                deleted: list[str] = []

                async def walk_then_delete(*args: Any, _walk: Any = walk, _name: str = name,
                                           _deleted: list[str] = deleted, **kwargs: Any) -> Any:
                    async for entry in _walk(*args, **kwargs):
                        yield entry
                    await workspace.delete(_name)  # another process, after the listing
                    _deleted.append(_name)

                provider.walk = walk_then_delete  # type: ignore[method-assign]
                ctx = dsh_fs.create_context(provider=provider, profile=profile)
                result = await self._run(ctx, workspace, "grep", pattern="needle")
                assert deleted == [name] and result.error is None, (name, profile, result.text)
                assert _matches(result.text) == "Found 1 match\n\nkept.txt\nLine 1: needle kept", (name, profile)

    async def test_git_exclude_and_empty_git_directory_count(self, workspace: Workspace) -> None:
        await workspace.mkdir(".git")  # an empty marker: the tree is a repository, .gitignore applies
        await workspace.put(".gitignore", b"skip.txt\n")
        await workspace.put("skip.txt", b"needle\n")
        await workspace.put("keep.txt", b"needle\n")
        ctx = await self._ctx(workspace, "default")
        assert _matches((await self._run(ctx, workspace, "grep", pattern="needle")).text) == (
            "Found 1 match\n\nkeep.txt\nLine 1: needle")
        await workspace.put(".git/info/exclude", b"*.tmp\n")
        await workspace.put("sub/x.tmp", b"needle\n")
        await workspace.put("sub/y.txt", b"needle\n")
        for path in (None, "sub"):
            args = {} if path is None else {"path": path}
            result = await self._run(ctx, workspace, "grep", pattern="needle", **args)
            shown = _matches(result.text)
            assert "x.tmp" not in shown and "sub/y.txt\nLine 1: needle" in shown, result.text

    async def test_mirror_is_removed_after_each_search(self, workspace: Workspace, tmp_path: Any,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
        await workspace.put("a.txt", b"needle\n")
        place = os.path.join(os.fspath(tmp_path), "tmp")
        os.mkdir(place)
        monkeypatch.setattr(tempfile, "tempdir", place)
        ctx = await self._ctx(workspace, "default")
        assert (await self._run(ctx, workspace, "glob", pattern="*.txt")).text == "a.txt"
        assert (await self._run(ctx, workspace, "grep", pattern="needle")).text.startswith("Found 1 match")
        assert (await self._run(ctx, workspace, "grep", pattern="(")).error is not None
        assert os.listdir(place) == []

    async def test_reference_error_shows_display_paths(self, workspace: Workspace) -> None:
        reference = await self._ctx(workspace, "reference")
        missing = workspace.path("nope")
        result = await self._run(reference, workspace, "grep", pattern="x", path=missing)
        assert result.text == (
            f"Error: grep search failed (exit 2): rg: {missing}: IO error for operation on {missing}: "
            "No such file or directory (os error 2)")

    async def test_names_a_disk_cannot_hold_are_left_out(self, workspace: Workspace) -> None:
        long = "l" * 300 + ".txt"
        await workspace.put("a.txt", b"needle a\n")
        await workspace.put(long, b"needle long\n")
        await workspace.put("z.txt", b"needle z\n")
        ctx = await self._ctx(workspace, "default")
        assert sorted((await self._run(ctx, workspace, "glob", pattern="*.txt")).text.split("\n")) == ["a.txt", "z.txt"]
        assert (await self._run(ctx, workspace, "grep", pattern="needle")).text == (
            "Found 2 matches\n\na.txt\nLine 1: needle a\n\nz.txt\nLine 1: needle z")


    async def test_batches_bound_the_bytes_copied_at_a_time(self, workspace: Workspace,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
        for name in ("a.txt", "b.txt", "c.txt", "d.txt"):
            await workspace.put(name, b"needle\n")  # 7 bytes each
        original = mirror_module.Mirror.fill
        seen: list[list[str]] = []

        async def recording_fill(self: mirror_module.Mirror, hosts: list[str]) -> None:
            seen.append([host[len(self.root):] for host in hosts])
            await original(self, hosts)

        monkeypatch.setattr(mirror_module.Mirror, "fill", recording_fill)
        ctx = await self._ctx(workspace, "default", mirror_batch_bytes=14)  # two files fill a batch exactly
        result = await self._run(ctx, workspace, "grep", pattern="needle")
        assert result.text.startswith("Found 4 matches\n\n")
        root = workspace.path("")
        assert seen == [[f"{root.rstrip('/')}/a.txt", f"{root.rstrip('/')}/b.txt"],
                        [f"{root.rstrip('/')}/c.txt", f"{root.rstrip('/')}/d.txt"]]
        one = await self._ctx(workspace, "default", mirror_batch_bytes=1)  # emptied between batches: no byte left
        assert (await self._run(one, workspace, "grep", pattern="^n")).text.startswith("Found 4 matches\n\n")


    async def test_copies_close_their_files(self, workspace: Workspace) -> None:
        for index in range(40):
            await workspace.put(f"f{index:02}.txt", b"needle\n")
        ctx = await self._ctx(workspace, "default")
        assert (await self._run(ctx, workspace, "grep", pattern="needle")).text.startswith("Found 40 matches")
        before = len(os.listdir("/proc/self/fd"))
        assert (await self._run(ctx, workspace, "grep", pattern="needle")).text.startswith("Found 40 matches")
        assert len(os.listdir("/proc/self/fd")) < before + 20  # not one left open per file copied


async def _put_groups(workspace: Workspace, groups: list[list[str]]) -> None:
    """Write ``groups`` of files: equal modification times within a group, later ones after."""
    if isinstance(workspace, MemoryWorkspace):
        base = time.time_ns()
        for index, group in enumerate(groups):
            for name in group:
                workspace.store.put(name, b"x", mtime_ns=base + index * 10**9)
        return
    for index, group in enumerate(groups):  # S3: LastModified has whole seconds
        if index:
            await anyio.sleep(1.1)
        for _ in range(30):  # the group ties once its puts all fall in one second (a busy machine may retry)
            await anyio.sleep(1.0 - time.time() % 1.0 + 0.02)  # start of a second
            second = int(time.time())
            for name in group:
                await workspace.put(name, b"x")
            if int(time.time()) == second:  # the server stamped every put within that second
                break
        else:
            raise AssertionError(f"30 tries to put {group} within one second")


class TestLocal(LocalFixtures, Pins):
    pass


class TestMemory(MemoryFixtures, MirrorPins):
    pass


class TestS3(S3Fixtures, MirrorPins):
    pass
