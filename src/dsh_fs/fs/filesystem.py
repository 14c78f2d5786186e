"""The provider seam: the primitives every filesystem backend implements (REFERENCE-SPEC §1.3):
the reference's eight, plus ``delete`` and ``rename`` with a version guard
(docs/design/EDITING-FACES-DESIGN.md §6.1; the editing faces need them to apply a patch's
deletions and moves).

A provider is also a plugin: ``ctx.plugin(LocalFileSystem, cwd=...)`` constructs it with the
context's profile and provides it as the ``fs`` service (exactly one at a time).

Lifecycle: a provider is an async resource. ``aclose()`` releases what it holds (the S3
provider's HTTP client; nothing for the local and in-memory ones) and ``async with provider:``
calls it on exit. A provider loaded as a plugin is closed by the context: ``await ctx.aclose()``
(or ``await scope.adispose()``) awaits its ``aclose``.

The seam has no copy, watch, recursion, search or observed state. Mutations (``write_text``,
``edit_text``, ``delete``, ``rename``) run under the provider's per-target lock whether or not a
guard is given; ``rename`` holds both targets' locks, taken in key order.

Optional capability (not one of the eight; a provider may leave it out):

* ``read_window`` — the provider windows a file itself (for instance on raw bytes, decoding
  only the selected lines, or with a line index) and returns the same ``WindowResult`` and
  the same errors that windowing ``read_text`` / ``stream_text`` would give. The default
  returns ``None``, which tells the caller to window the text primitives itself. It never
  stats through the seam (the caller passes the ``Info`` of its one stat, §4.11).
* ``is_current`` — whether a target is still at a version, compared the way the provider's own
  guards compare (a provider whose version tokens of one unchanged file may differ as strings,
  like the local provider's A5 tokens, overrides it). The default stats and compares strings.
* ``read_text_at`` — ``read_text`` of a file the caller will replace under a version guard,
  returning the text only when the bytes read are of that version (``None`` otherwise). The
  default is ``read_text`` then ``is_current``; a provider whose read learns the version of the
  bytes it read (S3: the GetObject's ETag; a small object's body already came with the
  caller's ``stat``) answers with one request or none, and no second look.

Optional capabilities for search tools (``glob``/``grep`` run ripgrep; REFERENCE-SPEC §6 has
search outside the seam, on the host disk):

* ``host_path`` — the host-disk path of a target, for a provider whose files are files of
  this machine (the local provider): a host program may then work on them directly. The
  default returns ``None``.
* ``walk`` — every file and directory below a directory, with sizes and modification times
  (one recursive listing; a remote provider makes it one paginated listing). The default
  walks ``list_dir`` (no modification times).
* ``stream_bytes`` — a regular file's raw bytes in chunks (no decoding, no text rules: a
  search engine judges binary and non-UTF-8 content itself). The default raises
  ``NotImplementedError``.
* ``real_place`` — the name of the file a target is, where it really lives (every symlink
  resolved): the host path on this disk, the far side's real path over a command channel, the
  display path where names are the files (memory, S3). What a person approving a change is
  shown (docs/SANDBOX.md "Escalation"). The default: ``host_path``, else the display path.
* ``search_host`` — for a provider whose files are host files of *another* machine where
  ripgrep can run (a command channel's far side): that machine's search operations
  (``fs.search_host.SearchHost``). The default returns ``None``.

Recording (docs/HISTORY.md): ``witnessed_mutations`` — the mutations that report what they
replace and commit to a recorder (``fs.witness``); none by default.

Legacy encodings (docs/ENCODINGS.md): ``text_encodings`` — the encodings besides UTF-8 the
provider's text rules read, edit and write (``TextRules.encodings``); ``()`` by default.

Bounded raw read (``read_image``, docs/IMAGES.md):

* ``read_bytes`` — a whole regular file's raw bytes, at most ``max_bytes`` of them: a file
  known (``size``) or found to hold more fails instead of returning a truncated result, and
  never more than ``max_bytes`` plus one chunk is buffered. The default reads ``stream_bytes``;
  the S3 provider overrides it with one ranged GET, or none for the body its ``stat`` fetched.
"""

