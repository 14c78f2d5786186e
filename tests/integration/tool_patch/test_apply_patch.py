"""The ``apply_patch`` tool through the registry on the local disk (``dsh_fs.tool_patch``).

Covers the executor's contract (docs/design/EDITING-FACES-DESIGN.md §6.2) as a model meets it: the whole
patch checked first (every file observed at its current version, every hunk located), nothing
written unless all of it applies — proved by byte-level snapshots of the workspace — and each
file then written atomically; the issue's failure cases (a hunk whose context occurs twice, a
stale file, a patch that deletes then re-creates, a rename onto an existing file, a patch half
of whose files do not exist), each with its exact text and code; a write failing midway
(injected) reported precisely; CRLF/BOM bytes kept by updates and moves; the policy's
observations after the patch; containment; the profiles (D9 remedies, D11).
Not covered here: the engine's parsing and locating rules (tests/unit/patch/), the
seam primitives (the provider contract), the adapters (tests/unit/adapters/test_editing_adapters.py).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import anyio
import pytest

import dsh_fs
from dsh_fs import AbortSignal, Session
from dsh_fs.fs.errors import io_error
from dsh_fs.fs_local import LocalFileSystem
from filekit import get, put

pytestmark = pytest.mark.anyio

BOM = b"\xef\xbb\xbf"


def envelope(*lines: str) -> str:
    return "\n".join(["*** Begin Patch", *lines, "*** End Patch"]) + "\n"


@pytest.fixture
def patch_ctx(make_ctx: Callable[..., dsh_fs.Context]) -> Callable[..., dsh_fs.Context]:
    return lambda **kw: make_ctx(faces=["apply_patch"], **kw)


async def call(ctx: dsh_fs.Context, session: Session, patch: str, **kw: Any) -> Any:
    return await ctx.tools.execute("apply_patch", {"input": patch}, session=session, **kw)


async def read(ctx: dsh_fs.Context, session: Session, *paths: str) -> None:
    for path in paths:
        result = await ctx.tools.execute("read", {"file_path": path}, session=session)
        assert not result.is_error, result.text


async def test_a_patch_adds_updates_moves_and_deletes(ws: str, patch_ctx: Any) -> None:
    # DEVIATIONS E15
    put(f"{ws}/a.txt", "one\ntwo\nthree\n")
    put(f"{ws}/old/b.txt", "x\ny\n")
    put(f"{ws}/gone.txt", "bye\n")
    ctx, session = patch_ctx(), Session(cwd=ws)
    await read(ctx, session, "a.txt", "old/b.txt", "gone.txt")
    result = await call(ctx, session, envelope(
        "*** Add File: new/c.txt", "+hello", "+world",
        "*** Update File: a.txt", "@@", " one", "-two", "+TWO",
        "*** Delete File: gone.txt",
        "*** Update File: old/b.txt", "*** Move to: moved/b.txt", "@@", " x", "-y", "+Y",
    ))
    assert not result.is_error, result.text
    assert result.text == (
        "Success. Updated the following files:\n"
        f"A {ws}/new/c.txt\nM {ws}/a.txt\nM {ws}/moved/b.txt\nD {ws}/gone.txt\n"
    )
    assert get(f"{ws}/new/c.txt") == b"hello\nworld\n"
    assert get(f"{ws}/a.txt") == b"one\nTWO\nthree\n"
    assert get(f"{ws}/moved/b.txt") == b"x\nY\n"
    assert not os.path.exists(f"{ws}/gone.txt") and not os.path.exists(f"{ws}/old/b.txt")
    assert [d["path"] for d in result.meta["diffs"]] == [f"{ws}/new/c.txt", f"{ws}/a.txt", f"{ws}/gone.txt",
                                                         f"{ws}/moved/b.txt"]  # patch order
    assert result.meta["diffs"][1] == {"path": f"{ws}/a.txt", "oldText": "one\ntwo\nthree",
                                       "newText": "one\nTWO\nthree"}
    # the patch's writes are observations: the moved and added files may be edited at once
    edited = await ctx.tools.execute("edit", {"file_path": "moved/b.txt", "old_string": "Y", "new_string": "Z"},
                                     session=session)
    assert not edited.is_error, edited.text
    again = await call(ctx, session, envelope("*** Update File: new/c.txt", "@@", "-hello", "+hi"))
    assert not again.is_error, again.text
    # and the deleted file is known to be absent: a write creates it (D8)
    created = await ctx.tools.execute("write", {"file_path": "gone.txt", "content": "back\n"}, session=session)
    assert created.text.endswith("Created file\n</content>")


async def test_updates_and_moves_keep_crlf_and_the_bom(ws: str, patch_ctx: Any) -> None:
    put(f"{ws}/win.txt", BOM + b"alpha\r\nbeta\r\ngamma\r\n")
    put(f"{ws}/mv.txt", BOM + b"one\r\ntwo\r\n")
    ctx, session = patch_ctx(), Session(cwd=ws)
    await read(ctx, session, "win.txt", "mv.txt")
    result = await call(ctx, session, envelope(
        "*** Update File: win.txt", "@@", " alpha", "-beta", "+BETA", "+added",
        "*** Update File: mv.txt", "*** Move to: sub/mv.txt", "@@", "-two", "+TWO",
    ))
    assert not result.is_error, result.text
    assert get(f"{ws}/win.txt") == BOM + b"alpha\r\nBETA\r\nadded\r\ngamma\r\n"
    assert get(f"{ws}/sub/mv.txt") == BOM + b"one\r\nTWO\r\n"


async def test_an_unread_file_refuses_the_whole_patch(ws: str, patch_ctx: Any, tree: Any) -> None:
    # DEVIATIONS E14
    put(f"{ws}/a.txt", "a\n")
    put(f"{ws}/b.txt", "b\n")
    ctx, session = patch_ctx(), Session(cwd=ws)
    await read(ctx, session, "a.txt")
    before = tree(ws)
    result = await call(ctx, session, envelope(
        "*** Update File: a.txt", "@@", "-a", "+A",
        "*** Update File: b.txt", "@@", "-b", "+B",
        "*** Add File: c.txt", "+c",
    ))
    assert result.is_error and result.error is not None and result.error.code == "FS_NOT_OBSERVED"
    assert result.text == f'Error: update requires reading "{ws}/b.txt" first — read the file, then retry'
    assert tree(ws) == before


# -- the failure cases: each leaves every file untouched and says why ---------------------

async def test_a_hunk_whose_context_occurs_twice(ws: str, patch_ctx: Any, tree: Any) -> None:
    # DEVIATIONS E2
    put(f"{ws}/dup.py", "def f():\n    return 1\n\ndef g():\n    return 1\n")
    put(f"{ws}/ok.txt", "ok\n")
    ctx, session = patch_ctx(), Session(cwd=ws)
    await read(ctx, session, "dup.py", "ok.txt")
    before = tree(ws)
    result = await call(ctx, session, envelope(
        "*** Update File: ok.txt", "@@", "-ok", "+OK",
        "*** Update File: dup.py", "@@", "-    return 1", "+    return 2",
    ))
    assert result.error is not None and result.error.code == "FS_AMBIGUOUS_EDIT"
    assert result.text == (
        f"Error: Expected lines match 2 places in {ws}/dup.py (lines 2, 5); add context lines or an @@ line "
        "so that they match one place:\n    return 1"
    )
    assert tree(ws) == before


async def test_a_file_changed_between_observation_and_patch(ws: str, patch_ctx: Any, tree: Any) -> None:
    # DEVIATIONS E14
    put(f"{ws}/a.txt", "a\n")
    put(f"{ws}/b.txt", "b\n")
    ctx, session = patch_ctx(), Session(cwd=ws)
    await read(ctx, session, "a.txt", "b.txt")
    put(f"{ws}/b.txt", "b\nchanged by someone else\n")
    before = tree(ws)
    result = await call(ctx, session, envelope(
        "*** Update File: a.txt", "@@", "-a", "+A",
        "*** Delete File: b.txt",
    ))
    assert result.error is not None and result.error.code == "FS_STALE_VERSION"
    assert result.text == (  # what changed since the read (DEVIATIONS D30)
        f'Error: cannot delete "{ws}/b.txt": file changed since it was read — re-read the file, then retry\n'
        "What changed since you last saw it (unified diff: - as you saw it, + as it is now):\n"
        f"--- {ws}/b.txt (as you saw it)\n+++ {ws}/b.txt (now)\n@@ -1 +1,2 @@\n b\n+changed by someone else")
    assert tree(ws) == before


async def test_a_patch_that_deletes_then_recreates_a_file(ws: str, patch_ctx: Any, tree: Any) -> None:
    # DEVIATIONS E6
    put(f"{ws}/a.txt", "a\n")
    ctx, session = patch_ctx(), Session(cwd=ws)
    await read(ctx, session, "a.txt")
    before = tree(ws)
    result = await call(ctx, session, envelope("*** Delete File: a.txt", "*** Add File: a.txt", "+new"))
    assert result.is_error and result.error is None  # a plain error: the patch itself is wrong (E6)
    assert result.text == f"Error: The patch touches {ws}/a.txt more than once"
    assert tree(ws) == before


async def test_a_rename_onto_an_existing_file(ws: str, patch_ctx: Any, tree: Any) -> None:
    # DEVIATIONS E5
    put(f"{ws}/a.txt", "a\n")
    put(f"{ws}/b.txt", "b\n")
    ctx, session = patch_ctx(), Session(cwd=ws)
    await read(ctx, session, "a.txt", "b.txt")
    before = tree(ws)
    result = await call(ctx, session, envelope("*** Update File: a.txt", "*** Move to: b.txt", "@@", "-a", "+A"))
    assert result.error is not None and result.error.code == "FS_NOT_OBSERVED"
    assert result.text == f"Error: Failed to move {ws}/a.txt to {ws}/b.txt: the destination already exists"
    os.mkdir(f"{ws}/dir")
    before = tree(ws)
    onto_dir = await call(ctx, session, envelope("*** Update File: a.txt", "*** Move to: dir", "@@", "-a", "+A"))
    assert onto_dir.text == f"Error: Failed to move {ws}/a.txt to {ws}/dir: the destination already exists"
    assert tree(ws) == before


async def test_a_patch_half_of_whose_files_do_not_exist(ws: str, patch_ctx: Any, tree: Any) -> None:
    # DEVIATIONS E10
    put(f"{ws}/a.txt", "a\n")
    put(f"{ws}/c.txt", "c\n")
    ctx, session = patch_ctx(), Session(cwd=ws)
    await read(ctx, session, "a.txt", "c.txt")
    before = tree(ws)
    result = await call(ctx, session, envelope(
        "*** Update File: a.txt", "@@", "-a", "+A",
        "*** Update File: b.txt", "@@", "-b", "+B",
        "*** Update File: c.txt", "@@", "-c", "+C",
        "*** Delete File: d.txt",
    ))
    assert result.error is not None and result.error.code == "FS_NOT_FOUND"
    assert result.text == (
        f"Error: Failed to read file to update {ws}/b.txt: file not found\n"
        f"Failed to delete file {ws}/d.txt: file not found"
    )
    assert tree(ws) == before


async def test_every_reason_is_listed_in_patch_order(ws: str, tree: Any) -> None:
    # DEVIATIONS E10
    put(f"{ws}/seen.txt", "seen\n")
    put(f"{ws}/unseen.txt", "unseen\n")
    put(f"{ws}/dir/x", "x")
    ctx = dsh_fs.create_context(provider=LocalFileSystem(cwd=ws, root=ws), faces=["apply_patch"])
    session = Session(cwd=ws)
    await read(ctx, session, "seen.txt")
    before = tree(ws)
    result = await call(ctx, session, envelope(
        "*** Update File: seen.txt", "@@", "-nope", "+x",
        "*** Update File: unseen.txt", "@@", "-nope", "+x",
        "*** Add File: dir", "+x",
        "*** Delete File: ../outside.txt",
    ))
    assert result.text.split("\n") == [
        f"Error: Failed to find expected lines in {ws}/seen.txt:",
        "nope",
        f'update requires reading "{ws}/unseen.txt" first — read the file, then retry',
        f'cannot write "{ws}/dir": not a regular file',
        f'cannot resolve "{os.path.dirname(ws)}/outside.txt": outside the workspace "{ws}"',
    ]
    assert result.error is not None and result.error.code == "FS_EDIT_NOT_FOUND"
    assert tree(ws) == before


async def test_a_symlinked_name_to_delete_or_move_refuses_the_whole_patch(ws: str, patch_ctx: Any, tree: Any) -> None:
    """E17 is checked with the rest of the patch: a deterministic refusal, not a write failing
    midway after earlier files were written."""
    put(f"{ws}/a.txt", "a\n")
    put(f"{ws}/b.txt", "b\n")
    os.symlink("b.txt", f"{ws}/link")
    ctx, session = patch_ctx(), Session(cwd=ws)
    await read(ctx, session, "a.txt", "link")
    before = tree(ws)
    deleting = await call(ctx, session, envelope("*** Update File: a.txt", "@@", "-a", "+A", "*** Delete File: link"))
    assert deleting.error is not None and deleting.error.code == "FS_NOT_REGULAR_FILE"
    assert deleting.text == f'Error: cannot delete "{ws}/link": not a regular file'
    assert tree(ws) == before
    moving = await call(ctx, session, envelope(
        "*** Update File: a.txt", "@@", "-a", "+A",
        "*** Update File: link", "*** Move to: c.txt", "@@", "-b", "+B",
    ))
    assert moving.error is not None and moving.error.code == "FS_NOT_REGULAR_FILE"
    assert moving.text == f'Error: cannot rename "{ws}/link": not a regular file'
    assert tree(ws) == before
    # updating through the link in place is an ordinary write of the linked file
    updating = await call(ctx, session, envelope("*** Update File: link", "@@", "-b", "+B"))
    assert not updating.is_error, updating.text
    assert get(f"{ws}/b.txt") == b"B\n" and os.path.islink(f"{ws}/link")


async def test_a_file_and_a_file_inside_it_refuse_the_whole_patch(ws: str, patch_ctx: Any, tree: Any) -> None:
    put(f"{ws}/a.txt", "a\n")
    ctx, session = patch_ctx(), Session(cwd=ws)
    await read(ctx, session, "a.txt")
    before = tree(ws)
    result = await call(ctx, session, envelope(
        "*** Update File: a.txt", "*** Move to: q/a.txt", "@@", "-a", "+A",
        "*** Add File: q", "+q",
    ))
    assert result.is_error and result.error is None  # plain: the patch contradicts itself
    assert result.text == f"Error: Failed to add file {ws}/q: the patch adds {ws}/q/a.txt inside it"
    assert tree(ws) == before


async def test_a_malformed_patch_names_the_line(ws: str, patch_ctx: Any) -> None:
    ctx, session = patch_ctx(), Session(cwd=ws)
    result = await call(ctx, session, "*** Begin Patch\n*** Frobnicate File: a.txt\n*** End Patch\n")
    assert result.is_error and result.error is None
    assert result.text == (
        "Error: Invalid patch hunk on line 2: '*** Frobnicate File: a.txt' is not a valid hunk header. "
        "Valid hunk headers: '*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'"
    )
    empty = await call(ctx, session, "*** Begin Patch\n*** End Patch\n")
    assert (empty.text, empty.error) == ("Error: No files were modified.", None)
    assert os.listdir(ws) == []


async def test_lone_surrogates_are_refused_in_the_default_profile_only(ws: str, patch_ctx: Any) -> None:
    """D11 applies to the patch text as to write's content."""
    ctx, session = patch_ctx(), Session(cwd=ws)
    result = await call(ctx, session, envelope("*** Add File: a.txt", "+\ud800"))
    assert result.text == "Error: input must be valid Unicode text (lone surrogate U+D800 at index 37)"
    assert os.listdir(ws) == []
    ref = patch_ctx(profile="reference")
    await call(ref, session, envelope("*** Add File: a.txt", "+\ud800"))
    assert get(f"{ws}/a.txt") == "\ufffd\n".encode()


