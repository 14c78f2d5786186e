"""Legacy encodings, byte-exact (docs/ENCODINGS.md; DEVIATIONS F7–F10). Pure: no I/O.

A deployment may list encodings besides UTF-8 (``create_context(encodings=["shift_jis",
"gb18030", "cp1252"])``, ``dsh-fs mcp --encoding NAME``). A file that is not UTF-8 (and holds no
NUL byte) is then read in the first listed encoding that decodes it strictly and encodes back to
the very same bytes; when several do, a detector (``charset-normalizer``, the ``encodings``
extra) picks among them, else the first listed wins. ``read`` says which encoding it used.

An edit of such a file changes only the bytes of what it replaces: the new text is encoded in
the file's encoding, and the bytes to write are compared with the file's own bytes outside the
replaced spans — any other difference refuses the edit, nothing written. A character the
encoding cannot hold is refused with its name and where it is. A ``write`` over such a file
keeps its encoding (and, in the default profile, its CRLF line breaks, as D4 does for UTF-8).

* ``check_encodings`` — a deployment's list, validated (ASCII-compatible codecs only: the line
  breaks and the NUL check are those of ASCII).
* ``decode_legacy`` — which encoding a file's bytes are in, and their text (``DecodedText``).
* ``encode_checked`` — text in an encoding, or ``Unencodable`` (the character and its line and
  column).
* ``edit_bytes`` — the literal edit of a legacy-encoded file, with the byte proof.
"""

from __future__ import annotations

import codecs
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .literal_edit import EditFailure, EditPlan, plan_edit, raw_span
from .text import dominant_style, normalize

__all__ = (
    "DecodedText",
    "EditedLegacy",
    "LEGACY_MAX_BYTES",
    "ProofFailed",
    "Unencodable",
    "check_encodings",
    "decode_legacy",
    "edit_bytes",
    "edit_spans",
    "encode_checked",
    "encoding_note",
)

LEGACY_MAX_BYTES = 64 * 1024 * 1024
"""``read`` decodes a legacy-encoded file of at most this many bytes (whole: a legacy encoding is
not windowed on bytes); a bigger one is refused as not UTF-8"""


def encoding_note(encoding: str) -> str:
    """F7: the line after ``read``'s footer that says which encoding the file was read in."""
    return f"(This file is {encoding} text, not UTF-8: edit and write keep it in {encoding}.)"


class DecodedText(str):
    """Text decoded from a legacy encoding: a ``str`` that remembers the encoding (``read``
    says it; windows built from it carry it)."""

    __slots__ = ("encoding",)

    def __new__(cls, text: str, encoding: str) -> DecodedText:
        made = super().__new__(cls, text)
        made.encoding = encoding
        return made


def _ascii_compatible(name: str) -> bool:
    """Do ASCII bytes mean ASCII characters in this codec, both ways?"""
    ascii_bytes = bytes(range(128))
    try:
        return ascii_bytes.decode(name) == ascii_bytes.decode("ascii") and ascii_bytes.decode("ascii").encode(name) == ascii_bytes
    except (UnicodeError, LookupError):
        return False


def check_encodings(names: Iterable[str]) -> tuple[str, ...]:
    """The codec names of ``names`` (Python's canonical spelling, ``shift_jis``), in order, each
    once.

    :raises ValueError: ``unknown encoding "<name>"``; ``… "<name>" is UTF-8, always read``;
        ``encoding "<name>" is not ASCII-compatible (UTF-16, UTF-32, UTF-7 …): not supported``
    """
    out: list[str] = []
    for name in names:
        try:
            canonical = codecs.lookup(name).name
        except (LookupError, TypeError):
            raise ValueError(f'unknown encoding "{name}"') from None
        if canonical in ("utf-8", "utf-8-sig"):
            raise ValueError(f'encoding "{name}" is UTF-8, which is always read')
        if not _ascii_compatible(canonical):
            raise ValueError(f'encoding "{name}" is not ASCII-compatible (UTF-16, UTF-32, UTF-7 …): not supported')
        if canonical not in out:
            out.append(canonical)
    return tuple(out)


def _faithful(raw: bytes, encoding: str) -> str | None:
    """``raw`` decoded strictly, when it encodes back to exactly ``raw``."""
    try:
        text = raw.decode(encoding)
        if text.encode(encoding) != raw:
            return None
    except UnicodeError:
        return None
    return text


def _detected(raw: bytes, candidates: Sequence[str]) -> str | None:
    """The detector's choice among ``candidates`` (``charset-normalizer``), when it makes one."""
    try:
        from charset_normalizer import from_bytes
    except ImportError:
        return None
    best = from_bytes(raw, cp_isolation=list(candidates)).best()
    if best is None:
        return None
    try:
        chosen = codecs.lookup(best.encoding).name
    except LookupError:
        return None
    return chosen if chosen in candidates else None


def decode_legacy(raw: bytes, encodings: Sequence[str]) -> DecodedText | None:
    """The text of ``raw`` (a file's bytes that are not UTF-8 and hold no NUL) in one of
    ``encodings`` (``check_encodings`` names): the only one that decodes it faithfully, or the
    detector's choice among several, or the first of them; ``None`` when none does."""
    candidates = [(name, text) for name in encodings if (text := _faithful(raw, name)) is not None]
    if not candidates:
        return None
    name, text = candidates[0]
    if len(candidates) > 1:
        chosen = _detected(raw, [name for name, _ in candidates])
        for other, other_text in candidates:
            if other == chosen:
                name, text = other, other_text
    return DecodedText(text, name)


