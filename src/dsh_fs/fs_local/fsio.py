"""Local disk mechanics, synchronous (REFERENCE-SPEC §2; DEVIATIONS A1–A6, D1–D4, D6, D12, D15–D17).

The seam's primitives on one target each (resolve, read, stream, list, write, edit). Runs in
worker threads (or inline, see ``filesystem``); checks the abort signal at the reference's
checkpoints (``dsh_fs.fs.errors.check_abort``); OS errors are mapped by ``oserrors`` (A2).
Built on ``files`` (probe, open, owner, version), ``rules`` (``LocalRules``), ``atomic`` (the
atomic replace) and ``large_edit`` (edits of huge files). Not here: locks (``locks``), the
async shell (``filesystem``), windowed reads (``reads``), observations, prompt text.
"""

from __future__ import annotations

import errno
import itertools
import os
import posixpath
import stat as stat_mod
from collections.abc import Iterator

from ..core.signal import AbortSignal
from ..fs.errors import (
    FsError,
    Stage,
    Verb,
    blank_path,
    check_abort,
    gone,
    no_home,
    not_directory,
    not_found,
    not_regular_file,
    nul_in_path,
    outside_workspace,
    overwrite_not_observed,
    parent_not_directory,
    stale,
)
from ..fs.provider_rules import (
    PriorSummary,
    PriorTally,
    apply_edit,
    decode_for_read,
    not_text_error,
    rewrite,
    well_formed,
)
from ..fs.paths import JS_WHITESPACE, expand_home, is_blank, names_home, node_resolve
from ..fs.text import NotTextError, TextStreamDecoder
from ..fs.types import (
    CreateIfAbsent,
    DirEntry,
    EditIntent,
    EditOutcome,
    EditRequest,
    FileType,
    ReplaceIfVersion,
    Target,
    TargetKey,
    Version,
    WriteIntent,
    WriteOutcome,
)
from . import acl, containment, files, versions
from .atomic import KEEP_ACL, atomic_write
from .files import STREAM_CHUNK, Probe, owner_to_keep, version_after_write
from .large_edit import edit_large_file
from .oserrors import list_error, map_os_error
from .recent_writes import RecentWrites
from .rules import LocalRules

__all__ = (
    "StreamReader",
    "display_path",
    "edit_file",
    "list_directory",
    "read_file_bytes",
    "read_text",
    "resolve_target",
    "write_file",
)

_WHOLE_READ_STEP = 8 * STREAM_CHUNK
"""bytes per ``os.read`` of a whole-file read after the first (which is sized by ``fstat``)"""


# -- resolve (§2.2) ----------------------------------------------------------------------

def resolve_target(path: str, base: str, *, signal: AbortSignal | None, rules: LocalRules) -> Target:
    """Map ``path`` (relative to ``base``) to a target: display path + realpath key.

    With a containment root, the real path is found without a step outside the root
    (``containment.real_path_in``): any path whose resolution leaves it fails with the one
    containment error, whatever lies outside (no oracle: nothing is learnt about it). With
    several roots (D36) a symlink from one root into another resolves in that other root.
    """
    check_abort(signal, "resolve")
    display = display_path(path, base, rules)
    try:
        try:
            key = _realpath(display, rules, strict=True)
        except FileNotFoundError:
            key = _missing_key(display, rules)
    except NotADirectoryError:
        raise parent_not_directory(display) from None
    except OSError as exc:
        raise map_os_error(exc, "resolve", display) from exc
    root = rules.root_for(display)
    if root is not None and not containment.inside(key, root.real):
        owner = rules.root_for(key)  # D36: a symlink into another root resolves there
        if owner is None or owner is containment.NOWHERE or not containment.inside(key, owner.real):
            raise outside_workspace(display, root.names if root is not containment.NOWHERE else None)
    check_abort(signal, "resolve")
    return Target(key=TargetKey(key), display_path=display)


def display_path(path: str, base: str, rules: LocalRules) -> str:
    """The display path of the model's ``path`` (relative to ``base``): a leading ``~`` is the
    home directory (D20), then ``.``/``..`` are collapsed lexically; it must be inside the
    containment root, lexically.

    :raises FsError: ``blank_path``; ``no_home`` (D20, a process without a home directory);
        ``nul_in_path``; ``outside_workspace``
    """
    if is_blank(path):
        raise blank_path()
    path = well_formed(path)
    if rules.home_tilde and names_home(path):
        home = os.path.expanduser("~")
        if not home.startswith("/"):
            raise no_home(path)
        path = expand_home(path, home)
    display = node_resolve(base, path)
    if "\0" in path:
        raise nul_in_path(display)
    if not rules.contains(display):
        raise outside_workspace(display, rules.root_names)
    return display


