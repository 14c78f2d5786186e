"""The history's stateful property (``historykit``) on the local and in-memory providers: random
writes, edits, patches, editor calls, outside changes and rewinds; a rewind to any step
reproduces that step's tree for the files no one else touched and never changes a file whose
last change was someone else's."""

from __future__ import annotations

import tempfile

from historykit import run_history_machine

from dsh_fs.testing.workspaces import LocalWorkspace, MemoryWorkspace


def test_on_memory() -> None:
    async def make() -> MemoryWorkspace:
        return MemoryWorkspace()

    run_history_machine(make, max_examples=100)


def test_on_local_disk() -> None:
    async def make() -> LocalWorkspace:
        return LocalWorkspace(tempfile.mkdtemp(prefix="history-"))

    run_history_machine(make, max_examples=40)
