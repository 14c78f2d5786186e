"""``fs.image_header``: format and size from the header alone (pure), against Pillow."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from dsh_fs.fs.image_header import ImageHeader, gif_is_animated, read_header
from imagekit import animated_gif, encoded, gradient, png_bomb


@pytest.mark.parametrize(
    ("fmt", "media_type", "options"),
    [("PNG", "image/png", {}), ("JPEG", "image/jpeg", {}), ("JPEG", "image/jpeg", {"progressive": True}),
     ("GIF", "image/gif", {}), ("WEBP", "image/webp", {}), ("WEBP", "image/webp", {"lossless": True})],
)
@pytest.mark.parametrize("size", [(1, 1), (37, 23), (640, 3), (3000, 17)])
def test_the_header_names_the_format_and_size_pillow_encoded(fmt, media_type, options, size):
    assert read_header(encoded(gradient(*size), fmt, **options)) == ImageHeader(media_type, *size)


def test_a_jpeg_with_metadata_segments_before_its_frame_header():
    data = encoded(gradient(50, 40), "JPEG", exif=b"Exif\x00\x00" + b"\x00" * 4000, icc_profile=b"\x00" * 3000)
    assert read_header(data) == ImageHeader("image/jpeg", 50, 40)


def test_a_webp_with_alpha_uses_the_extended_header():
    from PIL import Image

    data = encoded(Image.new("RGBA", (300, 200), (1, 2, 3, 4)), "WEBP", exif=b"Exif\x00\x00abc")
    assert data[12:16] == b"VP8X"
    assert read_header(data) == ImageHeader("image/webp", 300, 200)


def test_the_bomb_declares_its_size_in_a_few_hundred_bytes():
    data = png_bomb()
    assert len(data) < 2000
    assert read_header(data) == ImageHeader("image/png", 100_000, 100_000)


@pytest.mark.parametrize("data", [b"", b"\x89PNG\r\n\x1a\n", b"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR\x00", b"GIF89a\x01",
                                  b"\xff\xd8\xff", b"\xff\xd8\xff\xe0\x00\x10JFIF", b"RIFF\x00\x00\x00\x00WEBPVP8 ",
                                  b"BM\x00\x00", b"plain text", b"\x00" * 100])
def test_no_header_or_one_cut_short_is_none(data):
    assert read_header(data) is None


def test_an_animation_is_told_from_a_still_gif():
    assert gif_is_animated(animated_gif())
    assert not gif_is_animated(encoded(gradient(), "GIF"))
    assert not gif_is_animated(animated_gif()[:40])  # cut short: the decoder judges it


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=300), st.sampled_from([b"", b"\x89PNG\r\n\x1a\n", b"GIF89a", b"\xff\xd8\xff", b"RIFF\x00\x00\x00\x00WEBP"]))
def test_any_bytes_give_a_header_or_none_and_never_raise(tail, head):
    data = head + tail
    found = read_header(data)
    assert found is None or (found.width >= 0 and found.height >= 0)
    gif_is_animated(data)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["PNG", "JPEG", "GIF", "WEBP"]), st.integers(min_value=0, max_value=400), st.binary(max_size=64))
def test_admission_of_damaged_images_is_a_refusal_never_a_crash(fmt, cut, junk):
    """Any prefix of a real image plus junk: admitted with the header's size, or refused
    (the reference's codes), never another exception."""
    from dsh_fs.tool_common.switches import ToolSwitches
    from dsh_fs.tool_image.admission import Admitted, Refusal, admit
    from dsh_fs.tool_image.config import ImageConfig

    whole = encoded(gradient(20, 10), fmt)
    data = whole[: len(whole) - cut] + junk
    media_type = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}[fmt]
    try:
        found = admit(data, media_type, ImageConfig(), ToolSwitches.of("default"))
    except Refusal as refusal:
        assert refusal.kind in ("empty", "malformed", "pixels", "dimension", "mismatch", "animated")
    else:
        assert isinstance(found, Admitted) and (found.width, found.height) == (20, 10)


def test_a_gif_is_sized_by_its_screen_grown_by_the_first_frame():
    from imagekit import gif_frame_past_screen, gif_later_frame_past_screen

    assert read_header(gif_frame_past_screen((3000, 10), (1, 1))) == ImageHeader("image/gif", 3000, 10)
    assert read_header(gif_frame_past_screen((30, 10), (50, 5))) == ImageHeader("image/gif", 50, 10)
    assert read_header(gif_later_frame_past_screen((9000, 9))) == ImageHeader("image/gif", 8, 8, (9000, 9))  # D32
    assert read_header(gif_later_frame_past_screen((9000, 9))).bounds == (9000, 9)
    assert read_header(encoded(gradient(), "GIF")).bounds == (37, 23)


def test_a_second_size_header_is_malformed():
    from imagekit import jpeg_second_frame_header, png_second_ihdr

    assert read_header(png_second_ihdr()) is None
    assert read_header(jpeg_second_frame_header()) is None


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 60), st.integers(1, 60), st.integers(0, 80), st.integers(0, 80), st.integers(0, 70),
       st.integers(0, 70))
def test_the_header_never_says_less_than_pillow_allocates(width, height, screen_w, screen_h, left, top):
    """Whatever a GIF's screen and first frame's offset say, the header's size is Pillow's size
    of the decoded first frame, and its bounds cover every frame Pillow seeks to."""
    import io
    import struct

    from PIL import Image

    from imagekit import _gif_descriptor, animated_gif

    for data in (bytearray(encoded(gradient(width, height), "GIF")), bytearray(animated_gif())):
        data[6:10] = struct.pack("<HH", screen_w, screen_h)
        at = _gif_descriptor(bytes(data), 0)
        data[at + 1 : at + 5] = struct.pack("<HH", left, top)
        found = read_header(bytes(data))
        with Image.open(io.BytesIO(bytes(data))) as image:
            image.load()
            assert (found.width, found.height) == image.size
            reach = image.size
            for index in range(1, getattr(image, "n_frames", 1)):
                image.seek(index)
                reach = (max(reach[0], image.size[0]), max(reach[1], image.size[1]))
        assert found.bounds[0] >= reach[0] and found.bounds[1] >= reach[1]
