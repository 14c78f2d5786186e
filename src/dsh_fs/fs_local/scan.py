"""Windowed reads on bytes (REFERENCE-SPEC §2.5, §4.6; DEVIATIONS A1, D6, D10).

``scan_window`` computes exactly the ``WindowResult`` (and raises exactly the errors) that
decoding the file and windowing its text would, but works on raw bytes: it counts line feeds
in large pieces at C speed, validates UTF-8 cheaply (an ASCII piece costs one
``bytes.isascii()``; others one strict incremental decode), and decodes only the lines inside
the window — of a long line, only the head that can be shown. A ``LineIndex`` from an earlier
scan of the same content lets it start at the nearest checkpoint before the window and skip
validation of what was already proved.

Which bytes must be valid text (the error contract):

* ``streamed=False`` — as ``read_text``: the whole file, always.
* ``streamed=True`` — as a ``stream_text`` consumer that stops when the window is done: the
  whole file, except when the byte cap stops the read; then only up to the end of the
  ``chunk``-aligned piece that held the stopping line (``stream_text`` decodes each chunk
  before the window sees it, and is abandoned after the chunk that filled it).

In both modes the head rules come first (a UTF-16/32 byte-order mark in the default profile,
then a NUL among the first 8192 bytes), as in ``decode_text``.

Reads use ``os.pread`` on a descriptor the caller opened; nothing here opens, stats or locks.
Not here: choosing whether to trust or keep an index (the provider), rendering.
"""

from __future__ import annotations

import codecs
import os
from array import array
from dataclasses import dataclass

from ..core.signal import AbortSignal
from ..fs.byte_text import Utf8Validator, check_head
from ..fs.errors import check_abort, offset_out_of_range
from ..fs.text import BOM, NUL_SAMPLE
from ..fs.window import ReadWindow, WindowCollector, WindowResult, nth_index, window_whole
from .files import STREAM_CHUNK
from .line_index import MIN_STRIDE, LineIndex, stride_for

__all__ = ("ScanOutcome", "scan_window")


_LF = 0x0A
_CR = 0x0D
_SKIP, _WINDOW, _COUNT, _STOPPED = range(4)
_decode = codecs.utf_8_decode


@dataclass(frozen=True, slots=True)
class ScanOutcome:
    """What ``scan_window`` returns."""

    result: WindowResult
    index: LineIndex | None
    """the index after this scan when it learned something new, else ``None``"""
    data: bytes | None = None
    """the whole file when one read got it all (a small file), else ``None``"""


