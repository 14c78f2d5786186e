"""DEVIATIONS D20: a leading ``~`` names the home directory (tracker issue 13, item 2).

Default profile: ``~`` and ``~/…`` are expanded to the home directory before resolving, so
``write("~/notes.txt")`` writes ``$HOME/notes.txt`` (not ``<cwd>/~/notes.txt``) and a
containment root applies as to any absolute path; ``./~`` and ``~user`` stay literal names; a
process without a home directory refuses such a path. The memory and S3 providers have no
home directory: refused with ``FS_NOT_FOUND`` (S3: ``tests/s3``, same rule, same code).
The reference profile keeps the literal ``~``. Through the registry, files read back.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import dsh_fs
from dsh_fs import FsError, Session
from dsh_fs.fs_local import LocalFileSystem
from dsh_fs.fs_memory import MemoryFileSystem
from filekit import get, put

pytestmark = pytest.mark.anyio

NO_HOME = 'cannot resolve "{p}": there is no home directory here; name the file from the workspace (./~ for a file named ~)'


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    path = os.path.realpath(tmp_path / "home")
    os.mkdir(path)
    monkeypatch.setenv("HOME", path)
    return path


async def test_D20_tilde_is_the_home_directory(ws: str, home: str) -> None:
    ctx = dsh_fs.create_context(cwd=ws, root=None, policy=False)  # the whole disk: home included
    s = Session(cwd=ws)
    done = await ctx.tools.execute("write", {"file_path": "~/notes.txt", "content": "hi\n"}, session=s)
    assert done.text == f"<path>{home}/notes.txt</path>\n<type>file</type>\n<content>\nCreated file\n</content>"
    assert get(f"{home}/notes.txt") == b"hi\n" and not os.path.exists(f"{ws}/~")
    missing = await ctx.tools.execute("read", {"file_path": "~/nope.txt"}, session=s)
    assert missing.text == f'Error: cannot read "{home}/nope.txt": not found'
    home_itself = await ctx.tools.execute("read", {"file_path": "~"}, session=s)
    assert home_itself.text == (f'Error: cannot read "{home}": not a regular file\n'
                                f'Hint: "{home}" is a directory; use list to see its entries.')  # L4
    edited = await ctx.tools.execute("edit", {"file_path": "~/notes.txt", "old_string": "hi", "new_string": "ho"},
                                     session=s)
    assert edited.text == f"The file {home}/notes.txt has been updated successfully."


@pytest.mark.parametrize("path", ["./~/x.txt", "~bob/x.txt", "a/~/x.txt", "~~/x.txt", "~x.txt"])
async def test_D20_other_tildes_are_literal_names(ws: str, home: str, path: str) -> None:
    put(os.path.join(ws, path), "literal\n")
    ctx = dsh_fs.create_context(cwd=ws)
    done = await ctx.tools.execute("read", {"file_path": path}, session=Session(cwd=ws))
    assert done.text.startswith(f"<path>{os.path.normpath(os.path.join(ws, path))}</path>\n"), done.text


async def test_D20_reference_keeps_the_literal_tilde(ws: str, home: str) -> None:
    ctx = dsh_fs.create_context(cwd=ws, root=None, policy=False, profile="reference")
    done = await ctx.tools.execute("write", {"file_path": "~/notes.txt", "content": "hi\n"}, session=Session(cwd=ws))
    assert not done.is_error, done.text
    assert get(f"{ws}/~/notes.txt") == b"hi\n" and not os.path.exists(f"{home}/notes.txt")


async def test_D20_containment_applies_to_the_expanded_path(ws: str, home: str) -> None:
    fs = LocalFileSystem(cwd=ws, root=ws)
    ctx = dsh_fs.create_context(provider=fs, policy=False)
    done = await ctx.tools.execute("write", {"file_path": "~/x.txt", "content": "x"}, session=Session(cwd=ws))
    assert done.error is not None and done.error.code == "FS_PERMISSION_DENIED"
    assert done.text == f'Error: cannot resolve "{home}/x.txt": outside the workspace "{ws}"'
    with pytest.raises(FsError) as caught:
        await fs.lstat("~/x.txt")
    assert str(caught.value) == f'cannot resolve "{home}/x.txt": outside the workspace "{ws}"'
    # a workspace inside the home directory: ~ paths into it are served
    inner = os.path.join(home, "proj")
    os.mkdir(inner)
    fs = LocalFileSystem(cwd=inner, root=inner)
    ctx = dsh_fs.create_context(provider=fs, policy=False)
    done = await ctx.tools.execute("write", {"file_path": "~/proj/y.txt", "content": "y"}, session=Session(cwd=inner))
    assert not done.is_error and get(f"{inner}/y.txt") == b"y"


async def test_D20_no_home_directory_is_refused(ws: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os.path, "expanduser", lambda path: path)  # no $HOME and no passwd entry
    ctx = dsh_fs.create_context(cwd=ws, policy=False)
    done = await ctx.tools.execute("write", {"file_path": "~/x.txt", "content": "x"}, session=Session(cwd=ws))
    assert done.error is not None and done.error.code == "FS_NOT_FOUND"
    assert done.text == "Error: " + NO_HOME.format(p="~/x.txt")
    assert os.listdir(ws) == []


@pytest.mark.parametrize("profile", ["default", "reference"])
async def test_D20_a_rooted_provider_has_no_home(profile: str) -> None:
    fs = MemoryFileSystem({"~/x.txt": "literal\n"}, profile=profile)
    ctx = dsh_fs.create_context(provider=fs, policy=False, profile=profile)
    done = await ctx.tools.execute("read", {"file_path": "~/x.txt"}, session=Session(cwd="/"))
    if profile == "default":
        assert done.error is not None and done.error.code == "FS_NOT_FOUND"
        assert done.text == "Error: " + NO_HOME.format(p="~/x.txt")
        literal = await ctx.tools.execute("read", {"file_path": "./~/x.txt"}, session=Session(cwd="/"))
        assert literal.text.startswith("<path>/~/x.txt</path>\n")
    else:
        assert done.text.startswith("<path>/~/x.txt</path>\n")
