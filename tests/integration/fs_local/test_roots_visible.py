"""D36: with several roots every root is visible to the model, and a symlink from one root into
another is followed there. The tools' guidance (so ``dsh-fs mcp``'s ``initialize``
instructions) and ``list`` with no ``path`` name the roots as the MCP reference filesystem
server's ``list_allowed_directories`` does (``Allowed directories:`` then one per line); a link
in root A to a file or directory of root B is read, written and listed as B's; one leading
anywhere else fails exactly as before (nothing learnt about the rest of the disk)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import dsh_fs
from dsh_fs import Session
from dsh_fs.core.system_prompt import TOOL_SECTIONS

pytestmark = pytest.mark.anyio


@pytest.fixture
def two(tmp_path: Path) -> tuple[str, str]:
    base = os.path.realpath(tmp_path)
    a, b = os.path.join(base, "A"), os.path.join(base, "B")
    os.makedirs(os.path.join(b, "sub"))
    os.mkdir(a)
    Path(b, "x.txt").write_text("in B\n")
    Path(b, "sub", "y.txt").write_text("deep\n")
    os.symlink("../B", os.path.join(a, "toB"))  # relative, climbing out of A
    os.symlink(os.path.join(b, "x.txt"), os.path.join(a, "x.txt"))  # absolute
    os.symlink("../B/sub/../x.txt", os.path.join(a, "winding.txt"))
    os.makedirs(os.path.join(base, "C"))
    Path(base, "C", "secret.txt").write_text("outside\n")
    os.symlink("../C/secret.txt", os.path.join(a, "out.txt"))
    os.symlink("../C/none.txt", os.path.join(a, "out-missing.txt"))
    os.symlink("/etc/hostname", os.path.join(a, "abs-out.txt"))
    return a, b


def allowed(*roots: str) -> str:
    return "Allowed directories:\n" + "\n".join(roots)


async def test_D36_the_guidance_and_list_without_a_path_name_every_root(two):
    a, b = two
    ctx = dsh_fs.create_context(roots=[a, b], cwd=a)
    guidance = ctx.system_prompt.render(only=TOOL_SECTIONS)
    assert guidance.startswith(allowed(a, b) + "\n\n")
    listed = (await ctx.tools.execute("list", {})).text
    assert listed.endswith("\n" + allowed(a, b) + "\n</content>")
    here = (await ctx.tools.execute("list", {"path": "."})).text
    assert "Allowed directories" not in here and here == listed.replace("\n" + allowed(a, b), "")
    one = dsh_fs.create_context(root=a, cwd=a)
    assert "Allowed directories" not in one.system_prompt.render()
    assert "Allowed directories" not in (await one.tools.execute("list", {})).text


async def test_D36_a_link_into_another_root_is_followed_there(two):
    a, b = two
    ctx, session = dsh_fs.create_context(roots=[a, b], cwd=a), Session(cwd=a)
    for path in ("x.txt", "toB/x.txt", "winding.txt"):
        result = await ctx.tools.execute("read", {"file_path": path}, session=session)
        assert "1: in B" in result.text, (path, result.text)
    assert "1: deep" in (await ctx.tools.execute("read", {"file_path": "toB/sub/y.txt"})).text
    listed = (await ctx.tools.execute("list", {})).text
    assert "\ntoB/\n" in listed and "\nx.txt (5 bytes)\n" in listed
    written = await ctx.tools.execute("write", {"file_path": "toB/new.txt", "content": "n"}, session=session)
    assert not written.is_error, written.text
    edited = await ctx.tools.execute("edit", {"file_path": "x.txt", "old_string": "in B", "new_string": "IN B"},
                                     session=session)
    assert not edited.is_error, edited.text
    assert Path(b, "new.txt").read_text() == "n" and Path(b, "x.txt").read_text() == "IN B\n"
    assert os.path.islink(os.path.join(a, "x.txt")) and os.path.islink(os.path.join(a, "toB"))


async def test_D36_a_link_anywhere_else_is_refused_alike(two):
    a, b = two
    ctx = dsh_fs.create_context(roots=[a, b], cwd=a)
    texts = []
    for path in ("out.txt", "out-missing.txt", "abs-out.txt", "toB/../../C/secret.txt"):
        result = await ctx.tools.execute("read", {"file_path": path})
        assert result.error is not None and result.error.code == "FS_PERMISSION_DENIED", result.text
        texts.append(result.text.split('": ', 1)[1])
    assert set(texts) == {f'outside the workspace "{a}", "{b}"'}
    single = dsh_fs.create_context(root=a, cwd=a)
    refused = await single.tools.execute("read", {"file_path": "x.txt"})
    assert refused.text == f'Error: cannot resolve "{a}/x.txt": outside the workspace "{a}"'
