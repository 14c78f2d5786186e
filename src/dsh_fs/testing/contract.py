"""The provider contract: pytest tests every ``FileSystem`` provider must pass.

Use it fsspec-style: subclass ``ProviderContract`` and supply a ``workspace`` fixture that
yields a fresh, empty ``dsh_fs.testing.Workspace`` (ready-made ones: ``LocalWorkspace``,
``MemoryWorkspace``, ``S3Workspace``)::

    class TestMine(ProviderContract):
        @pytest.fixture
        async def workspace(self, tmp_path):
            ws = MyWorkspace(tmp_path)
            yield ws
            await ws.aclose()

Covers the seam as REFERENCE-SPEC §1.3, §2 and §7.3 describe it, independent of the
storage: resolve (cwd, absolute paths, spellings, blank, abort), stat/lstat, read_text and
stream_text (text rules, exact error messages with and without DEVIATIONS D6), the optional
read_window (where a provider implements it: exactly what windowing read_text/stream_text
gives, errors included, streamed validation aligned to its own stream_text), list_dir, the
search capabilities (``walk`` with sizes and modification times, ``stream_bytes`` exact and
binary-safe, ``host_path`` naming the same bytes where a provider has one), ``read_bytes``
(whole and bounded, the reference's cap texts),
write_text and edit_text (intents, exact messages, diff basis, D1/D2/D4 per profile, abort
ordering; D15 overlapping matches, D16 the size limit), delete and rename (guards, exact
messages, bytes moved unchanged, a destination never replaced, parents created, abort
ordering), ``is_current``, and races between two provider instances over one workspace (as two
processes: one wins, the other is stale, nothing is lost). Every mutation is checked by reading the
storage back through the workspace, never by trusting the outcome alone.

Not covered: symlinks, modes, owners, FIFOs, the local provider's realpath identity and
cross-process lock files (``tests/integration/test_local_provider.py``,
``tests/integration/test_inline_mutations.py``, ``tests/robustness/test_many_processes.py``), and
anything above the seam (tools, policy).
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

import anyio
import pytest

from ..core.signal import AbortSignal
from ..fs.errors import FsError
from ..fs.filesystem import FileSystem
from ..fs.types import CreateIfAbsent, DeleteIntent, EditIntent, EditRequest, RenameIntent, ReplaceIfVersion, Version
from ..fs.window import ReadWindow
from ..tool_fs.read_render import build_window
from .workspaces import Workspace

__all__ = ("ProviderContract",)

BOM = b"\xef\xbb\xbf"


async def _fails(awaitable: Awaitable[Any], code: str, message: str | None = None) -> FsError:
    with pytest.raises(FsError) as caught:
        await awaitable
    assert caught.value.code == code, f"{caught.value.code}: {caught.value}"
    if message is not None:
        assert str(caught.value) == message
    return caught.value


async def _drain(fs: FileSystem, target: Any, signal: AbortSignal | None = None) -> str:
    return "".join([chunk async for chunk in fs.stream_text(target, signal=signal)])


async def _outcome(awaitable: Awaitable[Any]) -> tuple[str, Any]:
    """``("ok", result)`` or ``(code, message)``: what a read gave, comparable across paths."""
    try:
        return "ok", await awaitable
    except FsError as err:
        return err.code, str(err)


async def _windowed(fs: FileSystem, target: Any, window: ReadWindow, streamed: bool) -> Any:
    """What the read tool computes without ``read_window``: the window over ``read_text``
    (whole) or over ``stream_text``, abandoned once the window stops (streamed)."""
    chunks = fs.stream_text(target) if streamed else [await fs.read_text(target)]
    return await build_window(chunks, window, target.display_path)


async def _race(calls: dict[str, Awaitable[Any]]) -> dict[str, Any]:
    """Run ``calls`` concurrently: name → its outcome, or the ``FsError`` it raised."""
    results: dict[str, Any] = {}

    async def attempt(name: str, call: Awaitable[Any]) -> None:
        try:
            results[name] = await call
        except FsError as err:
            results[name] = err

    async with anyio.create_task_group() as tg:
        for name, call in calls.items():
            tg.start_soon(attempt, name, call)
    return results


def _edit(old: str, new: str, replace_all: bool = False) -> EditRequest:
    return EditRequest(old_string=old, new_string=new, replace_all=replace_all)


class ProviderContract:
    """Mixin of contract tests; requires a ``workspace`` fixture yielding an empty ``Workspace``."""

    pytestmark = [pytest.mark.anyio]

    @pytest.fixture
    def anyio_backend(self) -> str:
        """asyncio: the S3 client library runs on asyncio only."""
        return "asyncio"

    # -- search capabilities (walk, stream_bytes, host_path) -----------------------------------
    async def test_walk_reports_every_file_and_directory_once(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        for rel, data in {"a.txt": b"a", "d/b.txt": b"bb", "d/e/c.bin": b"\x00\xff\xfe", ".hidden/h": b""}.items():
            await workspace.put(rel, data)
        await workspace.mkdir("empty")
        root = await fs.resolve(workspace.root)
        entries = [entry async for entry in fs.walk(root)]
        shape = sorted((e.rel, e.type, e.size) for e in entries)
        assert shape == [(".hidden", "directory", None), (".hidden/h", "file", 0), ("a.txt", "file", 1),
                         ("d", "directory", None), ("d/b.txt", "file", 2), ("d/e", "directory", None),
                         ("d/e/c.bin", "file", 3), ("empty", "directory", None)]
        for entry in entries:
            assert entry.target.display_path == workspace.path(entry.rel)
            assert entry.target == await fs.resolve(entry.rel)
            if entry.type == "file":
                assert entry.mtime_ns is not None and entry.mtime_ns > 1_000_000_000 * 1_000_000_000
        seen = [e.rel for e in entries]
        assert all(seen.index(e.rel.rsplit("/", 1)[0]) < seen.index(e.rel) for e in entries if "/" in e.rel)
        below = sorted(e.rel for e in [entry async for entry in fs.walk(await fs.resolve("d"))])
        assert below == ["b.txt", "e", "e/c.bin"]

    async def test_walk_refuses_files_missing_paths_and_abort(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("a.txt", b"a")
        file, missing = await fs.resolve("a.txt"), await fs.resolve("nope")
        with pytest.raises(FsError) as caught:
            [e async for e in fs.walk(file)]
        assert (caught.value.code, str(caught.value)) == ("FS_NOT_DIRECTORY", f'cannot list "{file.display_path}": not a directory')
        with pytest.raises(FsError) as caught:
            [e async for e in fs.walk(missing)]
        assert (caught.value.code, str(caught.value)) == ("FS_NOT_FOUND", f'cannot list "{missing.display_path}": not found')
        with pytest.raises(FsError) as caught:
            [e async for e in fs.walk(await fs.resolve(workspace.root), signal=AbortSignal.aborted_signal())]
        assert (caught.value.code, str(caught.value)) == ("FS_ABORTED", "list aborted")

    async def test_walk_sees_later_files_as_newer(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("old.txt", b"o")
        await anyio.sleep(1.1)  # S3's LastModified has whole seconds
        await workspace.put("new.txt", b"n")
        times = {e.rel: e.mtime_ns async for e in fs.walk(await fs.resolve(workspace.root))}
        assert times["new.txt"] > times["old.txt"]

    async def test_stream_bytes_is_exact_and_binary_safe(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        data = BOM + b"caf\xe9\x00\r\n" + bytes(range(256)) * 700
        await workspace.put("blob.bin", data)
        target = await fs.resolve("blob.bin")
        assert b"".join([chunk async for chunk in fs.stream_bytes(target)]) == data
        host = fs.host_path(target)
        if host is not None:  # a provider with host paths names these very bytes
            with open(host, "rb") as handle:
                assert handle.read() == data
        await workspace.mkdir("dir")
        for rel, code in (("nope", "FS_NOT_FOUND"), ("dir", "FS_NOT_REGULAR_FILE")):
            with pytest.raises(FsError) as caught:
                [c async for c in fs.stream_bytes(await fs.resolve(rel))]
            assert caught.value.code == code
        with pytest.raises(FsError) as caught:
            [c async for c in fs.stream_bytes(target, signal=AbortSignal.aborted_signal())]
        assert (caught.value.code, str(caught.value)) == ("FS_ABORTED", "read aborted")

    async def test_read_bytes_is_whole_and_bounded(self, workspace: Workspace) -> None:
        """``read_bytes`` (``read_image``'s raw read): the exact bytes up to the cap; over it, the
        reference's texts — on the caller's stat size before any read, else on the content."""
        fs = await workspace.provider()
        data = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 300
        await workspace.put("img.png", data)
        await workspace.put("empty.png", b"")
        target = await fs.resolve("img.png")
        display = target.display_path
        assert await fs.read_bytes(target, max_bytes=len(data)) == data
        assert await fs.read_bytes(target, max_bytes=len(data), size=len(data)) == data
        assert await fs.read_bytes(await fs.resolve("empty.png"), max_bytes=10) == b""
        with pytest.raises(FsError) as caught:
            await fs.read_bytes(target, max_bytes=100, size=len(data))
        assert str(caught.value) == f'cannot read "{display}": {len(data)} bytes exceeds the 100-byte limit'
        with pytest.raises(FsError) as caught:  # a stale (or no) size: the content decides
            await fs.read_bytes(target, max_bytes=100, size=50)
        assert str(caught.value) == f'cannot read "{display}": content exceeds the 100-byte limit'
        await workspace.mkdir("dir.png")
        for rel, code in (("nope.png", "FS_NOT_FOUND"), ("dir.png", "FS_NOT_REGULAR_FILE")):
            with pytest.raises(FsError) as caught:
                await fs.read_bytes(await fs.resolve(rel), max_bytes=100)
            assert caught.value.code == code
        with pytest.raises(FsError) as caught:
            await fs.read_bytes(target, max_bytes=len(data), signal=AbortSignal.aborted_signal())
        assert (caught.value.code, str(caught.value)) == ("FS_ABORTED", "read aborted")

    # -- resolve ---------------------------------------------------------------------------
    async def test_resolve_relative_against_cwd_else_default(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("sub/a.txt", b"a\n")
        via_cwd = await fs.resolve("a.txt", cwd=workspace.path("sub"))
        via_default = await fs.resolve("sub/a.txt")
        assert via_cwd.display_path == via_default.display_path == workspace.path("sub/a.txt")
        assert via_cwd.key == via_default.key
        assert await fs.read_text(via_cwd) == "a\n"

    async def test_resolve_absolute_ignores_cwd(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("a.txt", b"top\n")
        await workspace.mkdir("sub")
        target = await fs.resolve(workspace.path("a.txt"), cwd=workspace.path("sub"))
        assert target.display_path == workspace.path("a.txt")
        assert await fs.read_text(target) == "top\n"

    async def test_resolve_spellings_share_one_key(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("a.txt", b"x")
        await workspace.mkdir("sub")
        targets = [await fs.resolve(p) for p in ("a.txt", "./a.txt", "sub/../a.txt", "sub//..//a.txt/", workspace.path("a.txt"))]
        assert {t.key for t in targets} == {targets[0].key}
        assert {t.display_path for t in targets} == {workspace.path("a.txt")}

    async def test_resolve_key_is_stable_across_create(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        before = await fs.resolve("new/deeper/x.txt")
        await fs.write_text(before, "x", CreateIfAbsent())
        after = await fs.resolve("new/deeper/x.txt")
        assert after == before

    @pytest.mark.parametrize("blank", ["", " ", "\t\n", "\u00a0"])
    async def test_resolve_rejects_blank_paths(self, workspace: Workspace, blank: str) -> None:
        fs = await workspace.provider()
        await _fails(fs.resolve(blank), "FS_NOT_FOUND", "file_path must be a non-empty string")

    async def test_resolve_keeps_surrounding_spaces(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put(" a.txt", b"spaced")
        target = await fs.resolve(" a.txt")
        assert target.display_path == workspace.path(" a.txt")
        assert await fs.read_text(target) == "spaced"

    async def test_resolve_honors_a_pre_aborted_signal(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await _fails(fs.resolve("a.txt", signal=AbortSignal.aborted_signal()), "FS_ABORTED", "resolve aborted")

    # -- stat / lstat ----------------------------------------------------------------------
    async def test_stat_file_directory_and_absent(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("dir/f.txt", "héllo".encode())
        info = await fs.stat(await fs.resolve("dir/f.txt"))
        assert info is not None and info.type == "file" and info.size == 6 and isinstance(info.version, str)
        directory = await fs.stat(await fs.resolve("dir"))
        assert directory is not None and directory.type == "directory"
        root = await fs.stat(await fs.resolve("."))
        assert root is not None and root.type == "directory"
        assert await fs.stat(await fs.resolve("missing.txt")) is None
        assert await fs.stat(await fs.resolve("dir/missing/deeper.txt")) is None

    async def test_stat_version_is_stable_until_a_change(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("a.txt", b"one\n")
        target = await fs.resolve("a.txt")
        first = await fs.stat(target)
        again = await fs.stat(target)
        assert first is not None and again is not None and first.version == again.version
        await workspace.put("a.txt", b"two\n")  # same size, other bytes
        changed = await fs.stat(target)
        assert changed is not None and changed.version != first.version

    async def test_stat_sees_an_identical_rewrite_where_versions_are_not_content_hashes(self, workspace: Workspace) -> None:
        if not workspace.identical_rewrite_changes_version:
            pytest.skip(f"{workspace.name}: the version is a content hash (same bytes, same version)")
        fs = await workspace.provider()
        await workspace.put("a.txt", b"same\n")
        target = await fs.resolve("a.txt")
        first = await fs.stat(target)
        await workspace.put("a.txt", b"same\n")
        second = await fs.stat(target)
        assert first is not None and second is not None and first.version != second.version

    async def test_stat_honors_a_pre_aborted_signal(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        target = await fs.resolve("a.txt")
        await _fails(fs.stat(target, signal=AbortSignal.aborted_signal()), "FS_ABORTED", "stat aborted")

    async def test_lstat_is_path_shaped(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("sub/a.txt", b"abc")
        info = await fs.lstat("a.txt", cwd=workspace.path("sub"))
        assert info is not None and info.type == "file" and info.size == 3
        folder = await fs.lstat("sub")
        assert folder is not None and folder.type == "directory"
        assert await fs.lstat("nope.txt") is None
        await _fails(fs.lstat("  "), "FS_NOT_FOUND", "file_path must be a non-empty string")
        await _fails(fs.lstat("a.txt", signal=AbortSignal.aborted_signal()), "FS_ABORTED", "lstat aborted")

    # -- read_text / stream_text -----------------------------------------------------------
    async def test_read_text_is_exact_with_the_bom_stripped(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("a.txt", BOM + "crlf\r\nlone\rcr 😀\n".encode())
        target = await fs.resolve("a.txt")
        assert await fs.read_text(target) == "crlf\r\nlone\rcr 😀\n"
        assert await _drain(fs, target) == "crlf\r\nlone\rcr 😀\n"

    async def test_read_text_of_an_empty_file(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("empty.txt", b"")
        target = await fs.resolve("empty.txt")
        assert await fs.read_text(target) == ""
        assert await _drain(fs, target) == ""

    async def test_read_rejects_missing_and_directories(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("dir/x", b"x")
        missing = await fs.resolve("missing.txt")
        folder = await fs.resolve("dir")
        root = await fs.resolve(".")
        for read in (fs.read_text, lambda t: _drain(fs, t)):
            await _fails(read(missing), "FS_NOT_FOUND", f'cannot read "{missing.display_path}": not found')
            await _fails(read(folder), "FS_NOT_REGULAR_FILE", f'cannot read "{folder.display_path}": not a regular file')
            await _fails(read(root), "FS_NOT_REGULAR_FILE", f'cannot read "{root.display_path}": not a regular file')

    @pytest.mark.parametrize(
        ("profile", "raw", "reason"),
        [
            ("default", b"h\x00i\n", "binary file (NUL byte at offset 1, line 1)"),
            ("reference", b"h\x00i\n", "binary file"),
            ("default", b"ok\nh\xffi\n", "invalid UTF-8 text (byte 0xFF at offset 4, line 2)"),
            ("reference", b"ok\nh\xffi\n", "invalid UTF-8 text"),
            ("default", b"\xff\xfeh\x00", "binary file (UTF-16LE byte-order mark; only UTF-8 is supported)"),
            ("default", b"end\xe2\x82", "invalid UTF-8 text (byte 0xE2 at offset 3, line 1; the file ends inside a multi-byte character)"),
        ],
    )
    async def test_read_rejects_non_text_with_exact_messages(
        self, workspace: Workspace, profile: str, raw: bytes, reason: str
    ) -> None:
        fs = await workspace.provider(profile=profile)
        await workspace.put("bad.bin", raw)
        target = await fs.resolve("bad.bin")
        expected = f'cannot read "{target.display_path}": {reason}'
        await _fails(fs.read_text(target), "FS_NOT_TEXT", expected)
        await _fails(_drain(fs, target), "FS_NOT_TEXT", expected)

    async def test_read_samples_only_the_first_8192_bytes_for_nul(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("late.txt", b"a" * 8192 + b"\x00z")
        target = await fs.resolve("late.txt")
        text = await fs.read_text(target)
        assert text.endswith("\x00z") and len(text) == 8194
        assert await _drain(fs, target) == text

    async def test_stream_text_equals_read_text_on_a_multi_chunk_file(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        raw = b"".join(f"{i:05d} h\xc3\xa9llo w\xc3\xb6rld \xf0\x9f\x98\x80\r\n".encode("latin-1") for i in range(12_000))
        await workspace.put("big.txt", BOM + raw)
        target = await fs.resolve("big.txt")
        chunks = [chunk async for chunk in fs.stream_text(target)]
        assert "".join(chunks) == await fs.read_text(target) == raw.decode("utf-8")

    async def test_stream_text_is_lazy_and_honors_abort(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        stream = fs.stream_text(await fs.resolve("missing.txt"))  # nothing runs yet
        with pytest.raises(FsError):
            await stream.__anext__()
        await workspace.put("a.txt", b"abc")
        target = await fs.resolve("a.txt")
        await _fails(_drain(fs, target, AbortSignal.aborted_signal()), "FS_ABORTED", "read aborted")
        await _fails(fs.read_text(target, signal=AbortSignal.aborted_signal()), "FS_ABORTED", "read aborted")

    # -- read_window (optional: ``None`` means the caller windows the text primitives) ----------
    @pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
    async def test_read_window_equals_windowing_the_text(self, workspace: Workspace, streamed: bool) -> None:
        """``read_window``, where a provider implements it, gives exactly the result and the
        errors of ``WindowBuilder`` over ``read_text`` (whole) or ``stream_text`` (streamed)."""
        fs = await workspace.provider()
        files = {
            "lines.txt": b"one\ntwo\r\nthree\rstill three\n\nfive \xf0\x9f\x98\x80\n",
            "bom.txt": BOM + b"first\nsecond",
            "long.txt": b"short\n" + "\u00e9".encode() * 300 + b"\n" + b"y" * 5000 + b"\r\nend\n",
            "empty.txt": b"",
            "newline.txt": b"\n",
            "nul.bin": b"text\n\x00more\n",
            "invalid.txt": b"ok\n" * 50 + b"bad \xff byte\n",
            "lone_cr.txt": b"a\rb\r" + b"c" * 40 + b"\r\n",
        }
        windows = [
            ReadWindow(),
            ReadWindow(offset=2, limit=2),
            ReadWindow(offset=3),
            ReadWindow(offset=40),
            ReadWindow(max_line_length=4),
            ReadWindow(max_bytes=12),
            ReadWindow(max_bytes=12, always_progress=True, exact_truncation=True),
            ReadWindow(offset=2, max_line_length=40, max_bytes=64, always_progress=True),
            ReadWindow(max_line_length=3, exact_truncation=True),
        ]
        for name, raw in files.items():
            await workspace.put(name, raw)
        for name in files:
            target = await fs.resolve(name)
            info = await fs.stat(target)
            assert info is not None
            for window in windows:
                got = await _outcome(fs.read_window(target, window, info=info, streamed=streamed))
                if got == ("ok", None):
                    continue  # the provider leaves windowing to the caller
                assert got == await _outcome(_windowed(fs, target, window, streamed)), (name, window)

    async def test_read_window_streamed_validates_only_what_stream_text_decoded(self, workspace: Workspace) -> None:
        """A streamed read stopped by the byte cap reports only the errors of the chunks
        ``stream_text`` decoded before the window filled (REFERENCE-SPEC §4.6.3), so a
        provider's windowed read must validate exactly its own stream's chunks."""
        fs = await workspace.provider()
        line = b"x" * 99 + b"\n"
        for name, at in (("early.txt", 40_000), ("middle.txt", 1_500_000), ("late.txt", 2_900_000)):
            raw = bytearray(line * 30_000)  # 3 MB: several chunks of any provider's stream
            raw[at] = 0xFF
            await workspace.put(name, bytes(raw))
            target = await fs.resolve(name)
            info = await fs.stat(target)
            assert info is not None
            for window in (ReadWindow(max_bytes=1000), ReadWindow(limit=5), ReadWindow(offset=29_990)):
                for streamed in (True, False):
                    got = await _outcome(fs.read_window(target, window, info=info, streamed=streamed))
                    if got == ("ok", None):
                        pytest.skip(f"{workspace.name}: read_window leaves windowing to the caller")
                    assert got == await _outcome(_windowed(fs, target, window, streamed)), (name, window, streamed)

    async def test_read_window_honors_a_pre_aborted_signal(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("a.txt", b"a\nb\n")
        target = await fs.resolve("a.txt")
        info = await fs.stat(target)
        assert info is not None
        try:
            got = await fs.read_window(target, ReadWindow(), info=info, signal=AbortSignal.aborted_signal())
        except FsError as err:
            assert (err.code, str(err)) == ("FS_ABORTED", "read aborted")
        else:
            assert got is None, "an aborted windowed read must fail as read_text does"

    # -- list_dir --------------------------------------------------------------------------
    async def test_list_dir_children_in_code_point_order(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        for rel in ("d/b.txt", "d/a.md", "d/Z.txt", "d/sub/x.txt", "d/sub/y/z.txt", "other.txt"):
            await workspace.put(rel, rel.encode())
        await workspace.mkdir("d/empty")
        folder = await fs.resolve("d")
        entries = await fs.list_dir(folder)
        assert [(e.name, e.type) for e in entries] == [
            ("Z.txt", "file"), ("a.md", "file"), ("b.txt", "file"), ("empty", "directory"), ("sub", "directory"),
        ]
        for entry in entries:
            child = await fs.resolve(entry.name, cwd=folder.display_path)
            assert entry.target == child
            assert entry.target.display_path == workspace.path("d/" + entry.name)
            info = await fs.stat(child)
            assert info is not None
            if entry.type == "file":
                # versions are opaque: a listing never opens files, so a provider whose stat
                # digests recently changed files (local, A5) may mint a different token here
                assert entry.size == len(("d/" + entry.name).encode()) and isinstance(entry.version, str)
                assert set(entry.as_dict()) == {"name", "type", "target", "version", "size"}
            else:
                assert entry.size is None and "size" not in entry.as_dict()

    async def test_list_dir_of_the_root(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        assert await fs.list_dir(await fs.resolve(".")) == []
        await workspace.put("x/y.txt", b"1")
        await workspace.put("a.txt", b"2")
        assert [(e.name, e.type) for e in await fs.list_dir(await fs.resolve("."))] == [("a.txt", "file"), ("x", "directory")]

    async def test_list_dir_rejects_missing_files_and_abort(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("f.txt", b"x")
        missing = await fs.resolve("nope")
        file = await fs.resolve("f.txt")
        await _fails(fs.list_dir(missing), "FS_NOT_FOUND", f'cannot list "{missing.display_path}": not found')
        await _fails(fs.list_dir(file), "FS_NOT_DIRECTORY", f'cannot list "{file.display_path}": not a directory')
        root = await fs.resolve(".")
        await _fails(fs.list_dir(root, signal=AbortSignal.aborted_signal()), "FS_ABORTED", "list aborted")

    # -- write_text ------------------------------------------------------------------------
    async def test_create_if_absent_creates(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        target = await fs.resolve("new.txt")
        outcome = await fs.write_text(target, "line one\r\nline two\n", CreateIfAbsent())
        assert outcome.operation == "create" and outcome.before is None
        assert outcome.after == "line one\nline two\n"
        assert await workspace.get("new.txt") == b"line one\r\nline two\n"
        info = await fs.stat(target)
        assert info is not None and info.version == outcome.version

    async def test_create_if_absent_refuses_an_existing_file(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("a.txt", b"keep")
        target = await fs.resolve("a.txt")
        await _fails(
            fs.write_text(target, "clobber", CreateIfAbsent()),
            "FS_NOT_OBSERVED",
            f'cannot overwrite existing "{target.display_path}" without reading it first',
        )
        assert await workspace.get("a.txt") == b"keep"

    async def test_replace_if_version_replaces_at_the_version(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("a.txt", b"old\n")
        target = await fs.resolve("a.txt")
        seen = await fs.stat(target)
        assert seen is not None
        outcome = await fs.write_text(target, "new\n", ReplaceIfVersion(seen.version))
        assert (outcome.operation, outcome.before, outcome.after) == ("update", "old\n", "new\n")
        assert await workspace.get("a.txt") == b"new\n"
        now = await fs.stat(target)
        assert now is not None and now.version == outcome.version != seen.version

    async def test_replace_if_version_refuses_a_changed_file(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("a.txt", b"old\n")
        target = await fs.resolve("a.txt")
        seen = await fs.stat(target)
        assert seen is not None
        await workspace.put("a.txt", b"theirs\n")
        await _fails(
            fs.write_text(target, "mine\n", ReplaceIfVersion(seen.version)),
            "FS_STALE_VERSION",
            f'cannot write "{target.display_path}": file changed since it was read',
        )
        assert await workspace.get("a.txt") == b"theirs\n"

    async def test_replace_if_version_never_recreates_a_deleted_file(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("a.txt", b"old\n")
        target = await fs.resolve("a.txt")
        seen = await fs.stat(target)
        assert seen is not None
        await workspace.delete("a.txt")
        await _fails(
            fs.write_text(target, "mine\n", ReplaceIfVersion(seen.version)),
            "FS_STALE_VERSION",
            f'cannot write "{target.display_path}": file no longer exists',
        )
        assert await workspace.get("a.txt") is None

    async def test_write_refuses_directories_with_or_without_a_guard(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("dir/inner.txt", b"i")
        await workspace.mkdir("empty")
        for rel in ("dir", "empty", "."):
            target = await fs.resolve(rel)
            info = await fs.stat(target)
            assert info is not None
            message = f'cannot write "{target.display_path}": not a regular file'
            for intent in (None, CreateIfAbsent(), ReplaceIfVersion(info.version)):
                await _fails(fs.write_text(target, "x", intent), "FS_NOT_REGULAR_FILE", message)
        assert await workspace.files() == {"dir/inner.txt": b"i"}

    async def test_unguarded_write_creates_then_overwrites(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        target = await fs.resolve("d1/d2/deep.txt")
        created = await fs.write_text(target, "deep")
        assert created.operation == "create" and created.before is None
        info = await fs.stat(await fs.resolve("d1"))
        assert info is not None and info.type == "directory"
        await workspace.put("d1/d2/deep.txt", b"external\n")
        updated = await fs.write_text(target, "clobbered")
        assert (updated.operation, updated.before, updated.after) == ("update", "external\n", "clobbered")
        assert await workspace.get("d1/d2/deep.txt") == b"clobbered"

    async def test_write_reports_lf_normalized_before_and_after(self, workspace: Workspace) -> None:
        fs = await workspace.provider(profile="reference")
        await workspace.put("a.txt", BOM + b"a\r\nb\r\nc\r\n")
        outcome = await fs.write_text(await fs.resolve("a.txt"), "a\r\nB\r\nc\r\n")
        assert (outcome.before, outcome.after) == ("a\nb\nc\n", "a\nB\nc\n")
        assert await workspace.get("a.txt") == b"a\r\nB\r\nc\r\n"

    @pytest.mark.parametrize("prior", [b"bin\x00ary", b"caf\xe9\n"])
    async def test_write_over_undiffable_bytes_has_no_before(self, workspace: Workspace, prior: bytes) -> None:
        fs = await workspace.provider()
        await workspace.put("a.txt", prior)
        outcome = await fs.write_text(await fs.resolve("a.txt"), "text\n")
        assert outcome.operation == "update" and outcome.before is None
        assert await workspace.get("a.txt") == b"text\n"

    async def test_write_keeps_bom_and_crlf_in_the_default_profile_only(self, workspace: Workspace) -> None:
        """DEVIATIONS D4."""
        await workspace.put("win.txt", BOM + b"one\r\ntwo\r\n")
        await workspace.put("ref.txt", BOM + b"one\r\ntwo\r\n")
        default = await workspace.provider()
        reference = await workspace.provider(profile="reference")
        await default.write_text(await default.resolve("win.txt"), "one\nTWO\n")
        await reference.write_text(await reference.resolve("ref.txt"), "one\nTWO\n")
        assert await workspace.get("win.txt") == BOM + b"one\r\nTWO\r\n"
        assert await workspace.get("ref.txt") == b"one\nTWO\n"
        created = await default.write_text(await default.resolve("new.txt"), "a\nb\n")
        assert created.operation == "create" and await workspace.get("new.txt") == b"a\nb\n"

    async def test_write_turns_lone_surrogates_into_replacement_characters(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await fs.write_text(await fs.resolve("s.txt"), "a\ud800b")
        assert await workspace.get("s.txt") == b"a\xef\xbf\xbdb"

    async def test_write_abort_ordering(self, workspace: Workspace) -> None:
        """§2.8 notes: guards first; then ``read aborted`` (existing) or ``write aborted`` (new)."""
        fs = await workspace.provider()
        aborted = AbortSignal.aborted_signal()
        new = await fs.resolve("new.txt")
        await _fails(fs.write_text(new, "x", CreateIfAbsent(), signal=aborted), "FS_ABORTED", "write aborted")
        await _fails(fs.write_text(new, "x", signal=aborted), "FS_ABORTED", "write aborted")
        assert await workspace.get("new.txt") is None
        await workspace.put("a.txt", b"keep")
        existing = await fs.resolve("a.txt")
        await _fails(fs.write_text(existing, "x", signal=aborted), "FS_ABORTED", "read aborted")
        await _fails(fs.write_text(existing, "x", CreateIfAbsent(), signal=aborted), "FS_NOT_OBSERVED")
        await _fails(fs.write_text(existing, "x", ReplaceIfVersion(Version("nope")), signal=aborted), "FS_STALE_VERSION")
        assert await workspace.get("a.txt") == b"keep"

    async def test_concurrent_guarded_writes_one_wins(self, workspace: Workspace) -> None:
        await workspace.put("a.txt", b"base\n")
        first, second = await workspace.provider(), await workspace.provider()
        target = await first.resolve("a.txt")
        seen = await first.stat(target)
        assert seen is not None
        results: dict[str, Any] = {}

        async def attempt(name: str, fs: FileSystem) -> None:
            try:
                results[name] = await fs.write_text(target, f"{name}\n", ReplaceIfVersion(seen.version))
            except FsError as err:
                results[name] = err

        async with anyio.create_task_group() as tg:
            for name, fs in (("one", first), ("two", second), ("three", first)):
                tg.start_soon(attempt, name, fs)
        winners = [n for n, r in results.items() if not isinstance(r, FsError)]
        assert len(winners) == 1, results
        assert all(r.code == "FS_STALE_VERSION" for n, r in results.items() if n not in winners)
        assert await workspace.get("a.txt") == f"{winners[0]}\n".encode()

    async def test_concurrent_creates_one_wins(self, workspace: Workspace) -> None:
        first, second = await workspace.provider(), await workspace.provider()
        target = await first.resolve("fresh.txt")
        results: dict[str, Any] = {}

        async def attempt(name: str, fs: FileSystem) -> None:
            try:
                results[name] = await fs.write_text(target, name, CreateIfAbsent())
            except FsError as err:
                results[name] = err

        async with anyio.create_task_group() as tg:
            for name, fs in (("one", first), ("two", second), ("three", second)):
                tg.start_soon(attempt, name, fs)
        winners = [n for n, r in results.items() if not isinstance(r, FsError)]
        assert len(winners) == 1, results
        assert all(r.code == "FS_NOT_OBSERVED" for n, r in results.items() if n not in winners)
        assert await workspace.get("fresh.txt") == winners[0].encode()

    # -- edit_text -------------------------------------------------------------------------
    async def test_edit_at_the_matching_version(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("a.txt", b"hello world\n")
        target = await fs.resolve("a.txt")
        seen = await fs.stat(target)
        assert seen is not None
        outcome = await fs.edit_text(target, _edit("world", "there"), EditIntent(seen.version))
        assert (outcome.before, outcome.after) == ("hello world\n", "hello there\n")
        assert await workspace.get("a.txt") == b"hello there\n"
        now = await fs.stat(target)
        assert now is not None and now.version == outcome.version != seen.version
        again = await fs.edit_text(target, _edit("there", "again"), EditIntent(outcome.version))
        assert await workspace.get("a.txt") == b"hello again\n" and again.version != outcome.version

    async def test_edit_matches_lf_against_crlf_and_keeps_crlf(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("a.txt", b"one\r\ntwo\r\nthree\r\n")
        outcome = await fs.edit_text(await fs.resolve("a.txt"), _edit("one\ntwo", "one\nTWO"))
        assert (outcome.before, outcome.after) == ("one\ntwo\nthree\n", "one\nTWO\nthree\n")
        assert await workspace.get("a.txt") == b"one\r\nTWO\r\nthree\r\n"

    async def test_edit_checks_the_version_before_matching(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("a.txt", b"alpha\n")
        target = await fs.resolve("a.txt")
        seen = await fs.stat(target)
        assert seen is not None
        await workspace.put("a.txt", b"gamma\n")
        await _fails(
            fs.edit_text(target, _edit("no such text", "x"), EditIntent(seen.version)),
            "FS_STALE_VERSION",
            f'cannot edit "{target.display_path}": file changed since it was read',
        )
        assert await workspace.get("a.txt") == b"gamma\n"

    async def test_unguarded_edit_uses_the_current_content(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("a.txt", b"alpha\n")
        await workspace.put("a.txt", b"beta\n")
        await fs.edit_text(await fs.resolve("a.txt"), _edit("beta", "BETA"))
        assert await workspace.get("a.txt") == b"BETA\n"

    async def test_edit_of_a_missing_file_is_stale(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        target = await fs.resolve("gone.txt")
        message = f'cannot edit "{target.display_path}": file changed since it was read'
        await _fails(fs.edit_text(target, _edit("a", "b")), "FS_STALE_VERSION", message)
        await _fails(fs.edit_text(target, _edit("a", "b"), EditIntent(Version("v"))), "FS_STALE_VERSION", message)
        assert await workspace.get("gone.txt") is None

    async def test_edit_literal_failures(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("a.txt", b"b b b\n")
        target = await fs.resolve("a.txt")
        dp = target.display_path
        await _fails(fs.edit_text(target, _edit("zzz", "y")), "FS_EDIT_NOT_FOUND", f'old_string was not found in "{dp}"')
        await _fails(
            fs.edit_text(target, _edit("b", "c")),
            "FS_AMBIGUOUS_EDIT",
            f'old_string matched 3 times in "{dp}"; provide a more specific old_string or set replace_all to true',
        )
        await _fails(fs.edit_text(target, _edit("", "c")), "FS_EDIT_NOT_FOUND", "old_string must be a non-empty string")
        assert await workspace.get("a.txt") == b"b b b\n"
        await fs.edit_text(target, _edit("b", "c", replace_all=True))
        assert await workspace.get("a.txt") == b"c c c\n"

    async def test_edit_counts_overlapping_matches_in_the_default_profile(self, workspace: Workspace) -> None:
        """DEVIATIONS D15: without ``replace_all`` every occurrence counts, overlapping ones
        included; the reference profile and ``replace_all`` keep the left-to-right scan."""
        default = await workspace.provider()
        reference = await workspace.provider(profile="reference")
        for rel, raw, old, count in (("lines.txt", b"foo\nfoo\nfoo\n", "foo\nfoo\n", 2), ("a.txt", b"aaa\n", "aa", 2),
                                     ("crlf.txt", b"x\r\nx\r\nx\r\n", "x\nx\n", 2)):
            await workspace.put(rel, raw)
            target = await default.resolve(rel)
            await _fails(default.edit_text(target, _edit(old, "Z")), "FS_AMBIGUOUS_EDIT",
                         f'old_string matched {count} times in "{target.display_path}" (some matches overlap); '
                         "provide a more specific old_string or set replace_all to true")
            assert await workspace.get(rel) == raw
        await default.edit_text(await default.resolve("lines.txt"), _edit("foo\nfoo\n", "Z", replace_all=True))
        assert await workspace.get("lines.txt") == b"Zfoo\n"
        await reference.edit_text(await reference.resolve("a.txt"), _edit("aa", "b"))
        assert await workspace.get("a.txt") == b"ba\n"

    @pytest.mark.parametrize("profile", ["default", "reference"])
    async def test_a_write_or_edit_over_write_max_size_changes_nothing(self, workspace: Workspace, profile: str) -> None:
        """DEVIATIONS D16 (both profiles): the size of the new file is computed before it is
        built; over the limit the call fails with it and the stored bytes stay."""
        fs = await workspace.provider(profile=profile, write_max_size=1000)
        await workspace.put("a.txt", b"ab\n" * 100)
        target = await fs.resolve("a.txt")
        dp = target.display_path
        await _fails(fs.edit_text(target, _edit("a", "a" * 30, replace_all=True)), "FS_IO_ERROR",
                     f'cannot edit "{dp}": the file would be 3200 bytes, more than the limit of 1000 bytes')
        await _fails(fs.write_text(target, "é" * 501), "FS_IO_ERROR",
                     f'cannot write "{dp}": the file would be 1002 bytes, more than the limit of 1000 bytes')
        await _fails(fs.write_text(await fs.resolve("new.txt"), "x" * 1001, CreateIfAbsent()), "FS_IO_ERROR",
                     f'cannot write "{workspace.path("new.txt")}": the file would be 1001 bytes, more than the limit of 1000 bytes')
        assert await workspace.files() == {"a.txt": b"ab\n" * 100}
        await fs.edit_text(target, _edit("a", "a" * 8, replace_all=True))
        assert len(await workspace.get("a.txt") or b"") == 1000
        await fs.write_text(target, "x" * 1000)
        assert await workspace.get("a.txt") == b"x" * 1000

    async def test_edit_keeps_the_not_found_search_basis(self, workspace: Workspace) -> None:
        """The tool layer's near-match hint (D5) needs the searched text."""
        fs = await workspace.provider()
        await workspace.put("a.txt", b"x\r\n\tindented\r\n")
        err = await _fails(fs.edit_text(await fs.resolve("a.txt"), _edit("    indented", "y")), "FS_EDIT_NOT_FOUND")
        assert err.searched_text == "x\n\tindented\n" and err.needle == "    indented"

    @pytest.mark.parametrize(
        ("profile", "raw", "reason"),
        [
            ("default", b"ok\n" + b"a" * 9000 + b"\x00", "binary file (NUL byte at offset 9003, line 2)"),
            ("reference", b"ok\n" + b"a" * 9000 + b"\x00", "binary file"),
            ("default", b"caf\xe9\n", "invalid UTF-8 text (byte 0xE9 at offset 3, line 1)"),
            ("reference", b"caf\xe9\n", "invalid UTF-8 text"),
        ],
    )
    async def test_edit_refuses_non_text_and_leaves_it_untouched(
        self, workspace: Workspace, profile: str, raw: bytes, reason: str
    ) -> None:
        fs = await workspace.provider(profile=profile)
        await workspace.put("bad.txt", raw)
        target = await fs.resolve("bad.txt")
        await _fails(fs.edit_text(target, _edit("a", "b")), "FS_NOT_TEXT", f'cannot edit "{target.display_path}": {reason}')
        assert await workspace.get("bad.txt") == raw

    async def test_edit_refuses_directories_before_the_version(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("dir/x.txt", b"x")
        for rel in ("dir", "."):
            target = await fs.resolve(rel)
            await _fails(
                fs.edit_text(target, _edit("a", "b"), EditIntent(Version("bogus"))),
                "FS_NOT_REGULAR_FILE",
                f'cannot edit "{target.display_path}": not a regular file',
            )

    async def test_edit_abort_ordering(self, workspace: Workspace) -> None:
        """§2.12: existence and version failures win over a pre-aborted signal."""
        fs = await workspace.provider()
        await workspace.put("a.txt", b"alpha\n")
        target = await fs.resolve("a.txt")
        aborted = AbortSignal.aborted_signal()
        await _fails(fs.edit_text(target, _edit("zzz", "b"), signal=aborted), "FS_ABORTED", "edit aborted")
        await _fails(fs.edit_text(target, _edit("alpha", "b"), EditIntent(Version("old")), signal=aborted), "FS_STALE_VERSION")
        await _fails(fs.edit_text(await fs.resolve("nope.txt"), _edit("a", "b"), signal=aborted), "FS_STALE_VERSION")
        assert await workspace.get("a.txt") == b"alpha\n"

    async def test_edit_keeps_the_bom_in_the_default_profile_only(self, workspace: Workspace) -> None:
        """DEVIATIONS D1."""
        await workspace.put("d.txt", BOM + b"one\n")
        await workspace.put("r.txt", BOM + b"one\n")
        default = await workspace.provider()
        reference = await workspace.provider(profile="reference")
        outcome = await default.edit_text(await default.resolve("d.txt"), _edit("one", "two"))
        await reference.edit_text(await reference.resolve("r.txt"), _edit("one", "two"))
        assert outcome.before == "one\n" and outcome.after == "two\n"
        assert await workspace.get("d.txt") == BOM + b"two\n"
        assert await workspace.get("r.txt") == b"two\n"

    async def test_edit_of_mixed_line_endings_per_profile(self, workspace: Workspace) -> None:
        """DEVIATIONS D2: only the matched span changes in the default profile."""
        raw = b"a\r\nb\r\nc\nd\r\n"
        await workspace.put("d.txt", raw)
        await workspace.put("r.txt", raw)
        default = await workspace.provider()
        reference = await workspace.provider(profile="reference")
        await default.edit_text(await default.resolve("d.txt"), _edit("d", "D\nE"))
        await reference.edit_text(await reference.resolve("r.txt"), _edit("d", "D\nE"))
        assert await workspace.get("d.txt") == b"a\r\nb\r\nc\nD\r\nE\r\n"
        assert await workspace.get("r.txt") == b"a\r\nb\r\nc\r\nD\r\nE\r\n"

    async def test_concurrent_guarded_edits_one_wins_nothing_lost(self, workspace: Workspace) -> None:
        await workspace.put("a.txt", b"count\nEND\n")
        providers = [await workspace.provider(), await workspace.provider()]
        target = await providers[0].resolve("a.txt")
        seen = await providers[0].stat(target)
        assert seen is not None
        results: dict[int, Any] = {}

        async def attempt(index: int) -> None:
            fs = providers[index % 2]
            try:
                results[index] = await fs.edit_text(target, _edit("END\n", f"edit-{index}\nEND\n"), EditIntent(seen.version))
            except FsError as err:
                results[index] = err

        async with anyio.create_task_group() as tg:
            for index in range(4):
                tg.start_soon(attempt, index)
        winners = [i for i, r in results.items() if not isinstance(r, FsError)]
        assert len(winners) == 1, results
        assert all(results[i].code == "FS_STALE_VERSION" for i in results if i not in winners)
        assert await workspace.get("a.txt") == f"count\nedit-{winners[0]}\nEND\n".encode()

    async def test_concurrent_unguarded_edits_all_apply(self, workspace: Workspace) -> None:
        await workspace.put("a.txt", b"END\n")
        providers = [await workspace.provider(), await workspace.provider(), await workspace.provider()]
        target = await providers[0].resolve("a.txt")

        async def attempt(index: int) -> None:
            await providers[index % 3].edit_text(target, _edit("END\n", f"edit-{index}\nEND\n"))

        async with anyio.create_task_group() as tg:
            for index in range(6):
                tg.start_soon(attempt, index)
        final = (await workspace.get("a.txt") or b"").decode()
        assert sorted(final.splitlines()) == sorted([f"edit-{i}" for i in range(6)] + ["END"])

    async def test_concurrent_write_and_edit_at_one_version(self, workspace: Workspace) -> None:
        await workspace.put("a.txt", b"base\n")
        first, second = await workspace.provider(), await workspace.provider()
        target = await first.resolve("a.txt")
        seen = await first.stat(target)
        assert seen is not None
        results: dict[str, Any] = {}

        async def write() -> None:
            try:
                results["write"] = await first.write_text(target, "written\n", ReplaceIfVersion(seen.version))
            except FsError as err:
                results["write"] = err

        async def edit() -> None:
            try:
                results["edit"] = await second.edit_text(target, _edit("base", "edited"), EditIntent(seen.version))
            except FsError as err:
                results["edit"] = err

        async with anyio.create_task_group() as tg:
            tg.start_soon(write)
            tg.start_soon(edit)
        losers = [n for n, r in results.items() if isinstance(r, FsError)]
        assert len(losers) == 1 and results[losers[0]].code == "FS_STALE_VERSION", results
        assert await workspace.get("a.txt") == (b"edited\n" if losers == ["write"] else b"written\n")

    # -- delete ------------------------------------------------------------------------------
    async def test_delete_at_the_version_removes_only_that_file(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("dir/a.txt", b"a\n")
        await workspace.put("dir/b.txt", b"b\n")
        target = await fs.resolve("dir/a.txt")
        seen = await fs.stat(target)
        assert seen is not None
        outcome = await fs.delete(target, DeleteIntent(seen.version))
        assert outcome.version == seen.version
        assert await workspace.files() == {"dir/b.txt": b"b\n"}
        assert await fs.stat(target) is None

    async def test_unguarded_delete_removes_whatever_is_there(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("a.txt", b"one\n")
        await workspace.put("a.txt", b"two\n")
        await fs.delete(await fs.resolve("a.txt"))
        assert await workspace.files() == {}

    async def test_delete_refuses_a_changed_file(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("a.txt", b"old\n")
        target = await fs.resolve("a.txt")
        seen = await fs.stat(target)
        assert seen is not None
        await workspace.put("a.txt", b"new\n")
        await _fails(fs.delete(target, DeleteIntent(seen.version)), "FS_STALE_VERSION",
                     f'cannot delete "{target.display_path}": file changed since it was read')
        assert await workspace.get("a.txt") == b"new\n"

    async def test_delete_of_a_missing_file(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        target = await fs.resolve("gone.txt")
        await _fails(fs.delete(target, DeleteIntent(Version("v"))), "FS_STALE_VERSION",
                     f'cannot delete "{target.display_path}": file no longer exists')
        await _fails(fs.delete(target), "FS_NOT_FOUND", f'cannot delete "{target.display_path}": not found')

    async def test_delete_refuses_directories(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("dir/inner.txt", b"i")
        for rel in ("dir", "."):
            target = await fs.resolve(rel)
            info = await fs.stat(target)
            assert info is not None
            for intent in (None, DeleteIntent(info.version)):
                await _fails(fs.delete(target, intent), "FS_NOT_REGULAR_FILE",
                             f'cannot delete "{target.display_path}": not a regular file')
        assert await workspace.files() == {"dir/inner.txt": b"i"}

    async def test_delete_abort_ordering(self, workspace: Workspace) -> None:
        """§2.12 order: existence and version failures win over a pre-aborted signal."""
        fs = await workspace.provider()
        await workspace.put("a.txt", b"keep")
        target = await fs.resolve("a.txt")
        aborted = AbortSignal.aborted_signal()
        await _fails(fs.delete(target, signal=aborted), "FS_ABORTED", "delete aborted")
        await _fails(fs.delete(target, DeleteIntent(Version("old")), signal=aborted), "FS_STALE_VERSION")
        await _fails(fs.delete(await fs.resolve("nope.txt"), signal=aborted), "FS_NOT_FOUND")
        assert await workspace.get("a.txt") == b"keep"

    async def test_concurrent_guarded_deletes_one_wins(self, workspace: Workspace) -> None:
        await workspace.put("a.txt", b"x\n")
        first, second = await workspace.provider(), await workspace.provider()
        target = await first.resolve("a.txt")
        seen = await first.stat(target)
        assert seen is not None
        results = await _race({f"{n}": fs.delete(target, DeleteIntent(seen.version))
                               for n, fs in enumerate((first, second, first))})
        assert sum(not isinstance(r, FsError) for r in results.values()) == 1, results
        assert all(r.code == "FS_STALE_VERSION" for r in results.values() if isinstance(r, FsError))
        assert await workspace.files() == {}

    # -- rename ------------------------------------------------------------------------------
    async def test_rename_moves_the_bytes_unchanged(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        raw = BOM + b"one\r\ntwo\n\xff"
        await workspace.put("a.bin", raw)
        await workspace.put("other.txt", b"o")
        source, dest = await fs.resolve("a.bin"), await fs.resolve("moved/deeper/b.bin")
        seen = await fs.stat(source)
        assert seen is not None
        outcome = await fs.rename(source, dest, RenameIntent(seen.version))
        assert await workspace.files() == {"moved/deeper/b.bin": raw, "other.txt": b"o"}
        now = await fs.stat(dest)
        assert now is not None and now.version == outcome.version
        assert await fs.stat(source) is None
        written = await fs.write_text(dest, "text\n", ReplaceIfVersion(outcome.version))
        assert written.operation == "update"

    async def test_unguarded_rename(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("a.txt", b"one\n")
        await workspace.put("a.txt", b"two\n")
        await fs.rename(await fs.resolve("a.txt"), await fs.resolve("b.txt"))
        assert await workspace.files() == {"b.txt": b"two\n"}

    async def test_rename_never_replaces_the_destination(self, workspace: Workspace) -> None:
        # DEVIATIONS E5
        fs = await workspace.provider()
        await workspace.put("a.txt", b"a")
        await workspace.put("b.txt", b"b")
        await workspace.put("dir/inner.txt", b"i")
        source = await fs.resolve("a.txt")
        seen = await fs.stat(source)
        assert seen is not None
        for rel in ("b.txt", "dir", "a.txt", "./a.txt"):
            dest = await fs.resolve(rel)
            for intent in (None, RenameIntent(seen.version)):
                await _fails(fs.rename(source, dest, intent), "FS_NOT_OBSERVED",
                             f'cannot rename "{source.display_path}" to "{dest.display_path}": '
                             "the destination already exists")
        assert await workspace.files() == {"a.txt": b"a", "b.txt": b"b", "dir/inner.txt": b"i"}

    async def test_rename_refuses_a_changed_or_missing_source(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("a.txt", b"old\n")
        source, dest = await fs.resolve("a.txt"), await fs.resolve("b.txt")
        seen = await fs.stat(source)
        assert seen is not None
        await workspace.put("a.txt", b"new\n")
        await _fails(fs.rename(source, dest, RenameIntent(seen.version)), "FS_STALE_VERSION",
                     f'cannot rename "{source.display_path}": file changed since it was read')
        assert await workspace.files() == {"a.txt": b"new\n"}
        missing = await fs.resolve("nope.txt")
        await _fails(fs.rename(missing, dest, RenameIntent(seen.version)), "FS_STALE_VERSION",
                     f'cannot rename "{missing.display_path}": file no longer exists')
        await _fails(fs.rename(missing, dest), "FS_NOT_FOUND", f'cannot rename "{missing.display_path}": not found')
        assert await workspace.files() == {"a.txt": b"new\n"}

    async def test_rename_refuses_directories(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("dir/inner.txt", b"i")
        for rel in ("dir", "."):
            source = await fs.resolve(rel)
            await _fails(fs.rename(source, await fs.resolve("elsewhere")), "FS_NOT_REGULAR_FILE",
                         f'cannot rename "{source.display_path}": not a regular file')
        assert await workspace.files() == {"dir/inner.txt": b"i"}

    async def test_rename_abort_ordering(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("a.txt", b"keep")
        await workspace.put("b.txt", b"other")
        source = await fs.resolve("a.txt")
        aborted = AbortSignal.aborted_signal()
        await _fails(fs.rename(source, await fs.resolve("c.txt"), signal=aborted), "FS_ABORTED", "rename aborted")
        await _fails(fs.rename(source, await fs.resolve("b.txt"), signal=aborted), "FS_NOT_OBSERVED")
        await _fails(fs.rename(source, await fs.resolve("c.txt"), RenameIntent(Version("old")), signal=aborted),
                     "FS_STALE_VERSION")
        assert await workspace.files() == {"a.txt": b"keep", "b.txt": b"other"}

    async def test_concurrent_renames_onto_one_name_one_wins_nothing_lost(self, workspace: Workspace) -> None:
        await workspace.put("a.txt", b"a")
        await workspace.put("b.txt", b"b")
        first, second = await workspace.provider(), await workspace.provider()
        results = await _race({name: fs.rename(await fs.resolve(name), await fs.resolve("c.txt"))
                               for name, fs in (("a.txt", first), ("b.txt", second))})
        winners = [n for n, r in results.items() if not isinstance(r, FsError)]
        assert len(winners) == 1, results
        loser = "b.txt" if winners == ["a.txt"] else "a.txt"
        assert results[loser].code == "FS_NOT_OBSERVED"
        assert await workspace.files() == {"c.txt": winners[0][0].encode(), loser: loser[0].encode()}

    async def test_concurrent_renames_of_one_file_one_wins(self, workspace: Workspace) -> None:
        await workspace.put("a.txt", b"a")
        first, second = await workspace.provider(), await workspace.provider()
        source = await first.resolve("a.txt")
        seen = await first.stat(source)
        assert seen is not None
        results = await _race({dest: fs.rename(source, await fs.resolve(dest), RenameIntent(seen.version))
                               for dest, fs in (("x.txt", first), ("y.txt", second))})
        winners = [n for n, r in results.items() if not isinstance(r, FsError)]
        assert len(winners) == 1, results
        assert all(r.code == "FS_STALE_VERSION" for r in results.values() if isinstance(r, FsError))
        assert await workspace.files() == {winners[0]: b"a"}

    # -- is_current ----------------------------------------------------------------------------
    async def test_is_current_compares_as_the_guards_do(self, workspace: Workspace) -> None:
        fs = await workspace.provider()
        await workspace.put("a.txt", b"one\n")
        await workspace.put("dir/x.txt", b"x")
        target = await fs.resolve("a.txt")
        seen = await fs.stat(target)
        assert seen is not None
        assert await fs.is_current(target, seen.version)
        await workspace.put("a.txt", b"two\n")
        assert not await fs.is_current(target, seen.version)
        directory = await fs.resolve("dir")
        info = await fs.stat(directory)
        assert info is not None and not await fs.is_current(directory, info.version)
        await workspace.delete("a.txt")
        assert not await fs.is_current(target, seen.version)
