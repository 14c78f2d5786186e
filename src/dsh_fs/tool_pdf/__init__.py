"""``read_pdf``: the text of a PDF file by page ranges (docs/PDF.md). Opt-in (``pdfs=True``).

| module | owns |
|---|---|
| ``pages`` | the ``pages`` argument: Claude Code's page-range syntax and texts (pure) |
| ``render`` | the envelope: page markers, the byte cap, the footer (pure) |
| ``worker`` | the child program that runs PDFium (``pypdfium2``) inside its limits |
| ``extract`` | one child per call: its limits, its bounded input and answer, kill on time-out or abort |
| ``texts`` | every model-facing string |
| ``config`` | ``PdfConfig``: the caps |
| ``executor`` | one call: gates, stat, raw read, worker, images, observation |
| ``plugin`` | ``ToolReadPdf``: registers ``read_pdf`` |
"""

from .config import PdfConfig as PdfConfig
from .plugin import READ_PDF as READ_PDF, ToolReadPdf as ToolReadPdf

__all__ = ("PdfConfig", "READ_PDF", "ToolReadPdf")
