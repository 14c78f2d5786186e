"""Real image bytes for the ``read_image`` tests (imported as ``imagekit``; no tests here).

Pillow encodes the ordinary files; the hostile ones are built by hand: ``png_bomb`` (a valid
PNG header declaring 100000×100000 pixels over a few hundred bytes of zlib data) and
``truncated`` copies.
"""

from __future__ import annotations

import io
import struct
import zlib

from PIL import Image

__all__ = ("animated_gif", "encoded", "gif_frame_past_screen", "gradient", "jpeg_second_frame_header", "pixels_of",
           "gif_later_frame_past_screen", "png_bomb", "png_second_ihdr", "rgb")


def gradient(width: int = 37, height: int = 23) -> Image.Image:
    """An RGB image whose every pixel differs (so a decoded copy proves the bytes made it)."""
    image = Image.new("RGB", (width, height))
    image.putdata([((x * 7) % 256, (y * 11) % 256, (x + y) % 256) for y in range(height) for x in range(width)])
    return image


def encoded(image: Image.Image, fmt: str, **options: object) -> bytes:
    """``image`` encoded as ``fmt`` (``PNG``, ``JPEG``, ``WEBP``, ``GIF``)."""
    out = io.BytesIO()
    image.save(out, format=fmt, **options)
    return out.getvalue()


def pixels_of(data: bytes) -> list[tuple[int, ...]]:
    """The RGB pixels ``data`` decodes to."""
    with Image.open(io.BytesIO(data)) as image:
        return rgb(image)


def rgb(image: Image.Image) -> list[tuple[int, ...]]:
    """The RGB pixels of ``image``, row by row."""
    return list(image.convert("RGB").get_flattened_data())


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)


def png_bomb(width: int = 100_000, height: int = 100_000) -> bytes:
    """A tiny PNG whose IHDR declares ``width`` × ``height`` 8-bit greyscale pixels; its IDAT is
    the zlib stream of a few zero rows (a decoder that trusted the header would allocate
    ``width * height`` bytes)."""
    rows = zlib.compress(b"\x00" * (width + 1) * 4, 9)
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", rows) + _chunk(b"IEND", b"")


def animated_gif() -> bytes:
    """A three-frame animated GIF."""
    frames = [Image.new("RGB", (8, 8), color) for color in ((255, 0, 0), (0, 255, 0), (0, 0, 255))]
    out = io.BytesIO()
    frames[0].save(out, format="GIF", save_all=True, append_images=frames[1:], duration=100, loop=0)
    return out.getvalue()


def _gif_descriptor(data: bytes, index: int) -> int:
    """The offset of the ``index``-th image descriptor (``0x2C``) of the GIF ``data``."""
    flags = data[10]
    at = 13 + (3 * (2 ** ((flags & 0x07) + 1)) if flags & 0x80 else 0)
    seen = 0
    while True:
        kind = data[at]
        if kind == 0x2C:
            if seen == index:
                return at
            seen += 1
            local = data[at + 9]
            at += 10 + (3 * (2 ** ((local & 0x07) + 1)) if local & 0x80 else 0) + 1
        elif kind == 0x21:
            at += 2
        else:
            raise ValueError("no such frame")
        while data[at] != 0:
            at += data[at] + 1
        at += 1


def gif_frame_past_screen(frame: tuple[int, int] = (3000, 10), screen: tuple[int, int] = (1, 1)) -> bytes:
    """A valid GIF (Pillow decodes it) whose logical screen says ``screen`` while its one frame
    is ``frame`` pixels: a header-only reader sees a tiny image, a decoder allocates the frame."""
    data = bytearray(encoded(gradient(*frame), "GIF"))
    data[6:10] = struct.pack("<HH", *screen)
    return bytes(data)


def gif_later_frame_past_screen(size: tuple[int, int] = (9000, 9)) -> bytes:
    """``animated_gif()`` (8×8 frames) whose second frame descriptor claims ``size``."""
    data = bytearray(animated_gif())
    at = _gif_descriptor(bytes(data), 1)
    data[at + 5 : at + 9] = struct.pack("<HH", *size)
    return bytes(data)


def png_second_ihdr(size: tuple[int, int] = (9000, 9000)) -> bytes:
    """A small real PNG with a second ``IHDR`` declaring ``size`` before its image data (libpng
    refuses it; Pillow would size the image by it)."""
    data = encoded(gradient(), "PNG")
    first_end = 8 + 12 + 13
    extra = _chunk(b"IHDR", struct.pack(">IIBBBBB", size[0], size[1], 8, 2, 0, 0, 0))
    return data[:first_end] + extra + data[first_end:]


def jpeg_second_frame_header(size: tuple[int, int] = (9000, 9000)) -> bytes:
    """A small real JPEG with a second ``SOF0`` declaring ``size`` before its scan (libjpeg
    refuses it; Pillow would size the image by it)."""
    data = encoded(gradient(), "JPEG")
    at = 2
    while data[at + 1] not in (0xC0, 0xC2):
        at += 2 + int.from_bytes(data[at + 2 : at + 4], "big")
    length = int.from_bytes(data[at + 2 : at + 4], "big")
    segment = bytearray(data[at : at + 2 + length])
    segment[5:9] = struct.pack(">HH", size[1], size[0])
    end = at + 2 + length
    return data[:end] + bytes(segment) + data[end:]
