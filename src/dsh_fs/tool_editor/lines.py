"""The lines a ``view`` shows, gathered from a file's text in chunks (docs/design/EDITING-FACES-DESIGN.md §3.2).
Pure: no I/O.

``LineCollector`` is fed decoded chunks (chunk boundaries carry no meaning) and keeps only the
lines of the requested range, and of those only as many characters as the view can show
(``keep_chars``): a view of three lines of a 100 MB file holds three lines, not the file. It
counts every line, in one of the two line models of the faces:

* ``content`` (Anthropic's face, and ``str_replace_editor`` in the default profile, E21): a
  final line break ends the last line (``read``'s numbering, REFERENCE-SPEC §4.6.2);
* ``split`` (the reference's ``str_replace_editor``): the pieces of ``text.split("\\n")``, so a
  final line break leaves an empty last line.

With ``crlf=True`` a CR right before a LF is dropped (``fs.text.normalize``); any other CR is text.
What it returns equals slicing the lines of the whole text, cut at ``keep_chars`` characters of
kept content — enough for any view clipped at that many characters or UTF-16 units.
"""

from __future__ import annotations

from typing import Literal

__all__ = ("LineCollector", "LineModel")

LineModel = Literal["content", "split"]


class LineCollector:
    """Lines ``first``..``last`` (1-based, inclusive; ``last=None``: to the end) of a text fed in
    chunks, and the number of lines.

    :param keep_chars: stop keeping lines once the kept ones hold more than this many characters
        (a line itself is kept to at most ``keep_chars + 1`` characters); ``None``: keep all
    """

    def __init__(self, first: int, last: int | None, *, model: LineModel, crlf: bool,
                 keep_chars: int | None) -> None:
        self.first = first
        self.last = last
        self.model = model
        self.crlf = crlf
        self.keep = keep_chars
        self.kept: list[str] = []
        self.kept_chars = 0
        self.full = False
        """``keep_chars`` reached: no more lines are kept"""
        self.number = 1
        """the number of the line being read (pieces of ``split("\\n")``)"""
        self._line: list[str] = []
        self._line_chars = 0
        self._cut = False
        """the line being read was cut at ``keep_chars + 1`` characters"""
        self._last_char = ""

    def _wanted(self) -> bool:
        return not self.full and self.number >= self.first and (self.last is None or self.number <= self.last)

    def _take(self, part: str) -> None:
        if part:
            self._last_char = part[-1]
            if self._wanted():
                room = part if self.keep is None else part[: max(0, self.keep + 1 - self._line_chars)]
                self._cut = self._cut or len(room) < len(part)
                if room:
                    self._line.append(room)
                    self._line_chars += len(room)

    def _end_line(self, broken: bool) -> None:
        if self._wanted():
            line = "".join(self._line)
            if broken and self.crlf and self._last_char == "\r" and not self._cut:
                line = line[:-1]
            self.kept.append(line)
            self.kept_chars += len(line) + 1
            if self.keep is not None and self.kept_chars > self.keep:
                self.full = True
        self._line, self._line_chars, self._cut, self._last_char = [], 0, False, ""
        self.number += 1

    def feed(self, chunk: str) -> None:
        """Take the next chunk of the text."""
        start = 0
        while True:
            cut = chunk.find("\n", start)
            if cut < 0:
                self._take(chunk[start:])
                return
            self._take(chunk[start:cut])
            self._end_line(True)
            start = cut + 1

    def finish(self) -> tuple[list[str], int]:
        """The kept lines (from line ``first``) and the file's line count in the model."""
        if self.model == "content" and self._last_char == "":
            count = self.number - 1  # a final line break ends the last line; an empty text has none
        else:
            count = self.number
            self._end_line(False)
        return self.kept, count
