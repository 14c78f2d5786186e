"""``fs_local/containment.py``: resolving and opening paths without leaving a root, on a real disk.

Through the module's public functions: ``real_path_in`` (component by component, no step
outside, links counted), ``open_dir``/``open_in``/``stat_in``/``lstat_in`` (descriptor walks
from the root with ``O_NOFOLLOW``), ``inside`` and ``Root.contains`` (no prefix tricks)."""

from __future__ import annotations

import errno
import os
import stat
from typing import Any

import pytest

from dsh_fs.fs_local.containment import Escape, Root, inside, lstat_in, open_dir, open_in, real_path_in, stat_in


@pytest.fixture
def root(tmp_path: Any) -> Root:
    base = os.path.realpath(str(tmp_path))
    real = os.path.join(base, "real")
    os.makedirs(os.path.join(real, "a", "b"))
    os.mkdir(os.path.join(base, "outside"))
    with open(os.path.join(real, "a", "f.txt"), "w") as out:
        out.write("inside\n")
    with open(os.path.join(base, "outside", "secret"), "w") as out:
        out.write("secret\n")
    os.symlink(real, os.path.join(base, "shown"))
    return Root(real, os.path.join(base, "shown"))


def _base(root: Root) -> str:
    return os.path.dirname(root.real)


# -- inside / contains --------------------------------------------------------------------------

def test_inside_is_the_root_or_below_it_never_a_prefix() -> None:
    assert inside("/a/b", "/a/b") and inside("/a/b/c", "/a/b")
    assert not inside("/a/bc", "/a/b") and not inside("/a", "/a/b")
    assert inside("/x", "/") and inside("/", "/")
    assert inside("/a/b/c", "/a/b/")


def test_root_contains_its_real_and_its_shown_paths(root: Root) -> None:
    assert root.contains(root.real + "/x") and root.contains(root.shown + "/x") and root.contains(root.shown)
    assert not root.contains(_base(root) + "/outside")


def test_escape_is_a_permission_error_naming_the_root(root: Root) -> None:
    exc = Escape(root, "/x")
    assert isinstance(exc, PermissionError) and exc.errno == errno.EACCES and exc.root is root
    assert exc.filename == "/x" and exc.strerror == "outside the workspace"


# -- real_path_in ---------------------------------------------------------------------------------

def test_plain_paths_resolve_to_themselves(root: Root) -> None:
    assert real_path_in(root.real, root, strict=True) == root.real
    assert real_path_in(root.real + "/a/./b/", root, strict=True) == root.real + "/a/b"
    assert real_path_in(root.real + "//a//f.txt", root, strict=True) == root.real + "/a/f.txt"
    assert real_path_in(root.shown + "/a/f.txt", root, strict=True) == root.real + "/a/f.txt"


def test_dot_dot_climbs_but_never_above_the_root(root: Root) -> None:
    assert real_path_in(root.real + "/a/b/../f.txt", root, strict=True) == root.real + "/a/f.txt"
    assert real_path_in(root.real + "/a/..", root, strict=True) == root.real
    for path in (root.real + "/..", root.real + "/a/../../real/a", root.shown + "/.."):
        with pytest.raises(Escape):
            real_path_in(path, root, strict=False)


def test_a_path_not_below_the_root_is_refused_before_looking(root: Root) -> None:
    for path in (_base(root) + "/outside/secret", _base(root) + "/realx/a", "/"):
        with pytest.raises(Escape) as caught:
            real_path_in(path, root, strict=False)
        assert caught.value.root is root


def test_relative_links_continue_from_where_they_are(root: Root) -> None:
    os.symlink("b/../f.txt", os.path.join(root.real, "a", "rel"))
    os.symlink("a", os.path.join(root.real, "to-a"))
    assert real_path_in(root.real + "/a/rel", root, strict=True) == root.real + "/a/f.txt"
    assert real_path_in(root.real + "/to-a/rel", root, strict=True) == root.real + "/a/f.txt"
    assert real_path_in(root.real + "/to-a/b/..", root, strict=True) == root.real + "/a"


def test_absolute_links_must_stay_inside_as_real_or_shown(root: Root) -> None:
    os.symlink(root.real + "/a", os.path.join(root.real, "abs-real"))
    os.symlink(root.shown + "/a/f.txt", os.path.join(root.real, "abs-shown"))
    os.symlink(_base(root) + "/outside/secret", os.path.join(root.real, "abs-out"))
    os.symlink("../outside", os.path.join(root.real, "rel-out"))
    assert real_path_in(root.real + "/abs-real/f.txt", root, strict=True) == root.real + "/a/f.txt"
    assert real_path_in(root.real + "/abs-shown", root, strict=True) == root.real + "/a/f.txt"
    for name in ("abs-out", "rel-out/secret", "rel-out/none/x"):
        for strict in (True, False):
            with pytest.raises(Escape):
                real_path_in(root.real + "/" + name, root, strict=strict)


