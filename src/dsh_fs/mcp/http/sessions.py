"""The HTTP server's sessions and observation owners (REFERENCE-SPEC §3.2: one owner per agent).

An MCP client connection is one agent, so it gets one ``Session`` (the policy keys
observations by that object, weakly, so forgetting it here frees them):

* a sessionful client (protocol revisions up to 2025-11-25: the ``initialize`` handshake,
  an ``Mcp-Session-Id``): one owner per MCP session, forgotten when the session ends;
* a stateless request (revision 2026-07-28: no handshake, no session): the owner is the
  authenticated principal (one bearer token = one agent), kept for the server's lifetime.

``HttpSessions`` also bounds what sessions may cost (``SessionLimits``): how many
one principal and all principals may hold open, how many requests one session (or one
stateless principal) may have in flight, and when a session expires: soon when it never
made a request after the handshake, later when it idles with no request in flight. Expiry
only ever loses observations, which makes a later overwrite fail safe (``FS_NOT_OBSERVED``).
Each owner's observations are bounded by the policy's store (``ServeOptions.
observations_per_owner``).

Every owner of one bearer token records its changes into one history, ``http:<agent>``
(``TokenSession.history_owner``; ``http:anonymous`` under ``--no-auth``): the name an operator
gives ``dsh-fs sessions history/rewind`` (docs/HISTORY.md "MCP").

Pure bookkeeping: no SDK import, no I/O, no awaits (one event loop, so no lock). The HTTP
glue (``http.py``) calls it at each request's start and end and closes what ``expired``
names.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ...core.session import Session

__all__ = ("HttpSessions", "Refused", "SessionLimits", "TokenSession", "history_owner")

Principal = str | None
"""who a request authenticated as (the token's name, e.g. ``agent-1``); ``None`` without auth"""


def history_owner(principal: Principal) -> str:
    """The history every owner of ``principal`` records into: ``http:<agent>`` (``agent-1`` is
    the token file's first token), ``http:anonymous`` without auth."""
    return f"http:{principal if principal is not None else 'anonymous'}"


class TokenSession(Session):
    """An HTTP observation owner (one MCP session, or a token's stateless requests) whose
    changes go to its token's history (``history_owner``), shared by the token's sessions."""

    __slots__ = ("history_owner",)

    def __init__(self, cwd: str | None, *, id: str, principal: Principal) -> None:
        super().__init__(cwd, id=id)
        self.history_owner = history_owner(principal)


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionLimits:
    """What HTTP sessions may cost (the defaults of ``dsh-fs mcp --http``).

    :raises ValueError: for a count below 1 or a timeout that is not a positive number
    """

    per_principal: int = 8
    """open sessions of one principal (one token); without auth only ``total`` applies"""
    total: int = 64
    """open sessions of all principals together"""
    in_flight: int = 64
    """requests one session (or one stateless principal) may have in flight, an open GET
    stream included"""
    unused_timeout: float = 60.0
    """seconds a session may go without a request after the handshake before it is closed"""
    idle_timeout: float = 30 * 60.0
    """seconds a session may go with no request in flight before it is closed"""

    def __post_init__(self) -> None:
        for name in ("per_principal", "total", "in_flight"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")
        for name in ("unused_timeout", "idle_timeout"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be a positive number of seconds")


class Refused(Exception):
    """A request over a limit; ``str()`` says which (for the HTTP 503 answer)."""


@dataclass(slots=True, kw_only=True)
class _Open:
    principal: Principal
    opened: float
    active: float
    """when the last request ended (or the session opened)"""
    in_flight: int = 0
    used: bool = False
    """made a request after the handshake"""
    owner: Session | None = None


class HttpSessions:
    """Open MCP sessions (id → who opened it, use, owner) and the stateless principals' owners.

    :param cwd: every owner's cwd (the served root)
    :param limits: the bounds (see ``SessionLimits``)
    :param clock: monotonic clock in seconds (for tests)
    """

    def __init__(self, cwd: str, *, limits: SessionLimits, clock: Callable[[], float] = time.monotonic) -> None:
        self.cwd = cwd
        self.limits = limits
        self._clock = clock
        self._open: dict[str, _Open] = {}
        self._reserved: Counter[Principal] = Counter()
        self._held: Counter[Principal] = Counter()
        """open sessions per principal"""
        self._stateless_owners: dict[Principal, Session] = {}
        self._stateless_in_flight: Counter[Principal] = Counter()

    def __len__(self) -> int:
        """The number of open sessions."""
        return len(self._open)

    def __contains__(self, session_id: object) -> bool:
        return session_id in self._open

    # -- opening and ending -------------------------------------------------------------

    def reserve(self, principal: Principal) -> None:
        """Hold a place for a session ``principal`` is about to open (a request without a
        session id); ``opened`` or ``unreserve`` must follow.

        :raises Refused: the principal, or the server, already has the most sessions allowed
        """
        if principal is not None and self._held[principal] + self._reserved[principal] >= self.limits.per_principal:
            raise Refused(
                f"too many open MCP sessions for this token ({self.limits.per_principal}): end one"
                " (HTTP DELETE) or wait for an unused one to expire"
            )
        if len(self._open) + sum(self._reserved.values()) >= self.limits.total:
            raise Refused(
                f"too many open MCP sessions ({self.limits.total}): end one (HTTP DELETE) or wait for"
                " an unused one to expire"
            )
        self._reserved[principal] += 1

    def unreserve(self, principal: Principal) -> None:
        """Give back a place ``reserve`` held (the opening request failed)."""
        self._reserved[principal] -= 1
        if self._reserved[principal] <= 0:
            del self._reserved[principal]

    def opened(self, session_id: str, principal: Principal) -> None:
        """The place ``reserve`` held is now session ``session_id``."""
        self.unreserve(principal)
        now = self._clock()
        if session_id not in self._open:
            self._held[principal] += 1
        self._open[session_id] = _Open(principal=principal, opened=now, active=now)

    def drop(self, session_id: str) -> None:
        """Forget ``session_id`` and its observations (idempotent)."""
        entry = self._open.pop(session_id, None)
        if entry is not None:
            self._held[entry.principal] -= 1
            if self._held[entry.principal] <= 0:
                del self._held[entry.principal]

    def expired(self) -> list[tuple[str, Principal]]:
        """Sessions to close now, with who opened them: unused after ``unused_timeout`` (even
        with a GET stream open), or with no request in flight for ``idle_timeout``."""
        now = self._clock()
        limits = self.limits
        return [
            (session_id, entry.principal)
            for session_id, entry in self._open.items()
            if (not entry.used and now - entry.opened > limits.unused_timeout)
            or (entry.in_flight == 0 and now - entry.active > limits.idle_timeout)
        ]

    def revoke(self, principals: Sequence[str]) -> list[tuple[str, Principal]]:
        """``principals`` lost their tokens: forget their stateless owners (and so those
        observations); the caller ends the returned sessions, with who opened them (each
        then ``drop``-ped)."""
        for principal in principals:
            self._stateless_owners.pop(principal, None)
        gone = set(principals)
        return [(session_id, entry.principal) for session_id, entry in self._open.items() if entry.principal in gone]

    # -- requests -------------------------------------------------------------------------

    def begin(self, session_id: str, principal: Principal) -> bool:
        """A request on ``session_id`` starts; ``end`` must follow when it returns ``True``.

        :return: ``False`` for a session this table does not hold for ``principal`` (the SDK
            answers it ``404``; it is not counted)
        :raises Refused: the session already has ``in_flight`` requests in flight
        """
        entry = self._open.get(session_id)
        if entry is None or entry.principal != principal:
            return False
        if entry.in_flight >= self.limits.in_flight:
            raise Refused(f"too many requests in flight on this MCP session ({self.limits.in_flight})")
        entry.in_flight += 1
        return True

    def end(self, session_id: str) -> None:
        """A request ``begin`` counted has ended."""
        entry = self._open.get(session_id)
        if entry is not None:
            entry.in_flight -= 1
            entry.active = self._clock()

    def begin_stateless(self, principal: Principal) -> None:
        """A stateless (2026-07-28) request of ``principal`` starts; ``end_stateless`` must follow.

        :raises Refused: the principal already has ``in_flight`` stateless requests in flight
        """
        if self._stateless_in_flight[principal] >= self.limits.in_flight:
            raise Refused(f"too many requests in flight for this token ({self.limits.in_flight})")
        self._stateless_in_flight[principal] += 1

    def end_stateless(self, principal: Principal) -> None:
        """A stateless request ``begin_stateless`` counted has ended."""
        self._stateless_in_flight[principal] -= 1
        if self._stateless_in_flight[principal] <= 0:
            del self._stateless_in_flight[principal]

    def used(self, session_id: str) -> None:
        """``session_id`` made a request after the handshake (it is no longer "unused")."""
        entry = self._open.get(session_id)
        if entry is not None:
            entry.used = True

    # -- owners ---------------------------------------------------------------------------

    def owner(self, session_id: str, principal: Principal) -> Session:
        """The observation owner of ``session_id`` (created on first use), for a request
        that authenticated as ``principal``: a session answers only to the principal that
        opened it, on every path (the handshake era's and the stateless 2026-07-28 one).

        :raises KeyError: for a session this table does not hold, or holds for another principal
        """
        entry = self._open[session_id]
        if entry.principal != principal:
            raise KeyError(session_id)
        entry.used = True
        if entry.owner is None:
            entry.owner = TokenSession(self.cwd, id=session_id, principal=principal)
        return entry.owner

    def stateless_owner(self, principal: str) -> Session:
        """The observation owner of ``principal``'s stateless requests (one per principal,
        kept for the server's lifetime)."""
        owner = self._stateless_owners.get(principal)
        if owner is None:
            owner = self._stateless_owners[principal] = TokenSession(self.cwd, id=principal, principal=principal)
        return owner

