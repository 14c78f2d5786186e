"""Spill stores: where a capped tool result is saved whole for the model to page later
(``SpillStore``, the ``spill_store`` service; ``LocalSpillStore``, private local files)."""

from .local import LocalSpillStore as LocalSpillStore
from .store import (
    RETRIEVAL_HINT as RETRIEVAL_HINT,
    SpillRef as SpillRef,
    SpillRequest as SpillRequest,
    SpillStore as SpillStore,
    SpillWriter as SpillWriter,
)

__all__ = ("LocalSpillStore", "RETRIEVAL_HINT", "SpillRef", "SpillRequest", "SpillStore", "SpillWriter")