@dataclass(frozen=True, slots=True)
class Unencodable(Exception):
    """``character`` (at ``index`` of the text) has no bytes in ``encoding``."""

    character: str
    index: int
    encoding: str

    def describe(self, text: str, what: str) -> str:
        """``U+65E5 (CJK UNIFIED IDEOGRAPH-65E5) at line 1, column 3 of new_string``."""
        line = text.count("\n", 0, self.index) + 1
        column = self.index - (text.rfind("\n", 0, self.index) + 1) + 1
        name = unicodedata.name(self.character, "")
        named = f"U+{ord(self.character):04X} ({name})" if name else f"U+{ord(self.character):04X}"
        return f"{named} at line {line}, column {column} of {what}"


def encode_checked(text: str, encoding: str) -> bytes:
    """``text`` in ``encoding``.

    :raises Unencodable: the first character the encoding cannot hold (a lone surrogate too)
    """
    try:
        return text.encode(encoding)
    except UnicodeEncodeError as exc:
        raise Unencodable(text[exc.start], exc.start, encoding) from None


class ProofFailed(Exception):
    """The edited bytes differ from the file's outside the replaced spans (the edit is refused)."""


@dataclass(frozen=True, slots=True)
class EditedLegacy:
    """What an edit of a legacy-encoded file writes."""

    data: bytes
    plan: EditPlan


def edit_spans(raw: str, old: str, count: int, *, replace_all: bool) -> list[tuple[int, int]]:
    """The spans of ``raw`` (the text as on disk) an edit replaces: the non-overlapping
    occurrences of ``old`` (LF-normalized) in the LF-normalized text, left to right, mapped back
    to ``raw`` (a CRLF pair is one character there), ``count`` of them (one without
    ``replace_all``)."""
    content = normalize(raw)
    spans: list[tuple[int, int]] = []
    raw_cursor = norm_cursor = 0
    start = content.find(old)
    while start >= 0 and (replace_all or not spans) and len(spans) < count:
        raw_start = raw_span(raw, raw_cursor, start - norm_cursor)
        raw_end = raw_span(raw, raw_start, len(old))
        spans.append((raw_start, raw_end))
        raw_cursor, norm_cursor = raw_end, start + len(old)
        start = content.find(old, start + len(old))
    return spans


def _replacement(raw: str, new: str) -> str:
    """The replacement as it is written into ``raw`` (D2): its line breaks in the file's dominant
    style (CRLF only where the file has CRLF pairs and they dominate)."""
    if "\r\n" in raw and dominant_style(raw) == "CRLF":
        return new.replace("\n", "\r\n")
    return new


def edit_bytes(raw: bytes, text: str, encoding: str, old_string: str, new_string: str, replace_all: bool, *,
               overlapping: bool, max_bytes: int) -> EditedLegacy:
    """The literal edit of a file whose bytes ``raw`` are ``text`` in ``encoding``, changing
    only the replaced spans (D2's rule: the replacement's line breaks take the file's dominant
    style), proven on the bytes: the bytes written are the file's own bytes outside the spans
    (sliced from ``raw``, never re-encoded) and the encoded replacement in each span — compared
    whole with the encoding of the edited text, which must be the same.

    :param max_bytes: D16's limit, on the edited text's UTF-8 size (checked by ``plan_edit``)
    :raises EditFailure: as ``plan_edit`` (``empty``, ``not_found``, ``ambiguous``, ``too_large``)
    :raises Unencodable: a character of ``new_string`` (LF-normalized; its index there) the
        encoding cannot hold
    :raises ProofFailed: a byte outside the replaced spans would change
    """
    plan = plan_edit(text, old_string, new_string, replace_all, keep_bytes=True, overlapping=overlapping,
                     max_bytes=max_bytes)
    new = normalize(new_string)
    replacement = _replacement(text, new)
    encoded = encode_checked(new, encoding)
    if replacement is not new:
        encoded = replacement.encode(encoding)
    old = normalize(old_string)
    spans = edit_spans(text, old, normalize(text).count(old) if replace_all else 1, replace_all=replace_all)
    texts: list[str] = []
    pieces: list[bytes] = []
    byte_at = text_at = 0
    for start, end in spans:
        gap = len(text[text_at:start].encode(encoding))
        pieces.append(raw[byte_at:byte_at + gap])
        pieces.append(encoded)
        texts.append(text[text_at:start])
        texts.append(replacement)
        byte_at += gap + len(text[start:end].encode(encoding))
        text_at = end
    pieces.append(raw[byte_at:])
    texts.append(text[text_at:])
    if "".join(texts) != plan.text:  # the spans are the ones the edit replaced
        raise ProofFailed()
    data = b"".join(pieces)
    if data != encode_checked(plan.text, encoding):  # and the bytes outside them are the file's
        raise ProofFailed()
    return EditedLegacy(data=data, plan=plan)
