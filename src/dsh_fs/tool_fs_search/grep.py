"""The ``grep`` tool (REFERENCE-SPEC §6.2; DEVIATIONS S2, S4, S11–S15), as the reference's
grep.ts: lines matching a regex, grouped by file, paged, the complete result saved when it is
capped; in a mirror batch by batch; the note on files ignore or hidden rules left out (S13).
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable
from typing import Any

import anyio

from ..core.session import ToolExecution
from ..core.tools import ContentBlock, text_block
from .args import GrepInput, parse_grep_args
from .commands import GLOB_VCS_EXCLUDES, grep_argv, grep_files_argv
from .engine import Run
from .output import binary_note, escape_controls, first_submatch, window_line
from .output import GrepPage, format_grep_groups, grep_text, parse_match, preview_line
from .skipped import SkippedEntries, hidden_component, skipped_note
from .workdir import Space
from .search_core import SearchCore, SpillSink

__all__ = ("GrepSearch",)

_UNSAVED = "The complete result could not be saved; narrow pattern, path, or include to see more."

_WHOLE = ("--no-ignore", "--hidden", *(f"--glob=!**/{name}" for name in GLOB_VCS_EXCLUDES))
"""S13: the flags that search a skipped ``path`` whole (VCS directories below it still pruned)"""

_COUNT_ROOTS = 2_000
"""S13: skipped entries whose files are counted (beyond: "more than")"""

_COUNT_BYTES = 64 * 1024
"""S13: listing output read to count skipped files (about a thousand names; beyond: "more than")"""


class GrepSearch(SearchCore):
    """``grep`` over ``SearchCore``."""

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
        sink = SpillSink(self.config.grep_max_matches, self._spill_opener("grep", execution, "grep-results.txt"))
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
            recovery = f"Full grep result stored at: {ref.locator}. {ref.retrieval_hint}" if ref else _UNSAVED
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
