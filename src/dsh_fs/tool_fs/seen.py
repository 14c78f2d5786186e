"""``SeenTexts``: the text each observation owner last saw of a few files, under the version it
saw (DEVIATIONS D30). Synchronous and I/O-free.

The policy keeps only versions (``fs_policy``); a refusal for a stale version can show what
changed only if the text the owner saw is still known. The file tools put here what a call
showed the model whole: a ``read`` of every line of a file (no line cut, nothing left out),
the text a ``write`` or an ``edit`` left (its diff basis), a notebook read whole, and the
windows of one version read page by page until every line was seen (``remember_lines``). Each is kept
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

__all__ = ("FILES", "FILE_CHARS", "OWNER_CHARS", "SeenTexts")

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
        kept = self._kept(owner)
        if kept is not None:
            kept.put(key, version, text, len(text), self)

    def remember_lines(self, owner: object | None, key: str, version: str, first: int, lines: list[str], *,
                       last: bool) -> None:
        """``owner`` saw lines ``first``… (1-based) of version ``version`` of ``key``, each
        whole; ``last``: they end the file. Windows of one version add up: once lines 1 to
        the last are all seen, the text is kept as ``remember`` keeps it."""
        kept = self._kept(owner)
        if kept is None:
            return
        found = kept.texts.get(key)
        if found is not None and found[0] == version and isinstance(found[1], str):
            return  # already whole
        pages = found[1] if found is not None and found[0] == version else _Pages()
        assert isinstance(pages, _Pages)
        for number, line in enumerate(lines, first):
            if number not in pages.lines:
                pages.lines[number] = line
                pages.chars += len(line) + 1
        if last:
            pages.end = first + len(lines) - 1
        if pages.end is not None and len(pages.lines) >= pages.end and all(n in pages.lines for n in range(1, pages.end + 1)):
            text = "\n".join(pages.lines[n] for n in range(1, pages.end + 1))
            kept.put(key, version, text, len(text), self)
        else:
            kept.put(key, version, pages, pages.chars, self)

    def _kept(self, owner: object | None) -> _Kept | None:
        if owner is None:
            return None
        kept = self._by_owner.get(owner)
        if kept is None:
            kept = self._by_owner[owner] = _Kept()
        return kept

    def observed(self, owner: object | None, key: str, version: str | None) -> None:
        """``owner`` observed ``key`` at ``version`` (``None``: absent): a text kept of another
        version is no longer what it last saw, and is dropped."""
        kept = None if owner is None else self._by_owner.get(owner)
        if kept is None:
            return
        found = kept.texts.get(key)
        if found is not None and found[0] != version:
            kept.drop(key)

    def listener(self, target: Any, version: str | None, actor: Any) -> None:
        """The ``fs/observed`` listener (``observed`` for the dispatch's owner, ``actor.session``)."""
        self.observed(getattr(actor, "session", None), target.key, version)

    def get(self, owner: object | None, key: str) -> str | None:
        """The text ``owner`` saw of ``key`` at the version it observed last, else ``None``."""
        kept = None if owner is None else self._by_owner.get(owner)
        found = None if kept is None else kept.texts.get(key)
        return found[1] if found is not None and isinstance(found[1], str) else None

    def count(self, owner: object) -> tuple[int, int]:
        """``(files, characters)`` kept for ``owner`` (a file seen in part counts)."""
        kept = self._by_owner.get(owner)
        return (0, 0) if kept is None else (len(kept.texts), kept.chars)


class _Pages:
    """The lines seen so far of one version (by 1-based number) and where the file ends."""

    __slots__ = ("chars", "end", "lines")

    def __init__(self) -> None:
        self.lines: dict[int, str] = {}
        self.end: int | None = None
        self.chars = 0


class _Kept:
    """One owner's texts (insertion order: least recently kept first), their sizes and total."""

    __slots__ = ("chars", "sizes", "texts", "__weakref__")

    def __init__(self) -> None:
        self.texts: dict[str, tuple[str, str | _Pages]] = {}
        self.sizes: dict[str, int] = {}
        self.chars = 0

    def drop(self, key: str) -> None:
        if self.texts.pop(key, None) is not None:
            self.chars -= self.sizes.pop(key)

    def put(self, key: str, version: str, seen: str | _Pages, size: int, bounds: SeenTexts) -> None:
        """Keep ``seen`` (``size`` characters) as the most recent, within ``bounds``; over
        ``file_chars``: nothing kept of ``key``."""
        self.drop(key)
        if size > bounds.file_chars:
            return
        self.texts[key] = (version, seen)
        self.sizes[key] = size
        self.chars += size
        while len(self.texts) > bounds.files or self.chars > bounds.chars:
            self.drop(next(iter(self.texts)))
