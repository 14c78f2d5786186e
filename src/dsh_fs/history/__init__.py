"""The history of every change an agent makes, and a rewind that never clobbers anyone's later
work (docs/HISTORY.md).

* ``model`` (pure): ``Step``, ``FileChange``, ``Before`` (blob | absent | unrestorable |
  replacement), ``Checkpoint``, ``History``;
* ``plan`` (pure): the rewind planner;
* ``store``: the ``HistoryStore`` interface; ``memory_store``, ``sqlite_store``, ``s3_store``;
* ``recorder``: ``HistoryFileSystem``, the recording wrapper over any provider;
* ``rewind``: a rewind's I/O around the planner; ``api``: ``ctx.history``/``checkpoint``/``rewind``.
"""

from __future__ import annotations

from .api import HistoryService as HistoryService, StepList as StepList, owner_of as owner_of
from .memory_store import MemoryHistoryStore as MemoryHistoryStore
from .model import (
    Before as Before,
    Checkpoint as Checkpoint,
    FileChange as FileChange,
    History as History,
    Step as Step,
)
from .recorder import HistoryFileSystem as HistoryFileSystem
from .rewind import FileResult as FileResult, RewindError as RewindError, RewindResult as RewindResult
from .store import HistoryStore as HistoryStore

__all__ = (
    "Before",
    "Checkpoint",
    "FileChange",
    "FileResult",
    "History",
    "HistoryFileSystem",
    "HistoryService",
    "HistoryStore",
    "MemoryHistoryStore",
    "RewindError",
    "RewindResult",
    "Step",
    "StepList",
    "owner_of",
)
