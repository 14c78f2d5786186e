"""Connections of ``dsh-fs mcp --http``: idle ones cannot lock the authenticated clients out.

uvicorn bounds connections with one count (``limit_concurrency``) that a connection holds
from its first byte, or from no byte at all: 300 idle TCP connections from any local user
would fill it, and every token would get ``503``. Here instead (docs/GUARANTEES.md):

* **A deadline for each request head.** A connection must send a complete request head
  within ``ConnectionLimits.header_timeout`` of connecting (and of its previous response);
  otherwise it is closed. A request in flight (a tool call, an event stream) has no deadline.
* **A deadline for each request body.** Once a request head says a body follows, the whole
  body must arrive within ``ConnectionLimits.body_timeout``; otherwise the connection is
  closed (the request sees a disconnect), so a valid token cannot hold a place with a body
  that never comes.
* **A share unauthenticated connections cannot take.** A connection is *proven* once one of
  its requests carried a valid token (without authentication: once it sent a complete
  request head); until then it is *unproven*. At most ``total - reserved`` connections may be
  unproven: the next one closes the oldest unproven connection. At most ``total`` may be
  open: beyond, the oldest unproven connection is closed, or, when all are proven, the new
  connection gets ``503`` and is closed.
* **A share for each token.** One token (principal) may hold at most ``per_token`` proven
  connections; a request that would prove one more gets ``503`` and its connection is closed,
  so one agent cannot take the places every other agent needs (``per_token`` is below
  ``reserved``: another token always finds one).
* **A revoked token's connections closed.** ``revoke(budget, principals)`` closes every
  connection proven by them (``server_config`` calls it when the token file drops a token).

``ConnectionBudget`` is the pure bookkeeping; ``guarded_protocol`` the uvicorn (h11)
protocol that applies it.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Generic, TypeVar

from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ("ConnectionBudget", "ConnectionLimits", "guarded_protocol", "revoke")


def _unavailable(text: str) -> bytes:
    body = text.encode("ascii")
    return (b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\nconnection: close\r\n"
            b"content-length: " + str(len(body)).encode("ascii") + b"\r\n\r\n" + body)


_FULL: Final = _unavailable("too many open connections to this server: retry shortly\n")
_TOKEN_FULL: Final = _unavailable("too many open connections with this token: close some, then retry\n")

_C = TypeVar("_C")


@dataclass(frozen=True, slots=True, kw_only=True)
class ConnectionLimits:
    """What connections may cost (the defaults of ``dsh-fs mcp --http``).

    :raises ValueError: ``reserved`` not below ``total``, a count below 1, or a timeout that
        is not a positive number of seconds
    """

    total: int = 256
    """open connections at once"""
    reserved: int = 64
    """of ``total``, the places only proven (authenticated) connections may take"""
    header_timeout: float = 10.0
    """seconds a connection may take to send a complete request head (from connecting, or
    from its previous response)"""
    keep_alive: float = 5.0
    """seconds an idle proven connection stays open between requests (uvicorn's keep-alive)"""
    per_token: int = 32
    """proven connections one token (principal) may hold at once"""
    body_timeout: float = 30.0
    """seconds a request's whole body may take to arrive, from its complete head"""

    def __post_init__(self) -> None:
        if self.total < 1 or self.reserved < 0 or self.reserved >= self.total:
            raise ValueError("connections: total must be at least 1 and reserved below it")
        if self.per_token < 1:
            raise ValueError("connections: per_token must be at least 1")
        for name in ("header_timeout", "keep_alive", "body_timeout"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be a positive number of seconds")


class ConnectionBudget(Generic[_C]):
    """Open connections, unproven (in arrival order) or proven; pure, one event loop.

    :param limits: ``total`` and ``reserved`` are used
    """

    def __init__(self, limits: ConnectionLimits) -> None:
        self.limits = limits
        self._unproven: dict[_C, None] = {}  # insertion order: oldest first
        self._proven: dict[_C, str | None] = {}  # → the principal whose token proved it
        self._held: Counter[str] = Counter()  # proven connections per principal

    def __len__(self) -> int:
        return len(self._unproven) + len(self._proven)

    @property
    def unproven(self) -> int:
        """How many open connections have not yet shown a valid token."""
        return len(self._unproven)

    def admit(self, conn: _C) -> tuple[bool, list[_C]]:
        """A new connection: ``(accepted, connections to close)``; the closed ones (and a
        refused ``conn``) are forgotten here already."""
        self._unproven[conn] = None
        victims: list[_C] = []
        while len(self._unproven) > self.limits.total - self.limits.reserved or len(self) > self.limits.total:
            oldest = next(iter(self._unproven))
            if oldest is conn:  # nobody older to close: every other place is proven
                del self._unproven[conn]
                return False, victims
            del self._unproven[oldest]
            victims.append(oldest)
        return True, victims

    def prove(self, conn: _C, principal: str | None = None) -> bool:
        """``conn`` sent a request with the valid token of ``principal`` (``None``: no
        authentication); it keeps its place from now on. ``False`` (nothing changes): the
        principal already holds ``per_token`` other proven connections."""
        if conn not in self._unproven and conn not in self._proven:
            return False
        before = self._proven.get(conn)
        if conn in self._proven and before == principal:
            return True
        if principal is not None and self._held[principal] >= self.limits.per_token:
            return False
        self._unproven.pop(conn, None)
        self._release(conn)
        self._proven[conn] = principal
        if principal is not None:
            self._held[principal] += 1
        return True

    def of(self, principals: Sequence[str]) -> list[_C]:
        """The open connections proven by one of ``principals``."""
        wanted = set(principals)
        return [conn for conn, principal in self._proven.items() if principal in wanted]

    def holds(self, principal: str) -> int:
        """How many proven connections ``principal`` holds."""
        return self._held[principal]

    def forget(self, conn: _C) -> None:
        """``conn`` closed (idempotent)."""
        self._unproven.pop(conn, None)
        self._release(conn)

    def _release(self, conn: _C) -> None:
        principal = self._proven.pop(conn, None)
        if principal is not None:
            self._held[principal] -= 1
            if self._held[principal] <= 0:
                del self._held[principal]


Identify = Callable[[Sequence[tuple[bytes, bytes]]], "tuple[bool, str | None]"]
"""a request's headers (lower-case names) → ``(proven, principal)``: whether they carry a valid
token (always, without authentication) and whose (``None`` without authentication)"""


def guarded_protocol(budget: ConnectionBudget[Any], identify: Identify) -> type[H11Protocol]:
    """uvicorn's h11 protocol with ``budget`` applied, a deadline on each request head
    (``budget.limits.header_timeout``) and on each request body (``body_timeout``); pass it as
    ``uvicorn.Config(http=…)`` with ``limit_concurrency=None`` (the budget is the bound).

    :param identify: who a request's headers prove the connection to be (``Identify``)
    """
    header_timeout = budget.limits.header_timeout
    body_timeout = budget.limits.body_timeout

    class Guarded(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None
        _body_deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            accepted, victims = budget.admit(self)
            for victim in victims:
                victim._close()
            if not accepted:
                transport.write(_FULL)
                self._close()
                return
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            budget.forget(self)
            self._disarm()
            self._disarm_body()
            super().connection_lost(exc)

        def handle_events(self) -> None:
            before = self.cycle
            super().handle_events()
            cycle = self.cycle
            if cycle is not before and cycle is not None:  # a complete request head
                self._disarm()
                proven, principal = identify(self.headers)
                if proven and not budget.prove(self, principal):
                    self.transport.write(_TOKEN_FULL)
                    self._close()
                    return
                if cycle.more_body:
                    self._disarm_body()
                    self._body_deadline = self.loop.call_later(body_timeout, self._body_too_slow)
            if cycle is not None and not cycle.more_body:
                self._disarm_body()

        def on_response_complete(self) -> None:
            self._disarm_body()
            self._arm()  # the next request head has a deadline too (a pipelined one disarms it)
            super().on_response_complete()

        def _arm(self) -> None:
            self._disarm()
            self._deadline = self.loop.call_later(header_timeout, self._too_slow)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _disarm_body(self) -> None:
            if self._body_deadline is not None:
                self._body_deadline.cancel()
                self._body_deadline = None

        def _too_slow(self) -> None:
            self._deadline = None
            if self.cycle is None or self.cycle.response_complete:
                self._close()

        def _body_too_slow(self) -> None:
            self._body_deadline = None
            if self.cycle is not None and self.cycle.more_body and not self.cycle.response_complete:
                self._close()

        def _close(self) -> None:
            budget.forget(self)
            self._disarm()
            self._disarm_body()
            if not self.transport.is_closing():
                self.transport.close()

    return Guarded


def revoke(budget: ConnectionBudget[Any], principals: Sequence[str]) -> int:
    """Close every connection of ``budget`` (``guarded_protocol``'s) proven by one of
    ``principals`` (their tokens were revoked); how many were closed."""
    closing = budget.of(principals)
    for conn in closing:
        conn._close()
    return len(closing)
