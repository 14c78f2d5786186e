"""The streamed literal matcher: ``literal_edit`` over raw bytes in bounded memory
(REFERENCE-SPEC §2.11 steps 5–7; DEVIATIONS D2). Pure: no I/O.

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
compares ``EditScan.matches``, or ``EditScan.occurrences`` for the default profile's
one-match rule, D15), I/O, the BOM (the provider writes it or not, D1). The local provider
drives it from ``dsh_fs.fs_local.large_edit``.

Cost: linear in the content, whatever the number of matches (DEVIATIONS D15, D16).
Counting and, where an occurrence in the raw bytes is one in the normalized text (no CR in
the content, an ``old_string`` without line breaks, or a CRLF-only file: ``EditRewriter``'s
*direct* mode) or the whole text is rewritten (the reference profile), replacing are
``bytes`` methods over each piece; only an ``old_string`` with line breaks in a file mixing
line-break kinds (or with lone CRs) has its matches mapped back to raw spans one by one (a
walk linear in the bytes it crosses).
"""

from __future__ import annotations

import codecs
from typing import Literal

from ..core.jsonvalue import well_formed
from .occurrences import borders, count_overlapping, greedy_end
from .text import detect

__all__ = ("DETECT_HEAD_BYTES", "EditRewriter", "EditScan", "encodable")

DETECT_HEAD_BYTES = 4 * 4096 + 4
"""content bytes enough for the reference's 4096-UTF-16-unit ``detect`` sample"""

