"""Which image media type a path's extension declares (docs/IMAGES.md). Pure.

The reference's ``IMAGE_EXTENSIONS`` / ``imageMediaTypeForPath`` (``packages/fs/tool-fs/src/
read-image.ts``): shared by ``read_image`` (its extension gate and mismatch message) and
``read`` (DEVIATIONS I1: a binary-file error on an image path says how to see it).
"""

from __future__ import annotations

import posixpath

__all__ = ("IMAGE_EXTENSIONS", "extension_of", "image_media_type_for_path")

IMAGE_EXTENSIONS = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp",
                    ".gif": "image/gif"}
"""extension (lower case) → the media type it declares"""


def extension_of(path: str) -> str:
    """Node's ``path.extname``: the last ``.suffix`` of the last segment (trailing ``/``
    ignored), ``""`` for a dot-file name such as ``.png``."""
    return posixpath.splitext(posixpath.basename(path.rstrip("/")))[1]


def image_media_type_for_path(path: str) -> str | None:
    """The media type ``path``'s extension declares (case-insensitive), or ``None`` when it
    does not claim an image."""
    return IMAGE_EXTENSIONS.get(extension_of(path).lower())
