"""The MCP roots protocol (DEVIATIONS M3): a client's roots narrow what one owner's calls reach.

When a client declares the ``roots`` capability (protocol versions before 2026-07-28, which
deprecates roots: SEP-2577), ``dsh-fs mcp`` sends ``roots/list`` with the owner's first
``tools/call`` (before it runs), and again with the first call after each
``notifications/roots/list_changed``. The answer is
intersected with the operator's ``--root`` directories, never added to them: the spec calls
roots "informational guidance rather than an access-control mechanism", and a client's list
must not widen what the operator granted (the MCP reference filesystem server's bug reports
#3929 and #3133 are that mistake). That owner's calls are then served through the provider's
``FileSystem.narrowed`` view of the intersection; observations stay keyed by canonical path,
so one file's observations are the same through every view.

* Pure: ``root_path`` (one ``file://`` URI → an absolute path or why not), ``intersect``
  (the entries against the operator roots, with an injected ``probe`` for what exists).
* ``ClientRoots`` (one owner's state: effective roots, the view, the first answer's event,
  generations) and ``RootsProtocol`` (asks, applies, logs on stderr), over a ``RootsPeer``: the
  client as a route asks it (the SDK's session, ``server.SdkPeer``; the stdio dispatcher's own,
  ``stdio/dispatch.py``, which asks without the SDK). No SDK import here.

What an answer means: a usable one replaces the effective roots by its intersection; an empty
list, or one whose every entry was ignored, means the operator roots; one that cannot be used
as a whole (an error, a timeout, a malformed result, more than ``MAX_CLIENT_ROOTS`` entries)
leaves the effective roots as they were (at first: the operator roots). An answer to an older
``roots/list`` than the last applied one is dropped. Until the first answer settles, that
owner's calls wait for it (those sent meanwhile: at most ``FIRST_ANSWER_WAIT_S``); so do the
calls after a ``list_changed``, for the new answer.
"""

from __future__ import annotations

import sys
import urllib.parse
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

import anyio

from ..core.session import Session
from ..fs.filesystem import FileSystem
from ..tool_common.shown import shown_name

__all__ = (
    "ANSWER_TIMEOUT_S",
    "ClientRoots",
    "FIRST_ANSWER_WAIT_S",
    "MAX_CLIENT_ROOTS",
    "OUTSIDE",
    "ROOTS_DEPRECATED_IN",
    "RootsPeer",
    "RootsProtocol",
    "ignored_answer",
    "ignored_entry",
    "intersect",
    "root_path",
    "too_many",
)

MAX_CLIENT_ROOTS: Final = 256
"""a longer ``roots/list`` answer is ignored whole (logged): no client has that many projects"""

FIRST_ANSWER_WAIT_S: Final = 10.0
"""how long (seconds) a ``tools/call`` waits for its owner's first ``roots/list`` answer"""

ANSWER_TIMEOUT_S: Final = 10.0
"""how long (seconds) one ``roots/list`` request waits for the client's answer"""

ROOTS_DEPRECATED_IN: Final = "2026-07-28"
"""the protocol version that deprecates roots (SEP-2577): from it on, client roots are not asked"""

_PATH_MAX_BYTES: Final = 4095
"""the longest path (bytes) a root may have (Linux ``PATH_MAX`` without the NUL)"""

LOGGED_URI_MAX: Final = 512
"""the most characters of a client's URI one stderr line shows"""

OUTSIDE: Final = "outside every --root"
"""the reason for an entry that lies outside every operator root (and holds none)"""


def ignored_entry(uri: str, reason: str) -> str:
    """The stderr line for one ignored client root (the reason is one of ``root_path``'s,
    ``OUTSIDE``, ``not a directory`` or ``not found``). The URI is the client's: printed as
    D22 prints names (a line break or control character as a JSON escape, so one entry is one
    line) and cut after ``LOGGED_URI_MAX`` characters."""
    cut = uri if len(uri) <= LOGGED_URI_MAX else uri[:LOGGED_URI_MAX] + "…"
    return f"dsh-fs mcp: client root {shown_name(cut)} ignored: {reason}"


def ignored_answer(why: str) -> str:
    """The stderr line for a ``roots/list`` answer ignored whole."""
    return f"dsh-fs mcp: client roots ignored: {why}"


def too_many(count: int) -> str:
    """Why an answer of ``count`` entries is ignored whole."""
    return f"{count} entries, more than {MAX_CLIENT_ROOTS}"


