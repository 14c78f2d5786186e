"""What the command line turns into tool arguments: text given as bytes, numbers given as
words.

* ``utf8_text`` — an argument or stdin must be UTF-8; otherwise the command says what is wrong
  with the bytes exactly as ``read`` says it of a file (DEVIATIONS D6's detail: which byte,
  at which offset, on which line) instead of passing lone surrogates on to the tool.
* ``JsonNumber`` — ``--offset``/``--limit`` are JSON numbers, read as the reference reads
  them (``core.jsonvalue.parse_json``: ``1e2`` is 100, ``1.0`` is 1, ``-0`` is negative zero,
  which the registry refuses as not losslessly JSON-serializable, docs/JSON-NUMBERS.md).

The callers turn ``ValueError`` into the command's usage failure (exit status 2). No tool
logic here: the values go to the registry unchanged.
"""

from __future__ import annotations

import os
from typing import Any

import click

from ..core.jsonvalue import parse_json
from ..fs.text import NotTextError, decode_utf8

__all__ = ("JsonNumber", "utf8_bytes", "utf8_text")


def utf8_bytes(source: str, raw: bytes) -> str:
    """``raw`` decoded as strict UTF-8 (a BOM and NUL bytes are kept: they are content).

    :param source: what the bytes are, for the message (``stdin``, ``--content``, a path)
    :raises ValueError: ``<source>: invalid UTF-8 text (byte 0xE9 at offset 3, line 1)``
    """
    try:
        return decode_utf8(raw)
    except NotTextError as exc:
        raise ValueError(f"{source}: {exc.message(True)}") from None


def utf8_text(source: str, value: str) -> str:
    """A command-line argument as UTF-8 text. Python decodes argv with ``surrogateescape``:
    bytes that are not UTF-8 arrive as lone surrogates, and are reported as bytes here.

    :raises ValueError: as ``utf8_bytes``, for the argument's original bytes
    """
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return utf8_bytes(source, os.fsencode(value))
    return value


class JsonNumber(click.ParamType):
    """A JSON number literal, as ``JSON.parse`` reads it (an ``int``, or a ``float``).

    :param takes: what the option takes, said when a value is not a number
        (``"the 1-based first line"``)
    :param example: a value it takes (``"10"``)
    """

    name = "number"

    def __init__(self, takes: str = "a number", example: str = "10") -> None:
        self.takes, self.example = takes, example

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return value
        try:
            number = parse_json(value)
        except (ValueError, RecursionError):
            number = None
        if isinstance(number, bool) or not isinstance(number, (int, float)):
            self.fail(f"{value!r} is not a number: give {self.takes} (a JSON number, e.g. {self.example})", param, ctx)
        return number
