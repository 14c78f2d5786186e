"""Containment to a workspace root (tracker issue 4, item 3): ``LocalFileSystem(root=...)``.

Every path that resolves outside the root — ``..``, absolute paths, symlinks pointing out
(final component or a parent, dangling or not), prefix tricks (``proj-evil`` beside
``proj``), ``/proc/self/root/...`` — fails with ``FS_PERMISSION_DENIED``
``cannot resolve "<path>": outside the workspace "<root>"``; a NUL byte fails with
``FS_PERMISSION_DENIED`` ``cannot resolve "<path>": path contains a NUL byte``. Nothing is
read (no outside file is opened) and nothing is created or changed anywhere. Symlinks that
stay inside work as in the reference. A symlink swapped in between the check and the open
never leads to reading or writing outside the root.
"""

from __future__ import annotations

import ctypes
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import dsh_fs
from dsh_fs import Session
from dsh_fs.fs_local import LocalFileSystem, fsio
from robustkit import call, mcp_call, mcp_clients, needs_mcp, snapshot

pytestmark = pytest.mark.anyio

SECRET = "TOP SECRET outside the workspace\n"


@dataclass
class World:
    base: str
    root: str
    outside: str
    evil: str
    roots: list[str]
    """the provider's containment roots: ``[root]``, or ``root`` and ``peer`` (D28), in order"""
    peer: str
    """the other root of a two-root provider (a directory beside ``root`` either way)"""

    @property
    def named(self) -> str:
        """how the containment refusal names the workspace"""
        return ", ".join(f'"{r}"' for r in self.roots)


@pytest.fixture(params=["one-root", "in-a", "in-b"])
def world(tmp_path: Any, request: pytest.FixtureRequest) -> World:
    """The workspace ``proj`` as the one root, or as the first (``in-a``) or second (``in-b``)
    of two roots with ``peer`` (DEVIATIONS D28): every case runs in each."""
    base = os.path.realpath(str(tmp_path))
    root, outside, evil, peer = (os.path.join(base, n) for n in ("proj", "outside", "proj-evil", "peer"))
    for d in (root, outside, evil, peer, os.path.join(root, "sub"), os.path.join(outside, "deep")):
        os.mkdir(d)
    with open(os.path.join(peer, "peer.txt"), "w", encoding="utf-8") as handle:
        handle.write("peer one\n")
    roots = {"one-root": [root], "in-a": [root, peer], "in-b": [peer, root]}[request.param]
    files = {
        os.path.join(outside, "secret.txt"): SECRET,
        os.path.join(outside, "inner.txt"): SECRET,
        os.path.join(outside, "deep", "x.txt"): SECRET,
        os.path.join(evil, "x.txt"): SECRET,
        os.path.join(root, "real.txt"): "real one\nreal two\n",
        os.path.join(root, "sub", "inner.txt"): "inner one\ninner two\n",
    }
    for path, text in files.items():
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    links = {
        "out-file": "../outside/secret.txt",
        "out-dir": "../outside",
        "out-abs": outside,
        "out-dangling": "../outside/created-through-link.txt",
        "out-dangling-dir": "../outside/newdir/file.txt",
        "out-proc": f"/proc/self/root{outside}/secret.txt",
        "out-chain": "out-dir",
        "in-file": "real.txt",
        "in-dir": "sub",
        "in-abs": os.path.join(root, "real.txt"),
        "in-dangling": "made-through-link.txt",
        "in-chain": "in-dir",
    }
    for name, target in links.items():
        os.symlink(target, os.path.join(root, name))
    return World(base=base, root=root, outside=outside, evil=evil, roots=roots, peer=peer)


def _deployment(world: World, *, policy: bool = True) -> dsh_fs.Context:
    fs = LocalFileSystem(cwd=world.root, roots=world.roots)
    return dsh_fs.create_context(provider=fs, policy=policy)


