"""Files a ``grep`` left out by ignore and hidden-file rules (DEVIATIONS S13). Pure.

ripgrep says which entries its walk skipped, and why, in its ``--debug`` messages
(``rg: DEBUG|ignore::walk|…: ignoring ./scripts: Ignore(IgnoreMatch(Gitignore(…)))``, ripgrep
14). ``SkippedEntries`` keeps the entries skipped by an ignore file (``.gitignore``,
``.ignore``, ``.rgignore``, git's exclude files) or for a hidden name — not those left out by
``include`` or by our own globs, nor VCS directories (``.git`` …, which ``glob`` never lists
either). A message in another shape is ignored: at worst the note is missing.
"""

from __future__ import annotations

import posixpath
import re

from .commands import GLOB_VCS_EXCLUDES

__all__ = ("SKIPPED_KEEP", "SkippedEntries", "hidden_component", "skipped_note")

SKIPPED_KEEP = 10_000
"""skipped entries remembered per search (beyond: counted as "more than")"""

_IGNORING = re.compile(r"^rg: DEBUG\|ignore::walk\|[^ ]*: ignoring (.+?): Ignore\(IgnoreMatch\((Hidden|Gitignore)\b")
_SHOWN_NAMES = 5


class SkippedEntries:
    """The entries one search skipped by ignore or hidden rules, in first-seen order
    (deduplicated: a run started again reports them again; at most ``SKIPPED_KEEP``)."""

    def __init__(self) -> None:
        self.paths: dict[str, None] = {}
        self.overflowed = False

    def __call__(self, message: str) -> None:
        """Take one ripgrep debug message (``engine.run_ripgrep``'s ``on_debug``)."""
        found = _IGNORING.match(message)
        if found is None:
            return
        path = found.group(1)
        if posixpath.basename(path) in GLOB_VCS_EXCLUDES:
            return
        if len(self.paths) >= SKIPPED_KEEP and path not in self.paths:
            self.overflowed = True
            return
        self.paths.setdefault(path, None)


def hidden_component(relative: str) -> bool:
    """Whether a ``/``-separated path relative to the working directory has a component
    that ripgrep treats as hidden (a name starting with ``.``, other than ``.`` and ``..``)."""
    return any(part.startswith(".") and part not in (".", "..") for part in relative.split("/"))


def skipped_note(count: int, more: bool, names: list[str]) -> str:
    """The line below a ``grep`` result when ignore or hidden rules skipped files:
    ``(<n> files were not searched: ignored or hidden (<names>); name one as path to search
    it.)`` — ``<n>`` is ``more than <n>`` when the count stopped early; ``names`` are the
    skipped files and directories (``dir/``) as shown, the first five, then ``…``."""
    many = f"more than {count}" if more else str(count)
    noun = "file was" if count == 1 and not more else "files were"
    listed = ", ".join(names[:_SHOWN_NAMES]) + (", …" if len(names) > _SHOWN_NAMES else "")
    return f"({many} {noun} not searched: ignored or hidden ({listed}); name one as path to search it.)"
