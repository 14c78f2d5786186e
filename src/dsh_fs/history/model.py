"""The history's vocabulary (pure, no I/O): steps, file changes and what restores a file's
before-state (docs/HISTORY.md "How it is stored").

A *step* is one mutating tool call of one observation owner (``write``, ``edit``, a whole
``apply_patch``, one editor command, a rewind); its *changes* are the files it changed, each
with the version before and after and what brings the before-state back. Blobs are named by
the SHA-256 of their bytes (``digest``), so the same bytes are kept once per store.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Literal

__all__ = (
    "Before",
    "Checkpoint",
    "FileChange",
    "History",
    "Step",
    "digest_of",
)

BeforeKind = Literal["blob", "absent", "unrestorable", "replacement"]
ChangeOp = Literal["write", "edit", "delete", "rename"]


def digest_of(data: bytes) -> str:
    """The content address of ``data``: its SHA-256 in lowercase hex (64 characters)."""
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True, slots=True, kw_only=True)
class Before:
    """What restores a file to the state it had before a change.

    * ``blob``: the file existed with the bytes named ``digest`` (``size`` bytes, permission
      bits ``mode`` where the provider has them);
    * ``absent``: there was no file;
    * ``unrestorable``: the file existed but its bytes were not kept (``reason``: over the size
      cap, not a regular file's bytes the provider can read);
    * ``replacement``: a literal edit of a file too big to copy, kept as its reversible
      replacement: the change put ``new`` where ``old`` was (once), so replacing the one ``new``
      by ``old`` restores it.
    """

    kind: BeforeKind
    digest: str | None = None
    size: int | None = None
    mode: int | None = None
    reason: str | None = None
    old: str | None = None
    new: str | None = None

    @classmethod
    def blob(cls, digest: str, size: int, mode: int | None = None) -> "Before":
        """A kept copy of ``size`` bytes named ``digest``."""
        return cls(kind="blob", digest=digest, size=size, mode=mode)

    @classmethod
    def absent(cls) -> "Before":
        """No file before the change."""
        return cls(kind="absent")

    @classmethod
    def unrestorable(cls, reason: str) -> "Before":
        """A file whose bytes were not kept, and why."""
        return cls(kind="unrestorable", reason=reason)

    @classmethod
    def replacement(cls, old: str, new: str) -> "Before":
        """A literal edit's reversible replacement (``new`` put where ``old`` was, once)."""
        return cls(kind="replacement", old=old, new=new)


@dataclass(frozen=True, slots=True, kw_only=True)
class FileChange:
    """One file changed by a step.

    ``rename`` moves ``key``/``path`` to ``dest_key``/``dest_path`` (a move never replaces a
    file, so the destination was absent before). ``after_version`` is ``None`` while the change
    is *pending*: its intent was stored before the mutation and the mutation's end was never
    recorded (the process died, or it is under way); the file may then be in its before-state or
    its after-state, and a rewind accepts either.
    """

    id: int
    """the store's identity of this change (increasing in the order intents were stored)"""
    op: ChangeOp
    key: str
    path: str
    before: Before
    before_version: str | None = None
    after_version: str | None = None
    after_digest: str | None = None
    """the SHA-256 of the bytes written, when the recorder knew them (a rewind's own writes)"""
    dest_key: str | None = None
    dest_path: str | None = None

    @property
    def pending(self) -> bool:
        """The mutation's end was not recorded (see the class docstring)."""
        return self.after_version is None


@dataclass(frozen=True, slots=True, kw_only=True)
class Step:
    """One mutating tool call of one owner, numbered from 1 in the order the calls started."""

    number: int
    time: float
    """when the call's first change was recorded (seconds since the epoch)"""
    tool: str
    """the tool (or face) that made it: ``write``, ``edit``, ``apply_patch``, ``rewind``, …"""
    owner: str
    call_id: str | None = None
    changes: tuple[FileChange, ...] = ()
    checkpoints: tuple[str, ...] = ()
    """names of the checkpoints marked right after this step"""

    @property
    def paths(self) -> tuple[str, ...]:
        """Every path the step changed (a move: both names), in the order changed."""
        out: list[str] = []
        for change in self.changes:
            for path in (change.path, change.dest_path):
                if path is not None and path not in out:
                    out.append(path)
        return tuple(out)

    @property
    def pending(self) -> bool:
        """Some change of this step may be incomplete (``FileChange.pending``)."""
        return any(change.pending for change in self.changes)


@dataclass(frozen=True, slots=True, kw_only=True)
class Checkpoint:
    """A named point in an owner's history: the state right after step ``step`` (0: before the
    first step)."""

    id: str
    name: str
    step: int
    time: float


@dataclass(frozen=True, slots=True, kw_only=True)
class History:
    """An owner's history as a store returns it: its steps (oldest first), its checkpoints and
    how many of its oldest steps were dropped to keep it under its byte cap."""

    steps: tuple[Step, ...] = ()
    checkpoints: tuple[Checkpoint, ...] = ()
    dropped: int = 0
    """steps dropped (the oldest ones: numbers ``1 .. dropped`` are no longer held)"""
    bytes: int = 0
    """the bytes of kept copies this owner's steps refer to"""

    @property
    def last(self) -> int:
        """The newest step's number (``dropped`` when none is held)."""
        return self.steps[-1].number if self.steps else self.dropped