async def test_the_reference_profile_has_no_remedies(ws: str, patch_ctx: Any) -> None:
    put(f"{ws}/a.txt", "a\n")
    ctx, session = patch_ctx(profile="reference"), Session(cwd=ws)
    result = await call(ctx, session, envelope("*** Delete File: a.txt"))
    assert result.text == f'Error: edit requires reading "{ws}/a.txt" first'


async def test_an_aborted_call_writes_nothing(ws: str, patch_ctx: Any, tree: Any) -> None:
    put(f"{ws}/a.txt", "a\n")
    ctx, session = patch_ctx(), Session(cwd=ws)
    await read(ctx, session, "a.txt")
    before = tree(ws)
    result = await call(ctx, session, envelope("*** Update File: a.txt", "@@", "-a", "+A", "*** Add File: b.txt", "+b"),
                        signal=AbortSignal.aborted_signal())
    assert result.error is not None and result.error.code == "FS_ABORTED"
    assert tree(ws) == before


async def test_without_the_policy_the_patch_is_still_checked_whole(ws: str, patch_ctx: Any, tree: Any) -> None:
    put(f"{ws}/a.txt", "a\n")
    ctx, session = patch_ctx(policy=False), Session(cwd=ws)
    before = tree(ws)
    bad = await call(ctx, session, envelope("*** Update File: a.txt", "@@", "-a", "+A", "*** Delete File: b.txt"))
    assert bad.is_error and tree(ws) == before
    good = await call(ctx, session, envelope("*** Update File: a.txt", "@@", "-a", "+A"))
    assert not good.is_error and get(f"{ws}/a.txt") == b"A\n"


