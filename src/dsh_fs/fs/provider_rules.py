"""The text rules every provider shares: what to store or report for bytes already fetched.

Pure: no I/O. Each function turns bytes already fetched into what to store or report, with
the messages of REFERENCE-SPEC §1.5 and the profile switches of DEVIATIONS D1, D2, D4, D6,
D15, D20:

* ``TextRules`` — the profile switches (BOM kept by an edit, line endings kept by an edit,
  BOM and CRLF style kept by a rewrite, detailed non-text errors, ``~`` as the home
  directory, overlapping matches counted), all derived from the profile by
  ``TextRules.for_profile``, and the size limit of a stored file (``write_max_size``, D16,
  both profiles); providers with more switches subclass it and declare them with
  ``profile_switch``.
* ``decode_for_read`` / ``not_text_error`` — §2.5 read decoding and its FS_NOT_TEXT error.
* ``rewrite`` — §2.8 steps 4–5: the diff basis of the prior bytes and the bytes to store
  (D4 keeps a BOM and CRLF style when replacing an existing file); ``PriorTally`` summarizes
  a prior file too big to hold for it.
* ``apply_edit`` / ``edit_failure_error`` — §2.11 steps 5–7 (D1 keeps the BOM, D2 changes
  only the matched spans).
* F7–F9 (opt-in, ``TextRules.encodings``; docs/ENCODINGS.md): bytes that are not UTF-8 are read,
  edited (only the replaced spans' bytes change, proven on the bytes) and rewritten in the
  legacy encoding the deployment lists (``fs.legacy_text``).

The memory and S3 providers apply them to whole objects, the local one to bytes it reads
itself; the messages are the catalog's (``dsh_fs.fs.errors``).
"""

from __future__ import annotations

import hashlib

from dataclasses import dataclass

from ..core.jsonvalue import well_formed as well_formed  # re-exported for providers
from ..core.profile import PROFILE_SWITCH as PROFILE_SWITCH  # re-exported for providers
from ..core.profile import ProfileSwitches
from ..core.profile import profile_switch as profile_switch  # re-exported for providers
from .errors import (
    FsError,
    Verb,
    edit_ambiguous,
    edit_empty,
    edit_not_found,
    not_text,
    outside_changed,
    too_large,
    unencodable,
)
from .legacy_text import DecodedText, ProofFailed, Unencodable, decode_legacy, edit_bytes, encode_checked
from .literal_edit import EditFailure, EditPlan, plan_edit
from .text import BOM, INVALID, NUL_SAMPLE, NotTextError, decode_text, normalize, utf8_size
from .types import EditRequest

__all__ = (
    "EditedBytes",
    "KnownContents",
    "PROFILE_SWITCH",
    "PriorSummary",
    "PriorTally",
    "Rewrite",
    "SAME_BYTES_MAX",
    "TextRules",
    "WRITE_MAX_SIZE",
    "apply_edit",
    "check_size",
    "decode_for_read",
    "diff_basis",
    "edit_failure_error",
    "encode_text",
    "not_text_error",
    "profile_switch",
    "rewrite",
    "well_formed",
)


WRITE_MAX_SIZE = 256 * 1024 * 1024
"""default ``write_max_size``: the largest file (bytes) a write or an edit may store (D16)"""


SAME_BYTES_MAX = 4 * 1024 * 1024
"""DEVIATIONS D29: the largest file (bytes) whose content a guard digests when the cheap
version comparison says changed; a bigger file whose version changed is a changed file"""


@dataclass(frozen=True, slots=True, kw_only=True)
class TextRules(ProfileSwitches):
    """Profile-dependent text behaviour of a provider: every field declared with
    ``profile_switch`` is ``True`` in the default profile and ``False`` in the reference one.

    Build with ``for_profile``; a provider that needs more switches or settings subclasses it
    (``fs_local.rules.LocalRules``) and builds the subclass with the same ``for_profile``.
    """

    keep_bom: bool = profile_switch("D1")
    """D1: an edit keeps a leading BOM"""
    keep_line_endings: bool = profile_switch("D2")
    """D2: an edit changes only matched spans (their line breaks take the file's style)"""
    keep_file_style: bool = profile_switch("D4")
    """D4: a write that replaces a file keeps its BOM, and its CRLF line breaks when it is
    CRLF-dominant"""
    detailed_errors: bool = profile_switch("D6")
    """D6: non-text errors say where and why"""
    home_tilde: bool = profile_switch("D20")
    """D20: a leading ``~``/``~/`` names the home directory (refused where there is none);
    else it is a literal name"""
    overlapping_matches: bool = profile_switch("D15")
    """D15: without ``replace_all``, overlapping occurrences of ``old_string`` count as matches"""
    same_bytes: bool = profile_switch("D29")
    """D29: a file rewritten with the same bytes keeps its version for a guard (a content digest
    consulted only when the cheap comparison says changed)"""
    write_max_size: int = WRITE_MAX_SIZE
    """D16 (both profiles): a write or an edit that would store a file of more bytes fails
    ``FS_IO_ERROR`` before the new content is built"""
    encodings: tuple[str, ...] = ()
    """F7 (opt-in, both profiles; docs/ENCODINGS.md): legacy encodings a file that is not UTF-8
    may be in (``legacy_text.check_encodings`` names); empty: UTF-8 only, as the reference"""


