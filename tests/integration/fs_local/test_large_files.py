"""Huge files and busy agents end to end (tracker issue 5): the read tool over the local
provider's byte scanner and line index, streamed edits, bounded memory, the stat budget,
parallel reads in a batch.

* Differential: every read and edit result (text, error, bytes on disk) equals the one the
  text path gives — a provider without ``read_window`` for reads, the in-memory edit for edits
  — in both profiles, for whole-file and streamed reads, on files larger than a read chunk.
* Line index: a second read of an unchanged file reads about one chunk, not the file; paging
  through a file costs about one scan; a new version, a racily-clean version or a change
  during the scan is never served from (or stored as) an index.
* Bounded memory (tracemalloc peaks) for a tail read and an edit of files bigger than the
  bound; no timing assertions anywhere.

Not covered here: the pure pieces (tests/unit/fs/test_window_bytes.py,
tests/unit/fs/test_literal_edit_stream.py); speed (``bench/run.py``).
"""

from __future__ import annotations

import errno
import os
import tracemalloc
from collections.abc import Callable, Iterator
from typing import Any

import anyio
import pytest

import dsh_fs
from dsh_fs import AbortSignal, Session
from dsh_fs.core.tools import ToolCall, ToolResult
from dsh_fs.fs import FS_OBSERVED, FsError, FsErrorCode
from dsh_fs.fs.types import EditRequest, Info, Target
from dsh_fs.fs.window import ReadWindow, WindowResult
from dsh_fs.fs_local import LocalFileSystem
from dsh_fs.fs_local import large_edit, rules, versions
from dsh_fs.tool_fs import diff
from filekit import get, put

pytestmark = pytest.mark.anyio

MiB = 1024 * 1024


def numbered(count: int, width: int = 60, *, eol: bytes = b"\n", start: int = 1) -> bytes:
    return b"".join(b"line %07d %s" % (i, b"x" * (width - 13)) + eol for i in range(start, start + count))


