"""The ``read-image`` plugin: registers ``read_image`` (docs/IMAGES.md). Opt-in: load it only
for a model that takes image input (``create_context(images=True)``, ``dsh-fs mcp --images``) —
a tool result that carries an image breaks a text-only model's conversation.

No prompt section: the reference registers none for ``read_image``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ..core.context import Scope
from ..core.schema import Param
from ..core.tools import ToolDefinition
from ..tool_common.switches import ToolSwitches
from . import texts
from .admission import ImageAdmission
from .config import ImageConfig
from .decode import require_pillow
from .executor import ReadImage

__all__ = ("READ_IMAGE", "ToolReadImage", "read_image_params")

READ_IMAGE = "read_image"
"""the tool's name; ``read`` looks for it to say how to see an image (I1)"""


def read_image_params() -> dict[str, Param]:
    """The ``read_image`` parameters (the reference's schema)."""
    return {"file_path": Param(type="string", required=True, description=texts.FILE_PATH_DESCRIPTION)}


def _present_call(args: dict[str, Any]) -> dict[str, Any]:
    """The reference's ``presentCall``: a generic card in the read family."""
    path = args.get("file_path")
    return {"card": "generic", "title": f"Read image {path}", "kind": "read", "locations": [{"path": path}]}


class ToolReadImage:
    """``ctx.plugin(ToolReadImage, image_max_bytes=…, image_max_message_bytes=…,
    image_max_pixels=…, image_max_dimension=…, image_media_types=(…))``; the profile comes
    from the context.

    :raises ImportError: Pillow is not installed (the ``images`` extra)
    :raises ValueError: an invalid setting (``ImageConfig``)
    """

    name: ClassVar[str] = "read-image"
    inject: ClassVar[tuple[str, ...]] = ("fs", "tools")

    @classmethod
    def apply(cls, scope: Scope, /, **config: Any) -> None:
        require_pillow()
        settings = ImageConfig(**config)
        switches = ToolSwitches.of(scope.profile)
        scope.provide("image_admission", ImageAdmission(settings, switches))  # images in other tools' results
        scope.effect(
            scope.tools.register(
                ToolDefinition(
                    name=READ_IMAGE,
                    description=texts.DESCRIPTION,
                    parameters=read_image_params(),
                    execute=ReadImage(scope.ctx, settings, switches),
                    is_concurrency_safe=lambda args: True,
                    present_call=_present_call,
                )
            )
        )