LineStyle = Literal["LF", "CRLF"]


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
    normalized bytes from ``raw_pos`` (a CRLF pair is one normalized byte, never split).
    Linear in the span: each byte is counted once."""
    end = raw_pos + length
    pairs = raw.count(b"\r\n", raw_pos, end)
    while pairs:
        reach = end + pairs
        pairs = raw.count(b"\r\n", max(end - 1, raw_pos), reach)
        end = reach
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
        self.overlaps = bool(borders(needle))

    def boundary(self, tail: bytes, piece: bytes) -> int:
        """Start (in ``tail``) of a match that begins in ``tail`` and ends in ``piece``, or -1."""
        if not tail:
            return -1
        at = (tail + piece[: self.size - 1]).find(self.needle)
        return at if at < len(tail) else -1

    def count(self, buf: bytes, start: int) -> tuple[int, int]:
        """(matches in ``buf[start:]``, index after the last one, or ``start``)."""
        return greedy_end(buf, self.needle, start, overlaps=self.overlaps)

    def scan(self, buf: bytes, start: int, want: int) -> tuple[int, int, list[int] | None]:
        """(matches in ``buf[start:]``, index after the last one or ``start``, their start
        indexes — or ``None`` when there are more than ``want``). ``find`` is faster than
        ``count`` in CPython, so a piece with few matches is scanned once with ``find``."""
        needle, size = self.needle, self.size
        at = buf.find(needle, start)
        if at < 0:
            return 0, start, []
        found: list[int] = []
        pos = start
        while at >= 0 and len(found) <= want:
            found.append(at)
            pos = at + size
            at = buf.find(needle, pos)
        if at < 0:
            return len(found), pos, found
        more, pos = self.count(buf, at)  # many matches: count the rest without positions
        return len(found) + more, pos, None

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
    :param record: remember the positions of up to this many matches (``positions``), so the
        rewrite need not search again
    :param overlapping: also count the occurrences that overlap others (``occurrences``, D15)
    :param exact: count every match; ``False``: once more than ``record`` are found (or from
        the start, without ``record``), a piece adds one to ``matches`` when it holds any, found
        with one ``rfind`` instead of a count — ``matches`` is then a lower bound, zero exactly
        when there is no match (all a ``replace_all`` needs whose result size the count does
        not change). A needle that can overlap itself is always counted (where the last
        match ends depends on every earlier one).
    """

    def __init__(self, old: bytes, *, count_lines: bool = True, record: int = 0, overlapping: bool = False,
                 exact: bool = True) -> None:
        if not old:
            raise ValueError("old must not be empty")
        self._matcher = _Matcher(old)
        self._hold = _CrHold()
        self._tail = b""
        self._counting = count_lines
        self._overlapping = overlapping and self._matcher.overlaps  # else occurrences == matches
        self._otail = b""  # the last len(old) - 1 normalized bytes, for overlapping occurrences
        self._occurrences = 0
        self.matches = 0
        """non-overlapping occurrences in the normalized content so far"""
        self.crlf = 0
        """CRLF pairs in the raw content"""
        self.has_cr = False
        """the raw content holds a CR (paired or lone): without one, raw and normalized
        content are the same bytes and ``positions`` are raw offsets too"""
        self.cr = 0
        """CR bytes in the raw content (paired and lone)"""
        self.newlines = 0
        """LF bytes in the raw content (bare and in pairs), after the first ``uncounted`` bytes"""
        self.uncounted = 0
        """leading content bytes whose line feeds were not counted (``count_lines=False``)"""
        self.head = bytearray()
        """the first ``DETECT_HEAD_BYTES`` content bytes"""
        self.positions: list[int] | None = [] if record > 0 else None
        """offsets of the matches in the normalized content (for ``EditRewriter``); ``None``
        when not recorded or more than ``record``"""
        self._record = record
        self._exact = exact or self._matcher.overlaps
        self._offset = 0  # normalized bytes before the current segment

    def feed(self, piece: bytes) -> None:
        """Account for the next raw content bytes."""
        if len(self.head) < DETECT_HEAD_BYTES:
            self.head += piece[: DETECT_HEAD_BYTES - len(self.head)]
        self._segment(self._hold.take(piece))

    def finish(self) -> None:
        """End of the content (flushes a held CR)."""
        self._segment(self._hold.take(b"", final=True))
        self._tail = self._otail = b""

    @property
    def occurrences(self) -> int:
        """Occurrences in the normalized content so far, overlapping ones included when the
        scan was asked to count them (``overlapping``), else ``matches``."""
        return self._occurrences if self._overlapping else self.matches

    def _segment(self, seg: bytes) -> None:
        if not seg:
            return
        if b"\r" in seg:
            norm = seg.replace(b"\r\n", b"\n")
            self.crlf += len(seg) - len(norm)
            self.cr += seg.count(b"\r")
            self.has_cr = self._counting = True
        else:
            norm = seg
        if self._counting:
            self.newlines += norm.count(b"\n")
        else:
            self.uncounted += len(seg)
        matcher = self._matcher
        if self._overlapping:  # every occurrence ends in exactly one of these buffers
            buf = self._otail + norm
            self._occurrences += count_overlapping(buf, matcher.needle)
            self._otail = buf[max(0, len(buf) - matcher.size + 1) :]
        tail = self._tail
        base = self._offset - len(tail)  # normalized offset of tail[0]
        self._offset += len(norm)
        if len(norm) < matcher.size:  # too short to settle anything on its own
            buf = tail + norm
            self._found(buf, 0, base)
            return
        start = 0
        at = matcher.boundary(tail, norm)
        if at >= 0:
            self.matches += 1
            self._note([base + at])
            start = at + matcher.size - len(tail)
        self._found(norm, start, base + len(tail))

    def _found(self, buf: bytes, start: int, base: int) -> None:
        """Count (and note) the matches in ``buf[start:]``; keep its unsettled tail."""
        matcher = self._matcher
        if self.positions is None and not self._exact:
            last = buf.rfind(matcher.needle, start)  # no border: the last occurrence is a match
            found, resume = (0, start) if last < 0 else (1, last + matcher.size)
        elif self.positions is None:
            found, resume = matcher.count(buf, start)
        else:
            found, resume, where = matcher.scan(buf, start, self._record - len(self.positions))
            self._note(None if where is None else [base + at for at in where])
        self.matches += found
        self._tail = buf[matcher.keep_from(buf, resume):]

    def _note(self, where: list[int] | None) -> None:
        if self.positions is None:
            return
        if where is None or len(self.positions) + len(where) > self._record:
            self.positions = None
        else:
            self.positions.extend(where)

    @property
    def crlf_only(self) -> bool:
        """Every line break of the content is a CRLF pair and every CR is in one (a Windows
        file; needs every line feed counted)."""
        return self.crlf > 0 and self.cr == self.crlf == self.newlines

    def style(self, keep_bytes: bool) -> LineStyle:
        """The line-ending style of the rewrite: the reference's ``detect`` over the first
        characters (``keep_bytes=False``), or the whole content's dominant style (D2; needs
        every line feed counted when the content has CRLF pairs)."""
        if not keep_bytes:
            head = codecs.utf_8_decode(bytes(self.head), "surrogatepass", False)[0]
            return detect(head)
        return "CRLF" if self.crlf > self.newlines - self.crlf else "LF"


