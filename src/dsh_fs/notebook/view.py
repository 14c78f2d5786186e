"""The cell view of a notebook that ``read`` shows (docs/NOTEBOOKS.md; DEVIATIONS F1). Pure.

A parsed notebook (``document.parse``) becomes lines of text — never the raw JSON, whose
escaped sources and base64 outputs cost a model thousands of tokens for one plot:

.. code-block:: text

    <notebook language="python" cells="2">
    <cell id="intro" type="markdown">
    # Title
    </cell>
    <cell id="load" type="code" execution_count="3">
    df.describe()
    </cell>
    <output type="execute_result">
           a
    count  3
    </output>
    <output type="display_data">
    [image/png image, 640x480 px, 23456 bytes]
    </output>

The shape follows Claude Code's notebook reads (its ``Read`` tool renders a cell as
``<cell id="…">`` with ``cell-<n>`` for cells without an id, the type unless it is code, outputs
after the source); the line-per-tag layout is ours, so that ``read``'s line numbers and
``offset``/``limit`` page through the view as through any file.

Outputs are text: ``stream`` text, ``text/plain`` (or ``text/markdown``, ``application/json``)
of results and displays, an error's name, value and traceback (terminal colour codes removed).
A carriage return keeps what a terminal would show (progress bars). An output over
``ViewLimits.output_lines`` lines keeps its first and last lines; over
``ViewLimits.output_chars`` characters it is cut; each cut says how much is not shown. Images
(``image/png``, ``image/jpeg``, ``image/gif``, ``image/webp``) are one placeholder line each
(type, size in pixels when the header says, bytes); ``NotebookView.images`` carries their bytes
for a caller that shows them as image content. Any other data (HTML, SVG, widgets) is one line
naming its type and size.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass, field
from typing import Any

from ..fs.image_header import read_header
from .document import cell_name, language, source_text

__all__ = ("IMAGE_TYPES", "NotebookView", "ViewImage", "ViewLimits", "render")

IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
"""output data types shown as images (the four every vendor API accepts), in preference order"""

_TEXT_TYPES = ("text/plain", "text/markdown", "application/json")
"""output data types shown as text, in preference order (the first present is shown)"""

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()*+][0-~]|\x1b[@-Z\\-_]")
"""terminal escape sequences (CSI, OSC, character set designations, two-byte escapes):
tracebacks are full of colour codes"""


@dataclass(frozen=True, slots=True, kw_only=True)
class ViewLimits:
    """Caps on what one output contributes to the view."""

    output_lines: int = 40
    """an output of more lines shows its first ``output_lines - output_tail`` and last
    ``output_tail`` lines, with a line saying how many are left out"""
    output_tail: int = 10
    """lines kept at the end of a long output (a traceback's last frame, a loop's last lines)"""
    output_chars: int = 8000
    """an output's shown text stops at the line that would pass this many characters"""


@dataclass(frozen=True, slots=True)
class ViewImage:
    """An image output: its placeholder line and its bytes."""

    line: int
    """1-based line of the view holding its placeholder"""
    cell: str
    """the name of the cell it belongs to (``cell_name``)"""
    media_type: str
    data: bytes
    """the decoded image file (PNG/JPEG/GIF/WebP bytes)"""


@dataclass(slots=True)
class NotebookView:
    """What ``render`` makes: the lines (no line breaks inside) and the image outputs."""

    lines: list[str] = field(default_factory=list)
    images: list[ViewImage] = field(default_factory=list)
    cells: int = 0

    @property
    def text(self) -> str:
        """The lines joined by ``"\\n"`` (the text ``read`` windows)."""
        return "\n".join(self.lines)


def _quote(value: str) -> str:
    """An attribute value: JSON string syntax (quotes and control characters escaped)."""
    return json.dumps(value, ensure_ascii=False)


