"""Text rules every provider shares (REFERENCE-SPEC §2.5, §2.7; DEVIATIONS D6). Pure: no I/O.

* Strict UTF-8, a leading BOM stripped, NUL in the first 8192 bytes = binary.
* Line endings: ``normalize`` (CRLF→LF), ``detect`` (the reference's dominant style from
  the first 4096 UTF-16 units), ``dominant_style`` (whole text, default profile),
  ``restore`` (re-apply a style).

Failures are raised as ``NotTextError(reason, detail)``; the provider turns it into
``FsError(FS_NOT_TEXT, 'cannot <verb> "<path>": <reason>')`` and, in the default profile,
appends `` (<detail>)`` (D6).
"""

from __future__ import annotations

import codecs
from typing import Literal

__all__ = (
    "BOM",
    "NUL_SAMPLE",
    "NotTextError",
    "TextStreamDecoder",
    "decode_text",
    "decode_utf8",
    "detect",
    "dominant_style",
    "foreign_bom",
    "foreign_bom_error",
    "invalid_error",
    "normalize",
    "nul_error",
    "restore",
    "utf8_size",
)

BOM = b"\xef\xbb\xbf"
NUL_SAMPLE = 8192
"""reads look for NUL bytes in this many leading bytes (edits scan the whole file)"""

LineStyle = Literal["LF", "CRLF"]

BINARY = "binary file"
INVALID = "invalid UTF-8 text"

_FOREIGN_BOMS = (  # UTF-32 first: its LE mark starts with the UTF-16LE one
    (b"\xff\xfe\x00\x00", "UTF-32LE"),
    (b"\x00\x00\xfe\xff", "UTF-32BE"),
    (b"\xff\xfe", "UTF-16LE"),
    (b"\xfe\xff", "UTF-16BE"),
)
_FOREIGN_MARKS = tuple(mark for mark, _ in _FOREIGN_BOMS)


class NotTextError(Exception):
    """The bytes are not UTF-8 text.

    :param reason: ``"binary file"`` or ``"invalid UTF-8 text"`` (the reference's words)
    :param detail: where and why, for the default profile's message (D6)
    """

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.detail = detail

    def message(self, detailed: bool) -> str:
        """``reason`` alone, or ``reason (detail)`` when ``detailed``."""
        return f"{self.reason} ({self.detail})" if detailed and self.detail else self.reason


def foreign_bom(head: bytes) -> str | None:
    """The encoding named by a UTF-16/UTF-32 byte-order mark at the start of ``head``, if any."""
    if not head.startswith(_FOREIGN_MARKS):
        return None
    for mark, name in _FOREIGN_BOMS:
        if head.startswith(mark):
            return name
    return None


def foreign_bom_error(head: bytes) -> NotTextError | None:
    """``binary file`` (D6 detail: the byte-order mark) when ``head`` starts with a UTF-16/32 BOM."""
    name = foreign_bom(head)
    if name is None:
        return None
    return NotTextError(BINARY, f"{name} byte-order mark; only UTF-8 is supported")


def nul_error(offset: int, newlines_before: int) -> NotTextError:
    """``binary file`` for a NUL at byte ``offset`` (D6 detail names offset and line)."""
    return NotTextError(BINARY, f"NUL byte at offset {offset}, line {newlines_before + 1}")


def invalid_error(raw: bytes, start: int, base: int, newlines_before: int, at_eof: bool, *,
                  what: str = "file") -> NotTextError:
    """``invalid UTF-8 text`` for the bad byte ``raw[start]`` at offset ``base + start`` of the
    ``what`` (``file``; ``text`` for input that is not a file)."""
    byte = raw[start] if start < len(raw) else 0
    where = f"byte 0x{byte:02X} at offset {base + start}, line {newlines_before + 1}"
    if at_eof:
        where += f"; the {what} ends inside a multi-byte character"
    return NotTextError(INVALID, where)


def decode_text(raw: bytes, *, nul_scan: int | None = NUL_SAMPLE, foreign_boms: bool = False) -> str:
    """Decode a whole file: strict UTF-8, one leading BOM stripped, no newline changes.

    :param raw: the file bytes
    :param nul_scan: how many leading bytes must be NUL-free (``None``: all of them, as
        edits require); a NUL there is ``binary file``, checked before decoding
    :param foreign_boms: report a UTF-16/32 byte-order mark as ``binary file`` first (D6)
    :raises NotTextError: ``binary file`` or ``invalid UTF-8 text``
    """
    if foreign_boms:
        err = foreign_bom_error(raw[:4])
        if err is not None:
            raise err
    nul = raw.find(b"\0") if nul_scan is None else raw.find(b"\0", 0, nul_scan)
    if nul >= 0:
        raise nul_error(nul, raw.count(b"\n", 0, nul))
    start = 3 if raw.startswith(BOM) else 0
    try:
        return raw[start:].decode("utf-8") if start else raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = start + exc.start
        at_eof = exc.end >= len(raw) - start and exc.reason.startswith("unexpected end")
        raise invalid_error(raw, bad, 0, raw.count(b"\n", 0, bad), at_eof) from None


