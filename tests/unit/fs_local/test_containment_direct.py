"""``fs_local.containment``: the first step below the root is made by absolute path with
``O_NOFOLLOW`` instead of through a descriptor of the root — the same lookup, two system calls
fewer. These tests pin that it refuses exactly what the descriptor walk refuses (a symlink
directly below the root, as the file or as the first directory) and that the root itself is
no longer opened for a file directly below it."""

from __future__ import annotations

import os
from typing import Any

import pytest

from dsh_fs.fs_local import containment

FLAGS = os.O_RDONLY | os.O_CLOEXEC


@pytest.fixture
def root(tmp_path: Any) -> containment.Root:
    real = os.path.realpath(tmp_path / "ws")
    os.mkdir(real)
    with open(os.path.join(real, "a.txt"), "w") as handle:
        handle.write("a")
    os.mkdir(os.path.join(real, "sub"))
    with open(os.path.join(real, "sub", "b.txt"), "w") as handle:
        handle.write("b")
    outside = tmp_path / "outside"
    os.mkdir(outside)
    (outside / "secret.txt").write_text("s")
    os.symlink(outside / "secret.txt", os.path.join(real, "link.txt"))
    os.symlink(outside, os.path.join(real, "linkdir"))
    return containment.Root(real, real)


def _opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    real_open = os.open

    def spy(path: Any, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
        seen.append(os.fspath(path))
        return real_open(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "open", spy)
    return seen


def test_a_file_directly_below_the_root_opens_without_the_root(root: containment.Root, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _opened(monkeypatch)
    fd = containment.open_in(os.path.join(root.real, "a.txt"), FLAGS, root=root)
    try:
        assert os.read(fd, 10) == b"a"
    finally:
        os.close(fd)
    assert seen == [os.path.join(root.real, "a.txt")]
    assert containment.stat_in(os.path.join(root.real, "a.txt"), root=root).st_size == 1


def test_a_deeper_file_walks_from_the_first_directory(root: containment.Root, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _opened(monkeypatch)
    fd = containment.open_in(os.path.join(root.real, "sub", "b.txt"), FLAGS, root=root)
    os.close(fd)
    assert seen == [os.path.join(root.real, "sub"), "b.txt"]


def test_symlinks_directly_below_the_root_are_still_refused(root: containment.Root) -> None:
    with pytest.raises(containment.Escape):
        containment.open_in(os.path.join(root.real, "link.txt"), FLAGS, root=root)
    with pytest.raises(containment.Escape):
        containment.open_in(os.path.join(root.real, "linkdir", "secret.txt"), FLAGS, root=root)
    with pytest.raises(containment.Escape):
        containment.open_dir(os.path.join(root.real, "linkdir"), root=root)
    with pytest.raises(containment.Escape):
        containment.stat_in(os.path.join(root.real, "linkdir", "secret.txt"), root=root)
    st = containment.stat_in(os.path.join(root.real, "link.txt"), root=root)  # the link itself, not followed
    assert os.path.islink(os.path.join(root.real, "link.txt")) and st.st_size != 1


def test_create_makes_the_first_directory_by_absolute_path(root: containment.Root) -> None:
    fd = containment.open_dir(os.path.join(root.real, "new", "deeper"), root=root, create=True)
    os.close(fd)
    assert os.path.isdir(os.path.join(root.real, "new", "deeper"))
    with pytest.raises(FileNotFoundError):
        containment.open_dir(os.path.join(root.real, "none", "x"), root=root)


def test_the_fast_path_resolves_like_the_walk_for_the_disk_root(root: containment.Root) -> None:
    """Only a name directly below the root takes the one-step path; with ``/`` as the root a
    deeper path through a symlinked directory is still resolved component by component."""
    disk = containment.Root("/", "/")
    through = os.path.join(root.real, "linkdir", "secret.txt")
    assert containment.real_path_in(through, disk, strict=True) == os.path.realpath(through)
    assert containment.real_path_in(through, disk, strict=False) == os.path.realpath(through)
    assert containment.real_path_in(os.path.join(root.real, "a.txt"), disk, strict=True) == os.path.join(root.real, "a.txt")
    fd = containment.open_dir(os.path.join(root.real, "sub"), root=disk)  # the walk's first step below "/"
    try:
        assert os.listdir(fd) == ["b.txt"]
    finally:
        os.close(fd)


def _view(root: containment.Root) -> containment.Root:
    view = os.path.join(root.real, "sub")
    return containment.Root(view, view, anchor=root)


def test_a_view_root_resolves_its_names_below_it(root: containment.Root) -> None:
    view = _view(root)
    assert containment.real_path_in(os.path.join(view.real, "b.txt"), view, strict=True) == os.path.join(view.real, "b.txt")
    os.symlink("b.txt", os.path.join(view.real, "c.txt"))
    assert containment.real_path_in(os.path.join(view.real, "c.txt"), view, strict=True) == os.path.join(view.real, "b.txt")


def test_a_removed_view_root_is_missing_not_an_escape(root: containment.Root) -> None:
    view = _view(root)
    os.remove(os.path.join(view.real, "b.txt"))
    os.rmdir(view.real)
    assert containment.real_path_in(os.path.join(view.real, "b.txt"), view, strict=False) == os.path.join(view.real, "b.txt")
    with pytest.raises(FileNotFoundError):
        containment.real_path_in(os.path.join(view.real, "b.txt"), view, strict=True)


@pytest.mark.parametrize("target", ["outside", "inside"])
def test_a_view_root_swapped_for_a_symlink_is_an_escape_even_for_a_name_directly_below_it(
        root: containment.Root, tmp_path: Any, target: str) -> None:
    """A view root (DEVIATIONS M3) takes no fast path: every resolution first checks that the
    view root is still itself, whether the symlink now there leads out or elsewhere inside."""
    view = _view(root)
    moved = os.path.join(root.real, "sub.old")
    os.rename(view.real, moved)
    os.symlink(str(tmp_path / "outside") if target == "outside" else moved, view.real)
    name = "secret.txt" if target == "outside" else "b.txt"
    for strict in (True, False):
        with pytest.raises(containment.Escape):
            containment.real_path_in(os.path.join(view.real, name), view, strict=strict)


def test_a_view_root_walks_from_its_anchor(root: containment.Root) -> None:
    view = _view(root)
    fd = containment.open_dir(view.real, root=view)
    try:
        assert sorted(os.listdir(fd)) == ["b.txt"]
    finally:
        os.close(fd)
    fd = containment.open_in(os.path.join(view.real, "b.txt"), FLAGS, root=view)
    try:
        assert os.read(fd, 10) == b"b"
    finally:
        os.close(fd)
    assert containment.stat_in(os.path.join(view.real, "b.txt"), root=view).st_size == 1
    for each in (view, root):  # the root itself: from its parent for a view, as it is for a provider root
        fd = containment.open_in(each.real, FLAGS | os.O_DIRECTORY, root=each)
        try:
            assert os.path.samestat(os.fstat(fd), os.stat(each.real))
        finally:
            os.close(fd)


def test_a_walk_of_a_swapped_view_root_is_an_escape_of_the_view(root: containment.Root, tmp_path: Any) -> None:
    view = _view(root)
    os.rename(view.real, os.path.join(root.real, "sub.old"))
    os.symlink(str(tmp_path / "outside"), view.real)
    for attempt in (lambda: containment.open_dir(view.real, root=view),
                    lambda: containment.open_in(os.path.join(view.real, "secret.txt"), FLAGS, root=view),
                    lambda: containment.open_in(view.real, FLAGS, root=view),
                    lambda: containment.stat_in(os.path.join(view.real, "secret.txt"), root=view)):
        with pytest.raises(containment.Escape) as caught:
            attempt()
        assert caught.value.root is view


def _dirs_to_length(base: str, total: int) -> str:
    """Directories made below ``base`` until the path is exactly ``total`` UTF-8 bytes long, of
    two-byte characters where they fit (so the path has fewer characters than bytes); no
    component over ``NAME_MAX`` (255 bytes), whatever ``base``'s own length."""
    path = base
    while (remaining := total - len(path.encode())) > 0:
        # one component of ``size`` bytes plus its slash; never leave a single byte behind
        size = remaining - 1 if remaining <= 255 else min(254, remaining - 3)
        path = os.path.join(path, "\u00e9" * (size // 2) + "x" * (size % 2))
        os.mkdir(path)
    assert len(path.encode()) == total
    return path


@pytest.mark.parametrize("pad", range(0, 48, 3))
@pytest.mark.parametrize("extra", [0, 40])
def test_a_name_below_a_root_too_long_for_an_absolute_path_is_opened_below_its_descriptor(
        tmp_path: Any, extra: int, pad: int) -> None:
    """A path under ``PATH_MAX`` characters can still be ``PATH_MAX`` bytes or more (exactly,
    or ``extra`` more): then the name is opened below the root's descriptor, as the kernel
    would not take the path. ``pad`` shifts the temp directory's length: the root is built to
    an exact length, so the name fits ``NAME_MAX`` for every base path."""
    base = os.path.join(os.path.realpath(tmp_path), "p" * pad) if pad else os.path.realpath(tmp_path)
    os.makedirs(base, exist_ok=True)
    size = 200  # the name's bytes: under NAME_MAX
    real = _dirs_to_length(base, 4_096 - 1 + extra - size)
    root = containment.Root(real, real)
    name = "\u00e9" * (size // 2)
    path = os.path.join(real, name)
    assert len(path) < 4_096 and len(path.encode()) == 4_096 + extra
    fd = os.open(real, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.close(os.open(name, os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd))
    finally:
        os.close(fd)
    assert containment.stat_in(path, root=root).st_size == 0
    os.close(containment.open_in(path, FLAGS, root=root))


def test_a_view_root_refuses_what_lies_outside_it_in_its_anchor(root: containment.Root) -> None:
    view = _view(root)
    beside = os.path.join(root.real, "a.txt")  # inside the provider root, outside the view
    for attempt in (lambda: containment.stat_in(beside, root=view), lambda: containment.open_in(beside, FLAGS, root=view),
                    lambda: containment.real_path_in(beside, view, strict=True)):
        with pytest.raises(containment.Escape):
            attempt()


def test_lstat_of_a_view_root_below_a_swapped_directory_is_an_escape(root: containment.Root, tmp_path: Any) -> None:
    inner = os.path.join(root.real, "sub", "inner")
    os.mkdir(inner)
    view = containment.Root(inner, inner, anchor=root)
    assert os.path.samestat(containment.lstat_in(inner, root=view), os.lstat(inner))
    os.rename(os.path.join(root.real, "sub"), os.path.join(root.real, "sub.old"))
    os.mkdir(tmp_path / "outside" / "inner")
    os.symlink(str(tmp_path / "outside"), os.path.join(root.real, "sub"))
    with pytest.raises(containment.Escape):
        containment.lstat_in(inner, root=view)
