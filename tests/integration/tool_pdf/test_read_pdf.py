"""``read_pdf`` through the registry (docs/PDF.md): real PDFs written by ``tests/pdfkit.py`` (and
encrypted by pypdf), read by PDFium in the worker process — page ranges with Claude Code's
``pages`` texts, the envelope and its footer, pages without text as images where the deployment
takes images, every refusal, the observation, the worker's time limit and an abort. The memory
provider too; S3: tests/s3/test_s3_formats.py; bombs: tests/robustness/tool_pdf/."""

from __future__ import annotations

import io
import os

import anyio
import pytest
from PIL import Image
from pdfkit import Scan, encrypted, pdf, text_pages

import dsh_fs
from dsh_fs import Session, create_context
from dsh_fs.core.session import ToolExecution
from dsh_fs.core.signal import AbortSignal
from dsh_fs.fs_memory import MemoryFileSystem

pytestmark = pytest.mark.anyio


def put(ws: str, name: str, data: bytes) -> str:
    path = os.path.join(ws, name)
    with open(path, "wb") as handle:
        handle.write(data)
    return path


async def call(ctx: dsh_fs.Context, path: str, pages: str | None = None, session: Session | None = None) -> dsh_fs.ToolResult:
    args = {"file_path": path} if pages is None else {"file_path": path, "pages": pages}
    return await ctx.tools.execute("read_pdf", args, session=session)


def envelope(path: str, body: str, footer: str) -> str:
    return f"<path>{path}</path>\n<type>pdf</type>\n<content>\n{body}\n\n{footer}\n</content>"


def page_text(n: int, words: int = 40) -> str:
    return f"Page {n}\n" + " ".join(f"word{n}-{i}" for i in range(words))


def test_read_pdf_is_offered_only_when_asked_for(ws: str) -> None:
    assert "read_pdf" not in create_context(cwd=ws).tools.names()
    ctx = create_context(cwd=ws, pdfs=True)
    assert ctx.tools.get("read_pdf").schema() == {"name": "read_pdf", "description": (
        "Read the text of a PDF file, page by page. Use the pages parameter to read a page range "
        '(e.g., pages: "1-5"); without it the first pages are read. The text of each page follows a '
        '"--- page N of M ---" line, and a footer says how to continue. Pages without a text layer '
        "(scans) are returned as images when image reads are enabled."),
        "parameters": {"type": "object", "properties": {
            "file_path": {"type": "string", "description": "Path to the PDF file, resolved by the filesystem backend."},
            "pages": {"type": "string", "description": 'Page range for PDF files (e.g., "1-5", "3", "10-20"). Only '
                      "applicable to PDF files. Maximum 20 pages per request."}},
            "required": ["file_path"]}}
    assert ctx.tools.is_parallel("read_pdf", {"file_path": "a.pdf"})
    with pytest.raises(ValueError, match="pdf_workers needs pdfs=True"):
        create_context(cwd=ws, pdf_workers=1)
    with pytest.raises(ValueError, match="read-pdf: pdf_workers must be a positive integer"):
        create_context(cwd=ws, pdfs=True, pdf_workers=0)


async def test_pages_of_text_with_markers_and_footers(ws: str) -> None:
    path = put(ws, "book.pdf", text_pages(200))
    ctx = create_context(cwd=ws, pdfs=True)
    one = await call(ctx, "book.pdf", "50")
    assert one.content == [{"type": "text", "text": envelope(
        path, f"--- page 50 of 200 ---\n{page_text(50)}", '(Showing page 50 of 200. Use pages="51-70" to continue.)')}]
    span = await call(ctx, "book.pdf", "199-200")
    assert span.text == envelope(path, f"--- page 199 of 200 ---\n{page_text(199)}\n\n--- page 200 of 200 ---\n"
                                       f"{page_text(200)}", "(End of file - total 200 pages)")
    first = await call(ctx, "book.pdf")
    assert first.text.endswith('(Showing pages 1-20 of 200. Use pages="21-40" to continue.)\n</content>')
    assert first.text.count("--- page ") == 20
    small = put(ws, "small.pdf", pdf(["Hello (world) café\n\ttabbed  ", "Two"]))
    assert (await call(ctx, "small.pdf")).text == envelope(
        small, "--- page 1 of 2 ---\nHello (world) café\n\ttabbed\n\n--- page 2 of 2 ---\nTwo", "(End of file - total 2 pages)")


