"""Sessions (observation owners) and the per-call execution object (REFERENCE-SPEC §3.2, §4.5, §5.1)."""

from __future__ import annotations

import os
import uuid
from typing import Any

from .signal import AbortSignal

__all__ = ("Session", "ToolExecution")


class Session:
    """One agent session: its working directory and, by identity, its observations.

    The policy keys what a session has observed by the session *object* (weakly), so two
    ``Session`` objects never share observations even with equal fields (§3.2).

    :param cwd: the session workspace; relative paths in tool calls resolve against it.
        Made absolute against the process cwd at creation. ``None``: the provider's default.
    :param id: a free-form identifier (used by persistent stores and logs); random by default
    """

    __slots__ = ("cwd", "id", "__weakref__")

    def __init__(self, cwd: str | os.PathLike[str] | None = None, *, id: str | None = None) -> None:
        self.cwd: str | None = None if cwd is None else os.path.abspath(os.fspath(cwd))
        self.id: str = id if id is not None else uuid.uuid4().hex

    def __repr__(self) -> str:
        return f"Session(cwd={self.cwd!r}, id={self.id!r})"


class ToolExecution:
    """What a tool body receives for one call (the reference's ``exec``).

    Passed as the opaque ``actor`` on every ``fs/*`` dispatch; the policy derives the
    observation owner from ``session`` (§3.2: no session, no owner).

    :param session: the calling session, or ``None`` for a call with no agent session
    :param signal: cooperative cancellation for this call
    :param call_id: the model's tool-call id; ``None``: a random one (32 hex digits, a
        UUID4's ``hex``), minted the first time it is read (most calls never read it)
    :param fs: the provider this call uses when it is not ``ctx.fs`` (a sandboxed call's view)
    """

    __slots__ = ("_call_id", "fs", "session", "signal")

    def __init__(
        self,
        *,
        session: Session | None = None,
        signal: AbortSignal | None = None,
        call_id: str | None = None,
        fs: Any = None,
    ) -> None:
        self.session = session
        self.signal = signal
        self._call_id = call_id
        self.fs: Any = fs
        """the provider this call uses when it is not ``ctx.fs``: a sandboxed call's view bound
        to its policy (``dsh_fs.fs_sandbox.tools.call_fs``); ``None`` (default): ``ctx.fs``"""

    @property
    def call_id(self) -> str:
        """The model's tool-call id (or a random one)."""
        if self._call_id is None:
            self._call_id = uuid.uuid4().hex
        return self._call_id

    def __repr__(self) -> str:
        return (
            f"ToolExecution(session={self.session!r}, signal={self.signal!r}, call_id={self.call_id!r}, fs={self.fs!r})"
        )

    @property
    def cwd(self) -> str | None:
        """The session's cwd, or ``None`` (§4.5 ``sessionCwd``)."""
        return self.session.cwd if self.session is not None else None
