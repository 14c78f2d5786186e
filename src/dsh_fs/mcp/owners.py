"""Observation owners for MCP connections (REFERENCE-SPEC §3.2: one owner per agent).

An MCP client connection is one agent, so it gets one ``Session`` (the policy keys
observations by that object, weakly, so dropping it here frees them):

* stdio: one ``Session(cwd=root)`` for the process (one process serves one client);
* streamable HTTP: one ``Session`` per MCP session id, kept in ``SessionOwners``; two HTTP
  clients never share observations.

Pure bookkeeping: no SDK import, no I/O, no awaits (so no lock is needed on one event loop).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from ..core.session import Session

__all__ = ("SessionOwners",)


class SessionOwners:
    """MCP session id → ``Session``, created on first use, dropped when the session ends.

    A session ends by an explicit ``drop`` (the client's HTTP ``DELETE``) or by staying idle
    longer than ``idle_timeout`` (the SDK closes such sessions too; they are pruned here on
    the next lookup). Pruning only ever loses observations, which makes later overwrites
    fail safe (``FS_NOT_OBSERVED``), never succeed wrongly.

    :param cwd: every session's cwd (the served root)
    :param idle_timeout: seconds without ``touch`` after which a session is forgotten
    :param clock: monotonic clock in seconds (for tests)
    """

    def __init__(self, cwd: str, *, idle_timeout: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.cwd = cwd
        self.idle_timeout = idle_timeout
        self._clock = clock
        self._sessions: dict[str, tuple[Session, float]] = {}

    def __len__(self) -> int:
        return len(self._sessions)

    def __contains__(self, session_id: object) -> bool:
        return session_id in self._sessions

    def get(self, session_id: str) -> Session:
        """The owner of ``session_id`` (a new ``Session`` on first use); marks it used."""
        self.prune()
        entry = self._sessions.get(session_id)
        session = entry[0] if entry is not None else Session(self.cwd, id=session_id)
        self._sessions[session_id] = (session, self._clock())
        return session

    def touch(self, session_id: str) -> None:
        """Mark ``session_id`` as used now (any request on it); unknown ids are ignored."""
        entry = self._sessions.get(session_id)
        if entry is not None:
            self._sessions[session_id] = (entry[0], self._clock())

    def drop(self, session_id: str) -> None:
        """Forget ``session_id`` and its observations (idempotent)."""
        self._sessions.pop(session_id, None)

    def prune(self) -> None:
        """Forget every session idle for longer than ``idle_timeout``."""
        limit = self._clock() - self.idle_timeout
        for session_id in [sid for sid, (_, used) in self._sessions.items() if used < limit]:
            del self._sessions[session_id]