class KnownContents:
    """DEVIATIONS D29 for a provider whose versions are counters (the in-memory one): the
    SHA-256 of the bytes stored under each of the last ``capacity`` versions of at most
    ``SAME_BYTES_MAX`` bytes, so a guard whose version differs can tell the same bytes stored
    again. Synchronous, no I/O.

    :param capacity: how many versions are remembered (oldest forgotten first)
    """

    def __init__(self, capacity: int = 4096) -> None:
        self.capacity = capacity
        self._digests: dict[str, bytes] = {}

    def remember(self, version: str, data: bytes) -> None:
        """``data`` is stored under ``version`` (over ``SAME_BYTES_MAX`` bytes: not kept)."""
        if len(data) > SAME_BYTES_MAX:
            return
        self._digests[version] = hashlib.sha256(data).digest()
        while len(self._digests) > self.capacity:
            del self._digests[next(iter(self._digests))]

    def same(self, version: str, data: bytes) -> bool:
        """Are ``data`` the bytes stored under ``version`` (a version remembered)?"""
        digest = self._digests.get(version)
        return digest is not None and len(data) <= SAME_BYTES_MAX and hashlib.sha256(data).digest() == digest


def check_size(size: int | None, display: str, limit: int | None) -> None:
    """The up-front D16 check of ``check_replaceable``/``check_creatable``: a text of ``size``
    UTF-8 bytes over ``limit`` (a provider's ``TextRules.write_max_size``; ``None``: no limit)
    is refused as its write would refuse it.

    :raises FsError: ``FS_IO_ERROR`` ``too_large("write", …)``
    """
    if size is not None and limit is not None and size > limit:
        raise too_large("write", display, size, limit)


def encode_text(text: str) -> bytes:
    """UTF-8 bytes of ``text``; lone surrogates become U+FFFD (REFERENCE-SPEC §2.8 notes)."""
    return well_formed(text).encode("utf-8")


def not_text_error(exc: NotTextError, verb: Verb, display: str, rules: TextRules) -> FsError:
    """``errors.not_text`` for ``exc``, with its detail in the default profile (§1.5 #8, #9,
    #25, #26; D6)."""
    return not_text(verb, display, exc.message(rules.detailed_errors))


def edit_failure_error(failure: EditFailure, display: str, rules: TextRules, *, prefix: int = 0) -> FsError:
    """The coded error of a literal-edit failure (§1.5 #28, #29, #30): ``edit_empty``,
    ``edit_not_found`` (keeping the searched text and needle for the tool layer's near-match
    hint, D5), ``edit_ambiguous`` (D15: saying when matches overlap) or ``too_large`` (D16;
    ``prefix``: bytes stored before the text, a kept BOM)."""
    if failure.kind == "empty":
        return edit_empty()
    if failure.kind == "not_found":
        return edit_not_found(display, searched_text=failure.content, needle=failure.needle,
                              replacement=failure.replacement)
    if failure.kind == "too_large":
        return too_large("edit", display, prefix + failure.size, rules.write_max_size)
    return edit_ambiguous(display, failure.count, overlapping=failure.overlapping)


def _legacy(raw: bytes, exc: NotTextError, rules: TextRules) -> DecodedText | None:
    """F7: the text of bytes that are not UTF-8 in one of the deployment's legacy encodings (none
    for a binary file: a NUL, a UTF-16/32 byte-order mark; none for a UTF-8 BOM)."""
    if not rules.encodings or exc.reason != INVALID or raw.startswith(BOM) or b"\0" in raw:
        return None
    return decode_legacy(raw, rules.encodings)


def _not_legacy(exc: NotTextError, rules: TextRules) -> NotTextError:
    """``exc``, its detail saying which legacy encodings were tried too (F7)."""
    if not rules.encodings or exc.reason != INVALID:
        return exc
    tried = ", ".join(rules.encodings)
    return NotTextError(exc.reason, f"{exc.detail}; not {tried} text either")