async def test_claude_codes_pages_refusals(ws: str) -> None:
    put(ws, "book.pdf", text_pages(3))
    ctx = create_context(cwd=ws, pdfs=True)
    for pages, text in [
        ("x", 'Invalid pages parameter: "x". Use formats like "1-5", "3", or "10-20". Pages are 1-indexed.'),
        ("0", 'Invalid pages parameter: "0". Use formats like "1-5", "3", or "10-20". Pages are 1-indexed.'),
        ("1-21", 'Page range "1-21" exceeds maximum of 20 pages per request. Please use a smaller range.'),
        ("2-", 'Page range "2-" exceeds maximum of 20 pages per request. Please use a smaller range.'),
    ]:
        result = await call(ctx, "book.pdf", pages)
        assert (result.is_error, result.text, result.error) == (True, "Error: " + text, None)
    beyond = await call(ctx, "book.pdf", "4-5")
    assert beyond.text == f'Error: cannot read "{ws}/book.pdf": page 4 is out of range (the PDF has 3 pages)'
    put(ws, "one.pdf", text_pages(1))
    assert (await call(ctx, "one.pdf", "2")).text.endswith("(the PDF has 1 page)")
    assert (await call(ctx, "book.pdf", "3-20")).text.endswith("(End of file - total 3 pages)\n</content>")
    assert (await call(ctx, "book.pdf", "1-20")).text.endswith("(End of file - total 3 pages)\n</content>")  # 20: allowed


