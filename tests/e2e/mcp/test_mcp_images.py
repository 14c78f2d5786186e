"""``dsh-fs mcp --images`` through the official MCP SDK client over stdio: ``read_image``
answers with the text envelope and an ``ImageContent`` whose bytes decode to the file's pixels;
without ``--images`` the tool is not listed (docs/IMAGES.md)."""

from __future__ import annotations

import base64
import os

import mcp.types as types
import pytest

from imagekit import encoded, gradient, pixels_of, rgb
from mcp_support import stdio_session

pytestmark = pytest.mark.anyio


async def test_the_mcp_client_receives_image_content_of_the_file(ws):
    data = encoded(gradient(), "WEBP", lossless=True)
    with open(os.path.join(ws, "shot.webp"), "wb") as handle:
        handle.write(data)
    async with stdio_session(ws, "--images") as session:
        listed = await session.list_tools()
        (tool,) = [t for t in listed.tools if t.name == "read_image"]
        assert tool.annotations is not None and tool.annotations.read_only_hint is True
        result = await session.call_tool("read_image", {"file_path": "shot.webp"})
        assert result.is_error is False
        text, image = result.content
        assert isinstance(text, types.TextContent)
        assert text.text == (f"<path>{ws}/shot.webp</path>\n<type>image</type>\n<content>\n"
                             f"image/webp image, 37x23 px, {len(data)} bytes\n</content>")
        assert isinstance(image, types.ImageContent) and image.mime_type == "image/webp"
        assert pixels_of(base64.b64decode(image.data)) == rgb(gradient())
        refused = await session.call_tool("read_image", {"file_path": "../x.png"})
        assert refused.is_error is True and "outside the workspace" in refused.content[0].text


async def test_without_images_there_is_no_read_image_and_read_says_so(ws):
    with open(os.path.join(ws, "a.png"), "wb") as handle:
        handle.write(encoded(gradient(), "PNG"))
    async with stdio_session(ws) as session:
        assert "read_image" not in [t.name for t in (await session.list_tools()).tools]
        result = await session.call_tool("read", {"file_path": "a.png"})
        assert result.content[0].text.endswith("create_context(images=True) or dsh-fs mcp --images).")


async def test_images_with_a_tools_list_still_serves_read_image(ws):
    async with stdio_session(ws, "--images", "--tools", "read") as session:
        assert sorted(t.name for t in (await session.list_tools()).tools) == ["read", "read_image"]


def test_naming_read_image_without_images_says_which_option_serves_it(ws):
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "dsh_fs.cli.main", "mcp", "--root", ws, "--tools", "read,read_image"],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 2 and done.stderr.rstrip().endswith("; read_image is served with --images"), done.stderr
