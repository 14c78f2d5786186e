"""An optional provider capability for the search tools: ``SearchHost``, the machine where a
provider's files are host files and ripgrep runs beside them — another machine than this one
(a command channel's far side, DEVIATIONS C4). The search tools (``glob``, ``grep``) then run
ripgrep *there*, with their arguments and their symlink rules (S8), and only its output
travels; the result is what ripgrep run on that machine's disk gives, exactly as for the local
disk (``FileSystem.host_path``).

The request and the answers are plain values (no tool types: the seam does not know the
tools); ``tool_fs_search`` builds them and reads them back. Pure declarations, no I/O.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from ..core.signal import AbortSignal

__all__ = ("FollowLinks", "HostSearch", "SearchHost")

Results = Literal["paths", "matches", "lines", "none"]


@dataclass(frozen=True, slots=True, kw_only=True)
class FollowLinks:
    """ripgrep follows symlinks (``--follow``) and what it prints is admitted only when no link
    on its way leads out of ``root`` (DEVIATIONS S8, ``tool_fs_search.links``)."""

    root: str
    """the containment root the search stays in (a path of the far machine)"""
    top: str
    """the searched directory (far path), where the look for links out starts"""
    check_files: bool
    """also check each printed file (``grep``: results show content)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class HostSearch:
    """One ripgrep run on the search host."""

    argv: tuple[str, ...]
    """ripgrep's arguments (the program is the host's own ripgrep)"""
    cwd: str
    """where it runs (a far path)"""
    raw_cap: int
    """stop once this many output bytes came (``engine.run_ripgrep``'s ``raw_cap``)"""
    separator: bytes
    """what ends an output line: ``b"\\n"`` or ``b"\\0"``"""
    first_page_on_overflow: bool
    """past the cap: drain the rest only while no result was delivered (DEVIATIONS S4), else
    always (the reference's order: an error exit wins over the size)"""
    results: Results
    """what counts as a delivered result for that decision: non-empty ``paths`` (``glob``),
    ``matches`` (``grep``'s JSON match lines), non-empty ``lines``, or ``none``"""
    follow: FollowLinks | None = None
    """symlinks followed under a containment root (S8); ``None``: ripgrep's output as it is"""
    bytes_paths: bool = False
    """``matches``: paths that are not UTF-8 are read from ripgrep's ``bytes`` form (D22)"""
    debug: bool = False
    """ripgrep's ``--debug`` messages are wanted (``on_debug``)"""


class SearchHost(abc.ABC):
    """The search tools' host operations, run on the machine where the files are."""

    @abc.abstractmethod
    async def available(self, program: str) -> bool:
        """Can ripgrep run there as this side's ``program`` would (the host's own of the same
        version, or ``program`` itself sent over)? ``False``: the tools fall back to reading the
        files through the provider.

        :param program: the path of this side's ripgrep
        """

    @abc.abstractmethod
    async def search(self, request: HostSearch, *, on_lines: Callable[[list[bytes]], None],
                     on_debug: Callable[[str], None] | None = None,
                     on_rejected: Callable[[list[str]], None] | None = None,
                     signal: AbortSignal | None = None) -> dict[str, Any]:
        """Run ripgrep as ``request`` says; hand each batch of output lines (without their
        separator) to ``on_lines`` and each debug message to ``on_debug``, in order. With
        ``request.follow``, the printed paths S8 does not admit (a ``glob`` line as decoded, a
        ``grep`` match's path) go to ``on_rejected`` before the batch that holds them.

        :return: how the run ended, the fields of ``tool_fs_search.engine.Run``
        :raises OSError: ripgrep could not be started there
        :raises FsError: the channel failed (``FS_IO_ERROR``), or ``FS_ABORTED``
        """

    @abc.abstractmethod
    async def directories(self, paths: list[str], *, signal: AbortSignal | None = None) -> list[bool]:
        """For each far path: is it a directory (symlinks followed)?"""

    @abc.abstractmethod
    async def names(self, path: str, *, signal: AbortSignal | None = None) -> list[str]:
        """The names in the far directory ``path`` (``os.listdir``); ``[]`` when it cannot be read."""
