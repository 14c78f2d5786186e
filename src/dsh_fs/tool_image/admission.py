"""The attachment service's admission of one image's bytes, as ``read_image`` runs it (the
reference's ``inspectMetadata`` + ``detectImage``): empty → header (format and the decoded size,
``header.read_header``) → pixel cap → per-side cap (both on the extent every frame reaches, D32)
→ full decode → the extension's claim. Synchronous; run it in a worker thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..fs.tool_switches import ToolSwitches
from .config import ImageConfig
from .decode import DecodeFailed, decode_fully
from .header import gif_is_animated, read_header

__all__ = ("Admitted", "Refusal", "admit")

RefusalKind = Literal["empty", "malformed", "pixels", "dimension", "mismatch", "animated"]


@dataclass(frozen=True, slots=True)
class Admitted:
    """An image that passed: its verified media type and intrinsic size."""

    media_type: str
    width: int
    height: int


@dataclass(frozen=True, slots=True)
class Refusal(Exception):
    """Why the bytes were refused (the reference's ``AttachmentError`` codes: ``empty`` and
    ``malformed`` are its ``INVALID_IMAGE``; ``animated`` is I3's)."""

    kind: RefusalKind


def admit(data: bytes, declared: str, config: ImageConfig, switches: ToolSwitches) -> Admitted:
    """Check ``data`` as the reference's admission does, in its order (then I3's animation
    check when ``switches.refuse_animated_gif``).

    :param declared: the media type the path's extension claims
    :raises Refusal: the first check that fails
    """
    if not data:
        raise Refusal("empty")
    header = read_header(data)
    if header is None:
        raise Refusal("malformed")
    width, height = header.bounds  # every frame's extent (D32), before a pixel is decoded
    if width * height > config.image_max_pixels:
        raise Refusal("pixels")
    if max(width, height) > config.image_max_dimension:
        raise Refusal("dimension")
    if header.width == 0 or header.height == 0:
        raise Refusal("malformed")
    try:
        decode_fully(data, header.media_type)
    except DecodeFailed:
        raise Refusal("malformed") from None
    if header.media_type != declared:
        raise Refusal("mismatch")
    if switches.refuse_animated_gif and header.media_type == "image/gif" and gif_is_animated(data):
        raise Refusal("animated")
    return Admitted(header.media_type, header.width, header.height)
