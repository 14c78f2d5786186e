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

__all__ = ("animated_gif", "encoded", "gradient", "pixels_of", "png_bomb", "rgb")


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
