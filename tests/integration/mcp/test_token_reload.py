"""``dsh_fs.mcp.http.revocation.watch_token_file`` on a real token file, in this process: a changed
file is re-read within its period (the removed tokens revoked, reported, their principals
handed on); an unchanged file is not re-read until ``SIGHUP`` asks; a file that cannot be read
keeps the previous tokens and says so.

Through a ``dsh-fs mcp`` process: ``tests/robustness/mcp/test_token_revocation.py``.
"""

from __future__ import annotations

import os
import signal
from typing import Any

import anyio
import pytest

from dsh_fs.mcp import BearerTokens, mint_tokens
from dsh_fs.mcp.http.auth import write_token_file
from dsh_fs.mcp.http.revocation import watch_token_file

pytestmark = pytest.mark.timeout(60)


def test_a_changed_file_is_reloaded_a_bad_one_refused_and_sighup_rereads(tmp_path: Any) -> None:
    private = tmp_path / "private"
    os.mkdir(private, 0o700)
    path = str(private / "tokens")
    one, two = mint_tokens(2)
    write_token_file(path, [one, two])
    verifier = BearerTokens([one, two])
    reports: list[str] = []
    revoked: list[list[str]] = []

    async def on_revoked(principals: list[str]) -> None:
        revoked.append(principals)

    async def wait_for(count: int) -> None:
        with anyio.fail_after(60):
            while len(reports) < count:
                await anyio.sleep(0.01)

    def rewrite(text: str | None, tokens: list[str] = []) -> None:
        os.unlink(path)
        if text is None:
            write_token_file(path, tokens)
        else:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as handle:
                handle.write(text)

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: watch_token_file(path, verifier, on_revoked, report=reports.append, period=0.05))
            await anyio.sleep(0.3)  # an unchanged file is not re-read
            assert reports == []
            rewrite(None, [one])
            await wait_for(1)
            assert reports == ["dsh-fs mcp: token file reloaded: 1 token(s); revoked: agent-2"]
            assert revoked == [["agent-2"]] and verifier.principal(two) is None and verifier.principal(one) == "agent-1"
            rewrite("not a token\n")
            await wait_for(2)
            assert reports[1].startswith("dsh-fs mcp: token file not reloaded (")
            assert reports[1].endswith("); the previous tokens stay valid")
            assert verifier.principal(one) == "agent-1"
            rewrite(None, [one])
            await wait_for(3)
            assert reports[2] == "dsh-fs mcp: token file reloaded: 1 token(s)" and revoked == [["agent-2"]]
            await anyio.sleep(0.3)
            assert len(reports) == 3  # unchanged again: quiet
            os.kill(os.getpid(), signal.SIGHUP)  # asked: re-read although unchanged
            await wait_for(4)
            assert reports[3] == "dsh-fs mcp: token file reloaded: 1 token(s)"
            tg.cancel_scope.cancel()

    anyio.run(main)
