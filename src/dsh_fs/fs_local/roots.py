"""The local provider's containment roots, checked once at construction (DEVIATIONS D28).

``containment_roots(paths)`` takes the roots as configured (absolute, lexically normalized)
and gives the ``containment.Root`` values every resolution and walk starts from: each must be an
existing directory (its real path is taken here), there are at most ``MAX_ROOTS``, and no
two overlap — equal, or one inside the other, by real path or as configured (a symlinked
spelling of a directory inside another root overlaps too). ``disjoint`` is the pure part.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Final

from .containment import Root, inside

__all__ = ("MAX_ROOTS", "containment_roots", "disjoint")

MAX_ROOTS: Final = 64
"""the most containment roots one provider takes (each resolution looks at each root)"""


def disjoint(roots: Sequence[Root]) -> None:
    """Refuse two roots that overlap (pure: compares the paths only).

    :raises ValueError: ``LocalFileSystem: roots <A> and <B> overlap`` (both as configured, in
        the given order) when one root's real or configured path is the other's or lies inside it
    """
    for i, first in enumerate(roots):
        for second in roots[i + 1:]:
            if any(inside(a, b) or inside(b, a)
                   for a in (first.real, first.shown) for b in (second.real, second.shown)):
                raise ValueError(f"LocalFileSystem: roots {first.shown} and {second.shown} overlap")


def containment_roots(paths: Sequence[str]) -> tuple[Root, ...]:
    """The ``containment.Root`` of each configured root (absolute, normalized), in order. With
    several, each carries the names of all (``Root.named``), which the refusal prints.

    :raises ValueError: ``LocalFileSystem: root <p> is not a directory`` (missing, or not a
        directory); ``LocalFileSystem: at most 64 roots``; as ``disjoint``
    """
    if len(paths) > MAX_ROOTS:
        raise ValueError(f"LocalFileSystem: at most {MAX_ROOTS} roots")
    for path in paths:
        if not os.path.isdir(path):
            raise ValueError(f"LocalFileSystem: root {path} is not a directory")
    named = tuple(paths) if len(paths) > 1 else ()
    roots = tuple(Root(os.path.realpath(path), path, named) for path in paths)
    disjoint(roots)
    return roots
