"""The approval prompt names each real file an escalated call will change (docs/SANDBOX.md
"Escalation"; ``fs_sandbox.changes``), through the registry with a scripted approver.

A model asking to escalate a ``write`` of ``"README.md" + 300 spaces + "/../.git/config"`` must
not be shown as ``Write README.md␠␠␠…``: the prompt names ``<ws>/.git/config`` (the cwd, ``..``
and symlinks resolved), one file a line, whitespace runs and invisible characters escaped. In
the default profile such a ``..`` (after a missing name or a file) is refused before anyone is
asked (X6). Not here: the MCP elicitation itself (``tests/e2e/mcp/test_mcp_sandbox.py``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from sandboxkit import Approvals, base, snapshot  # noqa: F401  (fixture)

import dsh_fs
from dsh_fs import Session

pytestmark = pytest.mark.anyio

WIDEN = {"sandbox_permissions": "danger-full-access", "justification": "Fix a typo in the README."}
TRICK = "README.md" + " " * 300 + "/../.git/config"
HOOK = "[core]\n\tfsmonitor = touch /tmp/pwned\n"


@pytest.fixture
def repo(base: Path) -> Path:  # noqa: F811
    ws = base / "ws"
    (ws / ".git").mkdir()
    (ws / ".git" / "config").write_text("[core]\n")
    (ws / "README.md").write_text("# readme\n")
    return ws


def ctx_for(ws: Path, approvals: Approvals, *, profile: str = "default", mode: str = "read-only") -> Any:
    return dsh_fs.create_context(root=None, cwd=ws, sandbox=mode, approval=approvals, profile=profile,
                                 faces=["apply_patch"])


async def test_X6_a_dotdot_after_a_missing_name_is_refused_before_anyone_is_asked(repo: Path) -> None:
    approvals = Approvals("allowed-once")
    ctx = ctx_for(repo, approvals)
    before = snapshot(repo)
    result = await ctx.tools.execute("write", {"file_path": TRICK, "content": HOOK, **WIDEN}, session=Session(repo))
    assert result.is_error and result.text == (
        f'Error: cannot resolve "{repo}/{TRICK}": a parent path segment is not a directory')
    assert result.error.code == "FS_NOT_FOUND"
    assert approvals.requests == [] and snapshot(repo) == before


async def test_X6_a_dotdot_after_a_file_is_refused_before_anyone_is_asked(repo: Path) -> None:
    approvals = Approvals("allowed-once")
    ctx = ctx_for(repo, approvals)
    before = snapshot(repo)
    for path in ("README.md/../.git/config", f"{repo}/README.md/./../.git/config"):
        result = await ctx.tools.execute("edit", {"file_path": path, "old_string": "[core]", "new_string": "[x]",
                                                  **WIDEN}, session=Session(repo))
        assert result.is_error and "a parent path segment is not a directory" in result.text, result.text
    assert approvals.requests == [] and snapshot(repo) == before


async def test_the_reference_profile_asks_about_the_file_the_lexical_dotdot_reaches(repo: Path) -> None:
    approvals = Approvals("rejected")
    ctx = ctx_for(repo, approvals, profile="reference")
    before = snapshot(repo)
    result = await ctx.tools.execute("write", {"file_path": TRICK, "content": HOOK, **WIDEN}, session=Session(repo))
    assert result.text == 'Error: the user rejected escalating this operation to "danger-full-access"'
    [request] = approvals.requests
    assert request.summary == f"Write {repo}/.git/config"
    assert snapshot(repo) == before


@pytest.mark.parametrize("profile", ["default", "reference"])
async def test_a_symlinked_directory_is_named_by_its_real_place(repo: Path, profile: str) -> None:
    os.symlink(".git", repo / "docs")
    approvals = Approvals("rejected")
    ctx = ctx_for(repo, approvals, profile=profile)
    await ctx.tools.execute("write", {"file_path": "docs/config", "content": HOOK, **WIDEN}, session=Session(repo))
    await ctx.tools.execute("edit", {"file_path": f"{repo}/docs/config", "old_string": "[core]", "new_string": "[x]",
                                     **WIDEN}, session=Session(repo / "docs"))
    assert [r.summary for r in approvals.requests] == [f"Write {repo}/.git/config", f"Edit {repo}/.git/config"]


async def test_a_symlinked_file_and_the_cwd_are_resolved(repo: Path, base: Path) -> None:  # noqa: F811
    (repo / "sub").mkdir()
    os.symlink(base / "out" / "target.txt", repo / "sub" / "notes.txt")
    approvals = Approvals("rejected")
    ctx = ctx_for(repo, approvals)
    await ctx.tools.execute("write", {"file_path": "notes.txt", "content": "x", **WIDEN}, session=Session(repo / "sub"))
    await ctx.tools.execute("write", {"file_path": "../new.txt", "content": "x", **WIDEN}, session=Session(repo / "sub"))
    assert [r.summary for r in approvals.requests] == [f"Write {base}/out/target.txt", f"Write {repo}/new.txt"]


async def test_whitespace_runs_and_invisible_characters_are_escaped(repo: Path) -> None:
    approvals = Approvals("rejected")
    ctx = ctx_for(repo, approvals)
    for name in ("a   b.txt", "trail ", "a\u200bb\u2060c\ufeff.txt", "x\u202etxt.exe", "br\u2800aille", "nb\u00a0sp"):
        await ctx.tools.execute("write", {"file_path": name, "content": "x", **WIDEN}, session=Session(repo))
    assert [r.summary.removeprefix(f"Write {repo}/") for r in approvals.requests] == [
        "a\\u0020\\u0020\\u0020b.txt", "trail\\u0020", "a\\u200bb\\u2060c\\ufeff.txt", "x\\u202etxt.exe",
        "br\\u2800aille", "nb\\u00a0sp"]
    assert [r.reason for r in approvals.requests] == ["escalate sandbox to danger-full-access: Fix a typo in the "
                                                      "README."] * 6


async def test_the_patch_rows_name_real_files(repo: Path, base: Path) -> None:  # noqa: F811
    os.symlink(".git", repo / "docs")
    (repo / "m.txt").write_text("m\n")
    (repo / "sub").mkdir()
    approvals = Approvals("rejected")
    ctx = ctx_for(repo, approvals)
    text = ("*** Begin Patch\n*** Add File: docs/hooks/post-checkout\n+#!/bin/sh\n"
            "*** Update File: docs/config\n@@\n-[core]\n+[core]\n+\tfsmonitor = x\n"
            "*** Update File: m.txt\n*** Move to: sub/../docs/moved\n@@\n-m\n+M\n"
            "*** Delete File: a\u200b.txt\n*** End Patch\n")
    before = snapshot(repo)
    result = await ctx.tools.execute("apply_patch", {"input": text, **WIDEN}, session=Session(repo))
    assert result.text == 'Error: the user rejected escalating this operation to "danger-full-access"'
    [request] = approvals.requests
    assert request.summary.split("\n") == [
        "apply_patch", f"A {repo}/.git/hooks/post-checkout", f"M {repo}/.git/config",
        f"M {repo}/m.txt -> {repo}/.git/moved", f"D {repo}/a\\u200b.txt"]
    assert snapshot(repo) == before


async def test_X6_a_patch_row_with_a_dotdot_after_a_missing_name_refuses_the_patch(repo: Path) -> None:
    approvals = Approvals("allowed-once")
    ctx = ctx_for(repo, approvals)
    text = "*** Begin Patch\n*** Add File: ok.txt\n+ok\n*** Add File: nope   /../.git/hooks/pre-commit\n+x\n*** End Patch\n"
    before = snapshot(repo)
    result = await ctx.tools.execute("apply_patch", {"input": text, **WIDEN}, session=Session(repo))
    assert result.is_error and "a parent path segment is not a directory" in result.text, result.text
    assert approvals.requests == [] and snapshot(repo) == before


async def test_a_call_not_wider_is_refused_before_any_path_is_resolved(repo: Path) -> None:
    """The reference's order: ``not strictly wider`` comes first, whatever the path."""
    approvals = Approvals("allowed-once")
    ctx = ctx_for(repo, approvals, mode="danger-full-access")
    result = await ctx.tools.execute("write", {"file_path": TRICK, "content": HOOK, **WIDEN}, session=Session(repo))
    assert result.text == ('Error: sandbox escalation to "danger-full-access" is not strictly wider than this call\'s '
                           'current "danger-full-access" mode')
    assert approvals.requests == []


