"""Connections of ``dsh-fs mcp --http``: idle ones cannot lock the authenticated clients out.

uvicorn bounds connections with one count (``limit_concurrency``) that a connection holds
from its first byte, or from no byte at all: 300 idle TCP connections from any local user
would fill it, and every token would get ``503``. Here instead (README guarantees table):

* **A deadline for each request head.** A connection must send a complete request head
  within ``ConnectionLimits.header_timeout`` of connecting (and of its previous response);
  otherwise it is closed. A request in flight (a tool call, an event stream) has no deadline.
* **A share unauthenticated connections cannot take.** A connection is *proven* once one of
  its requests carried a valid token (without authentication: once it sent a complete
  request head); until then it is *unproven*. At most ``total - reserved`` connections may be
  unproven: the next one closes the oldest unproven connection. At most ``total`` may be
  open: beyond, the oldest unproven connection is closed, or, when all are proven, the new
  connection gets ``503`` and is closed.

``ConnectionBudget`` is the pure bookkeeping; ``guarded_protocol`` the uvicorn (h11)
protocol that applies it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Generic, TypeVar

from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ("ConnectionBudget", "ConnectionLimits", "guarded_protocol")

_FULL: Final = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\nconnection: close\r\n"
    b"content-length: 56\r\n\r\ntoo many open connections to this server: retry shortly\n"
)

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

    def __post_init__(self) -> None:
        if self.total < 1 or self.reserved < 0 or self.reserved >= self.total:
            raise ValueError("connections: total must be at least 1 and reserved below it")
        for name in ("header_timeout", "keep_alive"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be a positive number of seconds")


class ConnectionBudget(Generic[_C]):
    """Open connections, unproven (in arrival order) or proven; pure, one event loop.

    :param limits: ``total`` and ``reserved`` are used
    """

    def __init__(self, limits: ConnectionLimits) -> None:
        self.limits = limits
        self._unproven: dict[_C, None] = {}  # insertion order: oldest first
        self._proven: set[_C] = set()

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

    def prove(self, conn: _C) -> None:
        """``conn`` sent a request with a valid token (it keeps its place from now on)."""
        if conn in self._unproven:
            del self._unproven[conn]
            self._proven.add(conn)

    def forget(self, conn: _C) -> None:
        """``conn`` closed (idempotent)."""
        self._unproven.pop(conn, None)
        self._proven.discard(conn)


def guarded_protocol(
    budget: ConnectionBudget[Any], authenticates: Callable[[Sequence[tuple[bytes, bytes]]], bool]
) -> type[H11Protocol]:
    """uvicorn's h11 protocol with ``budget`` applied and a deadline on each request head
    (``budget.limits.header_timeout``); pass it as ``uvicorn.Config(http=…)`` with
    ``limit_concurrency=None`` (the budget is the bound).

    :param authenticates: whether a request's headers (lower-case names) carry a valid token
    """
    header_timeout = budget.limits.header_timeout

    class Guarded(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None

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
            super().connection_lost(exc)

        def handle_events(self) -> None:
            before = self.cycle
            super().handle_events()
            if self.cycle is not before and self.cycle is not None:  # a complete request head
                self._disarm()
                if authenticates(self.headers):
                    budget.prove(self)

        def on_response_complete(self) -> None:
            self._arm()  # the next request head has a deadline too (a pipelined one disarms it)
            super().on_response_complete()

        def _arm(self) -> None:
            self._disarm()
            self._deadline = self.loop.call_later(header_timeout, self._too_slow)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _too_slow(self) -> None:
            self._deadline = None
            if self.cycle is None or self.cycle.response_complete:
                self._close()

        def _close(self) -> None:
            budget.forget(self)
            self._disarm()
            if not self.transport.is_closing():
                self.transport.close()

    return Guarded
