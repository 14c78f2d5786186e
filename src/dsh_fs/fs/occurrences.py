"""Occurrences of a literal in a text, at C speed (REFERENCE-SPEC §2.11; DEVIATIONS D15). Pure.

Works on ``str`` and on ``bytes`` alike (only ``find``, ``rfind``, ``count``, ``startswith``
and slicing are used), so the in-memory matcher (``literal_edit``) and the streamed one
(``literal_edit_stream``) share it.

* ``greedy_end`` — how many occurrences the reference's left-to-right, non-overlapping scan
  finds (``str.count``), and where the last of them ends. A needle that can overlap itself
  (``"aa"`` in ``"aaa"``) makes the end depend on every earlier match; it is found with
  a few ``count`` calls, never a loop over the matches.
* ``count_overlapping`` — every position where the needle occurs, overlaps included
  (``"aa"`` occurs twice in ``"aaa"``): the count of the default profile's one-match rule (D15).

Cost: both are linear in the text, with work per *cluster* of mutually overlapping
occurrences rather than per occurrence: a long periodic run (``"aaaa…"``, a file of
identical lines) is measured with a few slice comparisons.
"""

from __future__ import annotations

import functools
import re
from typing import Any, TypeVar

__all__ = ("borders", "count_overlapping", "greedy_end")

T = TypeVar("T", str, bytes)

_MAX_WITNESSES = 16
"""periods checked for overlapping pairs; a needle with more (rare) is walked occurrence by occurrence"""

_DENSE_CLUSTERS = 256
_DENSE_RUN = 32
"""after this many clusters averaging fewer occurrences than ``_DENSE_RUN``, the rest of the
text is counted by the regular expression engine (per occurrence, in C) instead of walked"""


def borders(needle: T) -> list[int]:
    """Lengths of every proper border of ``needle`` (a prefix that is also a suffix), longest first."""
    size = len(needle)
    fail = [0] * (size + 1)
    k = 0
    for i in range(1, size):
        while k and needle[i] != needle[k]:
            k = fail[k]
        if needle[i] == needle[k]:
            k += 1
        fail[i + 1] = k
    out = []
    k = fail[size]
    while k:
        out.append(k)
        k = fail[k]
    return out


def greedy_end(text: T, needle: T, start: int = 0, *, overlaps: bool | None = None) -> tuple[int, int]:
    """The reference's scan of ``text[start:]``: (occurrences it finds, index just after the
    last one — or ``start`` when there is none).

    :param overlaps: whether ``needle`` has a border (``None``: find out)
    """
    found = text.count(needle, start)
    if not found:
        return 0, start
    size = len(needle)
    last = text.rfind(needle, start)
    if overlaps is None:
        overlaps = bool(borders(needle))
    if not overlaps or text.find(needle, max(start, last - size + 1), last + size - 1) < 0:
        return found, last + size  # the last occurrence overlaps no other: the scan takes it
    # the scan's last match starts in (last - size, last]: its end is the shortest prefix
    # of the text that already holds every match (count over a prefix is the same scan)
    lo, hi = last + 1, last + size
    while lo < hi:
        mid = (lo + hi) // 2
        if text.count(needle, start, mid) == found:
            hi = mid
        else:
            lo = mid + 1
    return found, lo


def _periodic_extent(text: T, at: int, period: int, known: int, end: int) -> int:
    """The length of the longest prefix of ``text[at:end]`` with period ``period``, given that
    its first ``known`` characters have it."""
    good = known
    step = max(known, 64)
    while at + good < end:
        pos = at + good
        width = min(step, end - pos)
        if text[pos : pos + width] == text[pos - period : pos - period + width]:
            good += width
            step *= 2
            continue
        lo, hi = 0, width  # the first ``lo`` characters match, the first ``hi`` do not
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if text[pos : pos + mid] == text[pos - period : pos - period + mid]:
                lo = mid
            else:
                hi = mid
        return good + lo
    return good


def count_overlapping(text: T, needle: T, start: int = 0, end: int | None = None) -> int:
    """Occurrences of ``needle`` entirely inside ``text[start:end]``, overlapping ones
    included (DEVIATIONS D15): ``"aa"`` occurs 3 times in ``"aaaa"``.

    A needle without a border cannot overlap itself: that is ``str.count``. Otherwise
    stretches without overlapping pairs are counted with ``str.count`` too, and each cluster
    of overlapping occurrences is walked run by run (a run: occurrences spaced by one
    period inside a periodic stretch, measured at once).
    """
    stop = len(text) if end is None else min(end, len(text))
    size = len(needle)
    lengths = borders(needle)
    if not lengths or stop - start < size:
        return text.count(needle, start, stop) if size else 0
    period = size - lengths[0]
    # Two occurrences closer than ``size`` are ``d`` apart for a period ``d`` of the needle;
    # one at most ``size - period`` apart is a multiple of the smallest period (Fine–Wilf),
    # which puts another occurrence ``period`` after the first: so a pair "occurrence at a,
    # another at a + d" for d in this list starts every cluster.
    periods = [period] + [size - b for b in lengths if b < period]
    witnesses = [needle + needle[size - d :] for d in periods] if len(periods) <= _MAX_WITNESSES else None
    next_at: list[int | None] = [None] * len(periods)
    total = 0
    pos = start
    clusters = in_clusters = 0
    while True:
        if clusters >= _DENSE_CLUSTERS and in_clusters < _DENSE_RUN * clusters:
            return total + _engine_count(text, needle, pos, stop)
        if witnesses is None:
            first = text.find(needle, pos, stop)
        else:
            first = -1
            for i, witness in enumerate(witnesses):
                at = next_at[i]
                if at is None or 0 <= at < pos:
                    at = next_at[i] = text.find(witness, pos, stop)
                if at >= 0 and (first < 0 or at < first):
                    first = at
            if first < 0:
                return total + text.count(needle, pos, stop)
            total += text.count(needle, pos, first)  # no overlaps before ``first``
        if first < 0:
            return total
        at = first
        total += 1
        clusters += 1
        in_clusters += 1
        while True:  # the cluster: occurrences that overlap the previous one
            after = text.find(needle, at + 1, min(at + 2 * size - 1, stop))
            if after < 0:
                break
            gap = after - at
            if text.startswith(needle, after + gap, stop):  # a run of three or more: measure it
                extent = _periodic_extent(text, at, gap, size + 2 * gap, stop)
                more = (extent - size) // gap  # at + gap, at + 2·gap, … (nothing between them)
            else:
                more = 1
            total += more
            in_clusters += more
            at += more * gap
        pos = at + 1


@functools.lru_cache(maxsize=8)
def _lookahead(needle: Any) -> Any:
    """A pattern matching the first character of every occurrence of ``needle``, overlaps included."""
    return re.compile(re.escape(needle[:1]) + (b"(?=" if isinstance(needle, bytes) else "(?=")
                      + re.escape(needle[1:]) + (b")" if isinstance(needle, bytes) else ")"))


def _engine_count(text: T, needle: T, start: int, stop: int) -> int:
    """``count_overlapping`` by the regular expression engine: one match per occurrence."""
    return _lookahead(needle).subn(text[:0], text[start:stop])[1]  # type: ignore[no-any-return]
