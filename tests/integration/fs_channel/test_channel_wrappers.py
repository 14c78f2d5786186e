"""The wrappers over a channel provider, unchanged (DEVIATIONS C1): sandbox modes (the fence
near, every primitive far), path rules (a denied file refused; the search reads through the
rules instead of running ripgrep far, P4), and ``read_image``'s bounded raw read."""

from __future__ import annotations

import os
from typing import Any

import pytest

import dsh_fs
from channelkit import PNG_1X1, channel_fs

pytestmark = pytest.mark.anyio


def _ws(tmp_path: Any) -> str:
    root = os.path.realpath(os.path.join(str(tmp_path), "ws"))
    os.makedirs(root)
    with open(os.path.join(root, "a.txt"), "w", encoding="utf-8") as handle:
        handle.write("alpha TODO\n")
    with open(os.path.join(root, "keys.secret"), "w", encoding="utf-8") as handle:
        handle.write("TODO hunter2\n")
    with open(os.path.join(root, "pic.png"), "wb") as handle:
        handle.write(PNG_1X1)
    return root


async def test_sandbox_modes_fence_a_channel_provider(tmp_path: Any) -> None:
    root = _ws(tmp_path)
    outside = os.path.realpath(os.path.join(str(tmp_path), "outside"))
    os.makedirs(outside)
    ctx = dsh_fs.create_context(provider=channel_fs(None), cwd=root, sandbox="workspace-write")
    async with ctx:
        session = dsh_fs.Session(cwd=root)
        assert not (await ctx.tools.execute("write", {"file_path": "new.txt", "content": "x\n"}, session=session)).is_error
        denied = await ctx.tools.execute("write", {"file_path": f"{outside}/n.txt", "content": "x\n"}, session=session)
        assert denied.is_error and denied.error is not None and denied.error.code == "FS_SANDBOX_DENIED", denied.text
    assert os.listdir(outside) == []
    ro = dsh_fs.create_context(provider=channel_fs(root), cwd=root, sandbox="read-only")
    async with ro:
        session = dsh_fs.Session(cwd=root)
        assert not (await ro.tools.execute("read", {"file_path": "a.txt"}, session=session)).is_error
        refused = await ro.tools.execute("edit", {"file_path": "a.txt", "old_string": "alpha", "new_string": "b"},
                                         session=session)
        assert refused.is_error and refused.error is not None and refused.error.code == "FS_SANDBOX_DENIED"
    with open(os.path.join(root, "a.txt"), encoding="utf-8") as handle:
        assert handle.read() == "alpha TODO\n"


async def test_path_rules_over_a_channel_provider(tmp_path: Any) -> None:
    root = _ws(tmp_path)
    ctx = dsh_fs.create_context(provider=channel_fs(root), cwd=root, deny=["*.secret"])
    async with ctx:
        session = dsh_fs.Session(cwd=root)
        read = await ctx.tools.execute("read", {"file_path": "keys.secret"}, session=session)
        assert read.is_error and "path rules" in read.text
        found = await ctx.tools.execute("grep", {"pattern": "TODO"}, session=session)
        assert found.text == "Found 1 match\n\na.txt\nLine 1: alpha TODO"


async def test_read_image_over_a_channel_provider(tmp_path: Any) -> None:
    root = _ws(tmp_path)
    ctx = dsh_fs.create_context(provider=channel_fs(root), cwd=root, images=True)
    async with ctx:
        result = await ctx.tools.execute("read_image", {"file_path": "pic.png"}, session=dsh_fs.Session(cwd=root))
        images = [block for block in result.content if block.get("type") == "image"]
        assert not result.is_error and len(images) == 1


@pytest.mark.parametrize("wrappers", ["sandbox", "sandbox+rules+history"])
async def test_the_approval_prompt_names_the_far_sides_real_file(tmp_path: Any, wrappers: str) -> None:
    """A far-side ``docs -> .git``: the person approving an escalated ``write`` of
    ``docs/config`` (or a patch row through it) is shown ``<ws>/.git/config``, resolved on the
    far side (``FileSystem.real_place``), through every wrapper between the tool and the
    channel; nothing is written when they refuse."""
    from sandboxkit import Approvals

    root = _ws(tmp_path)
    os.makedirs(os.path.join(root, ".git"))
    with open(os.path.join(root, ".git", "config"), "w", encoding="utf-8") as handle:
        handle.write("[core]\n")
    os.symlink(".git", os.path.join(root, "docs"))
    approvals = Approvals("rejected")
    extra: dict[str, Any] = {"deny": ["*.secret"], "history": True} if "rules" in wrappers else {}
    ctx = dsh_fs.create_context(provider=channel_fs(root), cwd=root, sandbox="read-only", approval=approvals,
                                faces=["apply_patch"], **extra)
    widen = {"sandbox_permissions": "danger-full-access", "justification": "Fix a typo in the README."}
    async with ctx:
        session = dsh_fs.Session(cwd=root)
        await ctx.tools.execute("write", {"file_path": "docs/config", "content": "x", **widen}, session=session)
        patch = "*** Begin Patch\n*** Update File: docs/config\n@@\n-[core]\n+[x]\n*** End Patch\n"
        await ctx.tools.execute("apply_patch", {"input": patch, **widen}, session=session)
    assert [r.summary for r in approvals.requests] == [
        f"Write {root}/.git/config", f"apply_patch\nM {root}/.git/config"]
    with open(os.path.join(root, ".git", "config"), encoding="utf-8") as handle:
        assert handle.read() == "[core]\n"
