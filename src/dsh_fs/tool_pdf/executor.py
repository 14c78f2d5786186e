"""The ``read_pdf`` executor (docs/PDF.md): gates, one stat, one bounded raw read, the worker,
the envelope, the observation.

Order: a blank ``file_path``; the ``.pdf`` extension; ``pages`` (Claude Code's texts) → resolve
(containment) → one stat (missing: ``fs/observed`` absent, then ``not found``; not a regular file)
→ the raw bytes, at most ``pdf_max_bytes`` (``FileSystem.read_bytes``: one ranged GET on S3) →
empty, no ``%PDF-`` header → the worker (``extract.run_worker``, in a child process) → images of
textless pages checked as ``read_image`` checks a file (where the deployment takes images) →
``fs/observed`` at the stat's version → the envelope (``render``) and the images.
"""

from __future__ import annotations

import base64
from typing import Any

import anyio
import anyio.to_thread

from ..core.context import Context
from ..core.errors import ToolInputError
from ..core.session import ToolExecution
from ..core.tools import ContentBlock, image_block, text_block
from ..fs.errors import not_found, not_regular_file
from ..fs.events import FS_OBSERVED
from ..fs.filesystem import FileSystem
from ..fs.media import extension_of
from ..tool_common.switches import ToolSwitches
from ..tool_fs.args import check_file_path
from ..tool_fs.shared import check_unicode
from . import texts
from .config import PdfConfig
from .extract import WorkerFailed, WorkerLimits, answer_limit, run_worker
from .pages import MAX_PAGES_PER_READ, invalid_pages, parse_pages, too_many_pages
from .render import Page, render

__all__ = ("ReadPdf", "ReadPdfError")

_HEADER_WITHIN = 1024
"""a PDF's ``%PDF-`` header may follow up to this many bytes of junk (the PDF spec's leniency)"""


class ReadPdfError(Exception):
    """A ``read_pdf`` refusal: a plain error (no ``{name, code}``), as ``read_image``'s."""


