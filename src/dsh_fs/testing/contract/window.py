"""The provider contract's tests of ``read_window`` (mixins of ``dsh_fs.testing.contract``)."""

from __future__ import annotations

import pytest

from ...core.signal import AbortSignal
from ...fs.errors import FsError
from ...fs.window import ReadWindow
from ..workspaces import Workspace
from .base import BOM, ContractBase, _outcome, _windowed

__all__ = ("ImplementedReadWindowContract", "ReadWindowContract")


class ReadWindowContract(ContractBase):
    """``read_window``: ``None`` (the caller windows the text primitives), or exactly what windowing
    ``read_text``/``stream_text`` gives, errors included; abort."""

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


class ImplementedReadWindowContract(ContractBase):
    """Optional: for a provider that implements ``read_window`` itself (the local disk); leave it
    out where ``read_window`` returns ``None``."""

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
                    assert got == await _outcome(_windowed(fs, target, window, streamed)), (name, window, streamed)