def _realpath(path: str, rules: LocalRules, *, strict: bool) -> str:
    """``os.path.realpath``, beneath the containment root when there is one."""
    root = rules.root_for(path)
    if root is None:
        return os.path.realpath(path, strict=strict)
    roots = rules.roots or ()
    return containment.real_path_in(path, root, strict=strict, others=roots if len(roots) > 1 else ())


def _missing_key(display: str, rules: LocalRules) -> str:
    """The key of a path that does not exist (yet).

    :raises OSError: as ``_realpath`` (``NotADirectoryError`` for a file-valued ancestor)
    """
    if rules.follow_dangling:
        # D12: follow a dangling final link (and any links above it) as the shell does
        return _realpath(display, rules, strict=False)
    missing = [posixpath.basename(display)]
    ancestor = posixpath.dirname(display)
    while True:
        try:
            return posixpath.join(_realpath(ancestor, rules, strict=True), *missing)
        except FileNotFoundError:
            if ancestor == "/":
                return display
            missing.insert(0, posixpath.basename(ancestor))
            ancestor = posixpath.dirname(ancestor)


# -- reading (§2.5) ----------------------------------------------------------------------

def _read_fd(fd: int, signal: AbortSignal | None, stage: Stage, verb: Verb, display: str,
             size: int | None = None) -> bytes:
    """The bytes of ``fd`` to EOF; ``size``: its size by an ``fstat`` just made (else one is made)."""
    chunks: list[bytes] = []
    try:
        # the first request fits the whole file when its size is known (one read, no
        # oversized buffer); /proc files report 0 and grow past it, so keep reading to EOF
        expected = os.fstat(fd).st_size if size is None else size
        want = min(max(expected + 1, 4096), _WHOLE_READ_STEP)
        while True:
            check_abort(signal, stage)
            chunk = os.read(fd, want)
            if not chunk:
                break
            chunks.append(chunk)
            if want > expected == len(chunk) > 0 and len(chunks) == 1:
                break  # the whole file as its fstat counted it, one byte short of the ask: at EOF
            want = _WHOLE_READ_STEP
    except OSError as exc:
        raise map_os_error(exc, verb, display) from exc
    return b"".join(chunks)


def read_file_bytes(path: str, display: str, *, signal: AbortSignal | None, root: containment.Root | None, verb: Verb = "read",
                    stage: Stage = "read") -> bytes:
    """The whole regular file's bytes (abortable between chunks)."""
    check_abort(signal, stage)
    fd = files.open_regular(path, verb, display, root)
    try:
        return _read_fd(fd, signal, stage, verb, display)
    finally:
        os.close(fd)


def read_text(path: str, display: str, *, signal: AbortSignal | None, rules: LocalRules) -> str:
    """§2.5 ``readText``: whole file, NUL sample, strict UTF-8, BOM stripped."""
    raw = read_file_bytes(path, display, signal=signal, root=rules.root_for(path))
    check_abort(signal, "read")
    return decode_for_read(raw, display, rules)


def read_text_within(path: str, display: str, *, signal: AbortSignal | None, rules: LocalRules,
                     max_size: int) -> str | None:
    """``read_text`` of a file of at most ``max_size`` bytes (by the ``fstat`` of the descriptor
    it reads), or ``None``, nothing read, for a bigger one (the caller reads it elsewhere).

    :raises FsError: as ``read_text``
    """
    check_abort(signal, "read")
    fd = files.open_regular(path, "read", display, rules.root_for(path))
    try:
        try:
            size = os.fstat(fd).st_size
        except OSError as exc:
            raise map_os_error(exc, "read", display) from exc
        if size > max_size:
            return None
        raw = _read_fd(fd, signal, "read", "read", display, size)
    finally:
        os.close(fd)
    check_abort(signal, "read")
    return decode_for_read(raw, display, rules)


BIGGER: object = object()
"""``read_text_at(max_size=…)``: the file is bigger, nothing was read"""


