"""Notebooks, PDFs and legacy encodings through the real ``dsh-fs mcp`` server (docs/NOTEBOOKS.md, docs/PDF.md, docs/ENCODINGS.md, "Every surface"): stdio (the
SDK client and the raw wire) and HTTP (the SDK's streamable HTTP client), with files made by the
formats' own libraries. The command line: tests/e2e/cli/test_cli_formats.py. Not covered here: each
feature's rules (the integration tests)."""

from __future__ import annotations

import base64
import json
import os
from typing import Any

import mcp.types as types
import nbformat
import pytest
from httpkit import http_server_async, http_session
from mcp_support import RawStdio, row, stdio_session
from notebookkit import png, put, sample, written
from pdfkit import many_pages

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(180)]


def _call(server: RawStdio, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return server.request("tools/call", {"name": name, "arguments": arguments})["result"]


def test_notebook_cells_and_notebook_edit_over_stdio(ws: str) -> None:
    path = put(ws, "sales.ipynb", written(sample()))
    with RawStdio(ws, "--tools", "read,notebook_edit") as server:
        server.initialize()
        tools = {t["name"]: t for t in server.request("tools/list")["result"]["tools"]}
        refused = row(_call(server, "notebook_edit", {"notebook_path": "sales.ipynb", "cell_id": "load", "new_source": "x"}))
        view = _call(server, "read", {"file_path": "sales.ipynb", "limit": 6})
        edited = row(_call(server, "notebook_edit", {"notebook_path": "sales.ipynb", "cell_id": "load",
                                                    "new_source": "total = 42"}))
    assert sorted(tools) == ["notebook_edit", "read"]
    assert tools["notebook_edit"]["annotations"]["destructiveHint"] is True
    assert tools["notebook_edit"]["inputSchema"]["required"] == ["notebook_path", "new_source"]
    assert refused["is_error"] and refused["code"] == "FS_NOT_OBSERVED"
    assert [block["type"] for block in view["content"]] == ["text"]
    assert view["content"][0]["text"] == (
        f'<path>{path}</path>\n<type>notebook</type>\n<content>\n1: <notebook language="python" cells="4">\n'
        '2: <cell id="intro" type="markdown">\n3: # Sales\n4: Quarterly numbers.\n5: </cell>\n'
        '6: <cell id="load" type="code" execution_count="1">\n\n(Showing lines 1-6 of 34. Use offset=7 to continue.)\n'
        "</content>")
    assert edited["text"] == "Updated cell load with total = 42"
    assert nbformat.read(path, as_version=4).cells[1].source == "total = 42"


async def test_notebook_images_over_stdio_with_images(ws: str) -> None:
    put(ws, "sales.ipynb", written(sample()))
    async with stdio_session(ws, "--images") as session:
        result = await session.call_tool("read", {"file_path": "sales.ipynb"})
    text, image = result.content
    assert isinstance(text, types.TextContent) and text.text.endswith(
        "(The image of line 22 follows as image content.)\n</content>")
    assert isinstance(image, types.ImageContent) and image.mime_type == "image/png"
    assert base64.b64decode(image.data) == png()


async def test_notebook_edit_over_http(ws: str) -> None:
    path = put(ws, "sales.ipynb", written(sample()))
    async with http_server_async(ws, "--tools", "read,notebook_edit", "--tokens", "2") as endpoint:
        async with http_session(endpoint) as session:
            await session.call_tool("read", {"file_path": "sales.ipynb"})
            inserted = await session.call_tool("notebook_edit", {
                "notebook_path": "sales.ipynb", "new_source": "# Appendix", "cell_type": "markdown",
                "edit_mode": "insert", "cell_id": "oops"})
            other = None
            async with http_session(endpoint, agent=1) as second:  # another owner has not read it
                other = await second.call_tool("notebook_edit", {"notebook_path": "sales.ipynb", "cell_id": "intro",
                                                                 "new_source": "x"})
    book = nbformat.read(path, as_version=4)
    assert inserted.is_error is False
    assert inserted.content[0].text == f"Inserted cell {book.cells[4].id} with # Appendix"
    assert other is not None and other.is_error is True and "read" in other.content[0].text
    assert book.cells[0].source == "# Sales\nQuarterly numbers."


def test_a_held_pdf_read_stalls_no_other_call(ws: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # docs/PDF.md "Bounded": the same as the image bombs, for the event loop
    """The worker of the first call waits until it is killed; the server answers the second call,
    sent after it, first — then the first call's time limit ends it with its error."""
    put(ws, "a.pdf", many_pages(3))
    with open(os.path.join(ws, "a.txt"), "w", encoding="utf-8") as handle:
        handle.write("hello\n")
    monkeypatch.setenv("DSH_FS_PDF_WORKER_HOLD", "1")
    with RawStdio(ws, "--pdfs") as server:
        server.initialize()
        server.request("ping")  # answered once the SDK is loaded: the calls below are served side by side
        server.send({"jsonrpc": "2.0", "id": 101, "method": "tools/call",
                     "params": {"name": "read_pdf", "arguments": {"file_path": "a.pdf"}}})
        server.send({"jsonrpc": "2.0", "id": 102, "method": "tools/call",
                     "params": {"name": "read", "arguments": {"file_path": "a.txt"}}})
        answers: list[dict[str, Any]] = []
        assert server.proc.stdout is not None
        while len(answers) < 2:
            line = server.proc.stdout.readline()
            assert line, server.stderr()
            answers.append(json.loads(line))
    assert [answer["id"] for answer in answers] == [102, 101]
    assert row(answers[0]["result"])["text"].startswith(f"<path>{ws}/a.txt</path>")
    assert row(answers[1]["result"])["text"] == (
        f'Error: cannot read "{ws}/a.pdf": the PDF could not be read within the 30-second time limit')


async def test_read_pdf_over_stdio_and_http(ws: str) -> None:
    from pdfkit import Scan, pdf

    path = put(ws, "scan.pdf", pdf(["Cover page", Scan()]))
    async with stdio_session(ws, "--pdfs", "--images") as session:
        listed = {t.name: t for t in (await session.list_tools()).tools}
        result = await session.call_tool("read_pdf", {"file_path": "scan.pdf"})
    assert listed["read_pdf"].annotations is not None and listed["read_pdf"].annotations.read_only_hint is True
    text, image = result.content
    assert isinstance(text, types.TextContent) and text.text == (
        f"<path>{path}</path>\n<type>pdf</type>\n<content>\n--- page 1 of 2 ---\nCover page\n\n--- page 2 of 2 ---\n"
        "[no text layer: the page follows as an image]\n\n(End of file - total 2 pages)\n</content>")
    assert isinstance(image, types.ImageContent) and image.mime_type == "image/jpeg"
    async with http_server_async(ws, "--pdfs") as endpoint:
        async with http_session(endpoint) as session:
            over_http = await session.call_tool("read_pdf", {"file_path": "scan.pdf", "pages": "1"})
    assert over_http.is_error is False and over_http.content[0].text.endswith(
        '(Showing page 1 of 2. Use pages="2" to continue.)\n</content>')


def test_legacy_encodings_over_stdio(ws: str) -> None:
    before = "こんにちは\r\n世界\r\n".encode("shift_jis")
    path = os.path.join(ws, "sj.txt")
    with open(path, "wb") as handle:
        handle.write(before)
    with RawStdio(ws, "--encoding", "shift_jis", "--encoding", "cp1252") as server:
        server.initialize()
        view = row(_call(server, "read", {"file_path": "sj.txt"}))
        edited = row(_call(server, "edit", {"file_path": "sj.txt", "old_string": "世界", "new_string": "日本"}))
    assert view["text"] == (f"<path>{path}</path>\n<type>file</type>\n<content>\n1: こんにちは\n2: 世界\n\n"
                            "(End of file - total 2 lines)\n(This file is shift_jis text, not UTF-8: edit and write "
                            "keep it in shift_jis.)\n</content>")
    assert edited["is_error"] is False
    with open(path, "rb") as handle:
        assert handle.read() == "こんにちは\r\n日本\r\n".encode("shift_jis")


def test_an_unknown_encoding_is_a_usage_error(ws: str) -> None:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "dsh_fs.cli.main", "mcp", "--root", ws, "--encoding", "utf-16"],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == ("Error: Invalid value for '--encoding': encoding \"utf-16\" is not "
                                           "ASCII-compatible (UTF-16, UTF-32, UTF-7 …): not supported")
