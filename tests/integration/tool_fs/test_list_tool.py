"""The ``list`` tool through the registry on the real disk (docs/LIST.md): the reference's
schema, description, prompt section and texts in the ``reference`` profile when it is loaded
there (its default tool set stays the seed's), the default profile's L1–L4, containment,
no observation recorded. Every provider: tests/contract/test_list_providers.py; the renderer
alone: tests/unit/tool_fs/test_list_render.py; the CLI and MCP: tests/e2e/cli/test_cli_list.py.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

import dsh_fs
from dsh_fs import Session

pytestmark = pytest.mark.anyio

DESCRIPTION = (
    "List the direct children of one directory, with their type. Entries are directories first, then files, each "
    "alphabetical; up to 200 are returned from the requested offset, and the footer gives the complete count plus a "
    "next offset when more remain. It includes subdirectories and is the tool for seeing one directory's contents."
)
PROMPT = (
    "Use the list tool — not shell ls — to see what a directory contains. It returns the direct children of one "
    "directory, files and subdirectories alike, and defaults to the session workspace, so it is the first step for "
    "orienting in an unfamiliar project. When a result is capped, continue with the offset named in its footer."
)


def tree(root: Path) -> None:
    (root / "src").mkdir()
    (root / "archive").mkdir()
    (root / "empty").mkdir()
    (root / "notes.md").write_text("hello\n")
    (root / "b.txt").write_text("b")
    os.symlink("/etc", root / "outside")  # leads out of the root: listed, never followed
    os.symlink("notes.md", root / "inside")  # stays inside: the type of its target
    os.mkfifo(root / "pipe")


async def run(ctx: dsh_fs.Context, root: Path, **args: Any) -> Any:
    return await ctx.tools.execute("list", args, session=Session(cwd=str(root)))


async def test_the_reference_profile_keeps_the_seed_tool_set_and_loads_list_when_asked(tmp_path: Path) -> None:
    seed = dsh_fs.create_context(cwd=str(tmp_path), profile="reference")
    assert "list" not in seed.tools.names() and "tool:list" not in seed.system_prompt.names()
    ctx = dsh_fs.create_context(cwd=str(tmp_path), profile="reference", list_tool=True)
    schema = next(s for s in ctx.tools.schemas() if s["name"] == "list")
    assert schema == {
        "name": "list",
        "description": DESCRIPTION,
        "parameters": {
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Directory to list. Defaults to the session workspace; a "
                         "relative path resolves against it."},
                "offset": {"type": "number", "description": "1-based first entry to return. Defaults to 1; use the "
                           "footer value to continue."},
            },
        },
    }
    assert [(s.name, s.order) for s in ctx.system_prompt.sections()][:3] == [
        ("harness:identity", -100), ("deployment:persona", 0), ("tool:list", 99)]
    assert f"\n\n{PROMPT}\n\n" in ctx.system_prompt.render()
    assert ctx.tools.is_parallel("list", {}) and ctx.tools.is_parallel("list", {"path": "src", "offset": 2})


async def test_reference_texts(tmp_path: Path) -> None:
    tree(tmp_path)
    ctx = dsh_fs.create_context(cwd=str(tmp_path), profile="reference", list_tool=True, list_max_entries=3)
    first = await run(ctx, tmp_path)
    assert first.text == (
        f"<path>{tmp_path}</path>\n<type>directory</type>\n<content>\narchive/\nempty/\nsrc/\n\n"
        "(Showing entries 1-3 of 8: 3 directories, 3 files, 2 other. Use offset=4 to continue.)\n</content>")
    assert first.meta["totalEntries"] == 8 and first.meta["counts"] == {"directories": 3, "files": 3, "other": 2}
    rest = await run(ctx, tmp_path, offset=4)
    assert rest.text.split("<content>\n")[1] == (
        "b.txt\ninside\nnotes.md\n\n(Showing entries 4-6 of 8: 3 directories, 3 files, 2 other. Use offset=7 to continue.)"
        "\n</content>")
    last = await run(ctx, tmp_path, offset=7.0)
    assert "outside@\npipe@\n\n(Showing entries 7-8 of 8: 3 directories, 3 files, 2 other.)" in last.text
    empty = await run(ctx, tmp_path, path="empty")
    assert empty.text == f"<path>{tmp_path}/empty</path>\n<type>directory</type>\n<content>\n(Empty directory)\n</content>"
    assert (await run(ctx, tmp_path, path="empty", offset=1)).is_error is False


@pytest.mark.parametrize(
    ("args", "code", "text"),
    [
        ({"path": "  "}, None, "Error: path must be a non-empty string when given"),
        ({"offset": 0}, None, "Error: offset must be a positive integer"),
        ({"offset": 1.5}, None, "Error: offset must be a positive integer"),
        ({"offset": 9}, "FS_NOT_FOUND", 'Error: offset 9 is out of range for "<root>" (8 entries)'),
        ({"path": "notes.md"}, "FS_NOT_DIRECTORY", 'Error: cannot list "<root>/notes.md": not a directory'),
        ({"path": "nope"}, "FS_NOT_FOUND", 'Error: cannot list "<root>/nope": not found'),
        ({"path": "outside"}, "FS_PERMISSION_DENIED", 'Error: cannot resolve "<root>/outside": outside the workspace "<root>"'),
        ({"path": ".."}, "FS_PERMISSION_DENIED", 'Error: cannot resolve "<parent>": outside the workspace "<root>"'),
        ({"path": "empty", "offset": 2}, "FS_NOT_FOUND", 'Error: offset 2 is out of range for "<root>/empty" (0 entries)'),
    ],
)
@pytest.mark.parametrize("profile", ["default", "reference"])
async def test_errors(tmp_path: Path, profile: str, args: dict[str, Any], code: str | None, text: str) -> None:
    tree(tmp_path)
    ctx = dsh_fs.create_context(cwd=str(tmp_path), profile=profile, list_tool=True)
    result = await run(ctx, tmp_path, **args)
    assert result.is_error
    assert (result.error.code if result.error else None) == code
    assert result.text == text.replace("<root>", str(tmp_path)).replace("<parent>", str(tmp_path.parent))


async def test_default_profile(tmp_path: Path) -> None:  # L1 (served), L2 (sizes)
    tree(tmp_path)
    ctx = dsh_fs.create_context(cwd=str(tmp_path))
    assert "list" in ctx.tools.names()
    result = await run(ctx, tmp_path)
    assert result.text.split("<content>\n")[1] == (
        "archive/\nempty/\nsrc/\nb.txt (1 byte)\ninside (6 bytes)\nnotes.md (6 bytes)\noutside@\npipe@\n\n"
        "(8 entries: 3 directories, 3 files, 2 other)\n</content>")


async def test_a_link_to_a_directory_inside_is_listed_as_its_target(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "a.md").write_text("a")
    os.symlink("real", tmp_path / "symlink")
    ctx = dsh_fs.create_context(cwd=str(tmp_path), profile="reference", list_tool=True)
    assert "real/\nsymlink/\n" in (await run(ctx, tmp_path)).text
    assert "\na.md\n" in (await run(ctx, tmp_path, path="symlink")).text


async def test_read_of_a_directory_names_list(tmp_path: Path) -> None:  # L4
    tree(tmp_path)
    session = Session(cwd=str(tmp_path))
    better = await dsh_fs.create_context(cwd=str(tmp_path)).tools.execute("read", {"file_path": "src"}, session=session)
    assert better.text == (f'Error: cannot read "{tmp_path}/src": not a regular file\n'
                           f'Hint: "{tmp_path}/src" is a directory; use list to see its entries.')
    assert better.error is not None and better.error.code == "FS_NOT_REGULAR_FILE"
    for ctx in (dsh_fs.create_context(cwd=str(tmp_path), profile="reference", list_tool=True),
                dsh_fs.create_context(cwd=str(tmp_path), list_tool=False)):
        plain = await ctx.tools.execute("read", {"file_path": "src"}, session=session)
        assert plain.text == f'Error: cannot read "{tmp_path}/src": not a regular file'
    fifo = await dsh_fs.create_context(cwd=str(tmp_path)).tools.execute("read", {"file_path": "pipe"}, session=session)
    assert "Hint" not in fifo.text


async def test_a_listing_is_not_an_observation(tmp_path: Path) -> None:
    tree(tmp_path)
    ctx = dsh_fs.create_context(cwd=str(tmp_path))
    seen: list[Any] = []
    ctx.on("fs/observed", lambda *a: seen.append(a))
    session = Session(cwd=str(tmp_path))
    assert not (await ctx.tools.execute("list", {}, session=session)).is_error
    assert seen == []
    edit = await ctx.tools.execute("edit", {"file_path": "notes.md", "old_string": "h", "new_string": "j"}, session=session)
    assert edit.error is not None and edit.error.code == "FS_NOT_OBSERVED"
    assert (tmp_path / "notes.md").read_text() == "hello\n"


async def test_a_bad_setting_is_refused_at_load(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="^tool-fs: listMaxEntries must be a positive integer$"):
        dsh_fs.create_context(cwd=str(tmp_path), list_max_entries=0)
