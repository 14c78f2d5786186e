"""What ``dsh-fs sessions history``, ``rewind`` and ``diff`` print (docs/HISTORY.md "CLI").
Pure: the commands (``history_cmd``) fetch, these functions write the lines.

* :func:`history_lines`: one line per step, numbered from 1, oldest first (newest last):
  ``<n>  <UTC time>  <tool>  <paths>``, each path with what happened to it (``(created)``,
  ``(deleted)``, ``a -> b`` for a move, ``(may be incomplete)`` for a change whose end was
  never recorded); a checkpoint on its own line after the step it follows
  (``checkpoint "<name>" (<id>)``); a first line saying when the oldest steps were dropped.
* :func:`rewind_lines`: per file what a rewind did or (``--dry-run``) would do, with the
  diffs of a dry run, then a summary; the refused files with why.
* :func:`diff_text`: one file's unified diff between two states (``sessions diff``).
"""

from __future__ import annotations

import difflib
import time
from collections.abc import Sequence
from typing import Any

from ..tool_common.shown import shown_name

__all__ = ("DIFF_MAX_BYTES", "diff_text", "history_lines", "rewind_lines")

DIFF_MAX_BYTES = 64 * 1024
"""one file's diff is cut after this many bytes (and says so)"""

_DONE = {"restore": "restored", "remove": "removed", "move": "moved back", "reverse_edit": "reversed the edits of",
         "unchanged": "unchanged", "refused": "refused", "skipped": "skipped"}
_WOULD = {"restore": "would restore", "remove": "would remove", "move": "would move back",
          "reverse_edit": "would reverse the edits of", "unchanged": "unchanged", "refused": "refused",
          "skipped": "would skip"}


def _when(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def _change(change: Any) -> str:
    path = shown_name(change.path)
    if change.op == "rename":
        text = f"{path} -> {shown_name(change.dest_path or change.dest_key or '')}"
    elif change.op == "delete":
        text = f"{path} (deleted)"
    elif change.before.kind == "absent":
        text = f"{path} (created)"
    else:
        text = path
    if change.after_version is None:
        text += " (may be incomplete)"
    return text


def history_lines(name: str, steps: Sequence[Any], *, checkpoints: Sequence[Any] = (), dropped: int = 0) -> list[str]:
    """The lines of ``dsh-fs sessions history NAME``.

    :param steps: the owner's ``history.Step`` s, oldest first (``ctx.history``)
    :param checkpoints: its ``history.Checkpoint`` s (each printed after the step it follows;
        one at step 0 before the first step)
    :param dropped: how many oldest steps were dropped to keep the history under its byte cap
    """
    lines: list[str] = []
    if dropped:
        lines.append(f"steps 1-{dropped} of session {shown_name(name)} were dropped (oldest first) to keep its"
                     " history under its byte cap; it goes back to step "
                     f"{dropped} at the earliest")
    marks: dict[int, list[Any]] = {}
    for checkpoint in checkpoints:
        marks.setdefault(checkpoint.step, []).append(checkpoint)
    width = len(str(steps[-1].number)) if steps else 1

    def marked(step: int) -> None:
        for checkpoint in marks.get(step, ()):
            lines.append(f"{'':>{width}}  checkpoint {shown_name(checkpoint.name)} ({checkpoint.id})")

    marked(dropped)
    for step in steps:
        paths = ", ".join(_change(change) for change in step.changes) or "(no change)"
        lines.append(f"{step.number:>{width}}  {_when(step.time)}  {step.tool}  {paths}")
        marked(step.number)
    return lines


def rewind_lines(name: str, result: Any) -> tuple[list[str], list[str]]:
    """What ``dsh-fs sessions rewind`` prints: ``(stdout lines, stderr lines)``.

    stdout: one line per file (``restored P``, ``removed P``, ``moved back P (from Q)``,
    ``unchanged P``, ``skipped P: <why>``; with ``would …`` for a dry run, each followed by its
    diff), then a summary. stderr (only when the rewind was refused): the refused files with why,
    and how to choose per file.

    :param result: a ``history.RewindResult``
    """
    out: list[str] = []
    err: list[str] = []
    words = _WOULD if result.dry_run or result.refused else _DONE
    for file in result.files:
        path = shown_name(file.path)
        if file.action == "refused":
            line = f"refused {path}: {file.reason}"
            (err if result.refused else out).append(line)
            continue
        line = f"{words[file.action]} {path}"
        if file.moved_from:
            line += f" (from {shown_name(file.moved_from)})"
        if file.forced:
            line += " (forced: its later changes are replaced)"
        if file.reason:
            line += f": {file.reason}"
        if not (result.dry_run or result.refused) and not file.done and file.action not in ("unchanged", "skipped"):
            line += " (not written)"
        out.append(line)
        if file.diff:
            out.extend(file.diff.rstrip("\n").split("\n"))
    taken = f"steps {result.steps[0]}-{result.steps[-1]}" if len(result.steps) > 1 else (
        f"step {result.steps[0]}" if result.steps else "no step")
    if result.refused:
        err.append(f"dsh-fs: rewind of session {shown_name(name)} to step {result.to} refused, nothing written:"
                   " the files above changed since this session's last change to them (or their content was"
                   " not kept); leave them out with --skip-changed (or --skip FILE), or overwrite one with"
                   " --force FILE")
    elif result.dry_run:
        out.append(f"dry run: rewinding session {shown_name(name)} to step {result.to} would take back {taken};"
                   " nothing was written")
    elif result.error is not None:
        err.append(f"dsh-fs: the rewind stopped: {result.error}; the files marked (not written) are as they"
                   " were: run the same rewind again to complete it")
    elif result.step is not None:
        out.append(f"rewound session {shown_name(name)} to step {result.to} ({taken} taken back); this rewind is"
                   f" step {result.step}: rewind to step {result.step - 1} to redo")
    else:
        out.append(f"session {shown_name(name)} is already as at step {result.to}: nothing to write")
    return out, err


def _lines(data: bytes) -> list[str]:
    return data.decode("utf-8", "replace").splitlines(keepends=True)


def diff_text(path: str, then: bytes | None, now: bytes | None, *, then_label: str, now_label: str = "now") -> str:
    """A unified diff of one file from ``then`` to ``now`` (``None``: no file), labelled
    ``<path> (<label>)``; ``""`` when equal; ``Binary file <path> differs`` for content with a
    NUL byte in its first 8 KiB; cut after ``DIFF_MAX_BYTES`` with a line saying so."""
    if then == now:
        return ""
    shown = shown_name(path)
    if any(data is not None and b"\0" in data[:8192] for data in (then, now)):
        return f"Binary file {shown} differs\n"
    diff = difflib.unified_diff(_lines(then or b""), _lines(now or b""),
                                fromfile="/dev/null" if then is None else f"{shown} ({then_label})",
                                tofile="/dev/null" if now is None else f"{shown} ({now_label})")
    text = "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in diff)
    data = text.encode()
    if len(data) > DIFF_MAX_BYTES:
        cut = data[:DIFF_MAX_BYTES].decode("utf-8", "ignore")
        text = cut[: cut.rfind("\n") + 1] + f"[diff cut at {DIFF_MAX_BYTES} bytes]\n"
    return text
