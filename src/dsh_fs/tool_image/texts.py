"""Every model-facing text of ``read_image`` (docs/IMAGES.md).

The ``reference`` texts are the reference's, byte for byte (``packages/fs/tool-fs/src/
read-image.ts`` and the attachment service it calls, ``packages/attachment/attachment-local/
src/store.ts`` and ``image.ts``, at commit ``e1cd107d7b10e34c5078f809a1a4149a8e4302e3``). The
``default`` profile's own texts carry their deviation ID (docs/DEVIATIONS.md I2, I3).
"""

from __future__ import annotations

__all__ = (
    "ANIMATED_GIF",
    "DESCRIPTION",
    "EMPTY",
    "FILE_PATH_DESCRIPTION",
    "MALFORMED",
    "dimension_too_large",
    "envelope",
    "in_file",
    "media_type_refused",
    "not_an_image_path",
    "too_many_pixels",
    "type_mismatch",
)

DESCRIPTION = (
    "Read a PNG/JPEG/WebP/GIF file and return the image itself. Requires the current model to accept image input."
)
FILE_PATH_DESCRIPTION = "Path to the image file, resolved by the filesystem backend."

EMPTY = "Image is empty."
"""the attachment service's ``INVALID_IMAGE`` text for a zero-byte file (reference)"""
MALFORMED = "Unsupported or malformed image data."
"""the attachment service's ``INVALID_IMAGE`` text: unknown format, cut short, or not decodable
(reference)"""


def not_an_image_path(file_path: str) -> str:
    """The extension gate (reference): ``file_path`` as the model sent it."""
    return f'cannot read "{file_path}": read_image only accepts PNG/JPEG/WebP/GIF paths'


def media_type_refused(file_path: str, media_type: str) -> str:
    """The deployment's media-type gate (reference)."""
    return f'cannot read "{file_path}": {media_type} images are not accepted by this deployment'


def dimension_too_large(display: str, limit: int) -> str:
    """A side over ``max_dimension`` pixels (reference)."""
    return (
        f'cannot read "{display}": at least one image side exceeds the {limit}px limit; '
        "downscale the image and read the smaller copy"
    )


def too_many_pixels(display: str, limit: int) -> str:
    """Width × height over ``max_pixels`` (reference)."""
    return (
        f'cannot read "{display}": the image exceeds the {limit}-pixel decoded-size limit; '
        "downscale the image and read the smaller copy"
    )


def type_mismatch(display: str, extension: str, media_type: str) -> str:
    """The magic bytes are another image format than the extension declares (reference)."""
    return (
        f'cannot read "{display}": the {extension} extension declares {media_type}, but the bytes use a '
        "different image format; rename the file to match its actual format if it is PNG/JPEG/WebP/GIF, "
        "or convert it to one of those formats"
    )


def envelope(display: str, media_type: str, width: int, height: int, size: int) -> str:
    """The text block beside the image block (reference ``formatImageReadOutput``)."""
    return (
        f"<path>{display}</path>\n<type>image</type>\n<content>\n"
        f"{media_type} image, {width}x{height} px, {size} bytes\n</content>"
    )


# -- default profile only -----------------------------------------------------------------------

def in_file(display: str, reason: str) -> str:
    """I2: an attachment-service text that names no file, prefixed with the file it is about
    (``cannot read "<dp>": Image is empty.``), so a batch of parallel reads says which failed."""
    return f'cannot read "{display}": {reason}'


ANIMATED_GIF = (
    "the GIF is animated, and OpenAI's image input accepts only non-animated GIFs; "
    "convert one frame to PNG and read that copy"
)
"""I3: why an animated GIF is refused (OpenAI documents "non-animated GIF" among its image
input types); follows ``cannot read "<dp>": ``"""
