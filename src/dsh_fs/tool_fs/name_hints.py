"""A path that is not there, next to a name that looks the same (DEVIATIONS D19). Pure.

``lookalike(missing, names)`` finds the existing name that differs from ``missing`` only by
what a model cannot see or tends to normalize when it copies a name: a no-break or other
Unicode space for a space, an invisible character, composed vs decomposed accents (NFC vs
NFD, as macOS writes names), curly vs straight quotes and Unicode dashes, letter case (a
model that learned on a case-insensitive disk, or a name it retyped). The folding is the
edit hints' (``hints.chars.fold_lookalikes``), and so are the words (``hints.chars.describe``).

It only compares names it is given: the ``read`` tool lists one directory, bounded
(``lookup.lookalike_hint``). The claim made is exact: the name exists and folds to the same
text; what differs is read off an alignment of the two names.
"""

from __future__ import annotations

import difflib
import unicodedata
from collections.abc import Iterable

from .hints.chars import describe, fold_lookalikes, unnormalized_cluster

__all__ = ("lookalike",)

_MAX_NAME = 1024
"""longer names are not compared (no file system allows them)"""


def _code_points(text: str) -> str:
    return " ".join(f"U+{ord(ch):04X}" for ch in text)


def _difference(missing: str, name: str) -> str:
    """What differs between the path's ``missing`` component and the existing ``name``."""
    nfc_missing, nfc_name = unicodedata.normalize("NFC", missing), unicodedata.normalize("NFC", name)
    if nfc_missing == nfc_name:
        decomposed = unnormalized_cluster(name, None)
        if decomposed is not None:
            composed = unicodedata.normalize("NFC", decomposed)
            return (f'its name writes "{composed}" as {_code_points(decomposed)} (decomposed), '
                    f"the path as {_code_points(composed)} (composed)")
        decomposed = unnormalized_cluster(missing, None)
        if decomposed is not None:
            composed = unicodedata.normalize("NFC", decomposed)
            return (f'its name writes "{composed}" as {_code_points(composed)} (composed), '
                    f"the path as {_code_points(decomposed)} (decomposed)")
        return "the two encode some accented characters differently"
    if nfc_missing.casefold() == nfc_name.casefold():
        return "only letter case differs"
    changes = [op for op in difflib.SequenceMatcher(None, nfc_missing, nfc_name, autojunk=False).get_opcodes()
               if op[0] != "equal"]
    _tag, i1, i2, j1, j2 = changes[0]
    ours, theirs = nfc_missing[i1:i2], nfc_name[j1:j2]
    if ours and theirs:
        what = f"its name has {describe(theirs)} where the path has {describe(ours)}"
    elif theirs:
        what = f"its name has {describe(theirs)} that the path lacks"
    else:
        what = f"the path has {describe(ours)} that its name lacks"
    if len(changes) > 1:
        what += f", plus {len(changes) - 1} more such difference{'s' if len(changes) > 2 else ''}"
    return what


def lookalike(missing: str, names: Iterable[str]) -> tuple[str, str] | None:
    """``(name, what differs)`` for the first of ``names`` that differs from ``missing`` only by
    lookalike or invisible characters or letter case; ``None`` when there is none."""
    if not missing or len(missing) > _MAX_NAME:
        return None
    key = fold_lookalikes(missing)
    for name in names:
        if name != missing and len(name) <= _MAX_NAME and fold_lookalikes(name) == key:
            return name, _difference(missing, name)
    return None
