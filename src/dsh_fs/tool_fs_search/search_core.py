"""What ``glob`` and ``grep`` share (REFERENCE-SPEC §6; DEVIATIONS S1–S12), as the reference's
search-core.ts: ``SearchCore``, which the two tools (``glob.GlobSearch``, ``grep.GrepSearch``)
extend.

One call: check the arguments → resolve the working directory and ``path`` through the
provider (containment) → pick the ``Space`` (host directory, mirror, or spill artifact) →
run ripgrep, streaming its output into a page (the first ``globMaxResults`` /
``grepMaxMatches`` results) and, once the result outgrows the page, into a spill writer →
the model-facing text. The whole call runs under the call's time budget (``timeoutMs``) and
abort signal: either ends it with ``SEARCH_ABORTED`` and the ripgrep process group killed.

A capped result names the saved complete list (``spill_store``, if loaded and the call has
a session); it is never an error when it cannot be saved (§6.1).
"""

from __future__ import annotations

import functools
import os
import posixpath
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio

from ..core.context import Context
from ..core.errors import ToolInputError
from ..core.jsonvalue import well_formed
from ..core.session import ToolExecution
from ..core.signal import run_under_signal
from ..fs.errors import FsError, FsErrorCode
from ..fs.filesystem import FileSystem
from ..fs.path_rules import RuleView
from ..fs.search_host import FollowLinks, HostSearch, Results
from ..tool_common.switches import ToolSwitches
from ..fs.types import Info, Target
from ..spill.store import SpillRequest, SpillStore, SpillWriter
from . import errors
from .config import ToolFsSearchConfig
from .denied import HostRules, deny_globs, denied_below, nothing_searched, process_relative
from .engine import INSTALL_HINT, Run, find_ripgrep, run_ripgrep
from .limiter import RG_MEMORY_FLAGS, SearchSlots
from .followed import run_followed
from .links import LinkFilter, walk_notices_only
from .linkwalk import DirCache
from .mirror import Mirror
from .workdir import Space

__all__ = ("SearchCore", "SpillSink")

T = TypeVar("T")


def _containment_root(fs: FileSystem, host: str) -> str | None:
    """The containment root a search of the host path ``host`` stays in (S8): of a provider
    with several roots (DEVIATIONS D28), the one whose real path holds ``host``; else the
    provider's one ``root`` (``None``: no containment)."""
    for root in fs.workspace_roots():
        real = os.path.realpath(root)
        if host == real or host.startswith(real.rstrip("/") + "/"):
            return root
    return getattr(fs, "root", None)

def _display_root(fs: FileSystem, display: str) -> str | None:
    """The containment root (display path) holding ``display`` (S8 on a search host, D28: the
    root a search stays in); ``None`` without containment."""
    for root in fs.workspace_roots():
        if display == root or display.startswith(root.rstrip("/") + "/"):
            return root
    return None


class SpillSink:
    """Receives the complete formatted result piece by piece (a piece holds one result, or
    ``count`` results joined: ``output.Sink``); holds the pieces of the first ``limit``
    results in memory (and the piece that brings the count past it) and opens a spill writer
    only when a result beyond the page arrives (an uncapped result never makes a file)."""

    def __init__(self, limit: int, opener: Callable[[], SpillWriter | None]) -> None:
        self.limit = limit
        self.opener = opener
        self.count = 0
        self.pending: list[str] | None = []
        self.writer: SpillWriter | None = None
        self.failed = False

    def __call__(self, piece: str, count: int = 1, /) -> None:
        self.count += count
        if self.pending is not None:
            self.pending.append(piece)
            if self.count <= self.limit:
                return
            pieces, self.pending = self.pending, None
            try:
                self.writer = self.opener()
            except OSError:
                self.failed = True
            if self.writer is None:
                self.failed = True
                return
            self._write("".join(pieces))
        elif self.writer is not None and not self.failed:
            self._write(piece)

    def _write(self, text: str) -> None:
        assert self.writer is not None
        try:
            self.writer.write(text)
        except OSError:
            self.failed = True

    async def finish(self, *, keep: bool, head: str = "") -> Any:
        """Commit (``keep``) or drop what was written; the ``SpillRef``, or ``None``."""
        writer, self.writer = self.writer, None
        if writer is None:
            return None
        if not keep or self.failed:
            await writer.discard()
            return None
        try:
            return await writer.commit(head=head)
        except OSError:
            return None