class TextPathFs(LocalFileSystem):
    """The local provider without ``read_window``: the read tool windows ``read_text`` /
    ``stream_text`` itself (the path every other provider uses)."""

    async def read_window(self, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        return None


class CountingFs(LocalFileSystem):
    """Counts seam ``stat`` calls."""

    stats = 0

    async def stat(self, target: Target, *, signal: AbortSignal | None = None) -> Info | None:
        type(self).stats += 1
        return await super().stat(target, signal=signal)


def deployment(ws: str, provider: LocalFileSystem | None = None, **config: Any) -> dsh_fs.Context:
    profile = config.pop("profile", "default")
    fs = provider if provider is not None else LocalFileSystem(cwd=ws, profile=profile)
    return dsh_fs.create_context(cwd=ws, profile=profile, provider=fs, **config)


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """No racily-clean versions (DEVIATIONS A5): files written by the test get plain versions."""
    monkeypatch.setattr(versions, "RACY_WINDOW_NS", 0)


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Bytes returned by every ``os.pread`` while the test runs."""
    seen: list[int] = []
    real = os.pread

    def counting(fd: int, n: int, offset: int) -> bytes:
        data = real(fd, n, offset)
        seen.append(len(data))
        return data

    monkeypatch.setattr(os, "pread", counting)
    yield seen


async def read(ctx: dsh_fs.Context, session: Session, path: str, **args: Any) -> ToolResult:
    return await ctx.tools.execute("read", {"file_path": path, **args}, session=session)


# -- reads: same results as the text path -------------------------------------------------------------

FILES: dict[str, bytes] = {
    "lf": numbered(40_000),  # 2.4 MB, lines cross every chunk boundary
    "crlf-bom": b"\xef\xbb\xbf" + numbered(30_000, eol=b"\r\n"),
    "long-lines": b"short\n" + ("é" * 700_000).encode() + b"\r\n" + b"z" * 1_500_000 + b"\nend",
    "invalid-late": numbered(30_000) + b"bad \xe2\x28\xa1 byte\n" + numbered(10),
    "truncated-end": numbered(30_000) + b"cut \xf0\x9f",
    "nul-late": numbered(30_000) + b"nul \x00 here\n",  # beyond the NUL sample: valid text
    "nul-head": b"head \x00" + numbered(30_000),
    "utf16": b"\xff\xfe" + "hi\n".encode("utf-16-le") * 10,
    "empty": b"",
    "no-newline": b"x" * 3 * MiB,
}
WINDOWS: list[dict[str, int]] = [
    {},
    {"offset": 2, "limit": 3},
    {"offset": 12_345, "limit": 50},
    {"offset": 29_990},
    {"offset": 30_001},
    {"offset": 40_000},
    {"offset": 40_001},
    {"offset": 3},
]


@pytest.mark.parametrize("profile", ["default", "reference"])
@pytest.mark.parametrize("streamed", [False, True])
async def test_reads_equal_the_text_path(ws: str, profile: str, streamed: bool, settled: None) -> None:
    config: dict[str, Any] = {"profile": profile, "read_stream_min_size": 1 if streamed else 100 * MiB}
    ours = deployment(ws, LocalFileSystem(cwd=ws, profile=profile, index_min_size=0), **dict(config))
    theirs = deployment(ws, TextPathFs(cwd=ws, profile=profile), **dict(config))
    session = Session(cwd=ws)
    for name, data in FILES.items():
        put(os.path.join(ws, name), data)
        for args in WINDOWS + [{"offset": 5, "limit": 2}]:  # the last one is served by an index
            expected = await read(theirs, session, name, **args)
            got = await read(ours, session, name, **args)
            assert (got.text, got.is_error, got.error) == (expected.text, expected.is_error, expected.error), (name, args)


async def test_a_read_stats_once_and_observes_that_version(ws: str, settled: None) -> None:
    path = put(os.path.join(ws, "big.log"), numbered(50_000))
    provider = CountingFs(cwd=ws, index_min_size=0)
    ctx = deployment(ws, provider, read_stream_min_size=MiB)
    seen: list[Any] = []
    ctx.on(FS_OBSERVED, lambda target, version, actor: seen.append(version))
    session = Session(cwd=ws)
    for args in ({"offset": 49_900}, {"offset": 10}):
        before = CountingFs.stats
        assert not (await read(ctx, session, "big.log", **args)).is_error
        assert CountingFs.stats - before == 1  # REFERENCE-SPEC §4.11
    info = await provider.stat(await provider.resolve(path))
    # D29: a whole read of a file up to 4 MiB adds its digest to the stat fields it observed
    assert info is not None and [v.partition("=")[0] for v in seen] == [info.version, info.version]


# -- the line index -------------------------------------------------------------------------------------

async def test_a_second_read_seeks_to_its_window(ws: str, settled: None, reads: list[int]) -> None:
    data = numbered(100_000)  # 6 MB
    put(os.path.join(ws, "big.log"), data)
    provider = LocalFileSystem(cwd=ws)
    ctx = deployment(ws, provider)
    session = Session(cwd=ws)
    tail = await read(ctx, session, "big.log", offset=99_901)
    assert tail.text.endswith("(End of file - total 100000 lines)\n</content>")
    assert sum(reads) >= len(data) and len(provider.indexes) == 1
    reads.clear()
    middle = await read(ctx, session, "big.log", offset=50_000, limit=2)
    assert "50000: line 0050000" in middle.text and "(Showing lines 50000-50001 of 100000." in middle.text
    assert sum(reads) <= 2 * MiB  # a checkpoint's chunk and the window, not the file


async def test_paging_through_a_file_costs_about_one_scan(ws: str, settled: None, reads: list[int]) -> None:
    data = numbered(80_000, width=100)  # 8 MB; every page stops at the byte cap (no total needed)
    put(os.path.join(ws, "big.log"), data)
    ctx = deployment(ws, read_stream_min_size=MiB)
    session = Session(cwd=ws)
    offset, pages = 1, 0
    while True:
        result = await read(ctx, session, "big.log", offset=offset)
        pages += 1
        footer = result.text.rsplit("\n", 2)[-2]
        if "Use offset=" not in footer:
            break
        offset = int(footer.split("Use offset=")[1].split(" ")[0].rstrip(".)"))
    assert pages > 150
    # one scan, plus per page a checkpoint's distance and the window (without the index a
    # page would cost a scan up to its offset: about pages × half the file in total)
    assert sum(reads) < len(data) + pages * 256 * 1024 < pages * len(data) // 8


async def test_a_new_version_is_never_served_from_an_old_index(ws: str, settled: None) -> None:
    path = put(os.path.join(ws, "grow.log"), numbered(30_000))
    provider = LocalFileSystem(cwd=ws, index_min_size=0)
    ctx = deployment(ws, provider)
    session = Session(cwd=ws)
    assert "total 30000 lines" in (await read(ctx, session, "grow.log", offset=29_999)).text
    with open(path, "ab") as handle:
        handle.write(numbered(5, start=30_001))
    grown = await read(ctx, session, "grow.log", offset=29_999)
    assert "30005: line 0030005" in grown.text and "total 30005 lines" in grown.text
    put(path, numbered(10))  # replaced (new inode, fewer lines)
    assert (await read(ctx, session, "grow.log", offset=29_999)).text == (
        f'Error: offset 29999 is out of range for "{path}" (10 lines)'
    )


async def test_racy_versions_and_changes_during_a_scan_are_not_indexed(ws: str, monkeypatch: pytest.MonkeyPatch) -> None:
    path = put(os.path.join(ws, "fresh.log"), numbered(30_000))
    provider = LocalFileSystem(cwd=ws, index_min_size=0)
    ctx = deployment(ws, provider)
    session = Session(cwd=ws)
    assert not (await read(ctx, session, "fresh.log")).is_error
    assert len(provider.indexes) == 0  # just written: its version carries a digest (A5)

    monkeypatch.setattr(versions, "RACY_WINDOW_NS", 0)
    real = os.pread
    grown: list[bool] = []

    def growing(fd: int, n: int, offset: int) -> bytes:
        if not grown:
            grown.append(True)
            with open(path, "ab") as handle:
                handle.write(b"appended while scanning\n")
        return real(fd, n, offset)

    monkeypatch.setattr(os, "pread", growing)
    assert not (await read(ctx, session, "fresh.log")).is_error
    assert grown and len(provider.indexes) == 0
    monkeypatch.setattr(os, "pread", real)
    assert "total 30001 lines" in (await read(ctx, session, "fresh.log", offset=30_000)).text
    assert len(provider.indexes) == 1


async def test_an_aborted_windowed_read_reports_read_aborted(ws: str) -> None:
    path = put(os.path.join(ws, "a.txt"), b"a\n")
    provider = LocalFileSystem(cwd=ws)
    target = await provider.resolve(path)
    info = await provider.stat(target)
    assert info is not None
    with pytest.raises(FsError) as caught:
        await provider.read_window(target, ReadWindow(), info=info, signal=AbortSignal.aborted_signal())
    assert (caught.value.code, caught.value.message) == (FsErrorCode.ABORTED, "read aborted")


# -- memory -------------------------------------------------------------------------------------------

def peak_during(run: Callable[[], Any]) -> int:
    tracemalloc.start()
    try:
        anyio.run(run)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_of_a_tail_read_and_an_edit_is_bounded(ws: str, settled: None) -> None:
    data = numbered(400_000)  # 24 MB
    put(os.path.join(ws, "big.log"), data)
    ctx = deployment(ws, LocalFileSystem(cwd=ws, stream_edit_min_size=MiB), read_stream_min_size=MiB)
    session = Session(cwd=ws)
    results: list[ToolResult] = []

    async def tail() -> None:
        results.append(await read(ctx, session, "big.log", offset=399_901))

    async def edit() -> None:
        results.append(await ctx.tools.execute(
            "edit", {"file_path": "big.log", "old_string": "line 0399950", "new_string": "LINE 0399950"}, session=session))

    assert peak_during(tail) < 8 * MiB
    assert peak_during(edit) < 12 * MiB
    assert [r.is_error for r in results] == [False, False], [r.text for r in results]
    assert results[1].meta == {"diffs": []}  # no diff basis for a streamed edit
    assert get(os.path.join(ws, "big.log")) == data.replace(b"line 0399950", b"LINE 0399950")


def test_memory_of_an_overwrite_of_a_big_file_is_bounded(ws: str, settled: None) -> None:
    """A write over a file of at least ``stream_edit_min_size`` bytes never holds it: it reads
    it in chunks for what D1/D4 need (BOM, CRLF style) and reports no diff basis."""
    data = b"\xef\xbb\xbf" + numbered(400_000, eol=b"\r\n")  # 24 MB, BOM + CRLF
    path = put(os.path.join(ws, "big.txt"), data)
    ctx = deployment(ws, LocalFileSystem(cwd=ws, stream_edit_min_size=MiB), policy=False)
    results: list[ToolResult] = []

    async def overwrite() -> None:
        results.append(await ctx.tools.execute("write", {"file_path": "big.txt", "content": "one\ntwo\n"},
                                               session=Session(cwd=ws)))

    assert peak_during(overwrite) < 4 * MiB
    [result] = results
    assert not result.is_error and result.meta is None, result.text
    assert get(path) == b"\xef\xbb\xbfone\r\ntwo\r\n"  # D1 + D4, as for a small file


@pytest.mark.parametrize("profile", ["default", "reference"])
async def test_an_overwrite_of_a_big_file_stores_what_a_small_one_would(ws: str, profile: str) -> None:
    contents = {"bom-crlf": b"\xef\xbb\xbf" + numbered(3000, eol=b"\r\n"), "lf": numbered(3000),
                "mixed": numbered(1000, eol=b"\r\n") + numbered(1001, start=1001), "binary": b"\x00" * 70_000,
                "cr-at-chunk-ends": b"a\r" * 40_000 + b"\n"}
    stored: dict[str, dict[str, bytes]] = {}
    for kind, threshold in (("streamed", 1), ("held", 1 << 30)):
        root = os.path.join(ws, kind)
        os.mkdir(root)
        ctx = deployment(root, LocalFileSystem(cwd=root, profile=profile, stream_edit_min_size=threshold),
                         policy=False)
        stored[kind] = {}
        for name, data in contents.items():
            put(os.path.join(root, name), data)
            result = await ctx.tools.execute("write", {"file_path": name, "content": "new\nlines\n"},
                                             session=Session(cwd=root))
            assert not result.is_error, result.text
            stored[kind][name] = get(os.path.join(root, name))
    assert stored["streamed"] == stored["held"]


# -- streamed edits: same outcome as in memory ---------------------------------------------------------------

EDIT_FILES: dict[str, bytes] = {
    "crlf": numbered(40_000, eol=b"\r\n"),
    "mixed": numbered(20_000, eol=b"\r\n") + numbered(20_000, start=20_001) + b"lone\rcr\r\r\nend",
    "bom": b"\xef\xbb\xbf" + numbered(20_000),
    "late-nul": numbered(20_000) + b"\x00",
    "invalid": numbered(20_000) + b"\xc3(" + numbered(3),
    "nul-after-invalid": b"\xff" + numbered(20_000) + b"\x00",
    "utf16": b"\xff\xfe" + "line 0000001 x\n".encode("utf-16-le"),
    "repeated": b"foo\n" * 300_000 + b"foo\r\nfoo\r\nfoo\n",  # overlapping matches (D15)
}
EDITS: list[dict[str, Any]] = [
    {"old_string": "line 0012345", "new_string": "LINE\n0012345"},
    {"old_string": "x\nline 0017477", "new_string": "y\r\nLINE"},  # crosses the 1 MiB boundary in "crlf"
    {"old_string": "line 00", "new_string": "L", "replace_all": True},
    {"old_string": "line 00", "new_string": "L"},
    {"old_string": "not there", "new_string": "x"},
    {"old_string": "lone\rcr\r\nend", "new_string": "done"},
    {"old_string": "foo\nfoo\n", "new_string": "X"},  # D15: ambiguous, the matches overlap
    {"old_string": "foo\nfoo\n", "new_string": "X", "replace_all": True},
    {"old_string": "x\nline", "new_string": "X\nL", "replace_all": True},  # line breaks in every match
    {"old_string": "line 00", "new_string": "LINE 00", "replace_all": True},  # as long: the count is moot
    {"old_string": "e 0001", "new_string": "é 001", "replace_all": True},  # as many UTF-8 bytes, fewer characters
    {"old_string": "foo", "new_string": "bar", "replace_all": True},  # as long, in the overlapping file
    {"old_string": "no such", "new_string": "NO SUCH", "replace_all": True},  # as long, not found
]


@pytest.mark.parametrize("racy", [True, False])
@pytest.mark.parametrize("profile", ["default", "reference"])
async def test_streamed_edits_equal_in_memory_edits(tmp_path: Any, profile: str, racy: bool,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """``racy=False``: the files count as changed long ago (A5), so a ``replace_all`` by a string
    as long as ``old_string`` neither counts its matches in the first pass nor in the rewrite."""
    if not racy:
        monkeypatch.setattr(versions, "is_racy", lambda st: False)
    spaces = {}
    for kind in ("streamed", "memory"):
        root = os.path.realpath(str(tmp_path / kind))
        os.mkdir(root)
        threshold = 1 if kind == "streamed" else 10**12
        spaces[kind] = (root, deployment(root, LocalFileSystem(cwd=root, profile=profile, stream_edit_min_size=threshold),
                                         profile=profile, policy=False))
    for name, data in EDIT_FILES.items():
        for number, args in enumerate(EDITS):
            outcome = {}
            for kind, (root, ctx) in spaces.items():
                file = f"{name}-{number}"
                put(os.path.join(root, file), data)
                result = await ctx.tools.execute("edit", {"file_path": file, **args}, session=Session(cwd=root))
                text = result.text.replace(root, "<ws>")
                if kind == "memory" and result.error is not None and result.error.code == "FS_EDIT_NOT_FOUND":
                    text = text.split("\n")[0]  # the streamed edit gives no near-match hint (D5)
                outcome[kind] = (text, result.is_error, result.error, get(os.path.join(root, file)))
                assert not [f for f in os.listdir(root) if f.endswith(".tmp")], "a temp file was left"
            assert outcome["streamed"] == outcome["memory"], (name, args)


@pytest.mark.parametrize("eol", [b"\n", b"\r\n"])  # kernel copy of the unchanged stretches, or the rewriter
async def test_a_file_changed_between_the_passes_is_not_replaced(ws: str, monkeypatch: pytest.MonkeyPatch,
                                                                 eol: bytes) -> None:
    original = numbered(1000, eol=eol)
    path = put(os.path.join(ws, "big.txt"), original)
    ctx = deployment(ws, LocalFileSystem(cwd=ws, stream_edit_min_size=1), policy=False)
    real_write = large_edit.atomic_write

    def meddling(*args: Any, **kwargs: Any) -> None:
        with open(path, "r+b") as handle:  # another program writes in place, ignoring our locks
            handle.write(b"LINE")
            handle.seek(0, os.SEEK_END)
            handle.write(b"!\n")  # (a new size: visible even within one timestamp tick)
        real_write(*args, **kwargs)

    monkeypatch.setattr(large_edit, "atomic_write", meddling)
    result = await ctx.tools.execute("edit", {"file_path": "big.txt", "old_string": "line 0000500", "new_string": "x"},
                                     session=Session(cwd=ws))
    assert result.is_error and result.error is not None and result.error.code == "FS_STALE_VERSION", result.text
    assert get(path) == b"LINE" + original[4:] + b"!\n"
    assert os.listdir(ws) == ["big.txt"]


@pytest.mark.parametrize("racy", [True, False])
async def test_a_change_the_stat_fields_miss_is_caught_by_the_recount_of_a_racy_file(
        ws: str, monkeypatch: pytest.MonkeyPatch, racy: bool) -> None:
    """A file that changed within the racy window (A5) when the edit opened it may change again
    without its stat fields showing it: the rewrite then recounts the matches it replaces, and
    another count than the first pass's fails ``FS_STALE_VERSION`` with nothing replaced. The
    stat fields are blinded here to stand for that. A file that had not changed for a while
    (``racy=False``) is trusted to its stat fields: the rewrite replaces what it finds."""
    original = numbered(5000)  # more matches than the first pass records: the rewriter, no kernel copy
    path = put(os.path.join(ws, "big.txt"), original)
    ctx = deployment(ws, LocalFileSystem(cwd=ws, stream_edit_min_size=1), policy=False)
    real_write = large_edit.atomic_write
    meddled = original.replace(b"line 0001234", b"xine 0001234")  # one match fewer, same size

    def meddling(*args: Any, **kwargs: Any) -> None:
        with open(path, "r+b") as handle:  # another program writes in place, ignoring our locks
            handle.write(meddled)
        real_write(*args, **kwargs)

    monkeypatch.setattr(large_edit, "atomic_write", meddling)
    monkeypatch.setattr(large_edit, "_fingerprint", lambda st: (0, 0, 0, 0, 0))
    monkeypatch.setattr(versions, "is_racy", lambda st: racy)
    edit = {"file_path": "big.txt", "old_string": "line 00", "new_string": "LINE 00", "replace_all": True}
    result = await ctx.tools.execute("edit", edit, session=Session(cwd=ws))
    if racy:
        assert result.is_error and result.error is not None and result.error.code == "FS_STALE_VERSION", result.text
        assert get(path) == meddled
    else:
        assert not result.is_error, result.text
        assert get(path) == meddled.replace(b"line 00", b"LINE 00")
    assert os.listdir(ws) == ["big.txt"]


async def test_a_streamed_edit_without_copy_file_range_writes_the_same_bytes(ws: str,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    data = b"\xef\xbb\xbf" + numbered(50_000)
    path = put(os.path.join(ws, "big.txt"), data)
    ctx = deployment(ws, LocalFileSystem(cwd=ws, stream_edit_min_size=1), policy=False)

    tried: list[int] = []

    def unsupported(*args: Any, **kwargs: Any) -> int:
        tried.append(1)
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(os, "copy_file_range", unsupported)
    edit = {"file_path": "big.txt", "old_string": "x\nline 00200", "new_string": "y\nLINE 00200", "replace_all": True}
    result = await ctx.tools.execute("edit", edit, session=Session(cwd=ws))
    assert not result.is_error, result.text
    assert tried  # the kernel copy was attempted (no CR in the file, 100 matches)
    assert get(path) == data.replace(b"x\nline 00200", b"y\nLINE 00200")


async def test_diff_meta_is_skipped_above_the_bound(ws: str, monkeypatch: pytest.MonkeyPatch) -> None:
    put(os.path.join(ws, "a.txt"), b"one\ntwo\n")
    ctx = deployment(ws, policy=False)
    session = Session(cwd=ws)
    edit = {"file_path": "a.txt", "old_string": "two", "new_string": "TWO"}
    assert (await ctx.tools.execute("edit", edit, session=session)).meta == {
        "diffs": [{"path": "a.txt", "oldText": "one\ntwo", "newText": "one\nTWO"}]}
    monkeypatch.setattr(diff, "DIFF_META_MAX_CHARS", 4)
    edit = {"file_path": "a.txt", "old_string": "TWO", "new_string": "2"}
    assert (await ctx.tools.execute("edit", edit, session=session)).meta == {"diffs": []}
    write = await ctx.tools.execute("write", {"file_path": "a.txt", "content": "brand new\n"}, session=session)
    assert not write.is_error and write.meta is None


# -- busy agents ----------------------------------------------------------------------------------------------

class RendezvousFs(LocalFileSystem):
    """``read_window`` returns only once ``expected`` calls are in flight at the same time."""

    def __init__(self, *, expected: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.expected = expected
        self.inside = 0
        self.all_in = anyio.Event()

    async def read_window(self, target: Target, window: ReadWindow, *, info: Info, streamed: bool = False,
                          signal: AbortSignal | None = None) -> WindowResult:
        self.inside += 1
        if self.inside == self.expected:
            self.all_in.set()
        await self.all_in.wait()
        return await super().read_window(target, window, info=info, streamed=streamed, signal=signal)


async def test_a_batch_runs_its_reads_in_parallel(ws: str) -> None:
    names = [f"f{i}.txt" for i in range(4)]
    for name in names:
        put(os.path.join(ws, name), name.encode() + b"\n")
    ctx = deployment(ws, RendezvousFs(cwd=ws, expected=len(names)))
    session = Session(cwd=ws)
    with anyio.fail_after(60):  # serialized reads would wait for each other forever
        results = await ctx.tools.execute_batch([ToolCall(name="read", arguments={"file_path": n}) for n in names],
                                                session=session)
    assert [r.text.split("\n")[3] for r in results] == [f"1: {n}" for n in names]


async def test_inline_reads_and_probes_can_be_turned_off(ws: str, settled: None) -> None:
    put(os.path.join(ws, "a.txt"), b"a\nb\n")
    inline = deployment(ws, LocalFileSystem(cwd=ws))
    threaded = deployment(ws, LocalFileSystem(cwd=ws, inline_probes=False, inline_read_max=0, index_files=0))
    session = Session(cwd=ws)
    for args in ({}, {"offset": 2}, {"offset": 3}):
        assert (await read(inline, session, "a.txt", **args)).text == (await read(threaded, session, "a.txt", **args)).text


@pytest.mark.parametrize("profile", ["default", "reference"])
@pytest.mark.parametrize("streamed", [False, True])
async def test_D16_an_edit_or_write_over_the_size_limit_changes_nothing(ws: str, profile: str, streamed: bool) -> None:
    """The size of the new file is known before it is built: over ``write_max_size`` the call
    fails with the size, the file keeps its bytes, and no temp file is left (both profiles)."""
    fs = LocalFileSystem(cwd=ws, profile=profile, stream_edit_min_size=1 if streamed else 10**12,
                         write_max_size=10_000)
    ctx = deployment(ws, fs, profile=profile, policy=False)
    data = b"a\r\nb\nc\r\n" * 1000  # 8000 bytes, mixed line endings
    put(os.path.join(ws, "f.txt"), data)
    session = Session(cwd=ws)
    cases = [
        # the reference rewrites every line break as CRLF (dominant style): exactly the limit
        ({"old_string": "a", "new_string": "aa", "replace_all": True}, 9000 if profile == "default" else 10_000),
        ({"old_string": "a", "new_string": "aaaa\naa", "replace_all": True}, None),
        ({"old_string": "a\nb", "new_string": "a\nbbbbbb", "replace_all": True}, None),
    ]
    for args, fits in cases:
        result = await ctx.tools.execute("edit", {"file_path": "f.txt", **args}, session=session)
        if fits is not None:
            assert not result.is_error, result.text
            assert len(get(os.path.join(ws, "f.txt"))) == fits
            put(os.path.join(ws, "f.txt"), data)
            continue
        reference = LocalFileSystem(cwd=ws, profile=profile, stream_edit_min_size=10**12)
        outcome = await reference.edit_text(await reference.resolve("f.txt"),
                                            EditRequest(old_string=args["old_string"], new_string=args["new_string"],
                                                        replace_all=True))
        size = len(get(os.path.join(ws, "f.txt")))
        put(os.path.join(ws, "f.txt"), data)
        assert outcome.version and size > 10_000
        result = await ctx.tools.execute("edit", {"file_path": "f.txt", **args}, session=session)
        assert result.error is not None and result.error.code == "FS_IO_ERROR"
        assert result.text == (f'Error: cannot edit "{ws}/f.txt": the file would be {size} bytes, '
                               "more than the limit of 10000 bytes")
        assert get(os.path.join(ws, "f.txt")) == data
    result = await ctx.tools.execute("write", {"file_path": "f.txt", "content": "é" * 5001}, session=session)
    assert result.text == f'Error: cannot write "{ws}/f.txt": the file would be 10002 bytes, more than the limit of 10000 bytes'
    assert get(os.path.join(ws, "f.txt")) == data
    assert sorted(os.listdir(ws)) == ["f.txt"]


def test_the_streaming_threshold_is_a_provider_setting() -> None:
    assert LocalFileSystem().rules.stream_edit_min_size == rules.STREAM_EDIT_MIN_SIZE == 32 * MiB
    assert LocalFileSystem(stream_edit_min_size=5).rules.stream_edit_min_size == 5
