"""Several containment roots (DEVIATIONS D28): the pure parts — the refusal's text, the overlap
check, ``LocalRules.root_for`` — and ``LocalFileSystem``'s construction checks and
``narrowed`` view (real directories under ``tmp_path``)."""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dsh_fs.fs.errors import outside_workspace
from dsh_fs.fs_local import LocalFileSystem
from dsh_fs.fs_memory import MemoryFileSystem
from dsh_fs.fs_local.containment import NOWHERE, Escape, Root, inside, real_path_in
from dsh_fs.fs_local.roots import disjoint
from dsh_fs.fs_local.rules import LocalRules


def test_the_refusal_names_one_root_as_before_and_several_in_order() -> None:
    assert str(outside_workspace("/x", "/w")) == 'cannot resolve "/x": outside the workspace "/w"'
    assert str(outside_workspace("/x", ("/w",))) == 'cannot resolve "/x": outside the workspace "/w"'
    assert str(outside_workspace("/x", ("/b", "/a"))) == 'cannot resolve "/x": outside the workspace "/b", "/a"'
    for none in (None, (), ""):
        assert str(outside_workspace("/x", none)) == 'cannot resolve "/x": outside the workspace'


@pytest.mark.parametrize(("a", "b", "overlap"), [
    ("/w", "/w", True), ("/w", "/w/sub", True), ("/w/sub", "/w", True), ("/", "/w", True),
    ("/w", "/wx", False), ("/w/a", "/w/b", False),
])
def test_disjoint(a: str, b: str, overlap: bool) -> None:
    roots = [Root(a, a), Root(b, b)]
    if overlap:
        with pytest.raises(ValueError, match=f"^LocalFileSystem: roots {a} and {b} overlap$"):
            disjoint(roots)
    else:
        disjoint(roots)


def test_a_symlinked_spelling_overlaps_by_its_real_path() -> None:
    with pytest.raises(ValueError, match="^LocalFileSystem: roots /w and /alias overlap$"):
        disjoint([Root("/w", "/w"), Root("/w/sub", "/alias")])


_names = st.sampled_from(["a", "b", "ab", "c", ".x"])
_paths = st.lists(_names, min_size=0, max_size=4).map(lambda parts: "/" + "/".join(parts))


@given(st.lists(_paths, min_size=1, max_size=4, unique=True), _paths)
def test_root_for_never_loses_containment(configured: list[str], path: str) -> None:
    """Whatever the roots and the path: the answer is the one root containing the path, or a
    root the path is not inside (so every walk from it refuses): never ``None``."""
    roots = tuple(Root(r, r) for r in configured)
    try:
        disjoint(roots)
    except ValueError:
        return
    rules = LocalRules.for_profile("default", roots=roots)
    found = rules.root_for(path)
    holders = [r for r in roots if r.contains(path)]
    assert found is not None
    assert (found is holders[0]) if holders else not found.contains(path)
    assert rules.contains(path) == bool(holders)


def test_root_for_without_containment_and_without_roots() -> None:
    assert LocalRules.for_profile("default").root_for("/x") is None
    nothing = LocalRules.for_profile("default", roots=())
    assert nothing.root_for("/x") is NOWHERE and not nothing.contains("/") and nothing.confined
    with pytest.raises(Escape):
        real_path_in("/x", NOWHERE, strict=False)
    assert not inside("/", NOWHERE.real)


@pytest.fixture
def dirs(tmp_path: Any) -> tuple[str, str]:
    base = os.path.realpath(str(tmp_path))
    a, b = os.path.join(base, "a"), os.path.join(base, "b")
    os.makedirs(os.path.join(a, "sub"))
    os.mkdir(b)
    return a, b


def test_construction_refusals(dirs: tuple[str, str], tmp_path: Any) -> None:
    a, b = dirs
    cases = {
        "LocalFileSystem: give root= or roots=, not both": {"root": a, "roots": [b]},
        "LocalFileSystem: roots= names no root (root=None serves the whole disk)": {"roots": []},
        f"LocalFileSystem: root {a}/nope is not a directory": {"roots": [a, f"{a}/nope"]},
        f"LocalFileSystem: roots {a} and {a}/sub overlap": {"roots": [a, f"{a}/sub"]},
        f"LocalFileSystem: cwd {os.path.dirname(a)} is outside every root": {"roots": [a, b], "cwd": os.path.dirname(a)},
    }
    for message, kwargs in cases.items():
        with pytest.raises(ValueError) as caught:
            LocalFileSystem(**kwargs)
        assert str(caught.value) == message
    many = [os.path.join(str(tmp_path), f"m{i}") for i in range(65)]
    for d in many:
        os.mkdir(d)
    with pytest.raises(ValueError, match="^LocalFileSystem: at most 64 roots$"):
        LocalFileSystem(roots=many)
    assert LocalFileSystem(roots=many[:64]).workspace_roots() == tuple(os.path.abspath(d) for d in many[:64])


def test_one_root_in_roots_is_the_root_spelling(dirs: tuple[str, str]) -> None:
    a, _ = dirs
    one, spelled = LocalFileSystem(roots=[a]), LocalFileSystem(root=a)
    assert one.rules == spelled.rules and one.cwd == spelled.cwd == a and one.workspace_roots() == (a,)
    assert LocalFileSystem().workspace_roots() == ()