from __future__ import annotations

import abc
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Self

from .provider_rules import check_size
from .types import (
    DeleteIntent,
    DeleteOutcome,
    DirEntry,
    EditIntent,
    EditOutcome,
    EditRequest,
    Info,
    PathInfo,
    RenameIntent,
    RenameOutcome,
    Target,
    Version,
    WalkEntry,
    WriteIntent,
    WriteOutcome,
)

if TYPE_CHECKING:
    from ..core.context import Scope
    from ..core.signal import AbortSignal
    from .errors import Verb
    from .path_rules import RuleView
    from .search_host import SearchHost
    from .window import ReadWindow, WindowResult

__all__ = ("FileSystem",)


class FileSystem(abc.ABC):
    """Abstract provider: ``resolve`` once, then target-shaped primitives.

    Every primitive takes an optional ``signal``; an abort observed at a checkpoint raises
    ``FsError(FS_ABORTED)``. Errors are ``FsError`` with the §1.5 messages.
    """

    name: ClassVar[str] = "fs"
    """plugin name, shown in diagnostics"""

    @classmethod
    def apply(cls, scope: "Scope", /, **config: Any) -> None:
        """Plugin entry: construct with ``config`` and the context's profile, provide as
        ``fs``; the scope's disposal closes it (``aclose``, awaited by ``ctx.aclose()``)."""
        provider = cls(profile=scope.profile, **config)
        scope.provide("fs", provider)
        scope.effect(provider.aclose)

    # -- lifecycle ---------------------------------------------------------------------------
    async def aclose(self) -> None:
        """Release what this provider holds (connections, clients); idempotent, never raises
        for an already closed provider. The default holds nothing.

        A provider that opens resources lazily (S3: one HTTP client per event loop) may open
        them again if it is used after ``aclose``; closing is for the end of its use.
        """

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    @abc.abstractmethod
    async def resolve(self, path: str, *, cwd: str | None = None, signal: "AbortSignal | None" = None) -> Target:
        """Map a model path to a target; relative paths resolve against ``cwd`` (else the
        provider default). Same file by different paths → same ``key``.

        :raises FsError: FS_NOT_FOUND (blank path, file-valued parent), FS_ABORTED, …
        """

    @abc.abstractmethod
    async def stat(self, target: Target, *, signal: "AbortSignal | None" = None) -> Info | None:
        """Metadata (symlinks followed), never content; ``None`` when absent."""

    @abc.abstractmethod
    async def lstat(self, path: str, *, cwd: str | None = None, signal: "AbortSignal | None" = None) -> PathInfo | None:
        """Path-shaped metadata of the final component without following it; ``None`` when absent."""

    @abc.abstractmethod
    async def read_text(self, target: Target, *, signal: "AbortSignal | None" = None) -> str:
        """The whole regular file decoded as strict UTF-8 (leading BOM stripped).

        :raises FsError: FS_NOT_FOUND, FS_NOT_REGULAR_FILE, FS_NOT_TEXT, FS_ABORTED
        """

    @abc.abstractmethod
    def stream_text(self, target: Target, *, signal: "AbortSignal | None" = None) -> AsyncIterator[str]:
        """``read_text`` as decoded chunks; nothing runs until iteration starts."""

    async def read_window(
        self,
        target: Target,
        window: "ReadWindow",
        *,
        info: Info,
        streamed: bool = False,
        signal: "AbortSignal | None" = None,
    ) -> "WindowResult | None":
        """Optional: the lines ``window`` selects from the file, windowed by the provider.

        The result, and every error, must equal what ``WindowBuilder`` gives over
        ``[await read_text(target)]`` (``streamed=False``) or over ``stream_text(target)``,
        abandoned once the window stops (``streamed=True``) — REFERENCE-SPEC §2.5, §4.6.2–§4.6.4.

        :param window: offset, limit, caps and profile flags (``dsh_fs.fs.window.ReadWindow``)
        :param info: the caller's own ``stat`` of ``target`` (type ``file``); a provider may use
            its version (e.g. to key a line index) and size, and must not stat through the seam
        :param streamed: which of the two validation contracts applies (the tool streams files
            of at least ``readStreamMinSize`` bytes, §4.6.1 step 5)
        :param signal: checked as ``read_text``/``stream_text`` would (``read aborted``)
        :return: the window, or ``None`` when the provider does not window files itself
            (the default): the caller then uses ``read_text``/``stream_text``
        :raises FsError: as ``read_text``/``stream_text``, and FS_NOT_FOUND
            ``offset <n> is out of range for "<path>" (<total> lines)`` (§4.6.4)
        """
        return None

    async def is_current(self, target: Target, version: Version, *, signal: "AbortSignal | None" = None) -> bool:
        """Optional: is ``target`` a regular file at ``version`` right now, by the comparison
        the provider's guards make (``ReplaceIfVersion``, ``EditIntent``, ``DeleteIntent``,
        ``RenameIntent``)? A check before a multi-file mutation; the guards themselves still
        decide, under the lock.

        The default: ``stat`` and string equality (exact for providers whose tokens of an
        unchanged file are equal strings: the in-memory and S3 providers).

        :raises FsError: as ``stat``
        """
        info = await self.stat(target, signal=signal)
        return info is not None and info.type == "file" and info.version == version

    async def read_text_at(
        self, target: Target, version: Version, *, info: Info | None = None, signal: "AbortSignal | None" = None
    ) -> str | None:
        """Optional: ``read_text(target)`` when the bytes it decoded are of ``version`` (compared
        as ``is_current`` and the guards compare); ``None`` when the file is not at ``version``.
        For a caller that reads a whole file to replace it under ``ReplaceIfVersion(version)``
        (``apply_patch``, the editors' ``insert``): the text it gets is of the version its
        write is guarded by, or it is told the file changed (``FS_STALE_VERSION`` is the
        caller's to raise).

        :param version: the guard version (observed by the policy, or ``info.version``)
        :param info: the caller's own ``stat`` of ``target`` just before, when it has one; a
            provider may serve the bytes that stat fetched of exactly ``info.version``
            (never bytes of another version, never to a caller without that stat)
        :param signal: checked as ``read_text`` checks it
        :raises FsError: as ``read_text`` (FS_NOT_FOUND, FS_NOT_REGULAR_FILE, FS_NOT_TEXT,
            FS_ABORTED ``read aborted``, …) and ``is_current``

        The default: ``read_text``, then ``is_current(target, version)`` (the text was read
        before the file was seen at ``version``). Exact where every write makes a new version
        (local A5 tokens, the in-memory provider); where versions derive from the content (an
        unversioned S3 bucket's ETag), a change undone between the read and the check would
        pass — the S3 provider overrides it with the version of the bytes themselves.
        """
        text = await self.read_text(target, signal=signal)
        return text if await self.is_current(target, version, signal=signal) else None

    async def check_replaceable(self, target: Target, verb: Verb, *, size: int | None = None,
                                signal: AbortSignal | None = None) -> None:
        """Optional: refuse now what a ``write_text``/``edit_text``/``delete``/``rename`` of the
        existing regular file ``target`` would refuse whatever the content — so a multi-file
        mutation (``apply_patch``) is refused before its first write instead of stopping half
        way. The mutation itself still checks, under the lock.

        The default: a ``size`` over the provider's ``write_max_size`` (D16, ``_write_max_size``;
        the memory and S3 providers check nothing else: they have no symlinks or permission
        bits). The local provider also refuses a delete or rename of a name that is a symlink
        (DEVIATIONS E17), a write, edit or delete of a read-only file (D17, default profile),
        and a delete or rename out of a directory the caller may not write.

        :param verb: the mutation, as the message names it (``write``, ``edit``, ``delete``,
            ``rename``)
        :param size: for ``write``, the UTF-8 bytes of the text to store (a kept BOM not counted)
        :raises FsError: the mutation's own error (E17: ``FS_NOT_REGULAR_FILE``; D17:
            ``FS_PERMISSION_DENIED`` … read-only; ``FS_PERMISSION_DENIED`` permission denied;
            D16: ``FS_IO_ERROR`` ``too_large``)
        """
        check_size(size, target.display_path, self._write_max_size())

    async def check_creatable(self, target: Target, *, size: int | None = None,
                              signal: AbortSignal | None = None) -> None:
        """Optional: refuse now what a create-if-absent ``write_text`` of ``size`` bytes (or a
        ``rename`` onto) the absent ``target`` would refuse whatever else happens first — a
        file bigger than the provider stores (D16), a directory the caller may not add a name
        to — so ``apply_patch`` is refused whole (DEVIATIONS E10).

        The default: a ``size`` over the provider's ``write_max_size`` (D16,
        ``_write_max_size``), all the memory and S3 providers check; the local provider also
        checks the nearest existing directory above ``target`` (``access(W_OK | X_OK)``).

        :raises FsError: ``FS_IO_ERROR`` ``too_large``; ``FS_PERMISSION_DENIED`` ``cannot write
            "<dp>": permission denied``
        """
        check_size(size, target.display_path, self._write_max_size())

    def _write_max_size(self) -> int | None:
        """The limit the default ``check_replaceable``/``check_creatable`` hold a ``size`` to:
        the most UTF-8 bytes this provider's ``write_text`` stores (DEVIATIONS D16,
        ``TextRules.write_max_size``); ``None`` (the default): no limit known here."""
        return None

    async def check_renamable(self, source: Target, dest: Target, *, signal: AbortSignal | None = None) -> None:
        """Optional: refuse now what ``rename(source, dest)`` would refuse for the pair itself,
        whatever the files are, so ``apply_patch`` is refused whole (DEVIATIONS E10).

        The default: nothing to check. The local provider with several roots refuses a pair
        in two roots (DEVIATIONS D28), with the ``rename`` error.

        :raises FsError: ``FS_PERMISSION_DENIED`` ``cannot rename "<dp>" to "<dest>": outside
            the workspace "<root>"``
        """
        return None

    def workspace_roots(self) -> tuple[str, ...]:
        """Optional: the display paths of this provider's containment roots, the directories no
        model path may leave (what ``workspace-write`` lets a sandboxed call change,
        docs/SANDBOX.md); ``()`` when the provider has none (the default: the whole disk).

        The local provider returns every root, in order (several: DEVIATIONS D28); memory
        and S3 their display ``root``.
        """
        return ()

    @property
    def text_encodings(self) -> tuple[str, ...]:
        """The legacy encodings this provider reads, edits and writes besides UTF-8 (DEVIATIONS
        F7, docs/ENCODINGS.md; ``legacy_text.check_encodings`` names), in order; ``()`` (the
        default): UTF-8 only. ``read`` uses it to decide whether a file its windowed read refused
        as not UTF-8 may be read whole in one of them."""
        return ()

    @property
    def witnessed_mutations(self) -> frozenset[str]:
        """Optional: the mutating members (``"write_text"``, ``"edit_text"``, …) that await
        ``fs.witness.witness_commit`` with the bytes they replace and commit, right before they
        commit (a recorder then keeps the before-state without reading the file again); ``()``
        (the default): none. A wrapper passes on its inner provider's."""
        return frozenset()

    @property
    def sandbox_mode(self) -> str | None:
        """The deployment's sandbox mode when this provider confines mutations
        (``dsh_fs.fs_sandbox.SandboxedFileSystem``), else ``None`` (every plain provider): the
        mutating tools advertise their escalation fields only when it is set."""
        return None

    async def path_rules(self, *, signal: "AbortSignal | None" = None) -> "RuleView | None":
        """The deployment's path rules as this provider applies them (``fs_rules.filesystem.
        RuledFileSystem``, docs/PATH-RULES.md), for a tool that reads files outside the seam
        (``glob``/``grep`` run ripgrep on host paths) and must apply them itself; ``None`` (the
        default): no rules. A wrapper provider passes its inner provider's on."""
        return None

    def host_path(self, target: Target) -> str | None:
        """Optional: the path of ``target`` on this machine's disk (absolute, symlinks
        resolved), when the provider stores its files there; ``None`` otherwise (the default).

        It does not check that the path exists. A caller that hands it to a host program
        must resolve the target through this provider first (containment is checked there).
        """
        return None

    async def real_place(self, target: Target, *, signal: "AbortSignal | None" = None) -> str:
        """Optional: the name of the file ``target`` is, where it really lives, for a person to
        read (the approval prompt of a sandbox escalation names each file a call will change by
        it, docs/SANDBOX.md "Escalation"): an absolute path with every symlink resolved on the
        machine that holds the file, or the display path where a path names the file itself
        (no symlinks: the memory and S3 providers).

        The default: ``host_path(target)`` (the local provider: the real path on this disk),
        else ``target.display_path``. A provider whose files live on another machine answers
        with that machine's real path (a command channel's far side: ``fs_channel``); a
        wrapper passes its inner provider's on. It does not check that the file exists.

        :raises FsError: as ``stat`` (a provider that must ask elsewhere: FS_IO_ERROR,
            FS_ABORTED); a path-rules wrapper refuses a denied target (FS_PERMISSION_DENIED)
        """
        return self.host_path(target) or target.display_path

    def search_host(self) -> "SearchHost | None":
        """Optional: where the search tools run ripgrep beside this provider's files when that
        is another machine (``fs.search_host``, DEVIATIONS C4); ``None`` (the default): on this
        machine (``host_path``) or through the provider's reads (a mirror)."""
        return None

    def narrowed(self, roots: Sequence[str]) -> "FileSystem | None":
        """Optional: a view of this provider confined to ``roots`` (absolute display paths of
        directories, each inside one of ``workspace_roots()`` — any directories for a provider
        without containment; none inside another), sharing its storage, locks and caches; the
        view is never closed on its own (``aclose`` is the provider's). An empty ``roots`` gives
        a view that reaches nothing. Used by the MCP server for the client's roots (DEVIATIONS
        M3) and by the sandbox fence, which makes each mutation in a view rooted at the writable
        place that holds it. ``None`` (the default): this provider cannot narrow.

        :raises ValueError: a root is not a directory inside the provider's roots
        """
        return None

    async def walk(self, target: Target, *, signal: "AbortSignal | None" = None) -> AsyncIterator[WalkEntry]:
        """Optional: every file and directory below the directory ``target``, parents before
        their children (in no particular order otherwise); ``target`` itself is not reported.

        Symlinks, special files and entries the provider cannot name as paths are left out;
        a walk never follows a symlink. ``mtime_ns`` is ``None`` where the provider does not
        know it. The default walks ``list_dir`` (so no ``mtime_ns``).

        :raises FsError: as ``list_dir`` for ``target`` (FS_NOT_FOUND, FS_NOT_DIRECTORY, …);
            FS_ABORTED ``list aborted``
        """
        pending = [("", target)]
        while pending:
            prefix, directory = pending.pop()
            for entry in await self.list_dir(directory, signal=signal):
                rel = prefix + entry.name
                if entry.type == "file":
                    yield WalkEntry(rel=rel, type="file", target=entry.target, size=entry.size)
                elif entry.type == "directory":
                    yield WalkEntry(rel=rel, type="directory", target=entry.target)
                    pending.append((rel + "/", entry.target))

    def stream_bytes(self, target: Target, *, signal: "AbortSignal | None" = None) -> AsyncIterator[bytes]:
        """Optional: the raw bytes of the regular file ``target``, in chunks, as they are
        stored (no BOM handling, no decoding); nothing runs until iteration starts.

        :raises FsError: FS_NOT_FOUND, FS_NOT_REGULAR_FILE, FS_ABORTED ``read aborted``,
            FS_PERMISSION_DENIED, FS_IO_ERROR
        :raises NotImplementedError: when the provider cannot read raw bytes (the default)
        """
        raise NotImplementedError(f"{type(self).__name__}.stream_bytes")

    async def read_bytes(
        self, target: Target, *, max_bytes: int, size: int | None = None, info: Info | None = None,
        signal: "AbortSignal | None" = None,
    ) -> bytes:
        """Optional: the whole raw content of the regular file ``target``, at most ``max_bytes``
        bytes (the reference's ``readBytes(target, signal, maxBytes)`` seam primitive).

        :param max_bytes: inclusive cap on the complete content (≥ 0)
        :param size: the file's size from the caller's one stat (``Info.size``), when known:
            over ``max_bytes`` fails before any content is read
        :param info: that stat itself, when the caller has it: a provider may return the bytes
            the stat fetched of exactly ``info.version`` (the S3 provider, for a small object:
            no request); the default ignores it
        :raises FsError: FS_IO_ERROR ``cannot read "<dp>": <n> bytes exceeds the <max>-byte
            limit`` (``size`` over the cap) or ``… content exceeds the <max>-byte limit`` (more
            bytes than the cap found while reading); as ``stream_bytes`` otherwise
        :raises NotImplementedError: when the provider cannot read raw bytes
        """
        from .errors import bytes_over_limit, content_over_limit

        if size is not None and size > max_bytes:
            raise bytes_over_limit(target.display_path, size, max_bytes)
        chunks: list[bytes] = []
        total = 0
        stream = self.stream_bytes(target, signal=signal)
        try:
            async for chunk in stream:
                total += len(chunk)
                if total > max_bytes:
                    raise content_over_limit(target.display_path, max_bytes)
                chunks.append(chunk)
        finally:
            await stream.aclose()  # type: ignore[attr-defined]
        return b"".join(chunks)

    @abc.abstractmethod
    async def list_dir(self, target: Target, *, signal: "AbortSignal | None" = None) -> list[DirEntry]:
        """Direct children in a stable name order; never reads contents.

        :raises FsError: FS_NOT_FOUND, FS_NOT_DIRECTORY, FS_PERMISSION_DENIED, FS_IO_ERROR, FS_ABORTED
        """

    async def iter_dir(self, target: Target, *, signal: "AbortSignal | None" = None) -> AsyncIterator[list[DirEntry]]:
        """Optional: ``list_dir``'s entries of the directory ``target``, in batches and in no
        particular order, so that a caller keeping only a part of a huge directory (a page of
        ``list``, the first rows of a clipped directory ``view``) never holds every entry.
        Stopping the iteration early is allowed and releases what the provider holds. The
        default yields ``list_dir`` as one batch (memory as ``list_dir``'s).

        :raises FsError: as ``list_dir``
        """
        yield await self.list_dir(target, signal=signal)

    @abc.abstractmethod
    async def write_text(
        self,
        target: Target,
        content: str,
        expected: WriteIntent | None = None,
        *,
        signal: "AbortSignal | None" = None,
    ) -> WriteOutcome:
        """Atomically create or replace; guarded iff ``expected`` is given (§2.8).

        :raises FsError: FS_NOT_REGULAR_FILE, FS_STALE_VERSION, FS_NOT_OBSERVED, FS_ABORTED, …
        """

    async def write_bytes(
        self,
        target: Target,
        data: bytes,
        expected: WriteIntent | None = None,
        *,
        mode: int | None = None,
        signal: "AbortSignal | None" = None,
    ) -> Version:
        """Optional: atomically create or replace the regular file ``target`` with exactly
        ``data`` (no text rules: no BOM kept, no line endings changed, no encoding), durably,
        under the target's lock; guarded iff ``expected`` is given, as ``write_text`` is.
        What a rewind of the history writes (docs/HISTORY.md): the bytes a file had before.

        :param expected: ``CreateIfAbsent()`` or ``ReplaceIfVersion(version)``; ``None``:
            unconditional
        :param mode: permission bits for the file (local disk only; ``None``: an existing
            file's are kept, a new file gets what ``write_text`` gives it); ignored by providers
            without permission bits
        :param signal: checked before anything changes (``write aborted``)
        :return: the file's version after the write
        :raises FsError: as ``write_text`` (FS_NOT_REGULAR_FILE, FS_STALE_VERSION,
            FS_NOT_OBSERVED, FS_ABORTED, FS_PERMISSION_DENIED, FS_IO_ERROR)
        :raises NotImplementedError: when the provider cannot write raw bytes (the default)
        """
        raise NotImplementedError(f"{type(self).__name__}.write_bytes")

    @abc.abstractmethod
    async def edit_text(
        self,
        target: Target,
        edit: EditRequest,
        expected: EditIntent | None = None,
        *,
        signal: "AbortSignal | None" = None,
    ) -> EditOutcome:
        """Atomic literal edit; the version guard is checked before matching (§2.11).
        A missing target is FS_STALE_VERSION, guarded or not.

        :raises FsError: FS_STALE_VERSION, FS_NOT_REGULAR_FILE, FS_NOT_TEXT,
            FS_EDIT_NOT_FOUND, FS_AMBIGUOUS_EDIT, FS_ABORTED, …
        """

    @abc.abstractmethod
    async def delete(
        self,
        target: Target,
        expected: DeleteIntent | None = None,
        *,
        signal: "AbortSignal | None" = None,
    ) -> DeleteOutcome:
        """Remove the regular file ``target``, durably; guarded iff ``expected`` is given.

        Under the target's lock: the file must exist (and be at ``expected.version``), then it
        is removed. A provider with symlinks refuses a target whose own name is a symlink
        (``FS_NOT_REGULAR_FILE``): what to delete would be ambiguous. Directories are never
        removed; parent directories left empty stay.

        :param expected: ``DeleteIntent(version)``; ``None`` deletes whatever file is there
        :param signal: checked before anything changes (``delete aborted``); a removal, once
            started, is never abandoned
        :return: the version the file had when it was deleted
        :raises FsError: FS_STALE_VERSION (guarded: changed ``cannot delete "<dp>": file
            changed since it was read``, or missing ``… file no longer exists``);
            FS_NOT_FOUND (unguarded and missing); FS_NOT_REGULAR_FILE; FS_ABORTED;
            FS_PERMISSION_DENIED; FS_IO_ERROR
        """

    @abc.abstractmethod
    async def rename(
        self,
        source: Target,
        dest: Target,
        expected: RenameIntent | None = None,
        *,
        signal: "AbortSignal | None" = None,
    ) -> RenameOutcome:
        """Give the regular file ``source`` the name ``dest``; never replaces anything.

        Under both targets' locks (taken in key order): ``source`` must exist (and be at
        ``expected.version``) and ``dest`` must be absent; missing parent directories of
        ``dest`` are created. The content and (where the provider has them) mode and owner
        travel with the file. Atomic where the provider can rename atomically (local disk: one
        ``renameat2(RENAME_NOREPLACE)``); an object store copies then deletes (see its docs).

        :param expected: ``RenameIntent(version)`` for ``source``; ``None``: unguarded
        :param signal: checked before anything changes (``rename aborted``)
        :return: the file's version at ``dest``
        :raises FsError: FS_STALE_VERSION (guarded: ``source`` changed or missing);
            FS_NOT_FOUND (unguarded and ``source`` missing); FS_NOT_OBSERVED (``dest``
            exists: ``cannot rename "<src>" to "<dest>": the destination already exists``);
            FS_NOT_REGULAR_FILE (``source`` is not a regular file); FS_ABORTED;
            FS_PERMISSION_DENIED; FS_IO_ERROR
        """
