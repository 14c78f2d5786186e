"""Notebooks, PDFs and legacy encodings through the real ``dsh-fs mcp`` server and the ``dsh-fs``
command line (docs/NOTEBOOKS.md, docs/PDF.md, docs/ENCODINGS.md, "Every surface"): stdio (the
SDK client and the raw wire) and HTTP (the SDK's streamable HTTP client), with files made by the
formats' own libraries. Not covered here: each feature's rules (the integration tests)."""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from typing import Any

import mcp.types as types
import nbformat
import pytest
from httpkit import http_server_async, http_session
from mcp_support import RawStdio, row, stdio_session
from notebookkit import png, put, sample, written

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(180)]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


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


def test_dsh_fs_read_of_a_notebook_shows_cells(ws: str) -> None:
    put(ws, "sales.ipynb", written(sample()))
    done = subprocess.run([sys.executable, "-m", "dsh_fs.cli.main", "read", os.path.join(ws, "sales.ipynb"),
                           "--limit", "5"], capture_output=True, text=True, timeout=120, cwd=ws)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[:4] == [f"<path>{ws}/sales.ipynb</path>", "<type>notebook</type>", "<content>",
                                            '1: <notebook language="python" cells="4">']
