"""The rewind module's pure parts and values: the dry run's diffs (cut, binary, no final newline),
the reverse replacements of a big file's diff, the result values, and the rewind over a memory
provider where a kept copy is gone, a write fails midway, or the provider has no raw write."""

from __future__ import annotations

import dataclasses

import pytest

import dsh_fs
from dsh_fs import Session
from dsh_fs.fs.errors import FsError, stale
from dsh_fs.fs_memory import MemoryFileSystem
from dsh_fs.history.rewind import DIFF_MAX_BYTES, FileResult, RewindResult, _diff, _reverse_text

pytestmark = pytest.mark.anyio


def test_diff_of_text() -> None:
    assert _diff("/p", b"a\nb\n", b"a\nb\n") is None
    assert _diff("/p", b"a\n", b"b\n") == "--- /p\n+++ /p\n@@ -1 +1 @@\n-a\n+b\n"
    assert _diff("/p", None, b"b\n") == "--- /dev/null\n+++ /p\n@@ -0,0 +1 @@\n+b\n"
    assert _diff("/p", b"a", None) == "--- /p\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n\\ No newline at end of file\n"


def test_diff_of_binary() -> None:
    assert _diff("/p", b"a\0", b"b") == "Binary file /p differs\n"
    assert _diff("/p", b"a", b"\0b") == "Binary file /p differs\n"
    assert _diff("/p", b"x" * 8192 + b"\0", b"y\n").startswith("--- /p")  # a NUL past the sample is text