def read_text_at(path: str, display: str, version: str, *, signal: AbortSignal | None, rules: LocalRules,
                 max_size: int | None = None) -> str | None | object:
    """§2.5 ``readText`` of the file when the bytes read are of ``version`` (the seam's
    ``read_text_at``), else ``None``: one descriptor, whose ``fstat`` before and after the
    read must both carry the version's stat fields, and whose bytes its content digest when it
    has one (A5) — the comparison ``is_current`` makes, on the very bytes read and without a
    second path walk. ``BIGGER`` (nothing read) for a file over ``max_size`` bytes.

    :raises FsError: as ``read_text``
    """
    check_abort(signal, "read")
    fd, st = files.open_regular_st(path, "read", display, rules.root_for(path))
    try:
        if max_size is not None and st.st_size > max_size:
            return BIGGER
        raw = _read_fd(fd, signal, "read", "read", display, st.st_size)
        try:
            after = os.fstat(fd)
        except OSError as exc:
            raise map_os_error(exc, "read", display) from exc
    finally:
        os.close(fd)
    check_abort(signal, "read")
    text = decode_for_read(raw, display, rules)
    fields, digest = versions.split_token(version)
    now = versions.fields_of(st)
    if now != versions.fields_of(after):
        return None
    if fields != now:  # D29: the same bytes under other stat fields are still that version
        digest = versions.same_bytes(version, st.st_size) if rules.same_bytes and stat_mod.S_ISREG(st.st_mode) else None
        if digest is None:
            return None
    if digest is not None and versions.digest_bytes(raw) != digest:
        return None
    return text


class StreamReader:
    """§2.5 ``streamText`` mechanics: one call of ``next_chunk`` per chunk, ``None`` at the end."""

    def __init__(self, path: str, display: str, *, signal: AbortSignal | None, rules: LocalRules,
                 chunk_size: int = STREAM_CHUNK) -> None:
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
                self._fd = files.open_regular(self._path, "read", self._display, self._rules.root_for(self._path))
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

def _write_guard(target: Target, expected: WriteIntent | None, rules: LocalRules, existing: Probe | None | object,
                 *, same_bytes: bool) -> Probe | None:
    """§2.8 ``writeText`` steps 1-3 for a write of ``target`` (call with its locks held): the
    existing file's probe (``existing``, or made here when ``files.UNPROBED``), after refusing a
    non-file, a stale or vanished ``ReplaceIfVersion`` (same bytes under other stat fields accepted
    when ``same_bytes``, D29) and a ``CreateIfAbsent`` over an existing file."""
    key, display = target.key, target.display_path
    if existing is files.UNPROBED:
        existing = files.probe(key, "write", display, root=rules.root_for(key))
    assert existing is None or isinstance(existing, Probe)
    if existing is not None and existing.type != "file":
        raise not_regular_file("write", display)
    if isinstance(expected, ReplaceIfVersion):
        if existing is None:
            raise gone(display)
        if not existing.matches(expected.version, content=same_bytes):
            raise stale("write", display)
    elif isinstance(expected, CreateIfAbsent) and existing is not None:
        raise overwrite_not_observed(display)
    return existing


def write_file(target: Target, content: str, expected: WriteIntent | None, *, signal: AbortSignal | None,
               rules: LocalRules, existing: Probe | None | object = files.UNPROBED,
               recent: RecentWrites | None = None) -> WriteOutcome:
    """§2.8 ``writeText`` steps 1–7 (call with the target's locks held).

    :param existing: the probe of the target (``files.probe`` with verb ``write``) its caller
        made under the same locks; by default it is made here
    :param recent: where the bytes written are kept under the version reported (A5: a later
        edit guarded by it need not hash them again)
    """
    key, display = target.key, target.display_path
    existing = _write_guard(target, expected, rules, existing, same_bytes=rules.same_bytes)
    if existing is not None:
        files.keep_read_only(existing, "write", display, rules)
    old: bytes | PriorSummary | None = None
    if existing is not None:
        if existing.st.st_size < rules.stream_edit_min_size:
            old = read_file_bytes(key, display, signal=signal, root=rules.root_for(key), verb="write")
        else:  # bounded memory: what D1/D4 need of it, and no diff basis
            old = _summarize(key, display, signal=signal, rules=rules)
    planned = rewrite(old, content, rules, display)
    data = planned.data
    # a new file: made as creat(0o666) makes it (umask or default ACL; D3), else the reference's 0o600
    mode = existing.mode if existing is not None else (None if rules.umask_mode else 0o600)
    owner = owner_to_keep(existing, rules)
    atomic_write(key, data, mode=mode, owner=owner, signal=signal, verb="write", display=display, root=rules.root_for(key))
    version = version_after_write(key, data, rules.root_for(key))
    if recent is not None:
        recent.remember(key, version, data)
    return WriteOutcome(
        operation="update" if existing is not None else "create",
        version=version,
        before=planned.before,
        after=planned.after,
    )