def root_path(uri: str) -> tuple[str | None, str | None]:
    """The absolute normalized path a client root names, or why it cannot be used (pure).

    Accepted: ``file:`` URIs with an empty or ``localhost`` host, no query or fragment; the
    path is percent-decoded and must be absolute, at most 4095 bytes, without a NUL and
    without a ``.`` or ``..`` component (a trailing ``/`` and doubled ``/`` are dropped).

    :return: ``(path, None)``, or ``(None, reason)`` with reason ``not a file:// URI``,
        ``not an absolute path`` or ``has a . or .. component``
    """
    try:
        parts = urllib.parse.urlsplit(uri)
    except ValueError:
        return None, "not a file:// URI"
    if parts.scheme.lower() != "file" or parts.netloc not in ("", "localhost") or parts.query or parts.fragment:
        return None, "not a file:// URI"
    try:
        path = urllib.parse.unquote(parts.path, errors="strict")
    except UnicodeDecodeError:
        return None, "not an absolute path"
    if not path.startswith("/") or "\0" in path or len(path.encode("utf-8", "surrogatepass")) > _PATH_MAX_BYTES:
        return None, "not an absolute path"
    components = [c for c in path.split("/") if c]
    if any(c in (".", "..") for c in components):
        return None, "has a . or .. component"
    return "/" + "/".join(components), None


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def intersect(
    operator: Sequence[str], uris: Sequence[str], probe: Callable[[str], str | None]
) -> tuple[tuple[str, ...], list[tuple[str, str]]]:
    """The client's roots ``uris`` intersected with the ``operator`` roots (pure, given ``probe``).

    Per entry: a path inside an operator root (``probe`` says ``None``) is kept; a path that
    holds operator roots gives those roots (client ``/``: all of them); anything else is
    ignored with its reason. A kept root inside another kept one is dropped for it.

    :param operator: the operator roots (absolute display paths)
    :param uris: the client's root URIs, in its order
    :param probe: for an absolute path, ``None`` when it is a directory inside an operator root
        (its canonical form never leaving that root), else the reason: ``OUTSIDE``,
        ``not a directory``, ``not found``
    :return: the effective roots (in the client's order, never outside ``operator``) and
        the ignored entries ``(uri, reason)``; no effective roots when every entry was ignored
    """
    kept: list[str] = []
    ignored: list[tuple[str, str]] = []
    for uri in uris:
        path, reason = root_path(uri)
        if path is None:
            ignored.append((uri, reason or "not a file:// URI"))
            continue
        reason = probe(path)
        if reason is None:
            kept.append(path)
            continue
        held = [root for root in operator if _inside(root, path)] if reason == OUTSIDE else []
        if held:
            kept.extend(held)
        else:
            ignored.append((uri, reason))
    unique = list(dict.fromkeys(kept))
    effective = tuple(p for p in unique if not any(q != p and _inside(p, q) for q in unique))
    return effective, ignored


class RootsPeer(Protocol):
    """The client as one route asks it for its roots."""

    @property
    def client_capabilities(self) -> Any:
        """What the client declared (an object whose ``roots`` is ``None`` when it declared none)."""

    @property
    def protocol_version(self) -> Any:
        """The protocol version negotiated (``None``: none yet)."""

    async def list_roots(self, related_to: Any) -> Sequence[str]:
        """Send ``roots/list`` and return the URIs of the answer, as the SDK's ``ListRootsResult``
        gives them (``str(root.uri)``).

        :param related_to: the id of the request being served (HTTP: the question rides on its
            response stream)
        :raises Exception: an error answer, a malformed result, no back channel (its message
            is logged)
        """


@dataclass(eq=False)
class ClientRoots:
    """One observation owner's client roots."""

    operator: tuple[str, ...]
    """the operator roots (``--root``), what an unusable or empty answer falls back to"""
    effective: tuple[str, ...] | None = None
    """the intersection in force; ``None``: the operator roots (the provider itself)"""
    view: FileSystem | None = None
    """the provider narrowed to ``effective`` (``None`` with ``effective`` ``None``)"""
    stale: bool = True
    """the roots must be asked for (at first, and after ``notifications/roots/list_changed``)"""
    asked: int = 0
    """``roots/list`` requests sent so far (each one's generation is its number)"""
    applied: int = 0
    """the generation of the last answer that settled (older answers are dropped)"""
    settled: anyio.Event = field(default_factory=anyio.Event)
    """set while every answer asked for has settled (used or not); cleared by each new ask"""


_REASONS = (("is outside every root", OUTSIDE), ("is not found", "not found"), ("is not a directory", "not a directory"))


