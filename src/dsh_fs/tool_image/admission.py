"""The attachment service's admission of one image's bytes, as ``read_image`` runs it (the
reference's ``inspectMetadata`` + ``detectImage``): empty → header (format and the decoded size,
``header.read_header``) → pixel cap → per-side cap (both on the extent every frame reaches, D32)
→ full decode → the extension's claim. Synchronous; run it in a worker thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..tool_common.switches import ToolSwitches
from .config import ImageConfig
from .decode import DecodeFailed, decode_fully
from ..fs.image_header import gif_is_animated, read_header

__all__ = ("Admitted", "ImageAdmission", "Refusal", "admit")

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


class ImageAdmission:
    """``read_image``'s admission as a context service (``ctx.image_admission``, provided by the
    ``read-image`` plugin) for other tools that return images: the notebook view of ``read``
    (DEVIATIONS F1) and ``read_pdf``'s image-only pages. Its presence says the deployment
    takes images; its checks and caps are ``read_image``'s.
    """

    def __init__(self, config: ImageConfig, switches: ToolSwitches) -> None:
        self.config = config
        self.switches = switches

    @property
    def max_bytes(self) -> int:
        """The largest image (bytes) one result may carry (``ImageConfig.byte_cap``)."""
        return self.config.byte_cap

    @property
    def max_message_bytes(self) -> int:
        """The most image bytes one result may carry in all (``image_max_message_bytes``)."""
        return self.config.image_max_message_bytes

    def check(self, data: bytes, media_type: str) -> str | None:
        """Why ``data`` (an image of the declared ``media_type``) may not be sent, or ``None``
        when it may. Synchronous (a full decode): run it in a worker thread.

        :return: the reason, in ``read_image``'s words without a file name (``Unsupported or
            malformed image data.``, ``at least one image side exceeds the 2000px limit``, …)
        """
        config = self.config
        if media_type not in config.image_media_types:
            return f"{media_type} images are not accepted by this deployment"
        if len(data) > config.byte_cap:
            return f"{len(data)} bytes exceeds the {config.byte_cap}-byte limit"
        try:
            admit(data, media_type, config, self.switches)
        except Refusal as refusal:
            return _REASONS[refusal.kind](config)
        return None


_REASONS = {
    "empty": lambda config: "Image is empty.",
    "malformed": lambda config: "Unsupported or malformed image data.",
    "pixels": lambda config: f"the image exceeds the {config.image_max_pixels}-pixel decoded-size limit",
    "dimension": lambda config: f"at least one image side exceeds the {config.image_max_dimension}px limit",
    "mismatch": lambda config: "the bytes are another image format than the declared one",
    "animated": lambda config: "the GIF is animated, and OpenAI's image input accepts only non-animated GIFs",
}
"""``ImageAdmission.check``'s reason per refusal kind (``texts``'s words, without a file)"""