class OpenRecorder:
    """Records every ``os.open`` whose descriptor is a regular file or directory outside the
    root, and every ``os.read``/``os.pread`` of such a descriptor."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, world: World) -> None:
        self.world = world
        self.outside_ids = self._ids()
        self.opened: list[str] = []
        self.reads: list[str] = []
        self._fds: dict[int, str] = {}
        real_open, real_read, real_pread, real_close = os.open, os.read, os.pread, os.close

        def record_open(path: Any, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
            fd = real_open(path, flags, mode, dir_fd=dir_fd)
            st = os.fstat(fd)
            name = self.outside_ids.get((st.st_dev, st.st_ino))
            if name is not None:
                self.opened.append(name)
                self._fds[fd] = name
            else:
                self._fds.pop(fd, None)
            return fd

        def record_read(fd: int, n: int) -> bytes:
            if fd in self._fds:
                self.reads.append(self._fds[fd])
            return real_read(fd, n)

        def record_pread(fd: int, n: int, offset: int) -> bytes:
            if fd in self._fds:
                self.reads.append(self._fds[fd])
            return real_pread(fd, n, offset)

        def record_close(fd: int) -> None:
            self._fds.pop(fd, None)
            real_close(fd)

        monkeypatch.setattr(os, "open", record_open)
        monkeypatch.setattr(os, "read", record_read)
        monkeypatch.setattr(os, "pread", record_pread)
        monkeypatch.setattr(os, "close", record_close)

    def _ids(self) -> dict[tuple[int, int], str]:
        ids = {}
        for top in (self.world.outside, self.world.evil):
            for dirpath, dirnames, filenames in os.walk(top):
                for name in [*dirnames, *filenames]:
                    path = os.path.join(dirpath, name)
                    st = os.stat(path)
                    ids[(st.st_dev, st.st_ino)] = path
        return ids

    def files_opened(self) -> list[str]:
        return [p for p in self.opened if os.path.isfile(p)]


OUTSIDE_PATHS = [
    # (path as the model writes it, display path relative to base)
    ("../outside/secret.txt", "outside/secret.txt"),
    ("{base}/outside/secret.txt", "outside/secret.txt"),
    ("sub/../../outside/secret.txt", "outside/secret.txt"),
    ("../outside/brand-new.txt", "outside/brand-new.txt"),
    ("../outside/newdir/brand-new.txt", "outside/newdir/brand-new.txt"),
    ("../proj-evil/x.txt", "proj-evil/x.txt"),
    ("{base}/proj-evil/x.txt", "proj-evil/x.txt"),
    ("{base}/proj-evil/new.txt", "proj-evil/new.txt"),
    ("{base}/proj-evil", "proj-evil"),
    ("..", ""),
    ("/", "/"),
    ("/etc/passwd", "/etc/passwd"),
    ("/proc/self/root{base}/outside/secret.txt", "/proc/self/root{base}/outside/secret.txt"),
    ("/proc/self/root{base}/proj/real.txt", "/proc/self/root{base}/proj/real.txt"),
    ("/proc/self/cwd/x.txt", "/proc/self/cwd/x.txt"),
    ("out-file", "proj/out-file"),
    ("out-dir/secret.txt", "proj/out-dir/secret.txt"),
    ("out-dir/deep/x.txt", "proj/out-dir/deep/x.txt"),
    ("out-dir/brand-new.txt", "proj/out-dir/brand-new.txt"),
    ("out-abs/secret.txt", "proj/out-abs/secret.txt"),
    ("out-dangling", "proj/out-dangling"),
    ("out-dangling-dir", "proj/out-dangling-dir"),
    ("out-proc", "proj/out-proc"),
    ("out-chain/secret.txt", "proj/out-chain/secret.txt"),
    ("out-chain/new.txt", "proj/out-chain/new.txt"),
]


def _display(world: World, shown: str) -> str:
    shown = shown.format(base=world.base)
    if shown.startswith("/"):
        return shown
    return os.path.join(world.base, shown) if shown else world.base


def _calls(path: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("read", {"file_path": path}),
        ("write", {"file_path": path, "content": "pwned\n"}),
        ("edit", {"file_path": path, "old_string": "TOP SECRET", "new_string": "pwned"}),
    ]


@pytest.mark.parametrize("policy", [True, False], ids=["policy", "bare"])
@pytest.mark.parametrize(("path", "shown"), OUTSIDE_PATHS, ids=[p for p, _ in OUTSIDE_PATHS])
async def test_outside_paths_are_refused_without_touching_anything(
    world: World, path: str, shown: str, policy: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx = _deployment(world, policy=policy)
    session = Session(cwd=world.root)
    path = path.format(base=world.base)
    display = _display(world, shown)
    before = snapshot(world.base)
    recorder = OpenRecorder(monkeypatch, world)
    for tool, args in _calls(path):
        result = await call(ctx, tool, args, session)
        assert result.error is not None and result.error.code == "FS_PERMISSION_DENIED", (tool, result.text)
        assert result.text == f'Error: cannot resolve "{display}": outside the workspace {world.named}', tool
    assert recorder.files_opened() == [] and recorder.reads == []
    assert snapshot(world.base) == before


@pytest.mark.parametrize("path", ["a\0b", "../outside/secret.txt\0", "\0", "sub/\0/../real.txt", "out-file\0"])
async def test_nul_bytes_are_refused(world: World, path: str) -> None:
    ctx = _deployment(world)
    session = Session(cwd=world.root)
    before = snapshot(world.base)
    display = dsh_fs.fs.paths.node_resolve(world.root, path)
    for tool, args in _calls(path):
        result = await call(ctx, tool, args, session)
        assert result.error is not None and result.error.code == "FS_PERMISSION_DENIED", result.text
        shown = display.replace("\0", "\\0")
        assert result.text == f'Error: cannot resolve "{shown}": path contains a NUL byte'
    assert snapshot(world.base) == before


async def test_symlinks_that_stay_inside_work_as_in_the_reference(world: World) -> None:
    ctx = _deployment(world)
    session = Session(cwd=world.root)
    root = world.root

    read = await call(ctx, "read", {"file_path": "in-file"}, session)
    assert read.text == (f"<path>{root}/in-file</path>\n<type>file</type>\n<content>\n"
                         "1: real one\n2: real two\n\n(End of file - total 2 lines)\n</content>")
    for path in ("in-abs", "in-chain/inner.txt", "in-dir/inner.txt"):
        assert not (await call(ctx, "read", {"file_path": path}, session)).is_error, path

    # an edit through the link changes the target file and keeps the link
    result = await call(ctx, "edit", {"file_path": "in-file", "old_string": "one", "new_string": "1"}, session)
    assert result.text == f"The file {root}/in-file has been updated successfully."
    assert os.readlink(os.path.join(root, "in-file")) == "real.txt"
    with open(os.path.join(root, "real.txt")) as handle:
        assert handle.read() == "real 1\nreal two\n"

    # a write through a link in a parent directory
    result = await call(ctx, "write", {"file_path": "in-dir/inner.txt", "content": "new inner\n"}, session)
    assert result.text == f"<path>{root}/in-dir/inner.txt</path>\n<type>file</type>\n<content>\nUpdated file\n</content>"
    with open(os.path.join(root, "sub", "inner.txt")) as handle:
        assert handle.read() == "new inner\n"

    # D12: writing through a dangling link that points inside creates its target
    result = await call(ctx, "write", {"file_path": "in-dangling", "content": "made\n"}, session)
    assert not result.is_error, result.text
    assert os.path.islink(os.path.join(root, "in-dangling"))
    with open(os.path.join(root, "made-through-link.txt")) as handle:
        assert handle.read() == "made\n"

    # the same file through two paths is one target: a read through the link covers the edit
    session2 = Session(cwd=root)
    assert not (await call(ctx, "read", {"file_path": "in-abs"}, session2)).is_error
    result = await call(ctx, "edit", {"file_path": "real.txt", "old_string": "two", "new_string": "2"}, session2)
    assert not result.is_error, result.text


async def test_root_given_through_a_symlink(world: World) -> None:
    alias = os.path.join(world.base, "alias")
    os.symlink(world.root, alias)
    roots = [alias if r == world.root else r for r in world.roots]
    fs = LocalFileSystem(cwd=alias, roots=roots)
    ctx = dsh_fs.create_context(provider=fs)
    session = Session(cwd=alias)
    read = await call(ctx, "read", {"file_path": "real.txt"}, session)
    assert read.text.startswith(f"<path>{alias}/real.txt</path>\n")
    assert not (await call(ctx, "read", {"file_path": f"{world.root}/real.txt"}, session)).is_error
    denied = await call(ctx, "read", {"file_path": "../outside/secret.txt"}, session)
    named = ", ".join(f'"{r}"' for r in roots)
    assert denied.text == f'Error: cannot resolve "{world.outside}/secret.txt": outside the workspace {named}'


async def test_no_root_is_the_reference_behaviour(world: World) -> None:
    """With ``root=None`` (the reference), a path outside the cwd is served like any other."""
    ctx = dsh_fs.create_context(cwd=world.root, root=None)
    read = await call(ctx, "read", {"file_path": "../outside/secret.txt"}, Session(cwd=world.root))
    assert not read.is_error and "TOP SECRET" in read.text


@pytest.mark.parametrize("given", ["cwd", "process-cwd", "root"])
async def test_the_library_is_confined_by_default(world: World, given: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``create_context()`` confines the model to its cwd unless told otherwise (tracker issue
    13, item 8): the process cwd when none is given, or an explicit ``root``."""
    if given == "cwd":
        ctx = dsh_fs.create_context(cwd=world.root)
    elif given == "process-cwd":
        monkeypatch.chdir(world.root)
        ctx = dsh_fs.create_context()
    elif len(world.roots) == 1:
        ctx = dsh_fs.create_context(cwd=os.path.join(world.root, "sub"), root=world.root)
    else:
        ctx = dsh_fs.create_context(cwd=os.path.join(world.root, "sub"), roots=world.roots)
    named = world.named if given == "root" else f'"{world.root}"'
    session = Session(cwd=None)
    inside = await call(ctx, "read", {"file_path": f"{world.root}/real.txt"}, session)
    assert not inside.is_error, inside.text
    for path in (f"{world.outside}/secret.txt", "/etc/passwd", f"{world.root}/out-file"):
        denied = await call(ctx, "read", {"file_path": path}, session)
        assert denied.error is not None and denied.error.code == "FS_PERMISSION_DENIED", (path, denied.text)
        assert denied.text.endswith(f"outside the workspace {named}")
    with pytest.raises(ValueError, match="root= applies to the built-in local provider"):
        dsh_fs.create_context(provider=LocalFileSystem(cwd=world.root), root=world.root)


