"""The spill seam: where a tool saves a complete result that was too long to show inline,
so the model can page it later (REFERENCE-SPEC §6.1/§6.2 "stored at: <locator>"). No I/O here.

A spill store is the ``spill_store`` service. ``save_text`` keeps a whole text; a
``SpillWriter`` (``open_writer``) takes it piece by piece, so a tool streams a long result to
disk in bounded memory. Both give a ``SpillRef``: the model-facing ``locator`` (opaque to
tools; the local store's is an absolute file path) and the ``retrieval_hint`` that tells the
model what to do with it. ``reader`` lets the ``read`` and ``grep`` tools open a locator that
the workspace provider cannot reach (a containment root, a remote provider).

Save failures raise; a tool treats them as "could not be saved", never as a failed call.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from ..core.context import Scope
    from ..fs.filesystem import FileSystem

__all__ = ("RETRIEVAL_HINT", "SpillRef", "SpillRequest", "SpillStore", "SpillWriter")

RETRIEVAL_HINT = "Use read with offset/limit, or grep this path to search within it."
"""the local store's retrieval hint (the reference's ``dsh-spill-local``)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class SpillRequest:
    """Who saves what (the reference's ``SaveTextSpill`` without the content)."""

    session_id: str
    """the owning agent session (a storage namespace, not access control by itself)"""
    tool_name: str
    """the tool whose result is saved, e.g. ``glob``"""
    call_id: str
    """the tool call the result belongs to"""
    suggested_name: str
    """a file-name hint such as ``glob-results.txt``; stores sanitize it, never trust it"""
    label: str = "result"
    """a short description of the artifact"""


@dataclass(frozen=True, slots=True, kw_only=True)
class SpillRef:
    """A saved artifact."""

    locator: str
    """what the model is shown (the local store: an absolute file path)"""
    bytes: int
    """UTF-8 size of the saved text"""
    retrieval_hint: str
    """how to get at it, e.g. ``RETRIEVAL_HINT``"""


class SpillWriter(abc.ABC):
    """One artifact being written; ``commit`` or ``discard`` it exactly once."""

    @abc.abstractmethod
    def write(self, text: str) -> None:
        """Append ``text`` (buffered; may block briefly on a local disk)."""

    @abc.abstractmethod
    async def commit(self, *, head: str = "") -> SpillRef:
        """Finish the artifact: ``head`` followed by everything written. The artifact is
        visible only from now on.

        :raises OSError: when it cannot be stored (the writer is discarded then)
        """

    @abc.abstractmethod
    async def discard(self) -> None:
        """Drop everything written (idempotent; also after a failed ``commit``)."""

    @property
    @abc.abstractmethod
    def size(self) -> int:
        """UTF-8 bytes written so far (``head`` not counted)."""


class SpillStore(abc.ABC):
    """Abstract spill store; a plugin that provides itself as ``spill_store``."""

    name: ClassVar[str] = "spill-store"

    @classmethod
    def apply(cls, scope: "Scope", /, **config: object) -> None:
        """Plugin entry: construct with ``config`` and the context's profile, provide as
        ``spill_store``; closed with the scope."""
        store = cls(profile=scope.profile, **config)  # type: ignore[call-arg]
        scope.provide("spill_store", store)
        scope.effect(store.close)

    def __init__(self, *, profile: object = None) -> None:
        self.profile = profile

    @abc.abstractmethod
    def open_writer(self, request: SpillRequest) -> SpillWriter:
        """A writer for one new artifact.

        :raises OSError: when the store cannot be used
        """

    async def save_text(self, request: SpillRequest, content: str) -> SpillRef:
        """Save ``content`` whole (``open_writer``, ``write``, ``commit``).

        :raises OSError: when it cannot be stored
        """
        writer = self.open_writer(request)
        try:
            writer.write(content)
        except BaseException:
            await writer.discard()
            raise
        return await writer.commit()

    def reader(self, path: str, *, session_id: str | None) -> "FileSystem | None":
        """A read-only provider through which ``path`` can be read, when ``path`` is the
        locator of an artifact of session ``session_id``; ``None`` otherwise (the default)."""
        return None

    def close(self) -> None:
        """Release what the store holds (a private store deletes its artifacts)."""
