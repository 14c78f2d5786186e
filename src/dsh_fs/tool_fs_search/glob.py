"""The ``glob`` tool (REFERENCE-SPEC §6.1; DEVIATIONS S1, S4, S7–S10, S15), as the reference's
glob.ts: paths matching a pattern by modification time, paged, the complete list saved when it
is capped.
"""

from __future__ import annotations

from typing import Any

from ..core.session import ToolExecution
from ..core.tools import ContentBlock, text_block
from ..fs.errors import FsError
from ..fs.filesystem import FileSystem
from . import errors
from .args import GlobInput, parse_glob_args
from .commands import glob_argv
from .anchoring import anchored, from_path, split_absolute
from .near_miss import near_miss_hint
from .output import GlobPage, glob_text
from .search_core import SearchCore, SpillSink

__all__ = ("GlobSearch",)

_UNSAVED = "The complete result could not be saved; narrow pattern or path to see more."


class GlobSearch(SearchCore):
    """``glob`` over ``SearchCore``."""

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
        sink = SpillSink(self.config.glob_max_results, self._spill_opener("glob", execution, "glob-results.txt"))
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
            recovery = f"Full sorted result stored at: {ref.locator}. {ref.retrieval_hint}" if ref else _UNSAVED
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
