"""The mode fence on the real disk (``fs_sandbox.filesystem.SandboxedFileSystem``; docs/SANDBOX.md,
docs/design/SANDBOX.md §1.3 and §7.2): the reference's matrix, the stale-target race, the root
itself, every fenced seam member, and a refusal that leaves every byte and stat as it was. The
base directory lies outside every temp area (``sandboxkit.base``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from sandboxkit import base, snapshot  # noqa: F401  (fixture)

from dsh_fs import CreateIfAbsent, EditRequest, FsError
from dsh_fs.fs_local import LocalFileSystem
from dsh_fs.fs_memory import MemoryFileSystem
from dsh_fs.fs_sandbox.filesystem import SandboxedFileSystem

pytestmark = pytest.mark.anyio


def sandboxed(base: Path, mode: str, *, root: bool = False) -> SandboxedFileSystem:
    """The workspace is ``ws``: as the provider's cwd (no containment, the reference's setting),
    or as its root."""
    ws = str(base / "ws")
    inner = LocalFileSystem(root=ws) if root else LocalFileSystem(cwd=ws)
    return SandboxedFileSystem(inner, mode=mode)


async def denied(fs: SandboxedFileSystem, base: Path, action: object, text: str) -> None:
    before = snapshot(base)
    with pytest.raises(FsError) as info:
        await action()  # type: ignore[operator]
    assert (str(info.value), info.value.code) == (text, "FS_SANDBOX_DENIED")
    assert snapshot(base) == before


async def test_read_only_denies_write_and_edit_and_allows_reads(base: Path) -> None:
    (base / "ws" / "a.txt").write_text("one\n")
    fs = sandboxed(base, "read-only")
    target = await fs.resolve("a.txt")
    assert await fs.read_text(target) == "one\n"
    assert (await fs.stat(target)) is not None and [e.name for e in await fs.list_dir(await fs.resolve("."))] == ["a.txt"]
    dp = target.display_path
    await denied(fs, base, lambda: fs.write_text(target, "two\n"), f'cannot write "{dp}": file access denied under read-only mode')
    await denied(fs, base, lambda: fs.edit_text(target, EditRequest(old_string="one", new_string="1")),
                 f'cannot write "{dp}": file access denied under read-only mode')
    await denied(fs, base, lambda: fs.delete(target), f'cannot delete "{dp}": file access denied under read-only mode')
    await denied(fs, base, lambda: fs.check_replaceable(target, "edit"),
                 f'cannot write "{dp}": file access denied under read-only mode')
    new = await fs.resolve("b.txt")
    await denied(fs, base, lambda: fs.check_creatable(new),
                 f'cannot write "{new.display_path}": file access denied under read-only mode')
    await denied(fs, base, lambda: fs.rename(target, new),
                 f'cannot rename "{dp}": file access denied under read-only mode')


@pytest.mark.parametrize("path", ["a.txt", "new/deeper/b.txt", "{tmp}/dsh-sandbox-ok-{pid}.txt"])
async def test_workspace_write_allows_inside_nested_new_and_temp(base: Path, path: str) -> None:
    fs = sandboxed(base, "workspace-write")
    path = path.format(tmp=os.path.realpath("/tmp"), pid=os.getpid())
    target = await fs.resolve(path)
    try:
        outcome = await fs.write_text(target, "x", CreateIfAbsent())
        assert outcome.operation == "create" and Path(target.key).read_text() == "x"
    finally:
        if path.startswith("/tmp") or path.startswith(os.path.realpath("/tmp")):
            os.unlink(target.key)


async def test_workspace_write_denies_outside_dotdot_and_symlinks_out(base: Path) -> None:
    (base / "out" / "o.txt").write_text("keep")
    (base / "ws" / "link").symlink_to(base / "out")
    (base / "ws" / "file-link").symlink_to(base / "out" / "o.txt")
    fs = sandboxed(base, "workspace-write")
    for path in [str(base / "out" / "o.txt"), "../out/o.txt", "link/o.txt", "link/new.txt", "file-link"]:
        target = await fs.resolve(path)
        text = f'cannot write "{target.display_path}": file access denied under workspace-write mode'
        await denied(fs, base, lambda: fs.write_text(target, "changed"), text)
        await denied(fs, base, lambda: fs.check_creatable(target), text)
    assert (base / "out" / "o.txt").read_text() == "keep"


async def test_a_symlink_swapped_in_after_resolve_is_seen(base: Path) -> None:
    """Resolved while ``d`` led out, written after ``d`` became a real directory inside: the
    write lands inside and the stale outside key is never written; and the other way round."""
    ws, out = base / "ws", base / "out"
    (ws / "d").symlink_to(out)
    fs = sandboxed(base, "workspace-write")
    stale = await fs.resolve("d/f.txt")
    assert stale.key == str(out / "f.txt")
    (ws / "d").unlink()
    (ws / "d").mkdir()
    await fs.write_text(stale, "fresh", CreateIfAbsent())
    assert (ws / "d" / "f.txt").read_text() == "fresh" and not (out / "f.txt").exists()

    inside = await fs.resolve("e/g.txt")
    (ws / "e").symlink_to(out)
    await denied(fs, base, lambda: fs.write_text(inside, "x", CreateIfAbsent()),
                 f'cannot write "{inside.display_path}": file access denied under workspace-write mode')


async def test_the_workspace_root_itself_passes_the_fence_and_is_not_a_file(base: Path) -> None:
    fs = sandboxed(base, "workspace-write", root=True)
    target = await fs.resolve(str(base / "ws"))
    with pytest.raises(FsError) as info:
        await fs.write_text(target, "x")
    assert info.value.code == "FS_NOT_REGULAR_FILE"


async def test_rename_fences_source_and_destination(base: Path) -> None:
    (base / "ws" / "a.txt").write_text("a")
    (base / "out" / "o.txt").write_text("o")
    fs = sandboxed(base, "workspace-write")
    inside, outside = await fs.resolve("a.txt"), await fs.resolve(str(base / "out" / "o.txt"))
    to_out, to_in = await fs.resolve(str(base / "out" / "moved.txt")), await fs.resolve("moved.txt")
    await denied(fs, base, lambda: fs.rename(inside, to_out),
                 f'cannot rename "{to_out.display_path}": file access denied under workspace-write mode')
    await denied(fs, base, lambda: fs.rename(outside, to_in),
                 f'cannot rename "{outside.display_path}": file access denied under workspace-write mode')
    await denied(fs, base, lambda: fs.delete(outside),
                 f'cannot delete "{outside.display_path}": file access denied under workspace-write mode')
    await fs.rename(inside, to_in)
    assert (base / "ws" / "moved.txt").read_text() == "a"


async def test_danger_full_access_and_a_per_call_view(base: Path) -> None:
    (base / "out" / "o.txt").write_text("o")
    fs = sandboxed(base, "read-only")
    view = fs.for_call("danger-full-access")
    target = await view.resolve(str(base / "out" / "o.txt"))
    await view.edit_text(target, EditRequest(old_string="o", new_string="p"))
    assert (base / "out" / "o.txt").read_text() == "p"
    assert view.sandbox_mode == "danger-full-access" and fs.sandbox_mode == "read-only"
    await view.aclose()  # a view never closes the provider it shares
    await denied(fs, base, lambda: fs.delete(target),
                 f'cannot delete "{target.display_path}": file access denied under read-only mode')
    wide = SandboxedFileSystem(LocalFileSystem(cwd=str(base / "ws")), mode="danger-full-access")
    await wide.delete(target)
    assert not (base / "out" / "o.txt").exists()


async def test_a_view_without_roots_takes_the_calls_cwd_as_its_workspace(base: Path) -> None:
    (base / "out" / "o.txt").write_text("o")
    fs = sandboxed(base, "workspace-write")
    target = await fs.resolve(str(base / "out" / "o.txt"))
    await denied(fs, base, lambda: fs.write_text(target, "x"),
                 f'cannot write "{target.display_path}": file access denied under workspace-write mode')
    await fs.for_call("workspace-write", cwd=str(base / "out")).write_text(target, "x")
    assert (base / "out" / "o.txt").read_text() == "x"


async def test_memory_provider_is_fenced_by_keys() -> None:
    inner = MemoryFileSystem({"a.txt": "a"}, root="/w")
    fs = SandboxedFileSystem(inner, mode="read-only")
    target = await fs.resolve("/w/a.txt")
    with pytest.raises(FsError) as info:
        await fs.write_text(target, "b")
    assert info.value.code == "FS_SANDBOX_DENIED" and await fs.read_text(target) == "a"
    await fs.for_call("workspace-write").write_text(target, "b")
    assert await fs.read_text(target) == "b"
    assert fs.workspace_roots() == ("/w",)


async def test_an_unknown_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown sandbox mode"):
        SandboxedFileSystem(MemoryFileSystem(), mode="root")