@pytest.mark.anyio
async def test_narrowed_views_share_the_provider_and_never_widen(dirs: tuple[str, str]) -> None:
    a, b = dirs
    fs = LocalFileSystem(roots=[a, b], cwd=a)
    view = fs.narrowed([f"{a}/sub"])
    assert view.workspace_roots() == (f"{a}/sub",) and view.cwd == f"{a}/sub" and fs.workspace_roots() == (a, b)
    assert view.locks is fs.locks and view.indexes is fs.indexes and view.process_locks is fs.process_locks
    with pytest.raises(Exception) as caught:
        await view.resolve(f"{b}/x")
    assert str(caught.value) == f'cannot resolve "{b}/x": outside the workspace "{a}/sub"'
    os.symlink(b, os.path.join(a, "to-b"))
    with open(os.path.join(a, "file.txt"), "w") as handle:
        handle.write("x\n")
    for bad, why in ((os.path.dirname(a), "is outside every root"), (f"{a}/to-b", "is outside every root"),
                     (f"{a}/none", "is not found"), (f"{a}/file.txt", "is not a directory")):
        with pytest.raises(ValueError, match=f"^LocalFileSystem: root {bad} {why}$"):
            fs.narrowed([bad])
    # the session's cwd (outside the view) gives way to the view's first root; one inside stays
    assert (await view.resolve("x.txt", cwd=b)).display_path == f"{a}/sub/x.txt"
    os.mkdir(os.path.join(a, "sub", "deep"))
    assert (await view.resolve("x.txt", cwd=f"{a}/sub/deep")).display_path == f"{a}/sub/deep/x.txt"
    assert (await fs.resolve("x.txt", cwd=b)).display_path == f"{b}/x.txt"
    nothing = fs.narrowed([])
    with pytest.raises(Exception) as caught:
        await nothing.resolve(f"{a}/x")
    assert str(caught.value) == f'cannot resolve "{a}/x": outside the workspace'
    free = LocalFileSystem(cwd=b)  # no containment: narrows to any directory (the sandbox fence's views)
    anywhere = free.narrowed([a])
    assert anywhere.workspace_roots() == (a,) and anywhere.locks is free.locks and anywhere.cwd == a
    assert (await anywhere.resolve(f"{a}/x")).key == f"{a}/x"
    with pytest.raises(Exception) as caught:
        await anywhere.resolve(f"{a}/to-b/x")  # a symlink out of the view's root
    assert str(caught.value) == f'cannot resolve "{a}/to-b/x": outside the workspace "{a}"'
    for bad, why in ((f"{a}/none", "is not found"), (f"{a}/file.txt", "is not a directory")):
        with pytest.raises(ValueError, match=f"^LocalFileSystem: root {bad} {why}$"):
            free.narrowed([bad])


@pytest.mark.anyio
async def test_a_sandboxed_provider_narrows_to_a_fenced_view_and_checks_renames_across_roots(
        dirs: tuple[str, str]) -> None:
    from dsh_fs.fs_sandbox.filesystem import SandboxedFileSystem

    a, b = dirs
    sandboxed = SandboxedFileSystem(LocalFileSystem(roots=[a, b], cwd=a), mode="danger-full-access")
    view = sandboxed.narrowed([f"{a}/sub"])
    assert isinstance(view, SandboxedFileSystem) and view.sandbox_mode == "danger-full-access"
    assert view.workspace_roots() == (f"{a}/sub",) and sandboxed.workspace_roots() == (a, b)
    with pytest.raises(Exception) as caught:
        await view.resolve(f"{b}/x.txt")
    assert str(caught.value) == f'cannot resolve "{b}/x.txt": outside the workspace "{a}/sub"'
    source, dest = await sandboxed.resolve(f"{a}/x.txt"), await sandboxed.resolve(f"{b}/x.txt")
    with pytest.raises(Exception) as caught:
        await sandboxed.check_renamable(source, dest)
    assert str(caught.value) == f'cannot rename "{a}/x.txt" to "{b}/x.txt": outside the workspace "{a}"'
    await sandboxed.check_renamable(source, await sandboxed.resolve(f"{a}/y.txt"))  # one root: nothing to refuse
    assert SandboxedFileSystem(MemoryFileSystem(), mode="read-only").narrowed(["/"]) is None


@pytest.mark.anyio
async def test_a_narrowed_root_swapped_for_a_symlink_out_is_refused(dirs: tuple[str, str], tmp_path: Any) -> None:
    """A client root (``narrowed``) lies inside a provider root, where anything may later turn
    it into a symlink (a checkout, a build step): the view's walks start at the provider root,
    so a swapped view root leads nowhere — no read, no write, no listing outside (D28, M3)."""
    from dsh_fs import CreateIfAbsent, FsError

    a, _b = dirs
    out = os.path.realpath(str(tmp_path / "outside"))
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "secret.txt"), "w") as handle:
        handle.write("TOP SECRET\n")
    fs = LocalFileSystem(roots=[a], cwd=a)
    view = fs.narrowed([f"{a}/sub"])
    os.rename(f"{a}/sub", f"{a}/sub.old")
    os.symlink(out, f"{a}/sub")
    before = sorted(os.listdir(out))
    for path in (f"{a}/sub/secret.txt", f"{a}/sub/new.txt", f"{a}/sub"):
        with pytest.raises(FsError) as caught:
            target = await view.resolve(path)
            if path.endswith("secret.txt"):
                await view.read_text(target)
            elif path.endswith("new.txt"):
                await view.write_text(target, "PWNED", CreateIfAbsent())
            else:
                await view.list_dir(target)
        assert caught.value.code == "FS_PERMISSION_DENIED", str(caught.value)
    assert sorted(os.listdir(out)) == before
    with open(os.path.join(out, "secret.txt")) as handle:
        assert handle.read() == "TOP SECRET\n"
