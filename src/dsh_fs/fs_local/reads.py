"""The local provider's windowed read (``FileSystem.read_window``), synchronous.

Opens the target as ``read_text`` does (never blocking on a FIFO, beneath the workspace root
when there is one), decides whether a line index may be used and kept, runs the byte scanner
(``scan``) and maps failures to the ``read_text`` errors (REFERENCE-SPEC §2.5; DEVIATIONS A2, D6).

Index trust (DEVIATIONS A5): an index is looked up and stored only when the
caller's version is exactly the five stat fields of the open file (a racily-clean version
carries a digest and is never trusted), and stored only when those fields are unchanged after
the scan. Files smaller than ``index_min_size`` are never indexed (a scan costs less than the
bookkeeping).
"""

from __future__ import annotations

import os

from ..core.signal import AbortSignal
from ..fs.errors import check_abort
from ..fs.provider_rules import not_text_error
from ..fs.text import NotTextError
from ..fs.types import Info, Target
from ..fs.window import ReadWindow, WindowResult
from . import files, versions
from .files import STREAM_CHUNK
from .oserrors import map_os_error
from .rules import LocalRules
from .line_index import IndexCache
from .scan import scan_window

__all__ = ("read_window_file",)


def _known(fd: int, version: str, size: int, data: bytes | None) -> str | None:
    """D29: ``version`` with the digest of the ``size`` bytes of ``fd`` (``data`` when the scan
    read them all, else read here: at most ``versions.SAME_BYTES_MAX`` bytes, the caller checks)
    when the file's stat fields are still the version's after they were read (the version is
    not racy: any change since it was minted shows in them); ``None`` otherwise."""
    try:
        if data is None:
            data = os.pread(fd, size + 1, 0)
        if len(data) != size or versions.fields_of(os.fstat(fd)) != version:
            return None
    except OSError:
        return None
    return versions.known(version, versions.digest_bytes(data))


def read_window_file(
    target: Target,
    window: ReadWindow,
    info: Info,
    *,
    streamed: bool,
    signal: AbortSignal | None,
    rules: LocalRules,
    indexes: IndexCache | None,
    index_min_size: int,
    chunk: int = STREAM_CHUNK,
) -> WindowResult:
    """Window the regular file ``target`` (see ``FileSystem.read_window``).

    :param info: the caller's stat; its version keys the index, its size sizes the first read
    :param indexes: the provider's index cache (``None``: no index)
    :param index_min_size: smallest file (bytes) worth an index
    :param chunk: the validation alignment of streamed reads: the chunk size of this
        provider's ``stream_text`` (so a byte-capped streamed read validates what it would)
    :raises FsError: FS_NOT_FOUND, FS_NOT_REGULAR_FILE, FS_NOT_TEXT, FS_PERMISSION_DENIED,
        FS_IO_ERROR, FS_ABORTED ``read aborted``, and the out-of-range FS_NOT_FOUND
    """
    key, display = target.key, target.display_path
    check_abort(signal, "read")
    fd = files.open_regular(key, "read", display, rules.root_for(key))
    try:
        version = str(info.version)
        index = None
        trusted = False
        if indexes is not None and (info.size is None or info.size >= index_min_size):
            st = os.fstat(fd)
            trusted = st.st_size >= index_min_size and versions.fields_of(st) == version
            if trusted:
                index = indexes.get(key, version)
        size_hint = info.size if info.size is not None else -1
        try:
            outcome = scan_window(
                fd,
                window,
                display=display,
                streamed=streamed,
                foreign_boms=rules.detailed_errors,
                signal=signal,
                index=index,
                size_hint=size_hint,
                chunk=chunk,
            )
        except NotTextError as exc:
            raise not_text_error(exc, "read", display, rules) from None
        except OSError as exc:
            raise map_os_error(exc, "read", display) from exc
        if trusted and outcome.index is not None and indexes is not None:
            if versions.fields_of(os.fstat(fd)) == version:
                indexes.put(key, version, outcome.index)
        if rules.same_bytes and info.size is not None and versions.knowable(version, info.size):
            outcome.result.version = _known(fd, version, info.size, outcome.data)
        return outcome.result
    finally:
        os.close(fd)