def test_a_long_diff_is_cut_and_says_so() -> None:
    assert DIFF_MAX_BYTES == 64 * 1024
    old = "".join(f"line {i}\n" for i in range(20000)).encode()
    out = _diff("/p", old, b"")
    assert out is not None and out.endswith(f"[diff cut at {DIFF_MAX_BYTES} bytes]\n")
    body = out[: -len(f"[diff cut at {DIFF_MAX_BYTES} bytes]\n")]
    assert len(body.encode()) <= DIFF_MAX_BYTES and body.endswith("\n")
    exact = "".join(f"{i:07d}\n" for i in range((DIFF_MAX_BYTES - 64) // 9)).encode()
    fits = _diff("/p", None, exact)
    assert fits is not None and "[diff cut" not in fits and len(fits.encode()) <= DIFF_MAX_BYTES


def test_reverse_text() -> None:
    assert _reverse_text(b"a Z c", (("Z", "b"),)) == b"a b c"
    assert _reverse_text(b"a Z c", (("Z", "y"), ("y", "b"))) == b"a b c"
    assert _reverse_text(b"Z Z", (("Z", "b"),)) is None
    assert _reverse_text(b"none", (("Z", "b"),)) is None


def test_result_values() -> None:
    result = FileResult(path="/p", action="restore")
    assert (result.reason, result.forced, result.moved_from, result.diff, result.done) == (None, False, None, None, False)
    assert not hasattr(result, "__dict__")
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.path = "x"  # type: ignore[misc]
    with pytest.raises(TypeError):
        FileResult("/p", "restore")  # type: ignore[misc]
    whole = RewindResult(to=0, steps=(1,), files=(result, FileResult(path="/q", action="refused"),
                                                   FileResult(path="/r", action="skipped")), dry_run=False, refused=True)
    assert (whole.step, whole.error) == (None, None)
    assert [f.path for f in whole.refusals] == ["/q", "/r"]
    assert not hasattr(whole, "__dict__")
    with pytest.raises(dataclasses.FrozenInstanceError):
        whole.to = 1  # type: ignore[misc]
    with pytest.raises(TypeError):
        RewindResult(0, (), (), False, False)  # type: ignore[misc]


async def made(files: dict[str, str] | None = None) -> tuple[dsh_fs.Context, MemoryFileSystem, Session]:
    memory = MemoryFileSystem({"ws/" + k: v for k, v in (files or {"keep": "k"}).items()})
    ctx = dsh_fs.create_context(provider=memory, history=True, policy=False)
    return ctx, memory, Session(cwd="/ws")


async def test_a_gone_copy_is_refused_or_skipped() -> None:
    ctx, memory, session = await made({"a.txt": "one\n"})
    await ctx.tools.execute("write", {"file_path": "/ws/a.txt", "content": "two\n"}, session=session)
    (step,) = await ctx.history(session)
    ctx.fs.store._blobs.clear()
    result = await ctx.rewind(session, to=0)
    assert result.refused and [(f.action, f.reason) for f in result.files] == [
        ("refused", "not restorable: its kept copy is gone")]
    skipped = await ctx.rewind(session, to=0, skip_changed=True)
    assert not skipped.refused and [f.action for f in skipped.files] == ["skipped"] and skipped.step is None
    assert memory.get("/ws/a.txt") == b"two\n" and step.number == 1
    await ctx.aclose()


async def test_a_write_failing_midway_is_reported_and_a_rerun_completes() -> None:
    ctx, memory, session = await made({"a.txt": "a\n", "b.txt": "b\n"})
    await ctx.tools.execute("write", {"file_path": "/ws/a.txt", "content": "A\n"}, session=session)
    await ctx.tools.execute("write", {"file_path": "/ws/b.txt", "content": "B\n"}, session=session)
    inner = ctx.fs.inner
    real = inner.write_bytes
    calls = []

    async def flaky(target, data, expected=None, *, mode=None, signal=None):  # type: ignore[no-untyped-def]
        calls.append(target.display_path)
        if len(calls) == 2:
            raise stale("write", target.display_path)
        return await real(target, data, expected, mode=mode, signal=signal)

    inner.write_bytes = flaky
    result = await ctx.rewind(session, to=0)
    assert result.error is not None and result.error.endswith("file changed since it was read")
    assert [f.done for f in result.files] == [True, False] and result.step == 3
    inner.write_bytes = real
    again = await ctx.rewind(session, to=0)
    assert again.error is None and not again.refused
    assert (memory.get("/ws/a.txt"), memory.get("/ws/b.txt")) == (b"a\n", b"b\n")
    await ctx.aclose()


async def test_without_raw_writes_the_text_write_restores() -> None:
    ctx, memory, session = await made({"a.txt": "one\n"})
    await ctx.tools.execute("write", {"file_path": "/ws/a.txt", "content": "two\n"}, session=session)

    async def none(*args: object, **kwargs: object) -> None:
        raise NotImplementedError

    ctx.fs.inner.write_bytes = none
    result = await ctx.rewind(session, to=0)
    assert not result.refused and result.error is None and memory.get("/ws/a.txt") == b"one\n"
    await ctx.aclose()


async def test_a_dry_run_of_a_reverse_edit_shows_its_diff() -> None:
    ctx, memory, session = await made({"big.txt": "head\nold middle\ntail\n"})
    ctx.fs._max_file_bytes = 4
    await ctx.tools.execute("edit", {"file_path": "/ws/big.txt", "old_string": "old", "new_string": "new"}, session=session)
    result = await ctx.rewind(session, to=0, dry_run=True)
    (only,) = result.files
    assert only.action == "reverse_edit" and only.diff is None  # over the cap: not read, no diff
    ctx.fs._max_file_bytes = 4 << 20
    result = await ctx.rewind(session, to=0, dry_run=True)
    (only,) = result.files
    assert only.action == "reverse_edit"
    assert only.diff == "--- /ws/big.txt\n+++ /ws/big.txt\n@@ -1,3 +1,3 @@\n head\n-new middle\n+old middle\n tail\n"
    done = await ctx.rewind(session, to=0)
    assert done.error is None and memory.get("/ws/big.txt") == b"head\nold middle\ntail\n"
    await ctx.aclose()


async def test_a_directory_where_a_file_was_is_refused() -> None:
    ctx, memory, session = await made({"a.txt": "one\n"})
    await ctx.tools.execute("delete_me" if False else "write", {"file_path": "/ws/n.txt", "content": "n\n"},
                            session=session)
    memory.remove("/ws/n.txt")
    memory.put("/ws/n.txt/inside", "x")
    result = await ctx.rewind(session, to=0)
    assert result.refused and [(f.path, f.reason) for f in result.files] == [
        ("/ws/n.txt", "changed since this owner's last change")]
    await ctx.aclose()


async def test_a_refused_mutation_leaves_no_change_in_the_history() -> None:
    from dsh_fs.fs.types import EditRequest

    ctx, memory, _session = await made()
    view = ctx.fs.for_tool_call("edit", "o")
    with pytest.raises(FsError) as caught:
        await view.edit_text(await ctx.fs.resolve("/ws/keep"), EditRequest(old_string="zz", new_string="y"))
    assert caught.value.code == "FS_EDIT_NOT_FOUND"
    assert list(await ctx.history("o")) == [] and memory.get("/ws/keep") == b"k"
    assert ctx.fs.for_tool_call("edit", None) is ctx.fs
    await ctx.aclose()


def test_diff_boundaries() -> None:
    assert _diff("/p", b"y\n", b"x" * 8192 + b"\0").startswith("--- /p")  # the new side's sample too
    assert _diff("/p", b"y\n", b"x" * 8191 + b"\0") == "Binary file /p differs\n"
    head, hunk = "--- /dev/null\n+++ /p\n", "@@ -0,0 +1,7000 @@\n"
    last = DIFF_MAX_BYTES - len(head) - len(hunk) - 9 * 6999 - 2  # "+" and "\n" around the last line
    body = [b"x" * 7 + b"\n"] * 6999 + [b"x" * last + b"\n"]
    out = _diff("/p", None, b"".join(body))
    assert out is not None and len(out.encode()) == DIFF_MAX_BYTES and "[diff cut" not in out
    longer = _diff("/p", None, b"".join(body[:-1]) + b"x" * (last + 1) + b"\n")
    assert longer is not None and longer.endswith(f"[diff cut at {DIFF_MAX_BYTES} bytes]\n")


async def test_rewind_owner_defaults_and_an_applied_result() -> None:
    from dsh_fs.history.rewind import rewind_owner

    ctx, memory, session = await made({"a.txt": "one\n"})
    await ctx.tools.execute("write", {"file_path": "/ws/a.txt", "content": "two\n"}, session=session)
    tree = memory.snapshot()
    ctx.fs._max_file_bytes = 4  # exactly the file's size: still read (a dry run shows its diff)
    preview = await ctx.rewind(session, to=0, dry_run=True)
    assert preview.files[0].diff == "--- /ws/a.txt\n+++ /ws/a.txt\n@@ -1 +1 @@\n-two\n+one\n"
    result = await rewind_owner(ctx.fs, session.id, to=0)  # not a dry run by default
    assert not result.dry_run and not result.refused and memory.snapshot() != tree
    assert [f.diff for f in result.files] == [None]
    memory.put("/ws/a.txt", "theirs\n")
    with_defaults = await rewind_owner(ctx.fs, session.id, to=0)  # nothing skipped by default
    assert with_defaults.refused
    await ctx.aclose()
