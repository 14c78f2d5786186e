"""A deepagents backend on a dsh-fs provider (optional extra: ``pip install '.[deepagents]'``).

``DshFsBackend(ctx)`` implements ``deepagents.backends.protocol.BackendProtocol``, so
``create_deep_agent(..., backend=DshFsBackend(ctx))`` gives deepagents' own file tools
(``ls``, ``read_file``, ``write_file``, ``edit_file``, ``glob``, ``grep``) a dsh-fs provider
underneath::

    from deepagents import create_deep_agent
    from dsh_fs import create_context
    from dsh_fs.adapters.deepagents import DshFsBackend

    agent = create_deep_agent("deepseek:deepseek-chat", backend=DshFsBackend(create_context(root=".")))

Paths are virtual by default (``virtual_mode=True``, as deepagents' own
``FilesystemBackend(virtual_mode=True)`` and ``StateBackend``): ``/`` is the project (the
context's first root, else the session's cwd), ``/README.md`` its ``README.md``, and every path
the model is shown (``ls``, ``glob``, ``grep``, results, error texts) is written that way, so
deepagents' default prompt ("all file paths must start with a /") works as it is. With
``virtual_mode=False`` paths are the provider's (absolute host paths for the local one). Either
way they are confined to the context's root: a path outside it fails with dsh-fs's ``outside
the workspace`` text. The tools' names,
descriptions, argument schemas and success texts stay deepagents' own; what runs underneath is
dsh-fs (docs/FRAMEWORKS.md lists what differs and which guarantees hold):

* ``write``/``edit`` run dsh-fs's own ``write``/``edit`` tools through the registry with the
  backend's ``Session``: containment, atomic durable writes, per-file locks, and the
  observation policy (a file must be read through this backend before it is overwritten or
  edited, and a file changed since that read is refused ``FS_STALE_VERSION``). A refusal is
  the tool's exact ``Error: …`` text, which deepagents shows the model as it is;
* ``read`` resolves, stats and reads through the provider, records the observation (the
  file's version before the read, as dsh-fs's ``read`` does) and slices the text with
  deepagents' own ``slice_read_response``; files above ``read_whole_max_bytes`` are streamed
  and only the window is kept. Errors are dsh-fs's messages (deepagents prefixes ``Error: ``);
* with ``read_image`` loaded (``create_context(..., images=True)``, docs/IMAGES.md), ``read``
  of a PNG/JPEG/WebP/GIF path runs dsh-fs's ``read_image`` (its gates, caps and magic-byte
  check; the observation) and answers ``{"content": <base64>, "encoding": "base64"}``:
  deepagents' ``read_file`` then hands the model an ``image`` content block (its own
  multimodal path; ``offset``/``limit`` do not apply to images, as its description says).
  Without it such a file is read as text and refused as binary;
* ``read`` of a Jupyter notebook (default profile, DEVIATIONS F1) slices its cell view
  (``notebook.view``: sources, outputs as text, one line per image) instead of its JSON text;
  with ``read_pdf`` loaded (``pdfs=True``, docs/PDF.md), ``read`` of a ``.pdf`` path answers
  ``read_pdf``'s text of its first pages (``offset``/``limit`` do not apply);
* ``ls``, ``glob`` and ``grep`` list and walk through the provider (containment; symlinks are
  never followed) with deepagents' matching rules (its ``compile_grep_include_glob``, literal
  grep), capped at ``max_results`` entries or matches (``truncated=True`` past it); ``ls`` keeps
  the first ``max_ls_entries`` children by name, read in batches in the context's listing
  places (DEVIATIONS L5, as dsh-fs's ``list``).

``upload_files``, ``download_files`` and ``delete`` are not offered (deepagents' tools do not
need them). Every sync method runs on the backend's own event loop (``BlockingRunner``); the
async ones on the caller's. deepagents is imported by this module only.
"""

from __future__ import annotations

import contextvars
import datetime
import os
import posixpath
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import anyio
from deepagents.backends.protocol import (
    BackendProtocol,
    EditResult,
    FileInfo,
    GlobResult,
    GrepMatch,
    GrepResult,
    LsResult,
    ReadResult,
    WriteResult,
)
from deepagents.backends.utils import (
    InvalidGlobPatternError,
    compile_grep_include_glob,
    normalize_read_bounds,
    slice_read_response,
)

