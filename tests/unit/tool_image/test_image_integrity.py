"""``tool_image.integrity``: a PNG or GIF is whole only with every chunk/block up to its end
marker, and a PNG only with right critical CRCs (ancillary CRCs are not checked, as libpng and
libspng drop such a chunk instead of failing)."""

from __future__ import annotations

import struct
import zlib

import pytest
from hypothesis import given, settings, strategies as st

from dsh_fs.tool_image.decode import DecodeFailed, decode_fully
from dsh_fs.tool_image.integrity import gif_is_whole, png_is_whole
from imagekit import animated_gif, encoded, gradient

PNG = encoded(gradient(5, 4), "PNG")
GIFS = [encoded(gradient(9, 7), "GIF"), animated_gif(), encoded(gradient(3, 3), "GIF", comment=b"hi")]


def chunk(kind: bytes, body: bytes, crc: int | None = None) -> bytes:
    value = zlib.crc32(kind + body) & 0xFFFFFFFF if crc is None else crc
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", value)


def png_of(*chunks: bytes) -> bytes:
    return b"\x89PNG\r\n\x1a\n" + b"".join(chunks)


IHDR = chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0))
IDAT = chunk(b"IDAT", zlib.compress(b"\x00\x00"))
IEND = chunk(b"IEND", b"")


def test_whole_files_are_whole():
    assert png_is_whole(PNG)
    assert png_is_whole(png_of(IHDR, IDAT, IEND))
    assert png_is_whole(png_of(IHDR, IDAT, IEND) + b"trailing bytes after IEND")
    for gif in GIFS:
        assert gif_is_whole(gif)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_every_cut_png_is_not_whole(data):
    cut = data.draw(st.integers(min_value=0, max_value=len(PNG) - 1))
    assert png_is_whole(PNG[:cut]) is False


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_every_cut_gif_is_not_whole(data):
    gif = data.draw(st.sampled_from(GIFS))
    cut = data.draw(st.integers(min_value=0, max_value=len(gif) - 1))
    assert gif_is_whole(gif[:cut]) is False


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_a_flipped_bit_in_a_png_of_critical_chunks_is_caught(data):
    at = data.draw(st.integers(min_value=8, max_value=len(PNG) - 1))
    bit = data.draw(st.integers(min_value=0, max_value=7))
    damaged = PNG[:at] + bytes([PNG[at] ^ (1 << bit)]) + PNG[at + 1 :]
    if png_is_whole(damaged):  # only a type's case bit: "IDAT" → "iDAT", an ancillary chunk (CRC unchecked) …
        assert bit == 5
        with pytest.raises(DecodeFailed):  # … and then no pixel data: the decoder refuses it
            decode_fully(damaged, "image/png")


def test_each_critical_chunk_crc_is_checked_and_ancillary_ones_are_not():
    for kind, body in ((b"IHDR", IHDR[8:-4]), (b"PLTE", b"\x00\x00\x00"), (b"IDAT", IDAT[8:-4]), (b"IEND", b"")):
        bad = chunk(kind, body, crc=(zlib.crc32(kind + body) ^ 1) & 0xFFFFFFFF)
        chunks = [IHDR, IDAT, IEND]
        index = {b"IHDR": 0, b"IDAT": 1, b"IEND": 2}.get(kind)
        if index is None:
            chunks.insert(1, bad)
        else:
            chunks[index] = bad
        assert png_is_whole(png_of(*chunks)) is False, kind
    text = b"Comment\x00hi"
    assert png_is_whole(png_of(IHDR, chunk(b"tEXt", text, crc=0), IDAT, IEND))


def test_a_png_without_iend_or_with_an_impossible_length_is_not_whole():
    assert png_is_whole(png_of(IHDR, IDAT)) is False
    assert png_is_whole(png_of(IHDR)) is False
    assert png_is_whole(png_of()) is False
    huge = struct.pack(">I", 0x80000000) + b"IDAT" + b"\x00" * 8
    assert png_is_whole(png_of(IHDR, huge, IEND)) is False
    assert png_is_whole(png_of(IHDR, IDAT, IEND[:-1])) is False


def _gif(body: bytes, *, global_table: bool = False, size_bits: int = 0) -> bytes:
    flags = (0x80 if global_table else 0) | size_bits  # a 2-entry table when present
    screen = b"GIF89a" + struct.pack("<HH", 1, 1) + bytes([flags, 0, 0])
    return screen + (b"\x00" * 6 if global_table else b"") + body


IMAGE = b"\x2c" + struct.pack("<HHHH", 0, 0, 1, 1) + b"\x00" + b"\x02" + b"\x02\x4c\x01" + b"\x00"
LOCAL_TABLE_IMAGE = b"\x2c" + struct.pack("<HHHH", 0, 0, 1, 1) + b"\x80" + b"\x00" * 6 + b"\x02" + b"\x02\x4c\x01\x00"
EXTENSION = b"\x21\xf9\x04\x00\x00\x00\x00\x00"


def test_gif_structure():
    assert gif_is_whole(_gif(IMAGE + b";"))
    assert gif_is_whole(_gif(IMAGE + b";", global_table=True))
    assert gif_is_whole(_gif(EXTENSION + LOCAL_TABLE_IMAGE + b";"))
    assert gif_is_whole(_gif(b";"))
    assert gif_is_whole(_gif(IMAGE + b";", size_bits=0x01))  # size bits without the table flag: no table
    assert gif_is_whole(_gif(IMAGE)) is False
    assert not gif_is_whole(_gif(IMAGE[:-1] + b";"))  # the terminator missing: ";" read as a sub-block length
    assert not gif_is_whole(_gif(b"\x99" + IMAGE + b";"))  # an unknown block
    assert not gif_is_whole(_gif(IMAGE[:9]))  # a descriptor cut short
    assert gif_is_whole(_gif(b";", global_table=True)[:-4]) is False
    assert gif_is_whole(b"GIF89a\x01\x00\x01") is False
    assert gif_is_whole(_gif(b"")) is False
