"""Which image format a file's bytes are, and the size a decoder gives it, from the structure
alone (no pixel is decoded). Pure.

The ``read_image`` gates (docs/IMAGES.md) need the format (the magic bytes, checked against the
extension's claim) and the width and height (the pixel and per-side caps) *before* anything is
decoded, so a tiny file that declares 100000×100000 pixels is refused without allocating its
raster. The size is the one a decoder allocates, not only what the first header field says:

* PNG: ``IHDR``; a second ``IHDR`` before the image data is malformed (libpng refuses it,
  Pillow would take the later one);
* GIF: the logical screen grown by the first frame's extent, as libnsgif (the reference's
  decoder, through sharp) and Pillow size the image; ``extent`` is the screen grown by *every*
  frame descriptor (D32: each frame is held to the caps before a pixel is decoded, so a GIF
  whose screen says 1×1 and whose frame is 65535×2730 is no ``1x1 px`` image);
* JPEG: the ``SOFn`` segment; a second one before the scan is malformed (libjpeg refuses it,
  Pillow would take the later one);
* WebP: ``VP8 ``, ``VP8L`` or ``VP8X`` (the canvas, which libwebp holds every frame to).

Anything else, or a header cut short before the size, is ``None``. The notebook view
(``notebook.view``) uses it too, to say an image output's size.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ("ImageHeader", "gif_is_animated", "read_header")

_PNG = b"\x89PNG\r\n\x1a\n"


@dataclass(frozen=True, slots=True)
class ImageHeader:
    """What the structure says: ``media_type`` (``image/png`` …) and the decoded size in pixels."""

    media_type: str
    width: int
    height: int
    extent: tuple[int, int] | None = None
    """the canvas every frame of the file together reaches, ``(width, height)``, when it is
    larger than the decoded size (a GIF frame past the screen); ``None``: the decoded size"""

    @property
    def bounds(self) -> tuple[int, int]:
        """``(width, height)`` the caps are checked against: ``extent``, else the size."""
        return self.extent or (self.width, self.height)


def _u16be(data: bytes, at: int) -> int:
    return int.from_bytes(data[at : at + 2], "big")


def _png(data: bytes) -> ImageHeader | None:
    if len(data) < 24 or data[12:16] != b"IHDR":
        return None
    at = 8 + 12 + int.from_bytes(data[8:12], "big")  # past IHDR (length, type, body, CRC)
    while at + 8 <= len(data):  # the chunks before the image data: none may be a second IHDR
        kind = data[at + 4 : at + 8]
        if kind == b"IHDR":
            return None
        if kind in (b"IDAT", b"IEND"):
            break
        at += 12 + int.from_bytes(data[at : at + 4], "big")
    return ImageHeader("image/png", int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big"))


@dataclass(slots=True)
class _GifFrames:
    """What one walk of a GIF's blocks found (``_gif_walk``)."""

    count: int = 0
    first: tuple[int, int] = (0, 0)
    """the first frame's right and bottom edges (left + width, top + height)"""
    reach: tuple[int, int] = (0, 0)
    """the largest right and bottom edges of any frame"""


def _gif_walk(data: bytes, *, stop_after: int | None = None) -> _GifFrames:
    """Walk the GIF ``data``'s blocks without decoding: header, global colour table, then
    extension and image blocks (sub-blocks skipped), up to the trailer, the end of the data
    or a malformed block (what was found so far counts; the decoder judges the rest).

    :param stop_after: stop once this many frames were seen (``None``: every frame)
    """
    found = _GifFrames()
    n = len(data)
    if n < 13:
        return found
    at = 13
    flags = data[10]
    if flags & 0x80:
        at += 3 * (2 ** ((flags & 0x07) + 1))
    while at < n:
        kind = data[at]
        if kind == 0x21:  # extension: label, then sub-blocks
            at += 2
        elif kind == 0x2C:  # image descriptor (+ local colour table), LZW code size, sub-blocks
            if at + 10 > n:
                return found
            right = int.from_bytes(data[at + 1 : at + 3], "little") + int.from_bytes(data[at + 5 : at + 7], "little")
            bottom = int.from_bytes(data[at + 3 : at + 5], "little") + int.from_bytes(data[at + 7 : at + 9], "little")
            if found.count == 0:
                found.first = (right, bottom)
            found.reach = (max(found.reach[0], right), max(found.reach[1], bottom))
            found.count += 1
            if stop_after is not None and found.count >= stop_after:
                return found
            local = data[at + 9]
            at += 10
            if local & 0x80:
                at += 3 * (2 ** ((local & 0x07) + 1))
            at += 1
        else:  # the trailer (0x3B), or not a GIF block
            return found
        while at < n and data[at] != 0:  # sub-blocks until the zero-length terminator
            at += data[at] + 1
        at += 1
    return found


def _gif(data: bytes) -> ImageHeader | None:
    if len(data) < 10:
        return None
    screen = (int.from_bytes(data[6:8], "little"), int.from_bytes(data[8:10], "little"))
    frames = _gif_walk(data)
    width, height = max(screen[0], frames.first[0]), max(screen[1], frames.first[1])
    extent = (max(width, frames.reach[0]), max(height, frames.reach[1]))
    return ImageHeader("image/gif", width, height, None if extent == (width, height) else extent)


_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
"""start-of-frame markers (``C4`` DHT, ``C8`` JPG, ``CC`` DAC are not frames)"""


def _jpeg(data: bytes) -> ImageHeader | None:
    at = 2
    n = len(data)
    found: ImageHeader | None = None
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
            if at + 9 > n or found is not None:  # cut short, or a second frame header
                return None
            found = ImageHeader("image/jpeg", _u16be(data, at + 7), _u16be(data, at + 5))
        elif marker in (0xD9, 0xDA):  # end of image / start of scan: the frame header came first
            return found
        at += 2 + length
    return found


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
    short or malformed before its second frame (the decoder then judges it)."""
    return _gif_walk(data, stop_after=2).count > 1
