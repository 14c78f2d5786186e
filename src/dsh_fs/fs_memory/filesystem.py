"""``MemoryFileSystem``: an in-memory provider, the fake that ships with the library.

Files are byte blobs keyed by their path below a display root (``/`` by default); there are
no symlinks, modes or owners. Directories are path prefixes of stored files plus explicitly
created empty ones (``mkdir``); a stored file wins over a prefix of the same name. This is
the object-store model the S3 provider uses, so tests written against this fake carry over.

Text rules are the shared ones (``fs.text``, ``fs.literal_edit``, ``fs.provider_rules``), so
reads, writes and edits produce exactly the local provider's bytes and messages. Every
mutation checks its guard and stores without yielding to the event loop in between, so it is
atomic with respect to every other task (the per-target lock of §2.9 is implicit).
"""

from __future__ import annotations

import itertools
import time
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import ClassVar, Literal

import anyio.lowlevel

from ..fs.legacy_text import check_encodings
from ..fs.backend import (
    AbortSignal,
    CreateIfAbsent,
    DeleteIntent,
    DeleteOutcome,
    DirEntry,
    EditIntent,
    EditOutcome,
    EditRequest,
    FileSystem,
    Info,
    KnownContents,
    NotTextError,
    PathInfo,
    Profile,
    RenameIntent,
    RenameOutcome,
    ReplaceIfVersion,
    Target,
    TargetKey,
    TextRules,
    TextStreamDecoder,
    Verb,
    Version,
    WRITE_MAX_SIZE,
    WalkEntry,
    WriteIntent,
    WriteOutcome,
    apply_edit,
    check_abort,
    check_root,
    decode_for_read,
    display_of,
    foreign_target,
    gone,
    not_directory,
    not_found,
    not_regular_file,
    not_text_error,
    overwrite_not_observed,
    rename_destination_exists,
    resolve_rooted,
    rewrite,
    stale,
)

__all__ = ("MemoryFileSystem",)

STREAM_CHUNK = 64 * 1024


def _rel_of(path: str) -> str:
    return "/".join(p for p in path.split("/") if p not in ("", "."))