def decode_for_read(raw: bytes, display: str, rules: TextRules) -> str:
    """§2.5 ``readText`` decoding: NUL in the first 8192 bytes = binary, strict UTF-8, BOM stripped;
    F7: bytes that are not UTF-8 in a legacy encoding the deployment lists (a ``DecodedText``,
    which says its encoding).

    :raises FsError: ``FS_NOT_TEXT`` ``cannot read "<display>": …``
    """
    try:
        return decode_text(raw, nul_scan=NUL_SAMPLE, foreign_boms=rules.detailed_errors)
    except NotTextError as exc:
        legacy = _legacy(raw, exc, rules)
        if legacy is not None:
            return legacy
        raise not_text_error(_not_legacy(exc, rules), "read", display, rules) from None


def diff_basis(raw: bytes) -> str | None:
    """The prior text for a write's diff: LF-normalized, BOM stripped; ``None`` when the bytes
    hold a NUL anywhere or are not UTF-8 (§2.8 step 4)."""
    if b"\0" in raw:
        return None
    try:
        return normalize(decode_text(raw, nul_scan=0))
    except NotTextError:
        return None


def _crlf_dominant(raw: bytes) -> bool:
    """Do CRLF line breaks outnumber bare LF ones in ``raw`` (D4)? Bytes without a CR have
    none (one ``memchr``; the counts scan the bytes twice)."""
    if b"\r" not in raw:
        return False
    crlf = raw.count(b"\r\n")
    return crlf > raw.count(b"\n") - crlf


@dataclass(frozen=True, slots=True, kw_only=True)
class PriorSummary:
    """What replacing a file must know of it when it is too big to hold (D1, D4): whether
    it starts with a BOM and whether CRLF breaks outnumber bare LF ones. It gives no diff
    basis."""

    has_bom: bool
    crlf_dominant: bool


class PriorTally:
    """Builds a ``PriorSummary`` from a file's bytes fed in order, in chunks of any size."""

    def __init__(self) -> None:
        self._head = b""
        self._lf = 0
        self._crlf = 0
        self._cr_last = False  # the previous chunk ended with a CR

    def feed(self, chunk: bytes) -> None:
        """Count the line breaks of the next ``chunk`` (a CRLF may straddle two chunks)."""
        if not chunk:
            return
        if len(self._head) < len(BOM):
            self._head = (self._head + chunk)[: len(BOM)]
        self._lf += chunk.count(b"\n")
        self._crlf += chunk.count(b"\r\n") + (self._cr_last and chunk.startswith(b"\n"))
        self._cr_last = chunk.endswith(b"\r")

    def summary(self) -> PriorSummary:
        """The summary of everything fed (same answers ``rewrite`` derives from the bytes)."""
        return PriorSummary(has_bom=self._head == BOM, crlf_dominant=self._crlf > self._lf - self._crlf)


@dataclass(frozen=True, slots=True, kw_only=True)
class Rewrite:
    """What a ``write_text`` stores and reports."""

    data: bytes
    """the bytes to store"""
    before: str | None
    """diff basis of the prior bytes (``None``: no prior file, or undiffable)"""
    after: str
    """``content`` LF-normalized (the diff basis, not necessarily the stored bytes)"""


def rewrite(old: bytes | PriorSummary | None, content: str, rules: TextRules, display: str) -> Rewrite:
    """§2.8 steps 4–7 on bytes: ``old`` is the prior file (``None`` when creating; a
    ``PriorSummary`` when it is too big to hold: then there is no diff basis).

    New files are stored verbatim. Replacing an existing file (D4, default profile): a BOM
    is kept unless ``content`` starts with one; if the old file is CRLF-dominant and
    ``content`` has only bare LF line breaks, they are written as CRLF.

    :raises FsError: ``FS_IO_ERROR`` (``too_large``, D16) when the bytes to store would exceed
        ``rules.write_max_size`` — measured before they are built
    """
    add_bom = to_crlf = False
    before: str | None = None
    if isinstance(old, bytes) and rules.encodings:
        legacy = _legacy_prior(old, rules)
        if legacy is not None:
            return _rewrite_legacy(old, legacy, content, rules, display)
    if old is not None:
        if isinstance(old, PriorSummary):
            has_bom, crlf_dominant = old.has_bom, old.crlf_dominant
        else:
            before = diff_basis(old)
            has_bom, crlf_dominant = old.startswith(BOM), _crlf_dominant(old)
        add_bom = rules.keep_file_style and has_bom and not content.startswith("\ufeff")
        to_crlf = rules.keep_file_style and crlf_dominant and "\n" in content and "\r\n" not in content
    limit = rules.write_max_size
    if 4 * len(content) + (len(content) if to_crlf else 0) + 3 > limit:  # may not fit: measure
        size = utf8_size(content) + (3 if add_bom else 0) + (content.count("\n") if to_crlf else 0)
        if size > limit:
            raise too_large("write", display, size, limit)
    text = well_formed(content)
    if add_bom:
        text = "\ufeff" + text
    if to_crlf:
        text = text.replace("\n", "\r\n")
    return Rewrite(data=text.encode("utf-8"), before=before, after=normalize(well_formed(content)))


