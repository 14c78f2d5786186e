"""The ``read-pdf`` plugin: registers ``read_pdf`` (docs/PDF.md). Opt-in:
``create_context(pdfs=True)``, ``dsh-fs mcp --pdfs``; needs ``pypdfium2`` (the ``pdfs`` extra).

No prompt section: the tool's description says what it does.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ..core.context import Scope
from ..core.schema import Param
from ..core.tools import ToolDefinition
from . import texts
from .config import PdfConfig
from .executor import ReadPdf

__all__ = ("READ_PDF", "ToolReadPdf", "read_pdf_params", "require_pypdfium2")

READ_PDF = "read_pdf"
"""the tool's name; ``read`` names it in its hint on a PDF (DEVIATIONS F6)"""


def require_pypdfium2() -> None:
    """:raises ImportError: pypdfium2 is missing, with the extra to install"""
    try:
        import pypdfium2  # noqa: F401
    except ImportError:
        raise ImportError("read_pdf needs pypdfium2: pip install '.[pdfs]' from the dsh-fs checkout") from None


def read_pdf_params() -> dict[str, Param]:
    """The ``read_pdf`` parameters: ``file_path`` (as ``read_image``'s) and Claude Code's ``pages``."""
    return {
        "file_path": Param(type="string", required=True, description=texts.FILE_PATH_DESCRIPTION),
        "pages": Param(type="string", description=texts.PAGES_DESCRIPTION),
    }


def _present_call(args: dict[str, Any]) -> dict[str, Any]:
    """A generic card in the read family."""
    path = args.get("file_path")
    pages = args.get("pages")
    title = f"Read PDF {path}" + (f" (pages {pages})" if isinstance(pages, str) else "")
    return {"card": "generic", "title": title, "kind": "read", "locations": [{"path": path}]}


class ToolReadPdf:
    """``ctx.plugin(ToolReadPdf, pdf_max_bytes=…, pdf_max_output_bytes=…, pdf_worker_memory=…,
    pdf_worker_seconds=…, pdf_workers=…)`` (``PdfConfig``).

    :raises ImportError: pypdfium2 is not installed (the ``pdfs`` extra)
    :raises ValueError: an invalid setting
    """

    name: ClassVar[str] = "read-pdf"
    inject: ClassVar[tuple[str, ...]] = ("fs", "tools")

    @classmethod
    def apply(cls, scope: Scope, /, **config: Any) -> None:
        settings = PdfConfig(**config)
        require_pypdfium2()
        scope.effect(
            scope.tools.register(
                ToolDefinition(
                    name=READ_PDF,
                    description=texts.DESCRIPTION,
                    parameters=read_pdf_params(),
                    execute=ReadPdf(scope.ctx, settings),
                    is_concurrency_safe=lambda args: True,
                    present_call=_present_call,
                )
            )
        )
