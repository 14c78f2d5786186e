"""Literal edits streamed over raw bytes in bounded memory (REFERENCE-SPEC §2.11 steps 5–7;
DEVIATIONS D2; tracker issue 5). Pure: no I/O.

The byte-stream twin of ``literal_edit.plan_edit`` for files too big to hold in memory. The
caller feeds the file's content (valid UTF-8, the BOM already removed) twice, in pieces of
any size — pieces may split a CRLF pair, a multi-byte character or a match:

1. ``EditScan`` counts the non-overlapping occurrences of the LF-normalized ``old_string``
   in the LF-normalized content (UTF-8 is self-synchronizing, so byte matches are exactly
   character matches) and gathers what the rewrite needs: the CRLF and LF counts (the
   default profile's dominant style) and the first characters (the reference's ``detect``).
2. ``EditRewriter`` produces the new content piece by piece, byte for byte what
   ``plan_edit(...).text`` encodes to (lone surrogates of ``new_string`` become U+FFFD as the
   provider's encoder makes them): the default profile replaces only the raw span of each
   match (D2); the reference profile rewrites the normalized text in its detected style.

Memory stays bounded by the piece size plus the lengths of the two strings. Not here: the
NUL and UTF-8 checks (``byte_text``), the ambiguity and not-found decisions (the caller
compares ``EditScan.matches``), I/O, the BOM (the provider writes it or not, D1).
"""

from __future__ import annotations

import codecs
from typing import Literal

from .text import detect

__all__ = ("DETECT_HEAD_BYTES", "EditRewriter", "EditScan")

DETECT_HEAD_BYTES = 4 * 4096 + 4
"""content bytes enough for the reference's 4096-UTF-16-unit ``detect`` sample"""

LineStyle = Literal["LF", "CRLF"]


def _has_border(needle: bytes) -> bool:
    """Can two occurrences of ``needle`` overlap (does it have a proper border)?"""
    return any(needle[:k] == needle[-k:] for k in range(1, len(needle)))


class _CrHold:
    """Splits a raw stream into segments that never end in ``"\\r"`` (it is held back until
    the next byte is known), so each segment normalizes on its own."""

    __slots__ = ("held",)

    def __init__(self) -> None:
        self.held = False

    def take(self, piece: bytes, *, final: bool = False) -> bytes:
        if self.held:
            piece = b"\r" + piece
        self.held = not final and piece.endswith(b"\r")
        return piece[:-1] if self.held else piece


def _normalize(seg: bytes) -> bytes:
    return seg.replace(b"\r\n", b"\n") if b"\r" in seg else seg


def _raw_span(raw: bytes, raw_pos: int, length: int) -> int:
    """``literal_edit.raw_span`` on bytes: the raw index reached by advancing ``length``
    normalized bytes from ``raw_pos`` (a CRLF pair is one normalized byte, never split)."""
    if b"\r" not in raw:
        return raw_pos + length
    crlf = 0
    while True:
        seen = raw.count(b"\r\n", raw_pos, raw_pos + length + crlf)
        if seen == crlf:
            break
        crlf = seen
    end = raw_pos + length + crlf
    if 0 < end < len(raw) and raw[end - 1] == 0x0D and raw[end] == 0x0A:
        end += 1
    return end


class _Matcher:
    """Leftmost non-overlapping occurrences of a needle in a stream, piece by piece.

    A stream is matched piece by piece without joining pieces: the unsettled ``tail`` of the
    previous piece (after its last match, at most ``size - 1`` bytes) is only checked for a
    match that starts in it and ends in the next piece (``boundary``).
    """

    __slots__ = ("needle", "size", "overlaps")

    def __init__(self, needle: bytes) -> None:
        self.needle = needle
        self.size = len(needle)
        self.overlaps = _has_border(needle)

    def boundary(self, tail: bytes, piece: bytes) -> int:
        """Start (in ``tail``) of a match that begins in ``tail`` and ends in ``piece``, or -1."""
        if not tail:
            return -1
        at = (tail + piece[: self.size - 1]).find(self.needle)
        return at if at < len(tail) else -1

    def count(self, buf: bytes, start: int) -> tuple[int, int]:
        """(matches in ``buf[start:]``, index after the last one, or ``start``)."""
        if not self.overlaps:
            found = buf.count(self.needle, start)
            return found, (buf.rfind(self.needle, start) + self.size if found else start)
        found, pos = 0, start
        needle, size = self.needle, self.size
        while True:
            at = buf.find(needle, pos)
            if at < 0:
                return found, pos
            found += 1
            pos = at + size

    def positions(self, buf: bytes, start: int) -> list[int]:
        """Start indexes of the matches in ``buf[start:]``."""
        out: list[int] = []
        needle, size = self.needle, self.size
        at = buf.find(needle, start)
        while at >= 0:
            out.append(at)
            at = buf.find(needle, at + size)
        return out

    def keep_from(self, buf: bytes, resume: int) -> int:
        """Where the unsettled tail of ``buf`` starts: after the last match, and no earlier
        than the last position where a match could still begin once more bytes arrive."""
        return max(resume, len(buf) - self.size + 1, 0)