def test_missing_components_strict_and_not(root: Root) -> None:
    with pytest.raises(FileNotFoundError):
        real_path_in(root.real + "/none/x", root, strict=True)
    assert real_path_in(root.real + "/none/x", root, strict=False) == root.real + "/none/x"
    assert real_path_in(root.real + "/none/../a", root, strict=False) == root.real + "/a"  # lexical after a miss
    os.symlink("a", os.path.join(root.real, "to-a"))
    # after a miss, later names are kept as written, a symlink among them included
    assert real_path_in(root.real + "/none/../to-a/b", root, strict=False) == root.real + "/to-a/b"
    os.symlink("none/y", os.path.join(root.real, "dangling"))
    assert real_path_in(root.real + "/dangling", root, strict=False) == root.real + "/none/y"
    with pytest.raises(NotADirectoryError):
        real_path_in(root.real + "/a/f.txt/x", root, strict=True)


def test_at_most_forty_links_are_followed(root: Root) -> None:
    os.symlink("a", os.path.join(root.real, "l0"))
    for i in range(1, 41):
        os.symlink(f"l{i - 1}", os.path.join(root.real, f"l{i}"))
    assert real_path_in(root.real + "/l39", root, strict=True) == root.real + "/a"  # 40 links
    with pytest.raises(OSError) as caught:
        real_path_in(root.real + "/l40", root, strict=True)  # 41
    assert caught.value.errno == errno.ELOOP and not isinstance(caught.value, Escape)
    os.symlink("loop", os.path.join(root.real, "loop"))
    with pytest.raises(OSError, match="Too many levels of symbolic links"):
        real_path_in(root.real + "/loop", root, strict=False)


# -- descriptor walks -------------------------------------------------------------------------------

def _fd_path(fd: int) -> str:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    finally:
        os.close(fd)


def test_open_dir_walks_to_the_directory(root: Root) -> None:
    assert _fd_path(open_dir(root.real + "/a/b", root=root)) == root.real + "/a/b"
    assert _fd_path(open_dir(root.real, root=root)) == root.real
    assert _fd_path(open_dir(root.real + "/a", root=None)) == root.real + "/a"
    with pytest.raises(FileNotFoundError):
        open_dir(root.real + "/none/deeper", root=root)
    assert not os.path.exists(root.real + "/none")
    with pytest.raises(NotADirectoryError):
        open_dir(root.real + "/a/f.txt", root=root)


def test_open_dir_creates_missing_parents(root: Root) -> None:
    assert _fd_path(open_dir(root.real + "/n1/n2", root=root, create=True)) == root.real + "/n1/n2"
    assert stat.S_ISDIR(os.lstat(root.real + "/n1/n2").st_mode)
    assert _fd_path(open_dir(root.real + "/n1/n2", root=root, create=True)) == root.real + "/n1/n2"  # exists: fine
    assert _fd_path(open_dir(root.real + "/m1/m2", root=None, create=True)) == root.real + "/m1/m2"


def test_a_symlinked_directory_on_the_walk_is_an_escape_even_inside(root: Root) -> None:
    os.symlink("a", os.path.join(root.real, "to-a"))
    os.symlink(_base(root) + "/outside", os.path.join(root.real, "out"))
    for path in (root.real + "/to-a/b", root.real + "/out", root.real + "/to-a"):
        with pytest.raises(Escape):
            open_dir(path, root=root)
    with pytest.raises(Escape):
        open_dir(root.real + "/out/new", root=root, create=True)
    assert not os.path.exists(_base(root) + "/outside/new")
    with pytest.raises(Escape):
        open_in(root.real + "/to-a/f.txt", os.O_RDONLY, root=root)


def test_a_walk_outside_or_with_dot_dot_is_refused(root: Root) -> None:
    for path in (_base(root) + "/outside", root.real + "x", root.real + "/a/../.."):
        with pytest.raises(Escape):
            open_dir(path, root=root)
    with pytest.raises(Escape):
        open_dir(root.real + "/a/..", root=root)
    with pytest.raises(Escape):
        open_dir(root.real + "/./a", root=root)


