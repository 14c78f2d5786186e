"""``SandboxedFileSystem``: the mode fence, a wrapper over any provider (docs/design/SANDBOX.md §1.3, §3.1–§3.3).

Reads pass through unchanged. Every mutation of the seam (``write_text``, ``write_bytes``, ``edit_text``,
``delete``, ``rename``) and apply_patch's up-front checks (``check_replaceable``,
``check_creatable``) are fenced just before they are delegated:

* ``danger-full-access``: passed on unchecked;
* ``read-only``: refused, ``FS_SANDBOX_DENIED`` ``cannot <verb> "<dp>": file access denied under
  read-only mode``;
* ``workspace-write``: the target is resolved **again, now** (a symlink swapped in since the
  tool resolved it is seen) and must lie under a workspace root (``FileSystem.workspace_roots``;
  with none, the call's cwd) or, for a provider whose files are host files, under a platform temp
  area (``roots.granted_temp_areas``: never ``/``, X5); the mutation is then delegated with that
  fresh target, for host files to ``inner`` narrowed to the writable place that holds it
  (``FileSystem.narrowed``): every step of the mutation is an ``O_NOFOLLOW`` walk from that
  place, so a directory swapped for a symlink out after the check is refused, with or without a
  containment root (a move between two places is the one mutation made by path).

``write_text`` and ``edit_text`` name the verb ``write`` (the reference's text for both),
``rename`` fences its source and its destination. The reference accepts the race between the
check and the syscall (a policy fence, not a kernel boundary); here the walk from the place
closes it for host files.

Follows ``packages/fs/fs-sandbox/src/index.ts`` of ``toninfo/deepseek-harness`` at
``48fb3b528b91c94ef429fc2bbc6b8e8f5157e7bb`` (there a subclass of the local provider; here a
wrapper, so memory and S3 are fenced too, their roots compared as target keys).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any, Literal

import anyio

from ..fs.errors import FsError, FsErrorCode, sandbox_denied
from ..fs.filesystem import FileSystem
from ..fs.sandbox import SandboxMode, parse_mode
from ..fs.types import (
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
from .roots import canonical, granted_temp_areas, is_under, lexically_under

if TYPE_CHECKING:
    from ..core.context import Scope
    from ..core.signal import AbortSignal
    from ..fs.errors import Verb
    from ..fs.path_rules import RuleView
    from ..fs.search_host import SearchHost
    from ..fs.window import ReadWindow, WindowResult
    from .approval import Approver

__all__ = ("KINDS", "SandboxedFileSystem")

_KEYED = "\0keyed"
"""``_place`` of a target of a provider whose files are no host files (no view needed)"""

Kind = Literal["read", "mutate", "lifecycle"]

KINDS: dict[str, Kind] = {
    "name": "lifecycle",
    "apply": "lifecycle",
    "aclose": "lifecycle",
    "resolve": "read",
    "stat": "read",
    "lstat": "read",
    "read_text": "read",
    "stream_text": "read",
    "read_window": "read",
    "is_current": "read",
    "read_text_at": "read",
    "host_path": "read",
    "real_place": "read",
    "walk": "read",
    "stream_bytes": "read",
    "read_bytes": "read",
    "list_dir": "read",
    "iter_dir": "read",
    "workspace_roots": "read",
    "sandbox_mode": "read",
    "text_encodings": "read",
    "witnessed_mutations": "read",
    "root": "read",
    "cwd": "read",
    "write_text": "mutate",
    "write_bytes": "mutate",
    "edit_text": "mutate",
    "delete": "mutate",
    "rename": "mutate",
    "check_replaceable": "mutate",
    "check_creatable": "mutate",
    "check_renamable": "mutate",
    "narrowed": "read",
    "path_rules": "read",
    "search_host": "read",
}
"""every public member of ``FileSystem``, classified: a ``mutate`` member is fenced here (the
sandbox tests fail for a seam member missing from this table)"""


class SandboxedFileSystem(FileSystem):
    """``SandboxedFileSystem(inner, mode="workspace-write", approval=callback)``.

    :param inner: the provider to fence (owned: ``aclose`` closes it)
    :param mode: the deployment's standing mode (``fs.sandbox.MODES``)
    :param approval: the approval callback of an escalation (``fs_sandbox.approval.Approver``);
        ``None``: every escalation is refused (``no approval service is composed``)
    :raises ValueError: an unknown mode
    """

    name = "fs-sandbox"

    def __init__(self, inner: FileSystem, *, mode: str = "read-only", approval: "Approver | None" = None,
                 cwd: str | None = None, base: str | None = None, _owns: bool = True,
                 _views: "dict[str, FileSystem | None] | None" = None) -> None:
        self._inner = inner
        self._mode: SandboxMode = parse_mode(mode)
        self._approval = approval
        self._cwd = cwd
        self._base = base
        self._owns = _owns
        self._views: dict[str, FileSystem | None] = {} if _views is None else _views
        """``inner`` narrowed to each writable place met (``_confined``), shared with the per-call views"""

    @classmethod
    def apply(cls, scope: "Scope", /, **config: Any) -> None:
        """Plugin entry: ``ctx.plugin(SandboxedFileSystem, inner=provider, mode=…, approval=…)``
        provides the wrapper as ``fs``; the scope's disposal closes it (and ``inner``)."""
        provider = cls(**config)
        scope.provide("fs", provider)
        scope.effect(provider.aclose)

    def __repr__(self) -> str:
        return f"SandboxedFileSystem({self._inner!r}, mode={self._mode!r})"

    # -- the sandbox's own members ---------------------------------------------------------------
    @property
    def inner(self) -> FileSystem:
        """The fenced provider."""
        return self._inner

    @property
    def sandbox_mode(self) -> SandboxMode:
        """The mode this wrapper (or per-call view) fences with."""
        return self._mode

    @property
    def approval(self) -> "Approver | None":
        """The composed approval callback, if any."""
        return self._approval

    @property
    def root(self) -> str | None:
        """``inner``'s containment root, if it has one (the search tools' link filter reads it)."""
        return getattr(self._inner, "root", None)

    @property
    def cwd(self) -> str | None:
        """``inner``'s default base for relative paths, if it has one."""
        return getattr(self._inner, "cwd", None)

    def for_call(self, mode: str, *, cwd: str | None = None, base: str | None = None) -> "SandboxedFileSystem":
        """A view of this wrapper bound to one call's policy: ``mode`` (the standing one, or an
        approved wider one) and the call's ``cwd`` (the workspace when the provider has no
        roots). It shares ``inner`` and never closes it.

        :param base: the base of every relative path the view resolves, whatever ``cwd`` its
            caller passes (the reference's ``policy.workspaceRoot``, ``canonical_base``;
            ``None``: the caller's ``cwd``)
        :raises ValueError: an unknown mode
        """
        return SandboxedFileSystem(self._inner, mode=mode, approval=self._approval, cwd=cwd, base=base, _owns=False,
                                   _views=self._views)

    async def canonical_base(self, cwd: str | None, *, signal: "AbortSignal | None" = None) -> str | None:
        """The reference's per-call workspace root (``sandbox-policy`` ``resolveWorkspaceRoot``:
        ``canonicalPath`` of the session cwd, which ``tool-fs`` ``write``/``edit`` resolve a
        relative path against under a sandbox): ``cwd`` (else ``inner``'s) with every symlink
        resolved (``roots.canonical``, off the event loop), for a provider whose files are host
        files. ``None`` (resolve against ``cwd`` as spelled) for any other provider, without a
        cwd, or for a cwd the provider refuses (outside its containment).
        """
        spelled = cwd or self.cwd
        if not spelled:
            return None
        try:
            target = await self._inner.resolve(spelled, signal=signal)
        except FsError:
            return None
        if self._inner.host_path(target) is None:
            return None
        return await anyio.to_thread.run_sync(canonical, spelled)

    async def aclose(self) -> None:
        if self._owns:
            await self._inner.aclose()

    # -- the fence ------------------------------------------------------------------------------
    async def _checked(self, target: Target, verb: "Verb", signal: "AbortSignal | None") -> tuple[FileSystem, Target]:
        """Where and what to mutate: ``inner`` and ``target`` (danger-full-access), or a fresh
        resolution of it that lies in a writable place (workspace-write), to be mutated through
        ``_confined``'s view of that place; else ``FS_SANDBOX_DENIED``."""
        mode = self._mode
        if mode == "danger-full-access":
            return self._inner, target
        if mode == "read-only":
            raise sandbox_denied(verb, target.display_path, mode)
        fresh = await self._inner.resolve(target.display_path, signal=signal)
        place = await self._place(fresh, signal)
        if place is None:
            raise sandbox_denied(verb, target.display_path, mode)
        if place is _KEYED:
            return self._inner, fresh
        view = await self._confined(place)
        if view is None:
            return self._inner, fresh
        try:  # resolved again inside the place: a symlink out swapped in since is refused
            inside = await view.resolve(fresh.key, signal=signal)
        except FsError as err:
            if err.code == FsErrorCode.PERMISSION_DENIED:
                raise sandbox_denied(verb, target.display_path, mode) from err
            raise
        return view, Target(key=inside.key, display_path=fresh.display_path)

    async def _writable_targets(self, signal: "AbortSignal | None") -> list[Target]:
        roots = self._inner.workspace_roots()
        if not roots:
            return [await self._inner.resolve(self._cwd or ".", signal=signal)]
        return [await self._inner.resolve(root, signal=signal) for root in roots]

    async def _place(self, fresh: Target, signal: "AbortSignal | None") -> str | None:
        """The writable place that holds ``fresh``: for host files, the most specific of the
        canonical workspace roots and granted temp areas it lies under; for other providers
        ``_KEYED`` when its key lies under a workspace root's key; ``None``: no such place."""
        roots = await self._writable_targets(signal)
        host = self._inner.host_path(fresh)
        if host is None:  # compare as keys: the provider's identity of a path
            return _KEYED if any(lexically_under(fresh.key, root.key) for root in roots) else None
        allowed = [self._inner.host_path(root) or root.display_path for root in roots]

        def find() -> str | None:
            places = [canonical(p) for p in allowed] + [p for p in granted_temp_areas() if p not in allowed]
            holding = [place for place in places if is_under(host, place)]
            return max(holding, key=len) if holding else None

        return await anyio.to_thread.run_sync(find)

    async def _confined(self, place: str) -> FileSystem | None:
        """``inner`` narrowed to ``place`` (made once per place, shared by every per-call view):
        each of its mutations walks from ``place`` without following a symlink out of it
        (``FileSystem.narrowed``); ``None`` when ``inner`` cannot narrow to it (then the fresh
        target is mutated by path: the reference's accepted race)."""
        views = self._views
        if place not in views:
            try:
                views[place] = await anyio.to_thread.run_sync(self._inner.narrowed, [place])
            except ValueError:
                views[place] = None
        return views[place]

    # -- fenced mutations -------------------------------------------------------------------
    async def write_text(self, target: Target, content: str, expected: WriteIntent | None = None, *,
                         signal: "AbortSignal | None" = None) -> WriteOutcome:
        fs, fresh = await self._checked(target, "write", signal)
        return await fs.write_text(fresh, content, expected, signal=signal)

    async def write_bytes(self, target: Target, data: bytes, expected: WriteIntent | None = None, *,
                          mode: int | None = None, signal: "AbortSignal | None" = None) -> Version:
        fs, fresh = await self._checked(target, "write", signal)
        return await fs.write_bytes(fresh, data, expected, mode=mode, signal=signal)

    async def edit_text(self, target: Target, edit: EditRequest, expected: EditIntent | None = None, *,
                        signal: "AbortSignal | None" = None) -> EditOutcome:
        fs, fresh = await self._checked(target, "write", signal)
        return await fs.edit_text(fresh, edit, expected, signal=signal)

    async def delete(self, target: Target, expected: DeleteIntent | None = None, *,
                     signal: "AbortSignal | None" = None) -> DeleteOutcome:
        fs, fresh = await self._checked(target, "delete", signal)
        return await fs.delete(fresh, expected, signal=signal)

    async def rename(self, source: Target, dest: Target, expected: RenameIntent | None = None, *,
                     signal: "AbortSignal | None" = None) -> RenameOutcome:
        fs, fresh_source, fresh_dest = await self._checked_pair(source, dest, signal)
        return await fs.rename(fresh_source, fresh_dest, expected, signal=signal)

    async def _checked_pair(self, source: Target, dest: Target,
                            signal: "AbortSignal | None") -> tuple[FileSystem, Target, Target]:
        """``_checked`` for a move's two ends: through their one view when both lie in the same
        writable place; a move between two places (the workspace and a temp area) is made by
        ``inner`` on the fresh targets (docs/SANDBOX.md: the one mutation not confined)."""
        fs_source, fresh_source = await self._checked(source, "rename", signal)
        fs_dest, fresh_dest = await self._checked(dest, "rename", signal)
        return (fs_source if fs_source is fs_dest else self._inner), fresh_source, fresh_dest

    async def check_replaceable(self, target: Target, verb: "Verb", *, size: int | None = None,
                                signal: "AbortSignal | None" = None) -> None:
        fs, fresh = await self._checked(target, "write" if verb in ("write", "edit") else verb, signal)
        await fs.check_replaceable(fresh, verb, size=size, signal=signal)

    async def check_creatable(self, target: Target, *, size: int | None = None,
                              signal: "AbortSignal | None" = None) -> None:
        fs, fresh = await self._checked(target, "write", signal)
        await fs.check_creatable(fresh, size=size, signal=signal)

    async def check_renamable(self, source: Target, dest: Target, *, signal: "AbortSignal | None" = None) -> None:
        fs, fresh_source, fresh_dest = await self._checked_pair(source, dest, signal)
        await fs.check_renamable(fresh_source, fresh_dest, signal=signal)

    # -- reads: unchanged -------------------------------------------------------------------
    def workspace_roots(self) -> tuple[str, ...]:
        return self._inner.workspace_roots()

    @property
    def text_encodings(self) -> tuple[str, ...]:
        return self._inner.text_encodings

    @property
    def witnessed_mutations(self) -> frozenset[str]:
        return self._inner.witnessed_mutations

    def narrowed(self, roots: Sequence[str]) -> "SandboxedFileSystem | None":
        """``inner``'s narrowed view (the MCP client's roots, DEVIATIONS M3), fenced with this
        wrapper's mode and approval (its writable roots are then the view's); ``None`` when
        ``inner`` cannot narrow."""
        view = self._inner.narrowed(roots)
        if view is None:
            return None
        return SandboxedFileSystem(view, mode=self._mode, approval=self._approval, cwd=self._cwd, _owns=False)

    async def resolve(self, path: str, *, cwd: str | None = None, signal: "AbortSignal | None" = None) -> Target:
        """``inner``'s resolution; relative to the view's ``base`` when it has one (``for_call``)."""
        return await self._inner.resolve(path, cwd=self._base or cwd, signal=signal)

    async def stat(self, target: Target, *, signal: "AbortSignal | None" = None) -> Info | None:
        return await self._inner.stat(target, signal=signal)

    async def lstat(self, path: str, *, cwd: str | None = None, signal: "AbortSignal | None" = None) -> PathInfo | None:
        return await self._inner.lstat(path, cwd=cwd, signal=signal)

    async def read_text(self, target: Target, *, signal: "AbortSignal | None" = None) -> str:
        return await self._inner.read_text(target, signal=signal)

    def stream_text(self, target: Target, *, signal: "AbortSignal | None" = None) -> AsyncIterator[str]:
        return self._inner.stream_text(target, signal=signal)

    async def read_window(self, target: Target, window: "ReadWindow", *, info: Info, streamed: bool = False,
                          signal: "AbortSignal | None" = None) -> "WindowResult | None":
        return await self._inner.read_window(target, window, info=info, streamed=streamed, signal=signal)

    async def is_current(self, target: Target, version: Version, *, signal: "AbortSignal | None" = None) -> bool:
        return await self._inner.is_current(target, version, signal=signal)

    async def read_text_at(self, target: Target, version: Version, *, info: Info | None = None,
                           signal: "AbortSignal | None" = None) -> str | None:
        return await self._inner.read_text_at(target, version, info=info, signal=signal)

    def host_path(self, target: Target) -> str | None:
        return self._inner.host_path(target)

    async def real_place(self, target: Target, *, signal: "AbortSignal | None" = None) -> str:
        return await self._inner.real_place(target, signal=signal)

    async def path_rules(self, *, signal: "AbortSignal | None" = None) -> "RuleView | None":
        return await self._inner.path_rules(signal=signal)

    def search_host(self) -> "SearchHost | None":
        return self._inner.search_host()

    def walk(self, target: Target, *, signal: "AbortSignal | None" = None) -> AsyncIterator[WalkEntry]:  # type: ignore[override]
        return self._inner.walk(target, signal=signal)

    def stream_bytes(self, target: Target, *, signal: "AbortSignal | None" = None) -> AsyncIterator[bytes]:
        return self._inner.stream_bytes(target, signal=signal)

    async def read_bytes(self, target: Target, *, max_bytes: int, size: int | None = None, info: Info | None = None,
                         signal: "AbortSignal | None" = None) -> bytes:
        return await self._inner.read_bytes(target, max_bytes=max_bytes, size=size, info=info, signal=signal)

    async def list_dir(self, target: Target, *, signal: "AbortSignal | None" = None) -> list[DirEntry]:
        return await self._inner.list_dir(target, signal=signal)

    def iter_dir(self, target: Target, *, signal: "AbortSignal | None" = None) -> AsyncIterator[list[DirEntry]]:  # type: ignore[override]
        return self._inner.iter_dir(target, signal=signal)
