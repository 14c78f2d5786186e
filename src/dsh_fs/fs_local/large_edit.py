"""The local driver of streamed edits: ``edit_text`` of a huge file in bounded memory
(REFERENCE-SPEC §2.11; DEVIATIONS D1, D2, D6, D15, D16). I/O; the matching
itself is the pure ``dsh_fs.fs.literal_edit_stream`` (``EditScan``, ``EditRewriter``).

``fsio.edit_file`` hands an edit here, after its probe and version guard and still under the
target's locks, when the file has at least ``LocalRules.stream_edit_min_size`` bytes. Two
passes over one open descriptor, each holding one piece (``files.STREAM_CHUNK`` bytes) at a time:

1. Read and check: the text rules of an edit (a UTF-16/32 byte-order mark in the default
   profile, then a NUL byte *anywhere*, then strict UTF-8 — the same errors, in the same
   order of precedence, as decoding the whole file), while ``EditScan`` counts the matches.
   Then the not-found / ambiguous decisions, exactly as ``plan_edit`` makes them (D15:
   overlapping occurrences count in the default profile), and the size of the new file,
   computed from the counts before anything is written (D16: ``write_max_size``; a file
   with CRs and an ``old_string`` with line breaks is measured by a dry run when the bound
   exceeds the limit).
2. Write, into the temp file of ``atomic.atomic_write`` (the same fsyncs, rename and cleanup
   as any write): when the content holds no CR and pass 1 noted the matches (at most
   ``_RECORD``), the unchanged stretches are copied by the kernel (``copy_file_range``; a
   reflink where the filesystem supports it) around the replacements; otherwise
   ``EditRewriter`` streams the edited content through Python. If the file changed behind
   the locks between the passes (another program writing in place), the edit fails
   ``FS_STALE_VERSION`` and nothing is replaced: its stat fields (device, inode, size,
   mtime, ctime) differ, or, for a file that had changed within the A5 racy window when it
   was opened (whose fields a change may leave as they are), the rewrite replaced another
   number of matches than pass 1 counted. Only then does a rewrite whose replacement is as
   long as the needle count its matches (a count per piece, a fifth of its time).

Differences from an in-memory edit, by design: the outcome carries no diff basis (``before``
and ``after`` are ``None``, so the tool attaches no hunks), and a not-found error carries no
searched text (no D5 hint).
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator

from ..core.signal import AbortSignal
from ..fs.byte_text import Utf8Validator
from ..fs.errors import Stage, check_abort, edit_ambiguous, edit_empty, edit_not_found, stale, too_large
from ..fs.provider_rules import not_text_error
from ..fs.literal_edit_stream import EditRewriter, EditScan, encodable
from ..fs.text import BOM, NotTextError, foreign_bom_error, nul_error, normalize
from ..fs.types import EditOutcome, EditRequest, Target
from . import files, versions
from .atomic import atomic_write
from .files import STREAM_CHUNK, Probe, owner_to_keep, version_after_write
from .oserrors import map_os_error
from .rules import LocalRules

__all__ = ("edit_large_file",)


_IOV_MAX = 1024


def _write_all(fd: int, buffers: list[bytes | memoryview]) -> None:
    """Write ``buffers`` in order (``writev``, resuming after partial writes)."""
    views = [memoryview(b) for b in buffers if len(b)]
    i = 0
    while i < len(views):
        written = os.writev(fd, views[i : i + _IOV_MAX])
        while written:
            size = len(views[i])
            if written >= size:
                written -= size
                i += 1
            else:
                views[i] = views[i][written:]
                written = 0


_RECORD = 4096
"""match positions remembered by the first pass (the second then needs no search)"""


class _Recheck(Exception):
    """The fast check found something wrong: the exact check must name it."""


def _fingerprint(st: os.stat_result) -> tuple[int, int, int, int, int]:
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def edit_large_file(target: Target, edit: EditRequest, existing: Probe, *, signal: AbortSignal | None,
                    rules: LocalRules, chunk: int = STREAM_CHUNK) -> EditOutcome:
    """§2.11 steps 5–10 for a big file, streamed (call with the target's locks held, after
    the probe and the version guard).

    :param existing: the probe ``edit_file`` made (mode, owner)
    :param chunk: bytes per read (tests use small values)
    :return: the new version; ``before``/``after`` are ``None`` (no diff basis)
    :raises FsError: FS_NOT_TEXT, FS_EDIT_NOT_FOUND (no searched text), FS_AMBIGUOUS_EDIT,
        FS_ABORTED (``edit aborted`` while checking, ``write aborted`` while writing),
        FS_STALE_VERSION if the file changed between the passes, mapped OS errors (A2)
    """
    key, display = target.key, target.display_path
    old = normalize(edit.old_string)
    new = normalize(edit.new_string)
    check_abort(signal, "edit")
    fd = files.open_regular(key, "edit", display, rules.root_for(key))
    try:
        if hasattr(os, "posix_fadvise"):
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_SEQUENTIAL)
            except OSError:  # pragma: no cover - advisory only
                pass
        opened = os.fstat(fd)
        fingerprint = _fingerprint(opened)
        # a change between the passes shows in the stat fields unless the file changed just
        # before (A5); only then must the rewrite also recount the matches it replaces
        recount = versions.is_racy(opened)
        overlapping = rules.overlapping_matches and not edit.replace_all
        exact = recount or not _count_is_moot(edit, old, new, rules)
        try:
            try:
                scan, content_start = _check_and_count(fd, old, signal=signal, rules=rules, chunk=chunk, fast=True,
                                                       overlapping=overlapping, exact=exact)
            except _Recheck:
                scan, content_start = _check_and_count(fd, old, signal=signal, rules=rules, chunk=chunk, fast=False,
                                                       overlapping=overlapping, exact=exact)
            if scan is not None and scan.crlf and scan.uncounted:  # the dominant style needs every line
                scan.newlines += _count_lines(fd, content_start, scan.uncounted, chunk, signal)
                scan.uncounted = 0
        except NotTextError as exc:
            raise not_text_error(exc, "edit", display, rules) from None
        except OSError as exc:
            raise map_os_error(exc, "edit", display) from exc
        check_abort(signal, "edit")
        if scan is None:
            raise edit_empty()
        if scan.matches == 0:
            raise edit_not_found(display, needle=old)
        if scan.occurrences > 1 and not edit.replace_all:
            raise edit_ambiguous(display, scan.occurrences, overlapping=scan.occurrences > scan.matches)
        keep = rules.keep_line_endings

        def rewriter() -> EditRewriter:
            return EditRewriter(old, new, keep_bytes=keep, style=scan.style(keep), has_crlf=scan.crlf > 0,
                                has_cr=scan.has_cr, crlf_only=scan.crlf_only, positions=scan.positions,
                                count=recount)

        prefix = len(BOM) if content_start and rules.keep_bom else 0
        size, exact = rewriter().planned_size(fingerprint[2] - content_start, scan)
        if prefix + size > rules.write_max_size and not exact:
            size = _measure(fd, content_start, rewriter(), chunk, signal)
        if prefix + size > rules.write_max_size:
            raise too_large("edit", display, prefix + size, rules.write_max_size)
        spans = scan.positions if not scan.has_cr and encodable(new) else None
        streaming = rewriter()

        def produce(out: int) -> None:
            if content_start and rules.keep_bom:
                _write_all(out, [BOM])
            if spans is not None:
                # no CR anywhere: the output is the raw content with each match replaced, and
                # the unchanged stretches can be copied by the kernel (no trip through Python)
                replacement = new.encode("utf-8")
                size = len(old.encode("utf-8"))
                pos = content_start
                whole = True
                for at in spans:
                    start = content_start + at
                    whole = whole and _copy_range(fd, out, pos, start - pos, signal)
                    _write_all(out, [replacement])
                    pos = start + size
                whole = whole and _copy_range(fd, out, pos, None, signal)
                if not whole or _fingerprint(os.fstat(fd)) != fingerprint:
                    raise stale("edit", display)
                return
            for piece in _pieces(fd, content_start, chunk, signal, "write"):
                _write_all(out, streaming.feed(piece))
            _write_all(out, streaming.finish())
            if (streaming.counted and streaming.matches != scan.matches) or _fingerprint(os.fstat(fd)) != fingerprint:
                raise stale("edit", display)

        atomic_write(key, produce, mode=existing.mode, owner=owner_to_keep(existing, rules),
                          signal=signal, verb="edit", display=display, root=rules.root_for(key))
    finally:
        os.close(fd)
    return EditOutcome(version=version_after_write(key, None, rules.root_for(key)), before=None, after=None)


def _count_is_moot(edit: EditRequest, old: str, new: str, rules: LocalRules) -> bool:
    """Does this edit need only whether there is a match, not how many? A ``replace_all`` in the
    default profile's byte-keeping mode (D2) of an ``old`` (LF-normalized) that holds no line
    break and does not end with a CR by a ``new`` of as many UTF-8 bytes, without a line break
    or a lone surrogate: each match is replaced in the raw bytes by bytes of its own length,
    whatever the file's line endings, so the new file has the old one's size (D16 needs no
    count) and no error depends on the count."""
    if not (edit.replace_all and rules.keep_line_endings) or "\n" in old or "\n" in new or old.endswith("\r"):
        return False
    if not encodable(new):
        return False
    return len(old.encode("utf-8", "surrogatepass")) == len(new.encode("utf-8"))


def _pieces(fd: int, start: int, chunk: int, signal: AbortSignal | None, stage: Stage) -> Iterator[bytes]:
    """The file's bytes from ``start`` to its end, ``chunk`` at a time (abort checked before each)."""
    pos = start
    while True:
        check_abort(signal, stage)
        piece = os.pread(fd, chunk, pos)
        if not piece:
            return
        pos += len(piece)
        yield piece