def decode_utf8(raw: bytes) -> str:
    """Strict UTF-8 and nothing else (a BOM and NUL bytes are text here): input that is not a
    file, such as a command line's ``write`` content.

    :raises NotTextError: ``invalid UTF-8 text`` with the detail of D6 (byte, offset, line)
    """
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        at_eof = exc.end >= len(raw) and exc.reason.startswith("unexpected end")
        raise invalid_error(raw, exc.start, 0, raw.count(b"\n", 0, exc.start), at_eof, what="text") from None


class TextStreamDecoder:
    """Incremental twin of ``decode_text`` for streamed reads (§2.5 ``streamText``).

    Feed raw chunks in order; each call returns the decoded text of that chunk (possibly
    ``""``). ``finish()`` flushes and fails on a truncated final sequence.
    """

    def __init__(self, *, foreign_boms: bool = False) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")("strict")
        self._offset = 0  # raw bytes fed so far
        self._newlines = 0  # b"\n" in the raw bytes fed so far
        self._head = b""  # first bytes, until the BOM question is settled
        self._started = False
        self._foreign_boms = foreign_boms

    def feed(self, chunk: bytes) -> str:
        """Decode the next raw chunk. :raises NotTextError: as ``decode_text``."""
        if not self._started:
            self._head += chunk
            if len(self._head) < 4:
                return ""
            chunk, self._head = self._head, b""
            self._started = True
            return self._first(chunk, final=False)
        return self._decode(chunk, final=False)

    def finish(self) -> str:
        """Flush at end of input. :raises NotTextError: on a truncated final sequence."""
        if not self._started:
            chunk, self._head = self._head, b""
            self._started = True
            return self._first(chunk, final=True)
        return self._decode(b"", final=True)

    def _first(self, chunk: bytes, *, final: bool) -> str:
        if self._foreign_boms:
            err = foreign_bom_error(chunk[:4])
            if err is not None:
                raise err
        if chunk.startswith(BOM):
            self._offset = 3
            chunk = chunk[3:]
        return self._decode(chunk, final=final)

    def _decode(self, chunk: bytes, *, final: bool) -> str:
        if self._offset < NUL_SAMPLE and chunk:
            nul = chunk.find(b"\0", 0, NUL_SAMPLE - self._offset)
            if nul >= 0:
                raise nul_error(self._offset + nul, self._newlines + chunk.count(b"\n", 0, nul))
        pending = self._decoder.getstate()[0]
        try:
            text = self._decoder.decode(chunk, final)
        except UnicodeDecodeError as exc:
            data = pending + chunk
            base = self._offset - len(pending)
            newlines = self._newlines + data.count(b"\n", 0, exc.start) - pending.count(b"\n")
            at_eof = final and exc.reason.startswith("unexpected end")
            raise invalid_error(data, exc.start, base, newlines, at_eof) from None
        self._offset += len(chunk)
        self._newlines += chunk.count(b"\n")
        return text


def utf8_size(text: str) -> int:
    """Bytes of ``text`` in UTF-8 (a lone surrogate counts 3, as the U+FFFD it is written as),
    measured in bounded extra memory: ASCII text costs one ``isascii``."""
    if text.isascii():
        return len(text)
    step = 1 << 20
    return sum(len(text[i : i + step].encode("utf-8", "surrogatepass")) for i in range(0, len(text), step))


# -- line endings (§2.7) ------------------------------------------------------------------

def normalize(text: str) -> str:
    """CRLF → LF; a lone CR stays. A text without CR is returned itself (``in`` is one
    ``memchr``; ``replace`` would scan for the pair)."""
    return text.replace("\r\n", "\n") if "\r" in text else text


def _utf16_prefix(text: str, units: int) -> str:
    """The longest prefix of ``text`` that is at most ``units`` UTF-16 code units long,
    plus a dangling high half as the reference would slice it (never matters for counts)."""
    if len(text) <= units // 2:
        return text
    count = 0
    for i, ch in enumerate(text):
        count += 2 if ord(ch) > 0xFFFF else 1
        if count >= units:
            return text[: i + 1]
    return text


def detect(text: str) -> LineStyle:
    """The reference's dominant style: CRLF iff CRLFs outnumber bare LFs in the first
    4096 UTF-16 units (ties and no newline → LF)."""
    sample = _utf16_prefix(text, 4096)
    crlf = sample.count("\r\n")
    lf = sample.count("\n") - crlf
    return "CRLF" if crlf > lf else "LF"


def dominant_style(text: str) -> LineStyle:
    """Like ``detect`` but over the whole text (default profile, DEVIATIONS D2/D4)."""
    crlf = text.count("\r\n")
    lf = text.count("\n") - crlf
    return "CRLF" if crlf > lf else "LF"


def restore(text: str, style: LineStyle) -> str:
    """Apply ``style``: LF leaves ``text`` as is; CRLF normalizes then turns every LF into CRLF."""
    if style == "LF":
        return text
    return normalize(text).replace("\n", "\r\n")
