"""The PDF worker: a child process that extracts the text (and, when asked, page images) of one
PDF with PDFium (``pypdfium2``), inside memory and CPU limits (docs/PDF.md, "Bounded").

Run as ``python -I worker.py`` by ``tool_pdf.extract``; it imports nothing of dsh-fs (the
standard library, ``pypdfium2`` and, to encode page images, Pillow), so it starts fast.

Protocol: stdin is one JSON line (the request) followed by the PDF's bytes up to EOF; stdout is
one JSON object (the answer). Before reading anything the worker caps its own address space
(``RLIMIT_AS``, ``memory`` bytes) and CPU time (``RLIMIT_CPU``, ``cpu`` seconds): a PDF that
decompresses into gigabytes or loops in the parser fails here, in this process, and the parent
reports it. Request::

    {"first": 1, "last": 20, "max_bytes": 51200, "render": null | {"dimension": 2000, "bytes": 3670016},
     "memory": 1073741824, "cpu": 30}

Answer: ``{"pages": <count>, "items": [{"page": n, "text": "…", "objects": k?, "image": "<base64 JPEG>"?}]}``
(pages ``first``..``last`` in order, stopping after the first page whose text passes ``max_bytes``
in all; ``objects``, the page's object count, for a page without text, and its image when
``render`` asks for one), or ``{"error": "<kind>", "detail": "…"}`` with kind ``password``, ``damaged``,
``memory`` or ``range`` (``first`` past the last page).

``DSH_FS_PDF_WORKER_HOLD``: when set, the worker reads its input and then waits until it is
killed (tests use it to hold a call open: only the parent's time limit or an abort ends it).
"""

from __future__ import annotations

import base64
import io
import json
import os
import resource
import sys
import time
from typing import Any

__all__ = ("extract", "main")

def _limit(memory: int, cpu: int) -> None:
    """Cap this process's address space (bytes) and CPU time (seconds: ``SIGXCPU`` then, a second
    later, ``SIGKILL``), never above the limits it inherited (a server run under ``ulimit -v``
    keeps its own)."""
    for which, soft, hard in ((resource.RLIMIT_AS, memory, memory), (resource.RLIMIT_CPU, cpu, cpu + 1)):
        _, inherited = resource.getrlimit(which)
        if inherited != resource.RLIM_INFINITY:
            soft, hard = min(soft, inherited), min(hard, inherited)
        resource.setrlimit(which, (soft, hard))


def _clean(text: str) -> str:
    """PDFium's page text as lines: CRLF and lone CR as LF, no control characters but tab and
    line break, no trailing spaces or blank lines at the end."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.isprintable():
        text = "".join(ch for ch in text if ch.isprintable() or ch in "\n\t")
    return "\n".join(line.rstrip() for line in text.split("\n")).strip("\n")


def _render(page: Any, dimension: int, max_bytes: int) -> bytes | None:
    """The page as a JPEG whose longer side is at most ``dimension`` pixels (about 150 dpi
    when that is smaller) and of at most ``max_bytes`` bytes (smaller and smaller until it fits;
    ``None`` when even a small copy does not)."""
    width, height = page.get_size()
    scale = min(150 / 72, dimension / max(width, height, 1))
    for _ in range(4):
        image = page.render(scale=scale).to_pil().convert("RGB")
        out = io.BytesIO()
        image.save(out, format="JPEG", quality=80)
        data = out.getvalue()
        if len(data) <= max_bytes:
            return data
        scale *= 0.7
    return None


def extract(data: bytes, request: dict[str, Any]) -> dict[str, Any]:
    """The answer for ``data`` (see the module docstring)."""
    import pypdfium2 as pdfium
    import pypdfium2.raw as raw

    try:
        document = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        message = str(exc)
        kind = "password" if "password" in message.lower() else "damaged"
        return {"error": kind, "detail": message}
    try:
        count = len(document)
        first = request["first"]
        last = min(request["last"], count)
        if first > count:
            return {"error": "range", "pages": count}
        render = request.get("render")
        budget = request["max_bytes"]
        items = []
        for number in range(first, last + 1):
            page = document[number - 1]
            try:
                textpage = page.get_textpage()
                text = _clean(textpage.get_text_range())[: request["max_bytes"] + 1]  # bounded: one cap and a char
                textpage.close()
                item: dict[str, Any] = {"page": number, "text": text}
                if not text.strip():
                    objects = raw.FPDFPage_CountObjects(page.raw)
                    item["objects"] = objects
                    if render is not None and objects:
                        image = _render(page, render["dimension"], render["bytes"])
                        if image is not None:
                            item["image"] = base64.b64encode(image).decode("ascii")
            finally:
                page.close()
            items.append(item)
            budget -= len(text.encode("utf-8")) + 1
            if budget < 0:
                break
        return {"pages": count, "items": items}
    finally:
        document.close()


def main() -> int:
    """Read the request and the PDF from stdin, answer on stdout."""
    stdin = sys.stdin.buffer
    header = stdin.readline(1 << 16)
    request = json.loads(header)
    _limit(request["memory"], request["cpu"])
    if os.environ.get("DSH_FS_PDF_WORKER_HOLD"):
        while stdin.read(1 << 16):
            pass
        while True:  # until the parent's time limit or abort kills this process
            time.sleep(3600)
    data = stdin.read()
    try:
        answer = extract(data, request)
    except MemoryError:
        answer = {"error": "memory", "detail": ""}
    except Exception as exc:  # PDFium refuses what it cannot parse in many ways: a damaged file
        answer = {"error": "damaged", "detail": f"{type(exc).__name__}: {exc}"}
    sys.stdout.write(json.dumps(answer))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