async def test_a_root_alone_is_also_the_base_of_relative_paths(world: World, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """``create_context(root=D)`` from a process elsewhere: relative paths name files in ``D``
    (the demo's five-line library example relies on it), and ``..`` still cannot leave it."""
    monkeypatch.chdir(tmp_path)
    ctx = dsh_fs.create_context(root=world.root)
    inside = await call(ctx, "read", {"file_path": "real.txt"}, Session(cwd=None))
    assert not inside.is_error and f"<path>{world.root}/real.txt</path>" in inside.text, inside.text
    denied = await call(ctx, "read", {"file_path": "../outside/secret.txt"}, Session(cwd=None))
    assert denied.error is not None and denied.error.code == "FS_PERMISSION_DENIED", denied.text


# -- a symlink swapped in between the check and the open ------------------------------------

def _swap_sub_for_link(world: World) -> None:
    sub = os.path.join(world.root, "sub")
    os.rename(sub, os.path.join(world.root, "sub-moved"))
    os.symlink(world.outside, sub)


def _unswap(world: World) -> None:
    sub = os.path.join(world.root, "sub")
    if os.path.islink(sub):
        os.unlink(sub)
    moved = os.path.join(world.root, "sub-moved")
    if os.path.isdir(moved):
        os.rename(moved, sub)


SWAP_CASES = [
    ("read", {"file_path": "sub/inner.txt"}),
    ("write", {"file_path": "sub/inner.txt", "content": "pwned\n"}),
    ("write", {"file_path": "sub/brand-new.txt", "content": "pwned\n"}),
    ("write", {"file_path": "sub/deep/new.txt", "content": "pwned\n"}),
    ("edit", {"file_path": "sub/inner.txt", "old_string": "inner", "new_string": "pwned"}),
]


@pytest.mark.parametrize(("tool", "args"), SWAP_CASES, ids=[f"{t}-{a['file_path']}" for t, a in SWAP_CASES])
async def test_parent_swapped_for_a_symlink_after_resolve(
    world: World, tool: str, args: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx = _deployment(world)
    session = Session(cwd=world.root)
    # the agent has read the file (so write/edit are allowed by the policy), before any swap
    assert not (await call(ctx, "read", {"file_path": "sub/inner.txt"}, session)).is_error
    outside_before = snapshot(world.outside)
    real_resolve = fsio.resolve_target

    def resolve_then_swap(*a: Any, **k: Any) -> Any:
        target = real_resolve(*a, **k)
        _swap_sub_for_link(world)
        return target

    monkeypatch.setattr(fsio, "resolve_target", resolve_then_swap)
    recorder = OpenRecorder(monkeypatch, world)
    result = await call(ctx, tool, args, session)
    monkeypatch.undo()
    _unswap(world)

    assert result.is_error, result.text
    assert "TOP SECRET" not in result.text
    assert result.error is not None and result.error.code == "FS_PERMISSION_DENIED", result.text
    # the one containment message, naming the root (tracker issue 12)
    assert result.text == f'Error: cannot resolve "{world.root}/{args["file_path"]}": outside the workspace {world.named}'

    assert recorder.reads == [], "read an outside file"
    assert recorder.files_opened() == [], "opened an outside file"
    assert snapshot(world.outside) == outside_before


def _exchange() -> Any:
    """``exchange(a, b)``: atomically swap two paths (``renameat2(RENAME_EXCHANGE)``), or ``None``."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return None
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    at_fdcwd, rename_exchange = -100, 2

    def exchange(a: str, b: str) -> None:
        if renameat2(at_fdcwd, a.encode(), at_fdcwd, b.encode(), rename_exchange) != 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err), a)

    return exchange


RACE_ROUNDS = 300
"""rounds of six calls against the flipping link (about three seconds on an idle machine)"""


@pytest.mark.timeout(120)
async def test_racing_symlink_swaps_never_escape(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """A thread atomically flips ``sub`` between the real directory and a link out while an
    agent reads, writes and edits below it: nothing outside is ever read or changed. How many
    calls land inside during the race is the scheduler's luck, so it is not asserted; once the
    flipping stops (``sub`` the real directory again) the same calls all succeed."""
    exchange = _exchange()
    if exchange is None:
        pytest.skip("renameat2(RENAME_EXCHANGE) is not available")
    ctx = _deployment(world)
    sub, alt = os.path.join(world.root, "sub"), os.path.join(world.root, "sub-alt")
    os.symlink(world.outside, alt)
    outside_before = snapshot(world.outside)
    stop, flipping = threading.Event(), threading.Event()
    flips = [0]

    def flipper() -> None:
        while not stop.is_set():
            exchange(sub, alt)
            flips[0] += 1
            flipping.set()
            time.sleep(0.0002)

    recorder = OpenRecorder(monkeypatch, world)
    thread = threading.Thread(target=flipper, daemon=True)
    thread.start()
    outcomes: dict[str, int] = {}
    try:
        assert flipping.wait(timeout=60), "the flipper never ran"  # a guard only: it flips at once
        for i in range(RACE_ROUNDS):  # a count of rounds, not a time: the same work on any machine
            session = Session(cwd=world.root)
            steps = [
                ("read", {"file_path": "sub/inner.txt"}),
                ("edit", {"file_path": "sub/inner.txt", "old_string": "inner one", "new_string": "renni one"}),
                ("read", {"file_path": "sub/inner.txt"}),
                ("write", {"file_path": "sub/inner.txt", "content": "inner one\ninner two\n"}),
                ("write", {"file_path": f"sub/new-{i}.txt", "content": "x\n"}),
                ("read", {"file_path": "sub/secret.txt"}),
            ]
            for tool, args in steps:
                result = await call(ctx, tool, args, session)
                assert "TOP SECRET" not in result.text
                key = "ok" if not result.is_error else result.error.code if result.error else result.text
                outcomes[key] = outcomes.get(key, 0) + 1
    finally:
        stop.set()
        thread.join(timeout=60)
        if os.path.islink(sub):
            exchange(sub, alt)
    assert not thread.is_alive() and not os.path.islink(sub)
    assert recorder.reads == [], f"read outside files: {sorted(set(recorder.reads))}"
    assert snapshot(world.outside) == outside_before
    assert flips[0] > 0, outcomes

    # settled: the deployment that refused the raced calls serves the same place once more
    session = Session(cwd=world.root)
    settled = [
        ("read", {"file_path": "sub/inner.txt"}),
        ("write", {"file_path": "sub/inner.txt", "content": "inner one\ninner two\n"}),
        ("edit", {"file_path": "sub/inner.txt", "old_string": "inner one", "new_string": "renni one"}),
        ("read", {"file_path": "sub/inner.txt"}),
        ("write", {"file_path": "sub/new-settled.txt", "content": "x\n"}),
    ]
    results = [await call(ctx, tool, args, session) for tool, args in settled]
    assert [r.text for r in results if r.is_error] == []
    with open(os.path.join(sub, "inner.txt")) as handle:
        assert handle.read() == "renni one\ninner two\n"
    with open(os.path.join(sub, "new-settled.txt")) as handle:
        assert handle.read() == "x\n"
    assert recorder.reads == [] and snapshot(world.outside) == outside_before
    print(f"{flips[0]} flips; outcomes {outcomes}; outside files opened but not read: {len(recorder.opened)}")



@needs_mcp
@pytest.mark.timeout(120)
async def test_mcp_server_is_contained_to_its_root(world: World) -> None:
    """``dsh-fs mcp --root DIR`` (or ``--root A --root B``, D28) refuses every path outside
    its roots the same way."""
    before = snapshot(world.base)

    def relative_to_root(path: str) -> str:
        # the session cwd is the first --root: with proj second (in-b), its relative paths are spelled from proj
        return path if world.roots[0] == world.root or path.startswith("/") else os.path.join(world.root, path)

    async with mcp_clients(world.roots, 1, cwd=world.root) as (client,):
        for path, shown in OUTSIDE_PATHS:
            path = relative_to_root(path.format(base=world.base))
            display = _display(world, shown)
            for tool, args in _calls(path):
                reply = await mcp_call(client, tool, args)
                assert reply["code"] == "FS_PERMISSION_DENIED", (tool, path, reply)
                assert reply["text"] == f'Error: cannot resolve "{display}": outside the workspace {world.named}'
        inside = await mcp_call(client, "read", {"file_path": relative_to_root("in-file")})
        assert inside["ok"] and "1: real one" in inside["text"]
    assert snapshot(world.base) == before


@pytest.mark.parametrize("kind", ["missing", "file"])
def test_a_root_that_is_not_a_directory_is_refused_up_front(tmp_path: Any, kind: str) -> None:
    """A root that does not exist (a typo) or is a file would refuse every call later with a
    confusing "not found"; its real path could also not be known. Refused at construction."""
    root = tmp_path / "nope"
    if kind == "file":
        root.write_text("x")
    with pytest.raises(ValueError, match=f"^LocalFileSystem: root {root} is not a directory$"):
        dsh_fs.create_context(root=str(root))
    assert (kind == "file") == root.exists()


# -- two roots (DEVIATIONS D28): each resolution stays in the root it starts in ----------------

PEER_LINKS = {  # name in proj -> target; each leads into the other root (or, with one root, out)
    "to-peer-file": "../peer/peer.txt",
    "to-peer-dir": "../peer",
    "to-peer-abs": "{peer}/peer.txt",
    "to-peer-dangling": "../peer/made-through-link.txt",
}


@pytest.mark.parametrize("link", sorted(PEER_LINKS))
async def test_D36_a_symlink_into_the_other_root_is_followed_there(world: World, link: str) -> None:
    """With one root a link into ``peer`` is a link out of the workspace: refused, nothing of
    ``peer`` read. With two roots (D36) it resolves in ``peer``: read, written and edited there."""
    os.symlink(PEER_LINKS[link].format(peer=world.peer), os.path.join(world.root, link))
    ctx = _deployment(world)
    session = Session(cwd=world.root)
    path = f"{link}/peer.txt" if link == "to-peer-dir" else link
    before = snapshot(world.base)
    if len(world.roots) == 1:
        for tool, args in _calls(path):
            result = await call(ctx, tool, args, session)
            assert result.error is not None and result.error.code == "FS_PERMISSION_DENIED", (tool, result.text)
            assert result.text == f'Error: cannot resolve "{world.root}/{path}": outside the workspace {world.named}'
            assert "peer one" not in result.text
        assert snapshot(world.base) == before
        return
    target = os.path.join(world.peer, "made-through-link.txt" if link == "to-peer-dangling" else "peer.txt")
    read = await call(ctx, "read", {"file_path": path}, session)
    if link == "to-peer-dangling":
        assert read.error is not None and read.error.code == "FS_NOT_FOUND", read.text
    else:
        assert "1: peer one" in read.text, read.text
    written = await call(ctx, "write", {"file_path": path, "content": "via link\n"}, session)
    assert not written.is_error, written.text
    with open(target, encoding="utf-8") as handle:
        assert handle.read() == "via link\n"
    assert os.path.islink(os.path.join(world.root, link))


async def test_the_other_root_is_reachable_by_its_own_paths(world: World) -> None:
    """With two roots, a path in the other root is served (absolute, or relative through
    ``..`` lexically); with one root it is outside the workspace."""
    ctx = _deployment(world)
    session = Session(cwd=world.root)
    for path in (f"{world.peer}/peer.txt", "../peer/peer.txt"):
        read = await call(ctx, "read", {"file_path": path}, session)
        if len(world.roots) == 2:
            assert read.text.startswith(f"<path>{world.peer}/peer.txt</path>\n") and "1: peer one" in read.text
        else:
            assert read.text == f'Error: cannot resolve "{world.peer}/peer.txt": outside the workspace {world.named}'
    if len(world.roots) == 2:
        wrote = await call(ctx, "write", {"file_path": f"{world.peer}/new.txt", "content": "new\n"}, session)
        assert not wrote.is_error, wrote.text
        with open(os.path.join(world.peer, "new.txt"), encoding="utf-8") as handle:
            assert handle.read() == "new\n"
        up = await call(ctx, "read", {"file_path": f"{world.peer}/../proj/real.txt"}, session)
        assert not up.is_error and "1: real one" in up.text  # lexically inside proj again


async def test_a_rename_never_crosses_roots(world: World) -> None:
    """A rename from one root into the other is refused before anything moves, naming the
    source's root; with one root the destination is outside the workspace."""
    fs = LocalFileSystem(cwd=world.root, roots=world.roots)
    source = await fs.resolve("real.txt")
    before = snapshot(world.base)
    with pytest.raises(dsh_fs.FsError) as caught:
        dest = await fs.resolve(f"{world.peer}/moved.txt")
        await fs.rename(source, dest)
    assert caught.value.code == "FS_PERMISSION_DENIED"
    if len(world.roots) == 2:
        assert str(caught.value) == (f'cannot rename "{world.root}/real.txt" to "{world.peer}/moved.txt": '
                                     f'outside the workspace "{world.root}"')
    else:
        assert str(caught.value) == f'cannot resolve "{world.peer}/moved.txt": outside the workspace "{world.root}"'
    assert snapshot(world.base) == before


async def test_a_patch_moving_a_file_into_the_other_root_is_refused_whole(world: World) -> None:
    """apply_patch asks ``check_renamable`` with its other up-front checks: a move across roots
    refuses the whole patch (the earlier update is not written), as a move out of one root does."""
    ctx = dsh_fs.create_context(provider=LocalFileSystem(cwd=world.root, roots=world.roots), faces=["apply_patch"])
    session = Session(cwd=world.root)
    for path in ("real.txt", "sub/inner.txt"):
        assert not (await call(ctx, "read", {"file_path": path}, session)).is_error
    before = snapshot(world.base)
    patch = "\n".join(["*** Begin Patch", "*** Update File: real.txt", "@@", "-real one", "+REAL one",
                       "*** Update File: sub/inner.txt", f"*** Move to: {world.peer}/moved.txt", "@@",
                       "-inner one", "+inner 1", "*** End Patch"])
    result = await call(ctx, "apply_patch", {"input": patch}, session)
    assert result.error is not None and result.error.code == "FS_PERMISSION_DENIED", result.text
    if len(world.roots) == 2:
        assert result.text == (f'Error: cannot rename "{world.root}/sub/inner.txt" to "{world.peer}/moved.txt": '
                               f'outside the workspace "{world.root}"')
    else:
        assert result.text == f'Error: cannot resolve "{world.peer}/moved.txt": outside the workspace "{world.root}"'
    assert snapshot(world.base) == before
