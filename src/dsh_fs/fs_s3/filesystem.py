"""``S3FileSystem``: the seam's eight primitives on an S3-compatible bucket under a key prefix.

Paths: the model sees absolute display paths under a display root (``/`` by default);
``<root>/<rel>`` is the object ``<prefix><rel>`` and its target key is
``s3://<bucket>/<prefix><rel>``. ``..`` never leaves the root (``FS_PERMISSION_DENIED``).
Several prefixes (``roots=``, DEVIATIONS D28): each display root is one ``s3://bucket/prefix``
(one store per bucket, sharing one client); a path is served by the one root it lies under
(``_rooted``), a target by the one prefix its key starts with (``_place``).
Directories are key prefixes: a path is a *file* when an object has exactly its key, else a
*directory* when some key starts with ``<key>/`` (or it is the root), else absent.

Versions: the ETag, plus ``@<VersionId>`` in a versioned bucket. Opaque; compared only.

Freshness across processes and machines is the service's job: every mutation is one
conditional PutObject (or CompleteMultipartUpload) — ``If-None-Match: *`` to create,
``If-Match: <ETag just read>`` to replace — so a concurrent writer anywhere is detected by
S3 itself and no update is lost. Inside one process, mutations of a target also serialize on
an in-process lock. Text rules are the local provider's (shared pure code in ``dsh_fs.fs``).

``delete`` is HeadObject + DeleteObject ``If-Match: <ETag>``; ``rename`` has no S3 request of
its own: GetObject, a PutObject of the same bytes ``If-None-Match: *`` at the destination, then
DeleteObject ``If-Match`` of the source (undone if that fails). Not atomic: a crash between the
two leaves both objects (docs/S3.md). The bodies of the listings are ``listing``, of the
mutations ``writes`` (write, edit), ``raw_write`` (write_bytes) and ``moves`` (delete, rename).

Round trips (a request each): stat 1 (a GET of the object's first ``stat_fetch_max`` bytes,
or a HEAD when that is 0 and for an empty object; +1 LIST when there is no object); read_text 1
(GET); a ``read`` tool call of a file of at most ``stat_fetch_max`` bytes 1 (its stat's GET:
``read_window`` windows the bytes that stat fetched, for exactly the version it reported; a
``read_image`` too: ``read_bytes`` returns them); write 2 (GET or LIST, then PUT), or 1 (the PUT) for a ``ReplaceIfVersion``
of a version whose bytes ``read_text`` got (kept in ``bases``: the ``If-Match`` PUT replaces
exactly them); edit 2 (GET, PUT), +2 per retry of an unguarded edit that lost a race;
list_dir 1–2 (+ pages); delete 2; rename 4–5. An ``apply_patch`` update of a file of at most
``stat_fetch_max`` bytes: 2 (the stat's GET, whose body ``read_text_at`` decodes, and the PUT
``If-Match``); of a bigger one 3 (+ the GET of the whole body).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Final

from ..fs.legacy_text import check_encodings
from ..fs.backend import (
    AbortSignal,
    DeleteIntent,
    DeleteOutcome,
    DirEntry,
    EditIntent,
    EditOutcome,
    EditRequest,
    FileSystem,
    FsError,
    Info,
    NotTextError,
    PathInfo,
    Profile,
    RenameIntent,
    RenameOutcome,
    ReadWindow,
    RootedPath,
    Target,
    TargetKey,
    TargetLocks,
    TextRules,
    TextStreamDecoder,
    Verb,
    Version,
    WRITE_MAX_SIZE,
    WalkEntry,
    WindowResult,
    WriteIntent,
    WriteOutcome,
    bytes_over_limit,
    check_abort,
    content_over_limit,
    check_root,
    decode_for_read,
    display_of,
    foreign_target,
    not_found,
    not_regular_file,
    not_text_error,
    outside_workspace,
    outside_workspace_rename,
    resolve_rooted,
    window_whole,
)
from . import listing, moves, raw_write, writes
from .errors import S3Failure, abort_check, fs_error
from .body_cache import BodyCache
from .location import S3Location, parse_url
from .roots import display_roots, prefix_roots
from .store import ObjectMeta, ObjectStore, read_chunk, require_client_library

__all__ = ("S3FileSystem", "from_url", "from_urls")

DEFAULT_MULTIPART_THRESHOLD = 64 * 1024 * 1024
DEFAULT_PART_SIZE = 16 * 1024 * 1024
MIN_PART_SIZE = 5 * 1024 * 1024
STREAM_CHUNK = 64 * 1024
DEFAULT_EDIT_RETRIES = 8
DEFAULT_STAT_FETCH_MAX = 256 * 1024
FETCHED_MAX_BYTES = 8 * 1024 * 1024
"""bytes of fetched bodies kept for ``read_window`` at most (oldest dropped first)"""
_WITNESSED: Final = frozenset({"write_text", "edit_text"})


@dataclass(frozen=True, slots=True, eq=False)
class Prefix:
    """One root: its display path, its bucket and key prefix, and the store of that bucket."""

    root: str
    location: S3Location
    store: ObjectStore


class S3FileSystem(FileSystem):
    """An S3 bucket (or any S3-compatible service with conditional writes) as a provider.

    :param bucket: the bucket; it must exist
    :param prefix: the workspace's key prefix (``""``: the whole bucket); ``"team/ws"`` and
        ``"team/ws/"`` are the same
    :param endpoint_url: an S3-compatible endpoint (MinIO, R2, Ceph RGW, moto); ``None``: AWS
    :param profile: ``default`` (DEVIATIONS D1, D2, D4, D6 on) or ``reference``
    :param cwd: default base for relative paths, an absolute display path (default: ``root``)
    :param root: the display path of the prefix (default ``/``: ``/src/app.py`` is the object
        ``<prefix>src/app.py``)
    :param client_options: extra aiobotocore ``create_client`` keywords (``region_name``,
        ``aws_access_key_id`` …); by default the standard AWS credential chain applies
    :param multipart_threshold: content of at least this many bytes is uploaded in parts
    :param part_size: bytes per part (at least 5 MiB, the S3 minimum)
    :param edit_retries: how often an *unguarded* edit or write re-reads and retries after
        losing a race to another writer before it reports ``FS_STALE_VERSION``
    :param write_max_size: the largest object (bytes) a write or an edit may store (DEVIATIONS D16)
    :param store: an ``ObjectStore`` to use instead of building one (tests, instrumentation)
    :param stat_fetch_max: ``stat`` is a GetObject of the first this-many bytes instead of a
        HeadObject (same permission, same one round trip); a file no bigger comes back whole
        and the ``read_window`` that follows windows it without a request. 0: HeadObject.
    :param roots: several prefixes instead of ``prefix``/``root`` (DEVIATIONS D28): display
        root → ``s3://bucket/prefix`` (or a key prefix in ``bucket``), in order, in one bucket or
        several (one store per bucket, all sharing one HTTP client); each path stays in the
        root it resolves under, a rename never crosses roots, and the refusal names every root
        (``fs_s3.roots.prefix_roots`` checks them). ``cwd`` defaults to the first root.
    :raises ValueError: for an invalid bucket, prefix, root, profile or part size; neither
        ``bucket`` nor ``roots``; ``roots`` with ``prefix`` or ``root``; roots that overlap or
        are more than 64 (``prefix_roots``); a ``cwd`` outside every root
        (``S3FileSystem: cwd <c> is outside every root``); an encoding ``check_encodings`` refuses
    :param encodings: legacy encodings besides UTF-8 (DEVIATIONS F7, docs/ENCODINGS.md)
    """

    name: ClassVar[str] = "fs-s3"

    def __init__(
        self,
        *,
        bucket: str | None = None,
        prefix: str = "",
        endpoint_url: str | None = None,
        profile: Profile | str | None = None,
        cwd: str | None = None,
        root: str | None = None,
        client_options: Mapping[str, Any] | None = None,
        multipart_threshold: int = DEFAULT_MULTIPART_THRESHOLD,
        part_size: int = DEFAULT_PART_SIZE,
        edit_retries: int = DEFAULT_EDIT_RETRIES,
        write_max_size: int = WRITE_MAX_SIZE,
        store: ObjectStore | None = None,
        stat_fetch_max: int = DEFAULT_STAT_FETCH_MAX,
        roots: Mapping[str, str] | None = None,
        encodings: Sequence[str] = (),
    ) -> None:
        if roots is not None:
            if prefix or root is not None:
                raise ValueError("S3FileSystem: give prefix=/root= or roots=, not both")
            places = prefix_roots(roots, bucket)
        elif bucket is None:
            raise ValueError("S3FileSystem: give bucket= (or roots=)")
        else:
            places = ((check_root(root or "/"), S3Location(bucket, prefix)),)
        self.location = places[0][1]
        """the first root's bucket and prefix (the only one without ``roots``)"""
        self.root = places[0][0]
        """the first root's display path"""
        self.cwd = cwd if cwd is not None else self.root
        self.profile = Profile.parse(profile)
        self.rules = TextRules.for_profile(self.profile, write_max_size=write_max_size,
                                           encodings=check_encodings(encodings))
        if part_size < MIN_PART_SIZE:
            raise ValueError(f"part_size must be at least {MIN_PART_SIZE} bytes (the S3 minimum)")
        self.multipart_threshold = multipart_threshold
        self.part_size = part_size
        self.edit_retries = max(0, int(edit_retries))
        self.store = store or ObjectStore(self.location.bucket, endpoint_url=endpoint_url,
                                          client_options=client_options)
        """the first root's bucket's store (``requests`` counts its round trips)"""
        stores = {self.location.bucket: self.store}
        self.prefixes: tuple[Prefix, ...] = tuple(
            Prefix(shown, location, stores.setdefault(location.bucket, self.store.sibling(location.bucket)))
            for shown, location in places
        )
        """every root, in order"""
        if len(self.prefixes) > 1 and not any(self.cwd == p.root or self.cwd.startswith(p.root + "/")
                                              for p in self.prefixes):
            raise ValueError(f"S3FileSystem: cwd {self.cwd} is outside every root")
        self.locks = TargetLocks()
        self._versioned: dict[str, bool] = {}
        """bucket → whether versioning is on (asked once per bucket)"""
        self.stat_fetch_max = max(0, int(stat_fetch_max))
        self.fetched = BodyCache(FETCHED_MAX_BYTES)
        self.bases = BodyCache(FETCHED_MAX_BYTES)
        """bodies ``read_text`` got, by version: the basis of a ``ReplaceIfVersion`` write of
        that version (its PutObject ``If-Match`` then needs no GetObject first); taken once"""

    async def aclose(self) -> None:
        """Close the HTTP client of the running event loop (idempotent; see ``FileSystem.aclose``)."""
        for store in {id(p.store): p.store for p in self.prefixes}.values():
            await store.aclose()

    def __repr__(self) -> str:
        if len(self.prefixes) > 1:
            return f"S3FileSystem(roots={ {p.root: p.location.url for p in self.prefixes}!r})"
        return f"S3FileSystem({self.location.url!r}, root={self.root!r})"

    # -- helpers ---------------------------------------------------------------------------
    def _place(self, target: Target) -> tuple[Prefix, str]:
        """The root ``target`` lies in and its path below that root's prefix.

        :raises FsError: a target of another provider (``foreign_target``)
        """
        for p in self.prefixes:
            rel = p.location.rel_of_target_key(target.key)
            if rel is not None:
                return p, rel
        raise foreign_target(target.display_path, f"not in {self.location.url}" if len(self.prefixes) == 1
                             else "not in " + ", ".join(p.location.url for p in self.prefixes))

    def _target(self, p: Prefix, rel: str) -> Target:
        return Target(key=TargetKey(p.location.target_key(rel)), display_path=display_of(p.root, rel))

    def _rooted(self, path: str, cwd: str | None) -> tuple[Prefix, RootedPath]:
        """Lexical resolution of a model path (§2.2): against ``cwd`` (else the provider's),
        inside the one root the result lies under.

        :raises FsError: as ``resolve_rooted``; with several roots, a path under none of them
            is ``cannot resolve "<p>": outside the workspace "<A>", "<B>"`` (D28)
        """
        base = cwd or self.cwd
        if len(self.prefixes) == 1:
            only = self.prefixes[0]
            return only, resolve_rooted(path, base, only.root, home_tilde=self.rules.home_tilde)
        display = resolve_rooted(path, base, "/", home_tilde=self.rules.home_tilde).display
        for p in self.prefixes:
            if display == p.root or display.startswith(p.root + "/"):
                return p, resolve_rooted(display, p.root, p.root)
        raise outside_workspace(display, self.workspace_roots())

    async def _is_dir(self, p: Prefix, rel: str) -> bool:
        return rel == "" or await p.store.has_children(p.location.dir_prefix(rel))

    async def _info(self, p: Prefix, rel: str, *, fetch: bool = False) -> Info | None:
        """The metadata of ``rel``; ``fetch``: by a ranged GET whose body, when whole, is kept
        in ``fetched`` for the ``read_window`` of the same version."""
        if rel == "":
            return Info(version=Version("dir:"), type="directory")
        key = p.location.object_key(rel)
        meta = await self._fetch(p, rel, key) if fetch and self.stat_fetch_max > 0 else await p.store.head(key)
        if meta is not None:
            return Info(version=Version(meta.token), type="file", size=meta.size)
        if await self._is_dir(p, rel):
            return Info(version=Version(f"dir:{rel}"), type="directory")
        return None

    async def _fetch(self, p: Prefix, rel: str, key: str) -> ObjectMeta | None:
        try:
            got = await p.store.get_prefix(key, self.stat_fetch_max)
        except S3Failure as failure:
            if failure.status is None:  # no answer from the service (network, credentials)
                raise
            # 416: an empty object (no range selects a byte of it); any other refusal of the
            # GET (an archived object's InvalidObjectState, a policy allowing only HEAD …):
            # HeadObject answers the stat as it did without fetching
            meta = await p.store.head(key)
            if failure.status == 416 and meta is not None and meta.size == 0:
                self.fetched.put((p.location.target_key(rel), meta.token), b"")  # that version holds no bytes
            return meta
        if got is None:
            return None
        meta, data = got
        if data is not None:
            self.fetched.put((p.location.target_key(rel), meta.token), data)
        return meta

    async def _bucket_versioned(self, p: Prefix) -> bool:
        """Whether listed objects need a HEAD for their VersionId (asked once; assumed when the
        bucket's versioning status cannot be read)."""
        bucket = p.location.bucket
        if bucket not in self._versioned:
            try:
                self._versioned[bucket] = await p.store.versioning_enabled()
            except S3Failure:
                self._versioned[bucket] = True
        return self._versioned[bucket]

    async def _absent(self, p: Prefix, rel: str, verb: Verb, display: str, missing: FsError) -> FsError:
        """The error for a GET that found no object: a directory, or ``missing``."""
        if await self._is_dir(p, rel):
            return not_regular_file(verb, display)
        return missing

    async def _put(
        self, p: Prefix, rel: str, data: bytes, *, if_match: str | None, if_none_match: bool, signal: AbortSignal | None
    ) -> ObjectMeta:
        key = p.location.object_key(rel)
        check_abort(signal, "write")
        if len(data) >= self.multipart_threshold:
            return await p.store.put_multipart(
                key, data, part_size=self.part_size, if_match=if_match, if_none_match=if_none_match,
                check=abort_check(signal, "write"),
            )
        return await p.store.put(key, data, if_match=if_match, if_none_match=if_none_match)

    # -- the eight primitives --------------------------------------------------------------
    @property
    def text_encodings(self) -> tuple[str, ...]:
        """The deployment's legacy encodings (``TextRules.encodings``, F7). See
        ``FileSystem.text_encodings``."""
        return self.rules.encodings

    @property
    def witnessed_mutations(self) -> frozenset[str]:
        """``write_text`` and ``edit_text`` tell ``fs.witness`` the bytes they replace (the body
        their own GetObject fetched, or ``read_text``'s) and put (``FileSystem.witnessed_mutations``)."""
        return _WITNESSED

    def workspace_roots(self) -> tuple[str, ...]:
        """The display roots every path stays under, in order: ``(root,)``, or each of
        ``roots=`` (D28). See ``FileSystem.workspace_roots``."""
        return tuple(p.root for p in self.prefixes)

    async def resolve(self, path: str, *, cwd: str | None = None, signal: AbortSignal | None = None) -> Target:
        """Lexical resolution inside the root; no request is made.

        :raises FsError: FS_ABORTED ``resolve aborted``; FS_NOT_FOUND
            ``file_path must be a non-empty string``; FS_PERMISSION_DENIED
            ``cannot resolve "<path>": outside the workspace "<root>"`` (several roots: each
            named, ``"<A>", "<B>"``, D28)
        """
        check_abort(signal, "resolve")
        p, found = self._rooted(path, cwd)
        check_abort(signal, "resolve")
        return self._target(p, found.rel)

    async def stat(self, target: Target, *, signal: AbortSignal | None = None) -> Info | None:
        """GetObject of the first ``stat_fetch_max`` bytes (HeadObject when that is 0, for an
        empty object, and when the service refuses the GET), and ListObjectsV2 when there is no
        object: a file with its size in bytes, a directory (no size), or ``None``. A body that
        came whole is kept for the ``read_window`` of the same version.

        :raises FsError: FS_ABORTED ``stat aborted``; FS_PERMISSION_DENIED; FS_IO_ERROR
        """
        check_abort(signal, "stat")
        try:
            info = await self._info(*self._place(target), fetch=True)
        except S3Failure as failure:
            raise fs_error(failure, "stat", target.display_path) from failure
        check_abort(signal, "stat")
        return info

    async def is_current(self, target: Target, version: Version, *, signal: AbortSignal | None = None) -> bool:
        """HeadObject: is ``target`` an object at ``version`` right now (no body fetched)?
        See ``FileSystem.is_current``.

        :raises FsError: as ``stat``
        """
        check_abort(signal, "stat")
        try:
            info = await self._info(*self._place(target))
        except S3Failure as failure:
            raise fs_error(failure, "stat", target.display_path) from failure
        check_abort(signal, "stat")
        return info is not None and info.type == "file" and info.version == version

    async def lstat(self, path: str, *, cwd: str | None = None, signal: AbortSignal | None = None) -> PathInfo | None:
        """``stat`` of the resolved path (S3 has no symlinks)."""
        check_abort(signal, "lstat")
        p, found = self._rooted(path, cwd)
        try:
            info = await self._info(p, found.rel)
        except S3Failure as failure:
            raise fs_error(failure, "stat", found.display) from failure
        check_abort(signal, "lstat")
        return None if info is None else PathInfo(version=info.version, type=info.type, size=info.size)

    async def read_text(self, target: Target, *, signal: AbortSignal | None = None) -> str:
        """GetObject, decoded with the local rules (§2.5).

        :raises FsError: FS_NOT_FOUND, FS_NOT_REGULAR_FILE (a directory), FS_NOT_TEXT,
            FS_ABORTED ``read aborted``, FS_PERMISSION_DENIED, FS_IO_ERROR
        """
        check_abort(signal, "read")
        p, rel = self._place(target)
        display = target.display_path
        try:
            got = None if rel == "" else await p.store.get(
                p.location.object_key(rel), check=abort_check(signal, "read")
            )
            if got is None:
                raise await self._absent(
                    p, rel, "read", display, not_found("read", display)
                )
        except S3Failure as failure:
            raise fs_error(failure, "read", display) from failure
        check_abort(signal, "read")
        text = decode_for_read(got[1], display, self.rules)
        self.bases.put((target.key, got[0].token), got[1])
        return text

    async def read_text_at(
        self, target: Target, version: Version, *, info: Info | None = None, signal: AbortSignal | None = None
    ) -> str | None:
        """``read_text`` when the bytes are of ``version``, without a HeadObject: the bytes the
        caller's ``stat`` fetched of exactly ``info.version`` (no request) when that is
        ``version``, else one GetObject, whose ETag (``@VersionId``) is the version of the
        bytes it returned. The bytes are kept as the basis of the ``ReplaceIfVersion(version)``
        write that follows (``bases``), so an ``apply_patch`` update is the stat's GetObject
        and the PutObject ``If-Match`` alone. See ``FileSystem.read_text_at``.

        :raises FsError: as ``read_text``
        """
        check_abort(signal, "read")
        p, rel = self._place(target)
        display = target.display_path
        data = self.fetched.take((target.key, str(info.version))) if info is not None else None
        if data is None or info is None or info.version != version:
            try:
                got = None if rel == "" else await p.store.get(
                    p.location.object_key(rel), check=abort_check(signal, "read")
                )
                if got is None:
                    raise await self._absent(p, rel, "read", display, not_found("read", display))
            except S3Failure as failure:
                raise fs_error(failure, "read", display) from failure
            if got[0].token != version:
                check_abort(signal, "read")
                decode_for_read(got[1], display, self.rules)  # a file that is not text says so, as read_text
                return None
            data = got[1]
        check_abort(signal, "read")
        text = decode_for_read(data, display, self.rules)
        self.bases.put((target.key, str(version)), data)
        return text

    async def read_window(
        self,
        target: Target,
        window: ReadWindow,
        *,
        info: Info,
        streamed: bool = False,
        signal: AbortSignal | None = None,
    ) -> WindowResult | None:
        """The window over the bytes ``stat`` fetched for exactly ``info.version`` (no request),
        decoded as ``read_text`` decodes them; ``None`` (the caller reads) when ``stat`` kept no
        body of that version, and for a streamed read. See ``FileSystem.read_window``.

        :raises FsError: FS_ABORTED ``read aborted``; FS_NOT_TEXT (as ``read_text``)
        """
        check_abort(signal, "read")
        data = self.fetched.take((target.key, str(info.version)))
        if data is None or streamed:
            return None
        return window_whole(decode_for_read(data, target.display_path, self.rules), window, target.display_path)

    async def stream_text(self, target: Target, *, signal: AbortSignal | None = None) -> AsyncIterator[str]:
        """GetObject streamed in 64 KiB chunks through one incremental decoder (§2.5).
        Nothing is requested until iteration starts."""
        check_abort(signal, "read")
        p, rel = self._place(target)
        display = target.display_path
        decoder = TextStreamDecoder(foreign_boms=self.rules.detailed_errors)
        if rel == "":
            raise not_regular_file("read", display)
        try:
            async with p.store.open(p.location.object_key(rel)) as opened:
                if opened is None:
                    raise await self._absent(
                        p, rel, "read", display, not_found("read", display)
                    )
                body = opened[1]
                while True:
                    check_abort(signal, "read")
                    chunk = await read_chunk(body, STREAM_CHUNK)
                    if not chunk:
                        break
                    yield decoder.feed(chunk)
                yield decoder.finish()
        except NotTextError as exc:
            raise not_text_error(exc, "read", display, self.rules) from None
        except S3Failure as failure:
            raise fs_error(failure, "read", display) from failure

    async def list_dir(self, target: Target, *, signal: AbortSignal | None = None) -> list[DirEntry]:
        """ListObjectsV2 with delimiter ``/``: direct children in code-point order (A6); files
        carry size and version, directories neither size nor object version.

        :raises FsError: FS_NOT_FOUND, FS_NOT_DIRECTORY, FS_ABORTED ``list aborted``,
            FS_PERMISSION_DENIED, FS_IO_ERROR
        """
        return await listing.list_dir(self, target, signal=signal)

    def iter_dir(self, target: Target, *, signal: AbortSignal | None = None) -> AsyncIterator[list[DirEntry]]:
        """``list_dir``'s entries one ListObjectsV2 page at a time (L5: a ``list`` page or a
        clipped ``view`` of a prefix with many keys never holds them all). A name that is both
        an object and a common prefix is one file, as in ``list_dir``: the object's key comes
        first in key order, and is remembered only until the listing has passed ``<name>/``.

        :raises FsError: as ``list_dir``
        """
        return listing.iter_dir(self, target, signal=signal)

    def walk(self, target: Target, *, signal: AbortSignal | None = None) -> AsyncIterator[WalkEntry]:
        """ListObjectsV2 under the directory's prefix without a delimiter (one request per
        1000 keys): files with size and LastModified, directories (``<dir>/`` markers and
        key prefixes) before their children. Keys no path can name (an empty, ``.`` or ``..``
        segment) and keys below a file's own key are left out. See ``FileSystem.walk``.

        :raises FsError: FS_NOT_FOUND, FS_NOT_DIRECTORY, FS_ABORTED ``list aborted``,
            FS_PERMISSION_DENIED, FS_IO_ERROR
        """
        return listing.walk(self, target, signal=signal)

    async def stream_bytes(self, target: Target, *, signal: AbortSignal | None = None) -> AsyncIterator[bytes]:
        """GetObject streamed in 64 KiB chunks, the bytes as stored."""
        check_abort(signal, "read")
        p, rel = self._place(target)
        display = target.display_path
        if rel == "":
            raise not_regular_file("read", display)
        try:
            async with p.store.open(p.location.object_key(rel)) as opened:
                if opened is None:
                    raise await self._absent(p, rel, "read", display, not_found("read", display))
                while True:
                    check_abort(signal, "read")
                    chunk = await read_chunk(opened[1], STREAM_CHUNK)
                    if not chunk:
                        return
                    yield chunk
        except S3Failure as failure:
            raise fs_error(failure, "read", display) from failure

    async def check_renamable(self, source: Target, dest: Target, *, signal: AbortSignal | None = None) -> None:
        """A rename never crosses roots (D28): the error ``rename`` would raise, without a
        request. See ``FileSystem.check_renamable``."""
        check_abort(signal, "stat")
        p, _ = self._place(source)
        if self._place(dest)[0] is not p:
            raise outside_workspace_rename(source.display_path, dest.display_path, p.root)

    def _write_max_size(self) -> int:
        """D16's limit, held by the seam's ``check_replaceable``/``check_creatable``."""
        return self.rules.write_max_size

    async def read_bytes(
        self, target: Target, *, max_bytes: int, size: int | None = None, info: Info | None = None,
        signal: AbortSignal | None = None,
    ) -> bytes:
        """One ranged GetObject for the first ``max_bytes + 1`` bytes (``FileSystem.read_bytes``):
        an object of any size costs at most that much transfer and memory; one byte more than
        the cap means the object is over it. ``size`` over the cap fails with no GET at all.
        An empty object (a range cannot be satisfied: HTTP 416) reads as ``b""``. No request at
        all when the caller's ``stat`` (``info``) fetched the whole object: those bytes, of
        exactly ``info.version``, are the content (a ``read_image`` of a small image is one
        request)."""
        display = target.display_path
        if size is not None and size > max_bytes:
            raise bytes_over_limit(display, size, max_bytes)
        check_abort(signal, "read")
        p, rel = self._place(target)
        kept = self.fetched.take((target.key, str(info.version))) if info is not None else None
        if kept is not None:
            if len(kept) > max_bytes:
                raise content_over_limit(display, max_bytes)
            return kept
        if rel == "":
            raise not_regular_file("read", display)
        chunks: list[bytes] = []
        total = 0
        try:
            async with p.store.open(p.location.object_key(rel), first=max_bytes + 1) as opened:
                if opened is None:
                    raise await self._absent(p, rel, "read", display, not_found("read", display))
                while True:
                    check_abort(signal, "read")
                    chunk = await read_chunk(opened[1], STREAM_CHUNK)
                    if not chunk:
                        break
                    total += len(chunk)
                    if total > max_bytes:
                        raise content_over_limit(display, max_bytes)
                    chunks.append(chunk)
        except S3Failure as failure:
            if failure.status == 416 or failure.code == "InvalidRange":
                return b""
            raise fs_error(failure, "read", display) from failure
        return b"".join(chunks)

    async def write_text(
        self,
        target: Target,
        content: str,
        expected: WriteIntent | None = None,
        *,
        signal: AbortSignal | None = None,
    ) -> WriteOutcome:
        """Create or replace the object with one conditional PUT (§2.8; D4).

        * ``CreateIfAbsent`` → PutObject ``If-None-Match: *``; an existing object (412) is
          ``FS_NOT_OBSERVED``.
        * ``ReplaceIfVersion(V)`` → GetObject (diff basis, version check) → PutObject
          ``If-Match: <ETag read>``; a missing object or another version, before or during
          the PUT, is ``FS_STALE_VERSION``.
        * ``None`` → the same read-then-conditional-PUT, retried on fresh content when another
          writer wins (up to ``edit_retries`` times), so before/after and D4 always describe
          the bytes actually replaced.

        :raises FsError: FS_NOT_REGULAR_FILE (a directory), FS_STALE_VERSION, FS_NOT_OBSERVED,
            FS_ABORTED ``read aborted``/``write aborted``, FS_PERMISSION_DENIED, FS_IO_ERROR
        """
        return await writes.write_text(self, target, content, expected, signal=signal)

    async def write_bytes(self, target: Target, data: bytes, expected: WriteIntent | None = None, *,
                          mode: int | None = None, signal: AbortSignal | None = None) -> Version:
        """``FileSystem.write_bytes`` with one conditional PUT (``raw_write.write_object``);
        ``mode`` is ignored (objects have none)."""
        return await raw_write.write_object(self, target, bytes(data), expected, signal)

    async def edit_text(
        self,
        target: Target,
        edit: EditRequest,
        expected: EditIntent | None = None,
        *,
        signal: AbortSignal | None = None,
    ) -> EditOutcome:
        """GetObject → the shared literal matcher → PutObject ``If-Match: <ETag just read>`` (§2.11).

        A guarded edit whose object changed — before the GET or between GET and PUT (412) — is
        ``FS_STALE_VERSION``; an unguarded one re-reads and retries on the fresh content (up
        to ``edit_retries`` times). A missing object is ``FS_STALE_VERSION`` either way.

        :raises FsError: FS_STALE_VERSION, FS_NOT_REGULAR_FILE (a directory), FS_NOT_TEXT,
            FS_EDIT_NOT_FOUND, FS_AMBIGUOUS_EDIT, FS_ABORTED ``edit aborted``/``write aborted``,
            FS_PERMISSION_DENIED, FS_IO_ERROR
        """
        return await writes.edit_text(self, target, edit, expected, signal=signal)

    async def delete(
        self,
        target: Target,
        expected: DeleteIntent | None = None,
        *,
        signal: AbortSignal | None = None,
    ) -> DeleteOutcome:
        """HeadObject (existence, version check) → DeleteObject ``If-Match: <ETag>`` for a
        guarded delete, so an object replaced in between (by anyone, anywhere) is not deleted
        (412 → FS_STALE_VERSION). Where the service ignores ``If-Match`` on DeleteObject the
        window between the two requests is unguarded (docs/S3.md). See ``FileSystem.delete``.

        :raises FsError: FS_STALE_VERSION, FS_NOT_FOUND, FS_NOT_REGULAR_FILE (a directory),
            FS_ABORTED ``delete aborted``, FS_PERMISSION_DENIED, FS_IO_ERROR
        """
        return await moves.delete_object(self, target, expected, signal=signal)

    async def rename(
        self,
        source: Target,
        dest: Target,
        expected: RenameIntent | None = None,
        *,
        signal: AbortSignal | None = None,
    ) -> RenameOutcome:
        """S3 has no rename: GetObject of the source (version check) → PutObject of the same
        bytes at ``dest`` with ``If-None-Match: *`` (never replaces an object) → DeleteObject of
        the source ``If-Match: <ETag read>``. If the source changed or vanished before that
        delete, the copy is deleted again and the rename fails (FS_STALE_VERSION). Once
        started, the sequence is shielded from cancellation; a crash inside it leaves both
        objects (docs/S3.md). See ``FileSystem.rename``.

        :raises FsError: FS_STALE_VERSION, FS_NOT_FOUND, FS_NOT_OBSERVED (``dest`` exists),
            FS_NOT_REGULAR_FILE, FS_ABORTED ``rename aborted``, FS_PERMISSION_DENIED (also
            ``cannot rename "<dp>" to "<dest>": outside the workspace "<root>"`` for ``dest`` in
            another root, D28, before any request), FS_IO_ERROR
        """
        return await moves.rename_object(self, source, dest, expected, signal=signal)


