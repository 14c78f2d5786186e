"""The commit witness: how a provider that reads a file's before-state as part of its own
mutation hands it, with the bytes it is about to commit, to whoever records the change (the
history, docs/HISTORY.md "How it is stored"), so the file is not read a second time.

A recorder wraps the mutation in ``witnessing(callback)``; a provider that lists the member in
``FileSystem.witnessed_mutations`` awaits ``witness_commit(before, before_version, after)`` once
per attempt, after its guard checks and right before the request or rename that commits the
change. The callback's refusal (any exception) is the mutation's: nothing is committed. A
provider retrying an unguarded mutation on fresher content calls it again for the new attempt:
the callback's latest call describes the bytes actually replaced.

The callback is held in a context variable, so wrappers between the recorder and the provider
(sandbox, path rules) pass it on without knowing of it; ``witnessing`` sets it for one awaited
call only (a mutation it makes inside another task does not see it).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ("CommitWitness", "witness_commit", "witnessing")

CommitWitness = Callable[[bytes | None, str | None, bytes], Awaitable[None]]
"""``callback(before, before_version, after)``: ``before`` the file's bytes the commit replaces
(``None``: there is no file, a create), ``before_version`` their version token (``None`` for a
create), ``after`` the exact bytes the commit leaves"""

_CURRENT: ContextVar[CommitWitness | None] = ContextVar("dsh_fs_commit_witness", default=None)


@contextmanager
def witnessing(callback: CommitWitness) -> Iterator[None]:
    """Set ``callback`` as the witness of the mutations awaited inside the block."""
    token = _CURRENT.set(callback)
    try:
        yield
    finally:
        _CURRENT.reset(token)


async def witness_commit(before: bytes | None, before_version: str | None, after: bytes) -> None:
    """Tell the current witness (if any) what the commit about to be made replaces and leaves.

    :param before: the replaced bytes, or ``None`` when the commit creates the file
    :param before_version: the replaced bytes' version token (``None`` for a create)
    :param after: the bytes the commit leaves
    :raises Exception: whatever the witness raises (the caller then commits nothing)
    """
    callback = _CURRENT.get()
    if callback is not None:
        await callback(before, before_version, after)
