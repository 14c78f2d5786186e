"""The local-disk provider on a real filesystem: ``fs_local`` (``fsio``, ``LocalFileSystem``).

Covers REFERENCE-SPEC §7.2 (``fsio.spec.ts``: raw mechanics, called as ``fsio`` functions)
and §7.3 (``filesystem.spec.ts``: the provider through the seam), every test named in its
docstring, plus DEVIATIONS A2 (coded OS errors), A3 (parent directory fsynced after the
rename), A4 (two processes, no lost update), A5 (racy same-size rewrites) and A6
(code-point listing order). Checks read files back from disk instead of trusting outcomes.

Running as root: permission failures cannot be produced with mode bits, so the EACCES cases
inject the OS error at the exact syscall (monkeypatch) instead of skipping.

Not covered here: ``applyLiteralEdit`` (pure; tests/unit/fs/test_text_rules.py), the tools and
the profile deviations D1–D12 as the model sees them (test_tools.py).
"""

from __future__ import annotations

import errno
import os
import socket
import stat as stat_mod
import subprocess
import sys
import textwrap
from collections.abc import Callable
from typing import Any

import anyio
import pytest

from dsh_fs import AbortSignal, Context
from dsh_fs.fs import FsError
from dsh_fs.fs.text import detect
from dsh_fs.fs.types import CreateIfAbsent, EditIntent, EditRequest, ReplaceIfVersion, Target, TargetKey
from dsh_fs.fs_local import LocalFileSystem, atomic, files, fsio, versions
from filekit import get, put

pytestmark = pytest.mark.anyio

REF = LocalFileSystem(profile="reference").rules
DEF = LocalFileSystem(profile="default").rules


def rewrite_in_place(path: str, data: bytes, *, keep_mtime: bool = False) -> None:
    """Another process rewrites the file in place (same inode)."""
    before = os.stat(path)
    with open(path, "r+b") as handle:
        handle.truncate(0)
        handle.write(data)
    if keep_mtime:
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def litter(directory: str) -> list[str]:
    return [n for n in os.listdir(directory) if ".tmp" in n]


def target_of(path: str, display: str | None = None) -> Target:
    return Target(key=TargetKey(os.path.realpath(path)), display_path=display or path)


async def raises(code: str, coro: Any, message: str | None = None) -> FsError:
    with pytest.raises(FsError) as caught:
        await coro
    assert caught.value.code == code, str(caught.value)
    if message is not None:
        assert str(caught.value) == message
    return caught.value


def sync_raises(code: str, func: Callable[..., Any], *args: Any, message: str | None = None, **kwargs: Any) -> FsError:
    with pytest.raises(FsError) as caught:
        func(*args, **kwargs)
    assert caught.value.code == code, str(caught.value)
    if message is not None:
        assert str(caught.value) == message
    return caught.value


@pytest.fixture
def linked(ws: str) -> tuple[str, str]:
    """``(real, link)``: a real directory and a symlink pointing at it, both in ``ws``."""
    real = os.path.join(ws, "real")
    os.mkdir(real)
    link = os.path.join(ws, "link")
    os.symlink(real, link)
    return real, link


# ==========================================================================================
# §7.2 resolveLocalTarget
# ==========================================================================================

def test_resolves_a_relative_path_from_cwd_and_realpaths_it(linked: tuple[str, str]) -> None:
    """resolveLocalTarget: resolves a relative path from cwd and realpaths it"""
    real, link = linked
    put(os.path.join(real, "a.txt"), "x")
    target = fsio.resolve_target("a.txt", link, signal=None, rules=REF)
    assert (target.display_path, target.key) == (f"{link}/a.txt", f"{real}/a.txt")


def test_uses_the_realpathed_parent_and_basename_for_a_missing_file(linked: tuple[str, str]) -> None:
    """resolveLocalTarget: uses the realpathed parent + basename when the file does not exist (stable across create)"""
    real, link = linked
    before = fsio.resolve_target("new.txt", link, signal=None, rules=REF)
    assert (before.display_path, before.key) == (f"{link}/new.txt", f"{real}/new.txt")
    put(f"{real}/new.txt", "x")
    assert fsio.resolve_target("new.txt", link, signal=None, rules=REF).key == before.key


def test_two_paths_to_the_same_file_via_a_symlink_share_one_target_key(ws: str) -> None:
    """resolveLocalTarget: two paths to the same file via a symlink share one targetKey"""
    put(f"{ws}/real.txt", "x")
    os.symlink(f"{ws}/real.txt", f"{ws}/alias.txt")
    real = fsio.resolve_target("real.txt", ws, signal=None, rules=REF)
    alias = fsio.resolve_target("alias.txt", ws, signal=None, rules=REF)
    assert real.key == alias.key == f"{ws}/real.txt"
    assert alias.display_path == f"{ws}/alias.txt"


def test_realpaths_the_nearest_existing_ancestor_when_intermediate_dirs_are_missing(linked: tuple[str, str]) -> None:
    """resolveLocalTarget: realpaths the nearest existing ancestor when intermediate dirs are missing"""
    real, link = linked
    target = fsio.resolve_target("no-such-dir/child.txt", link, signal=None, rules=REF)
    assert (target.display_path, target.key) == (f"{link}/no-such-dir/child.txt", f"{real}/no-such-dir/child.txt")


def test_keeps_the_key_stable_across_create_when_an_ancestor_is_a_symlink(linked: tuple[str, str]) -> None:
    """resolveLocalTarget: keeps the key stable across create when an ancestor is a symlink"""
    real, link = linked
    for rules in (REF, DEF):
        path = f"deep{rules.keep_bom}/er/file.txt"
        before = fsio.resolve_target(path, link, signal=None, rules=rules)
        put(os.path.join(real, path), "x")
        after = fsio.resolve_target(path, link, signal=None, rules=rules)
        assert before.key == after.key == os.path.join(real, path)


@pytest.mark.parametrize("path", ["", "   ", "\t\n", "\u00a0\ufeff"])
def test_rejects_a_blank_path(ws: str, path: str) -> None:
    """resolveLocalTarget: rejects a blank path"""
    sync_raises("FS_NOT_FOUND", fsio.resolve_target, path, ws, signal=None, rules=REF,
                message="file_path must be a non-empty string")


def test_rejects_a_path_whose_ancestor_is_a_file_with_a_structured_fs_error(ws: str) -> None:
    """resolveLocalTarget: rejects a path whose ancestor is a file with a structured FsError (ENOTDIR)"""
    put(f"{ws}/afile", "x")
    for rules in (REF, DEF):
        sync_raises("FS_NOT_FOUND", fsio.resolve_target, "afile/child.txt", ws, signal=None, rules=rules,
                    message=f'cannot resolve "{ws}/afile/child.txt": a parent path segment is not a directory')


# ==========================================================================================
# §7.2 probe / probeNoFollow
# ==========================================================================================

def test_probe_returns_null_for_a_missing_path_and_metadata_for_a_file(ws: str) -> None:
    """probe: returns null for a missing path and metadata for a file"""
    assert files.probe(f"{ws}/missing", "stat", "m") is None
    put(f"{ws}/f.txt", "hi")
    info = files.probe(f"{ws}/f.txt", "stat", "f").info()  # type: ignore[union-attr]
    assert (info.type, info.size) == ("file", 2) and isinstance(info.version, str) and info.version


def test_probe_reports_a_directory_and_a_non_regular_type(ws: str) -> None:
    """probe: reports a directory and a non-regular type"""
    os.mkdir(f"{ws}/d")
    os.mkfifo(f"{ws}/fifo")
    assert files.probe(f"{ws}/d", "stat", "d").type == "directory"  # type: ignore[union-attr]
    assert files.probe(f"{ws}/fifo", "stat", "p").type == "other"  # type: ignore[union-attr]


