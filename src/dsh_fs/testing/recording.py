"""A recording wrapper around any provider: the call log and failure injection tests need.

``RecordingFileSystem(inner)`` serves every primitive by delegating to ``inner`` (typically a
``MemoryFileSystem``), after recording the call and raising an injected failure if one is
set, so a test can assert what the tools asked of the seam (REFERENCE-SPEC §7.1, §7.5, the
stat budget of §4.11) while the storage behaves exactly like a real provider. The provider
contract suite runs over it (``tests/contract``), so the fake is checked like every provider.

``RecordingWorkspace(inner)`` wraps the providers of another ``Workspace`` the same way.
No pytest here.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from ..fs.filesystem import FileSystem
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
from .workspaces import Workspace

if TYPE_CHECKING:
    from ..core.profile import Profile
    from ..core.signal import AbortSignal
    from ..fs.errors import Verb
    from ..fs.path_rules import RuleView
    from ..fs.search_host import SearchHost
    from ..fs.window import ReadWindow, WindowResult

__all__ = ("RecordingFileSystem", "RecordingWorkspace")


class RecordingFileSystem(FileSystem):
    """``inner`` as a provider, with a call log, failure injection and stat size overrides.

    * ``calls`` — one tuple per primitive call, in order, naming targets by display path:
      ``("resolve", path, cwd)``, ``("stat", dp)``, ``("lstat", path)``, ``("read_text", dp)``,
      ``("stream_text", dp)``, ``("read_window", dp, window, streamed)``, ``("list_dir", dp)``,
      ``("write_text", dp, content, expected)``, ``("write_bytes", dp, data, expected)``, ``("edit_text", dp, edit, expected)``,
      ``("delete", dp, expected)``, ``("rename", dp, dest_dp, expected)``,
      ``("is_current", dp, version)``, ``("check_replaceable", dp, verb)``, ``("aclose",)``; ``count(primitive)`` counts them.
    * ``failures[primitive] = exc`` — every later call of that primitive raises ``exc``
      (after it is recorded, before ``inner`` sees it).
    * ``sizes[display_path] = int | None`` — what ``stat`` reports as the file's ``size``
      (``None``: a provider that cannot tell), to steer the tools' read strategy.

    :param inner: the provider that does the work
    :param profile: ignored (``inner`` has its own); accepted so that a subclass loads as a
        plugin (``FileSystem.apply`` passes the context's profile)
    """

    name: ClassVar[str] = "fs-recording"

    def __init__(self, inner: FileSystem, *, profile: "Profile | str | None" = None) -> None:
        self.inner = inner
        self.calls: list[tuple[Any, ...]] = []
        self.failures: dict[str, BaseException] = {}
        self.sizes: dict[str, int | None] = {}

    def count(self, primitive: str) -> int:
        """How many calls of ``primitive`` were made."""
        return sum(1 for call in self.calls if call[0] == primitive)

    def _record(self, primitive: str, *args: Any) -> None:
        self.calls.append((primitive, *args))
        failure = self.failures.get(primitive)
        if failure is not None:
            raise failure

    # -- the primitives, recorded and delegated ------------------------------------------------
    async def resolve(self, path: str, *, cwd: str | None = None, signal: "AbortSignal | None" = None) -> Target:
        self._record("resolve", path, cwd)
        return await self.inner.resolve(path, cwd=cwd, signal=signal)

    async def stat(self, target: Target, *, signal: "AbortSignal | None" = None) -> Info | None:
        self._record("stat", target.display_path)
        info = await self.inner.stat(target, signal=signal)
        if info is not None and info.type == "file" and target.display_path in self.sizes:
            return Info(version=info.version, type=info.type, size=self.sizes[target.display_path])
        return info

    async def lstat(self, path: str, *, cwd: str | None = None, signal: "AbortSignal | None" = None) -> PathInfo | None:
        self._record("lstat", path)
        return await self.inner.lstat(path, cwd=cwd, signal=signal)

    async def read_text(self, target: Target, *, signal: "AbortSignal | None" = None) -> str:
        self._record("read_text", target.display_path)
        return await self.inner.read_text(target, signal=signal)

    def stream_text(self, target: Target, *, signal: "AbortSignal | None" = None) -> AsyncIterator[str]:
        return self._relay("stream_text", target, self.inner.stream_text(target, signal=signal))

    async def _relay(self, primitive: str, target: Target, stream: AsyncIterator[Any]) -> AsyncIterator[Any]:
        """``stream`` passed through, recorded once iteration starts and closed however it ends."""
        self._record(primitive, target.display_path)
        try:
            async for chunk in stream:
                yield chunk
        finally:
            close = getattr(stream, "aclose", None)
            if close is not None:
                await close()

    async def read_window(self, target: Target, window: "ReadWindow", *, info: Info, streamed: bool = False,
                          signal: "AbortSignal | None" = None) -> "WindowResult | None":
        self._record("read_window", target.display_path, window, streamed)
        return await self.inner.read_window(target, window, info=info, streamed=streamed, signal=signal)

    async def list_dir(self, target: Target, *, signal: "AbortSignal | None" = None) -> list[DirEntry]:
        self._record("list_dir", target.display_path)
        return await self.inner.list_dir(target, signal=signal)

    def host_path(self, target: Target) -> str | None:
        self._record("host_path", target.display_path)
        return self.inner.host_path(target)

    async def real_place(self, target: Target, *, signal: "AbortSignal | None" = None) -> str:
        self._record("real_place", target.display_path)
        return await self.inner.real_place(target, signal=signal)

    async def path_rules(self, *, signal: "AbortSignal | None" = None) -> "RuleView | None":
        return await self.inner.path_rules(signal=signal)

    def search_host(self) -> "SearchHost | None":
        return self.inner.search_host()

    def workspace_roots(self) -> tuple[str, ...]:
        """``inner``'s roots (a query: not recorded)."""
        return self.inner.workspace_roots()

    @property
    def text_encodings(self) -> tuple[str, ...]:
        """``inner``'s legacy encodings (a query: not recorded)."""
        return self.inner.text_encodings

    def narrowed(self, roots: Sequence[str]) -> FileSystem | None:
        """``inner``'s view, wrapped too (its calls are recorded here)."""
        self._record("narrowed", tuple(roots))
        view = self.inner.narrowed(roots)
        return RecordingFileSystem(view) if view is not None else None

    async def walk(self, target: Target, *, signal: "AbortSignal | None" = None) -> AsyncIterator[WalkEntry]:
        self._record("walk", target.display_path)
        async for entry in self.inner.walk(target, signal=signal):
            yield entry

    def stream_bytes(self, target: Target, *, signal: "AbortSignal | None" = None) -> AsyncIterator[bytes]:
        return self._relay("stream_bytes", target, self.inner.stream_bytes(target, signal=signal))

    async def write_text(self, target: Target, content: str, expected: WriteIntent | None = None, *,
                         signal: "AbortSignal | None" = None) -> WriteOutcome:
        self._record("write_text", target.display_path, content, expected)
        return await self.inner.write_text(target, content, expected, signal=signal)

    async def write_bytes(self, target: Target, data: bytes, expected: WriteIntent | None = None, *,
                          mode: int | None = None, signal: "AbortSignal | None" = None) -> Version:
        self._record("write_bytes", target.display_path, data, expected)
        return await self.inner.write_bytes(target, data, expected, mode=mode, signal=signal)

    async def edit_text(self, target: Target, edit: EditRequest, expected: EditIntent | None = None, *,
                        signal: "AbortSignal | None" = None) -> EditOutcome:
        self._record("edit_text", target.display_path, edit, expected)
        return await self.inner.edit_text(target, edit, expected, signal=signal)

    async def delete(self, target: Target, expected: DeleteIntent | None = None, *,
                     signal: "AbortSignal | None" = None) -> DeleteOutcome:
        self._record("delete", target.display_path, expected)
        return await self.inner.delete(target, expected, signal=signal)

    async def rename(self, source: Target, dest: Target, expected: RenameIntent | None = None, *,
                     signal: "AbortSignal | None" = None) -> RenameOutcome:
        self._record("rename", source.display_path, dest.display_path, expected)
        return await self.inner.rename(source, dest, expected, signal=signal)

    async def is_current(self, target: Target, version: Version, *, signal: "AbortSignal | None" = None) -> bool:
        self._record("is_current", target.display_path, version)
        return await self.inner.is_current(target, version, signal=signal)

    async def check_replaceable(self, target: Target, verb: "Verb", *, size: int | None = None,
                                signal: "AbortSignal | None" = None) -> None:
        self._record("check_replaceable", target.display_path, verb)
        await self.inner.check_replaceable(target, verb, size=size, signal=signal)

    async def check_creatable(self, target: Target, *, size: int | None = None,
                              signal: "AbortSignal | None" = None) -> None:
        self._record("check_creatable", target.display_path)
        await self.inner.check_creatable(target, size=size, signal=signal)

    async def check_renamable(self, source: Target, dest: Target, *, signal: "AbortSignal | None" = None) -> None:
        self._record("check_renamable", source.display_path, dest.display_path)
        await self.inner.check_renamable(source, dest, signal=signal)

    async def aclose(self) -> None:
        """Record the call and close ``inner``."""
        self.calls.append(("aclose",))
        await self.inner.aclose()


class RecordingWorkspace(Workspace):
    """Another ``Workspace`` whose providers are wrapped in ``RecordingFileSystem`` (the
    storage side is ``inner``'s own). ``providers`` lists the wrappers built so far."""

    def __init__(self, inner: Workspace) -> None:
        self.inner = inner
        self.name = f"recording-{inner.name}"
        self.root = inner.root
        self.providers: list[RecordingFileSystem] = []

    async def provider(self, *, profile: "Profile | str | None" = None, **options: Any) -> FileSystem:
        wrapped = RecordingFileSystem(await self.inner.provider(profile=profile, **options))
        self.providers.append(wrapped)
        return wrapped

    async def put(self, rel: str, data: bytes) -> None:
        await self.inner.put(rel, data)

    async def get(self, rel: str) -> bytes | None:
        return await self.inner.get(rel)

    async def delete(self, rel: str) -> None:
        await self.inner.delete(rel)

    async def mkdir(self, rel: str) -> None:
        await self.inner.mkdir(rel)

    async def files(self) -> dict[str, bytes]:
        return await self.inner.files()

    async def dirs(self) -> list[str]:
        return await self.inner.dirs()

    async def aclose(self) -> None:
        await self.inner.aclose()