def write_raw(target: Target, payload: tuple[bytes, int | None], expected: WriteIntent | None, *,
              signal: AbortSignal | None, rules: LocalRules, existing: Probe | None | object = files.UNPROBED,
              recent: RecentWrites | None = None) -> Version:
    """``FileSystem.write_bytes`` (call with the target's locks held): ``write_file``'s guards,
    then exactly ``payload``'s bytes, atomically and durably; the mode given, else the existing
    file's, else ``write_file``'s for a new file.

    :param payload: ``(data, mode)``
    """
    data, mode = payload
    key, display = target.key, target.display_path
    existing = _write_guard(target, expected, rules, existing, same_bytes=False)
    check_abort(signal, "write")
    if mode is None:
        mode = existing.mode if existing is not None else (None if rules.umask_mode else 0o600)
    atomic_write(key, data, mode=mode, owner=owner_to_keep(existing, rules), signal=signal, verb="write",
                 display=display, root=rules.root_for(key))
    version = version_after_write(key, data, rules.root_for(key))
    if recent is not None:
        recent.remember(key, version, data)
    return version


def _summarize(key: str, display: str, *, signal: AbortSignal | None, rules: LocalRules) -> PriorSummary:
    """The ``PriorSummary`` of a file too big to hold, read in chunks (only when a profile
    switch needs it: the reference profile keeps neither the BOM nor CRLF)."""
    tally = PriorTally()
    check_abort(signal, "read")  # the prior file's read, as in §2.8 step 4
    if not rules.keep_file_style:
        return tally.summary()
    fd = files.open_regular(key, "write", display, rules.root_for(key))
    try:
        while True:
            check_abort(signal, "read")
            chunk = os.read(fd, STREAM_CHUNK)
            if not chunk:
                return tally.summary()
            tally.feed(chunk)
    except OSError as exc:
        raise map_os_error(exc, "write", display) from exc
    finally:
        os.close(fd)


# -- edit (§2.11; D1, D2) -------------------------------------------------------------------

def edit_file(target: Target, edit: EditRequest, expected: EditIntent | None, *, signal: AbortSignal | None,
              rules: LocalRules, existing: Probe | None | object = files.UNPROBED,
              recent: RecentWrites | None = None) -> EditOutcome:
    """§2.11 ``editText`` steps 1–10 (call with the target's locks held).

    :param existing: as for ``write_file`` (verb ``edit``)
    :param recent: as for ``write_file``; also asked whether the bytes read are the ones kept
        under the expected version, whose digest that version then carries (A5)
    """
    key, display = target.key, target.display_path
    if existing is files.UNPROBED:
        existing = files.probe(key, "edit", display, root=rules.root_for(key))
    assert existing is None or isinstance(existing, Probe)
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
            # D29: the same bytes under other stat fields, checked on the bytes the edit reads
            digest = versions.same_bytes(expected.version, existing.st.st_size) if rules.same_bytes else None
            if digest is None:
                raise stale("edit", display)
    files.keep_read_only(existing, "edit", display, rules)
    if existing.st.st_size >= rules.stream_edit_min_size:
        if expected is not None and digest is not None and not existing.matches(expected.version, content=rules.same_bytes):
            raise stale("edit", display)
        return edit_large_file(target, edit, existing, signal=signal, rules=rules)
    if expected is None or digest is None:
        raw, _st, old_acl = _read_for_edit(key, display, signal=signal, root=rules.root_for(key))
    else:
        raw, old_acl = _read_if_digest(existing, expected.version, digest, display, signal=signal, rules=rules,
                                       recent=recent)
    check_abort(signal, "edit")
    edited = apply_edit(raw, edit, display, rules)
    data = edited.data
    atomic_write(key, data, mode=existing.mode, owner=owner_to_keep(existing, rules), signal=signal,
                 verb="edit", display=display, root=rules.root_for(key), old_acl=old_acl)
    version = version_after_write(key, data, rules.root_for(key))
    if recent is not None:
        recent.remember(key, version, data)
    return EditOutcome(version=version, before=edited.plan.before, after=edited.plan.after,
                       changed=edited.plan.changed)