class ReadPdf:
    """The executor bound to one context and configuration."""

    def __init__(self, ctx: Context, config: PdfConfig) -> None:
        self.ctx = ctx
        self.config = config
        self.switches = ToolSwitches.of(ctx.profile)
        self.workers = anyio.CapacityLimiter(config.pdf_workers)

    @property
    def fs(self) -> FileSystem:
        return self.ctx.fs  # type: ignore[no-any-return]

    def _range(self, args: dict[str, Any]) -> tuple[int, int]:
        """The first and last page asked for (``last``: at most ``MAX_PAGES_PER_READ`` on).

        :raises ToolInputError: Claude Code's ``pages`` texts
        """
        pages = args.get("pages")
        if pages is None:
            return 1, MAX_PAGES_PER_READ
        wanted = parse_pages(pages)
        if wanted is None:
            raise ToolInputError(invalid_pages(pages))
        size = wanted.size()
        if size is None or size > MAX_PAGES_PER_READ:
            raise ToolInputError(too_many_pages(pages))
        return wanted.first, wanted.first + size - 1

    async def __call__(self, args: dict[str, Any], execution: ToolExecution) -> list[ContentBlock]:
        """Read pages of one PDF: ``[envelope text block, image blocks…]``.

        :raises ToolInputError: a blank ``file_path``; Claude Code's ``pages`` texts; D11
        :raises ReadPdfError: not a ``.pdf`` path, empty, not a PDF, encrypted, damaged, out of
            range, no text layer (without images), the worker's time or memory limit
        :raises FsError: from resolve, stat and the raw read (not found, not a regular file,
            outside the workspace, ``… bytes exceeds the <max>-byte limit``, aborted)
        """
        file_path: str = args["file_path"]
        check_file_path(file_path)
        if self.switches.unicode_arguments:
            check_unicode("file_path", file_path)
        if extension_of(file_path).lower() != ".pdf":
            raise ReadPdfError(texts.not_a_pdf_path(file_path))
        first, last = self._range(args)
        signal = execution.signal
        fs = self.fs
        target = await fs.resolve(file_path, cwd=execution.cwd, signal=signal)
        info = await fs.stat(target, signal=signal)
        display = target.display_path
        if info is None:
            self.ctx.emit(FS_OBSERVED, target, None, execution)
            raise not_found("read", display)
        if info.type != "file":
            raise not_regular_file("read", display)
        async with self.workers:  # at most pdf_workers PDFs' bytes held at once
            data = await fs.read_bytes(target, max_bytes=self.config.pdf_max_bytes, size=info.size, info=info,
                                       signal=signal)
            if not data:
                raise ReadPdfError(texts.in_file(display, texts.empty(display)))
            if b"%PDF-" not in data[:_HEADER_WITHIN]:
                raise ReadPdfError(texts.in_file(display, texts.not_a_pdf(display)))
            answer = await self._extract(data, first, last, display, execution)
        blocks = await self._answer(answer, display, first)
        self.ctx.emit(FS_OBSERVED, target, info.version, execution)
        return blocks

    async def _extract(self, data: bytes, first: int, last: int, display: str, execution: ToolExecution) -> dict[str, Any]:
        admission = self.ctx.image_admission if self.ctx.has("image_admission") else None
        cap = self.config.pdf_max_output_bytes
        request: dict[str, Any] = {"first": first, "last": last, "max_bytes": cap, "render": None}
        if admission is not None:
            request["render"] = {"dimension": admission.config.image_max_dimension, "bytes": admission.max_bytes}
        image_bytes = admission.max_bytes if admission is not None else 0
        limits = WorkerLimits(memory=self.config.pdf_worker_memory, seconds=self.config.pdf_worker_seconds,
                              answer_bytes=answer_limit(last - first + 1, cap + 1, image_bytes))
        try:
            answer = await run_worker(data, request, limits, signal=execution.signal)
        except WorkerFailed as failed:
            if failed.kind == "time":
                raise ReadPdfError(texts.time_limit(display, self.config.pdf_worker_seconds)) from None
            if failed.kind == "memory":
                raise ReadPdfError(texts.memory_limit(display, self.config.pdf_worker_memory)) from None
            raise ReadPdfError(texts.worker_failed(display, failed.how, self.config.pdf_worker_memory)) from None
        error = answer.get("error")
        if error == "password":
            raise ReadPdfError(texts.in_file(display, texts.PASSWORD))
        if error == "range":
            raise ReadPdfError(texts.out_of_range(display, first, int(answer.get("pages", 0))))
        if error == "memory":
            raise ReadPdfError(texts.memory_limit(display, self.config.pdf_worker_memory))
        if error is not None or not answer.get("items"):
            raise ReadPdfError(texts.in_file(display, texts.DAMAGED))
        return answer

    async def _answer(self, answer: dict[str, Any], display: str, first: int) -> list[ContentBlock]:
        """The envelope and the image blocks of the worker's ``answer``."""
        admission = self.ctx.image_admission if self.ctx.has("image_admission") else None
        count = int(answer["pages"])
        pages = [Page(int(item["page"]), str(item["text"]), item.get("objects")) for item in answer["items"]]
        images: dict[int, str | None] = {}
        payloads: dict[int, bytes] = {}
        for item in answer["items"]:
            if "image" in item and admission is not None:
                data = base64.b64decode(item["image"])
                reason = await anyio.to_thread.run_sync(admission.check, data, "image/jpeg")
                images[int(item["page"])] = reason
                if reason is None:
                    payloads[int(item["page"])] = data
        if admission is None and all(not page.text.strip() and page.objects for page in pages):
            raise ReadPdfError(texts.no_text(display, pages[0].number, pages[-1].number))
        shown = render(display, count, pages, max_bytes=self.config.pdf_max_output_bytes, images=images,
                       images_enabled=admission is not None)
        blocks = [text_block(shown.text)]
        blocks += [image_block(payloads[number], "image/jpeg") for number in shown.shown if number in payloads]
        return blocks
