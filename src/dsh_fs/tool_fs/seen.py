"""``SeenTexts``: the text each observation owner last saw of a few files, under the version it
saw (DEVIATIONS D30). Synchronous and I/O-free.

The policy keeps only versions (``fs_policy``); a refusal for a stale version can show what
changed only if the text the owner saw is still known. The file tools put here what a call
showed the model whole: a ``read`` of every line of a file (no line cut, nothing left out),
the text a ``write`` or an ``edit`` left (its diff basis), a notebook read whole. Each is kept
under the version observed with it; an ``fs/observed`` event of another version for the same
owner and file (``listener``: a face's write, a partial read) drops it, so a text kept is
always the one of the version the owner observed last, which its guards are built from.

Bounded per owner: at most ``files`` texts and ``chars`` characters in all (least recently
kept dropped first); a text over ``file_chars`` characters is not kept (and what was kept of
that file is dropped). Owners are held weakly, as the policy holds them.
"""

from __future__ import annotations

import weakref
from typing import Any

__all__ = ("FILE_CHARS", "FILES", "OWNER_CHARS", "SeenTexts")

FILES = 16
"""default: texts kept per owner"""
FILE_CHARS = 256 * 1024
"""default: the longest text kept (characters)"""
OWNER_CHARS = 1024 * 1024
"""default: characters kept per owner in all"""


class SeenTexts:
    """``(version, text)`` of the files each owner last saw whole, by target key. Used on the
    event loop's thread only (the tools and the ``fs/observed`` listener run there).

    :param files: texts kept per owner (least recently kept dropped first)
    :param file_chars: the longest text kept (characters)
    :param chars: characters kept per owner in all
    :raises ValueError: for a bound below 1
    """

    def __init__(self, *, files: int = FILES, file_chars: int = FILE_CHARS, chars: int = OWNER_CHARS) -> None:
        if min(files, file_chars, chars) < 1:
            raise ValueError("SeenTexts bounds must be at least 1")
        self.files = files
        self.file_chars = min(file_chars, chars)
        self.chars = chars
        self._by_owner: weakref.WeakKeyDictionary[object, _Kept] = weakref.WeakKeyDictionary()

    def remember(self, owner: object | None, key: str, version: str, text: str) -> None:
        """``owner`` saw ``text`` whole as version ``version`` of ``key`` (a ``None`` owner:
        nothing kept; a text over ``file_chars``: what was kept of ``key`` is dropped)."""
        if owner is None:
            return
        kept = self._by_owner.get(owner)
        if kept is None:
            kept = self._by_owner[owner] = _Kept()
        texts = kept.texts
        old = texts.pop(key, None)
        if old is not None:
            kept.chars -= len(old[1])
        if len(text) > self.file_chars:
            return
        texts[key] = (version, text)
        kept.chars += len(text)
        while len(texts) > self.files or kept.chars > self.chars:
            dropped = texts.pop(next(iter(texts)))
            kept.chars -= len(dropped[1])

    def observed(self, owner: object | None, key: str, version: str | None) -> None:
        """``owner`` observed ``key`` at ``version`` (``None``: absent): a text kept of another
        version is no longer what it last saw, and is dropped."""
        kept = None if owner is None else self._by_owner.get(owner)
        if kept is None:
            return
        found = kept.texts.get(key)
        if found is not None and found[0] != version:
            del kept.texts[key]
            kept.chars -= len(found[1])

    def listener(self, target: Any, version: str | None, actor: Any) -> None:
        """The ``fs/observed`` listener (``observed`` for the dispatch's owner, ``actor.session``)."""
        self.observed(getattr(actor, "session", None), target.key, version)

    def get(self, owner: object | None, key: str) -> str | None:
        """The text ``owner`` saw of ``key`` at the version it observed last, else ``None``."""
        kept = None if owner is None else self._by_owner.get(owner)
        found = None if kept is None else kept.texts.get(key)
        return None if found is None else found[1]

    def count(self, owner: object) -> tuple[int, int]:
        """``(texts, characters)`` kept for ``owner``."""
        kept = self._by_owner.get(owner)
        return (0, 0) if kept is None else (len(kept.texts), kept.chars)


class _Kept:
    """One owner's texts (insertion order: least recently kept first) and their characters."""

    __slots__ = ("chars", "texts", "__weakref__")

    def __init__(self) -> None:
        self.texts: dict[str, tuple[str, str]] = {}
        self.chars = 0
