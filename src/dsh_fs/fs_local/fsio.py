"""Local disk mechanics, synchronous (REFERENCE-SPEC §2; DEVIATIONS A1–A6, D1–D4, D6, D12).

Runs in worker threads; checks the abort signal at the reference's checkpoints; OS errors
are mapped by ``oserrors`` (A2). Not here: the atomic replace (``atomic``), locks
(``locks``), the async shell (``filesystem``), windows, observations, prompt text.
"""

from __future__ import annotations

import errno
import os
import posixpath
import stat as stat_mod
from dataclasses import dataclass

from ..core.signal import AbortSignal
from ..fs.errors import (
    FsError,
    Stage,
    Verb,
    blank_path,
    check_abort,
    gone,
    io_error,
    not_directory,
    not_found,
    not_regular_file,
    nul_in_path,
    outside_workspace,
    overwrite_not_observed,
    parent_not_directory,
    permission_denied,
    stale,
)
from ..fs.provider_rules import (
    PriorSummary,
    PriorTally,
    TextRules,
    apply_edit,
    decode_for_read,
    encode_text,
    not_text_error,
    rewrite,
    well_formed,
)
from ..fs.paths import is_blank, node_resolve
from ..fs.text import NotTextError, TextStreamDecoder
from ..fs.types import (
    CreateIfAbsent,
    DirEntry,
    EditIntent,
    EditOutcome,
    EditRequest,
    FileType,
    Info,
    PathInfo,
    ReplaceIfVersion,
    Target,
    TargetKey,
    Version,
    WriteIntent,
    WriteOutcome,
)
from . import beneath, versions
from .atomic import atomic_write
from .oserrors import map_os_error

__all__ = (
    "LocalRules",
    "Probe",
    "check_abort",
    "edit_file",
    "encode_text",
    "list_directory",
    "map_os_error",
    "probe",
    "probe_no_follow",
    "read_file_bytes",
    "resolve_target",
    "StreamReader",
    "write_file",
)