class SearchCore:
    """One context and configuration, and what every search call of it shares: the D23 slots,
    the S8 directory cache, the call's bounds, where ripgrep runs (``_space``), the runs
    themselves and how a finished run fails."""

    def __init__(self, ctx: Context, config: ToolFsSearchConfig, *, rg_path: str | None = None) -> None:
        self.ctx = ctx
        self.config = config
        self.switches = ToolSwitches.of(config.profile)
        self.rg_path = rg_path
        self.slots = SearchSlots()
        self.dirs = DirCache()
        """S8: the directories the looks for links out have read (``linkwalk``)"""

    def _program(self, tool: str) -> str:
        program = self.rg_path if self.rg_path is not None else find_ripgrep()
        if not program:
            raise errors.missing_ripgrep(tool, INSTALL_HINT, search_texts=self.switches.search_texts)
        return program

    def _value(self, tool: str, name: str, value: str | None) -> str | None:
        """A model value as it can go into an argument vector: lone surrogates become U+FFFD
        (as the reference's UTF-8 encoding does). A NUL cannot be passed at all: the reference
        fails to start its command; the default profile says which argument (a ``path`` with a
        NUL gets the provider's ``FS_PERMISSION_DENIED``, as for ``read``)."""
        if value is None:
            return None
        if "\0" in value and not (self.switches.odd_names and name == "path"):  # a path: the provider refuses it
            if self.switches.odd_names:
                raise ToolInputError(f"{name} must not contain a NUL character")
            raise errors.could_not_start(tool, None, search_texts=False)
        return well_formed(value)

    async def _bounded(self, tool: str, execution: ToolExecution, work: Callable[[], Awaitable[T]]) -> T:
        """Run ``work`` under the call's abort signal and ``timeoutMs``; either ends it with
        ``SEARCH_ABORTED`` (a provider's ``FS_ABORTED`` too)."""
        owner = execution.session.id if execution.session is not None else None

        async def held() -> T:
            async with self.slots.hold(owner, tool):  # D23: waiting counts against the time budget
                return await work()

        outcome = await run_under_signal(held, signal=execution.signal, timeout=self.config.timeout_ms / 1000)
        if outcome.timed_out:
            raise errors.timed_out(tool, self.config.timeout_ms, search_texts=self.switches.search_texts)
        exc = outcome.error
        if exc is not None:
            if isinstance(exc, FsError) and exc.code == FsErrorCode.ABORTED.value:
                raise errors.aborted(tool) from exc
            raise exc
        if not outcome.returned:
            raise errors.aborted(tool)
        return outcome.value  # type: ignore[return-value]

    def _spill_opener(self, tool: str, execution: ToolExecution, name: str) -> Callable[[], SpillWriter | None]:
        def open_writer() -> SpillWriter | None:
            store: SpillStore | None = self.ctx.spill_store if self.ctx.has("spill_store") else None
            if store is None or execution.session is None:
                return None
            return store.open_writer(SpillRequest(
                session_id=execution.session.id, tool_name=tool, call_id=execution.call_id, suggested_name=name,
            ))

        return open_writer

    async def _space(self, tool: str, path: str | None, execution: ToolExecution) -> Space:
        """Resolve the working directory and ``path`` and prepare where ripgrep runs.

        :raises FsError: containment (FS_PERMISSION_DENIED), a NUL in ``path``; default
            profile (S5): a missing ``path``, ``glob`` on a file; both profiles: a special file
        """
        signal = execution.signal
        if tool == "grep" and path is not None and self.ctx.has("spill_store") and execution.session is not None:
            reader = self.ctx.spill_store.reader(path, session_id=execution.session.id)
            if reader is not None:
                artifact = await reader.resolve(path, signal=signal)
                host = reader.host_path(artifact)
                if host is not None:
                    return Space(cwd=posixpath.dirname(host), path_arg=host, workdir=None)
        fs: FileSystem = self.ctx.fs
        here = await fs.resolve(".", cwd=execution.cwd, signal=signal)
        target = await fs.resolve(path, cwd=execution.cwd, signal=signal) if path is not None else None
        info = await self._check_target(tool, fs, target, signal)
        host = fs.host_path(target or here)
        if host is not None:
            root = _containment_root(fs, host)
            links = LinkFilter(here.display_path, root,
                               check_files=tool == "grep") if self.switches.follow_links else None
            space = Space(cwd=here.display_path, path_arg=path, workdir=here.display_path, links=links)
            view = await fs.path_rules(signal=signal)
            if view is not None and view.rules.denies:  # P4
                await self._apply_rules(space, view, info, root)
            return space
        far = fs.search_host()
        if far is not None and not await self._rules_deny(fs, signal) and await far.available(self._program(tool)):
            # ripgrep runs where the files are (C4); under deny rules the mirror reads through them (P4)
            root = _display_root(fs, (target or here).display_path) if self.switches.follow_links else None
            return Space(cwd=here.display_path, path_arg=path, workdir=here.display_path, far=far, far_root=root,
                         rejected=set() if root is not None else None)
        return await self._mirror_space(tool, fs, here, target, info, path, execution)

    @staticmethod
    async def _rules_deny(fs: FileSystem, signal: Any) -> bool:
        """Do path rules deny anything here (P4)? A search host is then not used: the mirror
        reads the files through the rules."""
        view = await fs.path_rules(signal=signal)
        return view is not None and bool(view.rules.denies)

    async def _apply_rules(self, space: Space, view: RuleView, info: Info | None, root: str | None) -> None:
        """P4: the path rules on a host search: the filter of printed paths, and ripgrep's
        excludes for the denied entries below the searched directory (``denied.denied_below``,
        in a worker thread, given up with the search). A searched path through a process's own
        name (``/proc/self/cwd``: ripgrep's working directory to ripgrep) is given to ripgrep as
        the real path the provider resolved it to here (``denied.process_relative``)."""
        rules = space.rules = HostRules(view, space.cwd)
        if space.path_arg is not None:
            spelled = space.host(space.path_arg)
            if await anyio.to_thread.run_sync(process_relative, spelled):
                space.path_arg = await anyio.to_thread.run_sync(os.path.realpath, spelled)
        if info is not None and info.type != "directory":
            return  # one named file, which resolve judged
        top = space.host(space.path_arg) if space.path_arg is not None else space.cwd
        gave_up = threading.Event()
        try:
            found = await anyio.to_thread.run_sync(
                functools.partial(denied_below, top, rules, follow=self.switches.follow_links, root=root,
                                  stopped=gave_up.is_set),
                abandon_on_cancel=True)
        finally:
            gave_up.set()
        space.excludes = tuple(deny_globs(found, space.cwd, space.path_arg))

    async def _check_target(self, tool: str, fs: FileSystem, target: Target | None, signal: Any) -> Info | None:
        if target is None:
            return None
        info = await fs.stat(target, signal=signal)
        shown = target.display_path
        if info is not None and info.type == "other":  # a FIFO, device or socket: ripgrep would block on it
            raise errors.unsearchable(shown, FsErrorCode.NOT_REGULAR_FILE)
        if self.switches.target_errors and info is None:
            raise errors.unsearchable(shown, FsErrorCode.NOT_FOUND)
        if self.switches.target_errors and tool == "glob" and info is not None and info.type == "file":
            raise errors.unsearchable(shown, FsErrorCode.NOT_DIRECTORY)
        return info

    async def _mirror_space(self, tool: str, fs: FileSystem, here: Target, target: Target | None,
                            info: Info | None, path: str | None, execution: ToolExecution) -> Space:
        signal = execution.signal
        here_info = await fs.stat(here, signal=signal)
        if here_info is None or here_info.type != "directory":
            raise errors.could_not_start(tool, f'the working directory "{here.display_path}" is not a directory',
                                         search_texts=self.switches.search_texts)
        mirror = Mirror(fs, signal=signal)
        try:
            await mirror.add_directory(here.display_path)
            searched, searched_info = (target, info) if target is not None else (here, here_info)
            if searched_info is not None:
                await mirror.add_tree(searched, searched_info, contents=tool == "grep", newest_first=self.switches.newest_first)
                if tool == "grep":
                    await mirror.add_ancestor_rules(searched.display_path)
        except BaseException:
            await mirror.close()
            raise
        arg = path
        if path is not None and path.startswith("/"):
            arg = mirror.root + path
        return Space(cwd=mirror.host(here.display_path), path_arg=arg, workdir=here.display_path, mirror=mirror)

    async def _rg(self, tool: str, program: str, argv: list[str], space: Space,
                  on_line: Callable[[bytes], None] | None, budget: int, *, separator: bytes = b"\n",
                  shown: Callable[[], int] = lambda: 0, on_debug: Callable[[str], None] | None = None,
                  on_lines: Callable[[list[bytes]], None] | None = None, results: Results = "none") -> Run:
        """One ripgrep run, its output handed to ``on_line`` line by line or to ``on_lines``
        a pipe read's lines at a time (``engine.run_ripgrep``; give one). Past ``budget`` bytes
        of output, the reference profile lets ripgrep
        finish (its output dropped) so that an error exit wins over the output size (§6.3's
        order); the default profile does so only while nothing is on the page (``shown()``
        results), else stops it at once to show the first page (S4)."""
        def drain_past_cap() -> bool:
            return not self.switches.first_page_on_overflow or shown() == 0

        if space.far is not None:
            return await self._far_rg(tool, [*RG_MEMORY_FLAGS, *argv], space, on_line, on_lines, budget,
                                      separator=separator, on_debug=on_debug, results=results, follow=None)
        if space.excludes:  # P4: before the path arguments
            cut = argv.index("--") if "--" in argv else len(argv)
            argv = [*argv[:cut], *space.excludes, *argv[cut:]]
        try:
            return await run_ripgrep(program, [*RG_MEMORY_FLAGS, *argv], cwd=space.cwd, on_line=on_line,
                                     on_lines=on_lines, raw_cap=budget, separator=separator,
                                     drain_past_cap=drain_past_cap, on_debug=on_debug)
        except OSError as exc:
            reason = f'{exc.strerror or exc} (working directory "{space.workdir or space.cwd}")'
            raise errors.could_not_start(tool, reason, search_texts=self.switches.search_texts) from exc

    async def _far_rg(self, tool: str, argv: list[str], space: Space, on_line: Callable[[bytes], None] | None,
                      on_lines: Callable[[list[bytes]], None] | None, budget: int, *, separator: bytes,
                      on_debug: Callable[[str], None] | None, results: Results, follow: FollowLinks | None) -> Run:
        """One ripgrep run on the search host (``space.far``, DEVIATIONS C4): the host runs it
        (and, with ``follow``, looks for links out and admits what it prints, S8, as
        ``_rg_followed`` does here) and its lines come back in order."""
        assert space.far is not None
        request = HostSearch(argv=tuple(argv), cwd=space.cwd, raw_cap=budget, separator=separator,
                             first_page_on_overflow=self.switches.first_page_on_overflow, results=results,
                             follow=follow, bytes_paths=self.switches.odd_names, debug=on_debug is not None)

        def each(lines: list[bytes]) -> None:
            assert on_line is not None
            for line in lines:
                on_line(line)

        try:
            fields = await space.far.search(request, on_lines=on_lines if on_lines is not None else each,
                                            on_debug=on_debug,
                                            on_rejected=space.rejected.update if space.rejected is not None else None)
        except OSError as exc:
            reason = f'{exc.strerror or exc} (working directory "{space.workdir or space.cwd}")'
            raise errors.could_not_start(tool, reason, search_texts=self.switches.search_texts) from exc
        return Run(**fields)

    async def _rg_followed(self, tool: str, program: str, argv: list[str], space: Space,
                           on_line: Callable[[bytes], None] | None, budget: int, *, separator: bytes = b"\n",
                           shown: Callable[[], int] = lambda: 0, on_debug: Callable[[str], None] | None = None,
                           on_lines: Callable[[list[bytes]], None] | None = None, results: Results = "none") -> Run:
        """``_rg`` (``on_line`` or ``on_lines``, as there) with symlinks followed under a containment
        root (S8): ``followed.run_followed`` (ripgrep beside the look for links out of the root,
        run again without them when there are some); on a search host the host does the same."""
        top = space.host(space.path_arg) if space.path_arg is not None else space.cwd
        if space.far is not None:
            follow = FollowLinks(root=space.far_root, top=top, check_files=tool == "grep") \
                if space.far_root is not None else None
            return await self._far_rg(tool, [*RG_MEMORY_FLAGS, *argv], space, on_line, on_lines, budget,
                                      separator=separator, on_debug=on_debug, results=results, follow=follow)
        links = space.links
        if links is None or links.root is None:
            return await self._rg(tool, program, argv, space, on_line, budget, separator=separator, shown=shown,
                                  on_debug=on_debug, on_lines=on_lines)

        def per_line(lines: list[bytes]) -> None:
            assert on_line is not None
            for line in lines:
                on_line(line)

        async def run(args: list[str], *, shown: Callable[[], int], on_lines: Callable[[list[bytes]], None],
                      on_debug: Callable[[str], None] | None) -> Run:
            return await self._rg(tool, program, args, space, None, budget, separator=separator, shown=shown,
                                  on_debug=on_debug, on_lines=on_lines)

        return await run_followed(run, argv, cwd=space.cwd, top=top, root=links.root, cache=self.dirs,
                                  deliver=on_lines if on_lines is not None else per_line, on_debug=on_debug,
                                  shown=shown)

    def _failure(self, tool: str, run: Run, space: Space) -> errors.SearchError | None:
        """§6.3 classification of a finished run; ``None`` for exit 0/1 or our own stop."""
        if (run.stopped and not run.drained) or run.exit_code in (0, 1):
            return None
        if run.exit_code == 2 and walk_notices_only(run.stderr, loops=self.switches.follow_links,
                                                    vanished=self.switches.vanished_entries_skipped):
            return None  # S8: a symlink loop ripgrep stopped at; S15: an entry not there when reached
        if run.exit_code == 2 and space.excludes and nothing_searched("\n".join(
                line for line in run.stderr.splitlines()
                if not walk_notices_only(line, loops=self.switches.follow_links,
                                         vanished=self.switches.vanished_entries_skipped))):
            return None  # P4: every file was a denied one (walk notices aside); nothing found, nothing said
        if run.exit_code is None:
            return errors.killed(tool, run.signal_name)
        excerpt = errors.stderr_excerpt(space.scrub(run.stderr), run.stderr_truncated)
        refused = errors.multiline_refusal(tool, excerpt) if self.switches.multiline_advice else None
        if refused is not None:
            return refused
        return errors.exit_failure(tool, run.exit_code, excerpt, search_texts=self.switches.search_texts)

    def _overflow(self, tool: str) -> errors.SearchError:
        return errors.overflow(tool, self.config.raw_output_max_bytes,
                               first_page_on_overflow=self.switches.first_page_on_overflow)
