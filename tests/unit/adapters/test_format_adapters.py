"""The adapters carry the new formats' results as they carry ``read_image``'s (docs/PDF.md,
docs/NOTEBOOKS.md, "Every surface"): a ``read_pdf`` of scanned pages and a ``read`` of a
notebook with plots give a text block and several image blocks, and each adapter's conversion
keeps every image, in order, with its bytes; CrewAI (text only) says the images are not shown;
deepagents' backend reads a notebook as its cell view and a PDF through ``read_pdf``, naming
it by its virtual path in virtual mode. Real files
(pdfkit, notebookkit), no network. The request bodies each SDK serializes for one image:
tests/unit/adapters/test_image_adapters.py."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from notebookkit import png, put, sample, written
from pdfkit import Scan, pdf

import dsh_fs
from dsh_fs.adapters.anthropic_messages import tool_result_block
from dsh_fs.adapters.openai_chat import chat_image_message
from dsh_fs.adapters.openai_responses import function_call_output

pytestmark = pytest.mark.anyio


@pytest.fixture
async def results(ws: str) -> dict[str, dsh_fs.ToolResult]:
    put(ws, "scans.pdf", pdf(["Cover", Scan(40, 50, (10, 20, 30)), Scan(40, 50, (200, 100, 50))]))
    put(ws, "sales.ipynb", written(sample()))
    ctx = dsh_fs.create_context(cwd=ws, images=True, pdfs=True)
    pdf_result = await ctx.tools.execute("read_pdf", {"file_path": "scans.pdf"})
    notebook = await ctx.tools.execute("read", {"file_path": "sales.ipynb"})
    assert len(pdf_result.images) == 2 and len(notebook.images) == 1
    return {"pdf": pdf_result, "notebook": notebook}


def images_of(result: dsh_fs.ToolResult) -> list[bytes]:
    return [base64.b64decode(block["data"]) for block in result.images]


@pytest.mark.parametrize("kind", ["pdf", "notebook"])
async def test_vendor_adapters_keep_every_image_in_order(results: dict[str, dsh_fs.ToolResult], kind: str) -> None:
    result = results[kind]
    expected = images_of(result)
    anthropic = tool_result_block("tu_1", result)["content"]
    assert [block["type"] for block in anthropic] == ["text"] + ["image"] * len(expected)
    assert [base64.b64decode(b["source"]["data"]) for b in anthropic[1:]] == expected
    assert anthropic[0]["text"] == result.text
    responses = function_call_output("c1", result)["output"]
    assert [part["type"] for part in responses] == ["input_text"] + ["input_image"] * len(expected)
    assert [base64.b64decode(p["image_url"].split(",", 1)[1]) for p in responses[1:]] == expected
    chat = chat_image_message([result])
    assert chat is not None and [part["type"] for part in chat["content"]] == ["text"] + ["image_url"] * len(expected)
    if kind == "notebook":
        assert expected == [png()]


@pytest.mark.parametrize("kind", ["pdf", "notebook"])
async def test_framework_adapters_keep_every_image(results: dict[str, dsh_fs.ToolResult], kind: str) -> None:
    from dsh_fs.adapters.langchain import langchain_content
    from dsh_fs.adapters.llamaindex import llamaindex_output

    result = results[kind]
    expected = images_of(result)
    blocks: Any = langchain_content(result)
    assert [block["type"] for block in blocks] == ["text"] + ["image"] * len(expected)
    assert [base64.b64decode(block["base64"]) for block in blocks[1:]] == expected
    output: Any = llamaindex_output(result)
    assert [type(block).__name__ for block in output] == ["TextBlock"] + ["ImageBlock"] * len(expected)


async def test_deepagents_reads_a_notebook_as_cells_and_a_pdf_through_read_pdf(ws: str) -> None:
    from dsh_fs.adapters.deepagents import DshFsBackend

    put(ws, "sales.ipynb", written(sample()))
    put(ws, "book.pdf", pdf(["First page", "Second page"]))
    backend = DshFsBackend(dsh_fs.create_context(cwd=ws, pdfs=True))
    notebook = await backend.aread("/sales.ipynb", limit=3)
    assert notebook.error is None and notebook.file_data is not None
    assert notebook.file_data["content"] == '<notebook language="python" cells="4">\n<cell id="intro" type="markdown">\n# Sales\n'
    document = await backend.aread("/book.pdf")
    assert document.error is None and document.file_data is not None
    assert document.file_data["content"].startswith("<path>/book.pdf</path>\n<type>pdf</type>\n<content>\n--- page 1 of 2 ---")
    missing = await backend.aread("/none.pdf")
    assert missing.error == 'cannot read "/none.pdf": not found'
    host = DshFsBackend(dsh_fs.create_context(cwd=ws, pdfs=True), virtual_mode=False)
    document = await host.aread(f"{ws}/book.pdf")
    assert document.file_data is not None and document.file_data["content"].startswith(f"<path>{ws}/book.pdf</path>\n")
    missing = await host.aread(f"{ws}/none.pdf")
    assert missing.error == f'cannot read "{ws}/none.pdf": not found'
    host.close()
    reference = DshFsBackend(dsh_fs.create_context(cwd=ws, profile="reference"))
    raw = await reference.aread(f"{ws}/sales.ipynb", limit=1)
    assert raw.file_data is not None and raw.file_data["content"] == "{\n"
    backend.close()
    reference.close()
