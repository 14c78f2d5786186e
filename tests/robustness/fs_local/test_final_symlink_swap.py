"""Containment when the *final* path component is swapped for a symlink pointing out of the
root between the provider's stat and its open (``fs_local/containment.py``: the final open is
``O_NOFOLLOW`` from the parent's descriptor). A hook in that window swaps the file; the tool
call must neither show nor change anything outside."""

from __future__ import annotations

import os
from typing import Any

import pytest

import dsh_fs
from dsh_fs import Session
from dsh_fs.fs_local import LocalFileSystem, containment
from robustkit import call, snapshot

pytestmark = pytest.mark.anyio

SECRET = "TOP SECRET outside the workspace\n"


@pytest.fixture
def world(tmp_path: Any) -> tuple[str, str]:
    base = os.path.realpath(str(tmp_path))
    root, outside = os.path.join(base, "proj"), os.path.join(base, "outside")
    os.mkdir(root)
    os.mkdir(outside)
    with open(os.path.join(outside, "secret.txt"), "w") as out:
        out.write(SECRET)
    with open(os.path.join(root, "real.txt"), "w") as out:
        out.write("real one\n")
    return root, outside


def _swap_after_stat(monkeypatch: pytest.MonkeyPatch, target: str, link_to: str) -> list[str]:
    """After the first ``stat_in`` of ``target``, replace it by a symlink to ``link_to``."""
    real_stat_in = containment.stat_in
    swapped: list[str] = []

    def stat_then_swap(path: str, *, root: Any) -> os.stat_result:
        st = real_stat_in(path, root=root)
        if path == target and not swapped:
            os.rename(target, target + ".moved")
            os.symlink(link_to, target)
            swapped.append(path)
        return st

    monkeypatch.setattr(containment, "stat_in", stat_then_swap)
    return swapped


CASES = [
    ("read", {"file_path": "real.txt"}),
    ("read", {"file_path": "real.txt", "offset": 1, "limit": 1}),
    ("edit", {"file_path": "real.txt", "old_string": "real", "new_string": "pwned"}),
    ("write", {"file_path": "real.txt", "content": "pwned\n"}),
]


@pytest.mark.parametrize(("tool", "args"), CASES, ids=[f"{t}-{len(a)}" for t, a in CASES])
async def test_a_final_symlink_swapped_in_after_the_stat_is_not_followed(
        world: tuple[str, str], tool: str, args: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    root, outside = world
    ctx = dsh_fs.create_context(provider=LocalFileSystem(cwd=root, root=root))
    session = Session(cwd=root)
    assert not (await call(ctx, "read", {"file_path": "real.txt"}, session)).is_error  # observed: may be replaced
    before = snapshot(outside)
    swapped = _swap_after_stat(monkeypatch, os.path.join(root, "real.txt"), os.path.join(outside, "secret.txt"))
    result = await call(ctx, tool, args, session)
    monkeypatch.undo()
    assert swapped, "the hook never ran: the window moved"
    assert "TOP SECRET" not in result.text
    assert snapshot(outside) == before
    if tool == "read":
        assert result.error is not None and result.error.code == "FS_PERMISSION_DENIED", result.text
        assert result.text == f'Error: cannot resolve "{root}/real.txt": outside the workspace "{root}"'
    else:  # the name is no longer the regular file that was read: refused before anything is opened
        assert result.error is not None and result.error.code in ("FS_STALE_VERSION", "FS_NOT_REGULAR_FILE"), result.text
    assert os.path.islink(os.path.join(root, "real.txt"))  # left as the swap made it


async def test_the_final_open_beneath_a_root_is_o_nofollow_from_the_parent(
        world: tuple[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    root, outside = world
    where = containment.Root(root, root)
    opened: list[tuple[Any, int, Any]] = []
    real_open = os.open

    def recording_open(path: Any, flags: int, mode: int = 0o777, *, dir_fd: Any = None) -> int:
        opened.append((path, flags, dir_fd))
        return real_open(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "open", recording_open)
    fd = containment.open_in(os.path.join(root, "real.txt"), os.O_RDONLY, root=where)
    os.close(fd)
    monkeypatch.undo()
    name, flags, dir_fd = opened[-1]
    # directly below the root the name is opened by its absolute path (the root's own path is
    # the operator's), deeper from the parent's descriptor: O_NOFOLLOW on the final open either way
    assert name == os.path.join(root, "real.txt") and dir_fd is None and flags & os.O_NOFOLLOW
    os.mkdir(os.path.join(root, "sub"))
    with open(os.path.join(root, "sub", "deep.txt"), "w") as handle:
        handle.write("x\n")
    opened.clear()
    monkeypatch.setattr(os, "open", recording_open)
    fd = containment.open_in(os.path.join(root, "sub", "deep.txt"), os.O_RDONLY, root=where)
    os.close(fd)
    monkeypatch.undo()
    name, flags, dir_fd = opened[-1]
    assert name == "deep.txt" and dir_fd is not None and flags & os.O_NOFOLLOW

    os.symlink("real.txt", os.path.join(root, "in-link"))  # even a link that stays inside
    with pytest.raises(containment.Escape):
        containment.open_in(os.path.join(root, "in-link"), os.O_RDONLY, root=where)
    os.symlink(os.path.join(outside, "secret.txt"), os.path.join(root, "out-link"))
    with pytest.raises(containment.Escape):
        containment.open_in(os.path.join(root, "out-link"), os.O_RDONLY, root=where)
    st = containment.stat_in(os.path.join(root, "out-link"), root=where)
    assert os.path.stat.S_ISLNK(st.st_mode)  # the final component is not followed by stat either
    fd = containment.open_in(os.path.join(root, "out-link"), os.O_RDONLY, root=None)  # no root: followed
    try:
        assert os.read(fd, 100) == SECRET.encode()
    finally:
        os.close(fd)
