"""The local provider's ``list_dir`` (§2.6, ``fs_local.fsio.list_directory``): a child that is
no symlink is stat'ed through the directory's descriptor, every other child is resolved and
stat'ed as a path (§2.6 step 6). The entries are exactly those of the per-child path walk for
every kind of child — files, directories, links in and out, broken links, loops, a FIFO, the
names the walk treats specially (blank, ``~``, not UTF-8) — with and without a containment
root, in both profiles; a child that becomes a link between the read and its stat is walked."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import pytest

from dsh_fs.core.profile import Profile
from dsh_fs.fs.errors import FsError
from dsh_fs.fs_local import fsio
from dsh_fs.fs_local.filesystem import LocalFileSystem

pytestmark = pytest.mark.anyio


def _kinds(ws: Path) -> None:
    outside = ws.parent / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("s")
    (ws / "src").mkdir()
    (ws / "a.txt").write_text("hello")
    (ws / "empty").write_bytes(b"")
    os.symlink("a.txt", ws / "to-file")
    os.symlink("src", ws / "to-dir")
    os.symlink("../outside", ws / "out-dir")
    os.symlink("../outside/secret.txt", ws / "out-file")
    os.symlink("nowhere", ws / "broken")
    os.symlink("loop", ws / "loop")
    os.mkfifo(ws / "fifo")
    (ws / "~").write_text("tilde")
    (ws / "é.md").write_text("e")
    os.mkdir(os.fsencode(ws / "bad-") + b"\xff")


def _walked(target: Any, rules: Any) -> list[Any]:
    """Every child through the path walk (the §2.6 algorithm, one child at a time)."""
    names = sorted(os.listdir(target.key))
    return [fsio._linked_child(target, name, target.display_path.rstrip("/") + "/" + name, rules) for name in names]


async def _both(ws: Path, *, profile: str, root: bool) -> tuple[Any, Any]:
    fs = LocalFileSystem(cwd=str(ws), profile=Profile(profile), root=str(ws) if root else None)
    target = await fs.resolve(".", cwd=str(ws))

    def listed() -> Any:
        try:
            return fsio.list_directory(target, signal=None, rules=fs.rules)
        except FsError as exc:
            return (exc.code, str(exc))

    def walked() -> Any:
        try:
            return _walked(target, fs.rules)
        except FsError as exc:
            return (exc.code, str(exc))

    return await anyio.to_thread.run_sync(listed), await anyio.to_thread.run_sync(walked)


@pytest.mark.parametrize("profile", ["default", "reference"])
@pytest.mark.parametrize("root", [True, False])
async def test_the_listing_is_the_path_walks(tmp_path: Path, profile: str, root: bool) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    _kinds(ws)
    listed, walked = await _both(ws, profile=profile, root=root)
    if profile == "reference":  # the loop fails the whole listing there (E23 is the default's)
        assert isinstance(listed, tuple) and listed == walked
        os.unlink(ws / "loop")
        listed, walked = await _both(ws, profile=profile, root=root)
    assert not isinstance(listed, tuple), listed
    assert [e.as_dict() for e in listed] == [e.as_dict() for e in walked]
    kinds = {e.name: e.type for e in listed}  # "~" is the child, not the home directory (D20 is for given paths)
    assert kinds["a.txt"] == kinds["~"] == kinds["to-file"] == "file" and kinds["src"] == kinds["to-dir"] == "directory"
    assert kinds["fifo"] == kinds["broken"] == "other"
    assert (kinds["out-dir"], kinds["out-file"]) == (("other", "other") if root else ("directory", "file"))
    assert next(e for e in listed if e.name == "a.txt").size == 5


@pytest.mark.parametrize("profile", ["default", "reference"])
async def test_a_blank_name_fails_the_listing_as_the_walk_does(tmp_path: Path, profile: str) -> None:
    """§2.6's quirk: a child named with whitespace only fails the whole listing."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a")
    (ws / " ").write_text("blank")
    (ws / "\u00a0").write_text("a no-break space is blank to JavaScript's trim")
    listed, walked = await _both(ws, profile=profile, root=True)
    assert isinstance(listed, tuple) and listed == walked
    assert listed[1] == "file_path must be a non-empty string"


async def test_a_child_made_a_link_out_after_the_read_is_walked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (tmp_path / "outside").mkdir()
    (ws / "a.txt").write_text("a")
    (ws / "b.txt").write_text("b")
    real_scandir = os.scandir

    class Swapped:
        """The directory read, then ``b.txt`` swapped for a link out before any child is stat'ed."""

        def __init__(self, fd: int) -> None:
            with real_scandir(fd) as scanned:
                self.entries = list(scanned)
            os.unlink(ws / "b.txt")
            os.symlink("../outside", ws / "b.txt")

        def __enter__(self) -> list[os.DirEntry[str]]:
            return self.entries

        def __exit__(self, *exc: object) -> None:
            return None

    monkeypatch.setattr(fsio.os, "scandir", Swapped)
    fs = LocalFileSystem(cwd=str(ws), root=str(ws))
    entries = await fs.list_dir(await fs.resolve(".", cwd=str(ws)))
    assert [(e.name, e.type, e.version is None) for e in entries] == [("a.txt", "file", False), ("b.txt", "other", True)]
