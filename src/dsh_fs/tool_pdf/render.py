"""The text ``read_pdf`` returns: page markers, each page's text, the byte cap and the footer
(docs/PDF.md). Pure.

.. code-block:: text

    <path>/w/report.pdf</path>
    <type>pdf</type>
    <content>
    --- page 50 of 200 ---
    …the page's text…

    --- page 51 of 200 ---
    [no text layer: the page follows as an image]

    (Showing pages 50-51 of 200. Use pages="52-71" to continue.)
    </content>

Pages are added while their text fits ``max_bytes`` (UTF-8, as ``read``'s cap counts); a first
page over it is cut and says so. The footer names the next range (at most
``MAX_PAGES_PER_READ`` pages), or ends the document.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .pages import MAX_PAGES_PER_READ

__all__ = ("Page", "Rendered", "cut_utf8", "render")


@dataclass(frozen=True, slots=True)
class Page:
    """One page of the worker's answer."""

    number: int
    text: str
    objects: int | None = None
    """for a page without text: how many objects it draws (0: a blank page)"""


@dataclass(frozen=True, slots=True)
class Rendered:
    """The envelope and the pages it shows."""

    text: str
    shown: tuple[int, ...]
    """the numbers of the pages shown, in order"""


def cut_utf8(text: str, max_bytes: int) -> str:
    """The longest prefix of ``text`` of at most ``max_bytes`` UTF-8 bytes (whole characters)."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= max_bytes:
        return text
    return data[:max_bytes].decode("utf-8", "ignore")


def _next(last: int, count: int) -> str:
    """The ``pages`` value that continues after page ``last``."""
    first = last + 1
    end = min(count, last + MAX_PAGES_PER_READ)
    return str(first) if end == first else f"{first}-{end}"


def _body(page: Page, images: Mapping[int, str | None], enabled: bool) -> str:
    if page.text.strip():
        return page.text
    if not page.objects:
        return "[blank page]"
    if page.number in images:
        reason = images[page.number]
        if reason is None:
            return "[no text layer: the page follows as an image]"
        return f"[no text layer; its image is not shown: {reason}]"
    if enabled:
        return "[no text layer; its image could not be made small enough to send]"
    return "[no text layer (scanned or image-only page): image reads are not enabled in this deployment]"


def render(display: str, count: int, pages: Sequence[Page], *, max_bytes: int,
           images: Mapping[int, str | None], images_enabled: bool) -> Rendered:
    """The envelope of a read of ``pages`` (consecutive, from the range's first page).

    :param count: the document's number of pages
    :param max_bytes: the cap on the pages' text (UTF-8 bytes)
    :param images: page number → ``None`` when its image is sent, else why it is not (pages
        without text whose image the worker made)
    :param images_enabled: whether the deployment takes images (says why a textless page has
        no image)
    """
    parts: list[str] = []
    shown: list[int] = []
    used = 0
    capped = False
    for page in pages:
        body = _body(page, images, images_enabled)
        size = len(body.encode("utf-8", "surrogatepass"))
        if used + size > max_bytes:
            capped = True
            if shown:
                break
            kept = cut_utf8(body, max_bytes)
            body = (f"{kept}\n[… the rest of this page ({size - len(kept.encode('utf-8', 'surrogatepass'))} bytes) "
                    f"is not shown: it is over the {max_bytes}-byte limit of one read]")
        parts.append(f"--- page {page.number} of {count} ---\n{body}")
        shown.append(page.number)
        used += size
        if capped:
            break
    first, last = shown[0], shown[-1]
    span = f"pages {first}-{last}" if first != last else f"page {first}"
    if last >= count:
        footer = f"(End of file - total {count} pages)"
    elif capped:
        footer = f'(Output capped. Showing {span} of {count}. Use pages="{_next(last, count)}" to continue.)'
    else:
        footer = f'(Showing {span} of {count}. Use pages="{_next(last, count)}" to continue.)'
    body = "\n\n".join(parts)
    return Rendered(f"<path>{display}</path>\n<type>pdf</type>\n<content>\n{body}\n\n{footer}\n</content>", tuple(shown))