def _measure(fd: int, start: int, rewriter: EditRewriter, chunk: int, signal: AbortSignal | None) -> int:
    """The exact bytes ``rewriter`` produces for the content from ``start`` (nothing is written)."""
    size = 0
    for piece in _pieces(fd, start, chunk, signal, "edit"):
        size += sum(len(buffer) for buffer in rewriter.feed(piece))
    return size + sum(len(buffer) for buffer in rewriter.finish())


_COPY_STEP = 64 * 1024 * 1024


def _copy_range(src: int, dst: int, offset: int, length: int | None, signal: AbortSignal | None) -> bool:
    """Append ``length`` bytes of ``src`` from ``offset`` (``None``: to its end) to ``dst``:
    ``copy_file_range`` (in-kernel, a reflink where the filesystem can), else read + write.
    Returns ``False`` when ``src`` ended first (it changed)."""
    remaining = length
    while remaining is None or remaining > 0:
        check_abort(signal, "write")
        step = _COPY_STEP if remaining is None else min(_COPY_STEP, remaining)
        try:
            copied = os.copy_file_range(src, dst, step, offset)
        except (AttributeError, OSError) as exc:
            if isinstance(exc, OSError) and exc.errno not in (errno.EXDEV, errno.ENOSYS, errno.EOPNOTSUPP, errno.EINVAL):
                raise
            data = os.pread(src, step, offset)
            if data:
                _write_all(dst, [data])
            copied = len(data)
        if copied == 0:
            return remaining is None
        offset += copied
        if remaining is not None:
            remaining -= copied
    return True