def encodable(text: str) -> bool:
    """``True`` when ``text`` encodes to UTF-8 as is (no lone surrogates to replace)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class _SurrogateFix:
    """Output stage for a ``new_string`` with lone surrogates (encoded ``surrogatepass``):
    pairs that meet across replacements are joined, lone halves become U+FFFD, exactly as
    encoding the whole text would (``provider_rules.encode_text``)."""

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
        return well_formed(text).encode("utf-8")


class EditRewriter:
    """Pass 2: the edited content, piece by piece.

    :param old: the LF-normalized ``old_string`` (non-empty)
    :param new: the LF-normalized ``new_string``
    :param keep_bytes: ``True``: replace only the matched raw spans (D2); ``False``: the
        reference's whole-text rewrite
    :param style: from ``EditScan.style(keep_bytes)``
    :param has_crlf: the content holds at least one CRLF pair (``EditScan.crlf > 0``)
    :param has_cr: the content holds a CR at all (``EditScan.has_cr``)
    :param crlf_only: every line break is a CRLF pair and every CR is in one (``EditScan.crlf_only``)
    :param positions: ``EditScan.positions`` of the same content: the matches are taken from
        it instead of being searched for again (only where they must be mapped to raw spans)
    :param count: count every replacement (``matches``); ``False`` spares the one count a
        piece would need only for that (a replacement as long as the needle, in *direct* or
        *whole* mode: the output's length does not tell how many were made), and ``counted``
        then says whether ``matches`` is exact. The output is the same either way.

    Three ways to the same bytes, chosen once: *direct* (D2, and an occurrence in the raw
    bytes is one in the normalized text: no CR in the content; or an ``old`` with no line
    break that does not end with a CR; or a CRLF-only file, where ``old`` is searched with
    its line breaks as CRLF) replaces in the raw bytes; *whole* (the reference) replaces in
    the normalized text and restores the style; *mapped* (D2 otherwise: line breaks of both
    kinds or lone CRs) maps each match back to its raw span.
    """

    def __init__(self, old: str, new: str, *, keep_bytes: bool, style: LineStyle, has_crlf: bool,
                 has_cr: bool = True, crlf_only: bool = False, positions: list[int] | None = None,
                 count: bool = True) -> None:
        simple = "\n" not in old and not old.endswith("\r")
        self._direct = keep_bytes and (not has_cr or simple or (crlf_only and not old.endswith("\r")))
        self._mapped = keep_bytes and not self._direct
        raw_old = old.replace("\n", "\r\n") if self._direct and has_cr and not simple else old
        self._matcher = _Matcher(raw_old.encode("utf-8", "surrogatepass"))
        if keep_bytes:
            replacement = new.replace("\n", "\r\n") if has_crlf and style == "CRLF" else new
            self._crlf_out = False
        else:
            replacement = new
            self._crlf_out = style == "CRLF"
        self._replacement = replacement.encode("utf-8", "surrogatepass")
        self._fix = None if encodable(new) else _SurrogateFix()
        self._hold = _CrHold()
        self._raw = b""  # mapped: raw bytes not yet written (never ends with a held CR)
        self._norm = b""  # mapped: the normalized form of ``_raw``; else the unsettled tail
        self._out_cr = False  # reference CRLF output: a CR held back
        self._known = positions
        self._next = 0  # index of the next known position
        self._base = 0  # normalized offset of ``_norm[0]``
        self._count = count
        self.matches = 0
        """replacements made so far (all of them while ``counted``)"""
        self.counted = True
        """``matches`` counts every replacement made (always, unless made with ``count=False``)"""

    def planned_size(self, content_bytes: int, scan: EditScan) -> tuple[int, bool]:
        """(bytes this rewrite will produce for a content of ``content_bytes`` bytes that
        ``scan`` read, exact?) — before producing any (DEVIATIONS D16). *mapped* gives an
        upper bound (a matched span is longer than ``old`` by the CRLF pairs inside it);
        *whole* is exact except where lone CRs stand next to line breaks (the reference's
        rewrite merges such pairs: at most two bytes a match, plus one per "\\r\\r\\n")."""
        grow = len(self._replacement) - self._matcher.size
        if self._direct:
            return content_bytes + scan.matches * grow, True
        if self._mapped:
            return content_bytes + scan.matches * grow, False
        size = content_bytes - scan.crlf + scan.matches * grow
        if self._crlf_out:
            size += scan.newlines + scan.matches * (self._replacement.count(b"\n") - self._matcher.needle.count(b"\n"))
        return size, True

    def feed(self, piece: bytes) -> list[bytes | memoryview]:
        """The output that follows from the next raw content bytes, as buffers to write in
        order (views where the content is unchanged: no copies)."""
        if self._direct:
            return self._emit(self._replace(piece), final=False)
        seg = self._hold.take(piece)
        return self._emit(self._map(seg) if self._mapped else self._replace(_normalize(seg)), final=False)

    def finish(self) -> list[bytes | memoryview]:
        """The remaining output at the end of the content."""
        if self._direct:
            out: list[bytes | memoryview] = []
        else:
            seg = self._hold.take(b"", final=True)
            out = self._map(seg) if self._mapped else self._replace(_normalize(seg))
        out.append(self._raw if self._mapped else self._norm)
        self._raw = self._norm = b""
        return self._emit(out, final=True)

    def _replace(self, seg: bytes) -> list[bytes | memoryview]:
        """*direct* and *whole*: ``seg`` continues the text being matched (raw or normalized);
        everything up to the point where no further match can begin goes out, replaced (one
        ``bytes.replace`` over the piece; the unsettled tail is the last ``len(old) - 1``
        bytes at most)."""
        if not seg:
            return []
        matcher = self._matcher
        needle, size = matcher.needle, matcher.size
        out: list[bytes | memoryview] = []
        tail = self._norm
        start = 0
        if tail:
            if len(seg) < size - 1:  # too short to settle the tail: match the two as one
                seg = tail + seg
            else:
                at = matcher.boundary(tail, seg)
                if at >= 0:  # the next match starts in the tail and ends in this piece
                    out += [tail[:at], self._replacement]
                    self.matches += 1
                    start = at + size - len(tail)
                else:
                    out.append(tail)
        if matcher.overlaps:
            found, end = matcher.count(seg, start)
        else:
            last = seg.rfind(needle, start)
            found, end = -1, (last + size if last >= 0 else start)
        cut = max(end, len(seg) - size + 1, start)  # no match ends after ``cut``
        self._norm = seg[cut:]
        body = seg[start:] if start else seg
        if end == start:
            out.append(memoryview(body)[: cut - start])
            return out
        replaced = body.replace(needle, self._replacement)
        grow = len(self._replacement) - size
        if found < 0:
            if grow:
                found = (len(replaced) - len(body)) // grow
            elif self._count:
                found = body.count(needle)
            else:  # only a count would tell: not asked for
                found, self.counted = 0, False
        self.matches += found
        out.append(memoryview(replaced)[: len(replaced) - (len(seg) - cut)])
        return out

    def _map(self, seg: bytes) -> list[bytes | memoryview]:
        """*mapped*: match the normalized ``seg``, replace each match's raw span."""
        out: list[bytes | memoryview] = []
        if not seg:
            return out
        matcher = self._matcher
        size = matcher.size
        norm = _normalize(seg)
        raw_tail, norm_tail = self._raw, self._norm
        base = self._base  # normalized offset of norm_tail[0]
        if len(norm) < size:  # too short to settle anything on its own: join with the tail
            seg = raw_tail + seg
            norm = norm_tail + norm
            raw_tail = norm_tail = b""
        seg_base = base + len(norm_tail)  # normalized offset of norm[0]
        known = self._known
        # a match that starts in the tail and ends in this segment
        norm_cursor = raw_cursor = 0
        if known is None:
            at = matcher.boundary(norm_tail, norm)
        elif self._next < len(known) and known[self._next] < seg_base:
            at = known[self._next] - base
            self._next += 1
        else:
            at = -1
        if at >= 0:
            out.append(raw_tail[: _raw_span(raw_tail, 0, at)])
            out.append(self._replacement)
            self.matches += 1
            norm_cursor = at + size - len(norm_tail)
            raw_cursor = _raw_span(seg, 0, norm_cursor)
        elif raw_tail:
            out.append(raw_tail)
        source = seg  # slices of bytes are copies, but not objects the garbage collector tracks
        if known is None:
            starts = matcher.positions(norm, norm_cursor)
        else:
            limit = seg_base + len(norm) - size
            first = self._next
            while self._next < len(known) and known[self._next] <= limit:
                self._next += 1
            starts = [p - seg_base for p in known[first : self._next]]
        for at in starts:
            raw_start = _raw_span(seg, raw_cursor, at - norm_cursor)
            raw_end = _raw_span(seg, raw_start, size)
            out.append(source[raw_cursor:raw_start])
            out.append(self._replacement)
            raw_cursor, norm_cursor = raw_end, at + size
            self.matches += 1
        keep = matcher.keep_from(norm, norm_cursor)
        raw_keep = _raw_span(seg, raw_cursor, keep - norm_cursor)
        out.append(source[raw_cursor:raw_keep])
        self._raw = seg[raw_keep:]
        self._norm = norm[keep:]
        self._base = seg_base + keep
        return [b"".join(out)] if len(out) > 2 else out

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