READ_CHUNK = 1024 * 1024
STREAM_EDIT_MIN_SIZE = 32 * 1024 * 1024
"""edits of files at least this big stream in bounded memory (``stream_edit``; tracker issue 5)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class LocalRules(TextRules):
    """Per-profile behaviour of the local provider (the default profile sets all flags to
    True): the shared text rules (D1, D2, D4, D6) plus the local ones below."""

    umask_mode: bool = True
    """D3: new files get 0o666 & ~umask (else 0o600); existing owner/group kept"""
    follow_dangling: bool = True
    """D12: writing through a dangling symlink creates its target"""
    umask: int = 0o022
    root: str | None = None
    """containment: the real path of the workspace root; ``None`` = no containment (reference)"""
    root_display: str | None = None
    """the root as configured (lexically normalized), for messages and the lexical check"""
    stream_edit_min_size: int = STREAM_EDIT_MIN_SIZE
    """edits of files of at least this many bytes stream (``stream_edit``), without a diff basis"""


def contained(display: str, rules: LocalRules) -> bool:
    """Is ``display`` (absolute, normalized) inside the root, lexically? Always without a root."""
    root = rules.root
    if root is None:
        return True
    return beneath.inside(display, root) or (
        rules.root_display is not None and beneath.inside(display, rules.root_display)
    )


# -- resolve (§2.2) ----------------------------------------------------------------------

def resolve_target(path: str, base: str, *, signal: AbortSignal | None, rules: LocalRules) -> Target:
    """Map ``path`` (relative to ``base``) to a target: display path + realpath key."""
    check_abort(signal, "resolve")
    if is_blank(path):
        raise blank_path()
    path = well_formed(path)
    display = node_resolve(base, path)
    if "\0" in path:
        raise nul_in_path(display)
    if not contained(display, rules):
        raise outside_workspace(display, rules.root_display)
    try:
        key = os.path.realpath(display, strict=True)
    except FileNotFoundError:
        key = _missing_key(display, rules)
    except NotADirectoryError:
        raise parent_not_directory(display) from None
    except OSError as exc:
        raise map_os_error(exc, "resolve", display) from exc
    if rules.root is not None and not beneath.inside(key, rules.root):
        raise outside_workspace(display, rules.root_display)
    check_abort(signal, "resolve")
    return Target(key=TargetKey(key), display_path=display)


def _missing_key(display: str, rules: LocalRules) -> str:
    if rules.follow_dangling:
        # D12: follow a dangling final link (and any links above it) as the shell does
        try:
            return os.path.realpath(display, strict=False)
        except OSError as exc:
            raise map_os_error(exc, "resolve", display) from exc
    missing = [posixpath.basename(display)]
    ancestor = posixpath.dirname(display)
    while True:
        try:
            real = os.path.realpath(ancestor, strict=True)
            return posixpath.join(real, *missing)
        except FileNotFoundError:
            if ancestor == "/":
                return display
            missing.insert(0, posixpath.basename(ancestor))
            ancestor = posixpath.dirname(ancestor)
        except NotADirectoryError:
            raise parent_not_directory(display) from None
        except OSError as exc:
            raise map_os_error(exc, "resolve", display) from exc


# -- probes (§2.3, §2.4) -----------------------------------------------------------------

def _file_type(mode: int) -> FileType:
    if stat_mod.S_ISREG(mode):
        return "file"
    if stat_mod.S_ISDIR(mode):
        return "directory"
    return "other"


@dataclass(slots=True)
class Probe:
    """Metadata of an existing path, with a lazily minted version."""

    path: str
    st: os.stat_result
    root: str | None = None
    """containment root: digests are read beneath it"""
    _version: str | None = None

    @property
    def type(self) -> FileType:
        return _file_type(self.st.st_mode)

    @property
    def mode(self) -> int:
        """permission bits only (``st_mode & 0o777``, as the reference keeps them)"""
        return self.st.st_mode & 0o777

    @property
    def version(self) -> Version:
        if self._version is None:
            self._version = versions.mint(self.st, self.path, root=self.root)
        return Version(self._version)

    def matches(self, expected: str) -> bool:
        """Is this still version ``expected`` (A5-aware comparison)?"""
        return versions.same_version(expected, self.st, self.path, root=self.root)

    def info(self) -> Info:
        return Info(version=self.version, type=self.type, size=self.st.st_size)


def probe(path: str, verb: Verb, display: str, *, root: str | None = None) -> Probe | None:
    """Following stat (beneath ``root``: final component not followed); ``None`` for
    ENOENT/ENOTDIR; other errors mapped (A2)."""
    try:
        return Probe(path, beneath.stat_in(path, root=root), root)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise map_os_error(exc, verb, display) from exc
    except ValueError:
        return None


def probe_no_follow(path: str, display: str) -> PathInfo | None:
    """``lstat`` metadata of ``path`` (type may be ``symlink``)."""
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise map_os_error(exc, "stat", display) from exc
    except ValueError:
        return None
    kind = "symlink" if stat_mod.S_ISLNK(st.st_mode) else _file_type(st.st_mode)
    return PathInfo(version=Version(versions.mint(st, path, read=False)), type=kind, size=st.st_size)


# -- reading (§2.5) ----------------------------------------------------------------------

def _open_regular(path: str, verb: Verb, display: str, root: str | None) -> int:
    """Open a regular file for reading without ever blocking on a FIFO."""
    try:
        fd = beneath.open_in(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY, root=root)
    except (FileNotFoundError, NotADirectoryError):
        raise not_found(verb, display) from None
    except IsADirectoryError:
        raise not_regular_file(verb, display) from None
    except OSError as exc:
        raise map_os_error(exc, verb, display) from exc
    try:
        if not stat_mod.S_ISREG(os.fstat(fd).st_mode):
            raise not_regular_file(verb, display)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _read_fd(fd: int, signal: AbortSignal | None, stage: Stage, verb: Verb, display: str,
             size: int | None = None) -> bytes:
    """The bytes of ``fd`` to EOF; ``size``: its size by an ``fstat`` just made (else one is made)."""
    chunks: list[bytes] = []
    try:
        # the first request fits the whole file when its size is known (one read, no
        # oversized buffer); /proc files report 0 and grow past it, so keep reading to EOF
        want = min(max((os.fstat(fd).st_size if size is None else size) + 1, 4096), READ_CHUNK * 8)
        while True:
            check_abort(signal, stage)
            chunk = os.read(fd, want)
            want = READ_CHUNK * 8
            if not chunk:
                break
            chunks.append(chunk)
    except OSError as exc:
        raise map_os_error(exc, verb, display) from exc
    return b"".join(chunks)


def read_file_bytes(path: str, display: str, *, signal: AbortSignal | None, root: str | None, verb: Verb = "read",
                    stage: Stage = "read") -> bytes:
    """The whole regular file's bytes (abortable between chunks)."""
    check_abort(signal, stage)
    fd = _open_regular(path, verb, display, root)
    try:
        return _read_fd(fd, signal, stage, verb, display)
    finally:
        os.close(fd)