def _read_for_edit(path: str, display: str, *, signal: AbortSignal | None,
                   root: containment.Root | None) -> tuple[bytes, os.stat_result, bytes | None | object]:
    """The bytes an edit reads, the ``fstat`` of their descriptor, and the file's access ACL
    read from that same descriptor (D21: what the replacement must keep), all under the
    edit's locks. When the ACL cannot be read there, ``atomic.KEEP_ACL``: the write reads
    it by name and fails as it always did, after the edit's own checks.

    :raises FsError: as ``read_file_bytes`` (verb ``edit``, stage ``edit``)
    """
    check_abort(signal, "edit")
    fd, st = files.open_regular_st(path, "edit", display, root)
    try:
        raw = _read_fd(fd, signal, "edit", "edit", display, st.st_size)
        try:
            old_acl: bytes | None | object = acl.access_acl_of(fd)
        except OSError:
            old_acl = KEEP_ACL
        return raw, st, old_acl
    finally:
        os.close(fd)


def _read_if_digest(existing: Probe, expected: str, digest: str, display: str, *, signal: AbortSignal | None,
                    rules: LocalRules, recent: RecentWrites | None = None) -> tuple[bytes, bytes | None | object]:
    """The file's bytes (and access ACL, as ``_read_for_edit``) for an edit whose expected
    version carries a content digest (A5), failing ``FS_STALE_VERSION`` unless they are the
    bytes of the probed file (same device and inode) with that digest. Same outcomes as
    checking ``existing.matches(expected)`` and then reading: when the read fails, the separate
    check decides between stale and that failure. Bytes ``recent`` keeps under exactly
    ``expected`` have its digest (they are the bytes it was minted from): they are not hashed."""
    try:
        raw, st, old_acl = _read_for_edit(existing.path, display, signal=signal, root=rules.root_for(existing.path))
    except FsError:
        if not existing.matches(expected, content=rules.same_bytes):
            raise stale("edit", display) from None
        raise
    if (st.st_dev, st.st_ino) != (existing.st.st_dev, existing.st.st_ino):
        raise stale("edit", display)
    if not (recent is not None and recent.vouches(existing.path, expected, raw)) and versions.digest_bytes(raw) != digest:
        raise stale("edit", display)
    return raw, old_acl


# -- listing (§2.6; A6) ----------------------------------------------------------------------

def list_directory(target: Target, *, signal: AbortSignal | None, rules: LocalRules) -> list[DirEntry]:
    """§2.6 ``listDir``: direct children in code-point name order (A6), never opened.

    A child that is no symlink by its directory entry is stat'ed through the listed
    directory's descriptor (``fstatat`` without following: one system call) and keyed as the
    directory's real path plus its name, which is its real path; a symlink (or a child that
    became one since the directory was read, or a name the path walk treats specially:
    ``_plain_name``) is resolved and stat'ed as a path, beneath the containment root
    (``_linked_child``), as §2.6 step 6 says for every child. The entries are the same
    either way.
    """
    check_abort(signal, "list")
    display = target.display_path
    fd = _open_listed(target, rules)
    entries: list[DirEntry] = []
    try:
        try:
            with os.scandir(fd) as scanned:  # (name, is a link by its entry's type): no DirEntry kept
                children = sorted((entry.name, entry.is_symlink()) for entry in scanned)
            check_abort(signal, "list")
            entries.extend(_child_entry(target, fd, name, linked, rules) for name, linked in children)
        finally:
            os.close(fd)
    except OSError as exc:
        raise list_error(exc, display) from exc
    check_abort(signal, "list")
    return entries


SCAN_BATCH = 512
"""children ``scan_directory`` stats and yields at a time"""