class EditScan:
    """Pass 1: occurrences and line-ending statistics of the content.

    :param old: the LF-normalized ``old_string`` as UTF-8 (non-empty)
    :param count_lines: count line feeds from the start; ``False`` counts them only from the
        first segment holding a CR on (the count matters only to a file with CRLF pairs):
        the caller adds the line feeds of the first ``uncounted`` content bytes if it needs them
    """

    def __init__(self, old: bytes, *, count_lines: bool = True) -> None:
        if not old:
            raise ValueError("old must not be empty")
        self._matcher = _Matcher(old)
        self._hold = _CrHold()
        self._tail = b""
        self._counting = count_lines
        self.matches = 0
        """non-overlapping occurrences in the normalized content so far"""
        self.crlf = 0
        """CRLF pairs in the raw content"""
        self.newlines = 0
        """LF bytes in the raw content (bare and in pairs), after the first ``uncounted`` bytes"""
        self.uncounted = 0
        """leading content bytes whose line feeds were not counted (``count_lines=False``)"""
        self.head = bytearray()
        """the first ``DETECT_HEAD_BYTES`` content bytes"""

    def feed(self, piece: bytes) -> None:
        """Account for the next raw content bytes."""
        if len(self.head) < DETECT_HEAD_BYTES:
            self.head += piece[: DETECT_HEAD_BYTES - len(self.head)]
        self._segment(self._hold.take(piece))

    def finish(self) -> None:
        """End of the content (flushes a held CR)."""
        self._segment(self._hold.take(b"", final=True))
        self._tail = b""

    def _segment(self, seg: bytes) -> None:
        if not seg:
            return
        if b"\r" in seg:
            norm = seg.replace(b"\r\n", b"\n")
            self.crlf += len(seg) - len(norm)
            self._counting = True
        else:
            norm = seg
        if self._counting:
            self.newlines += norm.count(b"\n")
        else:
            self.uncounted += len(seg)
        matcher = self._matcher
        tail = self._tail
        if len(norm) < matcher.size:  # too short to settle anything on its own
            buf = tail + norm
            found, resume = matcher.count(buf, 0)
            self.matches += found
            self._tail = buf[matcher.keep_from(buf, resume):]
            return
        start = 0
        at = matcher.boundary(tail, norm)
        if at >= 0:
            self.matches += 1
            start = at + matcher.size - len(tail)
        found, resume = matcher.count(norm, start)
        self.matches += found
        self._tail = norm[matcher.keep_from(norm, resume):]

    def style(self, keep_bytes: bool) -> LineStyle:
        """The line-ending style of the rewrite: the reference's ``detect`` over the first
        characters (``keep_bytes=False``), or the whole content's dominant style (D2; needs
        every line feed counted when the content has CRLF pairs)."""
        if not keep_bytes:
            head = codecs.utf_8_decode(bytes(self.head), "surrogatepass", False)[0]
            return detect(head)
        return "CRLF" if self.crlf > self.newlines - self.crlf else "LF"


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class _SurrogateFix:
    """Output stage for a ``new_string`` with lone surrogates (encoded ``surrogatepass``):
    pairs that meet across replacements are joined, lone halves become U+FFFD, exactly as
    encoding the whole text would (``fsio.encode_text``)."""

    def __init__(self) -> None:
        self._bytes = b""
        self._high = ""

    def feed(self, data: bytes, *, final: bool = False) -> bytes:
        data = self._bytes + data
        text, used = codecs.utf_8_decode(data, "surrogatepass", final)
        self._bytes = data[used:]
        text = self._high + text
        self._high = ""
        if not final and text and "\ud800" <= text[-1] <= "\udbff":
            self._high, text = text[-1], text[:-1]
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace").encode("utf-8")


