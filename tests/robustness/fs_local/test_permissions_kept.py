"""A replace never widens access (tracker issue 12, item 5).

A write or edit replaces the file with a new inode. What the old inode allowed must still
hold, and nothing more:

* a file with a POSIX access ACL keeps it byte for byte (a group the ACL shuts out does not
  get the mask as group bits), in both profiles; when it cannot be kept, the replace is
  refused and the file is untouched;
* a file without an ACL, in a directory with a default ACL, gets no ACL from the directory;
* a new file in such a directory gets the ACL ``creat`` gives it (default profile, D3), or
  the reference's owner-only 0600;
* editing a group-shared file (``1001:2000 0664``) as another member of group 2000 keeps the
  group; when the group cannot be kept either, the editor's group gets no more than others had.

ACLs are set through their extended attribute (``system.posix_acl_access``, the kernel's
format, encoded here), so no ``setfacl`` is needed; the tests skip where the file system
has no ACLs. The user and group cases switch users and need root.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat as stat_mod
import struct
import tempfile
from typing import Any

import pytest

import dsh_fs
from dsh_fs import Session
from dsh_fs.fs_local import LocalFileSystem
from dsh_fs.fs_local.rules import STREAM_EDIT_MIN_SIZE
from filekit import get, put
from robustkit import call, run_as, snapshot, temp_entries

pytestmark = pytest.mark.anyio

ACCESS, DEFAULT = "system.posix_acl_access", "system.posix_acl_default"
USER_OBJ, USER, GROUP_OBJ, GROUP, MASK, OTHER = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20
NO_ID = 0xFFFFFFFF


def acl(*entries: tuple[int, int, int]) -> bytes:
    """An ACL in the kernel's xattr format: version 2, then (tag, perm, id) sorted."""
    return struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *e) for e in sorted(entries))