def _count_lines(fd: int, start: int, length: int, chunk: int, signal: AbortSignal | None) -> int:
    """Line feeds in ``length`` bytes of the file from ``start``."""
    count = 0
    end = start + length
    while start < end:
        check_abort(signal, "edit")
        piece = os.pread(fd, min(chunk, end - start), start)
        if not piece:
            break
        count += piece.count(b"\n")
        start += len(piece)
    return count


def _check_and_count(fd: int, old: str, *, signal: AbortSignal | None, rules: LocalRules,
                     chunk: int, fast: bool, overlapping: bool, exact: bool = True) -> tuple[EditScan | None, int]:
    """Pass 1: the text rules of an edit over the whole file, and the match count.

    :param fast: count no line feeds (they only locate errors, and matter to the dominant
        style only in a file with CRLF pairs); raise ``_Recheck`` at the first problem, for
        the exact pass (``fast=False``) to report it with its line
    :param overlapping: the scan also counts overlapping occurrences (D15)
    :param exact: count every match (``False``: see ``EditScan``; when ``_count_is_moot``)
    :return: the scan (``None`` when ``old`` is empty) and the content start (3 after a BOM)
    :raises NotTextError: foreign byte-order mark (D6), NUL anywhere, invalid UTF-8 — in
        that order of precedence, each at its first occurrence
    """
    scan = EditScan(old.encode("utf-8", "surrogatepass"), count_lines=not fast, record=_RECORD,
                    overlapping=overlapping, exact=exact) if old else None
    validator = Utf8Validator()
    invalid: NotTextError | None = None
    newlines = 0
    pos = 0
    content_start = 0
    while True:
        check_abort(signal, "edit")
        piece = os.pread(fd, chunk, pos)
        if not piece:
            break
        if pos == 0:
            if rules.detailed_errors:
                err = foreign_bom_error(piece[:4] if len(piece) >= 4 else _head(fd, piece))
                if err is not None:
                    raise err
            content_start = 3 if (piece if len(piece) >= 3 else _head(fd, piece)).startswith(BOM) else 0
        nul = piece.find(b"\0")
        if nul >= 0:
            if fast:
                raise _Recheck
            raise nul_error(pos + nul, newlines + piece.count(b"\n", 0, nul))
        if invalid is None:
            try:
                validator.feed(piece, newlines)
            except NotTextError as exc:
                if fast:
                    raise _Recheck from None
                invalid = exc  # a NUL further on still takes precedence
        if invalid is None and scan is not None:
            skip = max(0, content_start - pos)
            scan.feed(piece[skip:] if skip else piece)
            newlines = scan.newlines
        elif not fast:
            newlines += piece.count(b"\n")
        pos += len(piece)
    if invalid is None:
        if fast and validator.pending:
            raise _Recheck
        validator.finish(newlines)
    else:
        raise invalid
    if scan is not None:
        scan.finish()
    return scan, content_start


def _head(fd: int, first: bytes) -> bytes:
    """The first 4 bytes of the file when the first piece was shorter."""
    more = os.pread(fd, 4, 0)
    return more if len(more) > len(first) else first