class _Scan:
    """One windowed read over an open descriptor (see ``scan_window``)."""

    def __init__(self, fd: int, window: ReadWindow, *, display: str, streamed: bool, foreign_boms: bool,
                 signal: AbortSignal | None, index: LineIndex | None, size_hint: int, chunk: int,
                 piece: int) -> None:
        self.fd = fd
        self.window = window
        self.display = display
        self.streamed = streamed
        self.foreign_boms = foreign_boms
        self.signal = signal
        self.known = index
        self.size_hint = size_hint
        self.chunk = chunk
        self.piece = piece
        self.collector = WindowCollector(window)
        cap = window.max_line_length
        self.head_max = 4 * (cap + 2)
        """bytes of a line enough to decode its first ``cap + 2`` characters"""
        self.region = max(4096, window.max_bytes + 2 * max(window.limit, 0) + 2)
        """bytes decoded at once in the window: enough for a window of untruncated lines"""
        # position
        self.pos = 0
        """file offset of the next unread byte"""
        self.newlines = 0
        """line feeds in [0, pos) (exact at piece boundaries)"""
        self.last_byte = -1
        self.content_start = 0
        # window phase state
        self.phase = _SKIP
        self.to_skip = 0
        self.carry: bytearray | None = None
        self.carry_len = 0
        self.carry_last = -1
        # validation and index state
        self.validator = Utf8Validator()
        self.validated_to = 0
        self.stride = chunk
        self.offsets: list[int] = []
        self.counts: list[int] = []
        self.aligned: tuple[int, int, bytes, int] | None = None
        """latest chunk-aligned point reached beyond ``validated_to``: (offset, newlines, pending, last byte)"""

    # -- entry ------------------------------------------------------------------------
    def run(self) -> ScanOutcome:
        window = self.window
        line = window.offset
        known = self.known
        if known is not None:
            if known.complete:
                total = known.total_lines or 0
                if line > total and not (total == 0 and line == 1):
                    raise offset_out_of_range(line, self.display, total)
            start, before = known.start_for(line)
            self.pos, self.newlines = start, before
            self.content_start = known.content_start
            self.validated_to = known.scanned_to
            self.validator = Utf8Validator(offset=known.scanned_to, pending=known.pending)
            self.stride = known.stride
            if start == known.scanned_to:
                self.last_byte = known.last_byte
        else:
            self.stride = stride_for(self.size_hint, min(MIN_STRIDE, self.chunk))
        self.to_skip = max(0, line - 1 - self.newlines)
        if self.to_skip == 0:
            self._enter_window()
        eof = self._loop()
        return self._finish(eof)

    def _enter_window(self) -> None:
        self.collector.skip(self.window.offset - 1)
        self.phase = _WINDOW if self.collector.selecting else _COUNT

    # -- reading ------------------------------------------------------------------------
    def _read(self) -> tuple[bytes, int]:
        """The next piece at ``pos`` and how many bytes were asked for (a piece never
        crosses a multiple of ``chunk``; the first one is sized by the stat)."""
        check_abort(self.signal, "read")
        pos = self.pos
        want = min(self.chunk - pos % self.chunk, self.piece)
        if pos < self.validated_to:
            want = min(want, self.stride)  # proven bytes: read no further than needed
        if pos == 0 and self.size_hint >= 0:
            want = min(want, self.size_hint + 1)
        return os.pread(self.fd, want, pos), want

    def _head(self, first: bytes, eof: bool) -> bytes:
        if len(first) >= NUL_SAMPLE or eof:
            return first
        parts = [first]
        have = len(first)
        while have < NUL_SAMPLE:
            more = os.pread(self.fd, NUL_SAMPLE - have, have)
            if not more:
                break
            parts.append(more)
            have += len(more)
        return b"".join(parts)

    def _loop(self) -> bool:
        """Process pieces until the window and the validation contract are satisfied.
        Returns ``True`` when the end of the file was reached."""
        known = self.known
        while True:
            if not self._need_more():
                return False
            if known is not None and self.pos < known.scanned_to and self.phase in (_COUNT, _STOPPED):
                # the rest up to scanned_to is already counted and validated: jump there
                self.pos, self.newlines = known.scanned_to, known.newlines_scanned
                self.last_byte = known.last_byte
                continue
            pos = self.pos
            data, want = self._read()
            if not data:
                return True
            want_more = len(data) == want
            if pos == 0 and known is None:
                head = self._head(data, eof=not want_more)
                check_head(head, foreign_boms=self.foreign_boms)
                self.content_start = 3 if head.startswith(BOM) else 0
            end = pos + len(data)
            total = None
            if end > self.validated_to:
                self.validator.feed(data, self.newlines)
                total = self._checkpoints(data, pos)
            self._process(data, max(0, self.content_start - pos), total)
            self.pos = end
            self.last_byte = data[-1]
            if end > self.validated_to and end % self.chunk == 0:
                self.aligned = (end, self.newlines, self.validator.pending, self.last_byte)
            if not want_more:
                # a short read of a regular file: the end of the file
                return True

    def _checkpoints(self, data: bytes, pos: int) -> int:
        """Record the checkpoints that fall in a new piece; returns its line-feed count
        (so the phases need not count the piece again)."""
        stride = self.stride
        first = -(-pos // stride) * stride
        counted, at = 0, 0
        for offset in range(first, pos + len(data), stride):
            counted += data.count(b"\n", at, offset - pos)
            at = offset - pos
            if not self.offsets or self.offsets[-1] < offset:
                self.offsets.append(offset)
                self.counts.append(self.newlines + counted)
        return counted + data.count(b"\n", at)

    def _need_more(self) -> bool:
        phase = self.phase
        if phase in (_SKIP, _WINDOW):
            return True
        known = self.known
        if phase == _COUNT:
            return not (known is not None and known.complete)
        # stopped by the byte cap
        if not self.streamed:
            return not (known is not None and known.complete)
        return self.pos % self.chunk != 0 and self.pos >= self.validated_to

    # -- line work ------------------------------------------------------------------------
    def _process(self, data: bytes, i: int, total: int | None) -> None:
        """Run the phases over ``data[i:]``; ``total`` is the piece's line-feed count when known."""
        n = len(data)

        def count_from(at: int) -> int:
            if total is None or at > n // 2:
                return data.count(b"\n", at)
            return total - data.count(b"\n", 0, at) if at else total

        while i < n:
            phase = self.phase
            if phase == _SKIP:
                found = count_from(i)
                if found < self.to_skip:
                    self.to_skip -= found
                    self.newlines += found
                    return
                i = nth_index(data, b"\n", i, self.to_skip) + 1
                self.newlines += self.to_skip
                self.to_skip = 0
                self._enter_window()
            elif phase == _WINDOW:
                i = self._window(data, i)
            else:
                self.newlines += count_from(i)
                return

    def _after_line(self) -> None:
        collector = self.collector
        if collector.stopped:
            self.phase = _STOPPED
        elif collector.full:
            self.phase = _COUNT

    def _window(self, data: bytes, i: int) -> int:
        """Window lines from ``data[i:]``; returns where it stopped (the piece end, or the
        start of the first line it did not consume when the window is done)."""
        n = len(data)
        collector = self.collector
        head_max = self.head_max
        while i < n and self.phase == _WINDOW:
            if self.carry is not None:
                nl = data.find(b"\n", i)
                if nl < 0:
                    room = head_max - len(self.carry)
                    if room > 0:
                        self.carry += data[i : i + room]
                    self.carry_len += n - i
                    self.carry_last = data[n - 1]
                    return n
                room = head_max - len(self.carry)
                head = bytes(self.carry) + (data[i : min(nl, i + room)] if room > 0 else b"")
                length = self.carry_len + (nl - i)
                last = data[nl - 1] if nl > i else self.carry_last
                self.carry = None
                self._add_bytes_line(head, length, last)
                self.newlines += 1
                i = nl + 1
                self._after_line()
                continue
            end = min(n, i + self.region)
            last_nl = data.rfind(b"\n", i, end)
            if last_nl < 0:
                nl = data.find(b"\n", end) if end < n else -1
                if nl < 0:
                    self.carry = bytearray(data[i : i + head_max])
                    self.carry_len = n - i
                    self.carry_last = data[n - 1]
                    return n
                self._add_bytes_line(data[i : min(nl, i + head_max)], nl - i, data[nl - 1] if nl > i else -1)
                self.newlines += 1
                i = nl + 1
                self._after_line()
                continue
            lines = data[i:last_nl].decode("utf-8").split("\n")
            taken = collector.add_lines(lines)
            self.newlines += taken
            i = last_nl + 1 if taken == len(lines) else nth_index(data, b"\n", i, taken) + 1
            self._after_line()
        return i

    def _add_bytes_line(self, head: bytes, length: int, last: int) -> None:
        """Hand one line to the collector from its first bytes (``head``, the whole line when
        ``length`` bytes fit) and its last byte."""
        cap = self.window.max_line_length
        if length <= self.head_max:
            text = head.decode("utf-8")
        else:
            text = _decode(head, "strict", False)[0]  # a cut character at the end is dropped
        self.collector.add(text[: cap + 1], len(text), last == _CR)

    # -- end ----------------------------------------------------------------------------------
    def _finish(self, eof: bool) -> ScanOutcome:
        collector = self.collector
        result = collector.result
        known = self.known
        proven_end = False
        if eof:
            if self.pos >= self.validated_to and not (self.streamed and collector.stopped):
                # (a stream consumer that stopped never reads the end-of-file flush)
                self.validator.finish(self.newlines)
            proven_end = not self.validator.pending
            final = self.last_byte != _LF and self.pos > self.content_start
            if self.phase == _WINDOW and self.carry is not None and self.carry_len > 0:
                carry, self.carry = self.carry, None
                self._add_bytes_line(bytes(carry), self.carry_len, self.carry_last)
                self._after_line()
            if not collector.stopped:
                result.total_lines = self.newlines + (1 if final else 0)
        elif known is not None and known.complete and not collector.stopped:
            result.total_lines = known.total_lines or 0
        outcome = collector.finish(self.display)
        return ScanOutcome(outcome, self._learned(proven_end))

    def _learned(self, at_end: bool) -> LineIndex | None:
        """The extended index, when this scan proved more than ``known`` did."""
        known = self.known
        total: int | None = None
        if at_end:
            point: tuple[int, int, bytes, int] | None = (self.pos, self.newlines, b"", self.last_byte)
            total = self.newlines + (1 if (self.last_byte != _LF and self.pos > self.content_start) else 0)
        else:
            point = self.aligned
        if point is None or (known is not None and point[0] <= known.scanned_to and (known.complete or not at_end)):
            return None
        offsets = list(known.offsets) if known is not None else []
        counts = list(known.newlines) if known is not None else []
        for offset, count in zip(self.offsets, self.counts):
            if offset >= point[0]:
                break
            if not offsets or offsets[-1] < offset:
                offsets.append(offset)
                counts.append(count)
        return LineIndex(
            stride=self.stride,
            offsets=array("q", offsets),
            newlines=array("q", counts),
            content_start=self.content_start,
            scanned_to=point[0],
            newlines_scanned=point[1],
            pending=point[2],
            last_byte=point[3],
            total_lines=total,
        )


def _small_file(data: bytes, window: ReadWindow, *, display: str, foreign_boms: bool) -> WindowResult | None:
    """The whole file is in ``data``: decode it at once and split only the window's lines.
    ``None`` when it is not valid text (the general scan then finds the exact error, which
    for a streamed read may be none at all)."""
    check_head(data, foreign_boms=foreign_boms)
    try:
        text = data[3:].decode("utf-8") if data.startswith(BOM) else data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    size = len(data) - 3 if data.startswith(BOM) else len(data)
    return window_whole(text, window, display, size=size)


def scan_window(
    fd: int,
    window: ReadWindow,
    *,
    display: str,
    streamed: bool,
    foreign_boms: bool,
    signal: AbortSignal | None = None,
    index: LineIndex | None = None,
    size_hint: int = -1,
    chunk: int = STREAM_CHUNK,
    piece: int | None = None,
) -> ScanOutcome:
    """Window the regular file open at ``fd`` (see the module docstring for the contract).

    :param window: what to select (offset, limit, caps, profile flags)
    :param display: the display path, for the out-of-range message
    :param streamed: validation as a streamed read (``True``) or a whole-file read
    :param foreign_boms: D6: a UTF-16/32 byte-order mark is ``binary file`` (default profile)
    :param signal: checked before every read (``read aborted``)
    :param index: what an earlier scan of exactly this content proved (trusted as given)
    :param size_hint: the file size from its stat (bytes; ``-1`` unknown): sizes the first read
    :param chunk: validation alignment for ``streamed`` (bytes, at least 8192)
    :param piece: largest single read (bytes; default ``chunk``); tests use tiny pieces
    :return: the window and, when the scan learned something, the extended index
    :raises NotTextError: the file (or the part the contract covers) is not UTF-8 text
    :raises FsError: FS_NOT_FOUND for an out-of-range offset; FS_ABORTED ``read aborted``
    :raises OSError: from ``pread``
    """
    if chunk < NUL_SAMPLE:
        raise ValueError(f"chunk must be at least {NUL_SAMPLE} bytes")
    if index is None and 0 <= size_hint < chunk and piece is None:
        check_abort(signal, "read")
        data = os.pread(fd, size_hint + 1, 0)
        if len(data) <= size_hint:  # the whole file, in one read
            result = _small_file(data, window, display=display, foreign_boms=foreign_boms)
            if result is not None:
                return ScanOutcome(result, None, data)
    scan = _Scan(fd, window, display=display, streamed=streamed, foreign_boms=foreign_boms, signal=signal,
                 index=index, size_hint=size_hint, chunk=chunk, piece=min(piece or chunk, chunk))
    return scan.run()
