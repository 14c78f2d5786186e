"""One ripgrep run with symlinks followed under a containment root (DEVIATIONS S8), wherever the
files are: on this machine (``search_core``) or on a command channel's far side (the helper,
``far_helper.search``), so both run exactly this.

ripgrep starts at once while a worker thread looks for links below the searched directory
that lead out of the root (``linkwalk.outward_links``, which reads again only the directories
changed since an earlier look: ``cache``); its lines wait until that look is done. None found
(the usual case): they are delivered and the run goes on. Some found: the run is ended and run
again with those links excluded (``links.exclude_globs``), so ripgrep never walks outside the
root. ``LinkFilter`` (applied by whoever delivers the lines) still drops whatever a later-made
link would show.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Awaitable, Callable

import anyio
import anyio.to_thread

from .engine import Run
from .links import exclude_globs
from .linkwalk import DirCache, outward_links

__all__ = ("RunRipgrep", "run_followed")

RunRipgrep = Callable[..., Awaitable[Run]]
"""``run(argv, *, shown, on_lines, on_debug) -> Run``: one ripgrep run with these arguments
(its program, place, budget and separator bound by the caller)"""


async def run_followed(run: RunRipgrep, argv: list[str], *, cwd: str, top: str, root: str, cache: DirCache,
                       deliver: Callable[[list[bytes]], None], on_debug: Callable[[str], None] | None,
                       shown: Callable[[], int]) -> Run:
    """``run`` with the look for links out of ``root`` beside it (see the module docstring).

    :param argv: ripgrep's arguments (``--`` before the paths, when there are paths)
    :param cwd: where ripgrep runs (the exclusions are anchored there)
    :param top: the directory searched (where the look starts)
    :param deliver: takes each batch of output lines, in order (after the look)
    :param on_debug: takes ripgrep's debug messages, in order (after the look)
    :param shown: results already delivered (S4 asks at the cap; lines still waiting count)
    :raises Exception: what ``run`` or ``deliver`` raised (ripgrep stopped first)
    """
    waiting: list[bytes] | None = []
    notes: list[str] | None = []  # S13's debug messages wait too: a run ended here walked the links out

    def gated(lines: list[bytes]) -> None:
        if waiting is None:
            deliver(lines)
        else:
            waiting.extend(lines)

    def gated_debug(message: str) -> None:
        if notes is None:
            if on_debug is not None:
                on_debug(message)
        else:
            notes.append(message)

    def shown_or_waiting() -> int:
        # S4 asks at the cap whether there is a page to show; lines still waiting count, or a
        # run that passed the cap before the look finished would be drained and fail on its exit.
        return shown() + (len(waiting) if waiting else 0)

    first: list[Run] = []
    failed: list[Exception] = []
    async with anyio.create_task_group() as tg:

        async def run_first() -> None:
            try:
                first.append(await run(argv, shown=shown_or_waiting, on_lines=gated,
                                       on_debug=gated_debug if on_debug is not None else None))
            except Exception as exc:  # raised below, outside the task group
                failed.append(exc)

        tg.start_soon(run_first)
        gave_up = threading.Event()
        try:  # a search aborted or out of time leaves the look, which then stops by itself
            outward = await anyio.to_thread.run_sync(
                functools.partial(outward_links, top, root, cache=cache, stopped=gave_up.is_set),
                abandon_on_cancel=True)
        finally:
            gave_up.set()
        excludes = exclude_globs(outward, cwd)
        if excludes:
            tg.cancel_scope.cancel()  # ripgrep's process group is killed and reaped
        else:
            pending, waiting = waiting, None
            held, notes = notes, None
            try:
                for message in held or ():
                    if on_debug is not None:
                        on_debug(message)
                if pending:
                    deliver(pending)
            except Exception as exc:  # e.g. a line that is not JSON: raised below, as from the run itself
                failed.append(exc)
                tg.cancel_scope.cancel()  # ripgrep is stopped, never left running behind the error
    if failed:
        raise failed[0]
    if not excludes:
        return first[0]
    cut = argv.index("--") if "--" in argv else len(argv)
    return await run([*argv[:cut], *excludes, *argv[cut:]], shown=shown, on_lines=deliver, on_debug=on_debug)
