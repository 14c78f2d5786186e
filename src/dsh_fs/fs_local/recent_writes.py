"""The bytes the local provider last wrote to a few small files, under the version it reported
for each (DEVIATIONS A5), synchronous and I/O-free.

A version minted just after a write is racy, so it carries the digest of the bytes written
(``versions.mint(content=…)``). The next edit guarded by that version reads the file and must
know the digest of what it read: when what it read is exactly the bytes kept here under that
very version string, their digest is the one the version carries, without hashing them again
(equal bytes have equal digests; a byte comparison is a ``memcmp``). Anything else — another
version, other bytes, a file not kept — is hashed from the bytes read.

Bounded: at most ``files`` entries (least recently written dropped first) of at most
``max_size`` bytes each. Used by ``fsio.write_file`` / ``edit_file`` through ``LocalFileSystem``.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from .versions import split_token

__all__ = ("RecentWrites",)


class RecentWrites:
    """``(version, bytes)`` of the last write of up to ``files`` files, by target key.

    :param files: how many files are kept (0: none)
    :param max_size: the largest content kept (bytes)
    """

    def __init__(self, *, files: int = 16, max_size: int = 128 * 1024) -> None:
        self.files = max(0, files)
        self.max_size = max(0, max_size)
        self._kept: OrderedDict[str, tuple[str, bytes]] = OrderedDict()
        self._lock = threading.Lock()  # mutations of different files may run in worker threads

    def remember(self, key: str, version: str, data: bytes) -> None:
        """``data`` is now the content of ``key``, reported as ``version`` (a version without a
        content digest, or content over ``max_size``, is not kept: nothing would use it)."""
        with self._lock:
            self._kept.pop(key, None)
            if self.files and len(data) <= self.max_size and split_token(version)[1] is not None:
                self._kept[key] = (version, data)
                while len(self._kept) > self.files:
                    self._kept.popitem(last=False)

    def vouches(self, key: str, version: str, raw: bytes) -> bool:
        """Are ``raw`` exactly the bytes kept for ``key`` under exactly ``version`` (so their
        digest is the one ``version`` carries)?"""
        with self._lock:
            kept = self._kept.get(key)
        return kept is not None and kept[0] == version and kept[1] == raw

    def forget(self, key: str) -> None:
        """Drop what is kept for ``key`` (its content is no longer known)."""
        with self._lock:
            self._kept.pop(key, None)

    def __len__(self) -> int:
        return len(self._kept)
