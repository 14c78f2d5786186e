"""``read`` of a Jupyter notebook: its cell view (DEVIATIONS F1; docs/NOTEBOOKS.md).

In the ``default`` profile a ``.ipynb`` file is shown as ``notebook.view`` renders it — cells,
sources, outputs as text, images as one line each — windowed and capped as any file (``offset``
and ``limit`` count the view's lines; the same byte cap and footers), in an envelope of
``<type>notebook</type>``. Where the deployment takes images (``read_image`` is loaded: the
``image_admission`` service), the image outputs on the shown lines follow as image content, each
checked as ``read_image`` checks an image file, at most ``IMAGES_PER_READ`` of them.

A file over the size limit, or one that is not a notebook (not JSON, no ``cells`` array) is
shown as its text, as in the ``reference`` profile, with a note saying why. The observation is
recorded as for any read: ``edit`` and ``write`` work on the notebook's JSON text, as on any file.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio.to_thread

from ..core.tools import ContentBlock, image_block, text_block
from ..fs.window import ReadWindow, window_whole
from ..notebook import NotNotebook, NotebookView, parse, render
from .read_render import format_read_output

__all__ = (
    "IMAGES_PER_READ",
    "NotShownAsCells",
    "ON_LOOP_MAX_CHARS",
    "not_a_notebook_note",
    "notebook_blocks",
    "too_big_note",
)

IMAGES_PER_READ = 20
"""image outputs one read returns as image content at most (Anthropic's API lowers its per-image
size cap for a request holding more than 20 images)"""

ON_LOOP_MAX_CHARS = 256 * 1024
"""a notebook text of more characters is parsed and rendered in a worker thread"""


class NotShownAsCells(Exception):
    """The file is read as text instead: ``note`` is the line saying why."""

    def __init__(self, note: str) -> None:
        super().__init__(note)
        self.note = note


def too_big_note(size: int, limit: int) -> str:
    """F1: the note of a notebook over the size limit of the cell view."""
    return f"(This notebook is {size} bytes, more than the {limit}-byte limit of the cell view: shown as its JSON text.)"


def not_a_notebook_note(detail: str) -> str:
    """F1: the note of a ``.ipynb`` file that is not a notebook."""
    return f"(This .ipynb file is not a notebook ({detail}): shown as its text.)"


def _view(text: str) -> NotebookView:
    """Parse and render (pure). :raises NotShownAsCells: not a notebook"""
    try:
        return render(parse(text))
    except NotNotebook as exc:
        detail = "not valid JSON" if exc.reason == "json" else exc.detail
        raise NotShownAsCells(not_a_notebook_note(detail)) from None


async def notebook_blocks(text: str, display: str, window: ReadWindow, *, admission: Any) -> list[ContentBlock]:
    """The content of a ``read`` of the notebook whose text is ``text``.

    :param window: the read's offset, limit and caps, applied to the view's lines
    :param admission: the context's ``image_admission`` service, or ``None`` when the deployment
        takes no images (the image outputs are then placeholders only, and a note says so)
    :raises NotShownAsCells: not a notebook (the caller shows the text, with the note)
    :raises FsError: ``offset <n> is out of range for "<dp>" (<total> lines)`` (of the view)
    """
    if len(text) > ON_LOOP_MAX_CHARS:
        view = await anyio.to_thread.run_sync(_view, text)
    else:
        view = _view(text)
    result = window_whole(view.text, window, display)
    shown = [image for image in view.images if result.offset <= image.line < result.offset + result.count()]
    notes: list[str] = []
    blocks: list[ContentBlock] = []
    if shown and admission is None:
        notes.append(f"({_placeholders(len(shown))}: image reads are not enabled in this deployment.)")
    elif shown:
        blocks, notes = await _images(shown, admission)
    return [text_block(format_read_output(display, result, kind="notebook", notes=notes)), *blocks]


def _placeholders(n: int) -> str:
    if n == 1:
        return "1 image output is shown as a placeholder only"
    return f"{n} image outputs are shown as placeholders only"


async def _images(shown: list[Any], admission: Any) -> tuple[list[ContentBlock], list[str]]:
    """The image blocks of ``shown`` that pass ``read_image``'s checks (within the per-read
    count and byte caps), and the notes that say which lines they belong to and why others
    are not shown."""
    blocks: list[ContentBlock] = []
    sent: list[int] = []
    refused: list[str] = []
    budget = admission.max_message_bytes
    check: Callable[[bytes, str], str | None] = admission.check
    for image in shown:
        if len(blocks) >= IMAGES_PER_READ:
            refused.append(f"(The image of line {image.line} is not shown: one read returns at most "
                           f"{IMAGES_PER_READ} images; read from offset={image.line} for it.)")
            continue
        reason = await anyio.to_thread.run_sync(check, image.data, image.media_type)
        if reason is None and len(image.data) > budget:
            reason = f"this read's images would pass the {admission.max_message_bytes}-byte limit"
        if reason is not None:
            refused.append(f"(The image of line {image.line} is not shown: {reason})")
            continue
        budget -= len(image.data)
        blocks.append(image_block(image.data, image.media_type))
        sent.append(image.line)
    notes = []
    if sent:
        lines = ", ".join(str(line) for line in sent)
        notes.append(f"(The image{'s' if len(sent) > 1 else ''} of line{'s' if len(sent) > 1 else ''} {lines} "
                     f"follow{'' if len(sent) > 1 else 's'} as image content.)")
    return blocks, notes + refused
