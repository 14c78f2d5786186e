"""The provider contract's tests of ``resolve`` (mixins of ``dsh_fs.testing.contract``)."""

from __future__ import annotations

import pytest

from ...core.signal import AbortSignal
from ...fs.types import CreateIfAbsent
from ..workspaces import Workspace
from .base import ContractBase, _fails

__all__ = ("ResolveContract",)


class ResolveContract(ContractBase):
    """``resolve``: cwd, absolute paths, spellings, blank paths, abort."""

    async def test_resolve_relative_against_cwd_else_default(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("sub/a.txt", b"a\n")
        via_cwd = await fs.resolve("a.txt", cwd=workspace.path("sub"))
        via_default = await fs.resolve("sub/a.txt")
        assert via_cwd.display_path == via_default.display_path == workspace.path("sub/a.txt")
        assert via_cwd.key == via_default.key
        assert await fs.read_text(via_cwd) == "a\n"

    async def test_resolve_absolute_ignores_cwd(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("a.txt", b"top\n")
        await workspace.mkdir("sub")
        target = await fs.resolve(workspace.path("a.txt"), cwd=workspace.path("sub"))
        assert target.display_path == workspace.path("a.txt")
        assert await fs.read_text(target) == "top\n"

    async def test_resolve_spellings_share_one_key(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("a.txt", b"x")
        await workspace.mkdir("sub")
        targets = [await fs.resolve(p) for p in ("a.txt", "./a.txt", "sub/../a.txt", "sub//..//a.txt/", workspace.path("a.txt"))]
        assert {t.key for t in targets} == {targets[0].key}
        assert {t.display_path for t in targets} == {workspace.path("a.txt")}

    async def test_resolve_key_is_stable_across_create(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        before = await fs.resolve("new/deeper/x.txt")
        await fs.write_text(before, "x", CreateIfAbsent())
        after = await fs.resolve("new/deeper/x.txt")
        assert after == before

    @pytest.mark.parametrize("blank", ["", " ", "\t\n", "\u00a0"])
    async def test_resolve_rejects_blank_paths(self, workspace: Workspace, blank: str) -> None:
        fs = await workspace.provider()
        await _fails(fs.resolve(blank), "FS_NOT_FOUND", "file_path must be a non-empty string")

    async def test_resolve_keeps_surrounding_spaces(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put(" a.txt", b"spaced")
        target = await fs.resolve(" a.txt")
        assert target.display_path == workspace.path(" a.txt")
        assert await fs.read_text(target) == "spaced"

    async def test_resolve_honors_a_pre_aborted_signal(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await _fails(fs.resolve("a.txt", signal=AbortSignal.aborted_signal()), "FS_ABORTED", "resolve aborted")
