"""Notebooks, PDFs and legacy encodings on the S3 provider (docs/NOTEBOOKS.md, docs/PDF.md,
docs/ENCODINGS.md, "Every provider"): the same results as on the local disk, through the
registry against the loopback S3 server, each object read back from the bucket."""

from __future__ import annotations

import nbformat
import pytest
from notebookkit import sample, written

from dsh_fs import Session, create_context
from dsh_fs.testing.workspaces import S3Workspace

pytestmark = pytest.mark.anyio


async def test_notebook_view_and_edit_on_a_bucket(bucket: S3Workspace) -> None:
    await bucket.put("nb/sales.ipynb", written(sample()).encode("utf-8"))
    ctx, session = create_context(provider=await bucket.provider(), faces=["notebook_edit"], search=False), Session(cwd="/")
    view = await ctx.tools.execute("read", {"file_path": "nb/sales.ipynb", "limit": 3}, session=session)
    assert view.text == ('<path>/nb/sales.ipynb</path>\n<type>notebook</type>\n<content>\n'
                         '1: <notebook language="python" cells="4">\n2: <cell id="intro" type="markdown">\n3: # Sales\n\n'
                         "(Showing lines 1-3 of 34. Use offset=4 to continue.)\n</content>")
    edited = await ctx.tools.execute("notebook_edit", {"notebook_path": "nb/sales.ipynb", "cell_id": "oops",
                                                       "new_source": "", "edit_mode": "delete"}, session=session)
    assert edited.text == "Deleted cell oops"
    book = nbformat.reads((await bucket.get("nb/sales.ipynb")).decode("utf-8"), as_version=4)
    assert [cell.id for cell in book.cells] == ["intro", "load", "plot"]
    await ctx.aclose()


async def test_read_pdf_on_a_bucket(bucket: S3Workspace) -> None:
    from pdfkit import text_pages

    await bucket.put("docs/book.pdf", text_pages(30))
    ctx = create_context(provider=await bucket.provider(), pdfs=True, search=False)
    result = await ctx.tools.execute("read_pdf", {"file_path": "docs/book.pdf", "pages": "30"})
    assert result.text == ("<path>/docs/book.pdf</path>\n<type>pdf</type>\n<content>\n--- page 30 of 30 ---\nPage 30\n"
                           + " ".join(f"word30-{i}" for i in range(40)) + "\n\n(End of file - total 30 pages)\n</content>")
    capped = create_context(provider=await bucket.provider(), pdfs=True, search=False, pdf_max_bytes=1000)
    refused = await capped.tools.execute("read_pdf", {"file_path": "docs/book.pdf"})
    assert refused.text.endswith("bytes exceeds the 1000-byte limit")
    await ctx.aclose()
    await capped.aclose()


async def test_legacy_encodings_on_a_bucket(bucket: S3Workspace) -> None:
    await bucket.put("gb.txt", "中文文件\r\n第二行\r\n".encode("gb18030"))
    ctx = create_context(provider=await bucket.provider(encodings=["gb18030"]), search=False)
    session = Session(cwd="/")
    view = await ctx.tools.execute("read", {"file_path": "gb.txt"}, session=session)
    assert view.text.endswith("(This file is gb18030 text, not UTF-8: edit and write keep it in gb18030.)\n</content>")
    assert "1: 中文文件\n2: 第二行" in view.text
    edited = await ctx.tools.execute("edit", {"file_path": "gb.txt", "old_string": "第二", "new_string": "第三"},
                                     session=session)
    assert not edited.is_error, edited.text
    assert await bucket.get("gb.txt") == "中文文件\r\n第三行\r\n".encode("gb18030")
    await ctx.aclose()
