"""What a relative path resolves against under a sandbox (docs/SANDBOX.md "Relative paths"; X4).

The reference (``toninfo/deepseek-harness`` at ``48fb3b528b91c94ef429fc2bbc6b8e8f5157e7bb``,
``tool-fs/src/{write,edit,session-cwd}.ts``, ``sandbox-policy/src/index.ts``): under a confining
backend ``write`` and ``edit`` resolve against ``policy.workspaceRoot`` = the canonical session cwd
(``realpathSync.native``), every other tool against the session cwd as written. So with a session
cwd through a symlink the model sees the real path in ``write``'s and ``edit``'s answers in the
``reference`` profile, and the cwd as written in the ``default`` profile (X4, as ``read`` shows it).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from sandboxkit import base  # noqa: F401  (fixture)

import dsh_fs
from dsh_fs import Session
from dsh_fs.fs_memory import MemoryFileSystem

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("profile", ["default", "reference"])
@pytest.mark.parametrize("contained", [False, True], ids=["no-root", "root"])
async def test_write_and_edit_resolve_against_the_canonical_session_cwd_in_the_reference(
        base: Path, profile: str, contained: bool) -> None:
    link = base / "link"
    os.symlink(base / "ws", link)
    real = str(base / "ws")
    ctx = dsh_fs.create_context(root=str(link) if contained else None, cwd=str(link), sandbox="workspace-write",
                                profile=profile)
    session = Session(str(link))
    shown = real if profile == "reference" else str(link)
    written = await ctx.tools.execute("write", {"file_path": "a.txt", "content": "one\n"}, session=session)
    assert not written.is_error, written.text
    assert written.text.startswith(f"<path>{shown}/a.txt</path>\n")
    edited = await ctx.tools.execute("edit", {"file_path": "a.txt", "old_string": "one", "new_string": "two"},
                                     session=session)
    assert not edited.is_error, edited.text
    assert edited.text.startswith(f"The file {shown}/a.txt has been updated successfully.")
    read = await ctx.tools.execute("read", {"file_path": "a.txt"}, session=session)
    assert read.text.startswith(f"<path>{link}/a.txt</path>\n")  # read: the cwd as written, both profiles
    assert (base / "ws" / "a.txt").read_text() == "two\n"


async def test_without_a_sandbox_nothing_changes(base: Path) -> None:
    link = base / "link"
    os.symlink(base / "ws", link)
    ctx = dsh_fs.create_context(root=None, cwd=str(link), profile="reference")
    written = await ctx.tools.execute("write", {"file_path": "a.txt", "content": "x"}, session=Session(str(link)))
    assert written.text.startswith(f"<path>{link}/a.txt</path>\n")


async def test_a_provider_without_host_files_resolves_as_spelled(base: Path) -> None:
    """A memory path is no host path: a host symlink of the same spelling never bends it."""
    link = base / "link"
    os.symlink(base / "ws", link)
    ctx = dsh_fs.create_context(provider=MemoryFileSystem(), sandbox="workspace-write", profile="reference")
    written = await ctx.tools.execute("write", {"file_path": "a.txt", "content": "x"}, session=Session(str(link)))
    assert written.text.startswith(f"<path>{link}/a.txt</path>\n")