def test_paths_of_path_max_bytes_are_refused_as_too_long(root: Root) -> None:
    fits = root.real + "/" + ("d" * 200 + "/") * ((4094 - len(root.real)) // 201)
    fits = fits + "x" * (4095 - len(fits))
    assert len(fits.encode()) == 4095
    with pytest.raises(FileNotFoundError):
        open_dir(fits, root=root)  # 4095 bytes: looked for
    with pytest.raises(OSError) as caught:
        open_dir(fits + "y", root=root)  # 4096 bytes (PATH_MAX, NUL included): refused
    assert caught.value.errno == errno.ENAMETOOLONG


def test_open_in_opens_beneath_the_root_without_following_the_last_name(root: Root) -> None:
    fd = open_in(root.real + "/a/f.txt", os.O_RDONLY, root=root)
    try:
        assert os.read(fd, 100) == b"inside\n"
    finally:
        os.close(fd)
    fd = open_in(root.real + "/a/new.txt", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o640, root=root)
    os.close(fd)
    assert stat.S_IMODE(os.lstat(root.real + "/a/new.txt").st_mode) == 0o640 & ~_umask()
    with pytest.raises(FileNotFoundError):
        open_in(root.real + "/a/none", os.O_RDONLY, root=root)
    os.symlink("f.txt", os.path.join(root.real, "a", "link"))
    fd = open_in(root.real + "/a/link", os.O_RDONLY, root=None)
    os.close(fd)
    with pytest.raises(Escape):
        open_in(root.real + "/a/link", os.O_RDONLY, root=root)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_stat_in_and_lstat_in(root: Root) -> None:
    os.symlink("f.txt", os.path.join(root.real, "a", "link"))
    os.symlink("a", os.path.join(root.real, "to-a"))
    assert stat.S_ISREG(stat_in(root.real + "/a/link", root=None).st_mode)  # no root: followed
    assert stat.S_ISLNK(stat_in(root.real + "/a/link", root=root).st_mode)  # beneath: not
    assert stat.S_ISDIR(stat_in(root.real, root=root).st_mode)
    assert stat_in(root.real + "/a/f.txt", root=root).st_size == len("inside\n")
    assert stat.S_ISLNK(lstat_in(root.real + "/a/link", root=None).st_mode)
    # lstat_in takes an unresolved path: its parent may be a symlink inside the root
    assert stat.S_ISLNK(lstat_in(root.real + "/to-a/link", root=root).st_mode)
    assert stat.S_ISREG(lstat_in(root.shown + "/to-a/f.txt", root=root).st_mode)
    assert stat.S_ISDIR(lstat_in(root.shown, root=root).st_mode)
    assert stat.S_ISLNK(lstat_in(root.real + "/to-a", root=root).st_mode)
    with pytest.raises(Escape):
        lstat_in(_base(root) + "/outside/secret", root=root)
    os.symlink("../outside", os.path.join(root.real, "out"))
    with pytest.raises(Escape):
        lstat_in(root.real + "/out/secret", root=root)
    with pytest.raises(FileNotFoundError):
        lstat_in(root.real + "/none/x", root=root)
    with pytest.raises(Escape):
        stat_in(root.real + "/to-a/f.txt", root=root)  # stat_in walks a resolved path


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_walks_leave_no_descriptor_open_whatever_the_outcome(root: Root) -> None:
    os.symlink("a", os.path.join(root.real, "to-a"))
    before = _fds()
    os.close(open_dir(root.real + "/a/b", root=root))
    os.close(open_in(root.real + "/a/f.txt", os.O_RDONLY, root=root))
    stat_in(root.real + "/a/f.txt", root=root)
    lstat_in(root.real + "/to-a/f.txt", root=root)
    for bad in (root.real + "/to-a/b", root.real + "/a/none/x", root.real + "/a/f.txt/x"):
        with pytest.raises(OSError):
            open_dir(bad, root=root)
        with pytest.raises(OSError):
            open_in(bad + "/y", os.O_RDONLY, root=root)
        with pytest.raises(OSError):
            stat_in(bad + "/y", root=root)
    with pytest.raises(OSError):
        open_in(root.real + "/a/none", os.O_RDONLY, root=root)
    with pytest.raises(OSError):
        stat_in(root.real + "/a/none", root=root)
    assert _fds() == before


def test_a_symlink_planted_where_a_directory_was_just_made_is_not_followed(
        root: Root, monkeypatch: pytest.MonkeyPatch) -> None:
    outside = _base(root) + "/outside"
    real_mkdir = os.mkdir

    def mkdir_then_swap(path: Any, mode: int = 0o777, *, dir_fd: Any = None) -> None:
        real_mkdir(path, mode, dir_fd=dir_fd)
        if dir_fd is not None:  # the window between the walk's mkdir and its open
            os.rmdir(path, dir_fd=dir_fd)
            os.symlink(outside, path, dir_fd=dir_fd)

    monkeypatch.setattr(os, "mkdir", mkdir_then_swap)
    with pytest.raises(Escape):
        open_dir(root.real + "/made/deeper", root=root, create=True)
    monkeypatch.undo()
    assert os.listdir(outside) == ["secret"]


def test_created_directories_and_files_get_the_usual_modes(root: Root) -> None:
    usual = 0o777 & ~_umask()
    os.close(open_dir(root.real + "/n1/n2", root=root, create=True))
    assert stat.S_IMODE(os.lstat(root.real + "/n1").st_mode) == usual
    assert stat.S_IMODE(os.lstat(root.real + "/n1/n2").st_mode) == usual
    os.close(open_in(root.real + "/n1/f", os.O_WRONLY | os.O_CREAT, root=root))  # the default mode
    assert stat.S_IMODE(os.lstat(root.real + "/n1/f").st_mode) == usual
    os.close(open_dir(root.real + "/n1/n2", root=None, create=True))  # exists already: fine without a root too
    os.close(open_in(root.real + "/n1/g", os.O_WRONLY | os.O_CREAT, root=None))
    assert stat.S_IMODE(os.lstat(root.real + "/n1/g").st_mode) == usual


def test_a_root_is_a_frozen_value(root: Root) -> None:
    from dataclasses import FrozenInstanceError

    with pytest.raises(FrozenInstanceError):
        root.real = "/"  # type: ignore[misc]
    assert not hasattr(root, "__dict__") and Root("/a", "/b") == Root("/a", "/b")
