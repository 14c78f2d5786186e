"""The fixed work of a small local edit, cut without losing a guarantee (a speed pass).

* A5 with ``LocalFileSystem.recent``: an edit guarded by the racy version the last write
  reported does not hash the bytes it reads when they are the bytes that write stored — and
  still fails ``FS_STALE_VERSION`` for any other bytes behind the same stat fields (a
  same-size rewrite in one timestamp tick, made here by restoring the stat fields), or
  another version.
* The mutation's probe is made once for the inline decision and the operation; a probe that
  fails still yields the operation's own error.

Not covered here: the pure fast paths (tests/unit/fs/test_edit_fast_paths.py); the ACL read from
the edit's descriptor (tests/robustness/fs_local/test_permissions_kept.py, both edit paths).
"""

from __future__ import annotations

import os
from typing import Any

import pytest

import dsh_fs
from dsh_fs import Session
from dsh_fs.fs import FsError
from dsh_fs.fs.types import EditRequest, Target, TargetKey
from dsh_fs.fs_local import LocalFileSystem, files, fsio, versions
from dsh_fs.fs_local.recent_writes import RecentWrites
from filekit import get, put

pytestmark = pytest.mark.anyio


async def _edit(ctx: Any, session: Session, old: str, new: str) -> Any:
    return await ctx.tools.execute("edit", {"file_path": "a.py", "old_string": old, "new_string": new},
                                   session=session)


async def test_an_edit_of_the_bytes_just_written_skips_their_digest(ws: str, monkeypatch: pytest.MonkeyPatch) -> None:
    put(os.path.join(ws, "a.py"), "alpha = 1\nbeta = 2\n")
    fs = LocalFileSystem(cwd=ws)
    ctx = dsh_fs.create_context(cwd=ws, provider=fs)
    session = Session(cwd=ws)
    assert not (await ctx.tools.execute("read", {"file_path": "a.py"}, session=session)).is_error
    assert not (await _edit(ctx, session, "alpha", "ALPHA")).is_error  # read's version: hashed as always
    hashed: list[bytes] = []
    real = versions.digest_bytes
    monkeypatch.setattr(versions, "digest_bytes", lambda data: hashed.append(data) or real(data))
    assert not (await _edit(ctx, session, "beta", "BETA")).is_error
    assert get(os.path.join(ws, "a.py")) == b"ALPHA = 1\nBETA = 2\n"
    # one digest: of the bytes written (the new version); the bytes read were the last write's
    assert hashed == [b"ALPHA = 1\nBETA = 2\n"]


def test_other_bytes_behind_the_same_stat_fields_are_still_stale(ws: str) -> None:
    """The racy case A5 is for: the stat fields are those of the version (a same-size rewrite
    within one timestamp tick; made here by minting the token from the current fields, as ctime
    cannot be set back) but the bytes are not the ones that version was minted from."""
    path = put(os.path.join(ws, "a.py"), "delta = 1\n")  # another program's bytes, in place
    fs = LocalFileSystem(cwd=ws)
    written = b"gamma = 1\n"  # what our last write stored, same size
    token = f"{versions.fields_of(os.stat(path))}:{versions.digest_bytes(written)}"
    fs.recent.remember(path, token, written)
    target = Target(key=TargetKey(path), display_path=path)
    with pytest.raises(FsError) as caught:
        fsio.edit_file(target, EditRequest(old_string="delta", new_string="x"), _intent(token), signal=None,
                       rules=fs.rules, recent=fs.recent)
    assert caught.value.code == "FS_STALE_VERSION"
    assert get(path) == b"delta = 1\n"
    with open(path, "r+b") as handle:  # the bytes the version was minted from: the edit goes through
        handle.write(written)
    token = f"{versions.fields_of(os.stat(path))}:{versions.digest_bytes(written)}"
    fs.recent.remember(path, token, written)
    fsio.edit_file(target, EditRequest(old_string="gamma", new_string="x"), _intent(token), signal=None,
                   rules=fs.rules, recent=fs.recent)
    assert get(path) == b"x = 1\n"