def _multi(value: Any) -> str:
    """nbformat's multiline string: a string or a list of strings; anything else is empty."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(part for part in value if isinstance(part, str))
    return ""


def _screen_lines(text: str) -> list[str]:
    """``text`` as a terminal shows it: CRLF is a line break, a lone CR returns to the line's
    start (what follows the last one is kept), escape sequences are dropped; no final empty
    line for a text ending in a line break."""
    text = _ANSI.sub("", text.replace("\r\n", "\n"))
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.rsplit("\r", 1)[-1] if "\r" in line else line for line in lines]


def _capped(lines: list[str], limits: ViewLimits) -> list[str]:
    """``lines`` within the output caps, each cut said in a ``[…]`` line."""
    total = len(lines)
    if total > limits.output_lines:
        tail = min(limits.output_tail, limits.output_lines - 1)
        head = limits.output_lines - tail
        left = total - head - tail
        lines = [*lines[:head], f"[… {left} more lines of this output not shown …]", *lines[total - tail:]]
    kept: list[str] = []
    used = 0
    for index, line in enumerate(lines):
        used += len(line) + 1
        if used > limits.output_chars:
            rest = sum(len(rest) + 1 for rest in lines[index:])
            kept.append(f"[… {rest} more characters of this output not shown …]")
            break
        kept.append(line)
    return kept


def _image_line(media_type: str, data: bytes) -> str:
    header = read_header(data)
    dims = f", {header.width}x{header.height} px" if header is not None else ""
    return f"[{media_type} image{dims}, {len(data)} bytes]"


class _Renderer:
    def __init__(self, limits: ViewLimits) -> None:
        self.limits = limits
        self.view = NotebookView()

    def add(self, line: str) -> None:
        self.view.lines.append(line)

    def text(self, text: str) -> None:
        self.view.lines.extend(_capped(_screen_lines(text), self.limits))

    def data(self, bundle: Any, cell: str) -> None:
        """The shown parts of a mime bundle: its first text type and each image type, then
        one line for what else it holds."""
        if not isinstance(bundle, dict):
            return
        shown = set()
        for kind in _TEXT_TYPES:
            if kind in bundle:
                value = bundle[kind]
                self.text(_multi(value) if kind != "application/json" else json.dumps(value, ensure_ascii=False))
                shown.add(kind)
                break
        for kind in IMAGE_TYPES:
            if kind not in bundle:
                continue
            shown.add(kind)
            try:
                data = base64.b64decode("".join(_multi(bundle[kind]).split()), validate=True)
            except (binascii.Error, ValueError):
                self.add(f"[{kind} image: its data is not valid base64]")
                continue
            self.add(_image_line(kind, data))
            self.view.images.append(ViewImage(len(self.view.lines), cell, kind, data))
        others = [kind for kind in bundle if kind not in shown]
        if others:
            sizes = ", ".join(f"{kind} ({len(_multi(bundle[kind]))} characters)" for kind in others)
            self.add(f"[not shown: {sizes}]")

    def output(self, output: Any, cell: str) -> None:
        if not isinstance(output, dict):
            return
        kind = output.get("output_type")
        kind = kind if isinstance(kind, str) else "unknown"
        if kind == "stream":
            name = output.get("name")
            self.add(f'<output type="stream" name={_quote(name if isinstance(name, str) else "stdout")}>')
            self.text(_multi(output.get("text")))
        elif kind in ("execute_result", "display_data"):
            self.add(f"<output type={_quote(kind)}>")
            self.data(output.get("data"), cell)
        elif kind == "error":
            self.add('<output type="error">')
            name, value = output.get("ename"), output.get("evalue")
            head = f"{name if isinstance(name, str) else ''}: {value if isinstance(value, str) else ''}"
            trace = output.get("traceback")
            frames = [frame for frame in trace if isinstance(frame, str)] if isinstance(trace, list) else []
            self.text("\n".join([head, *frames]))
        else:
            self.add(f"<output type={_quote(kind)}>")
        self.add("</output>")

    def cell(self, cell: dict[str, Any], index: int) -> None:
        name = cell_name(cell, index)
        kind = cell.get("cell_type")
        kind = kind if isinstance(kind, str) else "unknown"
        count = cell.get("execution_count")
        counted = ""
        if kind == "code" and isinstance(count, int) and not isinstance(count, bool):
            counted = f" execution_count={_quote(str(count))}"
        self.add(f"<cell id={_quote(name)} type={_quote(kind)}{counted}>")
        source = source_text(cell).replace("\r\n", "\n").replace("\r", "\n")
        lines = source.split("\n")
        if lines[-1] == "":
            lines.pop()
        self.view.lines.extend(lines)
        self.add("</cell>")
        outputs = cell.get("outputs")
        if kind == "code" and isinstance(outputs, list):
            for output in outputs:
                self.output(output, name)


def render(document: dict[str, Any], limits: ViewLimits | None = None) -> NotebookView:
    """The cell view of ``document`` (a ``document.parse`` result).

    :param limits: the output caps (``ViewLimits()`` by default)
    :return: the lines, the image outputs (each with the line of its placeholder) and the
        number of cells
    """
    renderer = _Renderer(limits or ViewLimits())
    cells = document["cells"]
    renderer.add(f"<notebook language={_quote(language(document))} cells=\"{len(cells)}\">")
    for index, cell in enumerate(cells):
        renderer.cell(cell, index)
    renderer.view.cells = len(cells)
    return renderer.view
