"""``read_image`` holds the size a decoder allocates to the caps before a pixel is decoded
(docs/IMAGES.md; ``fs.image_header``; D32).

A GIF whose logical screen says 1×1 and whose frame is 3000×10 (in the attack: 65535×2730, ~180 MB
a call) is no ``1x1 px`` image: Pillow and the reference's decoder (libnsgif, through sharp) grow
the canvas to the first frame, so it is refused by the per-side cap. A later frame past the caps
is refused too (D32). A PNG with a second ``IHDR`` or a JPEG with a second frame header before its
data (libpng and libjpeg refuse them; Pillow would size the image by the later one) is malformed.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from dsh_fs import create_context
from dsh_fs.tool_image import admission
from imagekit import gif_frame_past_screen, gif_later_frame_past_screen, jpeg_second_frame_header, png_second_ihdr

pytestmark = pytest.mark.anyio

SIDE = "at least one image side exceeds the 2000px limit; downscale the image and read the smaller copy"
MALFORMED = "Unsupported or malformed image data."


def put(ws: str, name: str, data: bytes) -> str:
    path = os.path.join(ws, name)
    with open(path, "wb") as handle:
        handle.write(data)
    return path


@pytest.fixture(params=["default", "reference"])
def profile(request: Any) -> str:
    return str(request.param)


@pytest.fixture
def no_decoding(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every full decode is recorded: a refusal by the caps must come before one."""
    decoded: list[str] = []
    real = admission.decode_fully

    def recording(data: bytes, media_type: str) -> None:
        decoded.append(media_type)
        real(data, media_type)

    monkeypatch.setattr(admission, "decode_fully", recording)
    return decoded


async def call(ws: str, name: str, profile: str, **config: Any) -> Any:
    ctx = create_context(cwd=ws, images=True, profile=profile, **config)
    return await ctx.tools.execute("read_image", {"file_path": name})


async def test_a_gif_frame_past_its_screen_is_held_to_the_caps_before_decoding(ws: str, profile: str,
                                                                              no_decoding: list[str]) -> None:
    path = put(ws, "tiny.gif", gif_frame_past_screen((3000, 10)))
    result = await call(ws, "tiny.gif", profile)
    assert result.text == f'Error: cannot read "{path}": {SIDE}'
    assert no_decoding == []
    put(ws, "square.gif", gif_frame_past_screen((1500, 1500)))
    pixels = await call(ws, "square.gif", profile, image_max_pixels=1_000_000)
    assert "exceeds the 1000000-pixel decoded-size limit" in pixels.text and no_decoding == []


async def test_a_gif_is_reported_at_the_size_it_decodes_to(ws: str, profile: str) -> None:
    data = gif_frame_past_screen((300, 10))
    path = put(ws, "grown.gif", data)
    result = await call(ws, "grown.gif", profile)
    assert result.content[0]["text"] == (f"<path>{path}</path>\n<type>image</type>\n<content>\n"
                                         f"image/gif image, 300x10 px, {len(data)} bytes\n</content>")


async def test_D32_a_later_gif_frame_past_the_caps_is_refused(ws: str, no_decoding: list[str]) -> None:
    path = put(ws, "late.gif", gif_later_frame_past_screen((9000, 9)))
    result = await call(ws, "late.gif", "reference")  # the reference profile admits animations (I3 off)
    assert result.text == f'Error: cannot read "{path}": {SIDE}'
    assert no_decoding == []


@pytest.mark.parametrize(("name", "data"), [("two.png", png_second_ihdr((9000, 9000))),
                                            ("two.jpg", jpeg_second_frame_header((9000, 9000)))])
async def test_a_second_size_header_is_malformed(ws: str, profile: str, no_decoding: list[str], name: str,
                                                 data: bytes) -> None:
    path = put(ws, name, data)
    result = await call(ws, name, profile)
    assert result.text == "Error: " + (MALFORMED if profile == "reference" else f'cannot read "{path}": {MALFORMED}')
    assert no_decoding == []