def test_probe_reports_a_socket_as_other(ws: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """probe: reports a socket/special file as type "other" """
    monkeypatch.chdir(ws)
    sock = socket.socket(socket.AF_UNIX)
    try:
        try:
            sock.bind("sock")
        except OSError as exc:  # pragma: no cover - sandboxed hosts
            pytest.skip(f"unix sockets are forbidden here: {exc}")
        info = files.probe(f"{ws}/sock", "stat", "s")
        assert info is not None and info.type == "other" and info.info().size is not None
    finally:
        sock.close()


def test_probe_returns_null_when_an_ancestor_path_segment_is_a_file(ws: str) -> None:
    """probe: returns null when an ancestor path segment is a file (ENOTDIR), not a raw throw"""
    put(f"{ws}/afile", "x")
    assert files.probe(f"{ws}/afile/child", "stat", "c") is None


def test_probe_no_follow_reports_symlinks_without_following_them(ws: str) -> None:
    """probeNoFollow: reports symlinks without following them"""
    put(f"{ws}/real.txt", "content")
    os.symlink(f"{ws}/real.txt", f"{ws}/link")
    link = files.probe_no_follow(f"{ws}/link", "link")
    assert link is not None and link.type == "symlink" and isinstance(link.version, str)
    assert link.size == len(f"{ws}/real.txt") > 0
    real = files.probe_no_follow(f"{ws}/real.txt", "real")
    assert real is not None and (real.type, real.size) == ("file", 7)


def test_probe_no_follow_returns_null_for_a_missing_path_or_a_file_valued_ancestor(ws: str) -> None:
    """probeNoFollow: returns null for a missing path or a file-valued ancestor path segment"""
    put(f"{ws}/afile", "x")
    assert files.probe_no_follow(f"{ws}/missing", "m") is None
    assert files.probe_no_follow(f"{ws}/afile/x", "x") is None


# ==========================================================================================
# §7.2 listDirectory
# ==========================================================================================

def test_lists_direct_children_in_stable_order_without_reading_content(ws: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """listDirectory: lists direct children in stable order without reading content"""
    skills = f"{ws}/skills"
    put(f"{skills}/zeta.md", "zz")
    put(f"{skills}/alpha.md", "a")
    os.mkdir(f"{skills}/dir-skill")
    put(f"{skills}/dir-skill/SKILL.md", "nested, not listed")
    os.symlink(f"{skills}/nowhere", f"{skills}/broken-link")

    real_open = os.open
    opened: list[str] = []

    def watch(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if not flags & os.O_DIRECTORY:
            opened.append(str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", watch)
    entries = fsio.list_directory(target_of(skills), signal=None, rules=REF)
    monkeypatch.undo()
    assert [(e.name, e.type, e.size) for e in entries] == [
        ("alpha.md", "file", 1), ("broken-link", "other", None), ("dir-skill", "directory", None), ("zeta.md", "file", 2)
    ]
    assert [e.version is not None for e in entries] == [True, False, True, True]
    assert [e.target.display_path for e in entries] == [f"{skills}/{e.name}" for e in entries]
    assert entries[1].target.key == f"{skills}/broken-link"  # the link path itself (ancestor fallback)
    assert "version" not in entries[1].as_dict() and "size" not in entries[1].as_dict()
    assert opened == [], (
        "REFERENCE-SPEC §2.6 step 7: a listing never opens file contents, but list_dir opened "
        f"{[os.path.basename(p) for p in opened]} — minting the A5 racy-window digest for fresh files "
        "(versions.mint → digest_file) reads them; see the report"
    )


def test_derives_child_target_keys_from_the_listed_parent_identity(ws: str) -> None:
    """listDirectory: derives child target keys from the listed parent identity"""
    put(f"{ws}/one/a.txt", "1")
    put(f"{ws}/two/b.txt", "2")
    os.symlink(f"{ws}/one", f"{ws}/current")
    target = fsio.resolve_target("current", ws, signal=None, rules=REF)
    os.unlink(f"{ws}/current")
    os.symlink(f"{ws}/two", f"{ws}/current")  # re-pointed after resolve
    entries = fsio.list_directory(target, signal=None, rules=REF)
    assert [(e.name, e.target.key, e.target.display_path) for e in entries] == [
        ("a.txt", f"{ws}/one/a.txt", f"{ws}/current/a.txt")
    ]


def test_rejects_missing_non_directory_and_aborted_listing_requests(ws: str) -> None:
    """listDirectory: rejects missing, non-directory, and aborted listing requests"""
    put(f"{ws}/f.txt", "x")
    sync_raises("FS_NOT_FOUND", fsio.list_directory, target_of(f"{ws}/missing"), signal=None, rules=REF,
                message=f'cannot list "{ws}/missing": not found')
    sync_raises("FS_NOT_DIRECTORY", fsio.list_directory, target_of(f"{ws}/f.txt"), signal=None, rules=REF,
                message=f'cannot list "{ws}/f.txt": not a directory')
    sync_raises("FS_ABORTED", fsio.list_directory, target_of(ws), signal=AbortSignal.aborted_signal(), rules=REF,
                message="list aborted")


def test_translates_directory_permission_failures(ws: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """listDirectory: translates directory permission failures into FS_PERMISSION_DENIED (EACCES injected: root)"""
    os.mkdir(f"{ws}/locked")
    real_listdir, real_scandir = os.listdir, os.scandir

    def refused(path: Any) -> None:
        where = os.readlink(f"/proc/self/fd/{path}") if isinstance(path, int) else os.fspath(path)
        if where == f"{ws}/locked":
            raise PermissionError(errno.EACCES, "Permission denied", where)

    def denied(path: Any = ".") -> list[str]:
        refused(path)
        return real_listdir(path)

    def denied_scan(path: Any = ".") -> Any:
        refused(path)
        return real_scandir(path)

    monkeypatch.setattr(os, "listdir", denied)  # either way of reading the directory is refused
    monkeypatch.setattr(os, "scandir", denied_scan)
    sync_raises("FS_PERMISSION_DENIED", fsio.list_directory, target_of(f"{ws}/locked"), signal=None, rules=REF,
                message=f'cannot list "{ws}/locked": permission denied')


def test_translates_preflight_metadata_io_failures(ws: str) -> None:
    """listDirectory: translates preflight metadata IO failures into FS_IO_ERROR (self-loop symlink)"""
    os.symlink("loop", f"{ws}/loop")
    err = sync_raises("FS_IO_ERROR", fsio.list_directory, Target(key=TargetKey(f"{ws}/loop"), display_path=f"{ws}/loop"),
                      signal=None, rules=REF, message=f'cannot list "{ws}/loop": Too many levels of symbolic links')
    assert isinstance(err.cause, OSError) and err.cause.errno == errno.ELOOP


def test_translates_child_resolution_failures(ws: str) -> None:
    """listDirectory: translates child resolution failures into structured listing errors"""
    os.mkdir(f"{ws}/d")
    put(f"{ws}/d/ok.txt", "x")
    os.symlink("loop", f"{ws}/d/loop")
    sync_raises("FS_IO_ERROR", fsio.list_directory, target_of(f"{ws}/d"), signal=None, rules=REF,
                message=f'cannot list "{ws}/d/loop": Too many levels of symbolic links')


def test_translates_child_permission_failures(ws: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """listDirectory: translates child permission failures into FS_PERMISSION_DENIED (EACCES injected: root)"""
    os.makedirs(f"{ws}/d")
    os.makedirs(f"{ws}/private")
    os.symlink(f"{ws}/private/inner", f"{ws}/d/into-private")
    real_realpath = os.path.realpath

    def denied(path: Any, *args: Any, **kwargs: Any) -> str:
        if str(path).startswith(f"{ws}/d/into-private"):
            raise PermissionError(errno.EACCES, "Permission denied", path)
        return real_realpath(path, *args, **kwargs)

    monkeypatch.setattr(os.path, "realpath", denied)
    sync_raises("FS_PERMISSION_DENIED", fsio.list_directory, target_of(f"{ws}/d"), signal=None, rules=REF,
                message=f'cannot list "{ws}/d/into-private": permission denied')


# ==========================================================================================
# §7.2 readWholeText / streamWholeText
# ==========================================================================================

def test_read_whole_text_reads_a_small_file(ws: str) -> None:
    """readWholeText: reads a small file"""
    put(f"{ws}/a.txt", "hello\r\nworld")
    assert fsio.read_text(f"{ws}/a.txt", "/d", signal=None, rules=REF) == "hello\r\nworld"


def test_read_whole_text_rejects_a_missing_file_and_a_directory(ws: str) -> None:
    """readWholeText: rejects a missing file and a directory"""
    sync_raises("FS_NOT_FOUND", fsio.read_text, f"{ws}/missing", "/d/m", signal=None, rules=REF,
                message='cannot read "/d/m": not found')
    sync_raises("FS_NOT_REGULAR_FILE", fsio.read_text, ws, "/d", signal=None, rules=REF,
                message='cannot read "/d": not a regular file')


def test_read_whole_text_rejects_binary_and_invalid_utf8(ws: str) -> None:
    """readWholeText: rejects binary and invalid UTF-8"""
    put(f"{ws}/bin", b"h\x00i")
    put(f"{ws}/bad", b"h\xffi")
    sync_raises("FS_NOT_TEXT", fsio.read_text, f"{ws}/bin", "/b", signal=None, rules=REF,
                message='cannot read "/b": binary file')
    sync_raises("FS_NOT_TEXT", fsio.read_text, f"{ws}/bad", "/b", signal=None, rules=REF,
                message='cannot read "/b": invalid UTF-8 text')


def test_read_whole_text_honors_a_pre_aborted_signal(ws: str) -> None:
    """readWholeText: honors a pre-aborted signal"""
    put(f"{ws}/a.txt", "x")
    sync_raises("FS_ABORTED", fsio.read_text, f"{ws}/a.txt", "/a", signal=AbortSignal.aborted_signal(), rules=REF,
                message="read aborted")


def test_read_whole_text_passes_a_live_signal_through(ws: str) -> None:
    """readWholeText: passes a live (non-aborted) signal through"""
    put(f"{ws}/a.txt", "live")
    assert fsio.read_text(f"{ws}/a.txt", "/a", signal=AbortSignal(), rules=REF) == "live"


def test_read_whole_text_translates_a_mid_read_abort(ws: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """readWholeText: translates a mid-read AbortError into FS_ABORTED"""
    put(f"{ws}/a.txt", "x" * 100_000)
    signal = AbortSignal()
    original = files.open_regular

    def open_then_abort(*args: Any) -> int:
        fd = original(*args)
        signal.abort()  # the call has started: the file is open
        return fd

    monkeypatch.setattr(files, "open_regular", open_then_abort)
    sync_raises("FS_ABORTED", fsio.read_text, f"{ws}/a.txt", "/a", signal=signal, rules=REF, message="read aborted")


def _stream_all(path: str, *, signal: AbortSignal | None = None, chunk_size: int = 65536, rules: Any = REF) -> list[str]:
    reader = fsio.StreamReader(path, "/s", signal=signal, rules=rules, chunk_size=chunk_size)
    chunks = []
    try:
        while (chunk := reader.next_chunk()) is not None:
            chunks.append(chunk)
    finally:
        reader.close()
    return chunks


def test_stream_whole_text_streams_the_whole_file_as_decoded_text(ws: str) -> None:
    """streamWholeText: streams the whole file as decoded text"""
    put(f"{ws}/a.txt", "\ufeffhé\r\nwörld 😀")
    assert "".join(_stream_all(f"{ws}/a.txt", chunk_size=1)) == "hé\r\nwörld 😀"


def test_stream_whole_text_streams_a_large_multi_chunk_file_correctly(ws: str) -> None:
    """streamWholeText: streams a large multi-chunk file correctly"""
    text = "".join(f"{i:04d}" + "é" * 2996 + "\n" for i in range(50))
    put(f"{ws}/big.txt", text)
    chunks = _stream_all(f"{ws}/big.txt", chunk_size=4099)
    assert len(chunks) > 50 and "".join(chunks) == text


def test_stream_whole_text_rejects_a_missing_file_directory_binary_and_invalid_utf8(ws: str) -> None:
    """streamWholeText: rejects a missing file, directory, binary, and invalid UTF-8"""
    put(f"{ws}/bin", b"h" * 9000 + b"\x00")  # past the sample: fine
    assert "".join(_stream_all(f"{ws}/bin", chunk_size=4096)).endswith("\x00")
    put(f"{ws}/bin2", b"h" * 5000 + b"\x00")  # inside the sample, in the second chunk
    put(f"{ws}/bad", b"ok" * 5000 + b"\xe2\x82")  # truncated at EOF: the final flush fails
    for path, code, message in [
        (f"{ws}/missing", "FS_NOT_FOUND", 'cannot read "/s": not found'),
        (ws, "FS_NOT_REGULAR_FILE", 'cannot read "/s": not a regular file'),
        (f"{ws}/bin2", "FS_NOT_TEXT", 'cannot read "/s": binary file'),
        (f"{ws}/bad", "FS_NOT_TEXT", 'cannot read "/s": invalid UTF-8 text'),
    ]:
        sync_raises(code, _stream_all, path, chunk_size=4096, message=message)


def test_stream_whole_text_honors_a_pre_aborted_signal(ws: str) -> None:
    """streamWholeText: honors a pre-aborted signal"""
    put(f"{ws}/a.txt", "x")
    sync_raises("FS_ABORTED", _stream_all, f"{ws}/a.txt", signal=AbortSignal.aborted_signal(), message="read aborted")


def test_stream_whole_text_passes_a_live_signal_through_the_stream(ws: str) -> None:
    """streamWholeText: passes a live (non-aborted) signal through the stream"""
    put(f"{ws}/a.txt", "abc\n" * 1000)
    assert "".join(_stream_all(f"{ws}/a.txt", signal=AbortSignal(), chunk_size=100)) == "abc\n" * 1000


def test_stream_whole_text_translates_a_mid_stream_abort(ws: str) -> None:
    """streamWholeText: translates a mid-stream abort into FS_ABORTED"""
    put(f"{ws}/big.txt", "x" * (256 * 1024))
    signal = AbortSignal()
    reader = fsio.StreamReader(f"{ws}/big.txt", "/s", signal=signal, rules=REF, chunk_size=64 * 1024)
    assert reader.next_chunk() == "x" * 65536
    signal.abort()
    sync_raises("FS_ABORTED", reader.next_chunk, message="read aborted")
    assert reader.next_chunk() is None  # finished for good, descriptor released
    assert reader._fd is None


# ==========================================================================================
# §7.2 writeFileAtomic
# ==========================================================================================

@pytest.fixture(params=["anonymous", "named"])
def temp_kind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both temp-file paths of ``atomic_write``: an ``O_TMPFILE`` inode, or a named temp file."""
    if request.param == "anonymous" and not atomic.ANONYMOUS_TEMP:
        pytest.skip("O_TMPFILE is not available here")
    monkeypatch.setattr(atomic, "ANONYMOUS_TEMP", request.param == "anonymous")
    return str(request.param)


def test_writes_through_an_owner_only_temp_file_in_the_target_directory(ws: str, temp_kind: str,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """writeFileAtomic: writes through an owner-only temp file (our mechanics: no staging dir,
    the temp file is anonymous while it is written where the file system allows it)"""
    seen: list[tuple[int, int, list[str]]] = []
    real_write = os.write

    def inspect(fd: int, data: Any) -> int:  # the content goes into an owner-only file
        st = os.fstat(fd)
        if stat_mod.S_ISREG(st.st_mode) and not seen:
            seen.append((stat_mod.S_IMODE(st.st_mode), st.st_nlink, sorted(os.listdir(ws))))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", inspect)
    atomic.atomic_write(f"{ws}/out.txt", b"data", mode=0o640, owner=None, signal=None, verb="write", display="/o")
    [(mode, links, names)] = seen
    assert mode == 0o600
    if temp_kind == "anonymous":
        assert (links, names) == (0, [])
    else:
        assert links == 1 and len(names) == 1 and atomic.TEMP_NAME.fullmatch(names[0]), names
        assert names[0].startswith(f".out.txt.{os.getpid()}.")
    assert get(f"{ws}/out.txt") == b"data"
    assert stat_mod.S_IMODE(os.stat(f"{ws}/out.txt").st_mode) == 0o640
    assert os.listdir(ws) == ["out.txt"]


def test_falls_back_to_a_named_temp_file_where_o_tmpfile_is_unsupported(ws: str,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A file system without ``O_TMPFILE`` (EOPNOTSUPP) gets the named temp file instead."""
    if not hasattr(os, "O_TMPFILE"):
        pytest.skip("no O_TMPFILE on this platform")
    monkeypatch.setattr(atomic, "ANONYMOUS_TEMP", True)
    real_open = os.open
    created: list[str] = []

    def no_tmpfile(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if flags & os.O_TMPFILE == os.O_TMPFILE:
            raise OSError(errno.EOPNOTSUPP, os.strerror(errno.EOPNOTSUPP))
        if flags & os.O_CREAT:
            created.append(os.fspath(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", no_tmpfile)
    atomic.atomic_write(f"{ws}/a.txt", b"named", mode=0o644, owner=None, signal=None, verb="write", display="/a")
    assert get(f"{ws}/a.txt") == b"named" and os.listdir(ws) == ["a.txt"]
    assert len(created) == 1 and atomic.TEMP_NAME.fullmatch(created[0]), created


def test_temp_names_fit_the_name_limit_for_long_non_ascii_names(ws: str, temp_kind: str) -> None:
    """A target name of 63 four-byte characters (252 bytes, near NAME_MAX) is still written:
    the temp name keeps at most 64 bytes of it, cut between characters."""
    name = "\U0001F600" * 63
    atomic.atomic_write(f"{ws}/{name}", b"x", mode=0o644, owner=None, signal=None, verb="write", display="/e")
    assert os.listdir(ws) == [name] and get(f"{ws}/{name}") == b"x"


def test_creates_new_files_owner_only_by_default(ws: str) -> None:
    """writeFileAtomic: creates new files owner-only by default (reference profile; D3 changes it)"""
    target = fsio.resolve_target("new.txt", ws, signal=None, rules=REF)
    fsio.write_file(target, "x", None, signal=None, rules=REF)
    assert stat_mod.S_IMODE(os.stat(f"{ws}/new.txt").st_mode) == 0o600


def test_never_reuses_an_existing_temp_path(ws: str, temp_kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """writeFileAtomic: opens staging paths exclusively — a pre-existing path is never clobbered
    (the named temp file is created ``O_EXCL``; an anonymous one is linked, never over a name)"""

    monkeypatch.setattr(atomic, "_unique", lambda: "pinned")
    temp = f"{ws}/.a.txt.{os.getpid()}.pinned.dsh-fs.tmp"
    put(temp, "precious", mode=0o644)
    err = sync_raises("FS_IO_ERROR", atomic.atomic_write, f"{ws}/a.txt", b"new", mode=0o644, owner=None, signal=None,
                      verb="write", display="/a", message='cannot write "/a": File exists')  # raw EEXIST, coded (A2)
    assert isinstance(err.cause, FileExistsError)
    assert get(temp) == b"precious" and sorted(os.listdir(ws)) == [os.path.basename(temp)]


def test_creates_parent_directories_as_needed(ws: str) -> None:
    """writeFileAtomic: creates parent directories as needed"""
    atomic.atomic_write(f"{ws}/nested/deep/a.txt", b"x", mode=0o644, owner=None, signal=None, verb="write", display="/a")
    assert get(f"{ws}/nested/deep/a.txt") == b"x"


def test_atomic_write_passes_a_live_signal_through(ws: str) -> None:
    """writeFileAtomic: passes a live (non-aborted) signal through the write"""
    atomic.atomic_write(f"{ws}/a.txt", b"live", mode=0o644, owner=None, signal=AbortSignal(), verb="write", display="/a")
    assert get(f"{ws}/a.txt") == b"live"


def test_aborts_before_writing_when_the_signal_is_already_aborted(ws: str) -> None:
    """writeFileAtomic: aborts before writing when the signal is already aborted"""
    sync_raises("FS_ABORTED", atomic.atomic_write, f"{ws}/sub/a.txt", b"x", mode=0o644, owner=None,
                signal=AbortSignal.aborted_signal(), verb="write", display="/a", message="write aborted")
    assert os.listdir(ws) == []


def test_an_abort_after_the_content_is_written_leaves_no_temp_file(ws: str, temp_kind: str) -> None:
    """The last abort checkpoint before the rename (§2.10 step 12) removes the temp file."""
    put(f"{ws}/a.txt", "old")
    signal = AbortSignal()

    def produce(fd: int) -> None:
        os.write(fd, b"new content")
        signal.abort()

    sync_raises("FS_ABORTED", atomic.atomic_write, f"{ws}/a.txt", produce, mode=0o644, owner=None, signal=signal,
                verb="write", display="/a", message="write aborted")
    assert os.listdir(ws) == ["a.txt"] and get(f"{ws}/a.txt") == b"old"


class _AbortOnClose:
    """``os`` for ``atomic``, except that closing a descriptor then aborts ``signal``: the abort
    lands after the temp file is complete (linked, closed), just before the rename."""

    def __init__(self, signal: AbortSignal) -> None:
        self.signal = signal

    def close(self, fd: int) -> None:
        os.close(fd)
        self.signal.abort()

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)


def test_an_abort_just_before_the_rename_replaces_nothing(ws: str, temp_kind: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The very last checkpoint (§2.10 step 12): an abort that lands after the temp file is
    closed still wins over the rename — the target keeps its bytes and no temp file is left."""
    put(f"{ws}/a.txt", "old")
    signal = AbortSignal()
    monkeypatch.setattr(atomic, "os", _AbortOnClose(signal))
    sync_raises("FS_ABORTED", atomic.atomic_write, f"{ws}/a.txt", b"new content", mode=0o644, owner=None,
                signal=signal, verb="write", display="/a", message="write aborted")
    assert signal.aborted  # (the abort did land at the close)
    assert os.listdir(ws) == ["a.txt"] and get(f"{ws}/a.txt") == b"old"


def test_cleans_up_the_temp_file_when_the_final_rename_fails(ws: str, temp_kind: str) -> None:
    """writeFileAtomic: cleans up the temp file when the final rename fails"""
    put(f"{ws}/dir/inside.txt", "x")
    err = sync_raises("FS_IO_ERROR", atomic.atomic_write, f"{ws}/dir", b"x", mode=0o644, owner=None, signal=None,
                      verb="write", display="/dir", message='cannot write "/dir": Is a directory')
    assert isinstance(err.cause, IsADirectoryError)
    assert sorted(os.listdir(ws)) == ["dir"] and os.listdir(f"{ws}/dir") == ["inside.txt"]


# ==========================================================================================
# §7.2 readForEdit + restoreLineEndings
# ==========================================================================================

def test_round_trips_crlf_matches_on_lf_writes_back_crlf(ws: str) -> None:
    """readForEdit + restoreLineEndings: round-trips CRLF: matches on LF, writes back CRLF"""
    put(f"{ws}/c.txt", "one\r\ntwo\r\n")
    assert detect("one\r\ntwo\r\n") == "CRLF"
    for rules in (REF, DEF):
        outcome = fsio.edit_file(target_of(f"{ws}/c.txt"), EditRequest(old_string="two\n", new_string="TWO\n"), None,
                                 signal=None, rules=rules)
        assert get(f"{ws}/c.txt") == b"one\r\nTWO\r\n"
        assert (outcome.before, outcome.after) == ("one\ntwo\n", "one\nTWO\n")
        put(f"{ws}/c.txt", "one\r\ntwo\r\n")


def test_read_for_edit_rejects_a_binary_file_and_invalid_utf8(ws: str) -> None:
    """readForEdit: rejects a binary file and invalid UTF-8"""
    put(f"{ws}/bin", b"a" * 10_000 + b"\x00")  # a late NUL: readable, not editable
    put(f"{ws}/bad", b"a\xffb")
    assert fsio.read_text(f"{ws}/bin", "/b", signal=None, rules=REF).endswith("\x00")
    for name, reason in (("bin", "binary file"), ("bad", "invalid UTF-8 text")):
        before = get(f"{ws}/{name}")
        sync_raises("FS_NOT_TEXT", fsio.edit_file, target_of(f"{ws}/{name}", "/x"),
                    EditRequest(old_string="a", new_string="b", replace_all=True), None, signal=None, rules=REF,
                    message=f'cannot edit "/x": {reason}')
        assert get(f"{ws}/{name}") == before


def test_read_for_edit_passes_a_live_signal_through(ws: str) -> None:
    """readForEdit: passes a live (non-aborted) signal through the read"""
    put(f"{ws}/a.txt", "one\ntwo")
    outcome = fsio.edit_file(target_of(f"{ws}/a.txt"), EditRequest(old_string="two", new_string="2"), None,
                             signal=AbortSignal(), rules=REF)
    assert outcome.before == "one\ntwo" and get(f"{ws}/a.txt") == b"one\n2"


def test_read_for_edit_translates_a_mid_read_abort(ws: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """readForEdit: translates a mid-read AbortError into FS_ABORTED"""
    put(f"{ws}/a.txt", "one\ntwo")
    signal = AbortSignal()
    original = files.open_regular_st

    def open_then_abort(*args: Any) -> tuple[int, os.stat_result]:
        opened = original(*args)
        signal.abort()
        return opened

    monkeypatch.setattr(files, "open_regular_st", open_then_abort)
    sync_raises("FS_ABORTED", fsio.edit_file, target_of(f"{ws}/a.txt"), EditRequest(old_string="two", new_string="2"),
                None, signal=signal, rules=REF, message="edit aborted")
    assert get(f"{ws}/a.txt") == b"one\ntwo"


# ==========================================================================================
# §7.3 registration, resolve, stat, lstat, cancellation
# ==========================================================================================

def test_registers_local_file_system_as_ctx_fs_with_a_default_cwd(ws: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """registration: registers LocalFileSystem as ctx.fs with a default cwd"""
    monkeypatch.chdir(ws)
    ctx = Context()
    ctx.plugin(LocalFileSystem)
    assert isinstance(ctx.fs, LocalFileSystem) and ctx.fs.cwd == ws


@pytest.fixture
def local(ws: str) -> LocalFileSystem:
    return LocalFileSystem(cwd=ws, profile="reference")


async def test_resolve_uses_opts_cwd_not_config_cwd(ws: str, local: LocalFileSystem) -> None:
    """resolve: resolves a relative path against opts.cwd, not config.cwd"""
    os.mkdir(f"{ws}/session")
    put(f"{ws}/session/a.txt", "session")
    put(f"{ws}/a.txt", "config")
    assert (await local.resolve("a.txt", cwd=f"{ws}/session")).key == f"{ws}/session/a.txt"
    assert (await local.resolve("a.txt")).key == f"{ws}/a.txt"


async def test_resolve_ignores_opts_cwd_for_an_absolute_path(ws: str, local: LocalFileSystem) -> None:
    """resolve: ignores opts.cwd for an ABSOLUTE path"""
    put(f"{ws}/a.txt", "abs")
    target = await local.resolve(f"{ws}/a.txt", cwd="/definitely/not/here")
    assert await local.read_text(target) == "abs"


async def test_resolve_honors_a_pre_aborted_signal(local: LocalFileSystem) -> None:
    """resolve: honors a pre-aborted signal"""
    await raises("FS_ABORTED", local.resolve("a.txt", signal=AbortSignal.aborted_signal()), "resolve aborted")


def _aborting(monkeypatch: pytest.MonkeyPatch, owner: Any, attr: str, signal: AbortSignal,
              match: Callable[..., bool] = lambda *a, **k: True) -> list[int]:
    """Make ``owner.attr`` abort ``signal`` while it runs (an abort landing mid-probe, from any
    thread: probes may run inline or in a worker); returns a call counter."""
    original = getattr(owner, attr)
    calls = [0]

    def probe_then_abort(*args: Any, **kwargs: Any) -> Any:
        if match(*args, **kwargs):
            calls[0] += 1
            try:
                return original(*args, **kwargs)
            finally:
                signal.abort()
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, attr, probe_then_abort)
    return calls


async def test_resolve_honors_a_signal_aborted_while_in_flight(ws: str, local: LocalFileSystem,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """resolve: honors a signal aborted while resolution is in flight"""
    signal = AbortSignal()
    calls = _aborting(monkeypatch, os.path, "realpath", signal, lambda p, *a, **k: str(p).endswith("slow.txt"))
    await raises("FS_ABORTED", local.resolve("slow.txt", signal=signal), "resolve aborted")
    assert calls[0] >= 1


async def test_stat_returns_file_metadata_directory_type_and_none(ws: str, local: LocalFileSystem) -> None:
    """stat: returns file metadata, directory type, and undefined for absent"""
    put(f"{ws}/a.txt", "hello")
    info = await local.stat(await local.resolve("a.txt"))
    assert info is not None and (info.type, info.size) == ("file", 5)
    directory = await local.stat(await local.resolve("."))
    assert directory is not None and directory.type == "directory" and directory.size is not None
    assert await local.stat(await local.resolve("missing")) is None


async def test_stat_changes_version_after_a_same_size_rewrite_even_when_mtime_is_restored(ws: str, local: LocalFileSystem) -> None:
    """stat: changes version after a same-size rewrite even when mtime is restored"""
    put(f"{ws}/a.txt", "hello")
    target = await local.resolve("a.txt")
    before = (await local.stat(target)).version  # type: ignore[union-attr]
    rewrite_in_place(f"{ws}/a.txt", b"HELLO", keep_mtime=True)
    after = (await local.stat(target)).version  # type: ignore[union-attr]
    assert before != after


async def test_stat_honors_a_pre_aborted_signal(ws: str, local: LocalFileSystem) -> None:
    """stat: honors a pre-aborted signal"""
    target = await local.resolve("a.txt")
    await raises("FS_ABORTED", local.stat(target, signal=AbortSignal.aborted_signal()), "stat aborted")


async def test_lstat_reports_path_metadata_without_following_the_final_symlink(ws: str, local: LocalFileSystem) -> None:
    """lstat: reports path metadata without following the final symlink component"""
    put(f"{ws}/a.txt", "abc")
    os.symlink("a.txt", f"{ws}/link")
    file_info = await local.lstat("a.txt")
    link_info = await local.lstat("link")
    assert file_info is not None and (file_info.type, file_info.size) == ("file", 3)
    assert link_info is not None and (link_info.type, link_info.size) == ("symlink", 5)
    assert await local.lstat("missing") is None


async def test_lstat_resolves_relative_paths_against_opts_cwd_and_honors_a_pre_aborted_signal(
        ws: str, local: LocalFileSystem) -> None:
    """lstat: resolves relative paths against opts.cwd and honors a pre-aborted signal"""
    put(f"{ws}/sub/only-here.txt", "x")
    assert await local.lstat("only-here.txt") is None
    info = await local.lstat("only-here.txt", cwd=f"{ws}/sub")
    assert info is not None and info.type == "file"
    await raises("FS_ABORTED", local.lstat("only-here.txt", signal=AbortSignal.aborted_signal()), "lstat aborted")
    await raises("FS_ABORTED", local.lstat("   ", signal=AbortSignal.aborted_signal()), "lstat aborted")  # abort first
    await raises("FS_NOT_FOUND", local.lstat(" \t"), "file_path must be a non-empty string")


async def test_rejects_stat_and_lstat_when_their_signals_abort_while_the_probes_are_in_flight(
        ws: str, local: LocalFileSystem, monkeypatch: pytest.MonkeyPatch) -> None:
    """metadata cancellation: rejects stat and lstat when their signals abort while the metadata probes are in flight"""
    put(f"{ws}/a.txt", "x")
    target = await local.resolve("a.txt")
    stat_signal, lstat_signal = AbortSignal(), AbortSignal()
    stat_calls = _aborting(monkeypatch, files, "probe", stat_signal)
    lstat_calls = _aborting(monkeypatch, files, "probe_no_follow", lstat_signal)
    await raises("FS_ABORTED", local.stat(target, signal=stat_signal), "stat aborted")
    await raises("FS_ABORTED", local.lstat("a.txt", signal=lstat_signal), "lstat aborted")
    assert stat_calls[0] == 1 and lstat_calls[0] == 1  # the probes did run: the abort landed during them


# ==========================================================================================
# §7.3 readText / streamText / listDir
# ==========================================================================================

async def test_reads_whole_file_text(ws: str, local: LocalFileSystem) -> None:
    """readText / streamText: reads whole-file text"""
    put(f"{ws}/a.txt", b"\xef\xbb\xbfhello\r\n")
    assert await local.read_text(await local.resolve("a.txt")) == "hello\r\n"


async def test_streams_the_same_text(ws: str, local: LocalFileSystem) -> None:
    """readText / streamText: streams the same text"""
    text = "line é\n" * 300_000  # > one 1 MiB chunk
    put(f"{ws}/a.txt", text)
    target = await local.resolve("a.txt")
    assert "".join([c async for c in local.stream_text(target)]) == text == await local.read_text(target)


async def test_read_and_stream_reject_a_missing_file_a_directory_binary_and_invalid_utf8(ws: str, local: LocalFileSystem) -> None:
    """readText / streamText: rejects a missing file, a directory, binary, and invalid UTF-8"""
    put(f"{ws}/bin", b"\x00")
    put(f"{ws}/bad", b"\xff")
    cases = [("missing", "FS_NOT_FOUND", "not found"), (".", "FS_NOT_REGULAR_FILE", "not a regular file"),
             ("bin", "FS_NOT_TEXT", "binary file"), ("bad", "FS_NOT_TEXT", "invalid UTF-8 text")]
    for name, code, words in cases:
        target = await local.resolve(name)
        message = f'cannot read "{target.display_path}": {words}'
        await raises(code, local.read_text(target), message)

        async def drain(t: Target = target) -> None:
            async for _ in local.stream_text(t):
                pass

        await raises(code, drain(), message)


async def test_stream_text_is_lazy(ws: str, local: LocalFileSystem) -> None:
    stream = local.stream_text(await local.resolve("missing"))  # nothing runs before iteration
    with pytest.raises(FsError):
        await stream.__anext__()


async def test_lists_files_and_directories_in_stable_name_order_with_resolved_child_targets(
        ws: str, local: LocalFileSystem) -> None:
    """listDir: lists files and directories in stable name order with resolved child targets"""
    put(f"{ws}/d/b.txt", "bb")
    put(f"{ws}/d/a.txt", "a")
    os.mkdir(f"{ws}/d/c")
    os.symlink(f"{ws}/d/a.txt", f"{ws}/d/e-link")
    os.symlink(f"{ws}/d", f"{ws}/dlink")
    entries = await local.list_dir(await local.resolve("dlink"))
    assert [(e.name, e.type) for e in entries] == [("a.txt", "file"), ("b.txt", "file"), ("c", "directory"),
                                                    ("e-link", "file")]
    assert [e.target.display_path for e in entries] == [f"{ws}/dlink/{e.name}" for e in entries]
    assert [e.target.key for e in entries] == [f"{ws}/d/a.txt", f"{ws}/d/b.txt", f"{ws}/d/c", f"{ws}/d/a.txt"]
    assert [e.size for e in entries] == [1, 2, None, 1]
    assert all(e.version is not None for e in entries)


async def test_list_dir_reports_a_missing_directory_as_fs_not_found(ws: str, local: LocalFileSystem) -> None:
    """listDir: reports a missing directory as FS_NOT_FOUND"""
    await raises("FS_NOT_FOUND", local.list_dir(await local.resolve("nope")), f'cannot list "{ws}/nope": not found')


async def test_list_dir_reports_a_file_target_as_fs_not_directory(ws: str, local: LocalFileSystem) -> None:
    """listDir: reports a file target as FS_NOT_DIRECTORY"""
    put(f"{ws}/f", "x")
    await raises("FS_NOT_DIRECTORY", local.list_dir(await local.resolve("f")), f'cannot list "{ws}/f": not a directory')


async def test_list_dir_honors_a_pre_aborted_signal(local: LocalFileSystem) -> None:
    """listDir: honors a pre-aborted signal"""
    await raises("FS_ABORTED", local.list_dir(await local.resolve("."), signal=AbortSignal.aborted_signal()),
                 "list aborted")


@pytest.mark.parametrize("profile", ["reference", "default"])
async def test_A6_list_dir_orders_names_by_code_point(ws: str, profile: str) -> None:
    """A6: code-point order of the names (deterministic), in both profiles"""
    names = ["b", "B", "a", "_x", "-x", ".x", "10", "9", "é", "e", "Z", "😀", "ß"]
    for name in names:
        put(f"{ws}/d/{name}", "")
    fs = LocalFileSystem(cwd=ws, profile=profile)
    entries = await fs.list_dir(await fs.resolve("d"))
    assert [e.name for e in entries] == ["-x", ".x", "10", "9", "B", "Z", "_x", "a", "b", "e", "ß", "é", "😀"]


# ==========================================================================================
# §7.3 writeText
# ==========================================================================================

async def test_create_if_absent_creates_a_new_file(ws: str, local: LocalFileSystem) -> None:
    """writeText: createIfAbsent creates a new file"""
    outcome = await local.write_text(await local.resolve("new.txt"), "hi\n", CreateIfAbsent())
    assert outcome.operation == "create" and get(f"{ws}/new.txt") == b"hi\n"


async def test_create_if_absent_rejects_an_existing_file_as_fs_not_observed(ws: str, local: LocalFileSystem) -> None:
    """writeText: createIfAbsent rejects an existing file as FS_NOT_OBSERVED"""
    put(f"{ws}/a.txt", "keep")
    await raises("FS_NOT_OBSERVED", local.write_text(await local.resolve("a.txt"), "x", CreateIfAbsent()),
                 f'cannot overwrite existing "{ws}/a.txt" without reading it first')
    assert get(f"{ws}/a.txt") == b"keep"


async def test_replace_if_version_replaces_when_the_version_matches(ws: str, local: LocalFileSystem) -> None:
    """writeText: replaceIfVersion replaces when the version matches"""
    put(f"{ws}/a.txt", "old")
    target = await local.resolve("a.txt")
    version = (await local.stat(target)).version  # type: ignore[union-attr]
    outcome = await local.write_text(target, "new", ReplaceIfVersion(version))
    assert outcome.operation == "update" and get(f"{ws}/a.txt") == b"new"


async def test_replace_if_version_rejects_a_stale_version(ws: str, local: LocalFileSystem) -> None:
    """writeText: replaceIfVersion rejects a stale version"""
    put(f"{ws}/a.txt", "old")
    target = await local.resolve("a.txt")
    version = (await local.stat(target)).version  # type: ignore[union-attr]
    rewrite_in_place(f"{ws}/a.txt", b"external change")
    await raises("FS_STALE_VERSION", local.write_text(target, "mine", ReplaceIfVersion(version)),
                 f'cannot write "{ws}/a.txt": file changed since it was read')
    assert get(f"{ws}/a.txt") == b"external change"


async def test_replace_if_version_rejects_a_deleted_target_without_recreating_it(ws: str, local: LocalFileSystem) -> None:
    """writeText: replaceIfVersion rejects a deleted target as stale, without recreating it"""
    put(f"{ws}/a.txt", "old")
    target = await local.resolve("a.txt")
    version = (await local.stat(target)).version  # type: ignore[union-attr]
    os.unlink(f"{ws}/a.txt")
    await raises("FS_STALE_VERSION", local.write_text(target, "mine", ReplaceIfVersion(version)),
                 f'cannot write "{ws}/a.txt": file no longer exists')
    assert not os.path.exists(f"{ws}/a.txt")


async def test_rejects_writing_onto_a_directory(ws: str, local: LocalFileSystem) -> None:
    """writeText: rejects writing onto a directory"""
    os.mkdir(f"{ws}/d")
    await raises("FS_NOT_REGULAR_FILE", local.write_text(await local.resolve("d"), "x", CreateIfAbsent()),
                 f'cannot write "{ws}/d": not a regular file')


async def test_unconditionally_creates_a_new_file_with_no_expectation(ws: str, local: LocalFileSystem) -> None:
    """writeText: unconditionally creates a new file with no expectation (bare provider)"""
    outcome = await local.write_text(await local.resolve("n.txt"), "n")
    assert outcome.operation == "create" and get(f"{ws}/n.txt") == b"n"


async def test_unconditionally_overwrites_an_existing_file_with_no_expectation(ws: str, local: LocalFileSystem) -> None:
    """writeText: unconditionally OVERWRITES an existing file with no expectation (bare provider)"""
    put(f"{ws}/a.txt", "old")
    outcome = await local.write_text(await local.resolve("a.txt"), "clobbered")
    assert outcome.operation == "update" and get(f"{ws}/a.txt") == b"clobbered"


async def test_rejects_writing_onto_a_directory_even_with_no_expectation(ws: str, local: LocalFileSystem) -> None:
    """writeText: rejects writing onto a directory even with no expectation"""
    os.mkdir(f"{ws}/d")
    await raises("FS_NOT_REGULAR_FILE", local.write_text(await local.resolve("d"), "x"))


async def test_a_create_reports_before_null_and_after_the_written_content(local: LocalFileSystem) -> None:
    """writeText: a create reports before:null and after = the written content (no prior file)"""
    outcome = await local.write_text(await local.resolve("c.txt"), "a\r\nb")
    assert (outcome.before, outcome.after) == (None, "a\nb")


async def test_an_overwrite_reports_before_old_and_after_new(ws: str, local: LocalFileSystem) -> None:
    """writeText: an overwrite reports before = the OLD content and after = the new content"""
    put(f"{ws}/a.txt", "old\n")
    outcome = await local.write_text(await local.resolve("a.txt"), "new\n")
    assert (outcome.before, outcome.after) == ("old\n", "new\n")


async def test_an_overwrite_returns_lf_normalized_before_and_after(ws: str, local: LocalFileSystem) -> None:
    """writeText: an overwrite returns LF-normalized before AND after (a CRLF rewrite is not every-line-changed)"""
    put(f"{ws}/a.txt", "a\r\nb\r\nc\r\n")
    outcome = await local.write_text(await local.resolve("a.txt"), "a\r\nB\r\nc\r\n")
    assert (outcome.before, outcome.after) == ("a\nb\nc\n", "a\nB\nc\n")
    assert get(f"{ws}/a.txt") == b"a\r\nB\r\nc\r\n"


async def test_an_overwrite_of_a_binary_prior_file_reports_before_null(ws: str, local: LocalFileSystem) -> None:
    """writeText: an overwrite of a BINARY prior file reports before:null (undiffable), still succeeds"""
    put(f"{ws}/a.bin", b"a" * 20_000 + b"\x00")  # a NUL anywhere, even past the read sample
    outcome = await local.write_text(await local.resolve("a.bin"), "text")
    assert (outcome.operation, outcome.before) == ("update", None) and get(f"{ws}/a.bin") == b"text"


async def test_an_overwrite_of_an_invalid_utf8_prior_file_reports_before_null(ws: str, local: LocalFileSystem) -> None:
    """writeText: an overwrite of an INVALID-UTF-8 (non-NUL) prior file reports before:null, still succeeds"""
    put(f"{ws}/a.txt", b"caf\xe9")
    outcome = await local.write_text(await local.resolve("a.txt"), "café")
    assert outcome.before is None and get(f"{ws}/a.txt") == "café".encode()


async def test_releases_per_target_mutation_locks_after_success_and_failure(ws: str, local: LocalFileSystem) -> None:
    """writeText: releases per-target mutation locks after success and failure"""
    put(f"{ws}/a.txt", "x")
    target = await local.resolve("a.txt")
    await local.write_text(target, "ok")
    assert len(local.locks) == 0
    with pytest.raises(FsError):
        await local.write_text(target, "no", CreateIfAbsent())
    assert len(local.locks) == 0


async def test_replace_if_version_returns_the_post_write_version(ws: str, local: LocalFileSystem) -> None:
    """writeText: replaceIfVersion returns the post-write version (matches a fresh stat)"""
    put(f"{ws}/a.txt", "x")
    target = await local.resolve("a.txt")
    before = (await local.stat(target)).version  # type: ignore[union-attr]
    outcome = await local.write_text(target, "y", ReplaceIfVersion(before))
    assert outcome.version != before
    assert outcome.version == (await local.stat(target)).version  # type: ignore[union-attr]


async def test_write_honors_a_pre_aborted_signal_without_creating_the_file(ws: str, local: LocalFileSystem) -> None:
    """writeText: honors a pre-aborted signal without creating the file"""
    aborted = AbortSignal.aborted_signal()
    await raises("FS_ABORTED", local.write_text(await local.resolve("new.txt"), "x", signal=aborted), "write aborted")
    assert os.listdir(ws) == [] and len(local.locks) == 0
    put(f"{ws}/a.txt", "keep")  # an overwrite first reads its diff basis: "read aborted" (§2.8)
    await raises("FS_ABORTED", local.write_text(await local.resolve("a.txt"), "x", signal=aborted), "read aborted")
    assert get(f"{ws}/a.txt") == b"keep" and len(local.locks) == 0
    # guards are evaluated before any abort check (§2.8)
    await raises("FS_NOT_OBSERVED", local.write_text(await local.resolve("a.txt"), "x", CreateIfAbsent(), signal=aborted))


async def test_two_concurrent_guarded_writes_one_updates_the_other_is_stale(ws: str, local: LocalFileSystem) -> None:
    """writeText: two concurrent guarded writes: one updates, the other is rejected as stale"""
    put(f"{ws}/a.txt", "base")
    target = await local.resolve("a.txt")
    version = (await local.stat(target)).version  # type: ignore[union-attr]
    outcomes: list[Any] = []

    async def write(content: str) -> None:
        try:
            outcomes.append(await local.write_text(target, content, ReplaceIfVersion(version)))
        except FsError as exc:
            outcomes.append(exc)

    async with anyio.create_task_group() as tg:
        tg.start_soon(write, "first")
        tg.start_soon(write, "second")
    errors = [o for o in outcomes if isinstance(o, FsError)]
    assert len(outcomes) == 2 and len(errors) == 1 and errors[0].code == "FS_STALE_VERSION"
    assert get(f"{ws}/a.txt") in (b"first", b"second") and len(local.locks) == 0


async def test_two_concurrent_create_if_absent_one_creates_the_other_is_not_observed(ws: str, local: LocalFileSystem) -> None:
    target = await local.resolve("new.txt")
    results: list[Any] = []

    async def create(content: str) -> None:
        try:
            results.append((await local.write_text(target, content, CreateIfAbsent())).operation)
        except FsError as exc:
            results.append(exc.code)

    async with anyio.create_task_group() as tg:
        tg.start_soon(create, "a")
        tg.start_soon(create, "b")
    assert sorted(results) == ["FS_NOT_OBSERVED", "create"]


# ==========================================================================================
# §7.3 editText
# ==========================================================================================

async def _version(local: LocalFileSystem, target: Target) -> Any:
    info = await local.stat(target)
    assert info is not None
    return info.version


def _edit(old: str, new: str, replace_all: bool = False) -> EditRequest:
    return EditRequest(old_string=old, new_string=new, replace_all=replace_all)


async def test_applies_a_literal_edit_at_the_matching_version(ws: str, local: LocalFileSystem) -> None:
    """editText: applies a literal edit at the matching version"""
    put(f"{ws}/a.txt", "hello world")
    target = await local.resolve("a.txt")
    await local.edit_text(target, _edit("world", "there"), EditIntent(await _version(local, target)))
    assert get(f"{ws}/a.txt") == b"hello there"


async def test_reports_before_after_lf_normalized(ws: str, local: LocalFileSystem) -> None:
    """editText: reports before/after content (the applied-hunk basis), LF-normalized"""
    put(f"{ws}/a.txt", "one\r\ntwo\r\n")
    target = await local.resolve("a.txt")
    outcome = await local.edit_text(target, _edit("two", "2"), EditIntent(await _version(local, target)))
    assert (outcome.before, outcome.after) == ("one\ntwo\n", "one\n2\n")
    assert get(f"{ws}/a.txt") == b"one\r\n2\r\n"


async def test_checks_the_stale_version_before_literal_matching(ws: str, local: LocalFileSystem) -> None:
    """editText: checks the stale version BEFORE literal matching"""
    put(f"{ws}/a.txt", "v1")
    target = await local.resolve("a.txt")
    version = await _version(local, target)
    rewrite_in_place(f"{ws}/a.txt", b"v2 changed")
    await raises("FS_STALE_VERSION", local.edit_text(target, _edit("no such needle", "x"), EditIntent(version)),
                 f'cannot edit "{ws}/a.txt": file changed since it was read')


async def test_unconditionally_edits_the_current_content_with_no_expectation(ws: str, local: LocalFileSystem) -> None:
    """editText: unconditionally edits the current content with no expectation (bare provider)"""
    put(f"{ws}/a.txt", "abc")
    await local.edit_text(await local.resolve("a.txt"), _edit("b", "B"))
    assert get(f"{ws}/a.txt") == b"aBc"


async def test_reports_a_missing_target_as_stale_even_with_no_expectation(ws: str, local: LocalFileSystem) -> None:
    """editText: reports a missing target as FS_STALE_VERSION even with no expectation (bare provider)"""
    await raises("FS_STALE_VERSION", local.edit_text(await local.resolve("missing.txt"), _edit("a", "b")),
                 f'cannot edit "{ws}/missing.txt": file changed since it was read')
    assert not os.path.exists(f"{ws}/missing.txt")


async def test_still_reports_literal_match_codes_with_no_expectation(ws: str, local: LocalFileSystem) -> None:
    """editText: still reports literal-match codes with no expectation (FS_EDIT_NOT_FOUND, unrelated to freshness)"""
    put(f"{ws}/a.txt", "abc")
    await raises("FS_EDIT_NOT_FOUND", local.edit_text(await local.resolve("a.txt"), _edit("zzz", "b")),
                 f'old_string was not found in "{ws}/a.txt"')


async def test_rejects_a_deleted_target_as_stale_before_matching(ws: str, local: LocalFileSystem) -> None:
    """editText: rejects a deleted target as stale (before matching)"""
    put(f"{ws}/a.txt", "abc")
    target = await local.resolve("a.txt")
    version = await _version(local, target)
    os.unlink(f"{ws}/a.txt")
    await raises("FS_STALE_VERSION", local.edit_text(target, _edit("a", "b"), EditIntent(version)))
    assert not os.path.exists(f"{ws}/a.txt")


async def test_rejects_a_non_regular_target(ws: str, local: LocalFileSystem) -> None:
    """editText: rejects a non-regular target (checked before the version guard)"""
    await raises("FS_NOT_REGULAR_FILE", local.edit_text(await local.resolve("."), _edit("a", "b"), EditIntent("bogus")),
                 f'cannot edit "{ws}": not a regular file')


async def test_rejects_zero_matches_and_ambiguous_matches_at_the_right_version(ws: str, local: LocalFileSystem) -> None:
    """editText: rejects zero matches and ambiguous matches at the right version"""
    put(f"{ws}/a.txt", "b b b")
    target = await local.resolve("a.txt")
    version = await _version(local, target)
    await raises("FS_EDIT_NOT_FOUND", local.edit_text(target, _edit("z", "y"), EditIntent(version)))
    await raises("FS_AMBIGUOUS_EDIT", local.edit_text(target, _edit("b", "y"), EditIntent(version)),
                 f'old_string matched 3 times in "{ws}/a.txt"; provide a more specific old_string or set replace_all to true')
    assert get(f"{ws}/a.txt") == b"b b b"


async def test_replaces_all_matches_with_replace_all(ws: str, local: LocalFileSystem) -> None:
    """editText: replaces all matches with replaceAll"""
    put(f"{ws}/a.txt", "a a a")
    target = await local.resolve("a.txt")
    await local.edit_text(target, _edit("a", "b", True), EditIntent(await _version(local, target)))
    assert get(f"{ws}/a.txt") == b"b b b"


async def test_rejects_invalid_utf8_without_rewriting_the_file(ws: str, local: LocalFileSystem) -> None:
    """editText: rejects invalid UTF-8 without rewriting the file"""
    put(f"{ws}/a.txt", b"ab\xffc")
    inode = os.stat(f"{ws}/a.txt").st_ino
    await raises("FS_NOT_TEXT", local.edit_text(await local.resolve("a.txt"), _edit("ab", "x")),
                 f'cannot edit "{ws}/a.txt": invalid UTF-8 text')
    assert get(f"{ws}/a.txt") == b"ab\xffc" and os.stat(f"{ws}/a.txt").st_ino == inode


async def _race(*calls: Callable[[], Any]) -> list[Any]:
    outcomes: list[Any] = []

    async def run(call: Callable[[], Any]) -> None:
        try:
            outcomes.append(await call())
        except FsError as exc:
            outcomes.append(exc)

    async with anyio.create_task_group() as tg:
        for call in calls:
            tg.start_soon(run, call)
    return outcomes


async def test_two_concurrent_edits_one_wins_the_other_is_stale(ws: str, local: LocalFileSystem) -> None:
    """editText: two concurrent edits: one wins, the other is rejected as stale"""
    put(f"{ws}/a.txt", "left right")
    target = await local.resolve("a.txt")
    intent = EditIntent(await _version(local, target))
    outcomes = await _race(lambda: local.edit_text(target, _edit("left", "L"), intent),
                           lambda: local.edit_text(target, _edit("right", "R"), intent))
    errors = [o for o in outcomes if isinstance(o, FsError)]
    assert len(errors) == 1 and errors[0].code == "FS_STALE_VERSION"
    assert get(f"{ws}/a.txt") in (b"L right", b"left R") and len(local.locks) == 0


async def test_edit_honors_a_pre_aborted_signal_without_rewriting_the_file(ws: str, local: LocalFileSystem) -> None:
    """editText: honors a pre-aborted signal without rewriting the file"""
    put(f"{ws}/a.txt", "abc")
    await raises("FS_ABORTED", local.edit_text(await local.resolve("a.txt"), _edit("zzz", "y"),
                                               signal=AbortSignal.aborted_signal()), "edit aborted")
    assert get(f"{ws}/a.txt") == b"abc" and len(local.locks) == 0


async def test_a_successful_edit_refreshes_the_version_so_a_follow_up_edit_proceeds(ws: str, local: LocalFileSystem) -> None:
    """editText: a successful edit refreshes the version so an immediate follow-up edit proceeds"""
    put(f"{ws}/a.txt", "one")
    target = await local.resolve("a.txt")
    first = await local.edit_text(target, _edit("one", "two"), EditIntent(await _version(local, target)))
    second = await local.edit_text(target, _edit("two", "three"), EditIntent(first.version))
    assert get(f"{ws}/a.txt") == b"three" and second.version == await _version(local, target)


async def test_concurrent_write_vs_edit_at_the_same_version_one_wins(ws: str, local: LocalFileSystem) -> None:
    """editText: concurrent write vs edit at the same version: one wins, the other is stale"""
    put(f"{ws}/a.txt", "base")
    target = await local.resolve("a.txt")
    version = await _version(local, target)
    outcomes = await _race(lambda: local.write_text(target, "written", ReplaceIfVersion(version)),
                           lambda: local.edit_text(target, _edit("base", "edited"), EditIntent(version)))
    errors = [o for o in outcomes if isinstance(o, FsError)]
    assert len(errors) == 1 and errors[0].code == "FS_STALE_VERSION"
    assert get(f"{ws}/a.txt") in (b"written", b"edited")


# ==========================================================================================
# §7.3 symlink targetKey identity; HMR
# ==========================================================================================

async def test_two_paths_share_one_version_and_write_the_real_target(ws: str, local: LocalFileSystem) -> None:
    """symlink targetKey identity: two paths to the same file via a symlink share one version and write the real target"""
    put(f"{ws}/real.txt", "value=1")
    os.symlink("real.txt", f"{ws}/alias.txt")
    real, alias = await local.resolve("real.txt"), await local.resolve("alias.txt")
    assert real.key == alias.key
    assert await _version(local, real) == await _version(local, alias)
    await local.edit_text(alias, _edit("1", "2"), EditIntent(await _version(local, real)))
    assert get(f"{ws}/real.txt") == b"value=2" and os.readlink(f"{ws}/alias.txt") == "real.txt"
    await local.write_text(alias, "value=3", ReplaceIfVersion(await _version(local, alias)))
    assert get(f"{ws}/real.txt") == b"value=3" and os.path.islink(f"{ws}/alias.txt")


async def test_a_stale_change_is_detected_across_both_paths(ws: str, local: LocalFileSystem) -> None:
    """symlink targetKey identity: a stale change is detected across both paths"""
    put(f"{ws}/real.txt", "v1")
    os.symlink("real.txt", f"{ws}/alias.txt")
    version = await _version(local, await local.resolve("real.txt"))
    rewrite_in_place(f"{ws}/real.txt", b"v2")
    await raises("FS_STALE_VERSION", local.edit_text(await local.resolve("alias.txt"), _edit("v", "w"), EditIntent(version)))


def test_disposing_the_fiber_withdraws_ctx_fs(ws: str) -> None:
    """HMR / disposal: disposing the fiber withdraws ctx.fs"""
    ctx = Context()
    scope = ctx.plugin(LocalFileSystem, cwd=ws)
    assert ctx.has("fs")
    scope.dispose()
    assert not ctx.has("fs")


# ==========================================================================================
# Deviations A2–A5 (both profiles)
# ==========================================================================================

@pytest.mark.parametrize("profile", ["reference", "default"])
async def test_A2_os_errors_are_coded(ws: str, profile: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A2: EACCES/EPERM → FS_PERMISSION_DENIED, other OS errors → FS_IO_ERROR with strerror"""
    fs = LocalFileSystem(cwd=ws, profile=profile)
    os.symlink("loop", f"{ws}/loop")
    await raises("FS_IO_ERROR", fs.resolve("loop/x.txt"),
                 f'cannot resolve "{ws}/loop/x.txt": Too many levels of symbolic links')
    await raises("FS_IO_ERROR", fs.resolve("n" * 300), f'cannot resolve "{ws}/{"n" * 300}": File name too long')
    real_open = os.open

    def denied(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if atomic.TEMP_NAME.fullmatch(os.fspath(path)) or (hasattr(os, "O_TMPFILE") and flags & os.O_TMPFILE == os.O_TMPFILE):
            raise PermissionError(errno.EACCES, "Permission denied", path)  # the temp file in an unwritable dir
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", denied)
    await raises("FS_PERMISSION_DENIED", fs.write_text(await fs.resolve("w.txt"), "x"),
                 f'cannot write "{ws}/w.txt": permission denied')
    put(f"{ws}/e.txt", "abc")
    await raises("FS_PERMISSION_DENIED", fs.edit_text(await fs.resolve("e.txt"), _edit("a", "b")),
                 f'cannot edit "{ws}/e.txt": permission denied')
    assert get(f"{ws}/e.txt") == b"abc" and not os.path.exists(f"{ws}/w.txt")
    monkeypatch.undo()

    def readonly(path: Any, *args: Any, **kwargs: Any) -> None:
        raise OSError(errno.EROFS, "Read-only file system", path)

    monkeypatch.setattr(os, "makedirs", readonly)
    await raises("FS_IO_ERROR", fs.write_text(await fs.resolve("new/deep.txt"), "x"),
                 f'cannot write "{ws}/new/deep.txt": Read-only file system')


@pytest.mark.parametrize("profile", ["reference", "default"])
async def test_A2_double_fault_cleanup_errors_use_fs_io_error(ws: str, profile: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A2: a failed write whose temp-file cleanup also fails is FS_IO_ERROR (not FS_NOT_FOUND)"""
    fs = LocalFileSystem(cwd=ws, profile=profile)

    def full(src: Any, dst: Any, **kwargs: Any) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    def stuck(path: Any, *args: Any, **kwargs: Any) -> None:
        raise OSError(errno.EBUSY, "Device or resource busy")

    monkeypatch.setattr(os, "replace", full)  # the final rename, whichever call makes it
    monkeypatch.setattr(os, "rename", full)
    monkeypatch.setattr(os, "unlink", stuck)
    err = await raises("FS_IO_ERROR", fs.write_text(await fs.resolve("a.txt"), "x"))
    assert str(err) == (
        f'write failed (cannot write "{ws}/a.txt": No space left on device) '
        "and temp cleanup failed ([Errno 16] Device or resource busy)"
    )
    assert not os.path.exists(f"{ws}/a.txt")


@pytest.mark.parametrize("profile", ["reference", "default"])
async def test_A3_parent_directory_is_fsynced_after_the_rename(ws: str, profile: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A3: after ``rename`` the parent directory is fsynced, so a reported write survives a crash"""
    fs = LocalFileSystem(cwd=ws, profile=profile)
    events: list[tuple[str, Any]] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        st = os.fstat(fd)
        events.append(("fsync-dir" if stat_mod.S_ISDIR(st.st_mode) else "fsync-file", (st.st_dev, st.st_ino)))
        real_fsync(fd)

    def renamer(real: Callable[..., None]) -> Callable[..., None]:
        def rename(src: Any, dst: Any, **kwargs: Any) -> None:
            real(src, dst, **kwargs)
            events.append(("replace", str(dst)))
        return rename

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", renamer(real_replace))
    monkeypatch.setattr(os, "rename", renamer(os.rename))
    put(f"{ws}/sub/a.txt", "abc")
    parent = os.stat(f"{ws}/sub")
    for operation in (fs.write_text(await fs.resolve("sub/new.txt"), "n"),
                      fs.edit_text(await fs.resolve("sub/a.txt"), _edit("b", "B"))):
        events.clear()
        await operation
        kinds = [kind for kind, _ in events]
        assert kinds.index("fsync-file") < kinds.index("replace") < len(kinds) - 1
        after = events[kinds.index("replace") + 1:]
        assert ("fsync-dir", (parent.st_dev, parent.st_ino)) in after


_COUNTER = textwrap.dedent(
    """
    import re, sys
    import anyio
    import dsh_fs

    ws, rounds, profile = sys.argv[1], int(sys.argv[2]), sys.argv[3]

    async def main():
        ctx = dsh_fs.create_context(cwd=ws, profile=profile)
        session = dsh_fs.Session(ws)
        done = stale = 0
        while done < rounds:
            read = await ctx.tools.execute("read", {"file_path": "counter.txt"}, session=session)
            assert not read.is_error, read.text
            value = int(re.search(r"\\n1: n=(\\d+)\\n", read.text).group(1))
            edit = await ctx.tools.execute(
                "edit",
                {"file_path": "counter.txt", "old_string": f"n={value}", "new_string": f"n={value + 1}"},
                session=session,
            )
            if edit.is_error:
                assert edit.error is not None and edit.error.code == "FS_STALE_VERSION", edit.text
                stale += 1
            else:
                done += 1
        print(done, stale)

    anyio.run(main)
    """
)


@pytest.mark.parametrize("profile", ["reference", "default"])
@pytest.mark.timeout(180)
def test_A4_two_processes_editing_one_file_lose_no_update(ws: str, tmp_path: Any, profile: str) -> None:
    """A4: mutations hold an OS advisory lock; two processes with the version guard lose no update"""
    put(f"{ws}/counter.txt", "n=0\n")
    script = os.path.join(str(tmp_path), "counter.py")
    with open(script, "w", encoding="utf-8") as handle:
        handle.write(_COUNTER)
    rounds = 40
    procs = [subprocess.Popen([sys.executable, script, ws, str(rounds), profile], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outputs = []
    try:
        for proc in procs:
            out, err = proc.communicate(timeout=150)
            assert proc.returncode == 0, err[-2000:]
            outputs.append(out.split())
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
    assert [int(done) for done, _ in outputs] == [rounds, rounds]
    assert get(f"{ws}/counter.txt") == f"n={2 * rounds}\n".encode()  # every success landed
    assert os.listdir(ws) == ["counter.txt"]


@pytest.mark.parametrize("profile", ["reference", "default"])
async def test_A5_same_size_rewrite_within_one_tick_is_stale(ws: str, make_ctx: Callable[..., Any], profile: str) -> None:
    """A5: read, then an immediate same-size in-place rewrite with the mtime restored → refused stale.

    Each tool gets its own freshly read file: in the default profile a refusal that shows the
    whole change (D30) counts as having seen it, so a second call on the same file may go on."""
    ctx = make_ctx(profile=profile)
    session = __import__("dsh_fs").Session(ws)
    for attempt in range(5):
        for tool, args in (("edit", {"old_string": "value=1", "new_string": "value=3"}),
                           ("write", {"content": "value=4\n"})):
            name = f"racy{attempt}-{tool}.txt"
            put(f"{ws}/{name}", "value=1\n")
            read = await ctx.tools.execute("read", {"file_path": name}, session=session)
            assert not read.is_error
            rewrite_in_place(f"{ws}/{name}", b"value=2\n", keep_mtime=True)
            result = await ctx.tools.execute(tool, {"file_path": name, **args}, session=session)
            assert result.is_error and result.error is not None and result.error.code == "FS_STALE_VERSION", result.text
            assert get(f"{ws}/{name}") == b"value=2\n"


def test_A5_a_racy_token_detects_a_change_the_stat_fields_cannot_see(ws: str) -> None:
    """A5: identical stat fields, different content → not the same version (the digest decides)"""
    path = put(f"{ws}/a.txt", "AAAA")
    token = versions.mint(os.stat(path), path)
    assert token.startswith(versions.fields_of(os.stat(path)))
    rewrite_in_place(path, b"BBBB", keep_mtime=True)
    now = os.stat(path)
    forged = f"{versions.fields_of(now)}:{versions.digest_bytes(b'AAAA')}"  # as if ctime had not moved
    assert not versions.same_version(forged, now, path)
    assert versions.same_version(f"{versions.fields_of(now)}:{versions.digest_bytes(b'BBBB')}", now, path)
    assert versions.same_version(versions.fields_of(now), now, path)  # a token without digest: fields only
