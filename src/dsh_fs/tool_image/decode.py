"""The full decode that proves an image's bytes are complete and valid (Pillow, the ``images``
extra). Synchronous and CPU-bound: callers run it in a worker thread.

The reference decodes every admitted image completely (``sharp(data, { failOn: 'error' })
.raw().toBuffer()``), so an image cut short or failing its checksums is refused rather than
sent. Here Pillow decodes the first frame (``Image.load``) and ``integrity`` checks what Pillow
skips once it has the pixels (a PNG's trailing chunks and critical CRCs, a GIF's trailer);
memory is bounded by the caps checked before on the size the decoder allocates
(``header.read_header``: every frame's extent, every size field the decoder reads; at most
``max_pixels`` pixels, four bytes each).
"""

from __future__ import annotations

import io
import warnings

from .integrity import gif_is_whole, png_is_whole

__all__ = ("DecodeFailed", "MISSING_PILLOW", "decode_fully", "require_pillow")

MISSING_PILLOW = "read_image needs Pillow, the images extra: pip install '.[images]' from the dsh-fs checkout"

_FORMATS = {"image/png": "PNG", "image/jpeg": "JPEG", "image/gif": "GIF", "image/webp": "WEBP"}


class DecodeFailed(Exception):
    """The bytes do not decode as an image of the format their header names."""


def require_pillow() -> None:
    """:raises ImportError: ``MISSING_PILLOW`` when Pillow is not installed"""
    try:
        import PIL.Image  # noqa: F401
    except ImportError as exc:
        raise ImportError(MISSING_PILLOW) from exc


def decode_fully(data: bytes, media_type: str) -> None:
    """Decode ``data`` (the first frame, every pixel of it) as ``media_type``.

    :param media_type: the format the header named (``header.read_header``)
    :raises DecodeFailed: truncated or corrupt data (a PNG chunk cut or failing its CRC, no
        ``IEND``; a GIF without its trailer), or a decoder that reads another format
    """
    from PIL import Image

    if (media_type == "image/png" and not png_is_whole(data)) or (media_type == "image/gif" and not gif_is_whole(data)):
        raise DecodeFailed("the file is cut short or fails its checksums")

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # DecompressionBombWarning: our own caps were checked first
            with Image.open(io.BytesIO(data), formats=[_FORMATS[media_type]]) as image:
                image.load()
    except Exception as exc:  # Pillow raises OSError, SyntaxError, ValueError, DecompressionBombError …
        raise DecodeFailed(str(exc)) from exc