def _intent(version: str) -> Any:
    from dsh_fs.fs.types import ReplaceIfVersion, Version

    return ReplaceIfVersion(version=Version(version))


def test_recent_writes_are_bounded_and_keep_only_racy_versions() -> None:
    recent = RecentWrites(files=2, max_size=4)
    recent.remember("/a", "1:2:3:4:5:abc", b"aaaa")
    recent.remember("/b", "1:2:3:4:5", b"bbbb")  # no digest: nothing would use it
    recent.remember("/c", "1:2:3:4:5:def", b"ccccc")  # over max_size
    assert len(recent) == 1 and recent.vouches("/a", "1:2:3:4:5:abc", b"aaaa")
    assert not recent.vouches("/a", "1:2:3:4:5:abd", b"aaaa") and not recent.vouches("/a", "1:2:3:4:5:abc", b"aaab")
    recent.remember("/d", "9:2:3:4:5:abc", b"dd")
    recent.remember("/e", "9:2:3:4:5:abc", b"ee")
    assert len(recent) == 2 and not recent.vouches("/a", "1:2:3:4:5:abc", b"aaaa")  # least recent dropped
    recent.forget("/e")
    assert len(recent) == 1


async def test_a_failing_probe_gives_the_operations_own_error(ws: str) -> None:
    fs = LocalFileSystem(cwd=ws)
    long = os.path.join(ws, "x" * 300)  # ENAMETOOLONG: the probe fails with a mapped error
    target = Target(key=TargetKey(long), display_path=long)
    with pytest.raises(FsError) as direct:
        fsio.edit_file(target, EditRequest(old_string="a", new_string="b"), None, signal=None, rules=fs.rules)
    with pytest.raises(FsError) as through:
        await fs.edit_text(target, EditRequest(old_string="a", new_string="b"))
    assert (through.value.code, str(through.value)) == (direct.value.code, str(direct.value))


async def test_read_text_at_checks_the_version_on_its_own_descriptor(ws: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The local ``read_text_at`` (apply_patch's gather, the editors' ``insert``): no path stat
    after the read (``is_current``), and a change made while it reads is still seen (the
    descriptor's stat after the read differs), so the text is never another version's."""
    path = put(os.path.join(ws, "a.py"), "one\n")
    fs = LocalFileSystem(cwd=ws)
    target = await fs.resolve("a.py")
    info = await fs.stat(target)
    assert info is not None
    probes: list[str] = []
    real_probe = files.probe
    monkeypatch.setattr(files, "probe", lambda *a, **k: probes.append(a[0]) or real_probe(*a, **k))
    assert await fs.read_text_at(target, info.version, info=info) == "one\n" and probes == []
    real_read = fsio._read_fd

    def meddling(*args: Any, **kwargs: Any) -> bytes:
        data = real_read(*args, **kwargs)
        with open(path, "ab") as handle:  # another program appends while the read is under way
            handle.write(b"two\n")
        return data

    monkeypatch.setattr(fsio, "_read_fd", meddling)
    assert await fs.read_text_at(target, info.version, info=info) is None


@pytest.mark.parametrize("inline_probes", [True, False])
async def test_the_mutations_probe_is_made_once_and_only_where_probes_may_run(
        ws: str, monkeypatch: pytest.MonkeyPatch, inline_probes: bool) -> None:
    """With ``inline_probes`` the probe is made once, on the loop, for the inline decision and
    the operation; without, never on the loop (the operation makes it, wherever it runs)."""
    import threading

    put(os.path.join(ws, "a.py"), "alpha = 1\n")
    fs = LocalFileSystem(cwd=ws, inline_probes=inline_probes, inline_write_max=0)  # the edit runs in a thread
    target = await fs.resolve("a.py")
    where: list[bool] = []
    real_probe = files.probe
    main = threading.get_ident()
    monkeypatch.setattr(files, "probe", lambda *a, **k: where.append(threading.get_ident() == main) or real_probe(*a, **k))
    await fs.edit_text(target, EditRequest(old_string="alpha", new_string="beta"))
    assert get(os.path.join(ws, "a.py")) == b"beta = 1\n"
    assert where == ([True] if inline_probes else [False])
