"""``read_image``: an image file as real image content (docs/IMAGES.md). Opt-in (``images=True``).

``admission`` (the reference's checks, in its order; the header checks are ``fs.image_header``,
pure: magic bytes and intrinsic size), ``decode`` (Pillow's full decode), ``texts`` (every model-facing string), ``config``,
``executor``, ``plugin``.
"""

from .config import ImageConfig as ImageConfig
from .plugin import READ_IMAGE as READ_IMAGE, ToolReadImage as ToolReadImage

__all__ = ("ImageConfig", "READ_IMAGE", "ToolReadImage")
