"""Revoking a token of ``dsh-fs mcp --http`` without a restart (docs/GUARANTEES.md).

``watch_token_file`` re-reads the token file when it changes (its inode, size or mtime,
checked every ``period`` seconds) or when the server gets ``SIGHUP``. The new list replaces
the old (``BearerTokens.replace``): kept tokens keep their principal, new ones get fresh
names, and a removed token stops authenticating at once; its sessions are ended and its
stateless observations forgotten (``on_revoked``), and its open connections
closed (``BearerTokens.on_revoked`` listeners: ``connections.revoke``). A file that cannot be read, or is not a
valid token file, changes nothing: the previous tokens stay, and ``report`` says why.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Awaitable, Callable

import anyio

from .auth import BearerTokens, load_token_file

__all__ = ("watch_token_file",)

_Signature = tuple[int, int, int] | None


def _signature(path: str) -> _Signature:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_ino, info.st_size, info.st_mtime_ns


async def watch_token_file(
    path: str,
    verifier: BearerTokens,
    on_revoked: Callable[[list[str]], Awaitable[None]],
    *,
    report: Callable[[str], None],
    period: float = 1.0,
) -> None:
    """Keep ``verifier`` in step with the token file at ``path`` until cancelled.

    :param on_revoked: called with the principals whose tokens were removed (after they
        stopped authenticating)
    :param report: one line for the operator (stderr) per reload or refused reload
    :param period: seconds between checks of the file
    """
    last = _signature(path)
    hup = anyio.Event()

    async def on_sighup() -> None:
        nonlocal hup
        with anyio.open_signal_receiver(signal.SIGHUP) as received:
            async for _ in received:
                hup.set()

    async with anyio.create_task_group() as tg:
        if threading.current_thread() is threading.main_thread():
            tg.start_soon(on_sighup)
        while True:
            with anyio.move_on_after(period):
                await hup.wait()
            asked, hup = hup.is_set(), anyio.Event()
            now = _signature(path)
            if not asked and now == last:
                continue
            last = now
            try:
                tokens = load_token_file(path)
                revoked = verifier.replace(tokens)
            except (OSError, ValueError) as exc:
                report(f"dsh-fs mcp: token file not reloaded ({exc}); the previous tokens stay valid")
                continue
            gone = f"; revoked: {', '.join(revoked)}" if revoked else ""
            report(f"dsh-fs mcp: token file reloaded: {len(verifier)} token(s){gone}")
            if revoked:
                await on_revoked(revoked)
