"""Shared pieces of the sandbox tests (docs/SANDBOX.md): a private base directory outside every
platform temp area (``/tmp`` is writable under ``workspace-write``, so a test's "outside" must not
be there), tree snapshots that prove a refusal changed nothing, and scripted approval callbacks."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dsh_fs.fs_sandbox.approval import ApprovalRequest
from dsh_fs.fs_sandbox.roots import is_under, temp_areas


@pytest.fixture
def base() -> Iterator[Path]:
    """A fresh directory outside every temp area, with ``ws/`` (the workspace) and ``out/`` (a
    sibling outside it); removed afterwards."""
    parent = os.environ.get("DSH_FS_SANDBOX_TEST_DIR") or os.path.expanduser("~")
    made = Path(tempfile.mkdtemp(prefix="dsh-sandbox-", dir=parent)).resolve()
    assert not any(is_under(str(made), area) for area in temp_areas()), made
    (made / "ws").mkdir()
    (made / "out").mkdir()
    try:
        yield made
    finally:
        shutil.rmtree(made, ignore_errors=True)


def snapshot(*roots: Path) -> dict[str, Any]:
    """Every entry below ``roots``: bytes and the stat fields a change would move (a temp file
    left behind shows up as a new name)."""
    out: dict[str, Any] = {}
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            for name in sorted(dirnames + filenames):
                path = os.path.join(dirpath, name)
                st = os.lstat(path)
                data = Path(path).read_bytes() if os.path.isfile(path) and not os.path.islink(path) else None
                out[path] = (data, st.st_mode, st.st_ino, st.st_mtime_ns, st.st_size)
    return out


class Approvals:
    """A scripted approval callback: answers ``answer`` (or raises it, or waits forever for
    ``"hang"``) and keeps every request it was asked."""

    def __init__(self, answer: Any = "allowed-once") -> None:
        self.answer = answer
        self.requests: list[ApprovalRequest] = []

    async def __call__(self, request: ApprovalRequest) -> Any:
        self.requests.append(request)
        if isinstance(self.answer, BaseException):
            raise self.answer
        if self.answer == "hang":
            import anyio

            await anyio.sleep_forever()
        return self.answer