class EditRewriter:
    """Pass 2: the edited content, piece by piece.

    :param old: the LF-normalized ``old_string`` (non-empty)
    :param new: the LF-normalized ``new_string``
    :param keep_bytes: ``True``: replace only the matched raw spans (D2); ``False``: the
        reference's whole-text rewrite
    :param style: from ``EditScan.style(keep_bytes)``
    :param has_crlf: the content holds at least one CRLF pair (``EditScan.crlf > 0``)
    """

    def __init__(self, old: str, new: str, *, keep_bytes: bool, style: LineStyle, has_crlf: bool) -> None:
        self._matcher = _Matcher(old.encode("utf-8", "surrogatepass"))
        self._keep_bytes = keep_bytes
        if keep_bytes:
            replacement = new.replace("\n", "\r\n") if has_crlf and style == "CRLF" else new
            self._crlf_out = False
        else:
            replacement = new
            self._crlf_out = style == "CRLF"
        self._replacement = replacement.encode("utf-8", "surrogatepass")
        self._fix = None if _encodable(new) else _SurrogateFix()
        self._hold = _CrHold()
        self._raw = b""  # keep_bytes: raw bytes not yet written (never ends with a held CR)
        self._norm = b""  # the normalized form of ``_raw`` (or, for the reference, the tail)
        self._out_cr = False  # reference CRLF output: a CR held back
        self.matches = 0
        """replacements made so far"""

    def feed(self, piece: bytes) -> list[bytes | memoryview]:
        """The output that follows from the next raw content bytes, as buffers to write in
        order (views into ``piece`` where the content is unchanged: no copies)."""
        return self._emit(self._step(self._hold.take(piece)), final=False)

    def finish(self) -> list[bytes | memoryview]:
        """The remaining output at the end of the content."""
        out = self._step(self._hold.take(b"", final=True))
        out.append(self._raw if self._keep_bytes else self._norm)
        self._raw = self._norm = b""
        return self._emit(out, final=True)

    def _step(self, seg: bytes) -> list[bytes | memoryview]:
        out: list[bytes | memoryview] = []
        if not seg:
            return out
        matcher = self._matcher
        size = matcher.size
        keep_bytes = self._keep_bytes
        norm = _normalize(seg)
        raw_tail, norm_tail = self._raw, self._norm
        if len(norm) < size:  # too short to settle anything on its own: join with the tail
            seg = raw_tail + seg if keep_bytes else b""
            norm = norm_tail + norm
            raw_tail = norm_tail = b""
        # a match that starts in the tail and ends in this segment
        norm_cursor = raw_cursor = 0
        at = matcher.boundary(norm_tail, norm)
        if at >= 0:
            out.append(raw_tail[: _raw_span(raw_tail, 0, at)] if keep_bytes else norm_tail[:at])
            out.append(self._replacement)
            self.matches += 1
            norm_cursor = at + size - len(norm_tail)
            raw_cursor = _raw_span(seg, 0, norm_cursor) if keep_bytes else norm_cursor
        elif norm_tail:
            out.append(raw_tail if keep_bytes else norm_tail)
        source = memoryview(seg) if keep_bytes else memoryview(norm)
        for at in matcher.positions(norm, norm_cursor):
            if keep_bytes:
                raw_start = _raw_span(seg, raw_cursor, at - norm_cursor)
                raw_end = _raw_span(seg, raw_start, size)
            else:
                raw_start, raw_end = at, at + size
            out.append(source[raw_cursor:raw_start])
            out.append(self._replacement)
            raw_cursor, norm_cursor = raw_end, at + size
            self.matches += 1
        keep = matcher.keep_from(norm, norm_cursor)
        raw_keep = _raw_span(seg, raw_cursor, keep - norm_cursor) if keep_bytes else keep
        out.append(source[raw_cursor:raw_keep])
        self._raw = seg[raw_keep:] if keep_bytes else b""
        self._norm = norm[keep:]
        return out

    def _emit(self, pieces: list[bytes | memoryview], *, final: bool) -> list[bytes | memoryview]:
        if not self._crlf_out and self._fix is None:
            return pieces
        data = b"".join(pieces)
        if self._crlf_out:
            # restore(edited, "CRLF"): normalize, then every LF becomes CRLF
            if self._out_cr:
                data = b"\r" + data
            self._out_cr = not final and data.endswith(b"\r")
            if self._out_cr:
                data = data[:-1]
            if b"\r" in data:
                data = data.replace(b"\r\n", b"\n")
            data = data.replace(b"\n", b"\r\n")
        if self._fix is not None:
            data = self._fix.feed(data, final=final)
        return [data]
