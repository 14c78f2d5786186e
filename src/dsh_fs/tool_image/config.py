"""``read_image`` settings: the image caps, with their vendor-derived defaults (docs/IMAGES.md
"Limits"). Its profile switches (I2, I3) are ``tool_common.switches.ToolSwitches`` fields.

Defaults are the reference's attachment service defaults (``packages/attachment/
attachment-local/src/index.ts``), and each one is inside what both vendor APIs accept:

* ``max_bytes`` 3.5 MiB: Anthropic refuses an image whose base64 form is over 5 MB; 3.5 MiB
  encodes to 4.67 MiB. OpenAI's per-request payload cap (50 MB) is far above it.
* ``max_dimension`` 2000 px per side: Anthropic refuses an image over 2000 px on a side in a
  request holding more than 20 images (and every image of a conversation rides every later
  request), 8000 px otherwise.
* ``max_pixels`` 40,000,000: the reference's decoded-size cap (with 2000 px sides the
  effective bound is 4,000,000).
* ``max_message_bytes`` 100 MiB: the reference's per-message aggregate; one result carries one
  image, so the byte cap is ``min(max_bytes, max_message_bytes)``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..tool_fs.shared import positive_integer

__all__ = ("CONFIG_KEYS", "ImageConfig", "MEDIA_TYPES")

MEDIA_TYPES = ("image/png", "image/jpeg", "image/webp", "image/gif")
"""every media type ``read_image`` can return (the reference's ``ImageMediaType``)"""

CONFIG_KEYS = {
    "image_max_bytes": "maxImageBytes",
    "image_max_message_bytes": "maxMessageImageBytes",
    "image_max_pixels": "maxImagePixels",
    "image_max_dimension": "maxImageDimension",
}
"""``create_context`` / plugin keyword → the reference's attachment config name (in messages)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class ImageConfig:
    """The caps and the accepted media types.

    :raises ValueError: ``read-image: <name> must be a positive integer``; an unknown or empty
        ``image_media_types``
    """

    image_max_bytes: int = int(3.5 * 1024 * 1024)
    image_max_message_bytes: int = 100 * 1024 * 1024
    image_max_pixels: int = 40_000_000
    image_max_dimension: int = 2000
    image_media_types: tuple[str, ...] = MEDIA_TYPES
    """the deployment's accepted media types (the reference's ``imageLimits.mediaTypes``)"""

    def __post_init__(self) -> None:
        for key, name in CONFIG_KEYS.items():
            object.__setattr__(self, key, positive_integer(name, getattr(self, key), plugin="read-image"))
        types = tuple(self.image_media_types)
        if not types or any(t not in MEDIA_TYPES for t in types):
            raise ValueError(f"read-image: image_media_types must be a non-empty list of {', '.join(MEDIA_TYPES)}")
        object.__setattr__(self, "image_media_types", types)

    @property
    def byte_cap(self) -> int:
        """The raw read's cap: one image in one message (the reference's ``byteCap``)."""
        return min(self.image_max_bytes, self.image_max_message_bytes)
