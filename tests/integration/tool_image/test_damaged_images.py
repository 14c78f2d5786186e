"""``read_image`` of damaged files: a PNG cut short anywhere (even past its pixel data), a PNG
whose critical chunk fails its CRC, a GIF cut before its trailer. The reference's admission
decodes with ``sharp(data, { failOn: 'error' })`` and refuses each with its ``INVALID_IMAGE``
text ``Unsupported or malformed image data.`` (``packages/attachment/attachment-local/src/
image.ts`` at e1cd107, unchanged at 611615650f); the default profile names the file (I2)."""

from __future__ import annotations

import os
import struct
import zlib
from typing import Any

import pytest

from dsh_fs import create_context
from imagekit import encoded, gradient

pytestmark = pytest.mark.anyio

MALFORMED = "Unsupported or malformed image data."
SMALL_PNG = encoded(gradient(3, 3), "PNG")
GIF = encoded(gradient(9, 7), "GIF")


def _chunks(data: bytes) -> list[tuple[bytes, int, int]]:
    """``(kind, start of the chunk's length field, its data length)`` for each chunk."""
    out, at = [], 8
    while at + 8 <= len(data):
        length = struct.unpack(">I", data[at : at + 4])[0]
        out.append((data[at + 4 : at + 8], at, length))
        at += 12 + length
    return out


def _flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1 :]


def _idat(data: bytes) -> tuple[int, int]:
    return next((at, length) for kind, at, length in _chunks(data) if kind == b"IDAT")


def _idat_crc_flipped(data: bytes) -> bytes:
    at, length = _idat(data)
    return _flip(data, at + 8 + length)


def _idat_byte_flipped(data: bytes) -> bytes:
    at, length = _idat(data)
    return _flip(data, at + 8 + length - 1)  # inside the zlib stream's adler32: Pillow never reads it


def _png_without_iend(data: bytes) -> bytes:
    return data[:-12]


def _zlib_cut_but_chunks_whole(width: int = 3, height: int = 3) -> bytes:
    """A PNG whose chunks all have right CRCs and an IEND, but whose IDAT zlib stream stops
    before its end (its adler32 and final block missing)."""
    rows = b"".join(b"\x00" + bytes(3 * width) for _ in range(height))
    stream = zlib.compress(rows)[:-4]

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", stream) + chunk(b"IEND", b"")


DAMAGED = {
    "png last 20 bytes cut": ("x.png", SMALL_PNG[:-20]),
    "png last byte cut": ("x.png", SMALL_PNG[:-1]),
    "png IEND missing": ("x.png", _png_without_iend(SMALL_PNG)),
    "png IDAT CRC bit flipped": ("x.png", _idat_crc_flipped(SMALL_PNG)),
    "png IDAT data bit flipped": ("x.png", _idat_byte_flipped(SMALL_PNG)),
    "png zlib stream cut, chunks whole": ("x.png", _zlib_cut_but_chunks_whole()),
    "gif trailer cut": ("x.gif", GIF[:-1]),
    "gif last block cut": ("x.gif", GIF[:-2]),
}


@pytest.fixture(params=["default", "reference"])
def profile(request: Any) -> str:
    return str(request.param)


@pytest.mark.parametrize("name", list(DAMAGED))
async def test_a_damaged_image_is_refused_as_malformed(ws, profile, name):
    file_name, data = DAMAGED[name]
    path = os.path.join(ws, file_name)
    with open(path, "wb") as handle:
        handle.write(data)
    ctx = create_context(cwd=ws, images=True, profile=profile)
    result = await ctx.tools.execute("read_image", {"file_path": file_name})
    expected = MALFORMED if profile == "reference" else f'cannot read "{path}": {MALFORMED}'
    assert result.text == "Error: " + expected
    with open(path, "rb") as handle:
        assert handle.read() == data


@pytest.mark.parametrize(("file_name", "data"), [("x.png", SMALL_PNG), ("x.gif", GIF)])
async def test_the_whole_files_the_damaged_ones_came_from_are_admitted(ws, profile, file_name, data):
    with open(os.path.join(ws, file_name), "wb") as handle:
        handle.write(data)
    ctx = create_context(cwd=ws, images=True, profile=profile)
    result = await ctx.tools.execute("read_image", {"file_path": file_name})
    assert not result.is_error, result.text
