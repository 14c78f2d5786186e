"""Sparse line indexes of recently read files.

A ``LineIndex`` remembers, for one file content (a target key at one version), what a scan
already proved: the bytes ``[0, scanned_to)`` passed the text rules (head checks, strict
UTF-8 up to an incomplete character ``pending``), how many line feeds they hold, and where
lines stand at sparse checkpoints (every ``stride`` bytes: the offset and the number of line
feeds before it). A complete index (the scan reached the end) also knows the line count.
A later read of the same version starts at the nearest checkpoint before its window instead
of at byte 0, and needs no validation below ``scanned_to``.

Memory is bounded: at most ``MAX_CHECKPOINTS`` checkpoints per file (the stride grows with
the file) and ``IndexCache`` keeps the most recently used few files. Indexes are immutable;
a scan that learned more publishes a new one (``IndexCache.put`` keeps the furthest).

Trust: the cache is keyed by (target key, version). The provider stores an index only for a
version it can trust to change with the content — not for a racily-clean version (DEVIATIONS
A5) and not when the file's stat fields changed during the scan.
"""

from __future__ import annotations

import bisect
import threading
from array import array
from collections import OrderedDict
from dataclasses import dataclass, field

__all__ = ("DEFAULT_CACHED_FILES", "IndexCache", "LineIndex", "MAX_CHECKPOINTS", "MIN_STRIDE", "stride_for")

MAX_CHECKPOINTS = 8192
"""checkpoints kept per file (two 8-byte integers each)"""
MIN_STRIDE = 64 * 1024
"""densest checkpoint spacing (bytes): a read at a known line scans at most this far to it"""
DEFAULT_CACHED_FILES = 8


def stride_for(size: int, base: int = MIN_STRIDE) -> int:
    """Checkpoint spacing (bytes): ``base`` doubled until a ``size``-byte file needs at most
    ``MAX_CHECKPOINTS`` checkpoints."""
    stride = base
    while -(-max(size, 1) // stride) > MAX_CHECKPOINTS:
        stride *= 2
    return stride


@dataclass(frozen=True, slots=True, kw_only=True)
class LineIndex:
    """What one scan proved about one file content (see the module docstring)."""

    stride: int
    """bytes between checkpoints"""
    offsets: array = field(default_factory=lambda: array("q"))
    """checkpoint byte offsets, ascending, each a multiple of ``stride``"""
    newlines: array = field(default_factory=lambda: array("q"))
    """``b"\\n"`` bytes before each checkpoint"""
    content_start: int = 0
    """3 when the file starts with a UTF-8 BOM, else 0"""
    scanned_to: int = 0
    """bytes ``[0, scanned_to)`` are validated and counted"""
    newlines_scanned: int = 0
    """``b"\\n"`` bytes in ``[0, scanned_to)``"""
    pending: bytes = b""
    """the incomplete character that ends ``[0, scanned_to)``, if any"""
    last_byte: int = -1
    """the byte at ``scanned_to - 1`` (``-1`` when nothing was scanned)"""
    total_lines: int | None = None
    """the file's line count once the scan reached the end (``None``: incomplete)"""

    @property
    def complete(self) -> bool:
        """The whole file was scanned and is valid text; ``total_lines`` is known."""
        return self.total_lines is not None

    def start_for(self, line: int) -> tuple[int, int]:
        """Where to start scanning for 1-based ``line``: ``(offset, newlines_before)`` with
        ``newlines_before < line - 1`` (so ``line`` starts after that offset), as close
        to the line as known; ``(0, 0)`` for line 1 or when nothing helps."""
        target = line - 1
        if target <= 0:
            return 0, 0
        if self.newlines_scanned < target:
            return self.scanned_to, self.newlines_scanned
        i = bisect.bisect_left(self.newlines, target) - 1
        if i < 0:
            return 0, 0
        return self.offsets[i], self.newlines[i]


class IndexCache:
    """A small thread-safe LRU of ``LineIndex`` by (target key, version).

    :param capacity: files remembered (0 disables the cache)
    """

    def __init__(self, capacity: int = DEFAULT_CACHED_FILES) -> None:
        self.capacity = capacity
        self._entries: OrderedDict[tuple[str, str], LineIndex] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: str, version: str) -> LineIndex | None:
        """The index of ``key`` at ``version``, if remembered (marks it recently used)."""
        with self._lock:
            found = self._entries.get((key, version))
            if found is not None:
                self._entries.move_to_end((key, version))
            return found

    def put(self, key: str, version: str, index: LineIndex) -> None:
        """Remember ``index``, unless an index that got further is already there. Older
        versions of ``key`` are dropped (they can never be asked for again)."""
        if self.capacity <= 0:
            return
        with self._lock:
            current = self._entries.get((key, version))
            if current is not None and (current.complete or current.scanned_to >= index.scanned_to) and not index.complete:
                self._entries.move_to_end((key, version))
                return
            for stale in [k for k in self._entries if k[0] == key and k[1] != version]:
                del self._entries[stale]
            self._entries[(key, version)] = index
            self._entries.move_to_end((key, version))
            while len(self._entries) > self.capacity:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        """Forget everything."""
        with self._lock:
            self._entries.clear()
