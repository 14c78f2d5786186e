"""Near-match hints for a failed ``edit`` (DEVIATIONS D5, D18). Pure.

Stdlib only, no I/O, no imports from the rest of ``dsh_fs``.

When ``old_string`` is not found, the ``edit`` tool (``default`` profile) appends one line
``Hint: ...`` if the text is there after all under a small, named normalization. Each
normalization is applied to both the file text and ``old_string``; the first one under which
``old_string`` occurs wins, and the match is mapped back to the original text to name its
1-based line (the read tool's numbering: lines are split on ``\\n`` only) and what differs.

0. (D18) ``new_string`` is in the file instead: the edit looks already applied (models retry
   edits that succeeded). Only for a ``new_string`` that is not part of ``old_string`` and has
   at least ``_APPLIED_MIN_CHARS`` non-space characters.

Then, for old_string itself and for the forms a copying mistake gives it — without the
line-number prefixes (``12: ``) copied from ``read`` output on every line, with each two-character
``\\n`` read as a line break (D18), or both — the form occurring as it is, else, in order:

1. a final (or leading) newline of old_string the file does not have there;
2. a bare carriage return where old_string has a line break, or a stray carriage return;
3. NBSP and other Unicode spaces (U+00A0, U+1680, U+2000-U+200A, U+202F, U+205F, U+3000,
   U+FEFF) vs an ASCII space;
4. curly vs straight quotes, Unicode dashes vs ``-``, ``…`` vs ``...``;
5. invisible characters (zero-width spaces and joiners, U+2060, U+FEFF, soft hyphen);
6. NFC vs NFD (``unicodedata.normalize``);
7. indentation (leading spaces/tabs of each line), then trailing spaces/tabs, then both;
8. runs of spaces and tabs anywhere in a line;
9. (D18) any whitespace anywhere: line breaks, blank lines, a space inside a token;
10. letter case (last resort);
11. only for one-line old_strings in files of at most ``_FUZZY_MAX_LINES`` lines: the most
    similar line (``difflib`` ratio at least ``_FUZZY_CUTOFF``), worded as *not* a match.

So two differences at once are found when one of them is a copying mistake of old_string
(a prefix plus a tab typed as spaces; a prefix plus a trailing space; ``\\n`` plus
indentation), and any number of whitespace differences by stage 9. A hint for a transformed
form says both what was changed and what the stage found.

Character-exact classes (2-6) come before the whitespace ones because their hints say exactly
which character differs; on ASCII-only text they cost nothing.

Guarantees: a hint never claims a match that is not there (the normalized old_string really
occurs in the normalized text, and character-level claims are re-aligned on the original text;
the already-applied hint names a real occurrence of new_string); None when old_string
literally occurs in the text; nothing is ever applied.

Cost: nothing is searched when the text exceeds ``max_content_chars`` or old_string exceeds
``_MAX_NEEDLE_CHARS``. The search has a *work budget* counted in characters examined (not a
clock, so the answer never depends on the machine's speed): every pass over the text (C-speed
``str`` methods and regex substitutions) is paid before it runs, and every Python-level loop
pays as it goes; when the budget is spent the result is None. Most normalizations are skipped
by cheap prefilters (ASCII-only text, a piece of old_string the normalization cannot change
that must occur literally). The closest-line fallback compares at most ``_FUZZY_MAX_LINES`` lines.

| module | owns |
|---|---|
| ``search`` | ``near_match_hint``: the forms through the stages in order, under the work budget |
| ``state`` | the search's state: ``Budget``, ``Text``, ``Ctx`` (one form of old_string), line helpers |
| ``forms`` | the forms of old_string: without read prefixes, with ``\\n`` read as line breaks, both |
| ``applied`` | stage 0: the edit looks already applied (D18) |
| ``edges`` | stage 1: edge newlines |
| ``charmaps`` | stages 2-5 and 10: per-character maps (carriage returns, spaces, typography, invisibles, case) |
| ``nfc`` | stage 6: NFC vs NFD |
| ``spacing`` | stages 7-9: indentation, trailing and inner spaces and tabs, any whitespace (D18) |
| ``closest`` | stage 11: the closest line |
| ``chars`` | the character helpers the name hints (D19) and the lookup borrow: ``describe``, ``escape``, ``fold_lookalikes``, ``unnormalized_cluster`` |
"""

from __future__ import annotations

from .chars import (
    describe as describe,
    escape as escape,
    fold_lookalikes as fold_lookalikes,
    unnormalized_cluster as unnormalized_cluster,
)
from .search import near_match_hint as near_match_hint

__all__ = ("describe", "escape", "fold_lookalikes", "near_match_hint", "unnormalized_cluster")
