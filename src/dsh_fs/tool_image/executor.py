"""The ``read_image`` executor (docs/IMAGES.md; the reference's ``read-image.ts``).

Gates in the reference's order, each before any file I/O it would make useless: blank path →
extension (PNG/JPEG/WebP/GIF) → the deployment's media types → (the model takes images: the
deployment declared it by loading this tool at all) → resolve → one stat (absent: ``fs/observed``
absent, then not found; not a regular file) → the bounded raw read (``FileSystem.read_bytes``,
``min(max_bytes, max_message_bytes)``) → admission (``admission.admit``, in a worker thread) →
``fs/observed`` at the stat's version, as ``read`` records it. The result: the text envelope and
one image block (``core.tools.image_block``).
"""

from __future__ import annotations

from typing import Any

import anyio

from ..core.context import Context
from ..core.session import ToolExecution
from ..core.tools import ContentBlock, image_block, text_block
from ..fs.errors import not_found, not_regular_file
from ..fs.events import FS_OBSERVED
from ..fs.filesystem import FileSystem
from ..fs.media import extension_of, image_media_type_for_path
from ..tool_common.switches import ToolSwitches
from ..tool_fs.args import check_file_path
from . import texts
from .admission import Refusal, admit
from .config import ImageConfig

__all__ = ("ReadImage", "ReadImageError")

class ReadImageError(Exception):
    """A ``read_image`` refusal: a plain error (no ``{name, code}``), as the reference's
    ``new Error(...)``."""


class ReadImage:
    """The executor bound to one context and configuration."""

    def __init__(self, ctx: Context, config: ImageConfig, switches: ToolSwitches) -> None:
        self.ctx = ctx
        self.config = config
        self.switches = switches

    @property
    def fs(self) -> FileSystem:
        return self.ctx.fs  # type: ignore[no-any-return]

    def _refusal(self, display: str, refusal: Refusal) -> ReadImageError:
        """The error of an admission refusal other than ``mismatch``."""
        config = self.config
        kind = refusal.kind
        if kind == "pixels":
            return ReadImageError(texts.too_many_pixels(display, config.image_max_pixels))
        if kind == "dimension":
            return ReadImageError(texts.dimension_too_large(display, config.image_max_dimension))
        if kind == "animated":
            return ReadImageError(texts.in_file(display, texts.ANIMATED_GIF))
        reason = texts.EMPTY if kind == "empty" else texts.MALFORMED
        return ReadImageError(texts.in_file(display, reason) if self.switches.image_errors_name_the_file else reason)

    async def __call__(self, args: dict[str, Any], execution: ToolExecution) -> list[ContentBlock]:
        """Read one image file: ``[envelope text block, image block]``.

        :raises ToolInputError: a blank ``file_path``
        :raises ReadImageError: a gate or admission refusal (texts: ``texts``)
        :raises FsError: from resolve, stat and the raw read (not found, not a regular file,
            outside the workspace, ``… bytes exceeds the <max>-byte limit``, …)
        """
        file_path: str = args["file_path"]
        check_file_path(file_path)
        declared = image_media_type_for_path(file_path)
        if declared is None:
            raise ReadImageError(texts.not_an_image_path(file_path))
        if declared not in self.config.image_media_types:
            raise ReadImageError(texts.media_type_refused(file_path, declared))
        signal = execution.signal
        fs = self.fs
        target = await fs.resolve(file_path, cwd=execution.cwd, signal=signal)
        info = await fs.stat(target, signal=signal)
        display = target.display_path
        if info is None:
            self.ctx.emit(FS_OBSERVED, target, None, execution)
            raise not_found("read", display)
        if info.type != "file":
            raise not_regular_file("read", display)
        data = await fs.read_bytes(target, max_bytes=self.config.byte_cap, size=info.size, info=info, signal=signal)
        try:
            admitted = await anyio.to_thread.run_sync(admit, data, declared, self.config, self.switches)
        except Refusal as refusal:
            if refusal.kind == "mismatch":
                extension = extension_of(display).lower()
                raise ReadImageError(texts.type_mismatch(display, extension, declared)) from None
            raise self._refusal(display, refusal) from None
        self.ctx.emit(FS_OBSERVED, target, info.version, execution)
        envelope = texts.envelope(display, admitted.media_type, admitted.width, admitted.height, len(data))
        return [text_block(envelope), image_block(data, admitted.media_type)]