def _legacy_prior(old: bytes, rules: TextRules) -> DecodedText | None:
    """F7: the prior file's text when it is in a legacy encoding (not UTF-8, no NUL, no BOM)."""
    if old.startswith(BOM) or b"\0" in old:
        return None
    try:
        old.decode("utf-8")
        return None
    except UnicodeDecodeError:
        return decode_legacy(old, rules.encodings)


def _rewrite_legacy(old: bytes, prior: DecodedText, content: str, rules: TextRules, display: str) -> Rewrite:
    """F8: a write over a legacy-encoded file keeps its encoding (and, D4, its CRLF breaks).

    :raises FsError: ``FS_NOT_TEXT`` for a character the encoding cannot hold; D16
    """
    to_crlf = rules.keep_file_style and _crlf_dominant(old) and "\n" in content and "\r\n" not in content
    text = content.replace("\n", "\r\n") if to_crlf else content
    try:
        data = encode_checked(text, prior.encoding)
    except Unencodable as exc:
        where = content.find(exc.character)
        raise unencodable("write", display, exc.__class__(exc.character, where, exc.encoding).describe(content, "content"),
                          prior.encoding) from None
    if len(data) > rules.write_max_size:
        raise too_large("write", display, len(data), rules.write_max_size)
    return Rewrite(data=data, before=normalize(prior), after=normalize(well_formed(content)))


@dataclass(frozen=True, slots=True, kw_only=True)
class EditedBytes:
    """What an ``edit_text`` stores and reports."""

    data: bytes
    """the bytes to store"""
    plan: EditPlan
    """the literal edit (``before``/``after`` are the LF-normalized diff basis)"""


def apply_edit(raw: bytes, edit: EditRequest, display: str, rules: TextRules) -> EditedBytes:
    """§2.11 steps 5–7 on the current bytes ``raw``: decode (a NUL anywhere is binary), match,
    re-encode (D1: the BOM is kept in the default profile; D2: only matched spans change; D15:
    overlapping matches count in the default profile; D16: no file over ``write_max_size``).

    :raises FsError: ``FS_NOT_TEXT`` ``cannot edit "<display>": …``; ``FS_EDIT_NOT_FOUND``;
        ``FS_AMBIGUOUS_EDIT``; ``FS_IO_ERROR`` (``too_large``)
    """
    try:
        text = decode_text(raw, nul_scan=None, foreign_boms=rules.detailed_errors)
    except NotTextError as exc:
        legacy = _legacy(raw, exc, rules)
        if legacy is None:
            raise not_text_error(_not_legacy(exc, rules), "edit", display, rules) from None
        return _edit_legacy(raw, legacy, edit, display, rules)
    bom = "\ufeff" if rules.keep_bom and raw.startswith(BOM) else ""
    prefix = len(bom) and len(BOM)
    try:
        plan = plan_edit(text, edit.old_string, edit.new_string, edit.replace_all, keep_bytes=rules.keep_line_endings,
                         overlapping=rules.overlapping_matches, max_bytes=rules.write_max_size - prefix,
                         raw_bytes=len(raw) - (len(BOM) if raw.startswith(BOM) else 0))
    except EditFailure as failure:
        raise edit_failure_error(failure, display, rules, prefix=prefix) from None
    try:  # the text is almost always well formed: one encode (``well_formed`` would make two)
        data = plan.text.encode("utf-8")
    except UnicodeEncodeError:
        data = well_formed(plan.text).encode("utf-8")
    return EditedBytes(data=BOM + data if bom else data, plan=plan)


def _edit_legacy(raw: bytes, text: DecodedText, edit: EditRequest, display: str, rules: TextRules) -> EditedBytes:
    """F7/F9: the edit of a legacy-encoded file, only the replaced spans' bytes changed (proven
    on the bytes, ``legacy_text.edit_bytes``).

    :raises FsError: as ``apply_edit``; ``FS_NOT_TEXT`` for a character the encoding cannot hold
        or a byte outside the replaced text that would change
    """
    try:
        edited = edit_bytes(raw, text, text.encoding, edit.old_string, edit.new_string, edit.replace_all,
                            overlapping=rules.overlapping_matches, max_bytes=rules.write_max_size)
    except EditFailure as failure:
        raise edit_failure_error(failure, display, rules) from None
    except Unencodable as exc:
        raise unencodable("edit", display, exc.describe(normalize(edit.new_string), "new_string"), text.encoding) from None
    except ProofFailed:
        raise outside_changed(display, text.encoding) from None
    return EditedBytes(data=edited.data, plan=edited.plan)