def scan_directory(target: Target, *, signal: AbortSignal | None, rules: LocalRules,
                   batch: int = SCAN_BATCH) -> Iterator[list[DirEntry]]:
    """``list_directory``'s entries in batches of at most ``batch``, in the directory's own
    order, while the directory is read: only one batch (and the kernel's read buffer) is held,
    whatever the directory's size (``FileSystem.iter_dir``). The same checks and the same
    entries as ``list_directory``; the descriptor is closed when the generator ends or is
    closed. A directory changed during the scan gives each name at most once (``readdir``).

    :raises FsError: as ``list_directory``
    """
    check_abort(signal, "list")
    display = target.display_path
    fd = _open_listed(target, rules)
    try:
        try:
            with os.scandir(fd) as scanned:
                while True:
                    names = [(entry.name, entry.is_symlink()) for entry in itertools.islice(scanned, batch)]
                    if not names:
                        break
                    check_abort(signal, "list")
                    yield [_child_entry(target, fd, name, linked, rules) for name, linked in names]
        finally:
            os.close(fd)
    except OSError as exc:
        raise list_error(exc, display) from exc
    check_abort(signal, "list")


def _open_listed(target: Target, rules: LocalRules) -> int:
    """A descriptor of the directory ``target``, opened beneath the containment root.

    :raises FsError: ``not_found`` (missing, or a file as a parent), ``not_directory``,
        ``list_error``
    """
    display = target.display_path
    try:
        st = containment.stat_in(target.key, root=rules.root_for(target.key))
    except OSError as exc:
        if isinstance(exc, (FileNotFoundError, NotADirectoryError)):
            raise not_found("list", display) from None
        raise list_error(exc, display) from exc
    if not stat_mod.S_ISDIR(st.st_mode):
        raise not_directory(display)
    try:
        return containment.open_dir(target.key, root=rules.root_for(target.key))
    except OSError as exc:
        raise list_error(exc, display) from exc


def _child_entry(target: Target, fd: int, name: str, linked: bool, rules: LocalRules) -> DirEntry:
    """The entry of the child ``name`` of the directory open as ``fd`` (``list_directory``)."""
    child_display = target.display_path.rstrip("/") + "/" + name
    child_st = None
    try:
        if not linked and _plain_name(name):
            child_st = os.stat(name, dir_fd=fd, follow_symlinks=False)  # fstatat, AT_SYMLINK_NOFOLLOW
    except FileNotFoundError:
        child_st = None  # gone since the read: the path walk below says so
    except OSError as exc:
        raise list_error(exc, child_display) from exc
    if child_st is not None and not stat_mod.S_ISLNK(child_st.st_mode):
        kind = files.file_type(child_st.st_mode)
        child_key = target.key.rstrip("/") + "/" + name
        return DirEntry(
            name=name, type=kind, target=Target(key=TargetKey(child_key), display_path=child_display),
            version=Version(versions.mint(child_st, child_key, read=False)),
            size=child_st.st_size if kind == "file" else None,
        )
    return _linked_child(target, name, child_display, rules)


def _plain_name(name: str) -> bool:
    """A name the path walk would resolve to itself below the directory: not blank (§2.6's
    quirk: the walk refuses it), no lone surrogate (the walk makes it U+FFFD). The others
    keep the walk's answer."""
    blank = name[:1] in JS_WHITESPACE and is_blank(name)  # a blank name starts blank: one look for the others
    return not blank and (name.isascii() or well_formed(name) == name)


def _linked_child(target: Target, name: str, child_display: str, rules: LocalRules) -> DirEntry:
    """The entry of a child that is a symlink (or vanished): resolved beneath the root and
    stat'ed following it. A link out of the workspace is listed as ``other``, never followed
    (nothing told of outside); a symlink loop is ``other`` too, so one bad entry never hides
    the directory (E23)."""
    try:  # "./~": a child named ``~`` is that child, not the home directory (D20 is for paths given)
        child_key = resolve_target("./~" if name == "~" else name, target.key, signal=None, rules=rules).key
        found = files.probe(child_key, "list", child_display, root=rules.root_for(child_key))
    except FsError as exc:
        if isinstance(exc.cause, containment.Escape) or (rules.list_symlink_loops and isinstance(exc.cause, OSError)
                                                     and exc.cause.errno == errno.ELOOP):
            child_key, found = TargetKey(posixpath.join(target.key, name)), None
        elif isinstance(exc.cause, OSError):
            raise list_error(exc.cause, child_display) from exc.cause
        else:
            raise
    kind: FileType = found.type if found is not None else "other"
    return DirEntry(
        name=name,
        type=kind,
        target=Target(key=child_key, display_path=child_display),
        version=Version(versions.mint(found.st, found.path, read=False)) if found is not None else None,
        size=found.st.st_size if found is not None and kind == "file" else None,
    )