class RootsProtocol:
    """Asks clients for their roots and keeps each owner's narrowed view (see the module docstring).

    :param fs: the served provider; one whose ``narrowed`` gives ``None`` (S3, memory) ignores
        client roots (logged once)
    :param log: where the stderr lines go (one line per call)
    """

    def __init__(self, fs: FileSystem, *, log: Callable[[str], None] | None = None) -> None:
        self.fs = fs
        self.log = log or (lambda line: print(line, file=sys.stderr, flush=True))
        self._owners: weakref.WeakKeyDictionary[Session, ClientRoots] = weakref.WeakKeyDictionary()
        self._said_unsupported = False

    def _narrowable(self) -> bool:
        operator = self.fs.workspace_roots()
        if operator and self.fs.narrowed(operator) is not None:
            return True
        if not self._said_unsupported:
            self._said_unsupported = True
            self.log(ignored_answer("the served provider has no directories to narrow"))
        return False

    def offered(self, owner: Session, session: RootsPeer) -> bool:
        """Does this connection's client answer ``roots/list`` (the ``roots`` capability, a
        protocol version before 2026-07-28)? The first time: the owner's state is made now,
        so its calls wait for the first answer."""
        capabilities = getattr(session, "client_capabilities", None)
        version = getattr(session, "protocol_version", None) or ""
        if capabilities is None or getattr(capabilities, "roots", None) is None or version >= ROOTS_DEPRECATED_IN:
            return False
        if owner not in self._owners:
            if not self._narrowable():
                return False
            self._owners[owner] = ClientRoots(operator=self.fs.workspace_roots())
        return True

    async def ask(self, owner: Session, session: RootsPeer, *, related_to: Any = None) -> None:
        """Send ``roots/list`` and apply the answer (from ``view_for``: an owner's first call,
        and its first after a ``list_changed``). Never raises for what the client does.

        :param related_to: the id of the request being served, when asked from within one
            (the question then travels with its answer: HTTP's response stream)
        """
        if not self.offered(owner, session):
            return
        state = self._owners[owner]
        state.asked += 1
        generation = state.asked
        if state.settled.is_set():
            state.settled = anyio.Event()  # calls from now on wait for this answer
        try:
            uris = await self._request(session, related_to)
            if uris is None:
                return
            if len(uris) > MAX_CLIENT_ROOTS:
                self.log(ignored_answer(too_many(len(uris))))
                return
            effective, ignored = await anyio.to_thread.run_sync(intersect, state.operator, uris, self._probe)
            if generation < state.applied:
                return  # a newer answer settled first: this one is stale
            for uri, reason in ignored:
                self.log(ignored_entry(uri, reason))
            view = self.fs.narrowed(effective) if effective else None
            state.effective, state.view = (effective, view) if view is not None else (None, None)
        except BaseException:  # the asking call was cancelled: the next call asks again
            state.stale = True
            raise
        finally:
            state.applied = max(state.applied, generation)
            if state.applied >= state.asked:
                state.settled.set()

    async def _request(self, session: RootsPeer, related_to: Any) -> list[str] | None:
        """The URIs of the client's answer, or ``None`` (logged) when it cannot be used whole."""
        try:
            with anyio.fail_after(ANSWER_TIMEOUT_S):
                return list(await session.list_roots(related_to))
        except TimeoutError:
            self.log(ignored_answer(f"no answer within {ANSWER_TIMEOUT_S:g} s"))
            return None
        except Exception as exc:  # an error answer, a malformed result, no back channel
            self.log(ignored_answer(_describe(exc)))
            return None

    def _probe(self, path: str) -> str | None:
        """``intersect``'s probe: the provider's own check of one root (``narrowed``)."""
        try:
            self.fs.narrowed([path])
        except ValueError as exc:
            text = str(exc)
            return next((reason for suffix, reason in _REASONS if suffix in text), "not a directory")
        return None

    async def view_for(self, owner: Session, session: RootsPeer, request_id: Any = None) -> FileSystem | None:
        """The provider view ``owner``'s calls go through (``None``: the provider itself),
        once the answers asked for have settled (waited for at most ``FIRST_ANSWER_WAIT_S``:
        then the roots in force are used, never wider than the operator's). The first call,
        and the first after a ``list_changed``, asks: the question rides on that call's own
        stream (over HTTP a server request outside any request is lost while the client's
        GET stream is not open yet, and a client opens it only after ``initialized``)."""
        if not self.offered(owner, session):
            return None
        state = self._owners[owner]
        if state.stale and state.applied >= state.asked:  # nothing in flight: ask now, with this call
            state.stale = False
            await self.ask(owner, session, related_to=request_id)
        elif not state.settled.is_set():
            with anyio.move_on_after(FIRST_ANSWER_WAIT_S):
                await state.settled.wait()
        return state.view

    def changed(self, owner: Session, session: RootsPeer) -> None:
        """``notifications/roots/list_changed``: the owner's next call asks again (and waits
        for the answer) before it runs."""
        if self.offered(owner, session):
            state = self._owners[owner]
            state.stale = True
            if state.settled.is_set():
                state.settled = anyio.Event()

    def settled_view(self, owner: Session) -> tuple[bool, FileSystem | None]:
        """``(True, view)`` when ``owner``'s next call needs neither to ask nor to wait (its
        answers settled, nothing changed since): what ``view_for`` would give it at once
        (the stdio dispatcher serves it on its own route then, ``stdio/dispatch.py``); else
        ``(False, None)``."""
        state = self._owners.get(owner)
        if state is None or state.stale or not state.settled.is_set():
            return False, None
        return True, state.view

    def effective(self, owner: Session) -> tuple[str, ...] | None:
        """The owner's effective roots (``None``: the operator roots)."""
        state = self._owners.get(owner)
        return state.effective if state is not None else None


def _describe(exc: BaseException) -> str:
    """One line for an exception (its message, else its type), at most 200 characters before
    escaping. The message may be the client's (an error answer to ``roots/list``): whitespace
    runs are one space, and a control character left (an ANSI escape, a NUL) makes the text a
    JSON literal, as D22 prints names (``shown_name``), so it cannot rewrite the operator's
    terminal or log."""
    text = " ".join(str(exc).split())
    return shown_name(text[:200]) if text else type(exc).__name__