def from_url(url: str, *, endpoint_url: str | None = None, **options: Any) -> S3FileSystem:
    """An ``S3FileSystem`` for ``s3://bucket/prefix`` (the CLI's and MCP server's ``--s3``).

    :param url: ``s3://bucket`` or ``s3://bucket/key/prefix``
    :param endpoint_url: an S3-compatible endpoint; ``None``: AWS
    :param options: the other ``S3FileSystem`` keywords (``profile``, ``root``, …)
    :raises ValueError: for a malformed URL
    :raises ImportError: when the ``[s3]`` extra (aiobotocore) is not installed
    """
    location = parse_url(url)
    require_client_library()
    return S3FileSystem(bucket=location.bucket, prefix=location.prefix, endpoint_url=endpoint_url, **options)


def from_urls(urls: Sequence[str], *, endpoint_url: str | None = None, **options: Any) -> S3FileSystem:
    """An ``S3FileSystem`` for several ``s3://bucket/prefix`` URLs (the repeated ``--s3``,
    DEVIATIONS D28): one URL is ``from_url``'s provider (display root ``/``); several are
    served each under ``/<last prefix segment>`` (``fs_s3.roots.display_roots``), in order.

    :param urls: at least one ``s3://bucket[/prefix]``
    :param endpoint_url: the one S3-compatible endpoint of every bucket; ``None``: AWS
    :param options: the other ``S3FileSystem`` keywords (``profile``, ``cwd``, …)
    :raises ValueError: no URL, a malformed one, two with the same last segment, or as
        ``S3FileSystem(roots=…)`` (overlapping prefixes)
    :raises ImportError: when the ``[s3]`` extra (aiobotocore) is not installed
    """
    if not urls:
        raise ValueError("S3FileSystem: roots= names no root")
    if len(urls) == 1:
        return from_url(urls[0], endpoint_url=endpoint_url, **options)
    named = display_roots(urls)
    require_client_library()
    return S3FileSystem(roots=named, endpoint_url=endpoint_url, **options)
