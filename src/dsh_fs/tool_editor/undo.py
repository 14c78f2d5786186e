"""``undo_edit`` of ``str_replace_editor`` (default profile, DEVIATIONS H10; docs/HISTORY.md
"undo_edit"): OpenHands' command, on the history.

OpenHands' editor keeps, per file, a stack of the texts before its own edits; ``undo_edit``
pops the newest and writes it back, answering ``Last edit to <path> undone successfully.`` and
the restored file as ``cat -n`` shows it, or ``No edit history found for <path>.``
(``openhands_aci/editor/editor.py`` at 9d22d0d2df). Here the stack is the owner's history
(``dsh_fs.history``): the last change this owner made to the file, by any tool, is taken back
by a rewind of that one file to its state before that change (a move: both names), which

* never clobbers: a file someone else changed since this owner's last change is not touched
  (``cannot undo the last edit to "<p>": changed since this owner's last change; nothing was
  changed``);
* is itself a step of the history, with the tool ``undo_edit``; undoing again takes back the
  change before (an ``undo_edit`` step and the change it took back are skipped as a pair, so
  successive calls walk back as OpenHands' stack pops), and a ``rewind`` can redo it;
* removes a file the undone change created (OpenHands' stack holds the created text, so its
  undo of a ``create`` rewrites the same text).

Pure parts: :func:`change_to_undo` (which step), :func:`undone_listing` (the answer's text).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..history.model import Step
from . import texts as t

__all__ = ("UNDO_MAX_CHARS", "UNDO_TOOL", "change_to_undo", "undone_listing")

UNDO_TOOL = "undo_edit"
"""the tool name an undo's own step carries in the history"""

UNDO_MAX_CHARS = 16_000
"""OpenHands' ``MAX_RESPONSE_LEN_CHAR``: the restored text shown is cut after this many
characters (``maybe_truncate``), unless the face's ``maxOutputChars`` is smaller"""


def _touches(step: Step, key: str) -> bool:
    return any(change.key == key or change.dest_key == key for change in step.changes)


def change_to_undo(steps: Sequence[Step], key: str) -> Step | None:
    """The step whose change of ``key`` an ``undo_edit`` takes back: the newest step that
    changed it and is not an ``undo_edit`` or taken back by one (each ``undo_edit`` step cancels
    the newest step before it that changed the file and is not itself cancelled).

    :param steps: the owner's steps, oldest first (``ctx.history``)
    :param key: the file's key (``Target.key``)
    :returns: ``None`` when there is none (OpenHands' ``No edit history found``)
    """
    undone = 0
    for step in reversed(steps):
        if not _touches(step, key):
            continue
        if step.tool == UNDO_TOOL:
            undone += 1
        elif undone:
            undone -= 1
        else:
            return step
    return None


def undone_listing(path: str, text: str | None, *, max_chars: int = UNDO_MAX_CHARS) -> str:
    """OpenHands' answer to a successful ``undo_edit``: ``Last edit to <path> undone
    successfully. Here's the result of running `cat -n` on <path>:`` and the text's lines
    numbered ``%6d<TAB>line`` (its ``_make_output``), the text first cut after ``max_chars``
    characters with OpenHands' ``<response clipped>`` notice appended (its ``maybe_truncate``:
    the notice is then numbered as the last line, as OpenHands shows it).

    :param text: the restored text, LF line breaks; ``None``: the undo removed the file (H10's
        own sentence instead of the listing)
    :param max_chars: where the text is cut (characters)
    """
    if text is None:
        return t.UNDO_DONE.format(path=path, output=t.UNDO_REMOVED)
    if len(text) > max_chars:
        text = text[:max_chars] + t.UNDO_TRUNCATED
    numbered = "\n".join(f"{number:6}\t{line}" for number, line in enumerate(text.split("\n"), start=1))
    return t.UNDO_DONE.format(path=path, output=t.UNDO_CAT_N.format(path=path) + numbered + "\n")
