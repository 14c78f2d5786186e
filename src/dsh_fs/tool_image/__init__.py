"""``read_image``: an image file as real image content (docs/IMAGES.md). Opt-in (``images=True``).

``header`` (pure: magic bytes and intrinsic size), ``admission`` (the reference's checks, in its
order), ``decode`` (Pillow's full decode), ``texts`` (every model-facing string), ``config``,
``executor``, ``plugin``.
"""

from .config import ImageConfig as ImageConfig
from .plugin import READ_IMAGE as READ_IMAGE, ToolReadImage as ToolReadImage

__all__ = ("ImageConfig", "READ_IMAGE", "ToolReadImage")
