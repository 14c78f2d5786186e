"""The one small interface every history store implements (memory, SQLite, S3), and the limits
they share (docs/HISTORY.md "How it is stored").

Crash consistency is the recorder's protocol over this interface: ``begin`` stores the
before-state's bytes and a *pending* change durably before the mutation; ``complete`` records the
version after it; ``abandon`` removes the change of a mutation that failed (it changed nothing).
A change left pending by a crash stays in the history: a rewind accepts either of its states.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass

from .model import Before, History

__all__ = ("CallMeta", "DEFAULT_MAX_FILE_BYTES", "DEFAULT_MAX_OWNER_BYTES", "HistoryStore", "Intent")

DEFAULT_MAX_FILE_BYTES = 16 * 1024 * 1024
"""a file bigger than this (bytes) is recorded without a copy of its content (``Before.unrestorable``,
or a literal edit's ``Before.replacement``)"""

DEFAULT_MAX_OWNER_BYTES = 256 * 1024 * 1024
"""the bytes of kept copies one owner's history may refer to; past it the oldest steps are dropped"""


@dataclass(frozen=True, slots=True, kw_only=True)
class CallMeta:
    """The tool call a change belongs to: one step per ``step_key`` (unique per call)."""

    owner: str
    step_key: str
    tool: str
    call_id: str | None
    time: float


@dataclass(frozen=True, slots=True, kw_only=True)
class Intent:
    """A change about to be made: what ``begin`` stores as pending."""

    op: str
    key: str
    path: str
    before: Before
    before_version: str | None = None
    dest_key: str | None = None
    dest_path: str | None = None
    after_digest: str | None = None
    """the SHA-256 of the bytes the mutation will leave, when known before it (a witnessed
    mutation, ``fs.witness``): a rewind then accepts a pending change's file only in one of its
    two states"""


class HistoryStore(abc.ABC):
    """Where owners' histories are kept. Every method may block on I/O briefly (a committed
    transaction, a request); the async ones never block the event loop."""

    max_owner_bytes: int = DEFAULT_MAX_OWNER_BYTES

    @abc.abstractmethod
    async def begin(self, call: CallMeta, intent: Intent, blob: bytes | None) -> int:
        """Store ``blob`` (the before-state's bytes, named ``intent.before.digest``; ``None``
        when the intent keeps none) and the pending change, durably, in the step of ``call``
        (made, with the next number, if it is the call's first change). Past the owner's byte
        cap, its oldest steps (never this one) are dropped.

        :return: the change's id (for ``complete``/``abandon``)
        """

    @abc.abstractmethod
    async def complete(self, owner: str, change_id: int, after_version: str, after_digest: str | None = None) -> None:
        """Record that the change's mutation finished, leaving ``after_version`` (and the bytes
        named ``after_digest``; ``None`` keeps the intent's)."""

    @abc.abstractmethod
    async def abandon(self, owner: str, change_id: int) -> None:
        """Remove the pending change of a mutation that failed (and its step when it was the
        step's only change)."""

    @abc.abstractmethod
    async def history(self, owner: str) -> History:
        """The owner's steps (oldest first, with their changes and checkpoint names), its
        checkpoints, and how many of its oldest steps were dropped."""

    @abc.abstractmethod
    async def blob(self, digest: str) -> bytes | None:
        """The bytes named ``digest``, or ``None`` when they are no longer kept."""

    @abc.abstractmethod
    async def checkpoint(self, owner: str, name: str) -> str:
        """Mark the owner's current point (right after its newest step) as ``name``; its id."""

    @abc.abstractmethod
    async def forget(self, owner: str) -> int:
        """Remove the owner's whole history; the number of steps removed."""

    async def aclose(self) -> None:
        """Release what the store holds (connections); idempotent."""