async def test_scanned_pages_are_images_where_the_deployment_takes_them(ws: str) -> None:
    path = put(ws, "scan.pdf", pdf(["Cover", Scan(120, 160, (40, 80, 120)), None]))
    with_images = await call(create_context(cwd=ws, pdfs=True, images=True), "scan.pdf")
    text, image = with_images.content
    assert text["text"] == envelope(path, "--- page 1 of 3 ---\nCover\n\n--- page 2 of 3 ---\n[no text layer: the page "
                                          "follows as an image]\n\n--- page 3 of 3 ---\n[blank page]",
                                    "(End of file - total 3 pages)")
    assert image["mimeType"] == "image/jpeg"
    import base64

    with Image.open(io.BytesIO(base64.b64decode(image["data"]))) as shown:
        assert max(shown.size) <= 2000 and shown.format == "JPEG"
        red, green, blue = shown.convert("RGB").getpixel((shown.width // 2, shown.height // 2))
        assert abs(red - 40) < 12 and abs(green - 80) < 12 and abs(blue - 120) < 12
    without = await call(create_context(cwd=ws, pdfs=True), "scan.pdf")
    assert without.images == [] and "[no text layer (scanned or image-only page): image reads are not enabled" in without.text
    put(ws, "scans.pdf", pdf([Scan(), Scan()]))
    refused = await call(create_context(cwd=ws, pdfs=True), "scans.pdf")
    assert refused.text == (f'Error: cannot read "{ws}/scans.pdf": pages 1-2 have no text layer (scanned or image-only); '
                            "read_pdf shows such pages as images only where image reads are enabled "
                            "(create_context(images=True) or dsh-fs mcp --images)")
    put(ws, "scan1.pdf", pdf([Scan()]))
    assert "page 1 has no text layer" in (await call(create_context(cwd=ws, pdfs=True), "scan1.pdf")).text
    small = create_context(cwd=ws, pdfs=True, images=True, image_max_dimension=40)
    assert (await call(small, "scan.pdf", "2")).images[0]["mimeType"] == "image/jpeg"
    png_only = create_context(cwd=ws, pdfs=True, images=True, image_media_types=["image/png"])
    refused_type = await call(png_only, "scan.pdf", "2")
    assert refused_type.images == [] and (
        "[no text layer; its image is not shown: image/jpeg images are not accepted by this deployment]" in refused_type.text)


async def test_every_refusal_names_the_file(ws: str) -> None:
    ctx = create_context(cwd=ws, pdfs=True)
    put(ws, "empty.pdf", b"")
    put(ws, "fake.pdf", b"hello, not a pdf")
    put(ws, "locked.pdf", encrypted(pdf(["secret"])))
    put(ws, "broken.pdf", b"%PDF-1.4\n" + os.urandom(2000))
    os.mkdir(os.path.join(ws, "dir.pdf"))
    cases = {
        "empty.pdf": f'cannot read "{ws}/empty.pdf": PDF file is empty: {ws}/empty.pdf',
        "fake.pdf": f'cannot read "{ws}/fake.pdf": File is not a valid PDF (missing %PDF- header): {ws}/fake.pdf',
        "locked.pdf": f'cannot read "{ws}/locked.pdf": PDF is password-protected. Please provide an unprotected version.',
        "broken.pdf": f'cannot read "{ws}/broken.pdf": PDF file is corrupted or invalid.',
        "dir.pdf": f'cannot read "{ws}/dir.pdf": not a regular file',
        "missing.pdf": f'cannot read "{ws}/missing.pdf": not found',
        "notes.txt": 'cannot read "notes.txt": read_pdf only accepts .pdf paths',
        "../x.pdf": f'cannot resolve "{os.path.dirname(ws)}/x.pdf": outside the workspace "{ws}"',
        " ": "file_path must be a non-empty string",
    }
    surrogate = await call(ctx, "\ud800.pdf")
    assert surrogate.text == "Error: file_path must be valid Unicode text (lone surrogate U+D800 at index 0)"
    for name, text in cases.items():
        result = await call(ctx, name)
        assert (result.is_error, result.text) == (True, "Error: " + text), name
    junk = put(ws, "junk.pdf", b"x" * 100 + text_pages(1))
    assert not (await call(ctx, "junk.pdf")).is_error and junk
    capped = create_context(cwd=ws, pdfs=True, pdf_max_bytes=100)
    size = os.path.getsize(os.path.join(ws, "locked.pdf"))
    assert (await call(capped, "locked.pdf")).text == f'Error: cannot read "{ws}/locked.pdf": {size} bytes exceeds the 100-byte limit'


async def test_F6_read_of_a_pdf_says_how_to_read_it(ws: str) -> None:
    path = put(ws, "a.pdf", pdf(["x", Scan()]))
    plain = await create_context(cwd=ws).tools.execute("read", {"file_path": "a.pdf"})
    assert plain.text.startswith(f'Error: cannot read "{path}": binary file (NUL byte at offset')
    assert plain.text.endswith("\nHint: this is a PDF file; read shows text files only. PDF reads are not enabled in this "
                               "deployment (its operator can enable them: create_context(pdfs=True) or dsh-fs mcp --pdfs).")
    offered = await create_context(cwd=ws, pdfs=True).tools.execute("read", {"file_path": "a.pdf"})
    assert offered.text.endswith("\nHint: this is a PDF file; use the read_pdf tool to read its text.")
    reference = await create_context(cwd=ws, pdfs=True, profile="reference").tools.execute("read", {"file_path": "a.pdf"})
    assert reference.text == f'Error: cannot read "{path}": binary file'


async def test_a_pdf_read_is_a_read_for_the_policy(ws: str) -> None:
    put(ws, "a.pdf", text_pages(2))
    ctx, session = create_context(cwd=ws, pdfs=True), Session(cwd=ws)
    refused = await ctx.tools.execute("write", {"file_path": "a.pdf", "content": "x"}, session=session)
    assert "without reading it first" in refused.text
    assert not (await call(ctx, "a.pdf", "9", session)).is_error is False  # a failed read records nothing
    still = await ctx.tools.execute("write", {"file_path": "a.pdf", "content": "x"}, session=session)
    assert "without reading it first" in still.text
    assert not (await call(ctx, "a.pdf", "1", session)).is_error
    assert not (await ctx.tools.execute("write", {"file_path": "a.pdf", "content": "x"}, session=session)).is_error


async def test_the_byte_cap(ws: str) -> None:
    path = put(ws, "book.pdf", text_pages(5))
    ctx = create_context(cwd=ws, pdfs=True, pdf_max_output_bytes=len(page_text(1)) * 2 + 10)
    result = await call(ctx, "book.pdf")
    assert result.text == envelope(path, f"--- page 1 of 5 ---\n{page_text(1)}\n\n--- page 2 of 5 ---\n{page_text(2)}",
                                   '(Output capped. Showing pages 1-2 of 5. Use pages="3-5" to continue.)')


async def test_the_worker_time_limit_and_an_abort_kill_it(ws: str, monkeypatch: pytest.MonkeyPatch) -> None:
    put(ws, "book.pdf", text_pages(2))
    monkeypatch.setenv("DSH_FS_PDF_WORKER_HOLD", "1")  # the worker waits: only the limits end it
    ctx = create_context(cwd=ws, pdfs=True, pdf_worker_seconds=1)
    timed = await call(ctx, "book.pdf")
    assert timed.text == f'Error: cannot read "{ws}/book.pdf": the PDF could not be read within the 1-second time limit'
    signal = AbortSignal()
    patient = create_context(cwd=ws, pdfs=True, pdf_worker_seconds=600)
    result: list[dsh_fs.ToolResult] = []

    async def run() -> None:
        result.append(await patient.tools.execute("read_pdf", {"file_path": "book.pdf"}, session=Session(cwd=ws),
                                                  signal=signal))

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        await anyio.sleep(0.2)
        signal.abort()
    assert result[0].text == "Error: read aborted" and result[0].error is not None
    assert ToolExecution


async def test_on_the_memory_provider() -> None:
    fs = MemoryFileSystem(files={"/w/a.pdf": text_pages(3)}, cwd="/w")
    ctx = create_context(provider=fs, pdfs=True, search=False)
    result = await call(ctx, "a.pdf", "2")
    assert result.text == envelope("/w/a.pdf", f"--- page 2 of 3 ---\n{page_text(2)}",
                                   '(Showing page 2 of 3. Use pages="3" to continue.)')
