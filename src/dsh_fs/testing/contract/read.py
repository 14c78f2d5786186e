"""The provider contract's tests of ``read_text``, ``stream_text`` and ``read_bytes`` (mixins of
``dsh_fs.testing.contract``)."""

from __future__ import annotations

import pytest

from ...core.signal import AbortSignal
from ...fs.errors import FsError
from ..workspaces import Workspace
from .base import BOM, ContractBase, _drain, _fails

__all__ = ("ReadBytesContract", "ReadTextContract")


class ReadTextContract(ContractBase):
    """``read_text`` and ``stream_text``: the text rules and their exact messages (with and without D6)."""

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


class ReadBytesContract(ContractBase):
    """``read_bytes`` (``read_image``'s raw read): the exact bytes up to the cap, the reference's
    texts over it, refusals, abort."""

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