# -- a write that fails midway ---------------------------------------------------------------

class FailingSecondWrite(LocalFileSystem):
    """The local provider, except that its second mutation fails with an I/O error (a full
    disk, say) — after the patch was checked whole."""

    def __init__(self, fail_at: int = 2, **kw: Any) -> None:
        super().__init__(**kw)
        self.mutations = 0
        self.fail_at = fail_at

    async def _count(self, display: str) -> None:
        self.mutations += 1
        if self.mutations == self.fail_at:
            raise io_error("write", display, "No space left on device")

    async def write_text(self, target: Any, content: str, expected: Any = None, *, signal: Any = None) -> Any:
        await self._count(target.display_path)
        return await super().write_text(target, content, expected, signal=signal)

    async def rename(self, source: Any, dest: Any, expected: Any = None, *, signal: Any = None) -> Any:
        await self._count(source.display_path)
        return await super().rename(source, dest, expected, signal=signal)


@pytest.mark.parametrize("diffs_beside", [False, True])
async def test_a_write_failing_midway_is_reported_precisely(ws: str, diffs_beside: bool,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    # DEVIATIONS E10; ``diffs_beside``: as a patch over DIFF_ON_LOOP_MAX, diffed in a worker thread
    from dsh_fs.tool_patch import executor

    if diffs_beside:
        monkeypatch.setattr(executor, "DIFF_ON_LOOP_MAX", 0)
    put(f"{ws}/a.txt", "a\n")
    put(f"{ws}/b.txt", "b\n")
    put(f"{ws}/c.txt", "c\n")
    ctx = dsh_fs.create_context(provider=FailingSecondWrite(cwd=ws), faces=["apply_patch"])
    session = Session(cwd=ws)
    await read(ctx, session, "a.txt", "b.txt", "c.txt")
    result = await call(ctx, session, envelope(
        "*** Update File: a.txt", "@@", "-a", "+A",
        "*** Update File: b.txt", "*** Move to: d.txt", "@@", "-b", "+B",
        "*** Delete File: c.txt",
    ), signal=AbortSignal())  # under a signal the first change is written alone: a, then b fails
    assert result.error is not None and result.error.code == "FS_IO_ERROR"
    assert result.text == "\n".join([
        f'Error: cannot write "{ws}/b.txt": No space left on device',
        "The patch was applied in part. Written:",
        f"M {ws}/a.txt",
        "Not written:",
        f"M {ws}/b.txt -> {ws}/d.txt",
        f"D {ws}/c.txt",
    ])
    assert (get(f"{ws}/a.txt"), get(f"{ws}/b.txt"), get(f"{ws}/c.txt")) == (b"A\n", b"b\n", b"c\n")
    assert not os.path.exists(f"{ws}/d.txt")


@pytest.mark.parametrize("fail_at,ops,expected", [
    (  # the first write fails: nothing was written, everything is listed as not written
        1,
        ["*** Update File: a.txt", "@@", "-a", "+A"],
        ['Error: cannot write "{ws}/a.txt": No space left on device', "No files were modified.", "Not written:",
         "M {ws}/a.txt"],
    ),
    (  # a move done (its text unchanged: one rename), then a write fails
        2,
        ["*** Update File: b.txt", "*** Move to: d.txt", "@@", " b", "*** Update File: a.txt", "@@", "-a", "+A",
         "*** Add File: n.txt", "+n"],
        ['Error: cannot write "{ws}/a.txt": No space left on device', "The patch was applied in part. Written:",
         "M {ws}/b.txt -> {ws}/d.txt", "Not written:", "M {ws}/a.txt", "A {ws}/n.txt"],
    ),
    (  # an added and a deleted file written, then a write fails
        2,
        ["*** Add File: n.txt", "+n", "*** Delete File: c.txt", "*** Update File: a.txt", "@@", "-a", "+A"],
        ['Error: cannot write "{ws}/a.txt": No space left on device', "The patch was applied in part. Written:",
         "A {ws}/n.txt", "D {ws}/c.txt", "Not written:", "M {ws}/a.txt"],
    ),
    (  # renamed, then the moved file's new text fails: the move is half done and said so
        3,
        ["*** Update File: a.txt", "@@", "-a", "+A", "*** Update File: b.txt", "*** Move to: d.txt", "@@", "-b",
         "+B"],
        ['Error: cannot write "{ws}/d.txt": No space left on device', "The patch was applied in part. Written:",
         "M {ws}/a.txt", "R {ws}/b.txt -> {ws}/d.txt", "Not written:", "M {ws}/d.txt"],
    ),
])
async def test_what_a_failed_write_reports_as_written_and_not_written(
    ws: str, fail_at: int, ops: list[str], expected: list[str]
) -> None:
    # DEVIATIONS E10
    put(f"{ws}/a.txt", "a\n")
    put(f"{ws}/b.txt", "b\n")
    put(f"{ws}/c.txt", "c\n")
    ctx = dsh_fs.create_context(provider=FailingSecondWrite(fail_at=fail_at, cwd=ws), faces=["apply_patch"])
    session = Session(cwd=ws)
    await read(ctx, session, "a.txt", "b.txt", "c.txt")
    result = await call(ctx, session, envelope(*ops))
    assert result.error is not None and result.error.code == "FS_IO_ERROR"
    assert result.text == "\n".join(row.format(ws=ws) for row in expected)


async def test_every_write_of_a_patch_is_an_observation(ws: str, patch_ctx: Any) -> None:
    put(f"{ws}/a.txt", "a\n")
    put(f"{ws}/b.txt", "b\n")
    ctx, session = patch_ctx(), Session(cwd=ws)
    await read(ctx, session, "a.txt", "b.txt")
    result = await call(ctx, session, envelope("*** Update File: a.txt", "@@", "-a", "+A",
                                               "*** Update File: b.txt", "*** Move to: d.txt", "@@", " b"))
    assert not result.is_error, result.text
    for path, old, new in (("a.txt", "A", "AA"), ("d.txt", "b", "bb")):  # updated; renamed with its text kept
        edited = await ctx.tools.execute("edit", {"file_path": path, "old_string": old, "new_string": new},
                                         session=session)
        assert not edited.is_error, edited.text
    created = await ctx.tools.execute("write", {"file_path": "b.txt", "content": "back\n"}, session=session)
    assert created.text.endswith("Created file\n</content>")  # the moved-away name is known to be absent (D8)


class CountingStats(LocalFileSystem):
    """The local provider, recording how many ``stat`` calls are in flight at once."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.now = self.most = 0

    async def stat(self, target: Any, *, signal: Any = None) -> Any:
        import anyio

        self.now += 1
        self.most = max(self.most, self.now)
        try:
            await anyio.sleep(0.01)
            return await super().stat(target, signal=signal)
        finally:
            self.now -= 1


async def test_a_patch_s_paths_are_gathered_sixteen_at_a_time(ws: str) -> None:
    fs = CountingStats(cwd=ws)
    ctx, session = dsh_fs.create_context(provider=fs, faces=["apply_patch"]), Session(cwd=ws)
    adds = [row for i in range(40) for row in (f"*** Add File: f{i}.txt", f"+{i}")]
    result = await call(ctx, session, envelope(*adds))
    assert not result.is_error, result.text
    assert fs.most == 16 and sorted(os.listdir(ws)) == sorted(f"f{i}.txt" for i in range(40))


# -- pins: the abort shield and the write-intent listener ------------------------------------------

class AbortAfterFirstWrite(LocalFileSystem):
    """The local provider, aborting the call's signal as soon as its first write is done."""

    def __init__(self, signal: AbortSignal, **kw: Any) -> None:
        super().__init__(**kw)
        self.signal = signal
        self.writes: list[str] = []

    async def write_text(self, target: Any, content: str, expected: Any = None, *, signal: Any = None) -> Any:
        done = await super().write_text(target, content, expected, signal=signal)
        self.writes.append(target.display_path)
        self.signal.abort("stop")
        import anyio

        await anyio.sleep(0.2)  # time for the abort to cancel the call, were the writes not shielded
        return done


async def test_an_abort_between_writes_never_leaves_a_patch_half_applied(ws: str) -> None:
    put(f"{ws}/a.txt", "a\n")
    put(f"{ws}/b.txt", "b\n")
    signal = AbortSignal()
    fs = AbortAfterFirstWrite(signal, cwd=ws)
    ctx, session = dsh_fs.create_context(provider=fs, faces=["apply_patch"]), Session(cwd=ws)
    await read(ctx, session, "a.txt", "b.txt")
    result = await call(ctx, session, envelope("*** Update File: a.txt", "@@", "-a", "+A", "*** Update File: b.txt",
                                               "@@", "-b", "+B", "*** Add File: c.txt", "+c"), signal=signal)
    assert not result.is_error, result.text  # begun: the writes are shielded from the abort
    assert fs.writes[0] == f"{ws}/a.txt" and signal.aborted  # the first alone; the others side by side
    assert sorted(fs.writes[1:]) == [f"{ws}/b.txt", f"{ws}/c.txt"]
    assert (get(f"{ws}/a.txt"), get(f"{ws}/b.txt"), get(f"{ws}/c.txt")) == (b"A\n", b"B\n", b"c\n")


async def test_a_refusing_write_intent_listener_is_asked_for_added_files_and_move_destinations(
    ws: str, patch_ctx: Any, tree: Any
) -> None:
    from dsh_fs.fs import FS_WRITE_INTENT, FsError
    from dsh_fs.fs.errors import FsErrorCode

    put(f"{ws}/a.txt", "a\n")
    ctx, session = patch_ctx(policy=False), Session(cwd=ws)
    asked: list[str] = []

    def refuse(target: Any, who: Any, nxt: Any) -> Any:
        asked.append(target.display_path)
        if target.display_path.endswith("/no.txt"):
            raise FsError(f'cannot write "{target.display_path}": refused here', FsErrorCode.PERMISSION_DENIED)
        return nxt()

    ctx.on(FS_WRITE_INTENT, refuse)
    before = tree(ws)
    for second in (["*** Add File: no.txt", "+n"], ["*** Update File: b.txt", "*** Move to: no.txt", "@@", "-b", "+B"]):
        if second[0].startswith("*** Update"):
            put(f"{ws}/b.txt", "b\n")
            before = tree(ws)
        asked.clear()
        result = await call(ctx, session, envelope("*** Update File: a.txt", "@@", "-a", "+A", *second))
        assert result.text == f'Error: cannot write "{ws}/no.txt": refused here', result.text
        assert asked == [f"{ws}/no.txt"] and tree(ws) == before
    ok = await call(ctx, session, envelope("*** Add File: yes.txt", "+y"))
    assert not ok.is_error and asked[-1] == f"{ws}/yes.txt" and get(f"{ws}/yes.txt") == b"y\n"


async def test_E24_the_update_size_limit_is_inclusive_and_holds_for_updates_and_moves_only(
    ws: str, patch_ctx: Any, tree: Any
) -> None:
    from dsh_fs.tool_patch.executor import UPDATE_MAX_SIZE

    assert UPDATE_MAX_SIZE == 16 * 1024 * 1024
    body = "".join(f"{i:05d}{'x' * 1018}\n" for i in range(UPDATE_MAX_SIZE // 1024))  # 1 KiB lines
    put(f"{ws}/at.txt", body)
    ctx, session = patch_ctx(policy=False), Session(cwd=ws)
    result = await call(ctx, session, envelope("*** Update File: at.txt", "@@", f"-00000{'x' * 1018}", "+first"))
    assert not result.is_error, result.text  # exactly the limit: updated
    assert get(f"{ws}/at.txt")[:12] == b"first\n00001x"
    put(f"{ws}/over.txt", body + "y")
    size = UPDATE_MAX_SIZE + 1
    before = tree(ws)
    for op in (["*** Update File: over.txt"], ["*** Update File: over.txt", "*** Move to: moved.txt"]):
        result = await call(ctx, session, envelope(*op, "@@", f"-00000{'x' * 1018}", "+first"))
        assert result.error is not None and result.error.code == "FS_IO_ERROR"
        assert result.text == (f"Error: Failed to read file to update {ws}/over.txt: the file is {size} bytes, more than "
                               "the limit of 16777216 bytes apply_patch updates; change it with edit")
        assert tree(ws) == before
    deleted = await call(ctx, session, envelope("*** Delete File: over.txt"))  # a delete is not planned on lines
    assert not deleted.is_error, deleted.text
    assert not os.path.exists(f"{ws}/over.txt")


async def test_a_directory_named_by_a_patch_is_refused_with_the_operation_s_verb(
    ws: str, patch_ctx: Any, tree: Any
) -> None:
    os.mkdir(f"{ws}/d")
    put(f"{ws}/a.txt", "a\n")
    ctx, session = patch_ctx(policy=False), Session(cwd=ws)
    before = tree(ws)
    for op, verb in ((["*** Update File: d", "@@", "-a", "+b"], "edit"),
                     (["*** Update File: d", "*** Move to: e", "@@", "-a", "+b"], "rename"),
                     (["*** Delete File: d"], "delete"),
                     (["*** Add File: d", "+x"], "write")):
        result = await call(ctx, session, envelope("*** Update File: a.txt", "@@", "-a", "+A", *op))
        assert result.error is not None and result.error.code == "FS_NOT_REGULAR_FILE", result.text
        assert result.text == f'Error: cannot {verb} "{ws}/d": not a regular file'
        assert tree(ws) == before


async def test_a_move_whose_new_text_is_over_the_size_limit_refuses_the_whole_patch(ws: str, tree: Any) -> None:
    # D16, asked of the destination before the first write (E10)
    put(f"{ws}/a.txt", "x\n")
    put(f"{ws}/big.txt", "y\n")
    ctx = dsh_fs.create_context(provider=LocalFileSystem(root=ws, cwd=ws, write_max_size=40), policy=False,
                                faces=["apply_patch"])
    grown = [f"+{'z' * 9}" for _ in range(5)]  # 50 bytes
    before = tree(ws)
    result = await call(ctx, Session(cwd=ws), envelope("*** Update File: a.txt", "@@", "-x", "+X",
                                                       "*** Update File: big.txt", "*** Move to: new.txt", "@@", "-y",
                                                       *grown))
    assert result.error is not None and result.error.code == "FS_IO_ERROR", result.text
    assert result.text == f'Error: cannot write "{ws}/new.txt": the file would be 50 bytes, more than the limit of 40 bytes'
    assert tree(ws) == before


class SlowAfterFirstWrite(LocalFileSystem):
    """The local provider, whose writes take 0.2 s more once done (the caller is cancelled meanwhile)."""

    def __init__(self, **kw: Any) -> None:
        import anyio

        super().__init__(**kw)
        self.first = anyio.Event()
        self.writes: list[str] = []

    async def write_text(self, target: Any, content: str, expected: Any = None, *, signal: Any = None) -> Any:
        import anyio

        done = await super().write_text(target, content, expected, signal=signal)
        self.writes.append(target.display_path)
        self.first.set()
        await anyio.sleep(0.2)
        return done


async def test_a_call_cancelled_during_its_writes_finishes_them(ws: str) -> None:
    import anyio

    put(f"{ws}/a.txt", "a\n")
    put(f"{ws}/b.txt", "b\n")
    fs = SlowAfterFirstWrite(cwd=ws)
    ctx, session = dsh_fs.create_context(provider=fs, faces=["apply_patch"]), Session(cwd=ws)
    await read(ctx, session, "a.txt", "b.txt")
    patch = envelope("*** Update File: a.txt", "@@", "-a", "+A", "*** Update File: b.txt", "@@", "-b", "+B",
                     "*** Add File: c.txt", "+c")
    async with anyio.create_task_group() as tg:
        tg.start_soon(call, ctx, session, patch)
        await fs.first.wait()
        tg.cancel_scope.cancel()  # the caller gives up after the first write: the rest is still written
    assert sorted(fs.writes) == [f"{ws}/a.txt", f"{ws}/b.txt", f"{ws}/c.txt"]
    assert (get(f"{ws}/a.txt"), get(f"{ws}/b.txt"), get(f"{ws}/c.txt")) == (b"A\n", b"B\n", b"c\n")


# -- the write phase: updates side by side, name changes in patch order (writes.py) ------------

class RecordingWrites(LocalFileSystem):
    """The local provider, recording each write's start and end (by file name), the most
    ``write_text`` calls under way at once, and optionally failing the write of one name with
    an I/O error once the others have begun."""

    def __init__(self, fail: str | None = None, **kw: Any) -> None:
        super().__init__(**kw)
        self.fail = fail
        self.events: list[tuple[str, str]] = []
        self.under_way = 0
        self.most = 0

    async def _track(self, name: str, run: Any) -> Any:
        self.events.append(("start", name))
        self.under_way += 1
        self.most = max(self.most, self.under_way)
        try:
            await anyio.sleep(0.01)  # long enough for writes side by side to begin
            if name == self.fail:
                raise io_error("write", name, "No space left on device")
            return await run()
        finally:
            self.under_way -= 1
            self.events.append(("end", name))

    async def write_text(self, target: Any, content: str, expected: Any = None, *, signal: Any = None) -> Any:
        parent = super()
        return await self._track(os.path.basename(target.key),
                                 lambda: parent.write_text(target, content, expected, signal=signal))

    async def rename(self, source: Any, dest: Any, expected: Any = None, *, signal: Any = None) -> Any:
        parent = super()
        return await self._track(os.path.basename(source.key),
                                 lambda: parent.rename(source, dest, expected, signal=signal))

    async def delete(self, target: Any, expected: Any = None, *, signal: Any = None) -> Any:
        parent = super()
        return await self._track(os.path.basename(target.key), lambda: parent.delete(target, expected, signal=signal))


MIXED = ("*** Update File: u1.txt", "@@", "-u1", "+U1",
         "*** Add File: n.txt", "+n",
         "*** Update File: u2.txt", "@@", "-u2", "+U2",
         "*** Delete File: gone.txt",
         "*** Update File: u3.txt", "@@", "-u3", "+U3",
         "*** Update File: mv.txt", "*** Move to: moved.txt", "@@", "-mv", "+MV",
         "*** Update File: u4.txt", "@@", "-u4", "+U4")


async def test_updates_are_written_side_by_side_and_name_changes_in_patch_order(ws: str) -> None:
    for name in ("u1", "u2", "u3", "u4", "gone", "mv"):
        put(f"{ws}/{name}.txt", f"{name}\n")
    fs = RecordingWrites(cwd=ws)
    ctx, session = dsh_fs.create_context(provider=fs, faces=["apply_patch"]), Session(cwd=ws)
    await read(ctx, session, "u1.txt", "u2.txt", "u3.txt", "u4.txt", "gone.txt", "mv.txt")
    result = await call(ctx, session, envelope(*MIXED), signal=AbortSignal())
    assert not result.is_error, result.text
    assert result.text == ("Success. Updated the following files:\n"
                           f"A {ws}/n.txt\nM {ws}/u1.txt\nM {ws}/u2.txt\nM {ws}/u3.txt\nM {ws}/moved.txt\n"
                           f"M {ws}/u4.txt\nD {ws}/gone.txt\n")  # the summary keeps patch order
    assert [d["path"] for d in result.meta["diffs"]] == [f"{ws}/{n}.txt" for n in
                                                         ("u1", "n", "u2", "gone", "u3", "moved", "u4")]
    assert fs.events[:2] == [("start", "u1.txt"), ("end", "u1.txt")]  # the first change alone, under the signal
    assert fs.most >= 3  # u2, u3, u4 beside the name changes
    names = [(what, name) for what, name in fs.events if name in ("n.txt", "gone.txt", "mv.txt", "moved.txt")]
    assert names == [("start", "n.txt"), ("end", "n.txt"), ("start", "gone.txt"), ("end", "gone.txt"),
                     ("start", "mv.txt"), ("end", "mv.txt"), ("start", "moved.txt"), ("end", "moved.txt")]
    assert [get(f"{ws}/{n}.txt") for n in ("u1", "u2", "u3", "u4", "n", "moved")] == [
        b"U1\n", b"U2\n", b"U3\n", b"U4\n", b"n\n", b"MV\n"]
    assert not os.path.exists(f"{ws}/gone.txt") and not os.path.exists(f"{ws}/mv.txt")


ROWS = {"u1.txt": "M {ws}/u1.txt", "n.txt": "A {ws}/n.txt", "u2.txt": "M {ws}/u2.txt", "gone.txt": "D {ws}/gone.txt",
        "u3.txt": "M {ws}/u3.txt", "mv.txt": "M {ws}/mv.txt -> {ws}/moved.txt", "u4.txt": "M {ws}/u4.txt"}


@pytest.mark.parametrize("fail", ["u2.txt", "u3.txt", "u4.txt", "n.txt", "gone.txt", "mv.txt", "moved.txt"])
async def test_a_write_failing_beside_others_is_reported_as_the_disk_shows(ws: str, fail: str) -> None:
    # DEVIATIONS E10: what the error lists as written is exactly what changed on disk
    for name in ("u1", "u2", "u3", "u4", "gone", "mv"):
        put(f"{ws}/{name}.txt", f"{name}\n")
    fs = RecordingWrites(fail=fail, cwd=ws)
    ctx, session = dsh_fs.create_context(provider=fs, faces=["apply_patch"]), Session(cwd=ws)
    await read(ctx, session, "u1.txt", "u2.txt", "u3.txt", "u4.txt", "gone.txt", "mv.txt")
    result = await call(ctx, session, envelope(*MIXED))
    assert result.error is not None and result.error.code == "FS_IO_ERROR"
    lines = result.text.split("\n")
    assert lines[0] == f'Error: cannot write "{fail}": No space left on device'
    assert lines[1] == "The patch was applied in part. Written:" and "Not written:" in lines
    cut = lines.index("Not written:")
    written, pending = lines[2:cut], lines[cut + 1:]

    def changed(name: str) -> bool:
        if name == "n.txt":
            return os.path.exists(f"{ws}/n.txt")
        if name == "gone.txt":
            return not os.path.exists(f"{ws}/gone.txt")
        if name == "mv.txt":
            return os.path.exists(f"{ws}/moved.txt")
        return get(f"{ws}/{name}") == name.split(".")[0].upper().encode() + b"\n"

    expect_written, expect_pending = [], []
    for name, row in ROWS.items():
        row = row.format(ws=ws)
        if name == "mv.txt" and changed(name) and get(f"{ws}/moved.txt") == b"mv\n":  # renamed, text not written
            expect_written.append(f"R {ws}/mv.txt -> {ws}/moved.txt")
            expect_pending.append(f"M {ws}/moved.txt")
        else:
            (expect_written if changed(name) else expect_pending).append(row)
    assert (written, pending) == (expect_written, expect_pending)
    assert ROWS.get(fail, "M {ws}/moved.txt").format(ws=ws) in pending and written[0] == f"M {ws}/u1.txt"
    names = ["n.txt", "gone.txt", "mv.txt"]
    if fail in names:  # the name changes after it never began
        later = names[names.index(fail) + 1:]
        assert not any(n in later for _, n in fs.events)



async def test_diffs_computed_while_writing_are_the_diffs_of_what_was_written(ws: str, patch_ctx: Any) -> None:
    from dsh_fs.core.session import ToolExecution
    from dsh_fs.patch import parse_patch
    from dsh_fs.tool_patch import AppliedPatch, apply_patch

    for name in ("u1", "u2", "u3", "u4", "gone", "mv"):
        put(f"{ws}/{name}.txt", f"{name}\nsecond line\n")
    ctx, session = patch_ctx(policy=False), Session(cwd=ws)
    patch = parse_patch(envelope(*MIXED))
    applied = await apply_patch(ctx, patch, ToolExecution(session=session), with_diffs=True)
    assert applied.kept_diffs is not None and len(applied.kept_diffs) == 7
    assert applied.diffs() == AppliedPatch(changes=applied.changes).diffs()  # recomputed from the changes
    assert applied.kept_diffs[0] == {"path": f"{ws}/u1.txt", "oldText": "u1\nsecond line",
                                     "newText": "U1\nsecond line"}


async def test_updates_too_big_to_write_side_by_side_wait_their_turn(ws: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from dsh_fs.tool_patch import writes

    monkeypatch.setattr(writes, "SIDE_BY_SIDE_MAX", len("U2\n"))  # u3's and u4's new texts are bigger
    monkeypatch.setattr(writes, "QUICK_WRITE_S", 0.0)  # every write slow: updates side by side after the first
    for name in ("u1", "u2", "u3", "u4"):
        put(f"{ws}/{name}.txt", f"{name}\n")
    fs = RecordingWrites(cwd=ws)
    ctx, session = dsh_fs.create_context(provider=fs, faces=["apply_patch"]), Session(cwd=ws)
    await read(ctx, session, "u1.txt", "u2.txt", "u3.txt", "u4.txt")
    result = await call(ctx, session, envelope("*** Update File: u1.txt", "@@", "-u1", "+U1",
                                               "*** Update File: u4.txt", "@@", "-u4", "+U4 and more",
                                               "*** Update File: u2.txt", "@@", "-u2", "+U2",
                                               "*** Update File: u3.txt", "@@", "-u3", "+U3 and more"))
    assert not result.is_error, result.text
    big = [event for event in fs.events if event[1] in ("u3.txt", "u4.txt")]
    assert big == [("start", "u4.txt"), ("end", "u4.txt"), ("start", "u3.txt"), ("end", "u3.txt")]  # patch order
    assert fs.most == 2  # one big update at a time, beside the small ones (u1 alone, then u2)
    assert [get(f"{ws}/{n}.txt") for n in ("u1", "u2", "u3", "u4")] == [b"U1\n", b"U2\n", b"U3 and more\n",
                                                                        b"U4 and more\n"]


@pytest.mark.parametrize("quick", [True, False])
async def test_updates_are_written_one_at_a_time_while_the_writes_are_quick(
        ws: str, quick: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Quick writes (a fast disk: the provider writes on the event loop thread): one at a time,
    signal or not. Slow ones: the first alone (measured), then the others side by side."""
    from dsh_fs.tool_patch import writes

    if quick:
        monkeypatch.setattr(writes, "time", WriteClock())  # a clock that never moves: every write quick
    else:
        monkeypatch.setattr(writes, "QUICK_WRITE_S", 0.0)
    for name in ("u1", "u2", "u3"):
        put(f"{ws}/{name}.txt", f"{name}\n")
    patch = envelope("*** Update File: u1.txt", "@@", "-u1", "+U1", "*** Update File: u2.txt", "@@", "-u2", "+U2",
                     "*** Update File: u3.txt", "@@", "-u3", "+U3")
    for signal in (None, AbortSignal()):
        fs = RecordingWrites(cwd=ws)
        ctx, session = dsh_fs.create_context(provider=fs, faces=["apply_patch"]), Session(cwd=ws)
        await read(ctx, session, "u1.txt", "u2.txt", "u3.txt")
        result = await call(ctx, session, patch, signal=signal)
        assert not result.is_error, result.text
        assert fs.events[:2] == [("start", "u1.txt"), ("end", "u1.txt")]
        if quick:
            assert fs.events == [(what, name) for name in ("u1.txt", "u2.txt", "u3.txt") for what in ("start", "end")]
        else:
            assert fs.most == 2 and {name for _, name in fs.events[2:4]} == {"u2.txt", "u3.txt"}
        patch = patch.replace("-u", "-X").replace("+U", "+u").replace("-X", "-U")  # and back


class WriteClock:
    """The clock ``tool_patch.writes`` times its writes with (patched in as its ``time``): it
    moves only when a test says, so whether a write was quick never depends on the machine."""

    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        return self.now


class StallingWrites(LocalFileSystem):
    """The local provider, the writes of some names taking a second longer on ``clock``;
    records the most ``write_text`` calls under way at once (each lets the others start before
    it writes, so writes started side by side are under way together)."""

    def __init__(self, stall: set[str], clock: WriteClock, **kw: Any) -> None:
        super().__init__(**kw)
        self.stall = stall
        self.clock = clock
        self.under_way = 0
        self.most = 0

    async def write_text(self, target: Any, content: str, expected: Any = None, *, signal: Any = None) -> Any:
        self.under_way += 1
        self.most = max(self.most, self.under_way)
        try:
            await anyio.sleep(0)
            if os.path.basename(target.key) in self.stall:
                self.clock.now += 1.0
            return await super().write_text(target, content, expected, signal=signal)
        finally:
            self.under_way -= 1


@pytest.mark.parametrize("stall,most", [({"u1.txt"}, 1), ({"u1.txt", "u2.txt"}, 3)])
async def test_one_slow_write_among_quick_ones_keeps_them_one_at_a_time(
        ws: str, stall: set[str], most: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Side by side once half the writes so far or more were slow (a lone stall of a busy disk
    is not a slow disk): u0 quick, u1 slow — still one at a time; u2 slow too — the rest side
    by side."""
    from dsh_fs.tool_patch import writes

    clock = WriteClock()
    monkeypatch.setattr(writes, "time", clock)
    names = [f"u{index}" for index in range(6)]
    for name in names:
        put(f"{ws}/{name}.txt", f"{name}\n")
    fs = StallingWrites(stall, clock, cwd=ws)
    ctx, session = dsh_fs.create_context(provider=fs, faces=["apply_patch"]), Session(cwd=ws)
    await read(ctx, session, *(f"{name}.txt" for name in names))
    lines = [line for name in names for line in (f"*** Update File: {name}.txt", "@@", f"-{name}", f"+{name}!")]
    result = await call(ctx, session, envelope(*lines))
    assert not result.is_error, result.text
    assert [get(f"{ws}/{name}.txt") for name in names] == [f"{name}!\n".encode() for name in names]
    assert fs.most == most


async def test_a_face_without_diffs_cancelled_during_its_writes_finishes_them(ws: str) -> None:
    """The faces that write without the UI diffs (the Responses/Agents SDK patch operations
    call ``apply_patch`` directly) rely on the write phase's own shield."""
    from dsh_fs.core.session import ToolExecution
    from dsh_fs.patch import parse_patch
    from dsh_fs.tool_patch import apply_patch

    put(f"{ws}/a.txt", "a\n")
    put(f"{ws}/b.txt", "b\n")
    fs = SlowAfterFirstWrite(cwd=ws)
    ctx, session = dsh_fs.create_context(provider=fs, faces=["apply_patch"]), Session(cwd=ws)
    await read(ctx, session, "a.txt", "b.txt")
    patch = parse_patch(envelope("*** Update File: a.txt", "@@", "-a", "+A", "*** Update File: b.txt", "@@",
                                 "-b", "+B", "*** Add File: c.txt", "+c"))
    async with anyio.create_task_group() as tg:
        tg.start_soon(apply_patch, ctx, patch, ToolExecution(session=session))
        await fs.first.wait()
        tg.cancel_scope.cancel()
    assert sorted(fs.writes) == [f"{ws}/a.txt", f"{ws}/b.txt", f"{ws}/c.txt"]
    assert (get(f"{ws}/a.txt"), get(f"{ws}/b.txt"), get(f"{ws}/c.txt")) == (b"A\n", b"B\n", b"c\n")


async def test_at_most_sixteen_updates_are_written_at_once(ws: str) -> None:
    from dsh_fs.tool_patch import writes

    names = [f"u{index}" for index in range(21)]
    for name in names:
        put(f"{ws}/{name}.txt", f"{name}\n")
    fs = RecordingWrites(cwd=ws)
    ctx, session = dsh_fs.create_context(provider=fs, faces=["apply_patch"]), Session(cwd=ws)
    await read(ctx, session, *(f"{name}.txt" for name in names))
    lines = [line for name in names for line in (f"*** Update File: {name}.txt", "@@", f"-{name}", f"+{name.upper()}")]
    result = await call(ctx, session, envelope(*lines), signal=AbortSignal())
    assert not result.is_error, result.text
    assert fs.events[:2] == [("start", "u0.txt"), ("end", "u0.txt")]  # the first alone, then 20 side by side
    assert fs.most == writes.WRITE_AT_ONCE == 16
    assert [get(f"{ws}/{name}.txt") for name in names] == [f"{name.upper()}\n".encode() for name in names]


async def test_an_update_of_exactly_one_mebicharacter_is_still_written_side_by_side(
        ws: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from dsh_fs.tool_patch import writes
    from dsh_fs.tool_patch.writes import SIDE_BY_SIDE_MAX

    monkeypatch.setattr(writes, "QUICK_WRITE_S", 0.0)  # every write slow: updates side by side after the first
    assert SIDE_BY_SIDE_MAX == 1024 * 1024
    sizes = {"u1": 3, "u2": SIDE_BY_SIDE_MAX, "u3": SIDE_BY_SIDE_MAX, "u4": SIDE_BY_SIDE_MAX + 1,
             "u5": SIDE_BY_SIDE_MAX + 1}  # the new texts' lengths, line break included
    for name in sizes:
        put(f"{ws}/{name}.txt", f"{name}\n")
    fs = RecordingWrites(cwd=ws)
    ctx, session = dsh_fs.create_context(provider=fs, faces=["apply_patch"]), Session(cwd=ws)
    await read(ctx, session, *(f"{name}.txt" for name in sizes))
    lines = [line for name, size in sizes.items()
             for line in (f"*** Update File: {name}.txt", "@@", f"-{name}", "+" + name[-1] * (size - 1))]
    result = await call(ctx, session, envelope(*lines))  # no signal: the first goes with the others
    assert not result.is_error, result.text
    big = [event for event in fs.events if event[1] in ("u4.txt", "u5.txt")]
    assert big == [("start", "u4.txt"), ("end", "u4.txt"), ("start", "u5.txt"), ("end", "u5.txt")]
    assert fs.most == 3  # u1 alone (measured), then u2, u3 side by side, beside one bigger update at a time
    assert [len(get(f"{ws}/{name}.txt")) for name in sizes] == list(sizes.values())


@pytest.mark.parametrize("extra", [0, 1])
async def test_diffs_of_a_patch_of_at_most_two_mebicharacters_are_computed_on_the_event_loop(
        ws: str, extra: int, patch_ctx: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Texts (before and after, summed) of at most ``DIFF_ON_LOOP_MAX`` characters: the UI
    diffs after the writes, on the event loop thread; one more: in a worker thread meanwhile.
    The same diffs either way."""
    import threading

    from dsh_fs.core.session import ToolExecution
    from dsh_fs.patch import parse_patch
    from dsh_fs.tool_patch import AppliedPatch, apply_patch, executor

    assert executor.DIFF_ON_LOOP_MAX == 2 * 1024 * 1024
    half = executor.DIFF_ON_LOOP_MAX // 2 + extra
    put(f"{ws}/big.txt", "a\n" + "x" * (half - 3) + "\n")  # ``half`` characters before and after
    threads: list[str] = []
    real = AppliedPatch.diffs

    def diffs(self: Any) -> Any:
        threads.append(threading.current_thread().name)
        return real(self)

    monkeypatch.setattr(AppliedPatch, "diffs", diffs)
    ctx, session = patch_ctx(policy=False), Session(cwd=ws)
    patch = parse_patch(envelope("*** Update File: big.txt", "@@", "-a", "+b"))
    applied = await apply_patch(ctx, patch, ToolExecution(session=session), with_diffs=True)
    assert applied.kept_diffs == [{"path": f"{ws}/big.txt", "oldText": "a\n" + "x" * (half - 3),
                                   "newText": "b\n" + "x" * (half - 3)}]
    assert (threads == [threading.main_thread().name]) is (extra == 0), threads
    assert get(f"{ws}/big.txt") == b"b\n" + b"x" * (half - 3) + b"\n"
