"""Text rules applied to raw bytes, incrementally (REFERENCE-SPEC §2.5; DEVIATIONS D6). Pure: no I/O.

The byte-level twin of ``text.decode_text`` / ``text.TextStreamDecoder`` for providers that scan
files without decoding them: ``check_head`` applies the byte-order-mark and NUL rules to the
first bytes of a file, ``Utf8Validator`` checks strict UTF-8 piece by piece — an ASCII piece
costs one ``bytes.isascii()`` and no decoding — and raises the very ``NotTextError`` (reason,
offset, line, end-of-file note) that decoding the same bytes would raise. Pieces may be split
anywhere, even inside a multi-byte character (the partial sequence is carried over).
"""

from __future__ import annotations

import codecs

from .text import NUL_SAMPLE, foreign_bom_error, invalid_error, nul_error

__all__ = ("Utf8Validator", "check_head")

_decode = codecs.utf_8_decode


def check_head(head: bytes, *, foreign_boms: bool) -> None:
    """Apply the head rules to the first bytes of a file (at least ``NUL_SAMPLE`` of them,
    or the whole file when shorter): a UTF-16/32 byte-order mark (only when
    ``foreign_boms``, D6), then a NUL byte among the first ``NUL_SAMPLE`` bytes.

    :raises NotTextError: ``binary file`` (with its D6 detail)
    """
    if foreign_boms:
        err = foreign_bom_error(head[:4])
        if err is not None:
            raise err
    nul = head.find(b"\0", 0, NUL_SAMPLE)
    if nul >= 0:
        raise nul_error(nul, head.count(b"\n", 0, nul))


class Utf8Validator:
    """Strict UTF-8 validation of consecutive pieces of a file.

    :param offset: file offset of the first byte the next ``feed`` gets (after ``pending``)
    :param pending: an incomplete multi-byte sequence that ended the previous piece (resume
        a validation that stopped there)
    """

    __slots__ = ("offset", "pending")

    def __init__(self, *, offset: int = 0, pending: bytes = b"") -> None:
        self.offset = offset
        """file offset just after the last byte fed"""
        self.pending = pending
        """the trailing bytes of an incomplete character (at most 3)"""

    def feed(self, piece: bytes, newlines_before: int) -> None:
        """Validate the next ``piece`` (the bytes at ``offset``).

        :param newlines_before: ``b"\\n"`` bytes in the file before ``piece`` (for the D6 line)
        :raises NotTextError: ``invalid UTF-8 text`` at the first invalid byte
        """
        pending = self.pending
        if not pending and piece.isascii():
            self.offset += len(piece)
            return
        data = pending + piece if pending else piece
        try:
            _, consumed = _decode(data, "strict", False)
        except UnicodeDecodeError as exc:
            base = self.offset - len(pending)
            raise invalid_error(data, exc.start, base, newlines_before + data.count(b"\n", 0, exc.start), False) from None
        self.pending = data[consumed:]
        self.offset += len(piece)

    def finish(self, newlines_before: int) -> None:
        """End of file: an incomplete final character is an error.

        :param newlines_before: ``b"\\n"`` bytes in the whole file
        :raises NotTextError: ``invalid UTF-8 text`` (``…; the file ends inside a multi-byte character``)
        """
        pending = self.pending
        if not pending:
            return
        try:
            _decode(pending, "strict", True)
        except UnicodeDecodeError as exc:
            at_eof = exc.reason.startswith("unexpected end")
            raise invalid_error(pending, exc.start, self.offset - len(pending), newlines_before, at_eof) from None
        self.pending = b""  # pragma: no cover - a carried sequence is always incomplete
