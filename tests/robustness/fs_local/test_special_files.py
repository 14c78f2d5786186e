"""Special files and exhausted resources (tracker issue 4, item 4; DEVIATIONS A2).

Each case gives a clear coded error — never a hang, never a partial file, never litter:
FIFOs (also one swapped in between the type check and the open), character devices,
sockets, ``/proc`` files (readable although ``stat`` says 0 bytes: read returns their
current text), unreadable files and directories, names too long, a full disk and a read-only
file system. Cases that need root (``mknod``, ``mount``) or a non-root user (permissions)
run in the right setting: as root (CI runs the suite as root) the root cases run, and a mount or
a switch of user the machine refuses fails them (``robustkit.refused_privilege``); as another
user they are skipped with the reason.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import socket
import stat as stat_mod
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest

import dsh_fs
from dsh_fs import Session
from dsh_fs.fs_local import LocalFileSystem, files
from robustkit import call, child_env, refused_privilege, snapshot, temp_entries

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

IS_ROOT = os.geteuid() == 0


def _all_tools(path: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("read", {"file_path": path}),
        ("write", {"file_path": path, "content": "new\n"}),
        ("edit", {"file_path": path, "old_string": "a", "new_string": "b"}),
    ]


def _expect(result: Any, code: str, text: str) -> None:
    assert result.error is not None and result.error.code == code, result.text
    assert result.text == text


# -- FIFOs, devices, sockets -------------------------------------------------------------------

@pytest.fixture
def fifo(ws: str) -> Iterator[str]:
    path = os.path.join(ws, "pipe")
    os.mkfifo(path)
    yield path
    # release any reader that might be stuck on the FIFO, so a regression fails instead of hanging
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass


@pytest.mark.parametrize("policy", [True, False], ids=["policy", "bare"])
async def test_fifo_is_never_opened_for_content(ws: str, fifo: str, policy: bool) -> None:
    ctx = dsh_fs.create_context(cwd=ws, policy=policy)
    session = Session(cwd=ws)
    for tool, args in _all_tools("pipe"):
        result = await call(ctx, tool, args, session, timeout=60)
        # an edit the policy refuses says what is wrong first (D27: one stat, never an open)
        _expect(result, "FS_NOT_REGULAR_FILE", f'Error: cannot {tool} "{fifo}": not a regular file')
    assert stat_mod.S_ISFIFO(os.lstat(fifo).st_mode)
    assert sorted(os.listdir(ws)) == ["pipe"]


@pytest.mark.parametrize("tool", ["read", "write", "edit"])
async def test_fifo_swapped_in_after_the_type_check_does_not_hang(
    ws: str, tool: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file passes ``stat`` as a regular file, then becomes a FIFO before it is opened:
    the open is non-blocking and the descriptor is type-checked."""
    path = os.path.join(ws, "f.txt")
    with open(path, "w") as handle:
        handle.write("a\n")
    ctx = dsh_fs.create_context(cwd=ws, policy=False)
    real_open = files.open_regular_st  # (``open_regular`` opens through it too)

    def swap_then_open(p: str, *a: Any, **k: Any) -> tuple[int, os.stat_result]:
        if p == path and not stat_mod.S_ISFIFO(os.lstat(path).st_mode):
            os.unlink(path)
            os.mkfifo(path)
        return real_open(p, *a, **k)

    monkeypatch.setattr(files, "open_regular_st", swap_then_open)
    try:
        result = await call(ctx, tool, dict(_all_tools("f.txt"))[tool], Session(cwd=ws), timeout=60)
    finally:
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass
    assert result.is_error and result.error is not None, result.text
    if result.error.code != "FS_NOT_REGULAR_FILE":
        pytest.fail(f"the swap was not reached through _open_regular: {result.text}")
    _expect(result, "FS_NOT_REGULAR_FILE", f'Error: cannot {tool} "{path}": not a regular file')
    assert stat_mod.S_ISFIFO(os.lstat(path).st_mode), "the FIFO must not be replaced"


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom", "/dev/null"])
async def test_character_devices_are_not_read(ws: str, device: str) -> None:
    if not os.path.exists(device):
        pytest.skip(f"{device} does not exist here")
    ctx = dsh_fs.create_context(cwd=ws, root=None)
    result = await call(ctx, "read", {"file_path": device}, Session(cwd=ws), timeout=60)
    _expect(result, "FS_NOT_REGULAR_FILE", f'Error: cannot read "{device}": not a regular file')


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
async def test_a_file_swapped_for_a_device_link_is_not_read(ws: str, device: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without containment a path may be followed anywhere; a regular file that turns into a
    link to an endless device between ``stat`` and the open is refused by the descriptor check."""
    path = os.path.join(ws, "f.txt")
    with open(path, "w") as handle:
        handle.write("a\n")
    ctx = dsh_fs.create_context(cwd=ws, root=None, policy=False)
    real_open = files.open_regular_st  # (``open_regular`` opens through it too)

    def swap_then_open(p: str, *a: Any, **k: Any) -> tuple[int, os.stat_result]:
        if p == path and not os.path.islink(path):
            os.unlink(path)
            os.symlink(device, path)
        return real_open(p, *a, **k)

    monkeypatch.setattr(files, "open_regular_st", swap_then_open)
    for tool in ("read", "edit"):
        result = await call(ctx, tool, dict(_all_tools("f.txt"))[tool], Session(cwd=ws), timeout=60)
        _expect(result, "FS_NOT_REGULAR_FILE", f'Error: cannot {tool} "{path}": not a regular file')
        assert os.readlink(path) == device
        os.unlink(path)
        with open(path, "w") as handle:
            handle.write("a\n")


@pytest.mark.skipif(not IS_ROOT, reason="mknod of a character device needs root")
@pytest.mark.parametrize("policy", [True, False], ids=["policy", "bare"])
async def test_device_node_in_the_workspace_is_never_replaced(ws: str, policy: bool) -> None:
    path = os.path.join(ws, "null")
    os.mknod(path, 0o666 | stat_mod.S_IFCHR, os.makedev(1, 3))  # a second /dev/null
    ctx = dsh_fs.create_context(cwd=ws, policy=policy)
    session = Session(cwd=ws)
    for tool, args in _all_tools("null"):
        result = await call(ctx, tool, args, session, timeout=60)
        # an edit says so under the policy too (D27: what is wrong first, not "read it first")
        _expect(result, "FS_NOT_REGULAR_FILE", f'Error: cannot {tool} "{path}": not a regular file')
    st = os.lstat(path)
    assert stat_mod.S_ISCHR(st.st_mode) and st.st_rdev == os.makedev(1, 3)
    assert os.listdir(ws) == ["null"]


async def test_socket_is_refused(ws: str, monkeypatch: pytest.MonkeyPatch) -> None:
    path = os.path.join(ws, "sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        monkeypatch.chdir(ws)
        server.bind("sock")  # relative: fits sockaddr_un however long the temp path is
        server.listen(1)
        ctx = dsh_fs.create_context(cwd=ws, policy=False)
        for tool, args in _all_tools("sock"):
            result = await call(ctx, tool, args, Session(cwd=ws), timeout=60)
            _expect(result, "FS_NOT_REGULAR_FILE", f'Error: cannot {tool} "{path}": not a regular file')
        assert stat_mod.S_ISSOCK(os.lstat(path).st_mode)
    finally:
        server.close()


# -- /proc ---------------------------------------------------------------------------------------

async def test_proc_file_reads_its_current_text_although_stat_says_zero_bytes(ws: str) -> None:
    """Decision: a ``/proc`` file is a regular file whose ``stat`` size is 0; read returns the
    text the kernel generates (read to EOF, the size is not trusted)."""
    path = "/proc/self/status"
    if not os.path.exists(path):
        pytest.skip("no /proc here")
    assert os.stat(path).st_size == 0
    ctx = dsh_fs.create_context(cwd=ws, root=None)
    result = await call(ctx, "read", {"file_path": path}, Session(cwd=ws), timeout=60)
    assert not result.is_error, result.text
    head, _, rest = result.text.partition("\n<content>\n")
    assert head == f"<path>{path}</path>\n<type>file</type>"
    body, _, footer = rest.rpartition("\n\n")
    lines = body.split("\n")
    assert lines[0].startswith("1: Name:\t")
    assert f"Pid:\t{os.getpid()}" in [line.split(": ", 1)[1] for line in lines]
    assert [int(line.split(":", 1)[0]) for line in lines] == list(range(1, len(lines) + 1))
    assert footer == f"(End of file - total {len(lines)} lines)\n</content>"


async def test_proc_file_with_an_io_error_is_a_coded_error(ws: str) -> None:
    path = "/proc/self/mem"  # open succeeds, read at offset 0 fails with EIO
    if not os.path.exists(path):
        pytest.skip("no /proc here")
    ctx = dsh_fs.create_context(cwd=ws, root=None)
    result = await call(ctx, "read", {"file_path": path}, Session(cwd=ws), timeout=60)
    assert result.error is not None and result.error.code in ("FS_IO_ERROR", "FS_PERMISSION_DENIED"), result.text
    assert result.text.startswith(f'Error: cannot read "{path}": ')


# -- permissions -----------------------------------------------------------------------------------

UNREADABLE = r"""
import anyio, json, os, sys
import dsh_fs
ws, calls = sys.argv[1], json.loads(sys.argv[3])
ctx = dsh_fs.create_context(cwd=ws, policy=False)  # modules are imported while still root
uid = int(sys.argv[2])
async def main():
    if os.geteuid() == 0:
        os.setgroups([]); os.setgid(uid); os.setuid(uid)
    out = []
    for tool, args in calls:
        r = await ctx.tools.execute(tool, args, session=dsh_fs.Session(cwd=ws))
        out.append([r.error.code if r.error else None, r.text])
    print(json.dumps(out))
anyio.run(main)
"""


def test_unreadable_file_as_a_regular_user() -> None:
    """A mode-0 file: every tool is refused with the plain ``permission denied``. Run by a
    regular user: as root (where permission bits do not apply) the calls run in a child
    process that switched to ``nobody``; otherwise in a child process as this user."""
    top = tempfile.mkdtemp(prefix="dsh-fs-unreadable-")  # /tmp, reachable by nobody
    try:
        os.chmod(top, 0o755)
        ws = os.path.join(top, "ws")
        locks = os.path.join(top, "locks")
        os.mkdir(ws, 0o755)
        os.mkdir(locks, 0o700)
        uid = 65534 if IS_ROOT else os.getuid()
        os.chown(locks, uid, -1)
        path = os.path.join(ws, "secret.txt")
        with open(path, "w") as handle:
            handle.write("a\n")
        os.chmod(path, 0)
        calls = _all_tools("secret.txt")
        out = run_as(uid, UNREADABLE, ws, locks=locks, cwd=top, extra=(json.dumps(calls),))
        for (tool, _), got in zip(calls, out, strict=True):
            assert got == ["FS_PERMISSION_DENIED", f'Error: cannot {tool} "{path}": permission denied'], got
        assert temp_entries(ws) == []
        os.chmod(path, 0o600)
        with open(path) as handle:
            assert handle.read() == "a\n"
    finally:
        shutil.rmtree(top, ignore_errors=True)


PRIVILEGE_DROP = r"""
import anyio, json, os, sys
import dsh_fs
ws = sys.argv[1]
ctx = dsh_fs.create_context(cwd=ws, policy=False)  # modules are imported while still root
uid = int(sys.argv[2])
out = {}
async def main():
    os.setgroups([]); os.setgid(uid); os.setuid(uid)  # the python install may be closed to nobody
    s = dsh_fs.Session(cwd=ws)
    calls = [("read", {"file_path": "secret.txt"}),
             ("write", {"file_path": "secret.txt", "content": "x"}),
             ("edit", {"file_path": "secret.txt", "old_string": "a", "new_string": "b"}),
             ("write", {"file_path": "public.txt", "content": "x"}),
             ("write", {"file_path": "new.txt", "content": "x"}),
             ("read", {"file_path": "closed/inside.txt"}),
             ("write", {"file_path": "mine/new.txt", "content": "x"})]
    for tool, args in calls:
        r = await ctx.tools.execute(tool, args, session=s)
        out[tool + " " + args["file_path"]] = [r.error.code if r.error else None, r.text]
anyio.run(main)
print(json.dumps(out))
"""


def run_as(uid: int, script: str, ws: str, *, locks: str, cwd: str, extra: tuple[str, ...] = ()) -> Any:
    """Run ``script`` (which switches to ``uid`` itself, after its imports) on ``ws`` (then
    ``uid`` and ``extra`` as its arguments); its JSON output. A switch this system refuses is
    ``refused_privilege`` (a failure as root)."""
    env = {**child_env(), "DSH_FS_LOCK_DIR": locks}
    proc = subprocess.run([sys.executable, "-c", script, ws, str(uid), *extra],
                          capture_output=True, text=True, timeout=50, env=env, cwd=cwd)
    if proc.returncode != 0 and ("Operation not permitted" in proc.stderr or "PermissionError" in proc.stderr
                                 and "setuid" in proc.stderr):
        refused_privilege(f"cannot switch to uid {uid}: {proc.stderr[-300:]}")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.skipif(not IS_ROOT, reason="dropping privileges needs root")
def test_permission_errors_for_an_unprivileged_user() -> None:
    """As root, run the calls in a child process that switched to ``nobody``."""
    nobody = 65534
    top = tempfile.mkdtemp(prefix="dsh-fs-perm-")  # /tmp, reachable by nobody
    try:
        os.chmod(top, 0o755)
        ws = os.path.join(top, "ws")
        locks = os.path.join(top, "locks")
        os.mkdir(ws, 0o755)
        os.mkdir(locks, 0o700)
        os.chown(locks, nobody, nobody)
        for name, mode in (("secret.txt", 0o000), ("public.txt", 0o644)):
            with open(os.path.join(ws, name), "w") as handle:
                handle.write("a\n")
            os.chmod(os.path.join(ws, name), mode)
        os.mkdir(os.path.join(ws, "closed"), 0o700)
        with open(os.path.join(ws, "closed", "inside.txt"), "w") as handle:
            handle.write("a\n")
        os.mkdir(os.path.join(ws, "mine"), 0o755)
        os.chown(os.path.join(ws, "mine"), nobody, nobody)
        before = snapshot(ws)
        out = run_as(nobody, PRIVILEGE_DROP, ws, locks=locks, cwd=top)
        denied = "FS_PERMISSION_DENIED"
        assert out["read secret.txt"] == [denied, f'Error: cannot read "{ws}/secret.txt": permission denied']
        assert out["write secret.txt"] == [denied, f'Error: cannot write "{ws}/secret.txt": permission denied']
        assert out["edit secret.txt"] == [denied, f'Error: cannot edit "{ws}/secret.txt": permission denied']
        # root's readable file, in a directory we may not write either: refused as read-only (D17)
        assert out["write public.txt"] == [
            denied, f'Error: cannot write "{ws}/public.txt": permission denied — the file is read-only']
        assert out["write new.txt"] == [denied, f'Error: cannot write "{ws}/new.txt": permission denied']
        assert out["read closed/inside.txt"][0] == denied
        assert out["read closed/inside.txt"][1].endswith(f'"{ws}/closed/inside.txt": permission denied')
        assert out["write mine/new.txt"][0] is None, out["write mine/new.txt"]
        after = snapshot(ws)
        del after["mine/new.txt"]
        before["mine"], after["mine"] = before["mine"][:3], after["mine"][:3]  # its mtime changed
        assert after == before, "a refused call changed something"
    finally:
        shutil.rmtree(top, ignore_errors=True)


# -- read-only files (DEVIATIONS D17) ----------------------------------------------------------------

@pytest.mark.parametrize("streamed", [False, True])
async def test_D17_a_read_only_file_is_not_replaced(ws: str, streamed: bool) -> None:
    """``chmod 444``: write and edit are refused in the default profile (as any user, root
    included: no write bit means nobody is meant to write it) and the file keeps every byte,
    its mode and its inode; the reference profile replaces it as the reference does."""
    path = os.path.join(ws, "notes.txt")
    with open(path, "w") as handle:
        handle.write("keep me\n")
    os.chmod(path, 0o444)
    threshold = 1 if streamed else 10**12
    ctx = dsh_fs.create_context(provider=LocalFileSystem(cwd=ws, stream_edit_min_size=threshold), policy=False)
    before = snapshot(ws)
    for tool, args in (("edit", {"file_path": "notes.txt", "old_string": "keep", "new_string": "lose"}),
                       ("write", {"file_path": "notes.txt", "content": "lost\n"})):
        result = await call(ctx, tool, args, Session(cwd=ws))
        _expect(result, "FS_PERMISSION_DENIED", f'Error: cannot {tool} "{path}": permission denied — the file is read-only')
    assert snapshot(ws) == before and temp_entries(ws) == []
    reference = dsh_fs.create_context(
        provider=LocalFileSystem(cwd=ws, profile="reference", stream_edit_min_size=threshold), profile="reference",
        policy=False)
    result = await call(reference, "edit", {"file_path": "notes.txt", "old_string": "keep", "new_string": "lose"},
                        Session(cwd=ws))
    assert not result.is_error, result.text
    with open(path) as handle:
        assert handle.read() == "lose me\n"
    assert stat_mod.S_IMODE(os.stat(path).st_mode) == 0o444


@pytest.mark.parametrize("op", ["*** Delete File: notes.txt\n", "*** Update File: notes.txt\n@@\n-keep me\n+lost\n",
                                "*** Update File: notes.txt\n*** Move to: moved.txt\n@@\n-keep me\n+lost\n"],
                         ids=["delete", "update", "move-and-update"])
async def test_D17_a_patch_that_changes_a_read_only_file_is_refused_whole(ws: str, op: str) -> None:
    """An ``apply_patch`` that deletes or rewrites a ``chmod 444`` file after changing another
    file is refused before its first write (``FileSystem.check_replaceable``): every file is
    untouched. The reference profile applies it."""
    for name, text in (("notes.txt", "keep me\n"), ("other.txt", "x\n")):
        with open(os.path.join(ws, name), "w") as handle:
            handle.write(text)
    os.chmod(os.path.join(ws, "notes.txt"), 0o444)
    patch = f"*** Begin Patch\n*** Update File: other.txt\n@@\n-x\n+y\n{op}*** End Patch\n"
    before = snapshot(ws)
    ctx = dsh_fs.create_context(cwd=ws, policy=False, faces=["apply_patch"])
    result = await call(ctx, "apply_patch", {"input": patch}, Session(cwd=ws))
    assert result.is_error and result.error is not None and result.error.code == "FS_PERMISSION_DENIED", result.text
    verb = "delete" if "Delete" in op else "write"
    assert result.text == f'Error: cannot {verb} "{ws}/notes.txt": permission denied — the file is read-only'
    assert "applied in part" not in result.text
    assert snapshot(ws) == before and temp_entries(ws) == []
    reference = dsh_fs.create_context(cwd=ws, profile="reference", policy=False, faces=["apply_patch"])
    result = await call(reference, "apply_patch", {"input": patch}, Session(cwd=ws))
    assert not result.is_error, result.text
    assert not os.path.exists(os.path.join(ws, "notes.txt")) or "Delete" not in op
    with open(os.path.join(ws, "other.txt")) as handle:
        assert handle.read() == "y\n"


READ_ONLY_AS_NOBODY = r"""
import anyio, json, os, sys
import dsh_fs
ws = sys.argv[1]
uid = int(sys.argv[2])
default = dsh_fs.create_context(cwd=ws, policy=False)  # modules are imported while still root
reference = dsh_fs.create_context(cwd=ws, profile="reference", policy=False)
out = {}
async def main():
    os.setgroups([]); os.setgid(uid); os.setuid(uid)
    s = dsh_fs.Session(cwd=ws)
    for name in ("mine-444.txt", "root-644.txt", "mine-644.txt", "group-664.txt"):
        for tool, args in (("edit", {"old_string": "a", "new_string": "b"}), ("write", {"content": "w"})):
            r = await default.tools.execute(tool, {"file_path": name, **args}, session=s)
            out[f"{tool} {name}"] = [r.error.code if r.error else None, r.text]
    r = await reference.tools.execute("edit", {"file_path": "ref-444.txt", "old_string": "a", "new_string": "b"},
                                      session=s)
    out["reference edit ref-444.txt"] = [r.error.code if r.error else None, r.text]
anyio.run(main)
print(json.dumps(out))
"""


@pytest.mark.skipif(not IS_ROOT, reason="dropping privileges needs root")
def test_D17_read_only_for_an_unprivileged_user() -> None:
    """As ``nobody``, in a directory ``nobody`` may write: its own ``0444`` file and root's
    ``0644`` file are refused and untouched (the kernel's answer for the caller's effective
    ids decides); its own ``0644`` file and a ``0664`` file of its group are edited; the
    reference profile replaces a ``0444`` file."""
    nobody = 65534
    top = tempfile.mkdtemp(prefix="dsh-fs-ro-")
    try:
        os.chmod(top, 0o755)
        ws = os.path.join(top, "ws")
        locks = os.path.join(top, "locks")
        os.mkdir(ws, 0o755)
        os.chown(ws, nobody, nobody)
        os.mkdir(locks, 0o700)
        os.chown(locks, nobody, nobody)
        for name, mode, owner in (("mine-444.txt", 0o444, (nobody, nobody)), ("root-644.txt", 0o644, (0, 0)),
                                  ("mine-644.txt", 0o644, (nobody, nobody)), ("group-664.txt", 0o664, (0, nobody)),
                                  ("ref-444.txt", 0o444, (nobody, nobody))):
            path = os.path.join(ws, name)
            with open(path, "w") as handle:
                handle.write("a\n")
            os.chown(path, *owner)
            os.chmod(path, mode)
        before = snapshot(ws)
        out = run_as(nobody, READ_ONLY_AS_NOBODY, ws, locks=locks, cwd=top)
        for tool in ("edit", "write"):
            for name in ("mine-444.txt", "root-644.txt"):
                assert out[f"{tool} {name}"] == [
                    "FS_PERMISSION_DENIED", f'Error: cannot {tool} "{ws}/{name}": permission denied — the file is read-only']
            for name in ("mine-644.txt", "group-664.txt"):
                assert out[f"{tool} {name}"][0] is None, out[f"{tool} {name}"]
        assert out["reference edit ref-444.txt"][0] is None, out["reference edit ref-444.txt"]
        after = snapshot(ws)
        for name in ("mine-444.txt", "root-644.txt"):
            assert after[name] == before[name], f"{name} changed"
        with open(os.path.join(ws, "ref-444.txt")) as handle:
            assert handle.read() == "b\n"
        assert temp_entries(ws) == []
    finally:
        shutil.rmtree(top, ignore_errors=True)


# -- names too long -------------------------------------------------------------------------------

@pytest.mark.parametrize("deployment", ["policy", "bare", "rooted"])
async def test_name_too_long(ws: str, deployment: str) -> None:
    """A 300-byte name, and a path longer than PATH_MAX made of short names: a coded error,
    nothing created (with a root too, although descriptor walks could go deeper)."""
    if deployment == "rooted":
        ctx = dsh_fs.create_context(provider=LocalFileSystem(cwd=ws, root=ws), policy=False)
    else:
        ctx = dsh_fs.create_context(cwd=ws, policy=deployment == "policy")
    name = "n" * 300
    path = os.path.join(ws, name)
    for tool, args in _all_tools(name):
        result = await call(ctx, tool, args, Session(cwd=ws))
        _expect(result, "FS_IO_ERROR", f'Error: cannot resolve "{path}": {os.strerror(errno.ENAMETOOLONG)}')
    long_path = "d/" * 2100 + "x.txt"
    for tool, args in _all_tools(long_path):
        result = await call(ctx, tool, args, Session(cwd=ws))
        if tool == "edit" and deployment == "policy":  # refused by the policy before the disk is asked
            assert result.error is not None and result.error.code == "FS_NOT_OBSERVED", result.text
            continue
        assert result.error is not None and result.error.code == "FS_IO_ERROR", result.text
        assert result.text.endswith(f'/x.txt": {os.strerror(errno.ENAMETOOLONG)}'), result.text[-80:]
    assert os.listdir(ws) == []


# -- full disk, read-only file system ---------------------------------------------------------------

def _mount_tmpfs(where: str, options: str) -> None:
    if not IS_ROOT:
        pytest.skip("mounting a small tmpfs needs root")
    if shutil.which("mount") is None:
        refused_privilege("no mount command")
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", where],
                          capture_output=True, text=True, timeout=30)
    if proc.returncode != 0:
        refused_privilege(f"cannot mount a tmpfs here: {proc.stderr.strip()}")


@pytest.fixture
def tiny_disk(tmp_path: Any) -> Iterator[str]:
    """A 4 MiB tmpfs with room for 64 inodes, mounted for the test (root only)."""
    where = os.path.join(os.path.realpath(str(tmp_path)), "tiny")
    os.mkdir(where)
    _mount_tmpfs(where, "size=4m,nr_inodes=64,mode=0755")
    try:
        yield where
    finally:
        proc = subprocess.run(["umount", where], capture_output=True, timeout=30)
        if proc.returncode != 0:
            subprocess.run(["umount", "-l", where], capture_output=True, timeout=30)


def _fill(where: str) -> None:
    fd = os.open(os.path.join(where, "ballast"), os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError as exc:
        assert exc.errno == errno.ENOSPC
    finally:
        os.close(fd)


@pytest.mark.parametrize("streamed_edit", [False, True], ids=["edit-in-memory", "edit-streamed"])
async def test_full_disk_write_and_edit_keep_the_old_file(tiny_disk: str, streamed_edit: bool) -> None:
    ws = tiny_disk
    old = ("old line é\n" * 100_000)  # about 1.1 MB
    path = os.path.join(ws, "big.txt")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(old + "MARKER\n")
    fs = LocalFileSystem(cwd=ws, stream_edit_min_size=64 * 1024 if streamed_edit else 1 << 40)
    ctx = dsh_fs.create_context(provider=fs)
    session = Session(cwd=ws)
    assert not (await call(ctx, "read", {"file_path": "big.txt"}, session)).is_error
    before = snapshot(ws, dir_times=False)
    enospc = os.strerror(errno.ENOSPC)
    huge = "new line\n" * 400_000  # 3.6 MB: cannot fit beside the old file

    result = await call(ctx, "write", {"file_path": "big.txt", "content": huge}, session)
    _expect(result, "FS_IO_ERROR", f'Error: cannot write "{path}": {enospc}')
    assert snapshot(ws, dir_times=False) == before

    result = await call(ctx, "edit", {"file_path": "big.txt", "old_string": "MARKER", "new_string": huge}, session)
    _expect(result, "FS_IO_ERROR", f'Error: cannot edit "{path}": {enospc}')
    assert snapshot(ws, dir_times=False) == before

    result = await call(ctx, "write", {"file_path": "sub/fresh.txt", "content": huge}, session)
    _expect(result, "FS_IO_ERROR", f'Error: cannot write "{ws}/sub/fresh.txt": {enospc}')
    assert temp_entries(ws) == [] and not os.path.exists(os.path.join(ws, "sub", "fresh.txt"))
    assert temp_entries(os.path.join(ws, "sub")) == []

    # an edit that fits succeeds: the failures left nothing in the way
    result = await call(ctx, "edit", {"file_path": "big.txt", "old_string": "MARKER", "new_string": "DONE"}, session)
    assert not result.is_error, result.text
    with open(path, encoding="utf-8") as handle:
        assert handle.read() == old + "DONE\n"


async def test_full_disk_with_no_space_left_at_all(tiny_disk: str) -> None:
    ws = tiny_disk
    path = os.path.join(ws, "a.txt")
    with open(path, "w") as handle:
        handle.write("alpha\n")
    ctx = dsh_fs.create_context(cwd=ws)
    session = Session(cwd=ws)
    assert not (await call(ctx, "read", {"file_path": "a.txt"}, session)).is_error
    _fill(ws)
    before = snapshot(ws, dir_times=False)
    enospc = os.strerror(errno.ENOSPC)
    result = await call(ctx, "edit", {"file_path": "a.txt", "old_string": "alpha", "new_string": "beta"}, session)
    _expect(result, "FS_IO_ERROR", f'Error: cannot edit "{path}": {enospc}')
    result = await call(ctx, "write", {"file_path": "a.txt", "content": "x" * 100_000}, session)
    _expect(result, "FS_IO_ERROR", f'Error: cannot write "{path}": {enospc}')
    assert snapshot(ws, dir_times=False) == before


async def test_no_inodes_left(tiny_disk: str) -> None:
    ws = tiny_disk
    path = os.path.join(ws, "a.txt")
    with open(path, "w") as handle:
        handle.write("alpha\n")
    ctx = dsh_fs.create_context(cwd=ws)
    session = Session(cwd=ws)
    assert not (await call(ctx, "read", {"file_path": "a.txt"}, session)).is_error
    os.mkdir(os.path.join(ws, "inodes"))
    try:
        for i in range(1000):
            open(os.path.join(ws, "inodes", str(i)), "w").close()
    except OSError as exc:
        assert exc.errno == errno.ENOSPC
    else:
        pytest.fail("the tmpfs inode limit was not reached")
    before = snapshot(ws, dir_times=False)
    result = await call(ctx, "edit", {"file_path": "a.txt", "old_string": "alpha", "new_string": "beta"}, session)
    _expect(result, "FS_IO_ERROR", f'Error: cannot edit "{path}": {os.strerror(errno.ENOSPC)}')
    assert snapshot(ws, dir_times=False) == before


async def test_read_only_file_system(tiny_disk: str) -> None:
    ws = tiny_disk
    path = os.path.join(ws, "a.txt")
    with open(path, "w") as handle:
        handle.write("alpha\n")
    os.mkdir(os.path.join(ws, "sub"))
    ctx = dsh_fs.create_context(cwd=ws)
    session = Session(cwd=ws)
    assert not (await call(ctx, "read", {"file_path": "a.txt"}, session)).is_error
    proc = subprocess.run(["mount", "-o", "remount,ro", ws], capture_output=True, text=True, timeout=30)
    if proc.returncode != 0:
        refused_privilege(f"cannot remount read-only: {proc.stderr.strip()}")
    before = snapshot(ws, dir_times=False)
    erofs = os.strerror(errno.EROFS)
    result = await call(ctx, "edit", {"file_path": "a.txt", "old_string": "alpha", "new_string": "beta"}, session)
    _expect(result, "FS_IO_ERROR", f'Error: cannot edit "{path}": {erofs}')
    result = await call(ctx, "write", {"file_path": "a.txt", "content": "beta\n"}, session)
    _expect(result, "FS_IO_ERROR", f'Error: cannot write "{path}": {erofs}')
    result = await call(ctx, "write", {"file_path": "new/deeper/b.txt", "content": "beta\n"}, session)
    _expect(result, "FS_IO_ERROR", f'Error: cannot write "{ws}/new/deeper/b.txt": {erofs}')
    result = await call(ctx, "read", {"file_path": "a.txt"}, session)
    assert not result.is_error and "1: alpha" in result.text
    assert snapshot(ws, dir_times=False) == before


@pytest.mark.parametrize("tool", ["str_replace_based_edit_tool", "str_replace_editor"])
async def test_E23_a_symlink_loop_is_listed_as_such_and_the_listing_goes_on(ws: str, tool: str) -> None:
    os.makedirs(f"{ws}/sub/deeper")
    os.symlink("l2", f"{ws}/sub/l1")
    os.symlink("l1", f"{ws}/sub/l2")
    os.symlink("self", f"{ws}/self")
    for path in ("a.txt", "sub/z.txt"):
        with open(f"{ws}/{path}", "w") as handle:
            handle.write("x\n")
    ctx = dsh_fs.create_context(root=ws, cwd=ws, faces=[tool])
    result = await ctx.tools.execute(tool, {"command": "view", "path": ws}, session=Session(cwd=ws))
    assert not result.is_error, result.text
    rows = result.text.split("\n")[1:-2]
    assert rows == ["d\t" + ws, f"f\t{ws}/a.txt", f"?\t{ws}/self", f"d\t{ws}/sub", f"d\t{ws}/sub/deeper",
                    f"?\t{ws}/sub/l1", f"?\t{ws}/sub/l2", f"f\t{ws}/sub/z.txt"]
    entries = await LocalFileSystem(root=ws).list_dir(await LocalFileSystem(root=ws).resolve(f"{ws}/sub"))
    assert [(e.name, e.type) for e in entries] == [("deeper", "directory"), ("l1", "other"), ("l2", "other"),
                                                   ("z.txt", "file")]
    # the reference profile fails the listing as the reference does
    reference = dsh_fs.create_context(root=ws, cwd=ws, profile="reference", faces=[tool])
    failed = await reference.tools.execute(tool, {"command": "view", "path": ws}, session=Session(cwd=ws))
    assert failed.text == f'Error: cannot list "{ws}/self": Too many levels of symbolic links'


@pytest.mark.parametrize("provider", ["local", "memory"])
async def test_D16_an_update_or_add_over_the_size_limit_refuses_the_whole_patch(ws: str, provider: str) -> None:
    """The planned text's size is asked of the provider before the first write (E10): an update
    or an added file over ``write_max_size`` refuses the patch whole, with the write's text."""
    from dsh_fs.fs_memory import MemoryFileSystem

    fs: Any
    if provider == "local":
        fs = LocalFileSystem(root=ws, cwd=ws, write_max_size=40)
        for name, text in (("a.txt", "x\n"), ("big.txt", "y\n")):
            with open(os.path.join(ws, name), "w") as handle:
                handle.write(text)
    else:
        fs = MemoryFileSystem(cwd=ws, write_max_size=40)
        fs.put(f"{ws}/a.txt", "x\n")
        fs.put(f"{ws}/big.txt", "y\n")
    ctx = dsh_fs.create_context(provider=fs, policy=False, faces=["apply_patch"])
    grown = "".join(f"+{'z' * 9}\n" for _ in range(5))  # 50 bytes
    for second, name in ((f"*** Update File: big.txt\n@@\n-y\n{grown}", "big.txt"),
                         (f"*** Add File: new.txt\n{grown}", "new.txt")):
        patch = f"*** Begin Patch\n*** Update File: a.txt\n@@\n-x\n+X\n{second}*** End Patch\n"
        before = snapshot(ws) if provider == "local" else fs.snapshot()
        result = await call(ctx, "apply_patch", {"input": patch}, Session(cwd=ws))
        assert result.error is not None and result.error.code == "FS_IO_ERROR", result.text
        assert result.text == (f'Error: cannot write "{ws}/{name}": the file would be 50 bytes, more than the limit '
                               "of 40 bytes")
        assert (snapshot(ws) if provider == "local" else fs.snapshot()) == before


DIRECTORIES_AS_NOBODY = r"""
import anyio, json, os, sys
import dsh_fs
ws = sys.argv[1]
uid = int(sys.argv[2])
ctx = dsh_fs.create_context(cwd=ws, policy=False, faces=["apply_patch"])  # imported while still root
out = {}
patches = {
    "add": "*** Add File: closed/new.txt\n+n\n",
    "add-deep": "*** Add File: closed/sub/new.txt\n+n\n",
    "delete": "*** Delete File: closed/old.txt\n",
    "move-out": "*** Update File: closed/old.txt\n*** Move to: mine/moved.txt\n@@\n-o\n+O\n",
    "move-in": "*** Update File: mine/b.txt\n*** Move to: closed/moved.txt\n@@\n-b\n+B\n",
}
async def main():
    os.setgroups([]); os.setgid(uid); os.setuid(uid)
    s = dsh_fs.Session(cwd=ws)
    for name, second in patches.items():
        patch = "*** Begin Patch\n*** Update File: mine/a.txt\n@@\n-a\n+A\n" + second + "*** End Patch\n"
        r = await ctx.tools.execute("apply_patch", {"input": patch}, session=s)
        out[name] = [r.error.code if r.error else None, r.text]
    ok = "*** Begin Patch\n*** Add File: mine/sub/new.txt\n+n\n*** Delete File: mine/b.txt\n*** End Patch\n"
    r = await ctx.tools.execute("apply_patch", {"input": ok}, session=s)
    out["ok"] = [r.error.code if r.error else None, r.text]
anyio.run(main)
print(json.dumps(out))
"""


@pytest.mark.skipif(not IS_ROOT, reason="dropping privileges needs root")
def test_a_patch_that_changes_names_in_a_directory_the_user_may_not_write_is_refused_whole() -> None:
    """As ``nobody``: adding, deleting or moving a file in (or out of) a directory it may not
    write refuses the whole patch before its first write (``check_creatable`` /
    ``check_replaceable``), with the text the write would have given; in its own directory the
    same operations apply."""
    nobody = 65534
    top = tempfile.mkdtemp(prefix="dsh-fs-dirs-")
    try:
        os.chmod(top, 0o755)
        ws = os.path.join(top, "ws")
        locks = os.path.join(top, "locks")
        os.mkdir(ws, 0o755)
        os.mkdir(locks, 0o700)
        os.chown(locks, nobody, nobody)
        for directory, owner in (("closed", 0), ("mine", nobody)):
            os.mkdir(os.path.join(ws, directory), 0o755)
            os.chown(os.path.join(ws, directory), owner, owner)
        for path, text in (("closed/old.txt", "o\n"), ("mine/a.txt", "a\n"), ("mine/b.txt", "b\n")):
            with open(os.path.join(ws, path), "w") as handle:
                handle.write(text)
            os.chown(os.path.join(ws, path), nobody, nobody)
        before = snapshot(ws)
        out = run_as(nobody, DIRECTORIES_AS_NOBODY, ws, locks=locks, cwd=top)
        denied = "FS_PERMISSION_DENIED"
        assert out["add"] == [denied, f'Error: cannot write "{ws}/closed/new.txt": permission denied']
        assert out["add-deep"] == [denied, f'Error: cannot write "{ws}/closed/sub/new.txt": permission denied']
        assert out["delete"] == [denied, f'Error: cannot delete "{ws}/closed/old.txt": permission denied']
        assert out["move-out"] == [denied, f'Error: cannot rename "{ws}/closed/old.txt": permission denied']
        assert out["move-in"] == [denied, f'Error: cannot write "{ws}/closed/moved.txt": permission denied']
        for name in ("add", "add-deep", "delete", "move-out", "move-in"):
            assert "applied in part" not in out[name][1]
        assert out["ok"] == [None, f"Success. Updated the following files:\nA {ws}/mine/sub/new.txt\n"
                                   f"D {ws}/mine/b.txt\n"]
        after = snapshot(ws)
        for path in ("closed/old.txt", "mine/a.txt"):
            assert after[path] == before[path], f"{path} changed"
        assert "closed/new.txt" not in after and "mine/b.txt" not in after
    finally:
        shutil.rmtree(top, ignore_errors=True)