from ..core.session import Session, ToolExecution
from ..core.tools import ToolRegistry
from ..fs.errors import FsError, not_found, not_regular_file
from ..fs.events import FS_OBSERVED
from ..fs.media import extension_of, image_media_type_for_path
from ..tool_common.switches import ToolSwitches
from ..tool_fs.listing import held, scan
from ..tool_fs.stale_changes import saw
from ..notebook import NotNotebook, is_notebook_path, parse, render
from ..fs.types import DirEntry, Target, WalkEntry
from .blocking import BlockingRunner
from .calls import registry_of
from .langchain import checkpoint_name, graph_point

__all__ = ("DshFsBackend",)

T = TypeVar("T")
_UNSET = object()

READ_WHOLE_MAX_BYTES = 8 * 1024 * 1024
"""files up to this size are read whole and sliced by deepagents' own helper; larger ones
are streamed and only the requested window is kept"""
WINDOW_MAX_CHARS = 1024 * 1024
"""the most text one streamed read window keeps (a longer line is clipped there)"""
MAX_RESULTS = 1000
"""the most ``glob`` entries or ``grep`` matches one call returns"""
LS_MAX_ENTRIES = 20_000
"""the most entries one ``ls`` returns (the first by name): more than deepagents' ``ls`` tool can
show (its output budget, ``TOOL_RESULT_TOKEN_LIMIT`` × 4 characters, holds at most 13,333
paths), so a cut listing always ends in deepagents' own ``results truncated`` note, and a
directory of any size costs about this many entries of memory (DEVIATIONS L5)"""


def _cell_view(text: str) -> str:
    """A notebook's cell view (DEVIATIONS F1), or ``text`` itself when it is not a notebook."""
    try:
        return render(parse(text)).text
    except NotNotebook:
        return text