def _read_file_st(path: str, display: str, *, signal: AbortSignal | None, root: str | None, verb: Verb,
                  stage: Stage) -> tuple[bytes, os.stat_result]:
    """``read_file_bytes``, with the ``fstat`` of the descriptor the bytes were read from."""
    check_abort(signal, stage)
    fd = _open_regular(path, verb, display, root)
    try:
        try:
            st = os.fstat(fd)
        except OSError as exc:
            raise map_os_error(exc, verb, display) from exc
        return _read_fd(fd, signal, stage, verb, display, st.st_size), st
    finally:
        os.close(fd)


def read_text(path: str, display: str, *, signal: AbortSignal | None, rules: LocalRules) -> str:
    """§2.5 ``readText``: whole file, NUL sample, strict UTF-8, BOM stripped."""
    raw = read_file_bytes(path, display, signal=signal, root=rules.root)
    check_abort(signal, "read")
    return decode_for_read(raw, display, rules)


class StreamReader:
    """§2.5 ``streamText`` mechanics: one call of ``next_chunk`` per chunk, ``None`` at the end."""

    def __init__(self, path: str, display: str, *, signal: AbortSignal | None, rules: LocalRules,
                 chunk_size: int = READ_CHUNK) -> None:
        self._path = path
        self._display = display
        self._signal = signal
        self._rules = rules
        self._chunk_size = chunk_size
        self._fd: int | None = None
        self._decoder = TextStreamDecoder(foreign_boms=rules.detailed_errors)
        self._done = False

    def next_chunk(self) -> str | None:
        """Decoded text of the next chunk (possibly ``""``), or ``None`` after the flush."""
        if self._done:
            return None
        try:
            if self._fd is None:
                check_abort(self._signal, "read")
                self._fd = _open_regular(self._path, "read", self._display, self._rules.root)
            check_abort(self._signal, "read")
            try:
                raw = os.read(self._fd, self._chunk_size)
            except OSError as exc:
                raise map_os_error(exc, "read", self._display) from exc
            try:
                if raw:
                    return self._decoder.feed(raw)
                self._done = True
                self.close()
                return self._decoder.finish()
            except NotTextError as exc:
                raise not_text_error(exc, "read", self._display, self._rules) from None
        except BaseException:
            self._done = True
            self.close()
            raise

    def close(self) -> None:
        """Release the file descriptor (idempotent)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


# -- write (§2.8; D3, D4) -----------------------------------------------------------------

def _new_file_mode(rules: LocalRules) -> int:
    return (0o666 & ~rules.umask) if rules.umask_mode else 0o600


def write_file(target: Target, content: str, expected: WriteIntent | None, *, signal: AbortSignal | None,
               rules: LocalRules) -> WriteOutcome:
    """§2.8 ``writeText`` steps 1–7 (call with the target's locks held)."""
    key, display = target.key, target.display_path
    existing = probe(key, "write", display, root=rules.root)
    if existing is not None and existing.type != "file":
        raise not_regular_file("write", display)
    if isinstance(expected, ReplaceIfVersion):
        if existing is None:
            raise gone(display)
        if not existing.matches(expected.version):
            raise stale("write", display)
    elif isinstance(expected, CreateIfAbsent) and existing is not None:
        raise overwrite_not_observed(display)
    old: bytes | PriorSummary | None = None
    if existing is not None:
        if existing.st.st_size < rules.stream_edit_min_size:
            old = read_file_bytes(key, display, signal=signal, root=rules.root, verb="write")
        else:  # bounded memory: what D1/D4 need of it, and no diff basis
            old = _summarize(key, display, signal=signal, rules=rules)
    planned = rewrite(old, content, rules)
    data = planned.data
    mode = existing.mode if existing is not None else _new_file_mode(rules)
    owner = _owner_to_keep(existing, rules)
    atomic_write(key, data, mode=mode, owner=owner, signal=signal, verb="write", display=display, root=rules.root)
    return WriteOutcome(
        operation="update" if existing is not None else "create",
        version=_post_version(key, data, rules.root),
        before=planned.before,
        after=planned.after,
    )


def _summarize(key: str, display: str, *, signal: AbortSignal | None, rules: LocalRules) -> PriorSummary:
    """The ``PriorSummary`` of a file too big to hold, read in chunks (only when a profile
    switch needs it: the reference profile keeps neither the BOM nor CRLF)."""
    tally = PriorTally()
    check_abort(signal, "read")  # the prior file's read, as in §2.8 step 4
    if not (rules.keep_bom or rules.keep_line_endings):
        return tally.summary()
    fd = _open_regular(key, "write", display, rules.root)
    try:
        while True:
            check_abort(signal, "read")
            chunk = os.read(fd, READ_CHUNK)
            if not chunk:
                return tally.summary()
            tally.feed(chunk)
    except OSError as exc:
        raise map_os_error(exc, "write", display) from exc
    finally:
        os.close(fd)


def _owner_to_keep(existing: Probe | None, rules: LocalRules) -> tuple[int, int] | None:
    if existing is None or not rules.umask_mode:
        return None
    uid, gid = existing.st.st_uid, existing.st.st_gid
    if (uid, gid) == (os.geteuid(), os.getegid()):
        return None
    return uid, gid


def _post_version(key: str, data: bytes | None, root: str | None) -> Version:
    """The version after a write of ``data`` (``None``: content not in memory, re-read if needed)."""
    try:
        st = beneath.stat_in(key, root=root)
    except OSError:
        return Version("missing:" + key)
    return Version(versions.mint(st, key, content=data if data is not None and st.st_size == len(data) else None))


# -- edit (§2.11; D1, D2) -------------------------------------------------------------------

def edit_file(target: Target, edit: EditRequest, expected: EditIntent | None, *, signal: AbortSignal | None,
              rules: LocalRules) -> EditOutcome:
    """§2.11 ``editText`` steps 1–10 (call with the target's locks held)."""
    key, display = target.key, target.display_path
    existing = probe(key, "edit", display, root=rules.root)
    if existing is None:
        raise stale("edit", display)
    if existing.type != "file":
        raise not_regular_file("edit", display)
    # the version guard (A5): the stat fields first; a content digest, when the expected token
    # carries one, is checked on the bytes the edit reads anyway (one read instead of two)
    digest: str | None = None
    if expected is not None:
        fields, digest = versions.split_token(expected.version)
        if fields != versions.fields_of(existing.st):
            raise stale("edit", display)
    if existing.st.st_size >= rules.stream_edit_min_size:
        if expected is not None and digest is not None and not existing.matches(expected.version):
            raise stale("edit", display)
        from .stream_edit import stream_edit_file  # (imports this module)

        return stream_edit_file(target, edit, existing, signal=signal, rules=rules)
    if expected is None or digest is None:
        raw = read_file_bytes(key, display, signal=signal, root=rules.root, verb="edit",
                              stage="edit")
    else:
        raw = _read_if_digest(existing, expected.version, digest, display, signal=signal, rules=rules)
    check_abort(signal, "edit")
    edited = apply_edit(raw, edit, display, rules)
    data = edited.data
    atomic_write(key, data, mode=existing.mode, owner=_owner_to_keep(existing, rules), signal=signal,
                 verb="edit", display=display, root=rules.root)
    return EditOutcome(version=_post_version(key, data, rules.root), before=edited.plan.before,
                       after=edited.plan.after)


def _read_if_digest(existing: Probe, expected: str, digest: str, display: str, *, signal: AbortSignal | None,
                    rules: LocalRules) -> bytes:
    """The file's bytes for an edit whose expected version carries a content digest (A5),
    failing ``FS_STALE_VERSION`` unless they are the bytes of the probed file (same device and
    inode) with that digest. Same outcomes as checking ``existing.matches(expected)`` and then
    reading: when the read fails, the separate check decides between stale and that failure."""
    try:
        raw, st = _read_file_st(existing.path, display, signal=signal, root=rules.root, verb="edit",
                                stage="edit")
    except FsError:
        if not existing.matches(expected):
            raise stale("edit", display) from None
        raise
    if (st.st_dev, st.st_ino) != (existing.st.st_dev, existing.st.st_ino) or versions.digest_bytes(raw) != digest:
        raise stale("edit", display)
    return raw


# -- listing (§2.6; A6) ----------------------------------------------------------------------

def _list_error(exc: BaseException, display: str) -> FsError:
    if isinstance(exc, FsError):
        return exc
    if isinstance(exc, (FileNotFoundError, NotADirectoryError)):
        return not_found("list", display)
    if isinstance(exc, OSError) and exc.errno in (errno.EACCES, errno.EPERM):
        return permission_denied("list", display, cause=exc)
    if isinstance(exc, OSError):
        return io_error("list", display, os.strerror(exc.errno) if exc.errno else str(exc), cause=exc)
    return io_error("list", display, str(exc), cause=exc)


def list_directory(target: Target, *, signal: AbortSignal | None, rules: LocalRules) -> list[DirEntry]:
    """§2.6 ``listDir``: direct children in code-point name order (A6), never opened."""
    check_abort(signal, "list")
    display = target.display_path
    try:
        st = beneath.stat_in(target.key, root=rules.root)
    except OSError as exc:
        if isinstance(exc, (FileNotFoundError, NotADirectoryError)):
            raise not_found("list", display) from None
        raise _list_error(exc, display) from exc
    if not stat_mod.S_ISDIR(st.st_mode):
        raise not_directory(display)
    try:
        fd = beneath.open_dir(target.key, root=rules.root)
        try:
            names = os.listdir(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        raise _list_error(exc, display) from exc
    check_abort(signal, "list")
    entries: list[DirEntry] = []
    for name in sorted(names):
        check_abort(signal, "list")
        child_display = posixpath.join(display, name)
        try:
            child = resolve_target(name, target.key, signal=None, rules=rules)
            found = probe(child.key, "list", child_display, root=rules.root)
        except FsError as exc:
            if isinstance(exc.cause, OSError):
                raise _list_error(exc.cause, child_display) from exc.cause
            raise
        kind: FileType = found.type if found is not None else "other"
        entries.append(
            DirEntry(
                name=name,
                type=kind,
                target=Target(key=child.key, display_path=child_display),
                version=Version(versions.mint(found.st, found.path, read=False)) if found is not None else None,
                size=found.st.st_size if found is not None and kind == "file" else None,
            )
        )
        check_abort(signal, "list")
    return entries
