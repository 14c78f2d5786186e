"""The executors of ``glob`` and ``grep`` (REFERENCE-SPEC §6; DEVIATIONS S1–S12).

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
from ..core.tools import ContentBlock, text_block
from ..fs.errors import FsError, FsErrorCode
from ..fs.filesystem import FileSystem
from ..fs.path_rules import RuleView
from ..fs.search_host import FollowLinks, HostSearch, Results
from ..fs.tool_switches import ToolSwitches
from ..fs.types import Info, Target
from ..spill.store import SpillRequest, SpillStore, SpillWriter
from . import errors
from .args import GlobInput, GrepInput, parse_glob_args, parse_grep_args
from .commands import GLOB_VCS_EXCLUDES, glob_argv, grep_argv, grep_files_argv
from .config import ToolFsSearchConfig
from .denied import HostRules, deny_globs, denied_below, nothing_searched, process_relative
from .engine import INSTALL_HINT, Run, find_ripgrep, run_ripgrep
from .limiter import RG_MEMORY_FLAGS, SearchSlots
from .followed import run_followed
from .links import LinkFilter, walk_notices_only
from .linkwalk import DirCache
from .mirror import Mirror
from .anchoring import anchored, from_path, split_absolute
from .near_miss import near_miss_hint
from .output import binary_note, escape_controls, first_submatch, window_line
from .output import GlobPage, GrepPage, format_grep_groups, glob_text, grep_text, parse_match, preview_line
from .skipped import SkippedEntries, hidden_component, skipped_note
from .space import Space

__all__ = ("SearchTools",)

T = TypeVar("T")

_UNSAVED = {
    "glob": "The complete result could not be saved; narrow pattern or path to see more.",
    "grep": "The complete result could not be saved; narrow pattern, path, or include to see more.",
}


_WHOLE = ("--no-ignore", "--hidden", *(f"--glob=!**/{name}" for name in GLOB_VCS_EXCLUDES))
"""S13: the flags that search a skipped ``path`` whole (VCS directories below it still pruned)"""

_COUNT_ROOTS = 2_000
"""S13: skipped entries whose files are counted (beyond: "more than")"""

_COUNT_BYTES = 64 * 1024
"""S13: listing output read to count skipped files (about a thousand names; beyond: "more than")"""


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


class _SpillSink:
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


class SearchTools:
    """The two executors bound to one context and configuration."""

    def __init__(self, ctx: Context, config: ToolFsSearchConfig, *, rg_path: str | None = None) -> None:
        self.ctx = ctx
        self.config = config
        self.switches = ToolSwitches.of(config.profile)
        self.rg_path = rg_path
        self.slots = SearchSlots()
        self.dirs = DirCache()
        """S8: the directories the looks for links out have read (``linkwalk``)"""

    # -- shared ------------------------------------------------------------------------------
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

    # -- glob (§6.1) ---------------------------------------------------------------------------
    async def glob(self, args: dict[str, Any], execution: ToolExecution) -> list[ContentBlock]:
        """Paths matching ``pattern`` below ``path`` (default: the session workspace) by
        modification time: oldest first (reference) or newest first (default profile, S1)."""
        given = parse_glob_args(args)
        given = GlobInput(pattern=self._value("glob", "pattern", given.pattern) or "",
                          path=self._value("glob", "path", given.path))
        program = self._program("glob")
        return await self._bounded("glob", execution, lambda: self._glob(program, given, execution))

    async def _anchor(self, given: GlobInput, execution: ToolExecution) -> tuple[GlobInput, tuple[str, ...]]:
        """S9/S10 (``anchoring``): the pattern and path ripgrep gets, and globs to add.

        :raises FsError: an absolute pattern's directory outside the root (containment)
        """
        fs: FileSystem = self.ctx.fs
        signal = execution.signal
        split = split_absolute(given.pattern) if self.switches.absolute_patterns else None
        if split is not None:
            directory = await fs.resolve(split[0], cwd=execution.cwd, signal=signal)
            here = await fs.resolve(".", cwd=execution.cwd, signal=signal)
            pattern = anchored(directory.display_path, split[1], here.display_path)
            if pattern is not None:
                return GlobInput(pattern=pattern, path=given.path or directory.display_path), ()
        if self.switches.patterns_from_path and given.path is not None:
            here = await fs.resolve(".", cwd=execution.cwd, signal=signal)
            searched = await fs.resolve(given.path, cwd=execution.cwd, signal=signal)
            extra = from_path(given.pattern, searched.display_path, here.display_path)
            if extra is not None:
                return given, (extra,)
        return given, ()

    async def _glob(self, program: str, given: GlobInput, execution: ToolExecution) -> list[ContentBlock]:
        asked = given
        given, also = await self._anchor(given, execution)
        space = await self._space("glob", given.path, execution)
        sink = _SpillSink(self.config.glob_max_results, self._spill_opener("glob", execution, "glob-results.txt"))
        page = GlobPage(self.config.glob_max_results, sink)
        extra = 0  # bytes the reference's UTF-8 decoding would add (U+FFFD for bad bytes)

        def on_lines(lines: list[bytes]) -> None:
            # a pipe read's paths at a time: decoded, filtered (S8), made display paths and paged
            # as lists, so a printed path costs no Python call of its own
            nonlocal extra
            try:
                printed = list(filter(None, map(bytes.decode, lines)))
            except UnicodeDecodeError:
                printed = []
                for line in lines:
                    if line:
                        text = line.decode("utf-8", "replace")
                        extra += len(text.encode("utf-8")) - len(line)
                        printed.append(text)
            page.extend(space.shown_many(space.admit_many(printed)))

        try:
            argv = ["--null", *glob_argv(given.pattern, space.path_arg, newest_first=self.switches.newest_first,
                                         follow=self.switches.follow_links, also=also)]  # --null: D22
            run = await self._rg_followed("glob", program, argv, space, None, self.config.raw_output_max_bytes,
                                          separator=b"\0", shown=lambda: page.seen, on_lines=on_lines, results="paths")
            failure = self._failure("glob", run, space)
            if failure is not None:
                raise failure
            cap = self.config.raw_output_max_bytes
            if run.stopped and not (self.switches.first_page_on_overflow and page.seen):
                raise self._overflow("glob")
            if not run.stopped and not self.switches.first_page_on_overflow and run.raw_bytes + extra > cap:
                raise errors.overflow("glob", cap, run.raw_bytes + extra)
            if run.exit_code == 1 or not page.seen:  # (S8: every path printed may have been left out)
                return [text_block(await self._no_files(asked, execution))]
            if run.stopped:  # S4: the first page, and why the rest is missing
                await sink.finish(keep=False)
                return [text_block(
                    "\n".join(page.kept) + f"\n\n(Showing {len(page.kept)} of more than {page.seen} paths: "
                    f"the search stopped after {cap} bytes of ripgrep output and the complete result was not "
                    "saved; narrow pattern or path to see more.)"
                )]
            ref = await sink.finish(keep=page.truncated)
            recovery = f"Full sorted result stored at: {ref.locator}. {ref.retrieval_hint}" if ref else _UNSAVED["glob"]
            return [text_block(glob_text(page, recovery))]
        finally:
            await sink.finish(keep=False)
            if space.mirror is not None:
                await space.mirror.close()

    async def _no_files(self, given: GlobInput, execution: ToolExecution) -> str:
        """``No files found``; with a lookalike of a literal pattern's name on a second line (S7)."""
        if not self.switches.near_miss_hints:
            return "No files found"
        fs: FileSystem = self.ctx.fs
        try:
            base = await fs.resolve(given.path or ".", cwd=execution.cwd, signal=execution.signal)
        except FsError:
            return "No files found"
        hint = await near_miss_hint(fs, base.display_path, given.pattern, signal=execution.signal)
        return "No files found" if hint is None else f"No files found\n{hint}"

    # -- grep (§6.2) ---------------------------------------------------------------------------
    async def grep(self, args: dict[str, Any], execution: ToolExecution) -> list[ContentBlock]:
        """Lines matching the ripgrep regex ``pattern`` in ``path`` (a file or a directory;
        default: the session workspace), grouped by file; in path order in the default
        profile (S2)."""
        given = parse_grep_args(args)
        given = GrepInput(pattern=self._value("grep", "pattern", given.pattern) or "",
                          path=self._value("grep", "path", given.path),
                          include=self._value("grep", "include", given.include))
        program = self._program("grep")
        return await self._bounded("grep", execution, lambda: self._grep(program, given, execution))

    async def _grep(self, program: str, given: GrepInput, execution: ToolExecution) -> list[ContentBlock]:
        space = await self._space("grep", given.path, execution)
        sink = _SpillSink(self.config.grep_max_matches, self._spill_opener("grep", execution, "grep-results.txt"))
        page = GrepPage(self.config.grep_max_matches, sink)
        max_line = self.config.grep_max_line_bytes
        windows = self.switches.match_windows
        escaped = self.switches.binary_text
        nul_files: list[str] = []  # S14: files whose kept lines hold a NUL, first-seen order

        inner: str | None = None  # S13's line, after S14's

        def note(text: str) -> str:
            text = f"{text}\n\n{binary_note(nul_files)}" if nul_files else text
            return text if inner is None else f"{text}\n\n{inner}"

        def on_line(line: bytes) -> None:
            if not line:
                return
            match = parse_match(line, bytes_paths=self.switches.odd_names)
            if match is not None and space.admit(match.path):
                shown = None
                if windows and len(match.line) > max_line // 4:  # may exceed the preview: S11
                    offsets = first_submatch(line)
                    shown = window_line(match.line, *offsets, max_line) if offsets is not None else None
                shown = shown if shown is not None else preview_line(match.line, max_line)
                where = space.shown(match.path)
                if escaped:
                    if "\0" in shown and page.seen < page.limit and where not in nul_files:
                        nul_files.append(where)
                    shown = escape_controls(shown)
                page.add(type(match)(where, match.line_number, shown))

        argv = grep_argv(given.pattern, space.path_arg, given.include, sorted_by_path=self.switches.sorted_by_path,
                         follow=self.switches.follow_links, text=escaped)
        cap = self.config.raw_output_max_bytes
        said = self.switches.skipped_files_said and space.workdir is not None  # S13 (not a spill artifact)
        whole = said and await self._named_path_is_skipped(program, space)
        skipped = SkippedEntries() if said and not whole else None
        rules = [*_WHOLE] if whole else ["--debug"] if skipped is not None else []
        try:
            if space.mirror is None:
                runs = [await self._rg_followed("grep", program, [argv[0], *rules, *argv[1:]], space, on_line, cap,
                                                shown=lambda: page.seen, on_debug=skipped, results="matches")]
            else:
                runs = await self._grep_mirror(program, argv, given, space, on_line, cap, shown=lambda: page.seen,
                                               rules=rules, on_debug=skipped)
            if skipped is not None and skipped.paths and not any(run.stopped for run in runs):
                inner = await self._skipped_text(program, space, given.include, skipped)

            for run in runs:
                failure = self._failure("grep", run, space)
                if failure is not None:
                    raise failure
            stopped = any(run.stopped for run in runs)
            if stopped and not (self.switches.first_page_on_overflow and page.seen):
                raise self._overflow("grep")
            if not stopped and (all(run.exit_code == 1 for run in runs) or not page.seen):
                return [text_block("No matches found" if inner is None else f"No matches found\n\n{inner}")]
            if stopped:  # S4
                await sink.finish(keep=False)
                return [text_block(note(
                    f"Found {len(page.kept)} of more than {page.seen} matches\n\n{format_grep_groups(page.kept)}\n\n"
                    f"(The search stopped after {cap} bytes of ripgrep output and the complete result was not "
                    "saved; narrow pattern, path, or include to see more.)"
                ))]
            ref = await sink.finish(keep=page.truncated, head=page.head())
            recovery = f"Full grep result stored at: {ref.locator}. {ref.retrieval_hint}" if ref else _UNSAVED["grep"]
            return [text_block(note(grep_text(page, recovery)))]
        finally:
            await sink.finish(keep=False)
            if space.mirror is not None:
                await space.mirror.close()

    async def _named_path_is_skipped(self, program: str, space: Space) -> bool:
        """S13: whether ``path`` names a directory below the working directory that ignore or
        hidden rules would skip (it, a directory on the way to it, or every entry in it): a
        hidden name, else ripgrep's ``--debug`` report of one directory level of each of its
        parents and of itself."""
        if space.path_arg is None:
            return False
        host = space.host(space.path_arg)
        relative = posixpath.relpath(host, space.cwd)
        if relative == "." or relative.startswith("../") or relative == "..":
            return False
        if not await self._is_dir(space, host):
            return False  # a named file is searched whatever the rules say (ripgrep's own rule)
        if hidden_component(relative):
            return True
        parts = relative.split("/")
        chain = ["/".join(parts[:n]) for n in range(1, len(parts) + 1)]
        found = SkippedEntries()
        await self._rg("grep", program, ["--no-config", "--files", "--debug", "--max-depth=1", "--",
                                         ".", *chain], space, lambda line: None, 1 << 20, on_debug=found)
        skipped = {posixpath.normpath(path) for path in found.paths}
        if any(path in skipped for path in chain):
            return True
        inside = {path for path in skipped if posixpath.dirname(path) == relative}

        def entries(names: list[str]) -> set[str]:
            return {f"{relative}/{name}" for name in names if name not in GLOB_VCS_EXCLUDES}

        names = await space.far.names(host) if space.far is not None else \
            await anyio.to_thread.run_sync(os.listdir, host)
        # every entry of it skipped by rules from above (``scripts/*``): it is ignored as a whole
        return bool(inside) and inside >= entries(names)

    @staticmethod
    async def _is_dir(space: Space, host: str) -> bool:
        """Is ``host`` a directory (symlinks followed), on the search host when there is one?"""
        if space.far is not None:
            return (await space.far.directories([host]))[0]
        return await anyio.to_thread.run_sync(os.path.isdir, host)

    async def _skipped_text(self, program: str, space: Space, include: str | None,
                            skipped: SkippedEntries) -> str | None:
        """S13: the note on files ignore or hidden rules left out (``skipped_note``), counted by
        one ``rg --files --no-ignore --hidden`` over just the skipped entries (links not
        followed); ``None`` when they hold no file."""
        kept = [path for path in skipped.paths if space.rules is None or space.rules.admit(path)]  # P4
        if not kept:
            return None
        roots = kept[:_COUNT_ROOTS]
        count = 0

        def counted(line: bytes) -> None:
            nonlocal count
            count += 1 if line else 0

        argv = ["--no-config", "--null", "--files", *_WHOLE, *([f"--glob={include}"] if include is not None else []),
                "--", *roots]
        # a bounded count: a big ignored tree (.venv, node_modules) is "more than <n>", not walked whole
        run = await self._rg("grep", program, argv, space, counted, min(_COUNT_BYTES, self.config.raw_output_max_bytes),
                             separator=b"\0", shown=lambda: count, results="lines")
        if count == 0:
            return None
        more = run.stopped or skipped.overflowed or len(kept) > len(roots)

        def firsts(base: str) -> list[str]:
            """Each skipped entry reduced to its first component below ``base``, in order."""
            out: list[str] = []
            for path in roots:
                rel = posixpath.relpath(posixpath.normpath(space.host(path)), base)
                if not rel.startswith(".."):
                    out.append(posixpath.join(base, rel.split("/")[0]))
            return out

        def names(base: str, is_dir: Callable[[str], bool]) -> list[str]:
            """The skipped entries as the model would name them: each reduced to its first
            component below the searched directory ``base`` (``dir/`` for a directory), sorted."""
            out: set[str] = set()
            for first in firsts(base):
                printed = posixpath.relpath(first, space.cwd) if not space.path_arg or not space.path_arg.startswith("/") else first
                out.add(space.shown(printed) + ("/" if is_dir(first) else ""))
                if len(out) > 6:
                    break
            return sorted(out)

        base = posixpath.normpath(space.host(space.path_arg) if space.path_arg is not None else space.cwd)
        if space.far is not None:  # a search host answers the directory questions in two requests
            base = base if await self._is_dir(space, base) else posixpath.dirname(base)
            candidates = list(dict.fromkeys(firsts(base)))
            flags = dict(zip(candidates, await space.far.directories(candidates)))
            return skipped_note(count, more, names(base, flags.__getitem__))

        def local() -> list[str]:
            here = base if os.path.isdir(base) else posixpath.dirname(base)
            return names(here, os.path.isdir)

        return skipped_note(count, more, await anyio.to_thread.run_sync(local))

    async def _grep_mirror(self, program: str, argv: list[str], given: GrepInput, space: Space,
                           on_line: Callable[[bytes], None], cap: int, *, shown: Callable[[], int],
                           rules: list[str], on_debug: Callable[[str], None] | None) -> list[Run]:
        """``grep`` in a mirror: list the files ripgrep would search (same rules), then copy
        their bytes and search them batch by batch (in path order, so the output order is
        one run's)."""
        mirror = space.mirror
        assert mirror is not None
        hosts: list[str] = []
        files = grep_files_argv(given.include, space.path_arg)
        listed = await self._rg("grep", program, [files[0], *rules, *files[1:]], space,
                                lambda line: hosts.append(space.host(line.decode("utf-8", "surrogateescape"))) if line else None,
                                cap, separator=b"\0", on_debug=on_debug)  # --null: a name may hold a line break
        if listed.stopped:
            raise self._overflow("grep")
        if listed.exit_code not in (0, 1):
            return [listed]
        runs: list[Run] = []
        spent = 0
        for batch in mirror.batches(hosts, self.config.mirror_batch_bytes) or [[]]:
            await mirror.fill(batch)
            run = await self._rg("grep", program, [argv[0], *[r for r in rules if r != "--debug"], *argv[1:]], space,
                                 on_line, cap - spent, shown=shown)
            await mirror.empty(batch)
            runs.append(run)
            spent += run.raw_bytes
            if run.stopped or self._failure("grep", run, space) is not None:
                break
        return runs