class DshFsBackend(BackendProtocol):
    """deepagents' ``BackendProtocol`` over a dsh-fs context, for one agent.

    :param ctx: a ``Context`` with the file tools loaded (``dsh_fs.create_context(...)``:
        provider, policy, ``read``/``write``/``edit``)
    :param session: the agent session (observation owner, cwd: the default directory of
        ``ls``/``glob``/``grep``); default a new ``Session(cwd=cwd)``
    :param cwd: the default session's cwd; default the provider's (``create_context``: the root)
    :param max_results: cap of ``glob`` entries and ``grep`` matches per call
    :param max_ls_entries: cap of ``ls`` entries per call (``LS_MAX_ENTRIES``)
    :param read_whole_max_bytes: files up to this size are read whole (see the module doc)
    :param virtual_mode: ``/`` is the project (deepagents' ``virtual_mode``; see the module
        doc); ``False``: the provider's own paths
    :param root: the project directory ``/`` stands for in virtual mode; default the
        context's first root, else ``cwd``, else the provider's cwd
    :raises TypeError: ``ctx`` has no tool registry
    :raises ValueError: ``max_results``, ``max_ls_entries`` or ``read_whole_max_bytes`` below 1
    """

    def __init__(self, ctx: Any, *, session: Session | None = None, cwd: str | None = None,
                 max_results: int = MAX_RESULTS, read_whole_max_bytes: int = READ_WHOLE_MAX_BYTES,
                 virtual_mode: bool = True, root: str | None = None, max_ls_entries: int = LS_MAX_ENTRIES) -> None:
        if max_results < 1 or read_whole_max_bytes < 1 or max_ls_entries < 1:
            raise ValueError("max_results, max_ls_entries and read_whole_max_bytes must be at least 1")
        self.ctx = ctx
        self.registry: ToolRegistry = registry_of(ctx)
        self.virtual_mode = virtual_mode
        self.root: str | None = None
        """in virtual mode, the host directory ``/`` stands for"""
        if virtual_mode:
            roots = ctx.fs.workspace_roots() if hasattr(ctx.fs, "workspace_roots") else ()
            found = root or (roots[0] if roots else None) or cwd or getattr(ctx.fs, "cwd", None) or os.getcwd()
            self.root = posixpath.normpath(os.path.abspath(found)) if not found.startswith("/") else posixpath.normpath(found)
            cwd = cwd or self.root
        self.session = session if session is not None else Session(cwd=cwd)
        self.max_results = max_results
        self.max_ls_entries = max_ls_entries
        self.read_whole_max_bytes = read_whole_max_bytes
        self._runner = BlockingRunner("dsh-fs deepagents")
        self._hooks: list[Callable[[str | None], Awaitable[None]]] = []
        self._point: contextvars.ContextVar[object] = contextvars.ContextVar("dsh_fs_graph_point", default=_UNSET)

    # -- plumbing ---------------------------------------------------------------------------
    @property
    def _fs(self) -> Any:
        return self.ctx.fs

    def _execution(self) -> ToolExecution:
        return ToolExecution(session=self.session)

    async def _resolve(self, path: str | None) -> Target:
        where = self._host(path) if path is not None else (self.session.cwd or ".")
        return await self._fs.resolve(where, cwd=self.session.cwd)

    def _host(self, path: str) -> str:
        """The provider's path of the model's ``path``: in virtual mode ``/x`` (or ``x``) is
        ``<root>/x`` (a path already below ``<root>`` is kept); otherwise ``path`` itself."""
        root = self.root
        if root is None or path == root or path.startswith(root + "/"):
            return path  # a host path inside the project (one the user gave) is taken as it is
        return posixpath.normpath(root + "/" + path.lstrip("/")) if path.strip("/") else root

    def _shown(self, display: str) -> str:
        """The path the model is shown for the provider's ``display`` path (virtual mode:
        ``<root>/x`` → ``/x``, ``<root>`` → ``/``)."""
        root = self.root
        if root is None:
            return display
        if display == root:
            return "/"
        return display[len(root):] if display.startswith(root + "/") else display

    def _said(self, text: str) -> str:
        """An error text as the model is shown it: in virtual mode the quoted paths below the
        root written as virtual paths (``"<root>/a.txt"`` → ``"/a.txt"``)."""
        root = self.root
        if root is None:
            return text
        return text.replace(f'"{root}/', '"/').replace(f'"{root}"', '"/"').replace(f"'{root}/", "'/")

    def close(self) -> None:
        """Stop the event loop the sync methods run on (a later sync call starts a new one)."""
        self._runner.close()

    # -- read -------------------------------------------------------------------------------
    async def aread(self, file_path: str, offset: int = 0, limit: int = 2000) -> ReadResult:
        """Read a window of a UTF-8 file and record the observation (dsh-fs ``read``'s rule).

        ``offset`` is 0-based, ``limit`` in lines (deepagents' contract); a non-positive
        ``limit`` inspects nothing. Errors: dsh-fs's messages (not found, not a regular file,
        not text, outside the workspace …). An image path with ``read_image`` loaded: see the
        module doc (its refusals without their ``Error: `` prefix, which deepagents adds)."""
        if self.registry.get("read_image") is not None and image_media_type_for_path(file_path) is not None:
            return await self._read_image(file_path)
        if self.registry.get("read_pdf") is not None and extension_of(file_path).lower() == ".pdf":
            return await self._read_pdf(file_path)
        try:
            target = await self._resolve(file_path)
            info = await self._fs.stat(target)
            if info is None:
                raise not_found("read", target.display_path)
            if info.type != "file":
                raise not_regular_file("read", target.display_path)
            if info.size is not None and info.size <= self.read_whole_max_bytes:
                text = await self._fs.read_text(target)
                if is_notebook_path(target.display_path) and ToolSwitches.of(self.ctx.profile).notebook_cells:
                    text = _cell_view(text)  # F1
                elif offset <= 0 and len(text.splitlines()) <= limit:  # shown whole: D30's seen text
                    saw(self.ctx, target, info.version, text, self._execution())
                result = slice_read_response({"content": text, "encoding": "utf-8"}, offset, limit)
            else:
                result = await self._streamed_window(target, offset, limit)
        except FsError as err:
            return ReadResult(error=self._said(str(err)))
        if result.error is None and not result.no_lines_requested:
            self.ctx.emit(FS_OBSERVED, target, info.version, self._execution())
        return result

    async def _read_image(self, file_path: str) -> ReadResult:
        """dsh-fs ``read_image`` through the registry with the backend's session; its image
        block's base64 as deepagents' binary ``FileData``."""
        result = await self.registry.execute("read_image", {"file_path": self._host(file_path)}, session=self.session)
        if result.is_error or not result.images:
            return ReadResult(error=self._said(result.text.removeprefix("Error: ")))
        return ReadResult(file_data={"content": result.images[0]["data"], "encoding": "base64"})

    async def _read_pdf(self, file_path: str) -> ReadResult:
        """dsh-fs ``read_pdf`` through the registry with the backend's session: its text (the first
        pages, with the footer that says how to go on) as deepagents' text ``FileData``; in
        virtual mode its ``<path>`` line and error texts name the file by its virtual path."""
        result = await self.registry.execute("read_pdf", {"file_path": self._host(file_path)}, session=self.session)
        if result.is_error:
            return ReadResult(error=self._said(result.text.removeprefix("Error: ")))
        text = result.text
        if text.startswith("<path>"):  # the <path> line names the file as the model names it
            head, sep, rest = text.partition("</path>")
            text = "<path>" + self._shown(head.removeprefix("<path>")) + sep + rest
        return ReadResult(file_data={"content": text, "encoding": "utf-8"})

    async def _streamed_window(self, target: Target, offset: int, limit: int) -> ReadResult:
        """The window of a large file, keeping only its lines (at most ``WINDOW_MAX_CHARS``)."""
        offset, limit = normalize_read_bounds(offset, limit)
        if limit == 0:
            return ReadResult(file_data={"content": "", "encoding": "utf-8"}, no_lines_requested=True)
        kept: list[str] = []
        size = 0
        index = 0
        more = False
        async for line in _lines(self._fs.stream_text(target), WINDOW_MAX_CHARS):
            if index < offset:
                index += 1
                continue
            if len(kept) == limit or size >= WINDOW_MAX_CHARS:
                more = True
                break
            piece = line[: WINDOW_MAX_CHARS - size]
            kept.append(piece)
            size += len(piece)
            index += 1
        if not kept:
            return ReadResult(error=f"Line offset {offset} exceeds file length ({index} lines)")
        content = "".join(kept).replace("\r\n", "\n").replace("\r", "\n")
        end = offset + len(kept)
        return ReadResult(file_data={"content": content, "encoding": "utf-8"}, start_line=offset + 1, end_line=end,
                          next_offset=end if more else None, total_lines=None if more else end)

    def read(self, file_path: str, offset: int = 0, limit: int = 2000) -> ReadResult:
        """Sync ``aread``."""
        return self._runner.run(self.aread, file_path, offset, limit)

    # -- write / edit: dsh-fs's own tools ----------------------------------------------------
    async def awrite(self, file_path: str, content: str) -> WriteResult:
        """dsh-fs ``write`` (§4.7 under the observation policy): create a new file, or replace
        one this agent has read and that has not changed since. ``error`` is the tool's exact
        ``Error: …`` text."""
        await self._before_call()
        result = await self.registry.execute("write", {"file_path": self._host(file_path), "content": content},
                                             session=self.session)
        if result.is_error:
            return WriteResult(error=self._said(result.text))
        return WriteResult(path=await self._display(file_path))

    def write(self, file_path: str, content: str) -> WriteResult:
        """Sync ``awrite``."""
        return self._runner.run(self._at(graph_point(), self.awrite), file_path, content)

    async def aedit(self, file_path: str, old_string: str, new_string: str,
                    replace_all: bool = False) -> EditResult:  # noqa: FBT001, FBT002 (the protocol's signature)
        """dsh-fs ``edit`` (§4.8 under the observation policy): the file must have been read
        through this backend and be unchanged since. ``error`` is the tool's exact text;
        ``occurrences`` is 1, or with ``replace_all`` the occurrences in the text the edit
        started from (counted just before it)."""
        arguments = {"file_path": self._host(file_path), "old_string": old_string, "new_string": new_string,
                     "replace_all": replace_all}
        count = await self._count(file_path, old_string) if replace_all else 1
        await self._before_call()
        result = await self.registry.execute("edit", arguments, session=self.session)
        if result.is_error:
            return EditResult(error=self._said(result.text))
        return EditResult(path=await self._display(file_path), occurrences=count)

    def edit(self, file_path: str, old_string: str, new_string: str,
             replace_all: bool = False) -> EditResult:  # noqa: FBT001, FBT002
        """Sync ``aedit``."""
        return self._runner.run(self._at(graph_point(), self.aedit), file_path, old_string, new_string, replace_all)

    # -- the file history's ties (``adapters.checkpoints.FileCheckpoints``) -------------------
    @property
    def runner(self) -> BlockingRunner:
        """The event loop the sync methods run on."""
        return self._runner

    @property
    def call_hooks(self) -> list[Callable[[str | None], Awaitable[None]]]:
        """Awaited before each ``write``/``edit`` with the name of the LangGraph checkpoint the
        call starts from (``langchain.graph_point``), or ``None``; ``FileCheckpoints`` adds its
        mark here."""
        return self._hooks

    @staticmethod
    def checkpoint_name(config: Any) -> str:
        """The dsh-fs checkpoint name of a LangGraph config (``langchain.checkpoint_name``)."""
        return checkpoint_name(config)

    async def _before_call(self) -> None:
        point = self._point.get()
        if point is _UNSET:  # an async call: LangChain's config is this task's
            point = graph_point() if self._hooks else None
        for hook in self._hooks:
            await hook(point)  # type: ignore[arg-type]

    def _at(self, point: str | None, method: Callable[..., Awaitable[T]]) -> Callable[..., Awaitable[T]]:
        """``method`` run with ``point`` as the graph point of a sync call (read in the caller's
        thread, where LangChain set the call's config)."""

        async def run(*args: Any) -> T:
            token = self._point.set(point)
            try:
                return await method(*args)
            finally:
                self._point.reset(token)

        return run

    async def _count(self, file_path: str, old_string: str) -> int | None:
        """Occurrences of ``old_string`` in the file (line endings as the edit matches them);
        ``None`` when the file cannot be read whole (the edit reports why, or succeeds on a
        file too large to count)."""
        try:
            target = await self._resolve(file_path)
            info = await self._fs.stat(target)
            if info is None or info.size is None or info.size > self.read_whole_max_bytes:
                return None
            text = await self._fs.read_text(target)
        except FsError:
            return None
        needle = old_string.replace("\r\n", "\n")
        return await anyio.to_thread.run_sync(lambda: text.replace("\r\n", "\n").count(needle) if needle else 0)

    async def _display(self, file_path: str) -> str:
        try:
            return self._shown((await self._resolve(file_path)).display_path)
        except FsError:
            return file_path

    # -- ls / glob / grep -------------------------------------------------------------------
    async def als(self, path: str) -> LsResult:
        """The directory's direct children (``path``, ``is_dir``, ``size``) in name order, the
        first ``max_ls_entries`` of them, through the provider; errors are dsh-fs's messages.

        Bounded as dsh-fs's ``list`` is (DEVIATIONS L5): the children are read in batches
        (``FileSystem.iter_dir``) and only the first ``max_ls_entries`` by name are kept, in
        the context's listing places (``tool_fs.listing``: 4 at once, 2 per session)."""
        limit = self.max_ls_entries
        kept: list[tuple[str, str, bool, int | None]] = []

        def take(batch: list[DirEntry]) -> None:
            kept.extend((e.name, e.target.display_path, e.type == "directory", e.size) for e in batch)
            if len(kept) > 2 * limit:
                kept.sort()
                del kept[limit:]

        try:
            target = await self._resolve(path)
            async with held(self.ctx, self._execution()):
                await scan(self._fs, target, take, signal=None)
        except FsError as err:
            return LsResult(error=self._said(str(err)))
        kept.sort()
        infos: list[FileInfo] = []
        for _name, display, is_dir, size in kept[:limit]:
            info: FileInfo = {"path": self._shown(display), "is_dir": is_dir}
            if size is not None:
                info["size"] = size
            infos.append(info)
        return LsResult(entries=infos)

    def ls(self, path: str) -> LsResult:
        """Sync ``als``."""
        return self._runner.run(self.als, path)

    async def aglob(self, pattern: str, path: str | None = None) -> GlobResult:
        """Regular files below ``path`` (default: the session's cwd) whose path relative to it
        matches ``pattern`` by deepagents' rules; at most ``max_results`` (then
        ``truncated``, reason ``budget``)."""
        try:
            matcher = compile_grep_include_glob(pattern)
        except InvalidGlobPatternError as err:
            return GlobResult(error=str(err))
        matches: list[FileInfo] = []
        try:
            async for entry in self._files(path):
                if not matcher(entry.rel):
                    continue
                if len(matches) == self.max_results:
                    return GlobResult(matches=matches, truncated=True, truncation_reason="budget")
                info: FileInfo = {"path": self._shown(entry.target.display_path), "is_dir": False}
                if entry.size is not None:
                    info["size"] = entry.size
                if entry.mtime_ns is not None:
                    info["modified_at"] = _iso(entry.mtime_ns)
                matches.append(info)
        except FsError as err:
            return GlobResult(error=self._said(str(err)))
        return GlobResult(matches=matches)

    def glob(self, pattern: str, path: str | None = None) -> GlobResult:
        """Sync ``aglob``."""
        return self._runner.run(self.aglob, pattern, path)

    async def agrep(self, pattern: str, path: str | None = None, glob: str | None = None, *,
                    max_count: int | None = None) -> GrepResult:
        """Lines containing ``pattern`` literally in the UTF-8 files below ``path`` (default:
        the session's cwd) that ``glob`` selects; files that are not text are skipped. At
        most ``max_count`` (default and ceiling: ``max_results``) matches, then ``truncated``."""
        cap = self.max_results if max_count is None else min(max_count, self.max_results)
        try:
            matcher = compile_grep_include_glob(glob) if glob else None
        except InvalidGlobPatternError as err:
            return GrepResult(error=str(err))
        matches: list[GrepMatch] = []
        try:
            async for entry in self._files(path):
                if matcher is not None and not matcher(entry.rel):
                    continue
                number = 0
                try:
                    async for line in _lines(self._fs.stream_text(entry.target), WINDOW_MAX_CHARS):
                        number += 1
                        if pattern in line:
                            if len(matches) >= cap:
                                return GrepResult(matches=matches, truncated=True)
                            matches.append({"path": self._shown(entry.target.display_path), "line": number,
                                            "text": line.rstrip("\r\n")})
                except FsError:
                    continue  # not text, vanished, unreadable: not searched
        except FsError as err:
            return GrepResult(error=self._said(str(err)))
        return GrepResult(matches=matches)

    def grep(self, pattern: str, path: str | None = None, glob: str | None = None, *,
             max_count: int | None = None) -> GrepResult:
        """Sync ``agrep``."""
        return self._runner.run(lambda: self.agrep(pattern, path, glob, max_count=max_count))

    async def _files(self, path: str | None) -> AsyncIterator[WalkEntry]:
        target = await self._resolve(path)
        info = await self._fs.stat(target)
        if info is None:
            raise not_found("list", target.display_path)
        if info.type == "file":  # a file named as the search root: itself
            name = target.display_path.rsplit("/", 1)[-1]
            yield WalkEntry(rel=name, type="file", target=target, size=info.size)
            return
        async for entry in self._fs.walk(target):
            if entry.type == "file":
                yield entry


async def _lines(chunks: AsyncIterator[str], max_chars: int) -> AsyncIterator[str]:
    """The lines of streamed text, each with its ending, split where
    ``str.splitlines(keepends=True)`` splits; a line longer than ``max_chars`` is clipped
    there (the rest of it is dropped, so memory stays bounded and line numbers stay right)."""
    pending = ""
    clipped = False  # inside an overlong line whose head was already yielded
    async for chunk in chunks:
        pending += chunk
        lines = pending.splitlines(keepends=True)
        # the last piece may be incomplete (or a "\r" whose "\n" is in the next chunk)
        pending = lines.pop() if lines else ""
        for line in lines:
            if clipped:
                clipped = False  # the end of the overlong line
                continue
            yield line[:max_chars]
        if len(pending) > max_chars:
            if not clipped:
                yield pending[:max_chars]
                clipped = True
            pending = pending[-1:]  # keep a trailing "\r" so "\r\n" still ends the line once
    if pending and not clipped:
        yield pending


def _iso(mtime_ns: int) -> str:
    return datetime.datetime.fromtimestamp(mtime_ns / 1e9, tz=datetime.timezone.utc).isoformat()
