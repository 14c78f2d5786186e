"""``insert``: new text after line ``insert_line`` (0 = top) (docs/design/EDITING-FACES-DESIGN.md §3.3). Pure.

Two line models, one per face:

* ``str_replace_editor`` (reference): the file's lines are ``text.split("\\n")`` (a final line
  break leaves an empty last line, so ``insert_line`` may be that line's number) and the new
  text's ``split("\\n")`` goes in between: ``"one\\n"`` + line 2 + ``"three"`` → ``"one\\n\\nthree"``.
* ``str_replace_based_edit_tool`` (Anthropic): lines are counted as ``view`` shows them (a final
  line break ends the last line) and ``insert_text`` is whole lines: a final line break of it is
  its last line's end, not an extra empty line; one is supplied when it has none.

In the default profile both map back to the file's bytes as ``edit`` does (D2: untouched line
breaks keep their style, new ones take the dominant style); ``keep_bytes=False`` is the
reference's rewrite of the raw text.
"""

from __future__ import annotations

from ..fs.text import normalize
from ..patch.apply import apply_line_edits, file_lines

__all__ = ("content_line_count", "insert_text", "reference_line_count")


def content_line_count(raw: str) -> int:
    """Lines as ``read``/Anthropic's ``view`` number them (REFERENCE-SPEC §4.6.2): a final line
    break does not start another line."""
    lines = normalize(raw).split("\n")
    return len(lines) - 1 if lines[-1] == "" else len(lines)


def reference_line_count(raw: str) -> int:
    """Lines as the reference's ``str_replace_editor`` numbers them: ``len(text.split("\\n"))``."""
    return raw.count("\n") + 1


def insert_text(raw: str, insert_line: int, text: str, *, whole_lines: bool, keep_bytes: bool) -> str:
    """``raw`` with ``text`` inserted after line ``insert_line``.

    :param insert_line: 0 = before the first line; the caller has checked the range
        (``[0, content_line_count]`` or ``[0, reference_line_count]``)
    :param whole_lines: Anthropic's model (see the module docstring); ``False`` = reference's
    :param keep_bytes: ``True`` = D2 mapping; ``False`` = the reference's split/join of ``raw``
    """
    if not keep_bytes:
        lines = raw.split("\n")
        return "\n".join([*lines[:insert_line], *text.split("\n"), *lines[insert_line:]])
    new = normalize(text).split("\n")
    if whole_lines and len(new) > 1 and new[-1] == "":
        new.pop()
    return apply_line_edits(raw, [(insert_line, 0, new)], lines=file_lines(raw))
