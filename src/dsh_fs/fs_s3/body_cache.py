"""Bodies a ``stat`` fetched, kept for the ``read_window`` of the same version. Pure (no I/O).

The S3 provider's ``stat`` is one ranged GetObject; a small object's body comes with it. The
``read`` tool stats once and then windows (REFERENCE-SPEC §4.11), so keeping that body until
the window is taken saves the second round trip. An entry is keyed by target key *and* version
token: it is only ever served as the content of the version ``stat`` reported, so the read
returns exactly what the observed version holds. Taken once; bounded in bytes, oldest first.
"""

from __future__ import annotations

from collections import OrderedDict

__all__ = ("BodyCache",)


class BodyCache:
    """A byte-bounded, insertion-ordered map ``(target key, version token) → bytes``.

    :param max_bytes: the most body bytes held at once; the oldest entries go first, and a
        body bigger than this is not kept
    """

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max(0, max_bytes)
        self.held = 0
        """body bytes held right now"""
        self._bodies: OrderedDict[tuple[str, str], bytes] = OrderedDict()

    def __len__(self) -> int:
        return len(self._bodies)

    def put(self, key: tuple[str, str], data: bytes) -> None:
        """Keep ``data`` for ``key`` (replacing an older body of the same key)."""
        old = self._bodies.pop(key, None)
        if old is not None:
            self.held -= len(old)
        if len(data) > self.max_bytes:
            return
        while self._bodies and self.held + len(data) > self.max_bytes:
            _, dropped = self._bodies.popitem(last=False)
            self.held -= len(dropped)
        self._bodies[key] = data
        self.held += len(data)

    def take(self, key: tuple[str, str]) -> bytes | None:
        """The body kept for ``key``, removed; ``None`` when there is none."""
        data = self._bodies.pop(key, None)
        if data is not None:
            self.held -= len(data)
        return data
