"""Which image format a file's bytes are, and its intrinsic size, from the header alone. Pure.

The ``read_image`` gates (docs/IMAGES.md) need the format (the magic bytes, checked against the
extension's claim) and the width and height (the pixel and per-side caps) *before* anything is
decoded, so a tiny file that declares 100000×100000 pixels is refused without allocating its
raster. Formats: PNG (``IHDR``), GIF (logical screen; ``frames`` counts image descriptors up to
two, enough to tell an animation), JPEG (the first ``SOFn`` segment) and WebP (``VP8 ``,
``VP8L`` or ``VP8X``). Anything else, or a header cut short, is ``None``. The notebook view
(``notebook.view``) uses it too, to say an image output's size.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ("ImageHeader", "gif_is_animated", "read_header")

_PNG = b"\x89PNG\r\n\x1a\n"


@dataclass(frozen=True, slots=True)
class ImageHeader:
    """What a header says: ``media_type`` (``image/png`` …) and the size in pixels."""

    media_type: str
    width: int
    height: int


def _u16be(data: bytes, at: int) -> int:
    return int.from_bytes(data[at : at + 2], "big")


def _png(data: bytes) -> ImageHeader | None:
    if len(data) < 24 or data[12:16] != b"IHDR":
        return None
    return ImageHeader("image/png", int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big"))


def _gif(data: bytes) -> ImageHeader | None:
    if len(data) < 10:
        return None
    return ImageHeader("image/gif", int.from_bytes(data[6:8], "little"), int.from_bytes(data[8:10], "little"))


_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
"""start-of-frame markers (``C4`` DHT, ``C8`` JPG, ``CC`` DAC are not frames)"""


def _jpeg(data: bytes) -> ImageHeader | None:
    at = 2
    n = len(data)
    while at + 4 <= n:
        if data[at] != 0xFF:
            return None
        marker = data[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        if marker in (0x01, *range(0xD0, 0xD8)):  # standalone markers carry no length
            at += 2
            continue
        length = _u16be(data, at + 2)
        if length < 2:
            return None
        if marker in _SOF:
            if at + 9 > n:
                return None
            return ImageHeader("image/jpeg", _u16be(data, at + 7), _u16be(data, at + 5))
        if marker in (0xD9, 0xDA):  # end of image / start of scan before any frame header
            return None
        at += 2 + length
    return None


def _webp(data: bytes) -> ImageHeader | None:
    chunk = data[12:16]
    body = data[20:]
    if chunk == b"VP8 " and len(body) >= 10 and body[3:6] == b"\x9d\x01\x2a":
        width = int.from_bytes(body[6:8], "little") & 0x3FFF
        height = int.from_bytes(body[8:10], "little") & 0x3FFF
        return ImageHeader("image/webp", width, height)
    if chunk == b"VP8L" and len(body) >= 5 and body[0] == 0x2F:
        bits = int.from_bytes(body[1:5], "little")
        return ImageHeader("image/webp", (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
    if chunk == b"VP8X" and len(body) >= 10:
        width = int.from_bytes(body[4:7], "little") + 1
        height = int.from_bytes(body[7:10], "little") + 1
        return ImageHeader("image/webp", width, height)
    return None


def read_header(data: bytes) -> ImageHeader | None:
    """The format and size ``data`` declares, from its first bytes; ``None`` when they are not
    a PNG, GIF, JPEG or WebP header (or are cut short before the size).

    :param data: the file's bytes (only a prefix is looked at, except JPEG: up to its frame
        header, past any metadata segments)
    """
    if data.startswith(_PNG):
        return _png(data)
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return _gif(data)
    if data.startswith(b"\xff\xd8\xff"):
        return _jpeg(data)
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return _webp(data)
    return None


def gif_is_animated(data: bytes) -> bool:
    """Whether the GIF ``data`` holds more than one image (frame); ``False`` for a GIF cut
    short or malformed (the decoder then judges it). Walks the block structure without
    decoding: header, global colour table, then extension and image blocks (sub-blocks skipped).
    """
    n = len(data)
    if n < 13:
        return False
    at = 13
    flags = data[10]
    if flags & 0x80:
        at += 3 * (2 ** ((flags & 0x07) + 1))
    frames = 0
    while at < n:
        kind = data[at]
        if kind == 0x3B:  # trailer
            return False
        if kind == 0x21:  # extension: label, then sub-blocks
            at += 2
        elif kind == 0x2C:  # image descriptor (+ local colour table), LZW code size, sub-blocks
            frames += 1
            if frames > 1:
                return True
            if at + 10 > n:
                return False
            local = data[at + 9]
            at += 10
            if local & 0x80:
                at += 3 * (2 ** ((local & 0x07) + 1))
            at += 1
        else:
            return False
        while at < n and data[at] != 0:  # sub-blocks until the zero-length terminator
            at += data[at] + 1
        at += 1
    return False
