"""Whether an image file's container is whole: the checks a full decode by Pillow skips. Pure.

The reference decodes with ``sharp(data, { failOn: 'error' })`` (``packages/attachment/
attachment-local/src/image.ts`` at e1cd107): libvips then refuses a file cut short or whose
PNG checksums fail, even where every pixel was already decoded. Pillow's ``Image.load`` stops
once it has the pixels, so these checks run beside it (``decode.decode_fully``):

* PNG: every chunk is whole, each critical chunk's (``IHDR``, ``PLTE``, ``IDAT``, ``IEND``)
  CRC-32 matches (an ancillary chunk with a bad CRC is dropped by libpng and libspng, not
  fatal), and ``IEND`` is there.
* GIF: every block up to the trailer (``;``) is whole and the trailer is there.

JPEG and WebP need nothing more: Pillow's decoders already refuse them cut short.
"""

from __future__ import annotations

import zlib

__all__ = ("gif_is_whole", "png_is_whole")


def png_is_whole(data: bytes) -> bool:
    """Whether the PNG ``data`` has all its chunks, right critical CRCs and an ``IEND``.

    :param data: a file whose first 8 bytes are the PNG signature
    """
    at, n = 8, len(data)
    while at + 12 <= n:
        length = int.from_bytes(data[at : at + 4], "big")
        end = at + 12 + length
        if length > 0x7FFFFFFF or end > n:
            return False
        kind = data[at + 4 : at + 8]
        if not kind[0] & 0x20:  # a critical chunk (upper-case first letter)
            crc = int.from_bytes(data[end - 4 : end], "big")
            if zlib.crc32(data[at + 4 : end - 4]) != crc:
                return False
        if kind == b"IEND":
            return True
        at = end
    return False


def gif_is_whole(data: bytes) -> bool:
    """Whether the GIF ``data`` has every block whole up to its trailer (``0x3B``).

    :param data: a file whose first 6 bytes are ``GIF87a`` or ``GIF89a``
    """
    n = len(data)
    if n < 13:
        return False
    at = 13
    flags = data[10]
    if flags & 0x80:  # global colour table
        at += 3 * (2 ** ((flags & 0x07) + 1))
    while at < n:
        kind = data[at]
        if kind == 0x3B:
            return True
        if kind == 0x21:  # extension: introducer, label, then sub-blocks
            at += 2
        elif kind == 0x2C:  # image descriptor (+ local colour table), LZW minimum code size
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
        if at >= n:
            return False
        at += 1
    return False
