"""``read_image`` through the registry (docs/IMAGES.md): the reference's gates and texts, the
result's envelope and image block, the observation, ``read``'s image hint (I1), the memory
provider, and the hostile inputs (a JPEG named .png, a truncated PNG, a PNG bomb, an animated
GIF, a zero-byte file, a FIFO, a path outside the root) — each refused or bounded."""

from __future__ import annotations

import base64
import os
import subprocess
import sys
import textwrap
from typing import Any

import pytest

import dsh_fs
from dsh_fs import Session, create_context
from dsh_fs.fs_memory import MemoryFileSystem
from imagekit import animated_gif, encoded, gradient, pixels_of, png_bomb, rgb

pytestmark = pytest.mark.anyio

PNG = encoded(gradient(), "PNG")


def envelope(path: str, media_type: str, width: int, height: int, size: int) -> str:
    return f"<path>{path}</path>\n<type>image</type>\n<content>\n{media_type} image, {width}x{height} px, {size} bytes\n</content>"


def put(ws: str, name: str, data: bytes) -> str:
    path = os.path.join(ws, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(data)
    return path


@pytest.fixture(params=["default", "reference"])
def profile(request: Any) -> str:
    return str(request.param)


async def call(ctx: dsh_fs.Context, path: str, session: Session | None = None) -> dsh_fs.ToolResult:
    return await ctx.tools.execute("read_image", {"file_path": path}, session=session)


def test_read_image_is_offered_only_when_asked_for(ws):
    assert "read_image" not in create_context(cwd=ws).tools.names()
    ctx = create_context(cwd=ws, images=True)
    assert ctx.tools.get("read_image").schema() == {
        "name": "read_image",
        "description": "Read a PNG/JPEG/WebP/GIF file and return the image itself. Requires the current model to accept image input.",
        "parameters": {"type": "object", "properties": {"file_path": {
            "type": "string", "description": "Path to the image file, resolved by the filesystem backend."}},
            "required": ["file_path"]},
    }
    assert ctx.tools.is_parallel("read_image", {"file_path": "a.png"})
    with pytest.raises(ValueError, match="image_max_bytes needs images=True"):
        create_context(cwd=ws, image_max_bytes=10)
    with pytest.raises(ValueError, match="read-image: maxImageDimension must be a positive integer"):
        create_context(cwd=ws, images=True, image_max_dimension=0)


@pytest.mark.parametrize(("fmt", "name", "media_type"), [("PNG", "a.png", "image/png"), ("JPEG", "a.JPG", "image/jpeg"),
                                                        ("JPEG", "a.jpeg", "image/jpeg"), ("WEBP", "a.webp", "image/webp"),
                                                        ("GIF", "a.gif", "image/gif")])
async def test_the_result_is_the_envelope_and_one_image_of_the_file_bytes(ws, profile, fmt, name, media_type):
    data = encoded(gradient(), fmt)
    path = put(ws, name, data)
    result = await call(create_context(cwd=ws, images=True, profile=profile), name)
    assert not result.is_error
    assert result.content == [
        {"type": "text", "text": envelope(path, media_type, 37, 23, len(data))},
        {"type": "image", "data": base64.b64encode(data).decode(), "mimeType": media_type},
    ]
    assert base64.b64decode(result.images[0]["data"]) == data


async def test_read_image_records_a_read_so_a_write_may_replace_the_file(ws):
    put(ws, "a.png", PNG)
    ctx, session = create_context(cwd=ws, images=True), Session(cwd=ws)
    refused = await ctx.tools.execute("write", {"file_path": "a.png", "content": "x"}, session=session)
    assert "without reading it first" in refused.text
    assert not (await call(ctx, "a.png", session)).is_error
    assert not (await ctx.tools.execute("write", {"file_path": "a.png", "content": "x"}, session=session)).is_error


@pytest.mark.parametrize(("path", "message"), [
    ("   ", "file_path must be a non-empty string"),
    ("notes.txt", 'cannot read "notes.txt": read_image only accepts PNG/JPEG/WebP/GIF paths'),
    (".png", 'cannot read ".png": read_image only accepts PNG/JPEG/WebP/GIF paths'),
    ("a.bmp", 'cannot read "a.bmp": read_image only accepts PNG/JPEG/WebP/GIF paths'),
])
async def test_the_path_gates_come_before_any_io(ws, profile, path, message):
    result = await call(create_context(cwd=ws, images=True, profile=profile), path)
    assert result.text == "Error: " + message and result.error is None


async def test_a_media_type_the_deployment_does_not_accept(ws):
    put(ws, "a.gif", encoded(gradient(), "GIF"))
    ctx = create_context(cwd=ws, images=True, image_media_types=("image/png", "image/jpeg"))
    assert (await call(ctx, "a.gif")).text == 'Error: cannot read "a.gif": image/gif images are not accepted by this deployment'


async def test_missing_directory_outside_and_a_fifo(ws, profile):
    ctx = create_context(cwd=ws, images=True, profile=profile)
    os.mkdir(os.path.join(ws, "d.png"))
    os.mkfifo(os.path.join(ws, "pipe.png"))
    assert (await call(ctx, "gone.png")).text == f'Error: cannot read "{ws}/gone.png": not found'
    assert (await call(ctx, "d.png")).text == f'Error: cannot read "{ws}/d.png": not a regular file'
    assert (await call(ctx, "pipe.png")).text == f'Error: cannot read "{ws}/pipe.png": not a regular file'
    outside = os.path.dirname(ws)
    assert (await call(ctx, "../x.png")).text == f'Error: cannot resolve "{outside}/x.png": outside the workspace "{ws}"'


async def test_the_byte_cap_refuses_before_reading(ws, profile):
    path = put(ws, "big.png", PNG)
    ctx = create_context(cwd=ws, images=True, profile=profile, image_max_bytes=len(PNG) - 1)
    assert (await call(ctx, "big.png")).text == f'Error: cannot read "{path}": {len(PNG)} bytes exceeds the {len(PNG) - 1}-byte limit'
    capped = create_context(cwd=ws, images=True, profile=profile, image_max_message_bytes=100)
    assert (await call(capped, "big.png")).text == f'Error: cannot read "{path}": {len(PNG)} bytes exceeds the 100-byte limit'


async def test_a_jpeg_named_png_gets_the_rename_or_convert_message(ws, profile):
    path = put(ws, "photo.PNG", encoded(gradient(), "JPEG"))
    result = await call(create_context(cwd=ws, images=True, profile=profile), "photo.PNG")
    assert result.text == (
        f'Error: cannot read "{path}": the .png extension declares image/png, but the bytes use a different image '
        "format; rename the file to match its actual format if it is PNG/JPEG/WebP/GIF, or convert it to one of those formats")


@pytest.mark.parametrize(("data", "reason"), [
    (b"", "Image is empty."),
    (PNG[: len(PNG) // 2], "Unsupported or malformed image data."),
    (PNG[:30], "Unsupported or malformed image data."),
    (b"not an image at all", "Unsupported or malformed image data."),
])
async def test_I2_empty_truncated_and_unknown_bytes(ws, profile, data, reason):
    path = put(ws, "x.png", data)
    result = await call(create_context(cwd=ws, images=True, profile=profile), "x.png")
    # the reference's attachment texts name no file; the default profile says which (I2)
    assert result.text == "Error: " + (reason if profile == "reference" else f'cannot read "{path}": {reason}')


async def test_the_bomb_and_oversized_sides_are_refused_by_their_header(ws, profile):
    bomb = put(ws, "bomb.png", png_bomb())
    wide = put(ws, "wide.png", encoded(gradient(2001, 2), "PNG"))
    ctx = create_context(cwd=ws, images=True, profile=profile)
    assert (await call(ctx, "bomb.png")).text == (
        f'Error: cannot read "{bomb}": the image exceeds the 40000000-pixel decoded-size limit; '
        "downscale the image and read the smaller copy")
    assert (await call(ctx, "wide.png")).text == (
        f'Error: cannot read "{wide}": at least one image side exceeds the 2000px limit; '
        "downscale the image and read the smaller copy")
    roomy = create_context(cwd=ws, images=True, profile=profile, image_max_dimension=4000)
    assert not (await call(roomy, "wide.png")).is_error


async def test_I3_an_animated_gif(ws, profile):
    data = animated_gif()
    path = put(ws, "spin.gif", data)
    result = await call(create_context(cwd=ws, images=True, profile=profile), "spin.gif")
    if profile == "reference":  # the reference admits it (its first frame decodes)
        assert result.content[0]["text"] == envelope(path, "image/gif", 8, 8, len(data))
    else:  # I3: OpenAI accepts only non-animated GIFs
        assert result.text == (f'Error: cannot read "{path}": the GIF is animated, and OpenAI\'s image input accepts only '
                               "non-animated GIFs; convert one frame to PNG and read that copy")


async def test_a_failed_read_image_leaves_the_file_and_records_nothing(ws):
    path = put(ws, "x.png", encoded(gradient(), "JPEG"))
    ctx, session = create_context(cwd=ws, images=True), Session(cwd=ws)
    assert (await call(ctx, "x.png", session)).is_error
    with open(path, "rb") as handle:
        assert handle.read() == encoded(gradient(), "JPEG")
    refused = await ctx.tools.execute("write", {"file_path": "x.png", "content": "x"}, session=session)
    assert "without reading it first" in refused.text


async def test_I1_read_of_an_image_says_how_to_see_it(ws):
    path = put(ws, "a.png", PNG)
    plain = await create_context(cwd=ws).tools.execute("read", {"file_path": "a.png"})
    assert plain.text.startswith(f'Error: cannot read "{path}": binary file (NUL byte at offset')
    assert plain.text.endswith(
        "\nHint: this is an image file; read shows text only. Image reads are not enabled in this deployment "
        "(its operator can enable them for an image-capable model: create_context(images=True) or dsh-fs mcp --images).")
    offered = await create_context(cwd=ws, images=True).tools.execute("read", {"file_path": "a.png"})
    assert offered.text.endswith("\nHint: this is an image file; use the read_image tool to see it.")
    reference = await create_context(cwd=ws, images=True, profile="reference").tools.execute("read", {"file_path": "a.png"})
    assert reference.text == f'Error: cannot read "{path}": binary file'


async def test_the_memory_provider_serves_images(profile):
    fs = MemoryFileSystem(files={"pics/a.png": PNG}, root="/ws", profile=profile)
    ctx = create_context(provider=fs, images=True, profile=profile, search=False)
    result = await call(ctx, "pics/a.png")
    assert result.content[0]["text"] == envelope("/ws/pics/a.png", "image/png", 37, 23, len(PNG))
    assert pixels_of(base64.b64decode(result.images[0]["data"])) == rgb(gradient())
    assert (await call(ctx, "/elsewhere/a.png")).text == 'Error: cannot resolve "/elsewhere/a.png": outside the workspace "/ws"'


def test_the_bomb_is_refused_within_bounded_memory(ws):
    """Peak RSS of a process reading the bomb: its raster (10 GB at 8 bits) is never allocated."""
    put(ws, "bomb.png", png_bomb())
    put(ws, "big.png", os.urandom(8) + b"\x00" * (64 << 20))  # 64 MiB: over the byte cap, never read
    script = textwrap.dedent(f"""
        import anyio, resource, dsh_fs
        async def main():
            ctx = dsh_fs.create_context(cwd={ws!r}, images=True)
            before = int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0])  # VmHWM: this process's own peak (ru_maxrss counts the test runner that spawned it)
            for name in ("bomb.png", "big.png"):
                result = await ctx.tools.execute("read_image", {{"file_path": name}})
                assert result.is_error, result.text
            print(before, int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0]))
        anyio.run(main)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    before, after = map(int, out.stdout.split())
    assert after - before < 16 * 1024, (before, after)  # KiB: well under one decoded 2000×2000 frame


@pytest.mark.parametrize("face", ["str_replace_based_edit_tool", "str_replace_editor"])
async def test_I5_the_text_editors_view_of_an_image_says_how_to_see_it(ws, face):
    """Anthropic documents the text editor for text files (``view``: file contents with line
    numbers), so ``view`` stays text-only; in the default profile its binary-file error carries
    I1's hint (I5). The reference profile keeps the editor's own text."""
    path = put(ws, "a.png", PNG)
    args = {"command": "view", "path": path}
    hinted = await create_context(cwd=ws, faces=[face], images=True).tools.execute(face, args)
    assert hinted.text.endswith("\nHint: this is an image file; use the read_image tool to see it.")
    assert not hinted.images
    reference = await create_context(cwd=ws, faces=[face], profile="reference").tools.execute(face, args)
    assert "Hint:" not in reference.text