class MemoryFileSystem(FileSystem):
    """Files held in a dict, served through the seam.

    :param files: initial files, relative path → text (stored as UTF-8) or bytes
    :param cwd: default base for relative paths (an absolute display path; default: ``root``)
    :param root: the display path of the workspace root; paths outside it are refused with
        ``FS_PERMISSION_DENIED``
    :param profile: ``default`` (DEVIATIONS D1, D2, D4, D6 on) or ``reference``
    :param name: identity used in target keys (``mem://<name>/<path>``); random by default
    :param write_max_size: the largest file (bytes) a write or an edit may store (DEVIATIONS D16)
    :param encodings: legacy encodings besides UTF-8 (DEVIATIONS F7, docs/ENCODINGS.md)
    """

    name: ClassVar[str] = "fs-memory"

    def __init__(
        self,
        files: Mapping[str, str | bytes] | None = None,
        *,
        cwd: str | None = None,
        root: str = "/",
        profile: Profile | str | None = None,
        name: str | None = None,
        write_max_size: int = WRITE_MAX_SIZE,
        encodings: Sequence[str] = (),
    ) -> None:
        self.root = check_root(root)
        self.cwd = cwd if cwd is not None else self.root
        self.profile = Profile.parse(profile)
        self.rules = TextRules.for_profile(self.profile, write_max_size=write_max_size,
                                           encodings=check_encodings(encodings))
        self._id = name or uuid.uuid4().hex[:12]
        self._files: dict[str, tuple[bytes, Version]] = {}
        self._mtimes: dict[str, int] = {}  # relative path → modification time (ns since the epoch)
        self._dirs: set[str] = set()
        self._counter = itertools.count(1)
        self._known = KnownContents()
        """D29: the digests of the bytes stored under recent versions"""
        for path, content in (files or {}).items():
            self.put(path, content)

    def with_profile(self, profile: Profile | str | None, *, write_max_size: int | None = None) -> "MemoryFileSystem":
        """Another provider over the same files (and version counter) with ``profile`` (and
        ``write_max_size``, else this one's)."""
        twin = MemoryFileSystem(cwd=self.cwd, root=self.root, profile=profile, name=self._id,
                                write_max_size=self.rules.write_max_size if write_max_size is None else write_max_size,
                                encodings=self.rules.encodings)
        twin._files, twin._mtimes, twin._dirs, twin._counter = self._files, self._mtimes, self._dirs, self._counter
        twin._known = self._known
        return twin

    # -- direct access (tests, fixtures, "another process") --------------------------------
    def _version(self) -> Version:
        return Version(f"m{next(self._counter)}")

    def _store(self, rel: str, data: bytes, mtime_ns: int | None = None) -> Version:
        version = self._version()
        self._files[rel] = (data, version)
        self._mtimes[rel] = time.time_ns() if mtime_ns is None else mtime_ns
        if self.rules.same_bytes:
            self._known.remember(version, data)
        return version

    def _is(self, existing: tuple[bytes, Version], version: Version) -> bool:
        """Is the stored ``existing`` (bytes, version) still ``version`` for a guard: the same
        version, or (D29, ``TextRules.same_bytes``) the bytes stored under ``version``?"""
        return existing[1] == version or (self.rules.same_bytes and self._known.same(version, existing[0]))

    def put(self, path: str, content: str | bytes, *, mtime_ns: int | None = None) -> Version:
        """Store ``content`` at ``path`` (relative to the root) as another writer would; returns
        the new version. Parent directories come into being implicitly.

        :param mtime_ns: the file's modification time (ns since the epoch); default: now
        """
        data = content.encode("utf-8", "surrogatepass") if isinstance(content, str) else bytes(content)
        return self._store(_rel_of(path), data, mtime_ns)

    def get(self, path: str) -> bytes | None:
        """The bytes stored at ``path`` (relative to the root), or ``None``."""
        found = self._files.get(_rel_of(path))
        return None if found is None else found[0]

    def remove(self, path: str) -> None:
        """Remove the file at ``path``, or everything under it when it is a directory (as
        another writer would; the seam's guarded primitive is ``delete``)."""
        rel = _rel_of(path)
        self._files.pop(rel, None)
        self._mtimes.pop(rel, None)
        self._dirs.discard(rel)
        for key in [k for k in self._files if k.startswith(rel + "/")]:
            del self._files[key]
            self._mtimes.pop(key, None)
        self._dirs.difference_update([d for d in self._dirs if d.startswith(rel + "/")])

    def mkdir(self, path: str) -> None:
        """Create an (empty) directory at ``path``."""
        rel = _rel_of(path)
        if rel:
            self._dirs.add(rel)

    def snapshot(self) -> dict[str, bytes]:
        """Every stored file, relative path → bytes, sorted by path."""
        return {k: v[0] for k, v in sorted(self._files.items())}

    # -- helpers ---------------------------------------------------------------------------
    def _key(self, rel: str) -> TargetKey:
        return TargetKey(f"mem://{self._id}/{rel}")

    def _rel(self, target: Target) -> str:
        prefix = f"mem://{self._id}/"
        if not target.key.startswith(prefix):
            raise foreign_target(target.display_path, "not a target of this provider")
        return target.key[len(prefix) :]

    def _is_dir(self, rel: str) -> bool:
        if rel == "":
            return True
        if rel in self._files:
            return False
        if rel in self._dirs:
            return True
        prefix = rel + "/"
        return any(k.startswith(prefix) for k in self._files) or any(d.startswith(prefix) for d in self._dirs)

    def _info(self, rel: str) -> Info | None:
        found = self._files.get(rel)
        if found is not None:
            return Info(version=found[1], type="file", size=len(found[0]))
        if self._is_dir(rel):
            return Info(version=Version(f"dir:{rel}"), type="directory")
        return None

    def _listable(self, rel: str, display: str) -> None:
        """:raises FsError: ``cannot list "<display>": not found`` / ``not a directory``"""
        info = self._info(rel)
        if info is None:
            raise not_found("list", display)
        if info.type != "directory":
            raise not_directory(display)

    def _read_bytes(self, target: Target, verb: Verb) -> bytes:
        rel = self._rel(target)
        found = self._files.get(rel)
        if found is not None:
            return found[0]
        if self._is_dir(rel):
            raise not_regular_file(verb, target.display_path)
        raise not_found(verb, target.display_path)

    def _existing_file(self, rel: str, display: str, version: Version | None,
                       verb: Literal["delete", "rename"]) -> Version:
        """The version of the file at ``rel`` for a guarded delete/rename, or the error."""
        existing = self._files.get(rel)
        if existing is None:
            if self._is_dir(rel):
                raise not_regular_file(verb, display)
            raise gone(display, verb) if version is not None else not_found(verb, display)
        if version is not None and not self._is(existing, version):
            raise stale(verb, display)
        return existing[1]

    # -- the primitives ----------------------------------------------------------------------
    @property
    def text_encodings(self) -> tuple[str, ...]:
        """The deployment's legacy encodings (``TextRules.encodings``, F7). See
        ``FileSystem.text_encodings``."""
        return self.rules.encodings

    def workspace_roots(self) -> tuple[str, ...]:
        """``(root,)``: the display root every path stays under. See ``FileSystem.workspace_roots``."""
        return (self.root,)

    async def resolve(self, path: str, *, cwd: str | None = None, signal: AbortSignal | None = None) -> Target:
        """Lexical resolution inside the root (``fs.rooted``); key ``mem://<name>/<path>``.

        :raises FsError: FS_ABORTED ``resolve aborted``; FS_NOT_FOUND for a blank path;
            FS_PERMISSION_DENIED outside the root
        """
        check_abort(signal, "resolve")
        await anyio.lowlevel.checkpoint()
        found = resolve_rooted(path, cwd or self.cwd, self.root, home_tilde=self.rules.home_tilde)
        check_abort(signal, "resolve")
        return Target(key=self._key(found.rel), display_path=found.display)

    async def stat(self, target: Target, *, signal: AbortSignal | None = None) -> Info | None:
        """A file (size in bytes), a directory (no size) or ``None``."""
        check_abort(signal, "stat")
        await anyio.lowlevel.checkpoint()
        info = self._info(self._rel(target))
        check_abort(signal, "stat")
        return info

    async def is_current(self, target: Target, version: Version, *, signal: AbortSignal | None = None) -> bool:
        """Is ``target`` a file at ``version`` by the guards' comparison (D29: the bytes stored
        under ``version`` count)? See ``FileSystem.is_current``."""
        check_abort(signal, "stat")
        await anyio.lowlevel.checkpoint()
        existing = self._files.get(self._rel(target))
        check_abort(signal, "stat")
        return existing is not None and self._is(existing, version)

    async def lstat(self, path: str, *, cwd: str | None = None, signal: AbortSignal | None = None) -> PathInfo | None:
        """As ``stat`` of the resolved path (there are no symlinks here)."""
        check_abort(signal, "lstat")
        found = resolve_rooted(path, cwd or self.cwd, self.root, home_tilde=self.rules.home_tilde)
        await anyio.lowlevel.checkpoint()
        info = self._info(found.rel)
        check_abort(signal, "lstat")
        return None if info is None else PathInfo(version=info.version, type=info.type, size=info.size)

    async def read_text(self, target: Target, *, signal: AbortSignal | None = None) -> str:
        """§2.5 ``readText``. :raises FsError: FS_NOT_FOUND, FS_NOT_REGULAR_FILE, FS_NOT_TEXT, FS_ABORTED"""
        check_abort(signal, "read")
        await anyio.lowlevel.checkpoint()
        raw = self._read_bytes(target, "read")
        check_abort(signal, "read")
        return decode_for_read(raw, target.display_path, self.rules)

    async def stream_text(self, target: Target, *, signal: AbortSignal | None = None) -> AsyncIterator[str]:
        """§2.5 ``streamText`` in chunks of 64 KiB of the bytes as they were when iteration began."""
        check_abort(signal, "read")
        raw = self._read_bytes(target, "read")
        decoder = TextStreamDecoder(foreign_boms=self.rules.detailed_errors)
        try:
            for start in range(0, len(raw), STREAM_CHUNK):
                await anyio.lowlevel.checkpoint()
                check_abort(signal, "read")
                yield decoder.feed(raw[start : start + STREAM_CHUNK])
            yield decoder.finish()
        except NotTextError as exc:
            raise not_text_error(exc, "read", target.display_path, self.rules) from None

    async def list_dir(self, target: Target, *, signal: AbortSignal | None = None) -> list[DirEntry]:
        """Direct children in code-point name order (DEVIATIONS A6)."""
        check_abort(signal, "list")
        await anyio.lowlevel.checkpoint()
        rel = self._rel(target)
        display = target.display_path
        self._listable(rel, display)
        prefix = rel + "/" if rel else ""
        names: set[str] = set()
        for path in itertools.chain(self._files, self._dirs):
            if path.startswith(prefix) and len(path) > len(prefix):
                names.add(path[len(prefix) :].split("/", 1)[0])
        entries: list[DirEntry] = []
        for name in sorted(names):
            check_abort(signal, "list")
            child = prefix + name
            child_info = self._info(child)
            assert child_info is not None
            entries.append(
                DirEntry(
                    name=name,
                    type=child_info.type,
                    target=Target(key=self._key(child), display_path=display_of(self.root, child)),
                    version=child_info.version,
                    size=child_info.size if child_info.type == "file" else None,
                )
            )
        return entries

    async def walk(self, target: Target, *, signal: AbortSignal | None = None) -> AsyncIterator[WalkEntry]:
        """Every stored file below ``target`` with its modification time, and every directory
        (prefixes and ``mkdir`` ones), parents first. A file hides anything stored below its
        own path (as ``stat`` does). See ``FileSystem.walk``."""
        check_abort(signal, "list")
        await anyio.lowlevel.checkpoint()
        rel = self._rel(target)
        self._listable(rel, target.display_path)
        prefix = rel + "/" if rel else ""
        found: dict[str, bool] = {}  # path below target → is a file
        for path in itertools.chain(self._dirs, self._files):
            if not path.startswith(prefix) or len(path) == len(prefix):
                continue
            below = path[len(prefix) :].split("/")
            for depth in range(1, len(below)):
                found.setdefault("/".join(below[:depth]), False)
            found.setdefault("/".join(below), path in self._files)
        for below in sorted(found):
            parts = below.split("/")
            if any(found.get("/".join(parts[:depth])) for depth in range(1, len(parts))):
                continue  # below a file: unreachable
            child = prefix + below
            shown = Target(key=self._key(child), display_path=display_of(self.root, child))
            if found[below]:
                data = self._files[child][0]
                yield WalkEntry(rel=below, type="file", target=shown, size=len(data), mtime_ns=self._mtimes.get(child))
            else:
                yield WalkEntry(rel=below, type="directory", target=shown)

    async def stream_bytes(self, target: Target, *, signal: AbortSignal | None = None) -> AsyncIterator[bytes]:
        """The stored bytes as they were when iteration began, in 64 KiB chunks."""
        check_abort(signal, "read")
        raw = self._read_bytes(target, "read")
        for start in range(0, len(raw), STREAM_CHUNK):
            await anyio.lowlevel.checkpoint()
            check_abort(signal, "read")
            yield raw[start : start + STREAM_CHUNK]

    def _write_max_size(self) -> int:
        """D16's limit, held by the seam's ``check_replaceable``/``check_creatable``."""
        return self.rules.write_max_size

    async def write_text(
        self,
        target: Target,
        content: str,
        expected: WriteIntent | None = None,
        *,
        signal: AbortSignal | None = None,
    ) -> WriteOutcome:
        """§2.8 ``writeText``; stores and answers without yielding in between (atomic).

        :raises FsError: FS_NOT_REGULAR_FILE (a directory), FS_STALE_VERSION
            (``replaceIfVersion`` on a missing or changed file), FS_NOT_OBSERVED
            (``createIfAbsent`` over a file), FS_ABORTED ``read aborted``/``write aborted``
        """
        await anyio.lowlevel.checkpoint()
        rel = self._rel(target)
        display = target.display_path
        existing = self._files.get(rel)
        if existing is None and self._is_dir(rel):
            raise not_regular_file("write", display)
        if isinstance(expected, ReplaceIfVersion):
            if existing is None:
                raise gone(display)
            if not self._is(existing, expected.version):
                raise stale("write", display)
        elif isinstance(expected, CreateIfAbsent) and existing is not None:
            raise overwrite_not_observed(display)
        if existing is not None:
            check_abort(signal, "read")
        planned = rewrite(existing[0] if existing is not None else None, content, self.rules, display)
        check_abort(signal, "write")
        version = self._store(rel, planned.data)
        return WriteOutcome(
            operation="update" if existing is not None else "create",
            version=version,
            before=planned.before,
            after=planned.after,
        )

    async def write_bytes(self, target: Target, data: bytes, expected: WriteIntent | None = None, *,
                          mode: int | None = None, signal: AbortSignal | None = None) -> Version:
        """``FileSystem.write_bytes``: ``write_text``'s guards, then exactly ``data`` (no mode:
        this provider has none)."""
        await anyio.lowlevel.checkpoint()
        rel = self._rel(target)
        display = target.display_path
        existing = self._files.get(rel)
        if existing is None and self._is_dir(rel):
            raise not_regular_file("write", display)
        if isinstance(expected, ReplaceIfVersion):
            if existing is None:
                raise gone(display)
            if existing[1] != expected.version:
                raise stale("write", display)
        elif isinstance(expected, CreateIfAbsent) and existing is not None:
            raise overwrite_not_observed(display)
        check_abort(signal, "write")
        return self._store(rel, bytes(data))

    async def edit_text(
        self,
        target: Target,
        edit: EditRequest,
        expected: EditIntent | None = None,
        *,
        signal: AbortSignal | None = None,
    ) -> EditOutcome:
        """§2.11 ``editText``; the guard is checked before matching, the store is atomic.

        :raises FsError: FS_STALE_VERSION (missing, or guarded and changed),
            FS_NOT_REGULAR_FILE, FS_NOT_TEXT, FS_EDIT_NOT_FOUND, FS_AMBIGUOUS_EDIT, FS_ABORTED
        """
        await anyio.lowlevel.checkpoint()
        rel = self._rel(target)
        display = target.display_path
        existing = self._files.get(rel)
        if existing is None:
            if self._is_dir(rel):
                raise not_regular_file("edit", display)
            raise stale("edit", display)
        if expected is not None and not self._is(existing, expected.version):
            raise stale("edit", display)
        check_abort(signal, "edit")
        edited = apply_edit(existing[0], edit, display, self.rules)
        check_abort(signal, "write")
        version = self._store(rel, edited.data)
        return EditOutcome(version=version, before=edited.plan.before, after=edited.plan.after)

    async def delete(
        self,
        target: Target,
        expected: DeleteIntent | None = None,
        *,
        signal: AbortSignal | None = None,
    ) -> DeleteOutcome:
        """Remove the file; guard and removal without yielding in between (atomic).

        :raises FsError: FS_STALE_VERSION (guarded: changed or missing), FS_NOT_FOUND
            (unguarded, missing), FS_NOT_REGULAR_FILE (a directory), FS_ABORTED
        """
        await anyio.lowlevel.checkpoint()
        rel = self._rel(target)
        version = self._existing_file(rel, target.display_path, expected.version if expected else None, "delete")
        check_abort(signal, "delete")
        del self._files[rel]
        return DeleteOutcome(version=version)

    async def rename(
        self,
        source: Target,
        dest: Target,
        expected: RenameIntent | None = None,
        *,
        signal: AbortSignal | None = None,
    ) -> RenameOutcome:
        """Move the bytes to ``dest`` under a new version; guards and the move without yielding.

        :raises FsError: FS_STALE_VERSION, FS_NOT_FOUND, FS_NOT_OBSERVED (``dest`` exists, a
            file or a directory), FS_NOT_REGULAR_FILE, FS_ABORTED
        """
        await anyio.lowlevel.checkpoint()
        rel, dest_rel = self._rel(source), self._rel(dest)
        self._existing_file(rel, source.display_path, expected.version if expected else None, "rename")
        if dest_rel in self._files or self._is_dir(dest_rel):
            raise rename_destination_exists(source.display_path, dest.display_path)
        check_abort(signal, "rename")
        data, _ = self._files.pop(rel)
        version = self._version()
        self._files[dest_rel] = (data, version)
        return RenameOutcome(version=version)