def entries(raw: bytes) -> list[tuple[int, int, int]]:
    return [struct.unpack_from("<HHI", raw, 4 + 8 * i) for i in range((len(raw) - 4) // 8)]


# user::rw- group::--- group:2000:r-- mask::r-- other::---  (ls shows 0640: the mask as group bits)
SHUT_OUT = acl((USER_OBJ, 6, NO_ID), (GROUP_OBJ, 0, NO_ID), (GROUP, 4, 2000), (MASK, 4, NO_ID), (OTHER, 0, NO_ID))
# default: user::rwx group::r-x group:2000:rwx mask::rwx other::---
INHERITED = acl((USER_OBJ, 7, NO_ID), (GROUP_OBJ, 5, NO_ID), (GROUP, 7, 2000), (MASK, 7, NO_ID), (OTHER, 0, NO_ID))


def _acl_of(path: str, name: str = ACCESS) -> bytes | None:
    try:
        return os.getxattr(path, name, follow_symlinks=False)
    except OSError as exc:
        if exc.errno == errno.ENODATA:
            return None
        raise


@pytest.fixture
def acl_ws(ws: str) -> str:
    probe = put(f"{ws}/.probe", "x")
    try:
        os.setxattr(probe, ACCESS, SHUT_OUT)
    except OSError as exc:
        if exc.errno in (errno.EOPNOTSUPP, errno.ENOTSUP):
            pytest.skip(f"no POSIX ACLs on the file system of {ws}")
        raise
    finally:
        os.unlink(probe)
    return ws


def _mode(path: str) -> int:
    return stat_mod.S_IMODE(os.stat(path).st_mode)


PROFILES = ["default", "reference"]


@pytest.mark.parametrize("streamed", [False, True], ids=["in-memory", "streamed-edit"])
@pytest.mark.parametrize("profile", PROFILES)
async def test_the_access_acl_is_kept(acl_ws: str, profile: str, streamed: bool) -> None:
    path = put(f"{acl_ws}/acl.txt", "alpha\n")
    os.setxattr(path, ACCESS, SHUT_OUT)
    assert _mode(path) == 0o640
    fs = LocalFileSystem(cwd=acl_ws, profile=profile, stream_edit_min_size=1 if streamed else STREAM_EDIT_MIN_SIZE)
    ctx = dsh_fs.create_context(provider=fs, policy=False, profile=profile)
    for tool, args in (("edit", {"file_path": "acl.txt", "old_string": "alpha", "new_string": "beta"}),
                       ("write", {"file_path": "acl.txt", "content": "gamma\n"})):
        result = await call(ctx, tool, args, Session(cwd=acl_ws))
        assert not result.is_error, result.text
        assert _acl_of(path) == SHUT_OUT, tool
        assert _mode(path) == 0o640, tool  # group bits are the mask; the owning group still has ---
    assert get(path) == b"gamma\n"


async def test_a_replaced_file_does_not_take_the_directory_default_acl(acl_ws: str) -> None:
    path = put(f"{acl_ws}/plain.txt", "alpha\n", mode=0o640)
    os.setxattr(acl_ws, DEFAULT, INHERITED)  # set after the file was made: it never had it
    ctx = dsh_fs.create_context(cwd=acl_ws, policy=False)
    result = await call(ctx, "edit", {"file_path": "plain.txt", "old_string": "alpha", "new_string": "beta"},
                        Session(cwd=acl_ws))
    assert not result.is_error, result.text
    assert _acl_of(path) is None and _mode(path) == 0o640


async def test_a_new_file_gets_what_creat_gives_it(acl_ws: str) -> None:
    """Default profile (D3): the directory's default ACL, masked by the create mode 0o666, as
    for any program that makes a file there; the reference profile: 0600, no ACL."""
    os.setxattr(acl_ws, DEFAULT, INHERITED)
    os.close(os.open(f"{acl_ws}/by-creat.txt", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    for profile, name in (("default", "new.txt"), ("reference", "ref.txt")):
        ctx = dsh_fs.create_context(cwd=acl_ws, policy=False, profile=profile)
        result = await call(ctx, "write", {"file_path": name, "content": "x\n"}, Session(cwd=acl_ws))
        assert not result.is_error, result.text
    assert _acl_of(f"{acl_ws}/new.txt") == _acl_of(f"{acl_ws}/by-creat.txt") is not None
    assert _mode(f"{acl_ws}/new.txt") == _mode(f"{acl_ws}/by-creat.txt") == 0o660  # other::--- stays
    assert (_acl_of(f"{acl_ws}/ref.txt"), _mode(f"{acl_ws}/ref.txt")) == (None, 0o600)


async def test_a_replace_that_cannot_keep_the_acl_is_refused(acl_ws: str, monkeypatch: pytest.MonkeyPatch) -> None:
    path = put(f"{acl_ws}/acl.txt", "alpha\n")
    os.setxattr(path, ACCESS, SHUT_OUT)
    before = snapshot(acl_ws)

    def refused(*args: Any, **kwargs: Any) -> None:
        raise OSError(errno.EPERM, os.strerror(errno.EPERM))

    monkeypatch.setattr(os, "setxattr", refused)
    ctx = dsh_fs.create_context(cwd=acl_ws, policy=False)
    for tool, args in (("edit", {"file_path": "acl.txt", "old_string": "alpha", "new_string": "beta"}),
                       ("write", {"file_path": "acl.txt", "content": "gamma\n"})):
        result = await call(ctx, tool, args, Session(cwd=acl_ws))
        assert result.error is not None and result.error.code == "FS_IO_ERROR", result.text
        assert result.text == (f'Error: cannot {tool} "{path}": its access ACL cannot be kept '
                               "(Operation not permitted)")
    monkeypatch.undo()
    assert snapshot(acl_ws) == before and _acl_of(path) == SHUT_OUT and temp_entries(acl_ws) == []


# -- owner and group, as another user ---------------------------------------------------------

EDIT_AS = r"""
import anyio
import dsh_fs
ws, name = sys.argv[1], sys.argv[2]
ctx = dsh_fs.create_context(cwd=ws, policy=False)
async def main():
    drop()
    r = await ctx.tools.execute("edit", {"file_path": name, "old_string": "alpha", "new_string": "beta"},
                                session=dsh_fs.Session(cwd=ws))
    st = os.stat(os.path.join(ws, name))
    print(json.dumps([r.text, st.st_uid, st.st_gid, st.st_mode & 0o7777]))
anyio.run(main)
"""


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    ("owner", "mode", "editor", "expected"),
    [
        # another member of the file's group: the owner cannot be kept, the group is
        ((1001, 2000), 0o664, (1002, 1002, (2000,)), (1002, 2000, 0o664)),
        # the owner, no longer in the file's group: the group cannot be kept, so the
        # editor's own group gets no more than others had
        ((1003, 2000), 0o660, (1003, 1003, ()), (1003, 1003, 0o600)),
        ((1003, 2000), 0o674, (1003, 1003, ()), (1003, 1003, 0o644)),
    ],
    ids=["group-member", "owner-out-of-group", "owner-out-of-group-x"],
)
def test_the_group_is_kept_when_only_the_owner_cannot_be(owner: tuple[int, int], mode: int,
                                                         editor: tuple[int, int, tuple[int, ...]],
                                                         expected: tuple[int, int, int]) -> None:
    top = tempfile.mkdtemp(prefix="dsh-fs-group-")
    try:
        os.chmod(top, 0o755)
        ws, locks = os.path.join(top, "ws"), os.path.join(top, "locks")
        os.mkdir(ws)
        os.chmod(ws, 0o777)  # anyone may make the temp file here
        os.mkdir(locks, 0o700)
        uid, gid, groups = editor
        os.chown(locks, uid, gid)
        path = put(os.path.join(ws, "shared.txt"), "alpha\n")
        os.chown(path, *owner)
        os.chmod(path, mode)
        text, *got = run_as(EDIT_AS, ws, "shared.txt", uid=uid, gid=gid, groups=groups, cwd=top,
                            env={"DSH_FS_LOCK_DIR": locks})
        assert text == f"The file {path} has been updated successfully.", text
        assert tuple(got) == expected
        assert get(path) == b"beta\n"
    finally:
        shutil.rmtree(top, ignore_errors=True)