@pytest.mark.parametrize("via", ["out-and-back", "denied"])
async def test_X6_a_prefix_outside_the_root_or_denied_does_not_end_the_check(repo: Path, via: str) -> None:
    """Each ``..`` is checked: a prefix that leaves the root (or one the path rules deny) is left
    to the whole path's resolution, and the ``..`` after ``README.md␠␠␠…`` is still refused."""
    approvals = Approvals("allowed-once")
    (repo / "secrets").mkdir()
    if via == "out-and-back":
        trick = f"../out/../{repo.name}/{TRICK}"
        ctx = dsh_fs.create_context(root=repo, sandbox="read-only", approval=approvals, faces=["apply_patch"])
    else:
        trick = f"secrets/../{TRICK}"
        ctx = dsh_fs.create_context(root=None, cwd=repo, sandbox="read-only", approval=approvals, deny=["secrets/"],
                                    faces=["apply_patch"])
    (repo / "a").mkdir()
    before = snapshot(repo)
    result = await ctx.tools.execute("write", {"file_path": trick, "content": HOOK, **WIDEN}, session=Session(repo))
    assert result.is_error and "a parent path segment is not a directory" in result.text, result.text
    patch = f"*** Begin Patch\n*** Add File: {trick.replace('config', 'hooks/pre-commit')}\n+x\n*** End Patch\n"
    result = await ctx.tools.execute("apply_patch", {"input": patch, **WIDEN}, session=Session(repo))
    assert result.is_error and "a parent path segment is not a directory" in result.text, result.text
    assert approvals.requests == [] and snapshot(repo) == before
