"""``RuledFileSystem``: the deployment's path rules over any provider (docs/PATH-RULES.md).

Every member of the seam is classified in ``KINDS`` and handled by kind:

* ``resolve`` — the target is judged (its display path, and its key: the real path on the
  local disk, so a symlink or ``..`` into a denied place is judged by where it leads); a
  denied one is refused there, ``FS_PERMISSION_DENIED`` ``cannot resolve "<dp>": permission
  denied — the path rules deny access to it`` (``fs.errors.path_denied``), whether or not
  the file exists;
* ``target`` — a read of a target (``stat``, ``read_text``, ``read_bytes``, …) judges it again
  (a target may come from a listing, not from ``resolve``) and refuses a denied one;
* ``listing`` — ``list_dir`` and ``walk`` leave denied entries out (a symlink is judged by
  where it leads, so a planted ``innocent -> .env`` is not listed either);
* ``mutate`` — a change (``write_text``, ``write_bytes``, ``edit_text``, ``delete``, ``rename`` source and
  destination, apply_patch's ``check_*``) of a denied or read-only target is refused before it
  is delegated: ``… the path rules make it read-only`` (``fs.errors.path_read_only``);
* ``read`` — passed on (metadata of the deployment, not of a file: roots, cwd, host paths);
* ``lifecycle``.

``path_rules`` gives the search tools the rules (``RuleView``): ``glob``/``grep`` on the local
disk run ripgrep on host paths, outside the seam, and apply them there
(``tool_fs_search.denied``). Compose this wrapper *inside* a sandbox
(``SandboxedFileSystem(RuledFileSystem(provider))``, as ``create_context`` does): no escalation
widens the rules. A policy fence, as the sandbox's is: a path swapped for a symlink between the
check and the provider's own open is the race the provider's containment walk answers for, not
this wrapper.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any, Literal

import anyio

from ..fs.errors import FsError, Verb, path_denied, path_read_only
from ..fs.filesystem import FileSystem
from ..fs.path_rules import PathRules, RuleView, Verdict
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

if TYPE_CHECKING:
    from ..core.context import Scope
    from ..core.signal import AbortSignal
    from ..fs.search_host import SearchHost
    from ..fs.window import ReadWindow, WindowResult

__all__ = ("KINDS", "RuledFileSystem")

Kind = Literal["lifecycle", "read", "resolve", "target", "listing", "mutate"]

KINDS: dict[str, Kind] = {
    "name": "lifecycle",
    "apply": "lifecycle",
    "aclose": "lifecycle",
    "resolve": "resolve",
    "lstat": "resolve",
    "stat": "target",
    "read_text": "target",
    "stream_text": "target",
    "read_window": "target",
    "is_current": "target",
    "read_text_at": "target",
    "stream_bytes": "target",
    "read_bytes": "target",
    "real_place": "target",
    "list_dir": "listing",
    "iter_dir": "listing",
    "walk": "listing",
    "write_text": "mutate",
    "write_bytes": "mutate",
    "edit_text": "mutate",
    "delete": "mutate",
    "rename": "mutate",
    "check_replaceable": "mutate",
    "check_creatable": "mutate",
    "check_renamable": "mutate",
    "host_path": "read",
    "workspace_roots": "read",
    "sandbox_mode": "read",
    "text_encodings": "read",
    "witnessed_mutations": "read",
    "narrowed": "read",
    "path_rules": "read",
    "search_host": "read",
    "root": "read",
    "cwd": "read",
}
"""every public member of ``FileSystem``, classified (the path-rules matrix test fails for a
seam member missing here, and for a ``resolve``/``target``/``listing``/``mutate`` member this
wrapper does not define)"""


class _Bases:
    """The rules bound to a provider's bases, found once (the bases' keys need ``resolve``) and
    shared by every narrowed view: the bases are the deployment's, not a view's."""

    def __init__(self, rules: PathRules, base: str | None, inner: FileSystem) -> None:
        self.rules = rules
        self.base = base
        self.inner = inner
        self.view: RuleView | None = None
        self.lock = anyio.Lock()

    async def get(self, signal: "AbortSignal | None") -> RuleView:
        if self.view is not None:
            return self.view
        async with self.lock:
            if self.view is None:
                inner = self.inner
                shown = inner.workspace_roots() or (self.base or getattr(inner, "cwd", None) or "/",)
                keys: list[str] = []
                for base in shown:
                    try:
                        keys.append((await inner.resolve(base, signal=signal)).key)
                    except FsError:
                        keys.append(base)
                self.view = RuleView(self.rules.bound(shown), self.rules.bound(keys))
        return self.view


class RuledFileSystem(FileSystem):
    """``RuledFileSystem(inner, rules=PathRules.of(deny=[…], read_only=[…]), base=cwd)``.

    :param inner: the provider to fence (owned: ``aclose`` closes it)
    :param rules: the deployment's rules (``fs.path_rules.PathRules``)
    :param base: the base of the patterns when ``inner`` has no workspace roots (the
        deployment's cwd); default ``inner``'s ``cwd``, else ``/``
    """

    name = "fs-rules"

    def __init__(self, inner: FileSystem, *, rules: PathRules, base: str | None = None,
                 _bases: _Bases | None = None, _owns: bool = True) -> None:
        self._inner = inner
        self._rules = rules
        self._bases = _bases if _bases is not None else _Bases(rules, base, inner)
        self._owns = _owns

    @classmethod
    def apply(cls, scope: "Scope", /, **config: Any) -> None:
        """Plugin entry: ``ctx.plugin(RuledFileSystem, inner=provider, rules=…)`` provides the
        wrapper as ``fs``; the scope's disposal closes it (and ``inner``)."""
        provider = cls(**config)
        scope.provide("fs", provider)
        scope.effect(provider.aclose)

    def __repr__(self) -> str:
        return f"RuledFileSystem({self._inner!r})"

    @property
    def inner(self) -> FileSystem:
        """The fenced provider."""
        return self._inner

    @property
    def rules(self) -> PathRules:
        """The deployment's rules."""
        return self._rules

    @property
    def root(self) -> str | None:
        """``inner``'s containment root, if it has one (the search tools' link filter reads it)."""
        return getattr(self._inner, "root", None)

    @property
    def cwd(self) -> str | None:
        """``inner``'s default base for relative paths, if it has one."""
        return getattr(self._inner, "cwd", None)

    async def path_rules(self, *, signal: "AbortSignal | None" = None) -> RuleView:
        """The rules bound to this provider's bases (``FileSystem.path_rules``)."""
        return await self._bases.get(signal)

    async def aclose(self) -> None:
        if self._owns:
            await self._inner.aclose()

    # -- the fence --------------------------------------------------------------------------
    async def _verdict(self, target: Target, signal: "AbortSignal | None") -> Verdict:
        view = await self._bases.get(signal)
        return view.verdict(target.display_path, target.key)

    async def _readable(self, target: Target, verb: Verb, signal: "AbortSignal | None") -> None:
        if await self._verdict(target, signal) == "deny":
            raise path_denied(verb, target.display_path)

    async def _changeable(self, target: Target, verb: Verb, signal: "AbortSignal | None") -> None:
        verdict = await self._verdict(target, signal)
        if verdict == "deny":
            raise path_denied(verb, target.display_path)
        if verdict == "read-only":
            raise path_read_only(verb, target.display_path)

    async def _shown(self, entries: Sequence[DirEntry], signal: "AbortSignal | None") -> list[DirEntry]:
        view = await self._bases.get(signal)
        return [e for e in entries if view.verdict(e.target.display_path, e.target.key) != "deny"]

    # -- resolution -------------------------------------------------------------------------
    async def resolve(self, path: str, *, cwd: str | None = None, signal: "AbortSignal | None" = None) -> Target:
        """``inner``'s resolution; a denied target is refused (``path_denied("resolve", dp)``)."""
        target = await self._inner.resolve(path, cwd=cwd, signal=signal)
        await self._readable(target, "resolve", signal)
        return target

    async def lstat(self, path: str, *, cwd: str | None = None, signal: "AbortSignal | None" = None) -> PathInfo | None:
        """``inner``'s ``lstat`` of a path whose resolution is not denied (a symlink leading to a
        denied file is refused too: its size is the length of the name it leads to)."""
        try:
            target = await self._inner.resolve(path, cwd=cwd, signal=signal)
        except FsError:
            target = None  # inner's lstat gives its own answer
        if target is not None:
            await self._readable(target, "stat", signal)
        return await self._inner.lstat(path, cwd=cwd, signal=signal)

    # -- reads of a target ------------------------------------------------------------------
    async def stat(self, target: Target, *, signal: "AbortSignal | None" = None) -> Info | None:
        await self._readable(target, "stat", signal)
        return await self._inner.stat(target, signal=signal)

    async def read_text(self, target: Target, *, signal: "AbortSignal | None" = None) -> str:
        await self._readable(target, "read", signal)
        return await self._inner.read_text(target, signal=signal)

    async def stream_text(self, target: Target, *, signal: "AbortSignal | None" = None) -> AsyncIterator[str]:  # type: ignore[override]
        await self._readable(target, "read", signal)
        chunks = self._inner.stream_text(target, signal=signal)
        try:
            async for chunk in chunks:
                yield chunk
        finally:
            await chunks.aclose()  # type: ignore[attr-defined]

    async def read_window(self, target: Target, window: "ReadWindow", *, info: Info, streamed: bool = False,
                          signal: "AbortSignal | None" = None) -> "WindowResult | None":
        await self._readable(target, "read", signal)
        return await self._inner.read_window(target, window, info=info, streamed=streamed, signal=signal)

    async def is_current(self, target: Target, version: Version, *, signal: "AbortSignal | None" = None) -> bool:
        await self._readable(target, "stat", signal)
        return await self._inner.is_current(target, version, signal=signal)

    async def read_text_at(self, target: Target, version: Version, *, info: Info | None = None,
                           signal: "AbortSignal | None" = None) -> str | None:
        await self._readable(target, "read", signal)
        return await self._inner.read_text_at(target, version, info=info, signal=signal)

    async def stream_bytes(self, target: Target, *, signal: "AbortSignal | None" = None) -> AsyncIterator[bytes]:  # type: ignore[override]
        await self._readable(target, "read", signal)
        chunks = self._inner.stream_bytes(target, signal=signal)
        try:
            async for chunk in chunks:
                yield chunk
        finally:
            await chunks.aclose()  # type: ignore[attr-defined]

    async def read_bytes(self, target: Target, *, max_bytes: int, size: int | None = None, info: Info | None = None,
                         signal: "AbortSignal | None" = None) -> bytes:
        await self._readable(target, "read", signal)
        return await self._inner.read_bytes(target, max_bytes=max_bytes, size=size, info=info, signal=signal)

    async def real_place(self, target: Target, *, signal: "AbortSignal | None" = None) -> str:
        """``inner``'s real place of a target that is not denied (a name is a read too)."""
        await self._readable(target, "resolve", signal)
        return await self._inner.real_place(target, signal=signal)

    # -- listings ---------------------------------------------------------------------------
    async def list_dir(self, target: Target, *, signal: "AbortSignal | None" = None) -> list[DirEntry]:
        await self._readable(target, "list", signal)
        return await self._shown(await self._inner.list_dir(target, signal=signal), signal)

    async def iter_dir(self, target: Target, *, signal: "AbortSignal | None" = None) -> AsyncIterator[list[DirEntry]]:  # type: ignore[override]
        """``inner``'s batches, each without its denied entries (as ``list_dir``)."""
        await self._readable(target, "list", signal)
        batches = self._inner.iter_dir(target, signal=signal)
        try:
            async for batch in batches:
                yield await self._shown(batch, signal)
        finally:
            await batches.aclose()  # type: ignore[attr-defined]

    async def walk(self, target: Target, *, signal: "AbortSignal | None" = None) -> AsyncIterator[WalkEntry]:  # type: ignore[override]
        await self._readable(target, "list", signal)
        view = await self._bases.get(signal)
        pruned: tuple[str, ...] = ()  # denied directories: nothing below them is looked at
        entries = self._inner.walk(target, signal=signal)
        try:
            async for entry in entries:
                if pruned and entry.rel.startswith(pruned):
                    continue
                if view.verdict(entry.target.display_path, entry.target.key) == "deny":
                    if entry.type == "directory":
                        pruned = (*pruned, entry.rel + "/")
                    continue
                yield entry
        finally:
            await entries.aclose()  # type: ignore[attr-defined]

    # -- changes ----------------------------------------------------------------------------
    async def write_text(self, target: Target, content: str, expected: WriteIntent | None = None, *,
                         signal: "AbortSignal | None" = None) -> WriteOutcome:
        await self._changeable(target, "write", signal)
        return await self._inner.write_text(target, content, expected, signal=signal)

    async def write_bytes(self, target: Target, data: bytes, expected: WriteIntent | None = None, *,
                          mode: int | None = None, signal: "AbortSignal | None" = None) -> Version:
        await self._changeable(target, "write", signal)
        return await self._inner.write_bytes(target, data, expected, mode=mode, signal=signal)

    async def edit_text(self, target: Target, edit: EditRequest, expected: EditIntent | None = None, *,
                        signal: "AbortSignal | None" = None) -> EditOutcome:
        await self._changeable(target, "edit", signal)
        return await self._inner.edit_text(target, edit, expected, signal=signal)

    async def delete(self, target: Target, expected: DeleteIntent | None = None, *,
                     signal: "AbortSignal | None" = None) -> DeleteOutcome:
        await self._changeable(target, "delete", signal)
        return await self._inner.delete(target, expected, signal=signal)

    async def rename(self, source: Target, dest: Target, expected: RenameIntent | None = None, *,
                     signal: "AbortSignal | None" = None) -> RenameOutcome:
        await self._changeable(source, "rename", signal)
        await self._changeable(dest, "rename", signal)
        return await self._inner.rename(source, dest, expected, signal=signal)

    async def check_replaceable(self, target: Target, verb: Verb, *, size: int | None = None,
                                signal: "AbortSignal | None" = None) -> None:
        await self._changeable(target, verb, signal)
        await self._inner.check_replaceable(target, verb, size=size, signal=signal)

    async def check_creatable(self, target: Target, *, size: int | None = None,
                              signal: "AbortSignal | None" = None) -> None:
        await self._changeable(target, "write", signal)
        await self._inner.check_creatable(target, size=size, signal=signal)

    async def check_renamable(self, source: Target, dest: Target, *, signal: "AbortSignal | None" = None) -> None:
        await self._changeable(source, "rename", signal)
        await self._changeable(dest, "rename", signal)
        await self._inner.check_renamable(source, dest, signal=signal)

    # -- passed on --------------------------------------------------------------------------
    def host_path(self, target: Target) -> str | None:
        return self._inner.host_path(target)

    def search_host(self) -> "SearchHost | None":
        """The inner provider's (the search tools use it only where no path is denied: P4)."""
        return self._inner.search_host()

    def workspace_roots(self) -> tuple[str, ...]:
        return self._inner.workspace_roots()

    @property
    def text_encodings(self) -> tuple[str, ...]:
        return self._inner.text_encodings

    @property
    def witnessed_mutations(self) -> frozenset[str]:
        return self._inner.witnessed_mutations

    def narrowed(self, roots: Sequence[str]) -> "RuledFileSystem | None":
        """``inner``'s narrowed view (the MCP client's roots, DEVIATIONS M3) under the same
        rules, judged against the deployment's bases (a view's narrower roots do not move the
        patterns); ``None`` when ``inner`` cannot narrow."""
        view = self._inner.narrowed(roots)
        if view is None:
            return None
        return RuledFileSystem(view, rules=self._rules, _bases=self._bases, _owns=False)
